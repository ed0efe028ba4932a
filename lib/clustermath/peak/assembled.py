"""The assembled cluster: six properties that must all hold before nodes add throughput.

Source: source 000, section 14 ("RTL 10", module ``training_cluster_model``).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..validate import flag, whole
from ..runner import counted, output_ports

PROPERTIES: tuple[tuple[str, str], ...] = (
    ("nodes_added", "there is more hardware"),
    ("comm_costed", "the step time counts the collective"),
    ("bubble_bounded", "enough microbatches to fill the pipeline"),
    ("checkpoint_affordable", "the state write fits its interval"),
    ("stragglers_bounded", "no rank lags far behind the mean"),
    ("bisection_sufficient", "the fabric carries the collective"),
)
"""The six input properties in bit order (bit 0 first) with what each one means."""


@dataclass(frozen=True, slots=True)
class TrainingClusterModel:
    """Outputs of ``training_cluster_model``; names are the source's output ports."""

    scales: bool
    """All six properties hold (the node count alone in the broken build)."""
    fail_mask: int
    """Six-bit mask, bit i set when property i fails (bit order of ``PROPERTIES``)."""
    false_scale_err: bool
    """The check: the model says it scales while some property fails."""


def failed_properties(fail_mask: int) -> tuple[str, ...]:
    """Names of the properties whose bit is set in a six-bit ``fail_mask``."""
    fail_mask = whole("fail_mask", fail_mask, low=0, high=63)
    return tuple(name for bit, (name, _) in enumerate(PROPERTIES) if fail_mask >> bit & 1)


@counted(
    broken_flag="scale_only",
    total="n_eval",
    flagged="n_scales",
    counts=lambda r: r.scales,
    inputs=tuple(name for name, _ in PROPERTIES),
    outputs=output_ports(TrainingClusterModel),
    section="14",
)
def training_cluster_model(
    *,
    nodes_added: bool,
    comm_costed: bool,
    bubble_bounded: bool,
    checkpoint_affordable: bool,
    stragglers_bounded: bool,
    bisection_sufficient: bool,
    scale_only: bool = False,
) -> TrainingClusterModel:
    """Does adding nodes add training throughput? All six properties must hold.

    Formula::

        fail_mask[i] = not property[i]        for the six properties, bit 0 first
        scales       = fail_mask == 0         (nodes_added alone when scale_only)
        false_scale_err = scales and fail_mask != 0

    Note that ``n_scales`` counts rows that *scale*, unlike the other nine
    models' second counters, which count rows that fail.

    Source: source 000, section 14 (RTL 10).
    """
    values = (
        flag("nodes_added", nodes_added),
        flag("comm_costed", comm_costed),
        flag("bubble_bounded", bubble_bounded),
        flag("checkpoint_affordable", checkpoint_affordable),
        flag("stragglers_bounded", stragglers_bounded),
        flag("bisection_sufficient", bisection_sufficient),
    )
    scale_only = flag("scale_only", scale_only)
    mask = sum(1 << bit for bit, holds in enumerate(values) if not holds)
    scales = values[0] if scale_only else mask == 0
    return TrainingClusterModel(scales=scales, fail_mask=mask, false_scale_err=scales and mask != 0)
