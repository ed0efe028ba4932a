"""Chapter 6: a collective's time as NCCL's own tuner estimates it, rings and trees as the group grows.

The predictor's ``collective_time`` charges a fixed α per step of a log-depth schedule and a ring's
bandwidth term. NCCL itself times each (algorithm, protocol) pair and runs the fastest
(``ncclTopoTuneModel`` and ``ncclTopoGetAlgoTime`` in ``src/graph/tuning.cc``); this module rebuilds
that estimate for an all-reduce, a reduce-scatter and an all-gather, with NCCL's published
constants (NVIDIA/nccl at ``NCCL_COMMIT``, NCCL 2.30.7), so the latency grows as the group does::

    time     = calls · min over (a, p) of  [ lat(a, p) + (nbytes/calls) · share(a) / (rate · bw(a, p, size)) ]
    ring     lat = base + (S − S_net)·hw_intra + S_net·hw_net     S = 2(n−1) steps (n−1 for RS/AG),
                   × 1.4 across nodes with Simple (the ring's plateau)   S_net = 2(N−1) (N−1 for RS/AG)
    tree     lat = base + 2·((k−1)·hw_intra + ⌊log₂ N⌋·hw_net)          all-reduce only
    share    2(n−1)/n for a ring all-reduce, (n−1)/n for RS/AG; 2 for a tree all-reduce (it moves
             the whole buffer up and down), at ``bw`` = NCCL's bus-bandwidth share for the pair
             (ring: LL 0.5, LL128 0.92, Simple 1; tree: 0.92 × (LL 1/3.8, LL128 120/128 across nodes
             or 7/9 inside one, Simple 1) × the tree's size correction, ``tree_correction``)

``n`` ranks in ``N = ⌈n/k⌉`` nodes of ``k`` ranks; ``rate`` the bus bandwidth a ring reaches, bytes/s
(the predictor's calibrated wire rate); latencies in µs in NCCL's tables, seconds here. With one
rank per node NCCL charges a ring's network steps at the tree's network latency, as here.

Left out, and said: NCCL's absolute per-channel caps (``llMaxBws``, ``perChMax*Bws``: they need the
channel count, and bind only far above a NIC's rate), NVLink SHARP (``NVLS``, ``NVLS_TREE``: only
with several ranks of a group per node on an NVSwitch with SHARP; a data-parallel group with TP
filling the node has one), CollNet (needs in-network reduction), PAT (reduce-scatter and all-gather
with one rank per node) and the network plug-in's own ``latencyInter`` (0 for a plain plug-in).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..peak import ring_factor
from ..validate import one_of, real, whole

__all__ = ["DP_LATENCIES", "KINDS", "NCCL_COMMIT", "NCCL_SIMPLE", "NcclLatencies", "nccl_choice", "nccl_collective_time",
           "tree_correction"]

NCCL_COMMIT = "5067397c2676d5aed50042fc39e5c8ee96eb0027"
"""NVIDIA/nccl commit (NCCL 2.30.7, 2026-06-11) whose ``src/graph/tuning.cc`` the constants are read from."""

KINDS = ("all_reduce", "reduce_scatter", "all_gather")
DP_LATENCIES = ("rings_trees",)
"""The values of ``predict_run``'s ``dp_latency`` besides ``None`` (today's ``α`` per log-depth step)."""
PROTOCOLS = ("LL", "LL128", "Simple")


@dataclass(frozen=True, slots=True)
class NcclLatencies:
    """NCCL's latency constants, µs, per protocol (LL, LL128, Simple): ``ncclTunerConstantsDefaults``.

    ``base_*``: ``baseLatencies`` of the tree and the ring; ``nvlink_*``: ``hwLatencies[NVLINK]``, a step
    inside a node; ``net_*``: ``hwLatencies[NET]``, a step between nodes; ``plateau``: the factor a
    Simple ring's latency takes across nodes (``ncclTopoGetAlgoTime``, compute capability 8.0 and up).
    Every value at least 0."""

    base_tree: tuple[float, float, float] = (6.8, 14.0, 8.4)
    base_ring: tuple[float, float, float] = (6.6, 14.0, 8.4)
    nvlink_tree: tuple[float, float, float] = (0.6, 1.25, 4.0)
    nvlink_ring: tuple[float, float, float] = (0.6, 1.9, 3.4)
    net_tree: tuple[float, float, float] = (5.0, 8.5, 14.0)
    net_ring: tuple[float, float, float] = (2.7, 4.0, 14.0)
    plateau: float = 1.4

    def __post_init__(self) -> None:
        for name in ("base_tree", "base_ring", "nvlink_tree", "nvlink_ring", "net_tree", "net_ring"):
            values = getattr(self, name)
            if len(values) != 3:
                raise ValueError(f"{name} must hold 3 latencies (LL, LL128, Simple) in µs, got {values!r}")
            for x in values:
                real(name, x, unit="µs")
        real("plateau", self.plateau, low=1.0)


NCCL_SIMPLE = NcclLatencies()
"""NCCL 2.30.7's defaults."""

_TREE_CORRECTION = (
    (1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0),
    (1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0),
    (.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9),
)
"""``treeCorrectionFactor``: a tree all-reduce's bandwidth factor at log₂(bytes/64) = 0…22 (LL, LL128, Simple)."""


def tree_correction(protocol: int, nbytes: float) -> float:
    """NCCL's tree bandwidth correction for one all-reduce of ``nbytes``, read between its points.

    NCCL takes the point at ⌊log₂(bytes/64)⌋ (0…22; 1 outside). Here the factor runs linearly in
    log₂(bytes/64) from one point to the next (and from the last to 1 at 512 MB), so a larger message
    never takes less time (its change per doubling, at most 0.2, stays below the factor, at least 0.4);
    at each point it is NCCL's value."""
    if nbytes < 64:
        return 1.0
    t = math.log2(nbytes / 64)
    if t >= 23:
        return 1.0
    points = (*_TREE_CORRECTION[protocol], 1.0)
    i = int(t)
    return points[i] + (t - i) * (points[i + 1] - points[i])


def _ring(kind: str, n: int, nodes: int, p: int, nbytes: float, lat: NcclLatencies) -> tuple[float, float]:
    """(latency in µs, bytes moved over the bus rate's share) of one ring call."""
    steps = 2 * (n - 1) if kind == "all_reduce" else n - 1
    net_steps = 0 if nodes == 1 else (2 * (nodes - 1) if kind == "all_reduce" else nodes - 1)
    hw_net = (lat.net_tree if n == nodes else lat.net_ring)[p]  # one rank per node: the tree's network step
    us = lat.base_ring[p] + (steps - net_steps) * lat.nvlink_ring[p] + net_steps * hw_net
    if nodes > 1 and p == 2 and kind == "all_reduce":
        us *= lat.plateau
    share = ring_factor(n) if kind == "all_reduce" else (n - 1) / n
    return us, share * nbytes / (0.5, 0.92, 1.0)[p]


def _tree(n: int, nodes: int, p: int, nbytes: float, lat: NcclLatencies) -> tuple[float, float]:
    """(latency in µs, bytes moved over the bus rate's share) of one tree all-reduce."""
    per_node = n // nodes
    us = lat.base_tree[p] + 2 * ((per_node - 1) * lat.nvlink_tree[p]
                                 + (nodes.bit_length() - 1) * lat.net_tree[p])
    bus = 0.92 * (1 / 3.8, 120 / 128 if nodes > 1 else 7 / 9, 1.0)[p] * tree_correction(p, nbytes)
    return us, 2.0 * nbytes / bus


def nccl_choice(nbytes: float, ranks: int, rate: float, *, kind: str = "all_reduce", ranks_per_node: int = 1,
                latencies: NcclLatencies = NCCL_SIMPLE) -> tuple[float, str, str]:
    """(time in s, algorithm, protocol) of NCCL's fastest way to run one collective of ``nbytes`` per rank.

    ``ranks`` ≥ 1 in nodes of ``ranks_per_node`` ≥ 1 (at most ``ranks``); ``rate`` > 0 bytes/s, the bus
    bandwidth a ring reaches (``inf``: no bandwidth term); ``kind`` one of ``KINDS``. One rank: (0, "none",
    "none"). The module's docstring gives the formulas."""
    n = whole("ranks", ranks, low=1)
    k = whole("ranks_per_node", ranks_per_node, low=1, high=n)
    size = real("nbytes", nbytes, unit="bytes")
    r = real("rate", rate, low_open=True, allow_inf=True, unit="bytes/s")
    one_of("kind", kind, KINDS)
    if n == 1:
        return 0.0, "none", "none"
    nodes = -(-n // k)
    options = []
    for p, name in enumerate(PROTOCOLS):
        ways = [("ring", _ring(kind, n, nodes, p, size, latencies))]
        if kind == "all_reduce":
            ways.append(("tree", _tree(n, nodes, p, size, latencies)))
        for algorithm, (us, moved) in ways:
            options.append((us * 1e-6 + (0.0 if math.isinf(r) or moved == 0.0 else moved / r), algorithm, name))
    return min(options)


def nccl_collective_time(nbytes: float, ranks: int, rate: float, *, kind: str = "all_reduce",
                         ranks_per_node: int = 1, calls: int = 1,
                         latencies: NcclLatencies = NCCL_SIMPLE) -> float:
    """Time of ``nbytes`` per rank sent as ``calls`` ≥ 1 equal collectives (buckets), each run NCCL's
    fastest way (``nccl_choice``), s: ``calls · nccl_choice(nbytes/calls, …)``. Monotone in ``nbytes``
    and ``ranks``; with every latency 0 it equals a ring's bandwidth term, ``collective_time(…,
    latency_s=0)``."""
    c = whole("calls", calls, low=1)
    return c * nccl_choice(nbytes / c, ranks, rate, kind=kind, ranks_per_node=ranks_per_node,
                           latencies=latencies)[0]
