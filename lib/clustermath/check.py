"""The ``check`` helper: print one stable line per verified number, raise on a mismatch.

Every worked number a chapter prints goes through ``check``, so executing the
notebook is itself a test of the book against its sources: a model change that
moves a number the source states stops the notebook (and the book build) with
a message naming the number, its computed value and the source's value.
"""
from __future__ import annotations

import math
import re
from numbers import Integral, Real

__all__ = ["CHECK_KINDS", "CheckFailed", "check", "fmt_value", "half_unit", "fmt_width"]

CHECK_KINDS: dict[str, str] = {
    "quoted": "the expected value is printed in the source named by ``source``",
    "rebuilt": "the source's value was lost (a blank cell, a table rendered as an image) and the "
               "book rebuilt it from the model and the source's prose; ``source`` names the table",
    "derived": "the source never prints this value; the book derived it from the source's other "
               "figures (``source`` may say how, e.g. '24 h × 0.1 ÷ 10 min')",
    "algebra": "the expected value is a second, independent computation of the same quantity "
               "(a closed form, an identity, an exact count); ``source`` may name it",
}
"""Where a check's expected value comes from. A check line never credits a source with a
number it did not print: only ``quoted`` names a source as the value's origin."""


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


def half_unit(printed: str) -> float | None:
    """Half a unit in the last digit of the first number in ``printed``: the book's tolerance rule.

    A figure with a decimal point counts every digit printed after it (``"3.1"`` gives 0.05,
    ``"1.170"`` 0.0005); a whole number counts up to its last non-zero digit, since trailing
    zeros of a round figure are not measured (``"11,100"`` gives 50, ``"2,000"`` 500, ``"0"``
    0.5). ``None`` when ``printed`` holds no plain number (a word, or an exponent).
    """
    m = re.search(r"\d[\d,]*(?:\.\d+)?(?:[eE][+-]?\d+)?", printed)
    if not m or "e" in m.group(0).lower():
        return None
    digits = m.group(0).replace(",", "")
    if "." in digits:
        return 0.5 * 10.0 ** -len(digits.split(".")[1])
    whole = digits.strip("0")
    return 0.5 * 10.0 ** (len(digits) - len(digits.rstrip("0")) if whole else 0)


def fmt_width(margin: float, unit: str = "") -> str:
    """A tolerance as a reader reads it: ``±45 MB``, ``±0.02 points`` (for ``%``), ``±600``."""
    number = f"{margin:,.0f}" if margin >= 100 else f"{margin:.3g}"
    suffix = " points" if unit == "%" else (f" {unit}" if unit else "")
    return f"±{number}{suffix}"


def check(
    label: str,
    value: object,
    expected: object,
    *,
    unit: str = "",
    tol: float = 0.0,
    rel: float = 0.0,
    fmt: str | None = None,
    kind: str,
    source: str = "",
) -> None:
    """Assert that ``value`` equals ``expected``, and print one line saying where ``expected`` comes from.

    Integers, booleans and strings must match exactly.  Real numbers match when
    ``|value - expected| <= max(tol, rel * |expected|)``; with both tolerances
    zero they must be equal.  On success one line is printed::

        ✓ <label>: <value> <unit>  [<origin>: <expected> <unit>]

    and nothing is returned, so a check at the end of a cell adds no output.

    With a tolerance, ``about`` precedes the expected value.  The book's one rule
    (``book/how_to_use.md``) allows half a unit in the last digit of the expected value
    as the line prints it (``half_unit``); a wider margin is printed after it,
    ``[quoted from source 001: about 24,000 (±600)]``, unless the label already states a
    width with ``±`` (``"roughly half (±5 points)"``). So no line is wider than it reads.

    ``kind`` says where ``expected`` comes from (see ``CHECK_KINDS``) and sets the
    bracket: ``[quoted from source 002: 466]``, ``[rebuilt from source 000's table: 18]``,
    ``[derived by the book: 2.4]`` or ``[derived, 24 h × 0.1 ÷ 10 min: 2.4]``,
    ``[algebra, √(2δM): 23.2]``. ``quoted`` and ``rebuilt`` need ``source``.

    Raises ``CheckFailed`` (an ``AssertionError``) naming the label, the
    computed value and the stated one on a mismatch, and ``ValueError`` when a
    tolerance is negative.
    """
    if tol < 0 or rel < 0:
        raise ValueError(f"tol and rel must be >= 0, got tol={tol}, rel={rel}")
    origin = _origin(kind, source)
    suffix = unit if unit == "%" else (f" {unit}" if unit else "")
    shown = fmt_value(value, fmt) + suffix
    stated = fmt_value(expected, fmt) + suffix
    if tol or rel:
        margin = max(tol, rel * abs(float(expected)))  # type: ignore[arg-type]
        ok = math.isclose(float(value), float(expected), rel_tol=0.0, abs_tol=margin)  # type: ignore[arg-type]
        stated = f"about {stated}"
        allowed = half_unit(fmt_value(expected, fmt))
        if "±" not in label and (allowed is None or margin > allowed * (1 + 1e-9)):
            stated += f" ({fmt_width(margin, unit)})"
    else:
        ok = _exactly_equal(value, expected)
    if not ok:
        raise CheckFailed(f"{label}: computed {shown}, but {origin} gives {stated}")
    print(f"✓ {label}: {shown}  [{origin}: {stated}]")


def _origin(kind: str, source: str) -> str:
    """The bracket's words before the expected value (see ``CHECK_KINDS``)."""
    if kind not in CHECK_KINDS:
        raise ValueError(f"kind must be one of {', '.join(CHECK_KINDS)}, got {kind!r}")
    if kind in ("quoted", "rebuilt"):
        if not source:
            raise ValueError(f"source must name where a {kind} value comes from, got {source!r}")
        return f"{kind} from {source}"
    if kind == "derived":
        return f"derived, {source}" if source else "derived by the book"
    return f"algebra, {source}" if source else "algebra"


def _exactly_equal(value: object, expected: object) -> bool:
    if isinstance(value, bool) or isinstance(expected, bool):
        return isinstance(value, bool) and isinstance(expected, bool) and value is expected
    return value == expected
