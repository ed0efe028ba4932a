"""Scale-up domains under faults: fragmentation, fault rates, the K-hop ring's waste bound, the link budget.

A scale-up domain (a *high-bandwidth domain*, HBD: an NVLink fabric, a ring of
optical links) is a set of GPUs joined by links of several Tbps each.
A tensor-parallel (TP) group of ``T`` GPUs must sit inside one. This module
holds the small closed-form models of chapter 5:

* ``fragmentation``: the healthy GPUs of one domain that no TP group can use,
  ``w = ((H - F) mod T) / H``;
* ``convert_node_rate``, ``gpu_fault_probability``: a node's fault rate turned
  into a per-GPU probability and into the rate of a node of another size,
  assuming independent GPU faults;
* ``waste_bound``: the InfiniteHBD paper's bound on the K-hop ring's extra
  waste, ``E_WR <= 2 (N_t - R) P_s^K``, beside the book's corrected worst case
  ``(N_t / R) (1 - P_s) P_s^K`` (the exact expectation is
  ``ring_builder.ring_expectation``);
* ``tor_wiring``: which traffic leaves a ToR when the ring links nodes in
  deployment order or along parallel sub-lines (reusing chapter 3's
  ``placement`` for the counting);
* ``link_budget``: what an optical switch inside a transceiver costs in light,
  power and energy per bit;
* ``synthetic_fault_trace``: a seeded stand-in for the paper's 348-day trace
  with its stated mean, median and 99th percentile.

The ring simulation itself is in ``ring_builder``.

Source: source 004, the research digest of Shou et al., "InfiniteHBD"
(SIGCOMM 2025), sections 1, 2, 3 and 5, its Appendix A (fault trace) and
Appendix C (waste bound).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from ..validate import flag, one_of, probability, real, whole

__all__ = [
    "Fragmentation", "LinkBudget", "SyntheticTrace", "TorWiring", "WasteBound",
    "alignment_fault_radius", "convert_node_rate", "db_to_fraction", "fragmentation",
    "gpu_fault_probability", "link_budget", "synthetic_fault_trace", "tor_wiring", "waste_bound",
]


# -- fragmentation ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Fragmentation:
    """Outputs of ``fragmentation``: one domain of ``domain_gpus`` GPUs with ``failed_gpus`` failed."""

    domain_gpus: int
    """GPUs in the domain, H."""
    failed_gpus: int
    """Failed GPUs in it, F."""
    tp: int
    """GPUs per tensor-parallel group, T."""
    healthy_gpus: int
    """H - F."""
    groups: int
    """Whole TP groups the healthy GPUs form, floor((H - F) / T)."""
    idle_gpus: int
    """Healthy GPUs no group can use, (H - F) mod T."""
    waste_ratio: float
    """Idle healthy GPUs as a share of the domain, ((H - F) mod T) / H."""


def fragmentation(domain_gpus: int, failed_gpus: int, tp: int) -> Fragmentation:
    """Fragmentation waste of one scale-up domain::

        idle_gpus   = (H - F) mod T                 [GPUs]
        waste_ratio = ((H - F) mod T) / H           [share of the domain]

    A TP group needs ``T`` healthy GPUs inside one domain, so the remainder of
    the healthy GPUs is idle. A TP size larger than the domain leaves every
    healthy GPU idle (the formula gives ``H - F``). Failed GPUs are not waste
    here: they are lost to the fault, not to fragmentation.

    Raises ``ValueError`` naming the argument for ``domain_gpus < 1``,
    ``failed_gpus`` outside ``0..domain_gpus`` or ``tp < 1``.

    Source: source 004, section 2 (the paper's section 2.1): two 32-GPU domains
    with one failure each leave 30 GPUs idle at TP-16, one 64-GPU domain with
    two failures leaves 14; NVL-36 and NVL-72 hold back 1/9 at TP-16 and TP-32.
    """
    h = whole("domain_gpus", domain_gpus, low=1, unit="GPUs")
    f = whole("failed_gpus", failed_gpus, low=0, high=h, unit="GPUs")
    t = whole("tp", tp, low=1, unit="GPUs")
    healthy = h - f
    groups, idle = divmod(healthy, t)
    return Fragmentation(h, f, t, healthy, groups, idle, idle / h)


# -- fault rates --------------------------------------------------------------------------------

def convert_node_rate(rate: float, from_gpus: int = 8, to_gpus: int = 4) -> float:
    """The fault rate of a node of ``to_gpus`` GPUs, from that of a node of ``from_gpus``::

        P_to = 1 - (1 - P_from) ** (to_gpus / from_gpus)

    A node is faulty when any of its GPUs is, and GPU faults are taken as
    independent, so ``1 - P`` is the chance that all GPUs of the node are
    healthy. For 8-GPU to 4-GPU nodes this is the paper's
    ``P_s = 1 - sqrt(1 - P_8)``.

    Source: source 004, section 2, and the paper's Appendix A (2.33% -> 1.17%;
    7.22% -> 3.67%, which the exact rule gives as 3.68%).
    """
    p = probability("rate", rate)
    a = whole("from_gpus", from_gpus, low=1, unit="GPUs")
    b = whole("to_gpus", to_gpus, low=1, unit="GPUs")
    if a == b:
        return p
    return 1.0 - (1.0 - p) ** (b / a)


def gpu_fault_probability(node_rate: float, gpus_per_node: int = 8) -> float:
    """Per-GPU fault probability ``p`` with ``1 - (1 - p) ** R = node_rate`` (independent faults).

    Raises ``ValueError`` naming the argument for a rate outside [0, 1] or ``gpus_per_node < 1``.

    Source: source 004, section 2: 2.33% of 8-GPU nodes -> about 0.29% per GPU.
    """
    p = probability("node_rate", node_rate)
    r = whole("gpus_per_node", gpus_per_node, low=1, unit="GPUs")
    return convert_node_rate(p, r, 1)


# -- the K-hop ring's waste bound ----------------------------------------------------------------

@dataclass(frozen=True)
class WasteBound:
    """Outputs of ``waste_bound``."""

    tp: int
    """GPUs per TP group, N_t."""
    gpus_per_node: int
    """R."""
    hops: int
    """K: how far each node's links reach along the line (its neighbours +-1 through +-K)."""
    node_rate: float
    """P_s, the probability that a node is faulty."""
    cut_rate: float
    """The paper's 2 P_s^K: the chance that a middle node begins or ends a run of K failed nodes.
    Every run has two ends, so this counts each cut twice."""
    gpus_lost_per_cut: int
    """The paper's charge per cut, R (N_t - R) GPUs. A real cut adds either 0 or N_t idle GPUs."""
    bound: float
    """E_WR <= 2 (N_t - R) P_s^K, as a share of all GPUs (may exceed 1 for large P_s)."""
    worst_case: float
    """The book's corrected worst case, (N_t / R) (1 - P_s) P_s^K: each cut counted once and charged
    N_t GPUs, the most one cut can add (0 when a group is one node). Still an upper bound on the
    expected cut waste."""


def _tp_and_node(tp: int, gpus_per_node: int) -> tuple[int, int]:
    r = whole("gpus_per_node", gpus_per_node, low=1, unit="GPUs")
    t = whole("tp", tp, low=1, unit="GPUs")
    if t % r:
        raise ValueError(f"tp must be a multiple of gpus_per_node ({r}), got tp={t}: "
                         f"a TP group on the ring is a whole number of nodes")
    return t, r


def waste_bound(tp: int, gpus_per_node: int, node_rate: float, hops: int) -> WasteBound:
    """The paper's bound on the K-hop ring's expected waste from cuts, and a corrected worst case::

        bound      = 2 (N_t - R) P_s^K                    [share of all GPUs]
        worst_case = (N_t / R) (1 - P_s) P_s^K             [share of all GPUs]

    A run of ``K`` or more failed nodes with a healthy node on each side cuts
    the line. The paper's argument: a middle node begins or ends such a run
    with probability about ``2 P_s^K``, and a cut wastes at most ``R (N_t - R)``
    GPUs, which spread over the node's ``R`` GPUs gives ``N_t - R`` each. Both
    steps are loose. The ``2`` counts each run at both of its ends, and a cut
    that splits a piece of ``h`` healthy nodes into ``a + b`` changes the idle
    remainder from ``h mod g`` to ``a mod g + b mod g`` (``g = N_t / R``), which
    is the same or exactly ``g`` nodes, ``N_t`` GPUs, more. A run starts after a
    healthy node with probability ``(1 - P_s) P_s^K``, so charging each cut
    ``N_t`` GPUs gives ``worst_case``, about ``2 R (N_t - R) / N_t`` times below
    the paper's bound (12 at R = 8 and TP-32, 7 at R = 4) and still above the exact
    expectation. Each extra hop multiplies both by ``P_s``. The bound is not a
    probability and can exceed 1 when ``P_s`` is large (then it says nothing).

    Raises ``ValueError`` naming the argument for ``hops`` outside ``1..R`` (the
    source allows ``K <= R``), ``tp`` not a positive multiple of
    ``gpus_per_node``, or ``node_rate`` outside [0, 1].

    Source: source 004, section 3.2 (the paper's Appendix C and Table 7: at the
    p99 rate and TP-32, 7.54% / 0.28% / 0.01% for R = 4 and K = 2, 3, 4; 25.0% /
    1.81% / 0.13% for R = 8). ``worst_case`` is the book's.
    """
    t, r = _tp_and_node(tp, gpus_per_node)
    p = probability("node_rate", node_rate)
    k = whole("hops", hops, low=1, high=r)
    cut_rate = 2.0 * p ** k
    worst = (t // r) * (1.0 - p) * p ** k if t > r else 0.0  # one-node groups leave no remainder
    return WasteBound(t, r, k, p, cut_rate, r * (t - r), (t - r) * cut_rate, worst)


# -- placing TP groups so the datacenter network stays quiet -----------------------------------

@dataclass(frozen=True)
class TorWiring:
    """Outputs of ``tor_wiring``: where a job's TP and DP traffic goes for one wiring of the ring."""

    wiring: str
    """``in-order`` (ring follows deployment order) or ``sub-line`` (main links to N(n +- r))."""
    tors: int
    """ToR switches, each with ``nodes_per_tor`` nodes."""
    nodes_per_tor: int
    """r, nodes under one ToR."""
    group_nodes: int
    """Nodes per TP group, N_t / R."""
    tp_groups: int
    """TP groups cut along the ring."""
    tp_groups_across_tors: int
    """TP groups whose nodes sit under more than one ToR (fine: TP rides the HBD, not the DCN)."""
    dp_groups: int
    """DP groups: one per position in a TP group, its members one per TP group."""
    dp_groups_across_tors: int
    """DP groups whose members sit under more than one ToR: their all-reduce climbs the DCN's upper tiers."""


MAX_NODES = 1 << 20
"""The largest line ``tor_wiring`` lays out (a million nodes, as chapter 3's ``MAX_GPUS``)."""


def tor_wiring(tors: int, nodes_per_tor: int, group_nodes: int, wiring: str = "sub-line") -> TorWiring:
    """Count which traffic crosses ToRs when TP groups are cut in order along the ring.

    Nodes are numbered in deployment order, ``n = tor × r + slot``. The ring
    visits them

    * ``in-order``: ``N1, N2, N3 ...``, so a TP group fills a ToR and the DP
      peers (the same position in every group) sit under different ToRs;
    * ``sub-line``: main links to ``N(n +- r)`` (the same slot under the next
      ToR), rows joined end to end, so a TP group runs across ToRs. Its DP
      peers share a ToR only when a group spans whole rows (``group_nodes`` a
      multiple of ``tors``); a group of half a row spreads them over two ToRs.

    One "rank" here is one node, and the job uses every node (no failures).
    Where a TP group fits under one ToR (``group_nodes <= nodes_per_tor``) the
    counts equal chapter 3's ``placement`` with ToRs as the domains: ``in-order``
    numbers ranks TP-innermost, ``sub-line`` DP-innermost (the tests check it).

    Raises ``ValueError`` naming the argument when a count is below 1, when
    there are more than ``MAX_NODES`` nodes, when ``group_nodes`` does not divide
    the ``tors × nodes_per_tor`` nodes, or for an unknown ``wiring``.

    Source: source 004, section 3.3 (the paper's section 4.3, Figures 6-7 and
    Appendix D).
    """
    t = whole("tors", tors, low=1)
    r = whole("nodes_per_tor", nodes_per_tor, low=1)
    g = whole("group_nodes", group_nodes, low=1)
    wiring = one_of("wiring", wiring, ("in-order", "sub-line"))
    nodes = t * r
    if nodes > MAX_NODES:
        raise ValueError(f"tors × nodes_per_tor must be a whole number in 1..{MAX_NODES:,} nodes, "
                         f"got {t:,} × {r:,} = {nodes:,}")
    if nodes % g:
        raise ValueError(f"group_nodes must divide the {nodes} nodes (tors × nodes_per_tor), got {g}")
    groups = nodes // g
    if wiring == "in-order":
        line = np.arange(nodes)
    else:  # line position p visits slot p // tors under ToR p % tors
        pos = np.arange(nodes)
        line = (pos % t) * r + pos // t
    tor = (line // r).reshape(groups, g)  # [TP group, position in the group]
    tp_across = int((tor.min(axis=1) != tor.max(axis=1)).sum())
    dp_across = int((tor.min(axis=0) != tor.max(axis=0)).sum())
    return TorWiring(wiring, t, r, g, groups, tp_across, g, dp_across)


def alignment_fault_radius(gpus_per_node: int, nodes_per_tor: int, aligned: bool) -> int:
    """GPUs one node failure takes out of service: ``R``, or ``R × r`` when groups are aligned.

    With TP groups aligned across parallel sub-lines (so that CP stays under
    one ToR), a failed node removes its whole row of ``r`` nodes.

    Source: source 004, section 3.3.
    """
    r_gpus = whole("gpus_per_node", gpus_per_node, low=1, unit="GPUs")
    r = whole("nodes_per_tor", nodes_per_tor, low=1)
    return r_gpus * r if flag("aligned", aligned) else r_gpus


# -- the link budget ---------------------------------------------------------------------------

def db_to_fraction(loss_db: float) -> float:
    """Share of optical power left after a loss of ``loss_db`` decibels, ``10 ** (-dB / 10)``."""
    return 10.0 ** (-real("loss_db", loss_db, unit="dB") / 10.0)


@dataclass(frozen=True)
class LinkBudget:
    """Outputs of ``link_budget``."""

    light_left: float
    """Share of the light that leaves the switch core, 10^(-loss/10)."""
    switch_power_share: float
    """Switch core power / module power."""
    energy_pj_per_bit: float
    """Module power / line rate, pJ/bit."""
    speedup: float
    """Reference switching time / this switch's time (how many times faster)."""


def link_budget(loss_db: float = 3.3, switch_w: float = 3.2, module_w: float = 12.0, rate_gbps: float = 800.0,
                switch_s: float = 80e-6, reference_s: float = 1e-3) -> LinkBudget:
    """What a switch inside a transceiver costs one link::

        light_left         = 10 ** (-loss_db / 10)
        switch_power_share = switch_w / module_w
        energy_pj_per_bit  = module_w / (rate_gbps × 1e9) × 1e12      [pJ/bit]
        speedup            = reference_s / switch_s

    Raises ``ValueError`` naming the argument for a negative loss, a switch
    drawing more than the module, or a non-positive power, rate or time.

    Source: source 004, section 5 (3.3 dB -> 0.47, 4.0 dB -> 0.40, 3.2 W of
    12 W -> 27%, 12 W at 800 Gbps -> 15 pJ/bit, 1 ms / 80 us -> 12.5x).
    """
    loss = real("loss_db", loss_db, unit="dB")
    module = real("module_w", module_w, low_open=True, unit="W")
    switch = real("switch_w", switch_w, high=module, unit="W")
    rate = real("rate_gbps", rate_gbps, low_open=True, unit="Gbps")
    t = real("switch_s", switch_s, low_open=True, unit="s")
    ref = real("reference_s", reference_s, low_open=True, unit="s")
    return LinkBudget(db_to_fraction(loss), switch / module, module / (rate * 1e9) * 1e12, ref / t)


# -- a synthetic fault trace -------------------------------------------------------------------

_NORMAL = NormalDist()
_Z99 = _NORMAL.inv_cdf(0.99)

@dataclass(frozen=True)
class SyntheticTrace:
    """Outputs of ``synthetic_fault_trace``: a made-up series, not the paper's data."""

    days: np.ndarray
    """Time of each sample, days."""
    faulty_pct: np.ndarray
    """Share of nodes faulty at each sample, %."""
    mean_pct: float
    median_pct: float
    p99_pct: float


def _quantile_curve(z: np.ndarray, median: float, p99: float, gamma: float) -> np.ndarray:
    """A monotone quantile curve in normal scores ``z``: through the median at z = 0 and the p99 at
    z = z(0.99), log-normal below the median, its upper half shaped by ``gamma`` (1: log-normal)."""
    if not gamma > 0:
        raise ValueError(f"gamma must be a number in (0, inf), got {gamma!r}")
    z99 = _Z99
    s = math.log(p99 / median) / z99
    upper = (np.abs(z) / z99) ** gamma * z99
    return median * np.exp(s * np.where(z > 0, upper, z))


GAMMA_RANGE = (0.05, 3.0)
"""Where the upper-half shape of the quantile curve is searched."""


def _shape_for_mean(z: np.ndarray, median: float, p99: float, mean: float) -> float:
    """The shape ``gamma`` whose curve through ``median`` and ``p99`` has mean ``mean``.

    The mean falls as gamma grows from the bottom of ``GAMMA_RANGE`` (the upper half
    flattens towards the median) until the top percent, which grows with gamma, wins;
    only that falling stretch is searched, so the answer is unique. Bisection halves
    until the bracket is two neighbouring doubles, or hits the mean exactly.
    """
    def mean_at(gamma: float) -> float:
        return float(_quantile_curve(z, median, p99, gamma).mean())

    lo, hi = GAMMA_RANGE
    a, b = lo, hi  # golden-section search for the lowest mean
    ratio = (math.sqrt(5.0) - 1.0) / 2.0
    # 100 steps close the bracket to neighbouring doubles anywhere in GAMMA_RANGE (about 85 are needed
    # when the lowest mean sits at 0.05, where the doubles are densest); more steps change nothing
    for _ in range(100):
        c, d = b - ratio * (b - a), a + ratio * (b - a)
        if mean_at(c) < mean_at(d):
            b = d
        else:
            a = c
    bottom = 0.5 * (a + b)
    highest, lowest = mean_at(lo), mean_at(bottom)
    if not lowest <= mean <= highest:
        raise ValueError(f"mean_pct must be a number in [{lowest:.4g}, {highest:.4g}] % for a median of "
                         f"{median:g} % and a p99 of {p99:g} % (no curve of this family reaches another "
                         f"mean), got {mean:g}")
    hi = bottom
    while True:
        gamma = 0.5 * (lo + hi)
        if gamma in (lo, hi):
            return gamma
        got = mean_at(gamma)
        if got == mean:
            return gamma
        if got > mean:
            lo = gamma
        else:
            hi = gamma


def synthetic_fault_trace(mean_pct: float = 2.33, median_pct: float = 1.67, p99_pct: float = 7.22,
                          days: int = 348, samples_per_day: int = 24, weeks_memory: float = 2.0,
                          seed: int = 4) -> SyntheticTrace:
    """A seeded series of the share of faulty nodes with a given mean, median and 99th percentile.

    It stands in for the paper's trace (not available here) in a figure. A
    smooth Gaussian process (an AR(1) with a memory of ``weeks_memory`` weeks,
    so that bad periods last for weeks) gives each sample a rank; the ranks are
    mapped through a quantile curve that passes exactly through the median and
    the 99th percentile, and whose upper-half shape is tuned by bisection until
    the mean matches. Nothing is learned from the real trace but its three
    summary numbers.

    Raises ``ValueError`` unless ``0 < median < mean`` and ``median < p99 < 100``,
    for non-positive sizes, and for a mean the curve cannot reach with that
    median and p99 (the message gives the reachable range).
    """
    mean = real("mean_pct", mean_pct, low_open=True, high=100, unit="%")
    med = real("median_pct", median_pct, low_open=True, high=mean, high_open=True, unit="%")
    p99 = real("p99_pct", p99_pct, low=med, low_open=True, high=100, high_open=True, unit="%")
    seed = whole("seed", seed, low=0)
    d = whole("days", days, low=1, unit="days")
    k = whole("samples_per_day", samples_per_day, low=1)
    # at most a million weeks: longer memories make every sample equal (φ rounds to 1) and the ranks ties
    memory = real("weeks_memory", weeks_memory, low_open=True, high=1e6, unit="weeks")
    n = d * k
    rng = np.random.default_rng(seed)
    phi = math.exp(-1.0 / (memory * 7 * k))
    noise = rng.standard_normal(n)
    x = np.empty(n)
    x[0] = noise[0]
    for i in range(1, n):  # one pass over the series; runs once per figure
        x[i] = phi * x[i - 1] + math.sqrt(1 - phi * phi) * noise[i]
    scores = np.array([_NORMAL.inv_cdf((i + 0.5) / n) for i in range(n)])
    z = np.empty(n)
    z[np.argsort(x, kind="stable")] = scores  # each sample's normal score, by its rank in the series
    gamma = _shape_for_mean(z, med, p99, mean)
    values = _quantile_curve(z, med, p99, gamma)
    return SyntheticTrace(np.arange(n) / k, values, float(values.mean()), float(np.median(values)),
                          float(np.quantile(values, 0.99)))
