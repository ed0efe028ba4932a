"""Tests added to kill the mutants that chapter 5's tests let live (see tools/mutants/REPORT.md).

Chapter 5's models: ``scaleup`` and ``ring_builder``.
"""
from __future__ import annotations

import numpy as np
import pytest

from clustermath.scaleup.ring_builder import (
    draw_failures, ring_builder, ring_draws, ring_expectation, ring_layout,
)
from clustermath.scaleup.domains import (
    alignment_fault_radius, convert_node_rate, db_to_fraction, fragmentation, gpu_fault_probability,
    link_budget, synthetic_fault_trace, tor_wiring, waste_bound,
)

from argument_errors import assert_errors_name_their_argument

ROW = np.zeros((1, 18), bool)

# function, valid keyword arguments, {argument: what its ValueError says the argument must be}
N, W = "a number in", "a whole number in"
MESSAGES = [
    (fragmentation, dict(domain_gpus=32, failed_gpus=1, tp=16),
     dict(domain_gpus=f"{W} 1..inf GPUs", failed_gpus=f"{W} 0..32 GPUs", tp=f"{W} 1..inf GPUs")),
    (convert_node_rate, dict(rate=0.1),
     dict(rate=f"{N} [0, 1]", from_gpus=f"{W} 1..inf GPUs", to_gpus=f"{W} 1..inf GPUs")),
    (gpu_fault_probability, dict(node_rate=0.1), dict(node_rate=f"{N} [0, 1]", gpus_per_node=f"{W} 1..inf GPUs")),
    (waste_bound, dict(tp=32, gpus_per_node=4, node_rate=0.1, hops=2),
     dict(tp=f"{W} 1..inf GPUs", gpus_per_node=f"{W} 1..inf GPUs", node_rate=f"{N} [0, 1]", hops=f"{W} 1..4")),
    (tor_wiring, dict(tors=4, nodes_per_tor=4, group_nodes=4),
     dict(tors=f"{W} 1..inf", nodes_per_tor=f"{W} 1..inf", group_nodes=f"{W} 1..inf",
          wiring="one of ['in-order', 'sub-line']")),
    (alignment_fault_radius, dict(gpus_per_node=8, nodes_per_tor=4, aligned=True),
     dict(gpus_per_node=f"{W} 1..inf GPUs", nodes_per_tor=f"{W} 1..inf")),
    (db_to_fraction, dict(loss_db=3.0), dict(loss_db=f"{N} [0, inf) dB")),
    (link_budget, {}, dict(loss_db=f"{N} [0, inf) dB", module_w=f"{N} (0, inf) W", switch_w=f"{N} [0, 12] W",
                           rate_gbps=f"{N} (0, inf) Gbps", switch_s=f"{N} (0, inf) s",
                           reference_s=f"{N} (0, inf) s")),
    (synthetic_fault_trace, {}, dict(mean_pct=f"{N} (0, 100] %", median_pct=f"{N} (0, 2.33) %",
                                     p99_pct=f"{N} (1.67, 100) %", days=f"{W} 1..inf days",
                                     samples_per_day=f"{W} 1..inf", weeks_memory=f"{N} (0, 1e+06] weeks")),
    (draw_failures, dict(node_rate=0.1, nodes=10, draws=1),
     dict(node_rate=f"{N} [0, 1]", nodes=f"{W} 0..inf", draws=f"{W} 1..inf")),
    (ring_draws, dict(failed=ROW, gpus_per_node=4, tp=16, hops=2),
     dict(gpus_per_node=f"{W} 1..inf GPUs", tp=f"{W} 1..inf GPUs", hops=f"{W} 1..4",
          switch_gpus=f"{W} 1..inf GPUs")),
    (ring_builder, dict(draws=1), dict(node_rate_8gpu=f"{N} [0, 1]", gpus_per_node=f"{W} 1..inf GPUs",
                                       tp=f"{W} 1..inf GPUs", hops=f"{W} 1..4", gpus=f"{W} 0..inf GPUs",
                                       draws=f"{W} 1..inf", switch_gpus=f"{W} 1..inf GPUs")),
    (ring_layout, dict(failed_row=ROW[0], group_nodes=4, hops=2),
     dict(group_nodes=f"{W} 1..inf", hops=f"{W} 1..inf")),
    (ring_expectation, dict(node_rate=0.1), dict(node_rate=f"{N} [0, 1]", gpus_per_node=f"{W} 1..inf GPUs",
                                                 tp=f"{W} 1..inf GPUs", hops=f"{W} 1..4", gpus=f"{W} 0..inf GPUs",
                                                 switch_gpus=f"{W} 1..inf GPUs")),
]


@pytest.mark.parametrize("function, valid, expected", MESSAGES, ids=[f.__name__ for f, _, _ in MESSAGES])
def test_every_error_names_its_argument_range_and_unit(function, valid, expected):
    """Each ValueError names the argument that is wrong, its range and its unit (and no other argument's)."""
    assert_errors_name_their_argument(function, valid, expected)


# -- scaleup ---------------------------------------------------------------------------------------

def test_fragmentation_every_field():
    f = fragmentation(36, 2, 16)
    assert (f.domain_gpus, f.failed_gpus, f.tp, f.healthy_gpus, f.groups, f.idle_gpus) == (36, 2, 16, 34, 2, 2)
    assert f.waste_ratio == 2 / 36
    assert fragmentation(1, 1, 1).waste_ratio == 0.0 and fragmentation(1, 0, 1).groups == 1


def test_node_rate_conversion_follows_both_node_sizes():
    assert convert_node_rate(0.75, 2, 1) == 0.5 and convert_node_rate(0.5, 1, 2) == 0.75
    assert convert_node_rate(0.36, 2, 1) == pytest.approx(0.2) and convert_node_rate(0.1, 3, 3) == 0.1
    assert gpu_fault_probability(0.75, 2) == 0.5 and gpu_fault_probability(0.3, 1) == 0.3


def test_waste_bound_every_field():
    b = waste_bound(32, 4, 0.1, 2)
    assert (b.tp, b.gpus_per_node, b.hops, b.node_rate, b.gpus_lost_per_cut) == (32, 4, 2, 0.1, 112)
    assert b.cut_rate == pytest.approx(0.02, rel=1e-12) and b.bound == pytest.approx(0.56, rel=1e-12)
    assert waste_bound(8, 8, 0.5, 1).gpus_lost_per_cut == 0 and waste_bound(16, 8, 0.5, 1).cut_rate == 1.0
    with pytest.raises(ValueError, match=r"^tp must be a multiple of gpus_per_node \(4\), got tp=30: "
                                         r"a TP group on the ring is a whole number of nodes$"):
        waste_bound(30, 4, 0.1, 2)


def _tor_wiring_reference(tors, r, g, wiring):
    nodes = tors * r
    line = list(range(nodes)) if wiring == "in-order" else [(p % tors) * r + p // tors for p in range(nodes)]
    tor_of = [node // r for node in line]
    groups = [tor_of[i:i + g] for i in range(0, nodes, g)]
    tp_across = sum(len(set(group)) > 1 for group in groups)
    dp_across = sum(len({group[j] for group in groups}) > 1 for j in range(g))
    return nodes // g, tp_across, dp_across


@pytest.mark.parametrize("wiring", ["in-order", "sub-line"])
@pytest.mark.parametrize("tors, r, g", [(4, 4, 4), (2, 3, 2), (3, 2, 3), (2, 4, 8), (5, 2, 1), (1, 6, 3), (4, 3, 6)])
def test_tor_wiring_equals_a_loop_over_the_line(tors, r, g, wiring):
    w = tor_wiring(tors, r, g, wiring)
    assert (w.wiring, w.tors, w.nodes_per_tor, w.group_nodes, w.dp_groups) == (wiring, tors, r, g, g)
    assert (w.tp_groups, w.tp_groups_across_tors, w.dp_groups_across_tors) == _tor_wiring_reference(tors, r, g, wiring)


def test_tor_wiring_default_is_sub_line_and_errors():
    assert tor_wiring(2, 3, 2).wiring == "sub-line"
    with pytest.raises(ValueError, match=r"^group_nodes must divide the 16 nodes \(tors × nodes_per_tor\), got 3$"):
        tor_wiring(4, 4, 3)


def test_alignment_radius_both_ways():
    assert alignment_fault_radius(4, 3, True) == 12 and alignment_fault_radius(4, 3, False) == 4
    assert alignment_fault_radius(1, 1, True) == 1


def test_link_budget_exactly():
    b = link_budget(1.0, 2.0, 4.0, 100.0, 2e-6, 5e-6)
    assert b.light_left == pytest.approx(10 ** -0.1, rel=1e-12) and b.switch_power_share == 0.5
    assert b.energy_pj_per_bit == pytest.approx(40.0, rel=1e-12) and b.speedup == pytest.approx(2.5, rel=1e-12)
    d = link_budget()
    assert d.energy_pj_per_bit == pytest.approx(15.0, rel=1e-12) and d.speedup == pytest.approx(12.5, rel=1e-12)
    assert d.switch_power_share == pytest.approx(3.2 / 12, rel=1e-12)
    assert d.light_left == pytest.approx(10 ** -0.33, rel=1e-12)
    assert db_to_fraction(10) == pytest.approx(0.1, rel=1e-12) and db_to_fraction(20) == pytest.approx(0.01, rel=1e-12)


def test_quantile_curve_passes_through_the_median_and_the_p99():
    from clustermath.scaleup.domains import _Z99, _quantile_curve
    for gamma in (0.5, 1.0, 2.0):
        curve = _quantile_curve(np.array([-_Z99, 0.0, _Z99, 2 * _Z99]), 2.0, 8.0, gamma)
        assert curve[1] == pytest.approx(2.0) and curve[2] == pytest.approx(8.0)
        assert curve[0] == pytest.approx(0.5)  # log-normal below the median: mirror of the p99
        assert curve[3] == pytest.approx(2.0 * 4.0 ** (2 ** gamma))
        half = _quantile_curve(np.array([0.5]), 2.0, 8.0, gamma)[0]  # between the median and z = 1
        assert half == pytest.approx(2.0 * 4.0 ** ((0.5 / _Z99) ** gamma))


def test_a_short_synthetic_trace():
    t = synthetic_fault_trace(days=2, samples_per_day=3)
    assert t.days.tolist() == pytest.approx([0, 1 / 3, 2 / 3, 1, 4 / 3, 5 / 3])
    assert t.mean_pct == pytest.approx(2.33, abs=1e-9) and t.faulty_pct.mean() == t.mean_pct
    assert t.median_pct == np.median(t.faulty_pct) and t.p99_pct == np.quantile(t.faulty_pct, 0.99)
    assert not np.array_equal(synthetic_fault_trace(days=2, samples_per_day=3, seed=5).faulty_pct, t.faulty_pct)


def test_synthetic_trace_remembers_for_weeks():
    def lag1(weeks):
        x = np.log(synthetic_fault_trace(days=20, samples_per_day=24, weeks_memory=weeks).faulty_pct)
        return np.corrcoef(x[:-1], x[1:])[0, 1]
    assert lag1(2.0) > 0.97 and lag1(0.01) < 0.7  # two weeks of memory: hour to hour nearly the same


# -- ring_builder ----------------------------------------------------------------------------------

def _layout_reference(row, g, k):
    """ring_layout node by node: runs of k or more failed nodes with a healthy node on each side cut;
    each piece is grouped g at a time."""
    n = len(row)
    cutting = [False] * n
    i = 0
    while i < n:
        j = i
        while j < n and row[j]:
            j += 1
        if j - i >= k and i > 0 and j < n:
            cutting[i:j] = [True] * (j - i)
        i = max(j, i + 1)
    role, group, piece = [0] * n, [-1] * n, [-1] * n
    pieces, current = [[]], 0
    for i in range(n):
        if row[i]:
            role[i] = 3 if cutting[i] else 2
            if cutting[i] and (i == 0 or not row[i - 1]):
                current += 1
                pieces.append([])
        else:
            piece[i] = current
            pieces[current].append(i)
    groups = 0
    for nodes in pieces:
        full = len(nodes) // g * g
        for index, node in enumerate(nodes):
            role[node], group[node] = (0, groups + index // g) if index < full else (1, -1)
        groups += len(nodes) // g
    return role, group, piece, groups


@pytest.mark.parametrize("seed", range(6))
def test_ring_layout_equals_a_loop_over_the_line(seed):
    rng = np.random.default_rng(seed)
    for _ in range(40):
        n = int(rng.integers(0, 25))
        row = rng.random(n) < rng.choice([0.1, 0.3, 0.6])
        g, k = int(rng.integers(1, 5)), int(rng.integers(1, 4))
        lay = ring_layout(row, g, k)
        role, group, piece, groups = _layout_reference(row.tolist(), g, k)
        assert (lay.role.tolist(), lay.group.tolist(), lay.piece.tolist(), lay.groups) == (role, group, piece, groups)
        assert lay.role.dtype == np.int8 and lay.group.dtype == np.int64


def test_ring_layout_edge_rows():
    lay = ring_layout(np.array([1, 1, 0, 0, 0, 1, 1], bool), 2, 2)  # long runs at both ends cut nothing
    assert lay.role.tolist() == [2, 2, 0, 0, 1, 2, 2] and lay.piece.tolist() == [-1, -1, 0, 0, 0, -1, -1]
    assert lay.group.tolist() == [-1, -1, 0, 0, -1, -1, -1] and lay.groups == 1
    inner = ring_layout(np.array([0, 1, 1, 0, 0, 0, 1, 1], bool), 2, 2)  # one run inside cuts, one at the end not
    assert inner.role.tolist() == [1, 3, 3, 0, 0, 1, 2, 2] and inner.piece.tolist() == [0, -1, -1, 1, 1, 1, -1, -1]
    healthy = ring_layout(np.zeros(5, bool), 5, 1)
    assert healthy.role.tolist() == [0] * 5 and healthy.groups == 1 and healthy.piece.tolist() == [0] * 5
    dead = ring_layout(np.ones(3, bool), 1, 4)  # a run shorter than K is bypassed, never cuts
    assert dead.role.tolist() == [2, 2, 2] and dead.groups == 0


def _trace_reference(mean, med, p99, days, k, weeks, seed):
    """synthetic_fault_trace step by step: AR(1) series, normal scores by rank, bisection on the curve's shape."""
    from math import exp, log, sqrt
    from statistics import NormalDist
    n, nd = days * k, NormalDist()
    phi = exp(-1.0 / (weeks * 7 * k))
    noise = np.random.default_rng(seed).standard_normal(n).tolist()
    x = [noise[0]]
    for i in range(1, n):
        x.append(phi * x[-1] + sqrt(1 - phi ** 2) * noise[i])
    z = [0.0] * n
    for rank, i in enumerate(sorted(range(n), key=x.__getitem__)):
        z[i] = nd.inv_cdf((rank + 0.5) / n)
    z99 = nd.inv_cdf(0.99)
    s = log(p99 / med) / z99

    def curve(gamma):
        return np.array([med * exp(s * ((abs(v) / z99) ** gamma * z99 if v > 0 else v)) for v in z])
    lo, hi = 0.05, 3.0
    for _ in range(60):
        if curve((lo + hi) / 2).mean() > mean:
            lo = (lo + hi) / 2
        else:
            hi = (lo + hi) / 2
    return curve((lo + hi) / 2)


def test_synthetic_trace_equals_its_step_by_step_reference():
    short = synthetic_fault_trace(3.0, 2.0, 9.0, days=5, samples_per_day=4, weeks_memory=0.1, seed=2)
    assert short.faulty_pct == pytest.approx(_trace_reference(3.0, 2.0, 9.0, 5, 4, 0.1, 2), rel=1e-9)
    default = synthetic_fault_trace()  # the chapter's figure: every default matters
    assert default.faulty_pct == pytest.approx(_trace_reference(2.33, 1.67, 7.22, 348, 24, 2.0, 4), rel=1e-9)


def test_draw_failures_is_a_strict_float32_comparison():
    u = np.random.default_rng(3).random((2, 5), dtype=np.float32)
    assert (draw_failures(0.5, 5, 2, 3) == (u < 0.5)).all()
    p = float(u[0, 2])  # a node whose draw equals the rate exactly is healthy
    f = draw_failures(p, 5, 2, 3)
    assert not f[0, 2] and (f == (u < p)).all()
    assert draw_failures(0.5, 0, 1).shape == (1, 0)


def test_ring_draws_reads_any_truthy_array_as_failures():
    failed = draw_failures(0.3, 36, 4, 1)
    as_ints = ring_draws(failed.astype(int) * 2, 4, 16, 2)
    as_bools = ring_draws(failed, 4, 16, 2)
    for name in ("faulty_nodes", "cuts", "ring_waste_gpus", "static_waste_gpus", "switch_waste_gpus"):
        assert getattr(as_ints, name).tolist() == getattr(as_bools, name).tolist(), name


def test_ring_builder_defaults_and_its_averages():
    assert ring_builder() == ring_builder(0.0233, 4, 32, 3, gpus=2_880, draws=200, switch_gpus=72, seed=0)
    m = ring_builder(0.3, 4, 16, 2, gpus=288, draws=5, switch_gpus=144, seed=3)
    d = m.draws_detail
    assert m.usable_gpus == pytest.approx(288 - 4 * d.faulty_nodes.mean() - d.ring_waste_gpus.mean())
    assert m.switch_waste == pytest.approx(d.switch_waste_gpus.mean() / 288)
    assert ring_builder(0.0, 4, 32, 3, switch_gpus=96).switch_waste == 0.0  # 96 GPUs: three TP-32 groups
    assert m.gpus == 288 and ring_builder(0.0, gpus=0).gpus == 0


# -- survivors of the retest (tools/mutants/REPORT.md) ----------------------------------------------

def test_energy_per_bit_is_exact():
    assert link_budget(1.0, 2.0, 4.0, 100.0, 2e-6, 5e-6).energy_pj_per_bit == 40.0
    assert link_budget().energy_pj_per_bit == 15.0


def test_draw_failures_default_seed_is_zero():
    assert (draw_failures(0.5, 5, 2) == draw_failures(0.5, 5, 2, 0)).all()


@pytest.mark.parametrize("switch_gpus", [6, 128])
def test_switch_domains_must_hold_whole_nodes_and_divide_the_line(switch_gpus):
    # 6 GPUs is not a whole number of 4-GPU nodes; 128 GPUs does not divide 2,880
    with pytest.raises(ValueError, match=rf"^switch_gpus must be a multiple of gpus_per_node \(4\) and divide gpus "
                                         rf"\(2880\), got switch_gpus={switch_gpus}$"):
        ring_builder(switch_gpus=switch_gpus)


def test_every_count_is_an_integer_array():
    d = ring_draws(draw_failures(0.3, 36, 4, 1), 4, 16, 2)
    for name in ("faulty_nodes", "cuts", "ring_waste_gpus", "static_waste_gpus", "switch_waste_gpus",
                 "line_remainder_gpus"):
        assert getattr(d, name).dtype.kind == "i", name


def test_a_line_of_one_node():
    # each draw is one node; with TP-8 (two nodes) no ring ever closes: a healthy node is idle
    d = ring_draws(np.array([[1], [0], [1]], bool), 4, 8, 1, switch_gpus=4)
    assert d.static_waste_gpus.tolist() == [0, 4, 0] and d.switch_waste_gpus.tolist() == [0, 4, 0]
    assert d.ring_waste_gpus.tolist() == [0, 4, 0] and d.cuts.tolist() == [0, 0, 0]  # nothing on either side
    d = ring_draws(np.array([[0], [1], [0]], bool), 4, 4, 1, switch_gpus=4)
    assert d.static_waste_gpus.tolist() == [0, 0, 0] and d.switch_waste_gpus.tolist() == [0, 0, 0]
    assert d.faulty_nodes.tolist() == [0, 1, 0]


def test_ring_layout_reads_any_truthy_row_as_failures():
    row = np.array([0, 1, 1, 0, 0, 1, 0, 0, 0])
    a, b = ring_layout(row * 2, 2, 2), ring_layout(row.astype(bool), 2, 2)
    assert (a.role.tolist(), a.group.tolist(), a.piece.tolist(), a.groups) == \
        (b.role.tolist(), b.group.tolist(), b.piece.tolist(), b.groups)


@pytest.mark.parametrize("call, name", [
    (lambda: alignment_fault_radius(4, 2, aligned="no"), "aligned"),
    (lambda: draw_failures(0.1, 4, 2, seed=-1), "seed"),
    (lambda: draw_failures(0.1, 4, 2, seed=1.5), "seed"),
    (lambda: synthetic_fault_trace(seed=-4), "seed"),
])
def test_switches_and_seeds_are_checked(call, name):
    with pytest.raises(ValueError, match=f"^{name} must be"):
        call()


def test_seed_zero_is_a_seed():
    """0 is a valid seed (the lowest), for the trace and for the fault draws."""
    assert synthetic_fault_trace(seed=0).faulty_pct.size == 348 * 24
    assert draw_failures(0.5, 4, 2, seed=0).shape == (2, 4)


# -- survivors of the run after the chapter review (issue 21; tools/mutants/REPORT.md) -------------------

def test_ring_expectation_defaults_and_the_builders_line():
    assert ring_expectation(0.05) == ring_expectation(0.05, 4, 32, 3, gpus=2_880, switch_gpus=72)
    m = ring_builder(0.3, 4, 16, 2, gpus=288, draws=5, switch_gpus=144, seed=3)
    assert m.exact == ring_expectation(m.node_rate, 4, 16, 2, gpus=288, switch_gpus=144)


def test_one_gpu_with_tp_two_is_idle_whenever_it_is_healthy():
    """One 1-GPU node, TP-2: no group ever forms, so the healthy GPU (probability 1/2) is idle in every
    design: each expected waste is 1/2 of the one GPU, and the draws' interval is in shares of one GPU."""
    e = ring_expectation(0.5, 1, 2, 1, gpus=1, switch_gpus=1)
    assert (e.faulty_nodes, e.ring_cuts, e.ring_waste, e.line_remainder, e.cut_waste) == (0.5, 0.0, 0.5, 0.5, 0.0)
    assert (e.static_waste, e.switch_waste, e.usable_gpus) == (0.5, 0.5, 0.0)
    m = ring_builder(0.5, 1, 2, 1, gpus=1, switch_gpus=1, draws=20, seed=1)
    idle = m.draws_detail.ring_waste_gpus.astype(float)  # 0 or 1 GPU of 1 per draw
    assert sorted(set(idle.tolist())) == [0.0, 1.0]
    assert m.ci95("ring_waste") == pytest.approx(1.96 * idle.std(ddof=1) / np.sqrt(20), rel=1e-12)


def test_every_confidence_interval_is_its_own_per_draw_series():
    m = ring_builder(0.3, 4, 16, 2, gpus=288, draws=7, switch_gpus=144, seed=3)
    d = m.draws_detail
    series = {"faulty_nodes": d.faulty_nodes, "ring_cuts": d.cuts, "ring_waste": d.ring_waste_gpus / 288,
              "cut_waste": (d.ring_waste_gpus - d.line_remainder_gpus) / 288,
              "static_waste": d.static_waste_gpus / 288, "switch_waste": d.switch_waste_gpus / 288,
              "usable_gpus": 288 - 4 * d.faulty_nodes - d.ring_waste_gpus}
    for name, x in series.items():
        x = np.asarray(x, dtype=float)
        assert x.std() > 0, name  # every series varies, so a wrong one shows
        assert m.ci95(name) == pytest.approx(1.96 * x.std(ddof=1) / np.sqrt(7), rel=1e-12), name
    two = ring_builder(0.3, 4, 16, 2, gpus=288, draws=2, switch_gpus=144, seed=0)  # ring waste 12 and 24 GPUs
    assert two.ci95("ring_waste") == pytest.approx(1.96 * (12 / 288) / np.sqrt(2) / np.sqrt(2), rel=1e-12)
    with pytest.raises(ValueError, match=r"^name must be one of faulty_nodes, ring_cuts, ring_waste, cut_waste, "
                                         r"static_waste, switch_waste, usable_gpus, got 'bound'$"):
        m.ci95("bound")


def _chain_reference(p, g, k):
    """The walk's rules, state by state: (m, j) -> index j g + m; the accumulator is the last index."""
    index = {(m, j): j * g + m for m in range(g) for j in range(k + 1)}
    acc = len(index)
    step = np.zeros((acc + 1, acc + 1))
    for (m, j), s in index.items():
        step[s, index[(m + 1) % g, 0]] = 1 - p
        if j == k:
            step[s, index[m, k]] = p
        elif j + 1 == k:
            step[s, index[0, k]] = p
            step[s, acc] = p * m
        else:
            step[s, index[m, j + 1]] = p
    step[acc, acc] = 1.0
    return step


def test_the_chain_takes_only_what_it_means():
    from clustermath.scaleup.ring_builder import _remainder_chain
    assert_errors_name_their_argument(_remainder_chain, dict(p=0.5, g=2, k=1, n=3),
                                      dict(p=f"{N} [0, 1]", g=f"{W} 1..inf", k=f"{W} 1..inf", n=f"{W} 0..inf"))
    assert _remainder_chain(0.5, 2, 1, 0) == (0.0, 0.0)  # no node: nothing idle
    with pytest.raises(ValueError, match=r"^p must be a number in \[0, 1\], got 1.5$"):
        _remainder_chain(1.5, 1, 1, 1)
    for bad in (dict(g=0), dict(k=0), dict(n=-1)):
        with pytest.raises(ValueError, match=f"^{next(iter(bad))} must be a whole number in {next(iter(bad.values())) + 1}"):
            _remainder_chain(**{**dict(p=0.5, g=2, k=1, n=3), **bad})


@pytest.mark.parametrize("g, k", [(1, 1), (3, 1), (3, 2), (2, 4), (4, 3)])
def test_the_chain_has_one_state_per_remainder_and_run(g, k):
    from clustermath.scaleup.ring_builder import _chain_step
    step = _chain_step(0.25, g, k)
    assert step.shape == (g * (k + 1) + 1,) * 2
    assert np.array_equal(step, _chain_reference(0.25, g, k))
    assert np.array_equal(step[:, :-1].sum(axis=1)[:-1], np.ones(g * (k + 1)))  # a probability per row


# -- the synthetic trace's shape search, at the ends of its range -------------------------------------

def _mean_at(z, gamma):
    from clustermath.scaleup.domains import _quantile_curve
    return float(_quantile_curve(z, 2.0, 8.0, gamma).mean())


def test_the_reachable_means_include_both_ends():
    """Scores 1 below z(0.99) only: the mean falls over the whole range of shapes, from the log-normal's
    γ = 0.05 to γ = 3. Both end means are reachable, exactly; a hair beyond either is refused."""
    import math
    from clustermath.scaleup.domains import GAMMA_RANGE, _shape_for_mean
    z = np.array([-1.0, 0.0, 1.0])
    top, bottom = _mean_at(z, GAMMA_RANGE[0]), _mean_at(z, GAMMA_RANGE[1])
    assert top > bottom
    assert _shape_for_mean(z, 2.0, 8.0, bottom) == pytest.approx(3.0, abs=1e-12)
    assert _shape_for_mean(z, 2.0, 8.0, top) == pytest.approx(0.05, abs=1e-12)
    for outside in (math.nextafter(bottom, 0), math.nextafter(top, 10)):
        with pytest.raises(ValueError) as err:
            _shape_for_mean(z, 2.0, 8.0, outside)
        assert str(err.value) == (f"mean_pct must be a number in [{bottom:.4g}, {top:.4g}] % for a median of 2 % and a "
                                  f"p99 of 8 % (no curve of this family reaches another mean), got {outside:g}")


def test_a_curve_the_shape_cannot_move_is_searched_over_the_whole_range():
    """No score above the median: every shape gives the same curve, so the whole range is the falling
    stretch, its one mean is reachable, and the first midpoint of the range already has it."""
    from clustermath.scaleup.domains import GAMMA_RANGE, _shape_for_mean
    z = np.array([-1.0, 0.0])
    mean = _mean_at(z, 1.0)
    assert _shape_for_mean(z, 2.0, 8.0, mean) == 0.5 * (GAMMA_RANGE[0] + GAMMA_RANGE[1])


def test_equal_samples_are_ranked_in_time_order(monkeypatch):
    """A series with ties (here a noise that repeats, and no memory, so the series is the noise) ranks equal
    samples by time: the trace is the step-by-step reference's, which ranks with Python's stable sort, and
    does not depend on which sort NumPy's CPU code path would pick."""
    class Repeating:
        def __init__(self, seed):
            pass

        def standard_normal(self, n):
            return np.resize([0.4, -0.3, 0.4, 1.1, -0.3], n)

    monkeypatch.setattr(np.random, "default_rng", Repeating)
    t = synthetic_fault_trace(days=10, samples_per_day=10, weeks_memory=1e-300)
    assert t.faulty_pct == pytest.approx(_trace_reference(2.33, 1.67, 7.22, 10, 10, 1e-300, 4), rel=1e-9)


def test_a_memory_of_a_million_weeks_at_most():
    assert synthetic_fault_trace(days=1, samples_per_day=4, weeks_memory=1e6).faulty_pct.size == 4
    with pytest.raises(ValueError, match=r"^weeks_memory must be a number in \(0, 1e\+06\] weeks, got 1000000.5$"):
        synthetic_fault_trace(weeks_memory=1_000_000.5)
