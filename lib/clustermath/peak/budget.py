"""From peak to delivered: chapter 1's terms composed into one budget.

An illustration, not a measurement: each term is taken from one chapter-1 model
at the chapter's own worked inputs and applied as a multiplier on what the
previous terms left. Real stacks overlap some of these terms (the collective
with the backward pass, the checkpoint with training), so the product is an
upper bound on the loss, and the order of the terms does not change it.

One rule for every factor: each is the exact ratio of the chapter's formula,
not the model's truncated whole percent. The integer models are still called
(they validate the inputs and hold the source's arithmetic), but mixing a
truncated 0.83 with an exact 0.769 would give 1,675 TFLOPS where the exact
product is 1,643.

Source: source 000, sections 1, 5, 7, 8 and 10 (the inputs); the composition
is the book's.
"""
from __future__ import annotations

from dataclasses import dataclass

from .checkpoint import checkpoint_cost
from .pipeline import bubble_fraction
from .scaling import cluster_scale
from .stragglers import straggler_step


@dataclass(frozen=True)
class BudgetTerm:
    """One term of the budget: what it keeps (a fraction) and what is left after it, TFLOPS."""

    name: str
    keeps: float
    remaining_tflops: float


def peak_to_delivered(
    *,
    nodes: int = 64,
    node_tflops: int = 100,
    compute_ms: int = 100,
    comm_ms: int = 100,
    stages: int = 8,
    microbatches: int = 32,
    mean_ms: int = 200,
    slowest_ms: int = 260,
    footprint_gb: int = 560,
    tier_gbps: int = 80,
    interval_s: int = 300,
) -> list[BudgetTerm]:
    """Peak TFLOPS, then what survives communication, the bubble, a straggler and a checkpoint.

    Formula::

        peak      = nodes * node_tflops                       (cluster_scale.ideal_tflops)
        keeps     = compute_ms / (compute_ms + comm_ms)       (communication, cluster_scale)
                  × (1 - (S - 1) / (M + S - 1))               (bubble, pipeline_bubble)
                  × mean_ms / slowest_ms                      (straggler, straggler_step)
                  × (1 - (8 × footprint_gb / tier_gbps) / interval_s)   (checkpoint, checkpoint_cost)

    Every factor is exact (no truncation), so the defaults give
    6,400 × 1/2 × 32/39 × 10/13 × 61/75 = 1,642.7 TFLOPS.

    Returns the peak (``keeps`` = 1) followed by the four terms in that order.
    Raises ``ValueError`` for any input a model rejects, and when the
    checkpoint overhead exceeds 100% (the run would do nothing but write).
    """
    scale = cluster_scale(nodes=nodes, node_tflops=node_tflops, compute_ms=compute_ms, comm_ms=comm_ms)
    straggler = straggler_step(mean_ms=mean_ms, slowest_ms=slowest_ms)
    # checkpoint_cost checks the three ports; its integer overhead is not used: with nothing to write
    # and a zero-rate tier it saturates ("never done") although there is nothing to wait for
    checkpoint_cost(footprint_gb=footprint_gb, tier_gbps=tier_gbps, interval_s=interval_s)
    overhead = (8 * footprint_gb / tier_gbps / interval_s) if tier_gbps and interval_s else float("inf")
    if footprint_gb == 0:
        overhead = 0.0
    if overhead > 1:
        raise ValueError(f"checkpoint overhead must be in 0..100 %, got {100 * overhead:.1f} % "
                         f"(footprint_gb={footprint_gb}, tier_gbps={tier_gbps}, interval_s={interval_s})")
    step = compute_ms + comm_ms
    keeps = [
        ("peak (the purchase order)", 1.0),
        ("communication", 0.0 if step == 0 else compute_ms / step),
        ("pipeline bubble", 1 - bubble_fraction(stages, microbatches)),
        ("straggler", 0.0 if straggler.step_ms == 0 else mean_ms / straggler.step_ms),
        ("checkpoint", 1 - overhead),
    ]
    terms, left = [], float(scale.ideal_tflops)
    for name, kept in keeps:
        left *= kept
        terms.append(BudgetTerm(name, kept, left))
    return terms
