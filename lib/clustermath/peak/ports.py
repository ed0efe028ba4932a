"""Unsigned port arithmetic shared by the chapter-1 models.

Source 000 writes each model as a small synchronous block with 16-bit unsigned
input ports, 32-bit intermediates and 16-bit outputs that saturate at 65535.
The input checks (``port16`` for a 16-bit port, ``flag`` for a one-bit port)
live with every other argument check in ``clustermath.validate``; this module
holds the output side of the contract:

* ``sat16(x)`` saturates a non-negative intermediate to a 16-bit output;
* ``WRAP_ERRATA`` lists where the source's fixed-width intermediates would wrap.

What a saturated output makes untrustworthy downstream is said by
``clustermath.runner.saturated`` (and each result class's ``COMPUTED_FROM``).

Python integers never wrap, so every intermediate here is exact.  Where the
source's fixed-width RTL would wrap (see ``WRAP_ERRATA``), the book keeps the
exact value and saturates only the output, and says so in the chapter.
"""
from __future__ import annotations

from ..validate import U16_MAX  # the largest value of a 16-bit port, and every output's ceiling

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


def sat16(value: int) -> int:
    """Saturate a non-negative intermediate to a 16-bit output: ``min(value, 65535)``."""
    return U16_MAX if value > U16_MAX else value
