"""Economics: what a cluster costs per useful teraflop.

Source: source 000, section 13 ("RTL 9", module ``cluster_economics``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .ports import U16_MAX, sat16
from ..validate import flag, port16
from ..runner import counted, output_ports

ACCEPTABLE_COST_PER_USEFUL = 1500
"""Cost per useful TFLOPS (× 1000) at or below which a price is acceptable (inclusive)."""


@dataclass(frozen=True, slots=True)
class ClusterEconomics:
    """Outputs of ``cluster_economics``; names are the source's output ports."""

    COMPUTED_FROM: ClassVar[dict[str, tuple[str, ...]]] = {
        "useful_tflops": ("peak_tflops",),
        "cost_per_useful": ("total_cost", "useful_tflops"),
        "acceptable": ("cost_per_useful",),
        "efficiency_ignored_err": ("peak_tflops", "useful_tflops"),
    }
    """Outputs computed from other outputs: a saturated one makes them untrustworthy too."""

    total_cost: int
    """``nodes * node_cost``, in the source's cost units."""
    peak_tflops: int
    """``nodes * node_tflops``, TFLOPS."""
    useful_tflops: int
    """``peak * efficiency_pct / 100``, TFLOPS (peak in the broken build)."""
    cost_per_useful: int
    """``1000 * total_cost / useful_tflops`` (65535 when nothing is useful)."""
    acceptable: bool
    """``cost_per_useful <= 1500``."""
    efficiency_ignored_err: bool
    """The check: efficiency below 100% but the useful figure equals the peak."""


@counted(
    broken_flag="ignore_efficiency",
    total="n_pricings",
    flagged="n_costly",
    counts=lambda r: not r.acceptable,
    inputs=("nodes", "node_cost", "node_tflops", "efficiency_pct"),
    outputs=output_ports(ClusterEconomics),
    section="13",
)
def cluster_economics(
    *, nodes: int, node_cost: int, node_tflops: int, efficiency_pct: int, ignore_efficiency: bool = False
) -> ClusterEconomics:
    """Cost per useful teraflop of a cluster running at a measured efficiency.

    Formula (integers, truncating division, outputs saturating at 65535)::

        total_cost      = nodes * node_cost                     [cost units]
        peak_tflops     = nodes * node_tflops                   [TFLOPS]
        useful_tflops   = peak_tflops * efficiency_pct / 100    [TFLOPS]
                          (peak_tflops when ignore_efficiency: the purchase order)
        cost_per_useful = 1000 * total_cost / useful_tflops     [cost units per 1000 TFLOPS]
                          (65535 when useful_tflops = 0)
        acceptable      = cost_per_useful <= 1500

    With nodes costing 100 and delivering 100 TFLOPS, cost_per_useful is
    100000 / efficiency_pct whatever the node count: scale cancels.
    ``efficiency_pct`` is 0..100 (a cluster cannot deliver more than its
    peak); the source's port would accept more, the book rejects it.

    Source: source 000, section 13 (RTL 9).
    """
    nodes = port16("nodes", nodes)
    node_cost = port16("node_cost", node_cost)
    node_tflops = port16("node_tflops", node_tflops)
    efficiency_pct = port16("efficiency_pct", efficiency_pct, high=100)  # no cluster beats its peak
    ignore_efficiency = flag("ignore_efficiency", ignore_efficiency)

    total = sat16(nodes * node_cost)
    peak = sat16(nodes * node_tflops)
    useful = peak if ignore_efficiency else peak * efficiency_pct // 100
    per_useful = U16_MAX if useful == 0 else sat16(total * 1000 // useful)
    return ClusterEconomics(
        total_cost=total,
        peak_tflops=peak,
        useful_tflops=useful,
        cost_per_useful=per_useful,
        acceptable=per_useful <= ACCEPTABLE_COST_PER_USEFUL,
        efficiency_ignored_err=efficiency_pct < 100 and useful == peak,
    )
