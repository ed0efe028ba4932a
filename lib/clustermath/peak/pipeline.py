"""The pipeline bubble: every stage idles while the pipeline fills and drains.

Source: source 000, section 7 ("RTL 3", module ``pipeline_bubble``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..validate import flag, port16
from ..runner import counted, output_ports

ACCEPTABLE_BUBBLE_PCT = 20
"""Bubble at or below which a schedule is acceptable (inclusive), percent."""


@dataclass(frozen=True, slots=True)
class PipelineBubble:
    """Outputs of ``pipeline_bubble``; names are the source's output ports."""

    COMPUTED_FROM: ClassVar[dict[str, tuple[str, ...]]] = {
        "useful_pct": ("bubble_pct",),
        "acceptable": ("bubble_pct",),
        "bubble_ignored_err": ("bubble_pct",),
    }
    """Outputs computed from other outputs: a saturated one makes them untrustworthy too."""

    bubble_pct: int
    """Idle share of the step, percent, truncated."""
    useful_pct: int
    """``100 - bubble_pct``."""
    acceptable: bool
    """``bubble_pct <= 20``."""
    bubble_ignored_err: bool
    """The check: a multi-stage pipeline reported with no bubble at all."""


def bubble_fraction(stages: int, microbatches: int) -> float:
    """Exact bubble share (S-1)/(M+S-1) as a real number (0 when the denominator is 0)."""
    stages = port16("stages", stages, low=1)
    microbatches = port16("microbatches", microbatches)
    denom = microbatches + stages - 1
    return 0.0 if denom == 0 else (stages - 1) / denom


@counted(
    broken_flag="ignore_bubble",
    total="n_schedules",
    flagged="n_stalled",
    counts=lambda r: not r.acceptable,
    inputs=("stages", "microbatches"),
    outputs=output_ports(PipelineBubble),
    section="7",
)
def pipeline_bubble(*, stages: int, microbatches: int, ignore_bubble: bool = False) -> PipelineBubble:
    """Share of a pipelined step lost to fill and drain (GPipe/1F1B bubble).

    Formula (integers, truncating division)::

        bubble_pct = 100 * (stages - 1) / (microbatches + stages - 1)   [%]
                     (0 when the denominator is 0; 0 when ignore_bubble)
        useful_pct = 100 - bubble_pct                                   [%]
        acceptable = bubble_pct <= 20

    ``stages`` is 1..65535: a pipeline has at least one stage, and the
    source's ``stages - 1`` underflows at zero, so zero is rejected rather
    than wrapped. The source holds the denominator in 16 bits, which wraps
    past 65535; here it is exact (the bubble never exceeds 100%, so nothing
    needs to saturate). ``bubble_ignored_err`` needs stages > 1
    (a single stage has no bubble); it also fires in the correct build when
    a bubble under 1% truncates to 0, as it does in the source.

    Source: source 000, section 7 (RTL 3).
    """
    stages = port16("stages", stages, low=1)
    microbatches = port16("microbatches", microbatches)
    ignore_bubble = flag("ignore_bubble", ignore_bubble)

    denom = microbatches + stages - 1
    bubble = 0 if ignore_bubble or denom == 0 else (stages - 1) * 100 // denom
    return PipelineBubble(
        bubble_pct=bubble,
        useful_pct=100 - bubble,
        acceptable=bubble <= ACCEPTABLE_BUBBLE_PCT,
        bubble_ignored_err=stages > 1 and bubble == 0,
    )
