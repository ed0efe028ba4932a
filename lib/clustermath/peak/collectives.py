"""The collective: a ring all-reduce moves nearly twice the gradient.

Source: source 000, section 6 ("RTL 2", module ``collective_cost``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .ports import U16_MAX, sat16
from ..validate import flag, port16
from ..runner import counted, output_ports

MS_PER_GB_AT_1_GBPS = 8000
"""1 GB = 8 Gb, so one GB at 1 Gbps takes 8 s = 8000 ms."""


@dataclass(frozen=True, slots=True)
class CollectiveCost:
    """Outputs of ``collective_cost``; names are the source's output ports."""

    COMPUTED_FROM: ClassVar[dict[str, tuple[str, ...]]] = {
        "collective_ms": ("moved_gb",),
        "within_budget": ("collective_ms",),
        "understated_err": ("moved_gb",),
    }
    """Outputs computed from other outputs: a saturated one makes them untrustworthy too."""

    moved_gb: int
    """Bytes the fabric carries per all-reduce, GB, truncated."""
    collective_ms: int
    """Time of the collective at the fabric rate, ms (65535 for a zero-rate fabric)."""
    within_budget: bool
    """``collective_ms <= budget_ms``."""
    understated_err: bool
    """The check: more than two ranks, yet the fabric moved only the gradient."""


def ring_factor(nodes: int) -> float:
    """Exact ring all-reduce traffic per byte of gradient, 2(N-1)/N (0 for N = 0)."""
    nodes = port16("nodes", nodes)
    return 0.0 if nodes == 0 else 2 * (nodes - 1) / nodes


@counted(
    broken_flag="ignore_topology",
    total="n_collectives",
    flagged="n_over_budget",
    counts=lambda r: not r.within_budget,
    inputs=("bytes_gb", "nodes", "fabric_gbps", "budget_ms"),
    outputs=output_ports(CollectiveCost),
    section="6",
)
def collective_cost(
    *, bytes_gb: int, nodes: int, fabric_gbps: int, budget_ms: int, ignore_topology: bool = False
) -> CollectiveCost:
    """Bytes moved and time taken by a ring all-reduce of a gradient.

    Formula (integers, truncating division, outputs saturating at 65535)::

        moved_gb      = 2 * bytes_gb * (nodes - 1) / nodes          [GB]
                        (0 when nodes = 0; bytes_gb when ignore_topology)
        collective_ms = moved_gb * 8000 / fabric_gbps               [ms]
                        (65535, unbounded, when fabric_gbps = 0)
        within_budget = collective_ms <= budget_ms

    A reduce-scatter and an all-gather each move (N-1)/N of the gradient.
    The source's RTL forms the numerator in 32 bits, which wraps for very
    large gradients and rank counts; here it is exact and then saturates.
    ``understated_err`` is gated on nodes > 2 because at two ranks the ring
    moves the gradient exactly once. It also fires, in the source as here,
    whenever truncation makes the two equal (an empty or a 1 GB gradient).

    Source: source 000, section 6 (RTL 2).
    """
    bytes_gb = port16("bytes_gb", bytes_gb)
    nodes = port16("nodes", nodes)
    fabric_gbps = port16("fabric_gbps", fabric_gbps)
    budget_ms = port16("budget_ms", budget_ms)
    ignore_topology = flag("ignore_topology", ignore_topology)

    if ignore_topology:
        moved = bytes_gb
    elif nodes == 0:
        moved = 0
    else:
        moved = sat16(2 * bytes_gb * (nodes - 1) // nodes)
    time = U16_MAX if fabric_gbps == 0 else sat16(moved * MS_PER_GB_AT_1_GBPS // fabric_gbps)
    return CollectiveCost(
        moved_gb=moved,
        collective_ms=time,
        within_budget=time <= budget_ms,
        understated_err=nodes > 2 and moved == bytes_gb,
    )
