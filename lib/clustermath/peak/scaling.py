"""Cluster scaling: N nodes deliver N times one node's work only when communication is free.

Source: source 000, section 5 ("RTL 1", module ``cluster_scale``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .ports import sat16
from ..validate import flag, port16
from ..runner import counted, output_ports

SCALES_WELL_PCT = 75
"""Efficiency at or above which a measurement scales well (inclusive), percent."""


@dataclass(frozen=True, slots=True)
class ClusterScale:
    """Outputs of ``cluster_scale``; names are the source's output ports."""

    COMPUTED_FROM: ClassVar[dict[str, tuple[str, ...]]] = {
        "achieved_tflops": ("ideal_tflops",),
        "comm_ignored_err": ("step_ms",),
    }
    """Outputs computed from other outputs: a saturated one makes them untrustworthy too."""

    ideal_tflops: int
    """Peak capability, nodes × node_tflops, TFLOPS (saturates at 65535)."""
    step_ms: int
    """Step time, ms: compute + communication (compute only in the broken build)."""
    efficiency_pct: int
    """Share of the step spent computing, percent, truncated."""
    achieved_tflops: int
    """Delivered capability, ideal × efficiency / 100, TFLOPS, truncated."""
    scales_well: bool
    """``efficiency_pct >= 75``."""
    comm_ignored_err: bool
    """The check: communication happened (comm_ms > 0) but the step equals the compute."""


@counted(
    broken_flag="ignore_comm",
    total="n_measures",
    flagged="n_poor",
    counts=lambda r: not r.scales_well,
    inputs=("nodes", "node_tflops", "compute_ms", "comm_ms"),
    outputs=output_ports(ClusterScale),
    section="5",
)
def cluster_scale(
    *, nodes: int, node_tflops: int, compute_ms: int, comm_ms: int, ignore_comm: bool = False
) -> ClusterScale:
    """Efficiency of a synchronous step that computes and then communicates.

    Formula (integers, truncating division, outputs saturating at 65535)::

        ideal_tflops    = nodes * node_tflops                       [TFLOPS]
        step_ms         = compute_ms + comm_ms                      [ms]
                          (compute_ms alone when ignore_comm: the peak-FLOPs view)
        efficiency_pct  = 100 * compute_ms / step_ms, 0 if step_ms = 0   [%]
        achieved_tflops = ideal_tflops * efficiency_pct / 100       [TFLOPS]
        scales_well     = efficiency_pct >= 75

    Every input is a 16-bit port (0..65535). The source's RTL adds the step
    in a 16-bit output that wraps past 65535; here the output saturates and
    the efficiency uses the exact sum. A saturated step equal to
    ``compute_ms`` = 65535 then raises ``comm_ignored_err`` in the correct
    build too: the sum cannot be represented.

    Source: source 000, section 5 (RTL 1).
    """
    nodes = port16("nodes", nodes)
    node_tflops = port16("node_tflops", node_tflops)
    compute_ms = port16("compute_ms", compute_ms)
    comm_ms = port16("comm_ms", comm_ms)
    ignore_comm = flag("ignore_comm", ignore_comm)

    ideal = sat16(nodes * node_tflops)
    exact_step = compute_ms if ignore_comm else compute_ms + comm_ms
    step = sat16(exact_step)
    efficiency = 0 if exact_step == 0 else compute_ms * 100 // exact_step
    achieved = sat16(ideal * efficiency // 100)
    return ClusterScale(
        ideal_tflops=ideal,
        step_ms=step,
        efficiency_pct=efficiency,
        achieved_tflops=achieved,
        scales_well=efficiency >= SCALES_WELL_PCT,
        comm_ignored_err=comm_ms != 0 and step == compute_ms,
    )
