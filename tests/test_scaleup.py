"""Chapter 5's closed-form models: fragmentation, fault-rate conversions, the waste bound, ToR wiring,
the link budget and the synthetic trace."""
from __future__ import annotations

import math

import numpy as np
import pytest

from clustermath.placement.parallelism import placement
from clustermath.scaleup.domains import (
    alignment_fault_radius, convert_node_rate, db_to_fraction, fragmentation, gpu_fault_probability,
    link_budget, synthetic_fault_trace, tor_wiring, waste_bound,
)


# -- fragmentation --------------------------------------------------------------------------

def test_paper_examples():
    assert 2 * fragmentation(32, 1, 16).idle_gpus == 30
    assert fragmentation(64, 2, 16).idle_gpus == 14
    assert fragmentation(36, 0, 16).waste_ratio == pytest.approx(1 / 9)
    assert fragmentation(72, 0, 32).waste_ratio == pytest.approx(1 / 9)


def test_tp_dividing_the_healthy_gpus_wastes_nothing():
    f = fragmentation(64, 0, 16)
    assert f.idle_gpus == 0 and f.waste_ratio == 0 and f.groups == 4
    assert fragmentation(72, 8, 16).idle_gpus == 0  # 64 healthy: exactly four groups


def test_tp_larger_than_the_domain_idles_every_healthy_gpu():
    f = fragmentation(36, 2, 64)
    assert f.groups == 0 and f.idle_gpus == 34


def test_tp_equal_to_the_domain():
    assert fragmentation(72, 0, 72).idle_gpus == 0
    assert fragmentation(72, 1, 72).idle_gpus == 71  # one failure strands the rest


def test_all_failed_and_tp_one():
    assert fragmentation(8, 8, 4).idle_gpus == 0 and fragmentation(8, 8, 4).healthy_gpus == 0
    assert fragmentation(8, 3, 1).idle_gpus == 0


@pytest.mark.parametrize("args, name", [((0, 0, 16), "domain_gpus"), ((32, 33, 16), "failed_gpus"),
                                        ((32, -1, 16), "failed_gpus"), ((32, 1, 0), "tp"),
                                        ((32.5, 1, 16), "domain_gpus")])
def test_fragmentation_rejects(args, name):
    with pytest.raises(ValueError, match=name):
        fragmentation(*args)


# -- fault rates ------------------------------------------------------------------------------

def test_trace_conversions():
    assert gpu_fault_probability(0.0233) == pytest.approx(0.0029426, abs=1e-7)
    assert convert_node_rate(0.0233) == pytest.approx(0.011719, abs=1e-6)
    assert round(convert_node_rate(0.0722), 4) == 0.0368  # the paper prints 3.67%
    assert convert_node_rate(0.0722, 8, 8) == 0.0722


def test_conversion_round_trip_and_ends():
    p = gpu_fault_probability(0.05, 4)
    assert 1 - (1 - p) ** 4 == pytest.approx(0.05)
    assert convert_node_rate(0.0) == 0.0 and convert_node_rate(1.0) == 1.0
    assert convert_node_rate(0.1, 4, 8) > 0.1  # a bigger node fails more often


@pytest.mark.parametrize("args, name", [((1.01,), "rate"), ((-0.01,), "rate"), ((0.1, 0, 4), "from_gpus"),
                                        ((0.1, 8, 0), "to_gpus")])
def test_conversion_rejects(args, name):
    with pytest.raises(ValueError, match=name):
        convert_node_rate(*args)


# -- the waste bound --------------------------------------------------------------------------

@pytest.mark.parametrize("r, p, k, stated", [(4, 0.0367, 2, 0.0754), (4, 0.0367, 3, 0.0028), (4, 0.0367, 4, 0.0001),
                                             (8, 0.0722, 2, 0.250), (8, 0.0722, 3, 0.0181),
                                             (8, 0.0722, 4, 0.0013)])
def test_table_7(r, p, k, stated):
    assert waste_bound(32, r, p, k).bound == pytest.approx(stated, abs=0.00005 if stated < 0.01 else 0.0005)


def test_bound_pieces():
    b = waste_bound(32, 4, 0.1, 2)
    assert b.cut_rate == pytest.approx(0.02) and b.gpus_lost_per_cut == 112
    assert b.bound == pytest.approx(28 * 0.02)


def test_each_hop_multiplies_by_the_rate_and_kp_is_not_pk():
    a, b = waste_bound(32, 8, 0.0722, 3).bound, waste_bound(32, 8, 0.0722, 4).bound
    assert b / a == pytest.approx(0.0722)
    assert waste_bound(32, 8, 0.0722, 3).bound != 2 * 24 * 3 * 0.0722


def test_bound_degenerate():
    assert waste_bound(4, 4, 0.5, 1).bound == 0  # a one-node group: a cut wastes nothing
    assert waste_bound(32, 4, 0.0, 3).bound == 0
    assert waste_bound(32, 4, 1.0, 3).bound == 56  # a bound above 1 says nothing


def test_corrected_worst_case():
    """Each cut counted once, charged N_t GPUs: (N_t / R)(1 - P_s) P_s^K; 0.14% at p99, R = 8, K = 3."""
    b = waste_bound(32, 8, 0.0722, 3)
    assert b.worst_case == pytest.approx(4 * (1 - 0.0722) * 0.0722 ** 3, rel=1e-12)
    assert round(100 * b.worst_case, 2) == 0.14 and b.bound / b.worst_case == pytest.approx(48 / 4 / 0.9278)
    assert waste_bound(32, 4, 0.0, 3).worst_case == 0 and waste_bound(32, 4, 1.0, 3).worst_case == 0
    assert waste_bound(4, 4, 0.5, 1).worst_case == 0  # one-node groups: every remainder is zero


def test_the_two_readings_of_the_node_rate():
    """Independent GPU faults: a 4-GPU node fails 3.68% of the time at p99; host-level faults: 7.22%.
    The R = 4, K = 3 bound goes from 0.28% to about 2.1%."""
    independent = waste_bound(32, 4, convert_node_rate(0.0722, 8, 4), 3).bound
    host_level = waste_bound(32, 4, 0.0722, 3).bound
    assert round(100 * independent, 2) == 0.28 and round(100 * host_level, 1) == 2.1


@pytest.mark.parametrize("r, k", [(4, 5), (8, 9), (1, 2)])
def test_hops_are_at_most_the_gpus_per_node(r, k):
    with pytest.raises(ValueError, match=f"hops must be a whole number in 1..{r}, got {k}"):
        waste_bound(32 if r > 1 else 4, r, 0.1, k)
    assert waste_bound(32 if r > 1 else 4, r, 0.1, r).hops == r  # K = R: allowed


@pytest.mark.parametrize("args, name", [((32, 4, 0.1, 0), "hops"), ((30, 4, 0.1, 2), "tp must be a multiple"),
                                        ((32, 4, 1.2, 2), "node_rate"), ((32, 4, -0.2, 2), "node_rate"),
                                        ((0, 4, 0.1, 2), "tp"), ((32, 0, 0.1, 2), "gpus_per_node")])
def test_bound_rejects(args, name):
    with pytest.raises(ValueError, match=name):
        waste_bound(*args)


# -- ToR wiring --------------------------------------------------------------------------------

def test_tor_wiring_four_by_four():
    a, b = tor_wiring(4, 4, 4, "in-order"), tor_wiring(4, 4, 4, "sub-line")
    assert (a.tp_groups_across_tors, a.dp_groups_across_tors) == (0, 4)
    assert (b.tp_groups_across_tors, b.dp_groups_across_tors) == (4, 0)


@pytest.mark.parametrize("tors, r, g", [(4, 4, 4), (2, 8, 2), (3, 6, 3), (8, 8, 4), (4, 2, 2)])
def test_tor_wiring_equals_chapter_3_placement(tors, r, g):
    """Where a TP group fits under a ToR, in-order is TP-innermost, sub-line DP-innermost (for g = tors)."""
    groups = tors * r // g
    a = tor_wiring(tors, r, g, "in-order")
    ch3 = placement(g, 1, groups, r, order="tp,pp,dp", packing="ranks")
    assert (a.tp_groups_across_tors, a.dp_groups_across_tors) == (ch3.tp_groups_split, ch3.dp_groups_crossing)
    if g == tors:
        b = tor_wiring(tors, r, g, "sub-line")
        ch3 = placement(g, 1, groups, r, order="dp,tp,pp", packing="ranks")
        assert (b.tp_groups_across_tors, b.dp_groups_across_tors) == (ch3.tp_groups_split, ch3.dp_groups_crossing)


@pytest.mark.parametrize("g, dp_across, tors_per_dp_group", [(2, 2, 2), (4, 0, 1), (8, 0, 1), (1, 1, 4)])
def test_sub_line_dp_peers_share_a_tor_only_for_whole_rows(g, dp_across, tors_per_dp_group):
    """Four ToRs of four nodes: DP peers share a ToR only when a TP group spans whole rows (g = 4, 8);
    a half-row group (g = 2) spreads each DP group over two ToRs."""
    w = tor_wiring(4, 4, g, "sub-line")
    assert w.dp_groups_across_tors == dp_across
    line = [(p % 4) * 4 + p // 4 for p in range(16)]
    spans = {len({line[j + i * g] // 4 for i in range(16 // g)}) for j in range(g)}
    assert spans == {tors_per_dp_group}


def test_tor_wiring_one_tor_and_rejects():
    w = tor_wiring(1, 8, 4, "sub-line")
    assert w.tp_groups_across_tors == 0 and w.dp_groups_across_tors == 0
    with pytest.raises(ValueError, match="group_nodes"):
        tor_wiring(4, 4, 3)
    with pytest.raises(ValueError, match="wiring"):
        tor_wiring(4, 4, 4, "diagonal")
    with pytest.raises(ValueError, match="tors"):
        tor_wiring(0, 4, 4)


def test_alignment_radius():
    assert alignment_fault_radius(8, 4, False) == 8 and alignment_fault_radius(8, 4, True) == 32
    with pytest.raises(ValueError, match="nodes_per_tor"):
        alignment_fault_radius(8, 0, True)


# -- link budget ------------------------------------------------------------------------------

def test_link_budget_source_numbers():
    b = link_budget()
    assert round(b.light_left, 2) == 0.47 and round(db_to_fraction(4.0), 2) == 0.40
    assert round(b.switch_power_share, 2) == 0.27 and b.energy_pj_per_bit == pytest.approx(15.0)
    assert b.speedup == pytest.approx(12.5)


def test_three_db_is_about_half_and_zero_loss_is_all():
    assert db_to_fraction(0) == 1.0 and db_to_fraction(3.0) == pytest.approx(0.501, abs=1e-3)
    assert link_budget(switch_w=12.0).switch_power_share == 1.0  # switch equal to the module: allowed


@pytest.mark.parametrize("kwargs, name", [(dict(loss_db=-1), "loss_db"), (dict(module_w=0), "module_w"),
                                          (dict(switch_w=13), "switch_w"), (dict(rate_gbps=0), "rate_gbps"),
                                          (dict(switch_s=0), "switch_s"), (dict(reference_s=-1), "reference_s")])
def test_link_budget_rejects(kwargs, name):
    with pytest.raises(ValueError, match=name):
        link_budget(**kwargs)


# -- the synthetic trace ------------------------------------------------------------------------

def test_synthetic_trace_matches_its_three_numbers():
    t = synthetic_fault_trace()
    assert t.mean_pct == pytest.approx(2.33, abs=1e-3)
    assert t.median_pct == pytest.approx(1.67, abs=0.01)
    assert t.p99_pct == pytest.approx(7.22, abs=0.02)
    assert t.days.size == 348 * 24 and (t.faulty_pct > 0).all()
    assert np.array_equal(t.faulty_pct, synthetic_fault_trace().faulty_pct)  # seeded


def test_synthetic_trace_rejects():
    with pytest.raises(ValueError, match="median_pct"):
        synthetic_fault_trace(mean_pct=1.0, median_pct=1.67)
    with pytest.raises(ValueError, match="p99_pct"):
        synthetic_fault_trace(p99_pct=1.0)
