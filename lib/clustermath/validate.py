"""Argument checks shared by every model, so a ``ValueError`` reads the same everywhere.

Each check returns the value in the type the model computes with, or raises
``ValueError`` with one sentence that names the argument, the allowed range
(with its unit, where the caller gives one) and the value received::

    gpus must be a whole number in 1..inf GPUs, got 0
    save_s must be a number in (0, inf) s, got -5
    nodes must be in 0..65535, got 70000

``bool`` is rejected wherever a number belongs, so a flag cannot be passed as a
count. NaN is never accepted. This module is the only place these rules are
written; models import it, never re-implement it.
"""
from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np

__all__ = ["flag", "port16", "probability", "real", "whole", "one_of"]

U16_MAX = 65535
"""Largest value of a 16-bit port (source 000's models)."""


def _unit(unit: str) -> str:
    return f" {unit}" if unit else ""


def _is_bool(value: object) -> bool:
    return isinstance(value, (bool, np.bool_))


def real(name: str, value: object, *, low: float = 0.0, high: float = math.inf,
         low_open: bool = False, high_open: bool = False, allow_inf: bool = False,
         unit: str = "") -> float:
    """``value`` as ``float`` if it is a real number in the range, else ``ValueError``.

    The range is ``[low, high]``; ``low_open``/``high_open`` exclude an end.
    ``high = inf`` is reachable only with ``allow_inf`` (e.g. an MTBF of
    "never fails").
    """
    low, high = float(low), float(high)  # a bound written as a Decimal or an int reads as a float
    lo = "(" if low_open else "["
    hi = ")" if high_open or (high == math.inf and not allow_inf) else "]"
    top = "inf" if high == math.inf else format(high, "g")
    rng = f"{lo}{low:g}, {top}{hi}{_unit(unit)}"
    if _is_bool(value) or not isinstance(value, Real):
        raise ValueError(f"{name} must be a number in {rng}, got {value!r} ({type(value).__name__})")
    x = float(value)
    if (math.isnan(x) or (math.isinf(x) and not allow_inf) or x < low or x > high
            or (low_open and x == low) or (high_open and x == high)):
        raise ValueError(f"{name} must be a number in {rng}, got {value!r}")
    return x


def whole(name: str, value: object, *, low: int = 0, high: int | None = None,
          unit: str = "", integral_only: bool = True) -> int:
    """``value`` as ``int`` if it is a whole number in ``low..high``, else ``ValueError``.

    ``high=None`` means no upper bound. With ``integral_only=False`` a float that
    holds a whole number (``4096.0``) is accepted too.
    """
    top = "inf" if high is None else f"{high:,}"
    msg = f"{name} must be a whole number in {low:,}..{top}{_unit(unit)}, got {value!r}"
    if _is_bool(value):
        raise ValueError(msg)
    if isinstance(value, Integral):
        n = int(value)
    elif not integral_only and isinstance(value, Real) and math.isfinite(float(value)) \
            and float(value) == int(value):
        n = int(value)
    else:
        raise ValueError(msg)
    if n < low or (high is not None and n > high):
        raise ValueError(msg)
    return n


def probability(name: str, value: object, *, low_open: bool = False, high_open: bool = False) -> float:
    """A probability in ``[0, 1]`` (ends excluded on request) as ``float``."""
    return real(name, value, low=0.0, high=1.0, low_open=low_open, high_open=high_open)


def port16(name: str, value: object, *, low: int = 0, high: int = U16_MAX) -> int:
    """A 16-bit unsigned input port of source 000's models, as ``int``.

    Raises ``ValueError`` naming the port and the allowed range when ``value``
    is not an integer or lies outside ``low..high`` (by default 0..65535; a
    model narrows it where a wider value is impossible).
    """
    if _is_bool(value) or not isinstance(value, Integral):
        raise ValueError(
            f"{name} must be an integer in {low}..{high}, got {value!r} "
            f"({type(value).__name__})"
        )
    value = int(value)
    if not low <= value <= high:
        raise ValueError(f"{name} must be in {low}..{high}, got {value}")
    return value


def flag(name: str, value: object) -> bool:
    """A one-bit input: ``True``, ``False`` (also NumPy's), 1 or 0."""
    if _is_bool(value):
        return bool(value)
    if isinstance(value, Integral) and int(value) in (0, 1):
        return bool(value)
    raise ValueError(f"{name} must be True or False (or 1 or 0), got {value!r}")


def one_of(name: str, value: object, allowed) -> object:
    """``value`` if it is one of ``allowed``, else ``ValueError`` listing them."""
    if value not in allowed:
        raise ValueError(f"{name} must be one of {list(allowed)!r}, got {value!r}")
    return value
