"""Failures at scale: reliability divides by the node count.

Source: source 000, section 9 ("RTL 5", module ``failure_recovery``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .ports import U16_MAX, sat16
from ..validate import flag, port16
from ..runner import counted, output_ports

TOLERABLE_LOST_MIN_PER_DAY = 60
"""Work lost per day at or below which a cluster is tolerable (inclusive), minutes."""

HOURS_PER_DAY = 24


@dataclass(frozen=True, slots=True)
class FailureRecovery:
    """Outputs of ``failure_recovery``; names are the source's output ports."""

    COMPUTED_FROM: ClassVar[dict[str, tuple[str, ...]]] = {
        "failures_per_day": ("cluster_mtbf_h",),
        "lost_min_per_day": ("failures_per_day",),
        "tolerable": ("lost_min_per_day",),
        "scale_ignored_err": ("cluster_mtbf_h",),
    }
    """Outputs computed from other outputs: a saturated one makes them untrustworthy too."""

    cluster_mtbf_h: int
    """Mean time between failures of the whole cluster, h, truncated."""
    failures_per_day: int
    """``24 / cluster_mtbf_h``, truncated (65535, unbounded, when the MTBF is 0 h)."""
    lost_min_per_day: int
    """Work redone per day: failures × half an interval, minutes."""
    tolerable: bool
    """``lost_min_per_day <= 60``."""
    scale_ignored_err: bool
    """The check: a multi-node cluster reported with a single node's MTBF."""


@counted(
    broken_flag="ignore_failures",
    total="n_assessments",
    flagged="n_lossy",
    counts=lambda r: not r.tolerable,
    inputs=("nodes", "node_mtbf_h", "interval_min"),
    outputs=output_ports(FailureRecovery),
    section="9",
)
def failure_recovery(
    *, nodes: int, node_mtbf_h: int, interval_min: int, ignore_failures: bool = False
) -> FailureRecovery:
    """Failures a day and work lost a day for a cluster of identical nodes.

    Formula (integers, truncating division, outputs saturating at 65535)::

        cluster_mtbf_h   = node_mtbf_h / nodes          [h]
                           (node_mtbf_h when nodes = 0 or ignore_failures)
        failures_per_day = 24 / cluster_mtbf_h          [1/day]
                           (65535 when cluster_mtbf_h = 0)
        lost_min_per_day = failures_per_day * interval_min / 2   [min/day]
        tolerable        = lost_min_per_day <= 60

    A failure loses on average half a checkpoint interval. Truncation makes
    ``failures_per_day`` 0 for any cluster MTBF above 24 h, so fewer than
    one failure a day counts as none.

    Source: source 000, section 9 (RTL 5).
    """
    nodes = port16("nodes", nodes)
    node_mtbf_h = port16("node_mtbf_h", node_mtbf_h)
    interval_min = port16("interval_min", interval_min)
    ignore_failures = flag("ignore_failures", ignore_failures)

    if ignore_failures or nodes == 0:
        cluster_mtbf = node_mtbf_h
    else:
        cluster_mtbf = node_mtbf_h // nodes
    per_day = U16_MAX if cluster_mtbf == 0 else HOURS_PER_DAY // cluster_mtbf
    lost = sat16(per_day * interval_min // 2)
    return FailureRecovery(
        cluster_mtbf_h=cluster_mtbf,
        failures_per_day=per_day,
        lost_min_per_day=lost,
        tolerable=lost <= TOLERABLE_LOST_MIN_PER_DAY,
        scale_ignored_err=nodes > 1 and cluster_mtbf == node_mtbf_h,
    )
