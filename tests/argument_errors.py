"""Shared by the mutation tests: every ValueError names the argument that is wrong.

A mutant that swaps an argument's name in a check (or the range it states) still
raises, so only the message tells it apart; these helpers read the message.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping

import pytest

BAD = "§"  # not a number, not a flag, not a choice: every check rejects it


def assert_errors_name_their_argument(function: Callable[..., Any], valid: Mapping[str, Any],
                                      expected: Mapping[str, str] | None = None) -> None:
    """Replace each argument in turn by ``BAD``: the ValueError must start with its name.

    With ``expected`` (argument -> what it must be), only those arguments are
    replaced and the message must read "<name> must be <text>, got '§'". Without
    it, ``valid`` must itself be accepted, every argument is replaced and the
    message must start "<name> must".
    """
    if expected is None:
        function(**valid)
    for name in (valid if expected is None else expected):
        with pytest.raises(ValueError) as err:
            function(**{**valid, name: BAD})
        prefix = f"{name} must" if expected is None else f"{name} must be {expected[name]}, got '§'"
        assert str(err.value).startswith(prefix), (name, str(err.value))
