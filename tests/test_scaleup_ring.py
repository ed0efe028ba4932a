"""The ring builder (chapter 5): the vectorised model against a plain Python loop, draw for draw,
and its exact expectation against every fault pattern of short lines and against a long Monte Carlo.

``reference_ring_draws`` is the straightforward implementation: walk every draw
node by node, keep the current piece's healthy count and the current run of
failed nodes, close a piece when a run reaches ``hops``, and count the run as a
cut once a healthy node ends it (a run at either end of the line cuts nothing).
It is the specification the vectorised ``ring_draws`` must equal exactly on
fixed seeds; ``tools/bench_widgets.py`` times both to report the speed-up.
"""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from clustermath.scaleup.ring_builder import (
    DEFAULT_DRAWS, DEFAULT_GPUS, draw_failures, ring_builder, ring_draws, ring_expectation, ring_layout,
)
from clustermath.scaleup.domains import convert_node_rate, waste_bound


def reference_ring_draws(failed, gpus_per_node, tp, hops, switch_gpus=72):
    """Per-draw (faulty, cuts, ring waste, static waste, switch waste), with loops over draws and nodes."""
    r, g = gpus_per_node, tp // gpus_per_node
    out = []
    for row in failed.tolist():
        n = len(row)
        faulty = sum(row)
        cuts, ring_waste = 0, 0
        piece, run, seen_healthy = 0, 0, False
        for dead in row:
            if dead:
                run += 1
                if run == hops:  # this run now splits the line: close the piece before it
                    ring_waste += (piece % g) * r
                    piece = 0
            else:
                if run >= hops and seen_healthy:  # a healthy node on each side: a real cut
                    cuts += 1
                run, seen_healthy = 0, True
                piece += 1
        ring_waste += (piece % g) * r
        static_waste = 0
        for start in range(0, n, g):
            ring = row[start:start + g]
            if len(ring) < g or any(ring):
                static_waste += (len(ring) - sum(ring)) * r
        switch_waste = 0
        per = switch_gpus // r
        for start in range(0, n, per):
            dead_gpus = sum(row[start:start + per]) * r
            switch_waste += (switch_gpus - dead_gpus) % tp
        out.append((faulty, cuts, ring_waste, static_waste, switch_waste))
    return out


def reference_ring_builder(node_rate_8gpu, gpus_per_node, tp, hops, gpus=DEFAULT_GPUS, draws=DEFAULT_DRAWS,
                           seed=0):
    """The loop reference end to end (same draws as ``ring_builder``): mean ring waste share."""
    ps = convert_node_rate(node_rate_8gpu, 8, gpus_per_node)
    failed = draw_failures(ps, gpus // gpus_per_node, draws, seed)
    rows = reference_ring_draws(failed, gpus_per_node, tp, hops)
    return sum(row[2] for row in rows) / len(rows) / gpus


def _as_rows(d):
    return list(zip(d.faulty_nodes.tolist(), d.cuts.tolist(), d.ring_waste_gpus.tolist(),
                    d.static_waste_gpus.tolist(), d.switch_waste_gpus.tolist()))


@pytest.mark.parametrize("p8, r, tp, k, seed", [
    (0.0233, 4, 32, 3, 0), (0.0722, 8, 32, 2, 1), (0.0722, 4, 32, 1, 2), (0.0722, 8, 64, 4, 3),
    (0.3, 4, 16, 2, 4), (0.3, 8, 48, 3, 5), (0.6, 4, 128, 2, 6), (0.0, 4, 32, 3, 7), (1.0, 8, 32, 2, 8),
])
def test_vectorised_equals_loop_draw_for_draw(p8, r, tp, k, seed):
    ps = convert_node_rate(p8, 8, r)
    failed = draw_failures(ps, DEFAULT_GPUS // r, 50, seed)
    assert _as_rows(ring_draws(failed, r, tp, k)) == reference_ring_draws(failed, r, tp, k)


def test_builder_equals_loop_on_the_default_case():
    model = ring_builder(0.0233, 4, 32, 3, seed=11)
    assert model.ring_waste == reference_ring_builder(0.0233, 4, 32, 3, seed=11)
    assert _as_rows(model.draws_detail) == reference_ring_draws(
        draw_failures(model.node_rate, 720, DEFAULT_DRAWS, 11), 4, 32, 3)


def test_cut_waste_is_never_negative_and_under_the_bound_at_the_p99_rate():
    for r in (4, 8):
        for k in (2, 3, 4):
            m = ring_builder(0.0722, r, 32, k)
            d = m.draws_detail
            assert (d.ring_waste_gpus >= d.line_remainder_gpus).all()
            assert 0 <= m.cut_waste <= m.bound and 0 <= m.exact.cut_waste <= m.worst_case


def test_hand_made_line():
    # 4-node groups (TP-16, R = 4), K = 2: the lone failure is bypassed, the run of three cuts.
    row = np.array([[0, 0, 1, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0]], bool)
    d = ring_draws(row, 4, 16, 2, switch_gpus=72)
    # pieces: 5 healthy (1 idle node), 8 healthy (0 idle); static rings of 4: rings 0, 1, 2, 3 hold
    # failures (3 + 2 + 3 + 3 healthy nodes), the 2-node tail is idle: 13 nodes
    assert d.faulty_nodes.tolist() == [5] and d.cuts.tolist() == [1]
    assert d.ring_waste_gpus.tolist() == [4]
    assert d.static_waste_gpus.tolist() == [(3 + 2 + 3 + 3 + 2) * 4]
    assert d.switch_waste_gpus.tolist() == [(72 - 20) % 16]
    lay = ring_layout(row[0], 4, 2)
    assert lay.role.tolist() == [0, 0, 2, 0, 0, 1, 3, 3, 3, 0, 0, 0, 0, 0, 0, 2, 0, 0]
    assert lay.groups == 3 and lay.group.max() == 2


@pytest.mark.parametrize("k, cuts", [(2, 1), (3, 1), (4, 0)])
def test_a_run_of_exactly_k_cuts(k, cuts):
    row = np.zeros((1, 18), bool)
    row[0, 6:9] = True  # a run of three
    assert ring_draws(row, 4, 16, k, switch_gpus=72).cuts.tolist() == [int(3 >= k)] == [cuts]


def test_no_faults_leave_only_the_line_remainder():
    m = ring_builder(0.0, 4, 32, 3)
    assert m.faulty_nodes == 0 and m.ring_cuts == 0 and m.ring_waste == 0 and m.static_waste == 0
    assert m.switch_waste == pytest.approx(8 / 72)  # 72 mod 32 in every rack
    assert m.usable_gpus == 2_880 and m.bound == 0
    odd = ring_builder(0.0, 4, 48, 3, gpus=2_880)  # 720 nodes in groups of 12: 60 groups, no rest
    assert odd.ring_waste == 0
    rest = ring_builder(0.0, 4, 128, 3)  # groups of 32 nodes: 720 mod 32 = 16 nodes idle
    assert rest.ring_waste == rest.static_waste == pytest.approx(16 * 4 / 2_880)


def test_everything_failed():
    m = ring_builder(1.0, 8, 32, 2)
    assert m.faulty_nodes == 360 and m.usable_gpus == 0 and m.ring_waste == 0
    assert m.switch_waste == 0 and m.static_waste == 0 and m.ring_cuts == 0  # nothing left to cut
    e = m.exact
    assert (e.faulty_nodes, e.ring_cuts, e.ring_waste, e.static_waste, e.switch_waste, e.usable_gpus) == (
        360, 0, 0, 0, 0, 0)


@pytest.mark.parametrize("row, cuts", [
    ([1, 1, 0, 0, 0, 0], 0), ([0, 0, 0, 0, 1, 1], 0), ([1, 1, 1, 1, 1, 1], 0), ([0, 1, 1, 0, 0, 0], 1),
    ([1, 1, 0, 1, 1, 0, 1, 1], 1), ([0, 0, 1, 1, 1, 0], 1),
])
def test_runs_at_the_line_ends_cut_nothing(row, cuts):
    """K = 2: a run of two or more counts as a cut only with a healthy node on each side."""
    failed = np.array([row], bool)
    d = ring_draws(failed, 4, 8, 2, switch_gpus=8 if len(row) % 2 == 0 else 4)
    assert d.cuts.tolist() == [cuts] == [reference_ring_draws(failed, 4, 8, 2, 8)[0][1]]
    lay = ring_layout(failed[0], 2, 2)
    assert int(((lay.role == 3) & np.r_[True, lay.role[:-1] != 3]).sum()) == cuts  # runs drawn as cutting
    assert lay.role[0] != 3 and lay.role[-1] != 3


@pytest.mark.parametrize("kwargs, name", [
    (dict(gpus_per_node=4, hops=5), "hops must be a whole number in 1..4"),
    (dict(gpus_per_node=8, hops=9), "hops must be a whole number in 1..8"),
])
def test_hops_never_exceed_the_gpus_per_node(kwargs, name):
    """The source allows K <= R: a node's R bundles have two outside fibres each."""
    with pytest.raises(ValueError, match=name):
        ring_builder(0.0233, tp=32, **kwargs)
    with pytest.raises(ValueError, match=name):
        ring_expectation(0.0233, tp=32, **kwargs)
    assert ring_builder(0.0233, 4, 32, 4, draws=2).exact.ring_cuts >= 0  # K = R is allowed


# -- the exact expectation ----------------------------------------------------------------------

def _every_pattern(n, p, r, tp, k, switch_gpus):
    """Expected per-draw counts over all 2^n fault patterns, weighted by their probability."""
    rows = np.array(list(itertools.product((False, True), repeat=n)), bool)
    weight = np.array([p ** f * (1 - p) ** (n - f) for f in rows.sum(axis=1)])
    out = np.array(reference_ring_draws(rows, r, tp, k, switch_gpus), float)
    g = tp // r
    remainder = ((n - rows.sum(axis=1)) % g) * r
    return weight @ out, float(weight @ remainder)


def test_exact_expectation_by_hand():
    """Three 1-GPU nodes, TP-2, K = 1, P_s = 1/2: the eight patterns give ring waste
    q^3 + 2pq^2 + 3p^2q = 6/8 node, line remainder q^3 + 3p^2q = 4/8, one cut (pattern 010) with p q^2."""
    e = ring_expectation(0.5, 1, 2, 1, gpus=3, switch_gpus=3)
    assert e.ring_waste == pytest.approx(0.75 / 3, abs=1e-15)
    assert e.line_remainder == pytest.approx(0.5 / 3, abs=1e-15)
    assert e.cut_waste == pytest.approx(0.25 / 3, abs=1e-15)
    assert e.ring_cuts == pytest.approx(0.125, abs=1e-15) and e.faulty_nodes == 1.5
    assert e.cut_waste_worst == pytest.approx(2 * 0.125 / 3, abs=1e-15)  # one cut adds N_t = 2 GPUs here


@pytest.mark.parametrize("n, p, r, tp, k, s", [
    (10, 0.3, 4, 16, 2, 8), (11, 0.15, 2, 6, 1, 2), (12, 0.5, 4, 12, 3, 16), (9, 0.05, 8, 24, 4, 24),
    (12, 0.7, 1, 5, 1, 4), (8, 0.0, 4, 8, 2, 8), (8, 1.0, 4, 8, 2, 8), (1, 0.4, 4, 4, 1, 4),
])
def test_exact_expectation_equals_every_pattern_weighted(n, p, r, tp, k, s):
    (faulty, cuts, ring, static, switch), remainder = _every_pattern(n, p, r, tp, k, s)
    e = ring_expectation(p, r, tp, k, gpus=n * r, switch_gpus=s)
    total = n * r
    assert e.faulty_nodes == pytest.approx(faulty, abs=1e-12)
    assert e.ring_cuts == pytest.approx(cuts, abs=1e-12)
    assert e.ring_waste == pytest.approx(ring / total, abs=1e-12)
    assert e.line_remainder == pytest.approx(remainder / total, abs=1e-12)
    assert e.static_waste == pytest.approx(static / total, abs=1e-12)
    assert e.switch_waste == pytest.approx(switch / total, abs=1e-12)
    assert e.usable_gpus == pytest.approx(total - r * faulty - ring, abs=1e-9)


def test_one_cut_adds_nothing_or_one_whole_group():
    """On every draw the cuts add a whole number of TP groups, never more than one per cut."""
    for r, k in ((4, 1), (8, 2), (4, 2)):
        m = ring_builder(0.0722, r, 32, k, draws=100, seed=3)
        added = m.draws_detail.ring_waste_gpus - m.draws_detail.line_remainder_gpus
        assert (added % 32 == 0).all() and (added <= 32 * m.draws_detail.cuts).all() and (added >= 0).all()


@pytest.mark.parametrize("p8, r, tp, k", [(0.0722, 8, 32, 2), (0.0722, 4, 32, 2), (0.0233, 4, 64, 1),
                                          (0.0722, 8, 64, 3)])
def test_exact_expectation_against_a_long_monte_carlo(p8, r, tp, k):
    """4,000 seeded draws: every exact value lies within five standard errors of the simulated mean."""
    m = ring_builder(p8, r, tp, k, draws=4_000, seed=21)
    for name in ("faulty_nodes", "ring_cuts", "ring_waste", "cut_waste", "static_waste", "switch_waste",
                 "usable_gpus"):
        margin = 5 * m.ci95(name) / 1.96 + 1e-12
        assert abs(getattr(m, name) - getattr(m.exact, name)) <= margin, name


def test_the_papers_bound_sits_far_above_the_exact_cut_waste():
    """The chapter's numbers: at the p99 rate and TP-32 the bound is about 17 (R = 4) and 35 (R = 8) times
    the exact waste from cuts; the corrected worst case lies between them."""
    for r, ratio in ((4, 17), (8, 35)):
        for k in (2, 3, 4):
            m = ring_builder(0.0722, r, 32, k, draws=2)
            e = m.exact
            assert e.cut_waste < e.cut_waste_worst <= m.worst_case < m.bound
            assert m.bound / e.cut_waste == pytest.approx(ratio, rel=0.04)
    e = ring_builder(0.0722, 8, 32, 3, draws=2).exact
    assert round(100 * e.cut_waste, 3) == 0.052 and round(100 * waste_bound(32, 8, 0.0722, 3).worst_case, 2) == 0.14


def test_confidence_interval():
    m = ring_builder(0.0722, 8, 32, 2)
    x = m.draws_detail.ring_waste_gpus / 2_880
    assert m.ci95("ring_waste") == pytest.approx(1.96 * x.std(ddof=1) / math.sqrt(200), rel=1e-12)
    assert ring_builder(0.0, 4, 32, 3).ci95("ring_waste") == 0.0
    assert ring_builder(0.1, 4, 32, 3, draws=1).ci95("ring_cuts") == 0.0
    with pytest.raises(ValueError, match="name must be one of"):
        m.ci95("bound")


def test_k1_has_no_backups_and_more_hops_never_hurt():
    wastes = [ring_builder(0.0722, 8, 32, k).ring_waste for k in (1, 2, 3, 4)]
    assert wastes == sorted(wastes, reverse=True)
    static = {ring_builder(0.0722, 8, 32, k).static_waste for k in (1, 2, 3, 4)}
    assert len(static) == 1  # static rings do not use the backups at all


def test_bound_is_the_scaleup_bound():
    m = ring_builder(0.0722, 4, 32, 3)
    assert m.bound == waste_bound(32, 4, convert_node_rate(0.0722), 3).bound


def test_p99_r8_question():
    # the chapter's answer: K = 3 already puts the simulated ring under 1%, where the bound needs K = 4
    sim = [ring_builder(0.0722, 8, 32, k).ring_waste for k in (1, 2, 3, 4)]
    bound = [ring_builder(0.0722, 8, 32, k).bound for k in (1, 2, 3, 4)]
    assert [w < 0.01 for w in sim] == [False, False, True, True]
    assert [b < 0.01 for b in bound] == [False, False, False, True]


@pytest.mark.parametrize("kwargs, name", [
    (dict(hops=0), "hops"), (dict(tp=30), "tp must be a multiple"), (dict(node_rate_8gpu=1.5), "node_rate_8gpu"),
    (dict(node_rate_8gpu=-0.1), "node_rate_8gpu"), (dict(gpus=2_882), "gpus"), (dict(switch_gpus=70), "switch_gpus"),
    (dict(draws=0), "draws"), (dict(gpus_per_node=0), "gpus_per_node"),
])
def test_impossible_inputs(kwargs, name):
    with pytest.raises(ValueError, match=name):
        ring_builder(**kwargs)


def test_ring_draws_wants_two_dimensions():
    with pytest.raises(ValueError, match="failed"):
        ring_draws(np.zeros(8, bool), 4, 16, 2)


def test_draw_failures_is_seeded():
    a, b = draw_failures(0.1, 100, 3, 5), draw_failures(0.1, 100, 3, 5)
    assert (a == b).all() and a.shape == (3, 100)
    with pytest.raises(ValueError, match="node_rate"):
        draw_failures(2.0, 10, 1)


def test_empty_line():
    m = ring_builder(0.5, 4, 32, 2, gpus=0)
    assert m.usable_gpus == 0 and m.ring_waste == 0
    lay = ring_layout(np.zeros(0, bool), 4, 2)
    assert lay.groups == 0 and lay.role.size == 0
