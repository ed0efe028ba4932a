"""Source 000's debug lab (section 21): a cluster doubled from 32 to 64 nodes.

Each step of the lab measures one thing before and after the doubling; every
figure here is computed by a chapter-1 model from the lab's stated inputs, so
the chapter can show where the lab's own numbers hold and where they do not.

Stated inputs (source 000, section 21): compute share of the step 70% at 32
nodes and 41% at 64; training time falls by 11%; 14 GB on the fabric per step
at both sizes (which no reading of the lab supports: see ``FabricBytes``); a four-to-one oversubscribed fabric; per-rank step time at 64
nodes of 180 ms mean and 244 ms maximum (a 36% tax); pipeline depth from four
stages to eight with the microbatch count unchanged (bubble 9% to 17%); cost
per useful TFLOPS from about 1400 to about 2400.
"""
from __future__ import annotations

from dataclasses import dataclass

from .collectives import collective_cost, ring_factor
from .economics import cluster_economics
from .fabric import fabric_bisection
from .pipeline import bubble_fraction, pipeline_bubble
from .scaling import cluster_scale
from .stragglers import straggler_step

NODE_TFLOPS = 100
"""Node peak used throughout chapter 1, TFLOPS (source 000, sections 5 and 13)."""
NODE_COST = 100
"""Node price used throughout chapter 1, cost units (source 000, section 13)."""
GRADIENT_GB = 8
"""Gradient size of chapter 1's collective section, GB (source 000, section 6)."""
LINK_GBPS = 800
"""Per-node link rate of chapter 1's fabric section, Gbps (source 000, section 12)."""


@dataclass(frozen=True)
class StepSplit:
    """Step 1: compute share before and after, what it predicts, and what the lab states."""

    efficiency_before_pct: int
    efficiency_after_pct: int
    achieved_before_tflops: int
    achieved_after_tflops: int
    throughput_ratio: float
    """achieved after / achieved before (the lab's 1.17)."""
    time_reduction_pct: float
    """(1 - 1/ratio) × 100: how much shorter training gets at that ratio."""
    ratio_for_stated_reduction: float
    """The ratio an 11% shorter training time needs: 1 / (1 - 0.11)."""
    share_for_stated_reduction_pct: float
    """The 64-node compute share that would give the stated 11%."""


def step_split(before_pct: int = 70, after_pct: int = 41, stated_reduction_pct: float = 11.0) -> StepSplit:
    """Step 1 of the lab through ``cluster_scale``: 32 nodes at ``before_pct``, 64 at ``after_pct``.

    A step of 100 ms is split into ``pct`` ms of compute and the rest
    communication, so ``efficiency_pct`` equals the stated share. Throughput
    scales with achieved TFLOPS, and training time with its inverse.
    """
    before = cluster_scale(nodes=32, node_tflops=NODE_TFLOPS, compute_ms=before_pct, comm_ms=100 - before_pct)
    after = cluster_scale(nodes=64, node_tflops=NODE_TFLOPS, compute_ms=after_pct, comm_ms=100 - after_pct)
    ratio = after.achieved_tflops / before.achieved_tflops
    needed = 1 / (1 - stated_reduction_pct / 100)
    return StepSplit(
        efficiency_before_pct=before.efficiency_pct,
        efficiency_after_pct=after.efficiency_pct,
        achieved_before_tflops=before.achieved_tflops,
        achieved_after_tflops=after.achieved_tflops,
        throughput_ratio=ratio,
        time_reduction_pct=(1 - 1 / ratio) * 100,
        ratio_for_stated_reduction=needed,
        share_for_stated_reduction_pct=needed * before_pct * 32 / 64,
    )


@dataclass(frozen=True)
class FabricBytes:
    """Step 2 under the two readings of the lab's "unchanged at 14 GB".

    *Whole-cluster ring* (the lab's own reason: by 32 ranks the ring factor is
    close to its limit and hardly changes by 64): every node's 8 GB
    gradient all-reduced over all 32, then all 64 nodes: 15 GB at both in the
    model (15.5 and 15.75 exactly), never 14.

    *Eight replicas* (four stages at 32 nodes, eight at 64, eight data-parallel
    replicas both times): the ring factor is 1.75 at both, so 14 GB at 32
    nodes needs an 8 GB gradient per rank; at eight stages each rank holds
    half the layers, so its gradient halves to 4 GB and the ring moves 7 GB,
    unless the model doubled too (which the lab does not say).
    """

    moved_32_ranks_gb: int
    moved_64_ranks_gb: int
    exact_32_ranks_gb: float
    exact_64_ranks_gb: float
    moved_8_ranks_gb: int
    exact_8_ranks_gb: float
    replicas_4_stages_gb: int
    """Eight-replica reading at 32 nodes (four stages): 8 GB per rank over 8 ranks."""
    replicas_8_stages_gb: int
    """Eight-replica reading at 64 nodes (eight stages): the per-rank gradient halves to 4 GB."""


def fabric_bytes(gradient_gb: int = GRADIENT_GB) -> FabricBytes:
    """Step 2 through ``collective_cost``: ring bytes for 32, 64 and 8 ranks (integer and exact),
    and the eight-replica reading at four and at eight pipeline stages."""

    def moved(n: int) -> int:
        return collective_cost(bytes_gb=gradient_gb, nodes=n, fabric_gbps=LINK_GBPS, budget_ms=0).moved_gb

    return FabricBytes(
        moved_32_ranks_gb=moved(32),
        moved_64_ranks_gb=moved(64),
        exact_32_ranks_gb=gradient_gb * ring_factor(32),
        exact_64_ranks_gb=gradient_gb * ring_factor(64),
        moved_8_ranks_gb=moved(8),
        exact_8_ranks_gb=gradient_gb * ring_factor(8),
        replicas_4_stages_gb=moved(8),
        replicas_8_stages_gb=collective_cost(bytes_gb=gradient_gb * 4 // 8, nodes=8, fabric_gbps=LINK_GBPS,
                                             budget_ms=0).moved_gb,
    )


@dataclass(frozen=True)
class CutBandwidth:
    """Step 3: full and four-to-one bisection of the 64-node fabric."""

    full_gbps: int
    real_gbps: int
    factor: int


def cut_bandwidth(nodes: int = 64, oversub_x: int = 4) -> CutBandwidth:
    """Step 3 through ``fabric_bisection`` at ``LINK_GBPS`` per node."""
    r = fabric_bisection(nodes=nodes, link_gbps=LINK_GBPS, oversub_x=oversub_x, demand_gbps=0)
    return CutBandwidth(r.full_bisection_gbps, r.real_bisection_gbps, r.full_bisection_gbps // r.real_bisection_gbps)


@dataclass(frozen=True)
class StragglerTax:
    """Step 4: the straggler at 64 nodes, truncated (the model) and exact."""

    waste_ms: int
    waste_pct: int
    exact_pct: float


def straggler_tax(mean_ms: int = 180, slowest_ms: int = 244) -> StragglerTax:
    """Step 4 through ``straggler_step``."""
    r = straggler_step(mean_ms=mean_ms, slowest_ms=slowest_ms)
    return StragglerTax(r.waste_ms, r.waste_pct, 100 * r.waste_ms / mean_ms)


@dataclass(frozen=True)
class BubbleShift:
    """Step 5: the bubble at 4 and 8 stages for one unchanged microbatch count."""

    microbatches: int
    before_pct: int
    after_pct: int
    exact_before_pct: float
    exact_after_pct: float


def bubble_shift(microbatches: int, before_stages: int = 4, after_stages: int = 8) -> BubbleShift:
    """Step 5 through ``pipeline_bubble`` (truncated) and ``bubble_fraction`` (exact)."""
    return BubbleShift(
        microbatches,
        pipeline_bubble(stages=before_stages, microbatches=microbatches).bubble_pct,
        pipeline_bubble(stages=after_stages, microbatches=microbatches).bubble_pct,
        100 * bubble_fraction(before_stages, microbatches),
        100 * bubble_fraction(after_stages, microbatches),
    )


def microbatches_matching(before_pct: int, after_pct: int, *, rounded: bool, search_to: int = 4096,
                          before_stages: int = 4, after_stages: int = 8) -> list[int]:
    """Every microbatch count (1..search_to) whose bubble is ``before_pct`` at 4 stages and
    ``after_pct`` at 8, truncated as the model does or rounded to the nearest percent."""
    found = []
    for m in range(1, search_to + 1):
        s = bubble_shift(m, before_stages, after_stages)
        pair = (round(s.exact_before_pct), round(s.exact_after_pct)) if rounded else (s.before_pct, s.after_pct)
        if pair == (before_pct, after_pct):
            found.append(m)
    return found


def microbatches_to_restore(target_pct: int, stages: int = 8) -> int:
    """Smallest microbatch count whose (truncated) bubble at ``stages`` is at most ``target_pct``."""
    m = 0
    while pipeline_bubble(stages=stages, microbatches=m).bubble_pct > target_pct:
        m += 1
    return m


@dataclass(frozen=True)
class UnitCost:
    """The lab's cost per useful TFLOPS before and after, through ``cluster_economics``."""

    before: int
    after: int


def unit_cost(before_pct: int = 70, after_pct: int = 41) -> UnitCost:
    """Cost per useful TFLOPS at 32 nodes and ``before_pct``, and at 64 nodes and ``after_pct``."""
    def price(nodes: int, pct: int) -> int:
        return cluster_economics(nodes=nodes, node_cost=NODE_COST, node_tflops=NODE_TFLOPS,
                                 efficiency_pct=pct).cost_per_useful

    return UnitCost(price(32, before_pct), price(64, after_pct))


def lab_summary(share_32_pct: int = 70, share_64_pct: int = 41, microbatches: int = 32,
                mean_ms: int = 180, slowest_ms: int = 244) -> list[tuple[str, str, str]]:
    """The lab's measurements before and after the doubling, as (quantity, 32 nodes, 64 nodes) rows."""
    split = step_split(share_32_pct, share_64_pct)
    shift = bubble_shift(microbatches)
    tax = straggler_tax(mean_ms, slowest_ms)
    bill = unit_cost(share_32_pct, share_64_pct)
    return [
        ("compute share of the step", f"{split.efficiency_before_pct}%", f"{split.efficiency_after_pct}%"),
        ("achieved TFLOPS", f"{split.achieved_before_tflops:,}", f"{split.achieved_after_tflops:,}"),
        ("throughput ratio", "1", f"{split.throughput_ratio:.3f}"),
        ("training time", "100%", f"{100 - split.time_reduction_pct:.1f}%"),
        ("bubble at 4 then 8 stages", f"{shift.before_pct}%", f"{shift.after_pct}%"),
        ("straggler tax (64 nodes)", "absorbed", f"{tax.waste_pct}% ({tax.exact_pct:.1f}% exact)"),
        ("cost per useful TFLOPS", f"{bill.before:,}", f"{bill.after:,}"),
    ]

