"""The checkpoint: saving a run's full training state takes time, and the run waits for it.

Source: source 000, section 8 ("RTL 4", module ``checkpoint_cost``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .ports import U16_MAX, sat16
from ..validate import flag, port16
from ..runner import counted, output_ports

AFFORDABLE_OVERHEAD_PCT = 10
"""Checkpoint overhead at or below which it is affordable (inclusive), percent."""


@dataclass(frozen=True, slots=True)
class CheckpointCost:
    """Outputs of ``checkpoint_cost``; names are the source's output ports."""

    COMPUTED_FROM: ClassVar[dict[str, tuple[str, ...]]] = {
        "overhead_pct": ("write_s",),
        "affordable": ("overhead_pct",),
        "free_write_err": ("write_s",),
    }
    """Outputs computed from other outputs: a saturated one makes them untrustworthy too."""

    write_s: int
    """Time to write the state, s (65535 for a zero-rate tier; 0 in the broken build)."""
    overhead_pct: int
    """``100 * write_s / interval_s``, percent (65535 with no interval)."""
    affordable: bool
    """``overhead_pct <= 10``."""
    free_write_err: bool
    """The check: a real state written to a real tier in no time."""


@counted(
    broken_flag="ignore_checkpoint",
    total="n_checkpoints",
    flagged="n_costly",
    counts=lambda r: not r.affordable,
    inputs=("footprint_gb", "tier_gbps", "interval_s"),
    outputs=output_ports(CheckpointCost),
    section="8",
)
def checkpoint_cost(
    *, footprint_gb: int, tier_gbps: int, interval_s: int, ignore_checkpoint: bool = False
) -> CheckpointCost:
    """Write time and overhead of a periodic checkpoint.

    Formula (integers, truncating division, outputs saturating at 65535)::

        write_s      = footprint_gb * 8 / tier_gbps        [s]
                       (65535 when tier_gbps = 0; 0 when ignore_checkpoint)
        overhead_pct = 100 * write_s / interval_s          [%]
                       (65535 when interval_s = 0)
        affordable   = overhead_pct <= 10

    The overhead is the write's share of one interval (C/T in Young's
    notation). ``free_write_err`` also fires in the correct build when a
    write under one second truncates to 0 s, in the source as here.

    Source: source 000, section 8 (RTL 4).
    """
    footprint_gb = port16("footprint_gb", footprint_gb)
    tier_gbps = port16("tier_gbps", tier_gbps)
    interval_s = port16("interval_s", interval_s)
    ignore_checkpoint = flag("ignore_checkpoint", ignore_checkpoint)

    if ignore_checkpoint:
        write = 0
    elif tier_gbps == 0:
        write = U16_MAX
    else:
        write = sat16(footprint_gb * 8 // tier_gbps)
    overhead = U16_MAX if interval_s == 0 else sat16(write * 100 // interval_s)
    return CheckpointCost(
        write_s=write,
        overhead_pct=overhead,
        affordable=overhead <= AFFORDABLE_OVERHEAD_PCT,
        free_write_err=footprint_gb != 0 and tier_gbps != 0 and write == 0,
    )
