"""Tests added to kill the mutants that chapter 1's tests let live (see tools/mutants/REPORT.md).

Mutation testing (``make mutants``) changes one thing in a model at a time
(an operator, a constant, a string) and reruns the tests; a change no test
notices is a wrong model the suite would let through. Each test here kills
such survivors in chapter 1's models, its compositions and the shared
plumbing (``validate``, ``check``, ``runner``, ``ports``).
"""
from __future__ import annotations

import inspect

import pytest

from clustermath import MODELS, bubble_fraction, ring_factor, spec_of

BAD = "§"  # not a number, not a flag, not an allowed word: every check rejects it


def _valid(model):
    """Inputs every chapter-1 model accepts: 1 for each port (a flag takes 1 as True)."""
    spec = spec_of(model)
    return {name: 1 for name in spec.inputs}


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_every_chapter1_error_names_its_argument(model):
    """A ValueError names the input that is wrong, not another (kills mutated argument names)."""
    spec = spec_of(model)
    for name in [*spec.inputs, spec.broken_flag]:
        kwargs = {**_valid(model), name: BAD}
        with pytest.raises(ValueError) as err:
            model(**kwargs)
        assert str(err.value).startswith(f"{name} must"), (name, str(err.value))


@pytest.mark.parametrize("function, arguments", [
    (bubble_fraction, ("stages", "microbatches")),
    (ring_factor, ("nodes",)),
])
def test_exact_helpers_name_their_arguments(function, arguments):
    for name in arguments:
        kwargs = {a: 1 for a in arguments} | {name: BAD}
        with pytest.raises(ValueError) as err:
            function(**kwargs)
        assert str(err.value).startswith(f"{name} must"), (name, str(err.value))
    assert list(inspect.signature(function).parameters) == list(arguments)
