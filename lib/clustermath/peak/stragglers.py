"""Stragglers: the slowest rank sets the length of a synchronous step.

Source: source 000, section 10 ("RTL 6", module ``straggler_step``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .ports import sat16
from ..validate import flag, port16
from ..runner import counted, output_ports

TOLERABLE_WASTE_PCT = 10
"""Straggler waste at or below which a step is tolerable (inclusive), percent."""


@dataclass(frozen=True, slots=True)
class StragglerStep:
    """Outputs of ``straggler_step``; names are the source's output ports."""

    COMPUTED_FROM: ClassVar[dict[str, tuple[str, ...]]] = {
        "waste_ms": ("step_ms",),
        "waste_pct": ("waste_ms",),
        "tolerable": ("waste_pct",),
        "uniform_assumed_err": ("step_ms",),
    }
    """Outputs computed from other outputs: a saturated one makes them untrustworthy too."""

    step_ms: int
    """Step time, ms: the slowest rank (the mean rank in the broken build)."""
    waste_ms: int
    """Time the typical rank waits, ``step_ms - mean_ms``, ms."""
    waste_pct: int
    """``100 * waste_ms / mean_ms``, percent, truncated (0 when mean_ms = 0)."""
    tolerable: bool
    """``waste_pct <= 10``."""
    uniform_assumed_err: bool
    """The check: a slower rank existed, yet the step was taken as the mean."""


@counted(
    broken_flag="assume_uniform",
    total="n_steps",
    flagged="n_wasteful",
    counts=lambda r: not r.tolerable,
    inputs=("mean_ms", "slowest_ms"),
    outputs=output_ports(StragglerStep),
    section="10",
)
def straggler_step(*, mean_ms: int, slowest_ms: int, assume_uniform: bool = False) -> StragglerStep:
    """Step time and straggler tax of a synchronous step.

    Formula (integers, truncating division)::

        step_ms   = slowest_ms            (mean_ms when assume_uniform)   [ms]
        waste_ms  = step_ms - mean_ms                                     [ms]
        waste_pct = 100 * waste_ms / mean_ms     (0 when mean_ms = 0)     [%]
        tolerable = waste_pct <= 10

    The slowest rank can never be faster than the mean, so
    ``slowest_ms < mean_ms`` is rejected with ``ValueError`` (the source's RTL
    silently reports no waste for it).

    Source: source 000, section 10 (RTL 6).
    """
    mean_ms = port16("mean_ms", mean_ms)
    slowest_ms = port16("slowest_ms", slowest_ms)
    assume_uniform = flag("assume_uniform", assume_uniform)
    if slowest_ms < mean_ms:
        raise ValueError(
            f"slowest_ms must be in mean_ms..65535 = {mean_ms}..65535 "
            f"(the slowest rank cannot beat the mean), got {slowest_ms}"
        )

    step = mean_ms if assume_uniform else slowest_ms
    waste = step - mean_ms
    waste_pct = 0 if mean_ms == 0 else sat16(waste * 100 // mean_ms)
    return StragglerStep(
        step_ms=step,
        waste_ms=waste,
        waste_pct=waste_pct,
        tolerable=waste_pct <= TOLERABLE_WASTE_PCT,
        uniform_assumed_err=slowest_ms > mean_ms and step == mean_ms,
    )
