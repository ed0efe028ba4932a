"""Unsigned port arithmetic shared by the chapter-1 models.

Source 000 writes each model as a small synchronous block with 16-bit unsigned
input ports, 32-bit intermediates and 16-bit outputs that saturate at 65535.
These helpers give Python models the same contract:

* ``u16(name, value)`` validates an input port: an integer in 0..65535
  (``bool`` is rejected so a flag cannot be passed where a count belongs).
* ``sat16(x)`` saturates a non-negative intermediate to a 16-bit output.
* ``flag(name, value)`` validates a one-bit input port (``True``/``False``).

Python integers never wrap, so every intermediate here is exact.  Where the
source's fixed-width RTL would wrap (see ``WRAP_ERRATA``), the book keeps the
exact value and saturates only the output, and says so in the chapter.
"""
from __future__ import annotations

from numbers import Integral

import numpy as np

U16_MAX = 65535
"""Largest value of a 16-bit port, and the value every output saturates at."""

WRAP_ERRATA: dict[str, str] = {
    "cluster_scale.step_ms": (
        "the RTL adds compute_ms + comm_ms into a 16-bit output, which wraps "
        "past 65535; here the output saturates at 65535 and the efficiency "
        "uses the exact sum"
    ),
    "collective_cost.moved_gb": (
        "the RTL forms 2 * bytes_gb * (nodes - 1) in 32 bits, which wraps once "
        "the product passes 2**32 - 1; here it is exact, then saturates"
    ),
    "pipeline_bubble.denom": (
        "the RTL holds microbatches + stages - 1 in 16 bits, which wraps past "
        "65535; here it is exact"
    ),
    "activation_memory.act_mb": (
        "the RTL forms layers * batch * act_per_layer_mb in 32 bits, which "
        "wraps once the product passes 2**32 - 1; here it is exact, then saturates"
    ),
}
"""Where the source's fixed-width intermediates would wrap and this package saturates."""


def u16(name: str, value: object, *, low: int = 0, high: int = U16_MAX) -> int:
    """Validate a 16-bit unsigned input port and return it as ``int``.

    Raises ``ValueError`` naming the port and the allowed range when ``value``
    is not an integer or lies outside ``low..high`` (by default 0..65535; a
    model narrows it where a wider value is impossible).
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, Integral):
        raise ValueError(
            f"{name} must be an integer in {low}..{high}, got {value!r} "
            f"({type(value).__name__})"
        )
    value = int(value)
    if not low <= value <= high:
        raise ValueError(f"{name} must be in {low}..{high}, got {value}")
    return value


def flag(name: str, value: object) -> bool:
    """Validate a one-bit input port: ``True``, ``False`` (also NumPy's), 1 or 0."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, Integral) and int(value) in (0, 1):
        return bool(value)
    raise ValueError(f"{name} must be True or False (or 1 or 0), got {value!r}")


def sat16(value: int) -> int:
    """Saturate a non-negative intermediate to a 16-bit output: ``min(value, 65535)``."""
    return U16_MAX if value > U16_MAX else value
