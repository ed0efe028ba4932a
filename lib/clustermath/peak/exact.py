"""Chapter 1's curve models in exact arithmetic: what the integer ports approximate.

Source 000's models are integer hardware: every division truncates and every
output saturates at 65,535, so their curves are staircases and a product of
truncated factors drifts below the true value (64 nodes of 100 TFLOPS at
100 ms compute and 130 ms communication deliver 2,752 TFLOPS in the integer
model, 6,400 × 100/230 = 2,782.6 exactly). The explorers draw these exact
curves beside the integer ones so a reader sees which part of a gap is the
physics and which is the truncation.

Each function takes the same inputs and the same broken-build flag as its
integer model, returns a float in the model's unit, and rejects the same
impossible inputs; where the integer model defines a guard (a zero divisor),
the exact function returns ``math.inf`` or 0.0 as stated.
"""
from __future__ import annotations

import math

from ..validate import flag, real
from .pipeline import bubble_fraction

__all__ = [
    "achieved_tflops_exact", "bubble_pct_exact", "cost_per_useful_exact", "efficiency_pct_exact",
    "lost_min_per_day_exact", "overhead_pct_exact",
]


def efficiency_pct_exact(*, compute_ms: float, comm_ms: float, ignore_comm: bool = False) -> float:
    """Scaling efficiency, %: ``100 * compute_ms / (compute_ms + comm_ms)``.

    0.0 when the step is empty (both times zero); ``comm_ms`` is left out in
    the broken build (100% for any compute). Times in ms, 0..inf.
    Source: source 000, section 5 (RTL 1), without truncation.
    """
    compute_ms = real("compute_ms", compute_ms, unit="ms")
    comm_ms = real("comm_ms", comm_ms, unit="ms")
    step = compute_ms + (0.0 if flag("ignore_comm", ignore_comm) else comm_ms)
    return 100.0 * compute_ms / step if step else 0.0


def achieved_tflops_exact(*, nodes: float, node_tflops: float, compute_ms: float, comm_ms: float,
                          ignore_comm: bool = False) -> float:
    """Delivered TFLOPS: ``nodes * node_tflops * efficiency_pct_exact / 100``.

    Source: source 000, section 5 (RTL 1), without truncation.
    """
    nodes = real("nodes", nodes, unit="nodes")
    node_tflops = real("node_tflops", node_tflops, unit="TFLOPS")
    eff = efficiency_pct_exact(compute_ms=compute_ms, comm_ms=comm_ms, ignore_comm=ignore_comm)
    return nodes * node_tflops * eff / 100.0


def bubble_pct_exact(*, stages: int, microbatches: int, ignore_bubble: bool = False) -> float:
    """Pipeline bubble, %: ``100 * (stages - 1) / (microbatches + stages - 1)``, that is 100 times
    ``pipeline.bubble_fraction`` (whose port ranges it keeps); 0.0 in the broken build.
    Source: source 000, section 7 (RTL 3), without truncation.
    """
    share = bubble_fraction(stages, microbatches)
    return 0.0 if flag("ignore_bubble", ignore_bubble) else 100.0 * share


def overhead_pct_exact(*, footprint_gb: float, tier_gbps: float, interval_s: float,
                       ignore_checkpoint: bool = False) -> float:
    """Checkpoint overhead, %: ``100 * (footprint_gb * 8 / tier_gbps) / interval_s``.

    ``math.inf`` when the write never ends (``tier_gbps`` = 0 with something to
    write) or the interval is zero with a write to make; 0.0 in the broken build
    (the write is free) or with nothing to write. Footprint in GB, tier in Gbps,
    interval in s.
    Source: source 000, section 8 (RTL 4), without truncation.
    """
    footprint_gb = real("footprint_gb", footprint_gb, unit="GB")
    tier_gbps = real("tier_gbps", tier_gbps, unit="Gbps")
    interval_s = real("interval_s", interval_s, unit="s")
    if flag("ignore_checkpoint", ignore_checkpoint) or footprint_gb == 0:
        return 0.0
    if tier_gbps == 0 or interval_s == 0:
        return math.inf
    return 100.0 * footprint_gb * 8.0 / tier_gbps / interval_s


def lost_min_per_day_exact(*, nodes: float, node_mtbf_h: float, interval_min: float,
                           ignore_failures: bool = False) -> float:
    """Work lost to failures, min/day: ``(24 * nodes / node_mtbf_h) * interval_min / 2``.

    A failure loses half a checkpoint interval on average. With zero nodes, or in
    the broken build, the cluster fails as often as one node (the integer model's
    reading); ``math.inf`` when ``node_mtbf_h`` is 0 (failing all the time) and
    the interval is positive.
    Source: source 000, section 9 (RTL 5), without truncation.
    """
    nodes = real("nodes", nodes, unit="nodes")
    node_mtbf_h = real("node_mtbf_h", node_mtbf_h, unit="h")
    interval_min = real("interval_min", interval_min, unit="min")
    counted = 1.0 if flag("ignore_failures", ignore_failures) or nodes == 0 else nodes
    if interval_min == 0:
        return 0.0
    if node_mtbf_h == 0:
        return math.inf
    return 24.0 * counted / node_mtbf_h * interval_min / 2.0


def cost_per_useful_exact(*, nodes: float, node_cost: float, node_tflops: float, efficiency_pct: float,
                          ignore_efficiency: bool = False) -> float:
    """Cost per 1,000 useful TFLOPS: ``1000 * nodes * node_cost / (nodes * node_tflops * efficiency_pct / 100)``.

    Scale cancels: ``100000 * node_cost / (node_tflops * efficiency_pct)``. The
    broken build counts the peak as useful (efficiency 100%). ``math.inf`` when
    nothing is useful. ``efficiency_pct`` is 0..100.
    Source: source 000, section 13 (RTL 9), without truncation.
    """
    nodes = real("nodes", nodes, unit="nodes")
    node_cost = real("node_cost", node_cost, unit="cost units")
    node_tflops = real("node_tflops", node_tflops, unit="TFLOPS")
    efficiency_pct = real("efficiency_pct", efficiency_pct, high=100, unit="%")
    eff = 100.0 if flag("ignore_efficiency", ignore_efficiency) else efficiency_pct
    useful = nodes * node_tflops * eff / 100.0
    if useful == 0:
        return math.inf
    return 1000.0 * nodes * node_cost / useful
