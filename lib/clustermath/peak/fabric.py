"""Fabric bisection: the full figure counts links; oversubscription divides it.

Source: source 000, section 12 ("RTL 8", module ``fabric_bisection``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .ports import sat16
from ..validate import flag, port16
from ..runner import counted, output_ports


@dataclass(frozen=True, slots=True)
class FabricBisection:
    """Outputs of ``fabric_bisection``; names are the source's output ports."""

    COMPUTED_FROM: ClassVar[dict[str, tuple[str, ...]]] = {
        "real_bisection_gbps": ("full_bisection_gbps",),
        "sufficient": ("real_bisection_gbps",),
        "oversub_ignored_err": ("full_bisection_gbps", "real_bisection_gbps"),
    }
    """Outputs computed from other outputs: a saturated one makes them untrustworthy too."""

    full_bisection_gbps: int
    """Half the nodes' links across the cut, ``nodes * link_gbps / 2``, Gbps."""
    real_bisection_gbps: int
    """What the switching layer carries: full / oversubscription, Gbps."""
    sufficient: bool
    """``real_bisection_gbps >= demand_gbps``."""
    oversub_ignored_err: bool
    """The check: an oversubscribed fabric credited with its full-bisection figure."""


@counted(
    broken_flag="assume_full",
    total="n_assessments",
    flagged="n_short",
    counts=lambda r: not r.sufficient,
    inputs=("nodes", "link_gbps", "oversub_x", "demand_gbps"),
    outputs=output_ports(FabricBisection),
    section="12",
)
def fabric_bisection(
    *, nodes: int, link_gbps: int, oversub_x: int, demand_gbps: int, assume_full: bool = False
) -> FabricBisection:
    """Bisection bandwidth of a fabric with an oversubscription ratio.

    Formula (integers, truncating division, outputs saturating at 65535)::

        full_bisection_gbps = nodes * link_gbps / 2                  [Gbps]
        real_bisection_gbps = full_bisection_gbps / oversub_x        [Gbps]
                              (full when oversub_x = 0, "unstated", or assume_full)
        sufficient          = real_bisection_gbps >= demand_gbps

    ``oversub_x`` is the ratio N in "N-to-one"; 1 and 0 both leave the full
    figure, and ``oversub_ignored_err`` needs oversub_x > 1.

    Source: source 000, section 12 (RTL 8).
    """
    nodes = port16("nodes", nodes)
    link_gbps = port16("link_gbps", link_gbps)
    oversub_x = port16("oversub_x", oversub_x)
    demand_gbps = port16("demand_gbps", demand_gbps)
    assume_full = flag("assume_full", assume_full)

    full = sat16(nodes * link_gbps // 2)
    real = full if assume_full or oversub_x == 0 else full // oversub_x
    return FabricBisection(
        full_bisection_gbps=full,
        real_bisection_gbps=real,
        sufficient=real >= demand_gbps,
        oversub_ignored_err=oversub_x > 1 and real == full,
    )
