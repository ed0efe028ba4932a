"""The ``check`` helper: print one stable line per verified number, raise on a mismatch.

Every worked number a chapter prints goes through ``check``, so executing the
notebook is itself a test of the book against its sources: a model change that
moves a number the source states stops the notebook (and the book build) with
a message naming the number, its computed value and the source's value.
"""
from __future__ import annotations

import math
from numbers import Integral, Real

__all__ = ["CheckFailed", "check", "fmt_value"]


class CheckFailed(AssertionError):
    """A computed number disagrees with the value its source states."""


def fmt_value(value: object, fmt: str | None = None) -> str:
    """Format a checked value the same way on every run.

    Booleans print as ``yes``/``no``, integers with thousands separators,
    floats with ``fmt`` (default ``.4g``).
    """
    if isinstance(value, bool):
        return "yes" if value else "no"
    if fmt is not None:
        return format(value, fmt)
    if isinstance(value, Integral):
        return f"{int(value):,}"
    if isinstance(value, Real):
        return f"{float(value):,.4g}"
    return str(value)


def check(
    label: str,
    value: object,
    expected: object,
    *,
    unit: str = "",
    tol: float = 0.0,
    rel: float = 0.0,
    fmt: str | None = None,
    source: str = "source",
) -> None:
    """Assert that ``value`` equals the ``expected`` value a source states, and say so.

    Integers, booleans and strings must match exactly.  Real numbers match when
    ``|value - expected| <= max(tol, rel * |expected|)``; with both tolerances
    zero they must be equal.  On success one line is printed::

        ✓ <label>: <value> <unit>  [<source>: <expected> <unit>]

    and nothing is returned, so a check at the end of a cell adds no output.

    Raises ``CheckFailed`` (an ``AssertionError``) naming the label, the
    computed value and the stated one on a mismatch, and ``ValueError`` when a
    tolerance is negative.
    """
    if tol < 0 or rel < 0:
        raise ValueError(f"tol and rel must be >= 0, got tol={tol}, rel={rel}")
    suffix = unit if unit == "%" else (f" {unit}" if unit else "")
    shown = fmt_value(value, fmt) + suffix
    stated = fmt_value(expected, fmt) + suffix
    if tol or rel:
        margin = max(tol, rel * abs(float(expected)))  # type: ignore[arg-type]
        ok = math.isclose(float(value), float(expected), rel_tol=0.0, abs_tol=margin)  # type: ignore[arg-type]
        stated = f"about {stated}"
    else:
        ok = _exactly_equal(value, expected)
    if not ok:
        raise CheckFailed(f"{label}: computed {shown}, but the {source} states {stated}")
    print(f"✓ {label}: {shown}  [{source}: {stated}]")


def _exactly_equal(value: object, expected: object) -> bool:
    if isinstance(value, bool) or isinstance(expected, bool):
        return isinstance(value, bool) and isinstance(expected, bool) and value is expected
    return value == expected
