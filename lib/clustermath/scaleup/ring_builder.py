"""The ring builder: a K-hop ring of 2,880 GPUs under random node faults, against static rings and switch domains.

A line of ``gpus / R`` nodes of ``R`` GPUs each. Every node fails
independently with probability ``P_s``. The K-hop ring links each node to the
nodes at +-1 ... +-K (``1 <= K <= R``), so a run of fewer than ``K`` failed nodes
is bridged by a backup link and a run of ``K`` or more with healthy nodes on
both sides *cuts* the line (a run at either end of the line cuts nothing: it
only shortens the line). The healthy nodes between cuts form one *piece*; the
orchestrator cuts each piece, in order, into TP groups of ``N_t / R`` nodes,
and the remainder of each piece is idle. Two baselines see the same faults:

* **static TP rings**: the line is cabled once into rings of ``N_t / R``
  consecutive nodes; a ring with any failed node is lost, healthy GPUs and all;
* **switch domains** of ``S`` GPUs (72, an NVL-72 rack): each wastes
  ``(S - failed GPUs) mod N_t`` of its healthy GPUs.

Waste is always *healthy GPUs that no TP group uses*, as a share of all GPUs.
Everything is vectorised over draws and nodes (no Python loop over either);
``tests/test_scaleup_ring.py`` holds a plain loop implementation that must
agree draw for draw. ``ring_expectation`` gives the exact expectation of every
averaged count (a Markov chain along the line), so a simulated mean can be set
beside the value it estimates; ``RingBuilder.ci95`` gives its 95% interval.

What the model leaves out: the orchestrator's placement rules (TP groups kept
inside one aggregation domain of a Fat-Tree, groups aligned across parallel
sub-lines), which can only strand more GPUs; faults that are not independent;
and any repair during a draw. Each draw is one moment of the line.

Source: source 004, Panel 1 ("Ring builder") and section 3.2; the 2,880-GPU
line is the paper's simulated cluster size. The model is the digest's, not the
paper's simulator.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .domains import convert_node_rate, waste_bound
from ..validate import probability, whole

__all__ = ["RingBuilder", "RingExpectation", "RingLayout", "ROLE_NAMES", "draw_failures", "ring_builder",
           "ring_draws", "ring_expectation", "ring_layout"]

DEFAULT_GPUS = 2_880
"""GPUs in the simulated line (the paper's simulated cluster size)."""
DEFAULT_DRAWS = 200
"""Seeded draws averaged per update."""


def draw_failures(node_rate: float, nodes: int, draws: int, seed: int = 0) -> np.ndarray:
    """Failed nodes, a boolean array ``[draw, node]``: ``rng.random((draws, nodes), float32) < node_rate``.

    The one place random numbers are drawn, so the vectorised model and the
    loop reference in the tests see the same faults for the same seed.
    """
    p = probability("node_rate", node_rate)
    n = whole("nodes", nodes, low=0)
    d = whole("draws", draws, low=1)
    seed = whole("seed", seed, low=0)
    return np.random.default_rng(seed).random((d, n), dtype=np.float32) < p


@dataclass(frozen=True)
class RingDraws:
    """Per-draw counts of ``ring_draws`` (integer arrays of length ``draws``)."""

    faulty_nodes: np.ndarray
    cuts: np.ndarray
    """Runs of ``hops`` or more consecutive failed nodes with a healthy node on each side."""
    ring_waste_gpus: np.ndarray
    """Healthy GPUs in the remainders of the K-hop ring's pieces."""
    static_waste_gpus: np.ndarray
    """Healthy GPUs in static rings that hold a failed node (plus any nodes past the last whole ring)."""
    switch_waste_gpus: np.ndarray
    """Healthy GPUs the switch domains cannot group, sum of (S - failed GPUs) mod N_t."""
    line_remainder_gpus: np.ndarray
    """What an uncut line would leave idle, R × (healthy nodes mod N_t / R): the waste no K removes."""


def _check_shape(gpus_per_node: int, tp: int, hops: int, gpus: int, switch_gpus: int) -> tuple[int, ...]:
    r = whole("gpus_per_node", gpus_per_node, low=1, unit="GPUs")
    t = whole("tp", tp, low=1, unit="GPUs")
    if t % r:
        raise ValueError(f"tp must be a multiple of gpus_per_node ({r}), got tp={t}: "
                         f"a TP group on the ring is a whole number of nodes")
    k = whole("hops", hops, low=1, high=r)
    n = whole("gpus", gpus, low=0, unit="GPUs")
    if n % r:
        raise ValueError(f"gpus must be a multiple of gpus_per_node ({r}), got gpus={n}")
    s = whole("switch_gpus", switch_gpus, low=1, unit="GPUs")
    if s % r or n % s:
        raise ValueError(f"switch_gpus must be a multiple of gpus_per_node ({r}) and divide gpus ({n}), "
                         f"got switch_gpus={s}")
    return r, t, k, n, s


def ring_draws(failed: np.ndarray, gpus_per_node: int, tp: int, hops: int, switch_gpus: int = 72) -> RingDraws:
    """The counts of every draw for a given fault array ``failed[draw, node]`` (vectorised).

    Runs of failed nodes are found from the edges of the padded boolean rows;
    the healthy nodes before each long run (a cut) mark piece boundaries; the
    pieces' sizes are the differences of consecutive boundaries in a row.
    """
    failed = np.asarray(failed, dtype=bool)
    if failed.ndim != 2:
        raise ValueError(f"failed must be a 2-D array [draw, node], got shape {failed.shape}")
    draws, nodes = failed.shape
    r, t, k, _, s = _check_shape(gpus_per_node, tp, hops, nodes * gpus_per_node, switch_gpus)
    g = t // r
    rows = np.arange(draws)

    # Runs of failed nodes: +1 where a run starts, -1 one past its end, in rows padded with a healthy node.
    padded = np.zeros((draws, nodes + 2), dtype=np.int8)
    padded[:, 1:-1] = failed
    edges = np.diff(padded, axis=1).ravel()  # row stride nodes + 1
    starts = np.flatnonzero(edges == 1)
    lengths = np.flatnonzero(edges == -1) - starts
    run_row = starts // (nodes + 1)
    run_pos = starts % (nodes + 1)  # first failed node of the run
    faulty = np.bincount(run_row, weights=lengths, minlength=draws).astype(np.int64)
    long = lengths >= k
    inside = (run_pos > 0) & (run_pos + lengths < nodes)  # a run at a line end cuts nothing
    cuts = np.bincount(run_row[long & inside], minlength=draws)

    # Healthy nodes before each run = its position - failed nodes of earlier runs in the same row.
    before = np.cumsum(lengths) - lengths
    before -= before[np.searchsorted(run_row, run_row)]  # restart the count at each row's first run
    cut_row, cut_pos = run_row[long], run_pos[long]
    cut_at = cut_pos - before[long]
    # Piece boundaries of every row: 0, the healthy count before each cut, the row's healthy total.
    boundary_row = np.concatenate([rows, cut_row, rows])
    boundary_val = np.concatenate([np.zeros(draws, dtype=np.int64), cut_at, nodes - faulty])
    boundary_key = np.concatenate([np.full(draws, -1), cut_pos, np.full(draws, nodes + 1)])
    order = np.lexsort((boundary_key, boundary_row))
    b_row, b_val = boundary_row[order], boundary_val[order]
    same = b_row[1:] == b_row[:-1]
    pieces = (b_val[1:] - b_val[:-1])[same]
    ring_waste = np.bincount(b_row[1:][same], weights=pieces % g, minlength=draws).astype(np.int64) * r

    # Failed nodes as (row, position), counted per static ring and per switch domain.
    where = np.flatnonzero(failed.ravel())
    f_row, f_pos = where // max(nodes, 1), where % max(nodes, 1)
    whole_rings = nodes // g
    in_body = f_pos < whole_rings * g
    per_ring = np.bincount(f_row[in_body] * whole_rings + f_pos[in_body] // g,
                           minlength=draws * whole_rings).reshape(draws, whole_rings)
    tail_failed = np.bincount(f_row[~in_body], minlength=draws)
    static_waste = (((g - per_ring) * (per_ring > 0)).sum(axis=1) + nodes - whole_rings * g - tail_failed) * r

    per = s // r
    domains = nodes // per
    per_domain = np.bincount(f_row * domains + f_pos // per, minlength=draws * domains).reshape(draws, domains)
    switch_waste = ((s - per_domain * r) % t).sum(axis=1)

    return RingDraws(faulty, cuts, ring_waste, static_waste, switch_waste, ((nodes - faulty) % g) * r)


# -- the exact expectation of every averaged count -------------------------------------------

@dataclass(frozen=True)
class RingExpectation:
    """Outputs of ``ring_expectation``: exact expected values for one line (shares of all GPUs)."""

    faulty_nodes: float
    """Failed nodes, n P_s."""
    ring_cuts: float
    """Runs of K or more failed nodes with a healthy node on each side."""
    ring_waste: float
    """K-hop ring: idle healthy GPUs / all GPUs."""
    line_remainder: float
    """What an uncut line leaves idle, R × E[healthy nodes mod N_t / R] / all GPUs."""
    cut_waste: float
    """``ring_waste - line_remainder``: the idle GPUs the cuts add."""
    cut_waste_worst: float
    """N_t × ``ring_cuts`` / all GPUs: every cut charged the most it can add, N_t GPUs."""
    static_waste: float
    """Static TP rings: idle healthy GPUs / all GPUs."""
    switch_waste: float
    """Switch domains: idle healthy GPUs / all GPUs."""
    usable_gpus: float
    """GPUs in TP groups on the K-hop ring."""


def _chain_step(p: float, g: int, k: int) -> np.ndarray:
    """One node of the walk in ``_remainder_chain``: its transition matrix, ``(g (K + 1) + 1)`` square.

    State ``j g + m`` is (healthy nodes of the current piece mod g = m, current
    run of failed nodes = j, capped at K): the walk starts in state 0, (0, 0),
    and state 1 is already a different piece, (1, 0). The last state
    accumulates the expected idle nodes. Every entry is written once: a healthy
    node moves to ((m + 1) mod g, 0), a failure to (m, j + 1), the failure that
    makes the run reach K to (0, K) and adds ``p × m`` to the accumulator, and
    a failure after that stays in (0, K).
    """
    width = k + 1
    states = g * width
    step = np.zeros((states + 1, states + 1))
    for m in range(g):
        for j in range(width):
            s = j * g + m
            step[s, (m + 1) % g] = 1.0 - p  # a healthy node: the piece grows, the run ends
            if j == k:  # the run already cut the line: more failures change nothing
                step[s, s] = p
            elif j + 1 == k:  # this failure cuts: close the piece (m idle nodes), start a new one
                step[s, k * g] = p
                step[s, states] = p * m
            else:
                step[s, s + g] = p
    step[states, states] = 1.0
    return step


def _remainder_chain(p: float, g: int, k: int, n: int) -> tuple[float, float]:
    """E[sum of the pieces' remainders] and E[healthy nodes mod g], in nodes, for a line of ``n``.

    The walk along the line is a Markov chain on (healthy nodes of the current
    piece mod g, length of the current run of failures, capped at K), one step
    per node (``_chain_step``). A failed node that makes a run reach K closes
    the piece, adding its remainder; the last piece adds its remainder at the
    end. An extra state accumulates the expected waste, so n steps are one
    matrix power (log n products). Its callers check their inputs; it checks
    them again, so that no argument outside the chain's meaning reaches it.
    """
    p = probability("p", p)
    g, k, n = whole("g", g, low=1), whole("k", k, low=1), whole("n", n, low=0)
    width = k + 1
    states = g * width
    step = _chain_step(p, g, k)
    start = np.zeros(states + 1)
    start[0] = 1.0
    end = start @ np.linalg.matrix_power(step, n)
    pieces = float(end[states] + end[:states] @ np.tile(np.arange(g), width))
    line = np.zeros((g, g))
    line[np.arange(g), (np.arange(g) + 1) % g] = 1.0 - p
    line[np.arange(g), np.arange(g)] += p
    whole_line = float((np.linalg.matrix_power(line, n)[0]) @ np.arange(g))
    return pieces, whole_line


def ring_expectation(node_rate: float, gpus_per_node: int = 4, tp: int = 32, hops: int = 3, *,
                     gpus: int = DEFAULT_GPUS, switch_gpus: int = 72) -> RingExpectation:
    """The exact expectation of what ``ring_builder`` averages, for nodes failing with ``node_rate``.

    ``node_rate`` is ``P_s`` of a node of ``gpus_per_node`` GPUs (already
    converted). With ``n = gpus / R`` nodes and ``g = N_t / R``::

        faulty      = n P_s
        cuts        = sum over i = 1 .. n-K-1 of (1 - P_s) P_s^K (1 - P_s^(n-i-K))
        ring waste  = R × E[sum of the pieces' remainders] / gpus        (Markov chain)
        line rest   = R × E[(healthy nodes) mod g] / gpus                 (Markov chain)
        static      = R × (rings × g ((1 - P_s) - (1 - P_s)^g) + tail (1 - P_s)) / gpus
        switch      = domains × E[(S - R × Binomial(S / R, P_s)) mod N_t] / gpus

    A cut is counted by its first failed node ``i``: node ``i - 1`` healthy,
    ``i .. i+K-1`` failed, some healthy node after the run. Each cut adds either
    0 or ``N_t`` idle GPUs (the two new remainders sum to the old one or to one
    group more), so ``cut_waste <= cut_waste_worst``.

    Raises ``ValueError`` as ``ring_builder`` does.
    """
    p = probability("node_rate", node_rate)
    r, t, k, n_gpus, s = _check_shape(gpus_per_node, tp, hops, gpus, switch_gpus)
    g, n = t // r, n_gpus // r
    total = max(n_gpus, 1)
    i = np.arange(1, max(n - k, 1))
    cuts = float(((1.0 - p) * p ** k * (1.0 - p ** (n - i - k))).sum()) if n - k - 1 >= 1 else 0.0
    pieces, whole_line = _remainder_chain(p, g, k, n)
    rings, tail = divmod(n, g)
    static = r * (rings * g * ((1.0 - p) - (1.0 - p) ** g) + tail * (1.0 - p))
    per = s // r
    failed = np.arange(per + 1)
    pmf = np.array([math.comb(per, f) for f in failed]) * p ** failed * (1.0 - p) ** (per - failed)
    switch = (n // per) * float(pmf @ ((s - failed * r) % t))
    ring = r * pieces
    return RingExpectation(
        faulty_nodes=n * p, ring_cuts=cuts, ring_waste=ring / total, line_remainder=r * whole_line / total,
        cut_waste=(ring - r * whole_line) / total, cut_waste_worst=t * cuts / total,
        static_waste=static / total, switch_waste=switch / total, usable_gpus=n_gpus - r * n * p - ring)


@dataclass(frozen=True)
class RingBuilder:
    """Outputs of ``ring_builder``: averages over the draws (per-draw counts in ``draws_detail``)."""

    node_rate: float
    """P_s, the fault probability of one node of ``gpus_per_node`` GPUs."""
    faulty_nodes: float
    """Failed nodes per draw."""
    ring_cuts: float
    """Runs of K or more failed nodes per draw."""
    ring_waste: float
    """K-hop ring: idle healthy GPUs / all GPUs."""
    cut_waste: float
    """The part of ``ring_waste`` that the cuts add: ring waste - line remainder (what the bound bounds)."""
    bound: float
    """The paper's bound 2 (N_t - R) P_s^K."""
    worst_case: float
    """The book's corrected worst case (N_t / R) (1 - P_s) P_s^K (``waste_bound``)."""
    static_waste: float
    """Static TP rings: idle healthy GPUs / all GPUs."""
    switch_waste: float
    """72-GPU switch domains: idle healthy GPUs / all GPUs."""
    usable_gpus: float
    """GPUs in TP groups on the K-hop ring, of ``gpus``."""
    gpus: int
    """GPUs in the line."""
    gpus_per_node: int
    """R."""
    exact: RingExpectation
    """The exact expectation of every mean above (``ring_expectation`` at the same inputs)."""
    draws_detail: RingDraws = field(repr=False, compare=False)

    def ci95(self, name: str) -> float:
        """Half-width of a 95% confidence interval for the mean ``name`` (1.96 standard errors).

        ``name`` is ``faulty_nodes``, ``ring_cuts``, ``ring_waste``, ``cut_waste``,
        ``static_waste``, ``switch_waste`` or ``usable_gpus``. The interval is the
        normal approximation over the draws; it is zero when every draw agrees.
        """
        d, total = self.draws_detail, max(self.gpus, 1)
        per_draw = {
            "faulty_nodes": d.faulty_nodes, "ring_cuts": d.cuts, "ring_waste": d.ring_waste_gpus / total,
            "cut_waste": (d.ring_waste_gpus - d.line_remainder_gpus) / total,
            "static_waste": d.static_waste_gpus / total, "switch_waste": d.switch_waste_gpus / total,
            "usable_gpus": self.gpus - self.gpus_per_node * d.faulty_nodes - d.ring_waste_gpus,
        }
        if name not in per_draw:
            raise ValueError(f"name must be one of {', '.join(per_draw)}, got {name!r}")
        x = np.asarray(per_draw[name], dtype=float)
        return 1.96 * float(x.std(ddof=1)) / math.sqrt(x.size) if x.size > 1 else 0.0


def ring_builder(node_rate_8gpu: float = 0.0233, gpus_per_node: int = 4, tp: int = 32, hops: int = 3, *,
                 gpus: int = DEFAULT_GPUS, draws: int = DEFAULT_DRAWS, switch_gpus: int = 72,
                 seed: int = 0) -> RingBuilder:
    """The ring builder of source 004's Panel 1, averaged over ``draws`` seeded draws.

    ``node_rate_8gpu`` is the share of faulty 8-GPU nodes (the trace's unit);
    for nodes of ``R`` GPUs it is converted as ``P_s = 1 - (1 - P_8) ** (R / 8)``
    (``1 - sqrt(1 - P_8)`` for R = 4). Then, per draw::

        cuts        = runs of >= K consecutive failed nodes, healthy nodes on both sides
        ring waste  = R × sum over pieces of (healthy nodes in the piece mod N_t / R)
        static      = R × healthy nodes in rings of N_t / R nodes that hold a failed node
        switch      = sum over S-GPU domains of (S - failed GPUs) mod N_t
        usable      = gpus - R × failed nodes - ring waste
        cut waste   = ring waste - R × (healthy nodes mod N_t / R)   (what the cuts add)

    and each waste is divided by ``gpus``. ``bound`` is ``waste_bound`` at the
    converted rate, ``worst_case`` the book's corrected worst case beside it.
    The ring's waste includes the remainder of the whole line (healthy nodes
    mod N_t / R), which no K removes; ``cut_waste`` is the rest, the part the
    paper's bound is about. ``exact`` holds the exact expectation of every mean
    and ``ci95(name)`` the half-width of its 95% interval over the draws.

    Raises ``ValueError`` naming the argument for ``hops`` outside ``1..R``,
    ``tp`` not a multiple of ``gpus_per_node``, a rate outside [0, 1], ``gpus``
    not a multiple of ``gpus_per_node`` or of ``switch_gpus``.
    """
    p8 = probability("node_rate_8gpu", node_rate_8gpu)
    r, t, k, n, s = _check_shape(gpus_per_node, tp, hops, gpus, switch_gpus)
    d = whole("draws", draws, low=1)
    ps = convert_node_rate(p8, 8, r)
    failed = draw_failures(ps, n // r, d, seed)
    per = ring_draws(failed, r, t, k, s)
    total = max(n, 1)
    ring = per.ring_waste_gpus.mean() / total
    usable = n - r * per.faulty_nodes.mean() - per.ring_waste_gpus.mean()
    bound = waste_bound(t, r, ps, k)
    return RingBuilder(
        node_rate=ps, faulty_nodes=float(per.faulty_nodes.mean()), ring_cuts=float(per.cuts.mean()),
        ring_waste=float(ring),
        cut_waste=float((per.ring_waste_gpus - per.line_remainder_gpus).mean() / total),
        bound=bound.bound, worst_case=bound.worst_case,
        static_waste=float(per.static_waste_gpus.mean() / total),
        switch_waste=float(per.switch_waste_gpus.mean() / total), usable_gpus=float(usable), gpus=n,
        gpus_per_node=r, exact=ring_expectation(ps, r, t, k, gpus=n, switch_gpus=s), draws_detail=per,
    )


# -- one draw, node by node, for the drawing --------------------------------------------------

ROLE_NAMES = ("in a TP group", "idle remainder", "failed, skipped", "failed, cuts the line")
"""Node roles of ``ring_layout``, by code 0..3."""


@dataclass(frozen=True)
class RingLayout:
    """Outputs of ``ring_layout``: what the orchestrator makes of one line of nodes."""

    role: np.ndarray
    """Per node: 0 in a TP group, 1 idle remainder, 2 failed and skipped (a run shorter than K, bridged
    by a backup link, or a run at either end of the line), 3 failed in a run that cuts the line."""
    group: np.ndarray
    """Per node: index of its TP group (-1 if none)."""
    piece: np.ndarray
    """Per node: index of its healthy piece (-1 for a failed node)."""
    groups: int
    """TP groups formed."""


def ring_layout(failed_row: np.ndarray, group_nodes: int, hops: int) -> RingLayout:
    """Cut one line of nodes into TP groups, as the orchestrator does, in one pass: O(nodes).

    Failed nodes are dropped; runs of ``hops`` or more failed nodes with a
    healthy node on each side cut the line into pieces (a run at either end
    cuts nothing); each piece's healthy nodes are grouped ``group_nodes`` at a
    time in order, and the rest of the piece is an idle remainder. The
    orchestrator's alignment and aggregation-domain rules are not modelled.
    """
    failed = np.asarray(failed_row, dtype=bool)
    g = whole("group_nodes", group_nodes, low=1)
    k = whole("hops", hops, low=1)
    n = failed.size
    padded = np.concatenate([[0], failed.astype(np.int8), [0]])
    edges = np.diff(padded)
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    long = ((ends - starts) >= k) & (starts > 0) & (ends < n)  # runs that cut: healthy nodes on both sides
    in_cut = np.zeros(n + 1, dtype=np.int64)
    np.add.at(in_cut, starts[long], 1)
    np.add.at(in_cut, ends[long], -1)
    cutting = np.cumsum(in_cut)[:n] > 0
    cut_mark = np.zeros(n + 1, dtype=np.int64)
    np.add.at(cut_mark, starts[long], 1)
    piece = np.cumsum(cut_mark)[:n]
    healthy = ~failed
    # position of each healthy node inside its piece
    rank = np.cumsum(healthy) - 1
    first = np.zeros(piece.max() + 1 if n else 1, dtype=np.int64)
    size = np.bincount(piece[healthy], minlength=first.size) if n else np.zeros(1, dtype=np.int64)
    first[1:] = np.cumsum(size)[:-1]
    pos = rank - first[piece] if n else rank
    full = (size // g) * g
    grouped = healthy & (pos < full[piece])
    groups_before = np.zeros_like(first)
    groups_before[1:] = np.cumsum(size // g)[:-1]
    group = np.where(grouped, groups_before[piece] + pos // g, -1)
    role = np.where(failed, np.where(cutting, 3, 2), np.where(grouped, 0, 1))
    return RingLayout(role.astype(np.int8), group.astype(np.int64), np.where(healthy, piece, -1),
                      int((size // g).sum()))
