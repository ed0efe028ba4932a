"""Unit tests for chapter 4's models: thresholds at equality, degenerate inputs, errors naming the argument."""
from __future__ import annotations

import math

import pytest

from clustermath.fabric_designs.choice import (
    DEFAULTS, PATTERNS, choose_fabric, decision_summary, leaders_of, rail_only_leads, rank_after_each_change,
)
from clustermath.fabric_designs.designs import (
    DESIGNS, MATRIX_ROWS, TABLE2_STATED, clos_max_gpus, clos_ports, clos_switches, clos_tiers, hpn_scale,
    megascale_tor_set, meta_zone, spine_cost, table2_row, tiers_for, tpu_v4_machine,
)
from clustermath.fabric_designs.incast import bdp_bytes, ecn_bound, incast, queue_trace
from clustermath.fabric_designs.load_balance import expected_idle, hash_flows, polarized_loads, queue_reduction_pct
from clustermath.fabric_designs.redundancy import (
    dual_tor, host_availability_for, interruption_budget, slice_goodput, slice_intact, uplink_headroom,
)


def test_matrix_has_every_row_for_every_design():
    assert set(DESIGNS) == {"meta", "hpn", "megascale", "tpu", "rail_only"}
    for design in DESIGNS.values():
        for row in MATRIX_ROWS:
            assert getattr(design, row)


def test_hpn_chain_at_51_2t_and_102_4t():
    s = hpn_scale()
    assert (s.gpus_per_tor, s.gpus_per_tor_pair, s.gpus_per_segment) == (64, 128, 1024)
    assert (s.gpus_plain_pod, s.gpus_dual_tor_pod) == (2048, 4096)  # HPN's "2K" and "4K"
    assert (s.gpus_dual_plane, s.gpus_per_pod, s.gpus_per_building) == (8192, 15360, 15000)
    assert (s.agg_down_ports, s.agg_up_ports, s.core_ports_freed_pct, s.agg_ports_moved_pct) == (120, 8, 87.5, 43.75)
    big = hpn_scale(102.4, 400)
    # every tier built from the 102.4T chip: 240 ports down reach 30 segments, not the source's 15
    assert (big.gpus_per_tor_pair, big.gpus_per_segment, big.segments_per_pod) == (256, 2048, 30)
    assert big.gpus_per_pod == 61440 and big.pod_power_mw == pytest.approx(73.728)
    as_source = hpn_scale(102.4, 400, segments=15)
    assert as_source.gpus_per_pod == 30720 and as_source.pod_power_mw == pytest.approx(36.864)
    assert hpn_scale(102.4, 800).gpus_per_pod == big.gpus_per_pod // 2  # 800G halves it
    assert hpn_scale(51.2, 800).gpus_per_pod == s.gpus_per_pod // 2
    assert hpn_scale(core_ratio=1).core_ports_freed_pct == 0.0  # 1:1 turns no port down


def test_hpn_binding_has_no_slack():
    # HPN's own pod at the rounded 1.2 kW draws 18.432 MW: over one 18 MW building, so power binds
    s = hpn_scale()
    assert s.buildings_needed == pytest.approx(1.024) and s.binding == "building power"
    # at exactly one building's power the ports still bind; one watt more and the building does
    assert hpn_scale(building_mw=18.432).binding == "switch ports"
    assert hpn_scale(building_mw=18.431999).binding == "building power"
    assert hpn_scale(51.2, 800).binding == "switch ports"


def test_other_scale_units():
    assert meta_zone() == (3072, 24576)
    assert megascale_tor_set() == (64, 512)
    assert tpu_v4_machine() == (64, 4096, 1024)
    assert tpu_v4_machine(ocs_count=0) == (0, 0, 0)


def test_clos_thresholds_at_equality():
    assert clos_max_gpus(128, 1) == 128 and clos_max_gpus(128, 2) == 8192 and clos_max_gpus(128, 3) == 524288
    assert clos_tiers(128, 128) == 1 and clos_tiers(129, 128) == 2
    assert clos_tiers(8192, 128) == 2 and clos_tiers(8193, 128) == 3
    assert clos_tiers(0, 128) == 0 and clos_tiers(1, 128) == 0 and clos_ports(0, 128) == 0
    assert clos_switches(32768, 128) == 1280 and clos_ports(32768, 128) == 163840
    assert tiers_for(15360) == 3 and tiers_for(15360, 102.4) == 2 and tiers_for(8192, 51.2, 800) == 3


@pytest.mark.parametrize("key", sorted(TABLE2_STATED))
def test_table2_savings_reproduce(key):
    assert round(table2_row(*key).saving_pct) == TABLE2_STATED[key]


def test_spine_cost_worked_example():
    c = spine_cost()
    assert (c.switches_removed, c.ports_removed) == (1024, 131072)
    assert c.cost_musd == pytest.approx(117.047296) and c.power_mw == pytest.approx(3.538944)
    assert spine_cost(10, 10).ports_removed == 0
    assert table2_row(32768, 128).ports_removed == 131072


def test_incast_worked_example_and_degenerate():
    i = incast()
    assert (i.excess_senders, i.excess_gbytes_per_s, i.window_us) == (15, 750.0, 72.0)
    assert i.queued_mb == pytest.approx(54.0)
    assert not i.fits_shallow_port and i.fits_shallow_chip and i.fits_deep_port
    assert incast(1).queued_mb == 0.0 and incast(0).queued_mb == 0.0 and incast(1).admission_bound_mb == 0.0
    assert bdp_bytes(400, 22) == pytest.approx(1.1e6)
    assert ecn_bound(12, 32) == 0.375 and ecn_bound(100, 128) == 0.78125
    t, q = queue_trace()
    assert t[-1] == 72.0 and q[-1] == pytest.approx(54.0)
    assert queue_trace(admission=True)[1].max() == pytest.approx(1.1)
    assert queue_trace(cap_mb=0.78125)[1].max() == 0.78125


def test_incast_fits_at_equality():
    # 2 senders at 400G for 2 µs + 0: 50 GB/s × 2 µs = 0.1 MB, exactly a 0.1 MB port share
    assert incast(2, 400, 2, 0, chip_mb=12.8, chip_ports=128).fits_shallow_port


def test_idle_uplinks_formula_and_simulation():
    assert expected_idle(16, 16) == pytest.approx(5.697, abs=1e-3)
    assert expected_idle(16, 64) == pytest.approx(0.257, abs=1e-3)
    assert expected_idle(16, 256) < 1e-5
    assert expected_idle(16, 0) == 16 and expected_idle(1, 5) == 0.0
    r = hash_flows(16, 16, 4000, seed=1)
    assert abs(r.simulated_idle - r.formula_idle) < 0.1
    assert hash_flows(16, 16, 100, seed=3) == hash_flows(16, 16, 100, seed=3)
    assert hash_flows(16, 1000, 1000).busiest_over_mean == pytest.approx(1.2, abs=0.05)
    zero = hash_flows(4, 0, 10)
    assert zero.simulated_idle == 4 and zero.busiest_over_mean == 0.0


def test_polarization():
    same = polarized_loads(8, 64)
    assert (same > 0).sum() <= 8 and same.sum() == 64
    assert (polarized_loads(8, 64, salted=True) > 0).sum() > 8
    assert queue_reduction_pct(267, 20) == pytest.approx(92.51, abs=0.01)


def test_slices_and_spare_cubes():
    assert slice_intact(256, 0.995) == pytest.approx(0.277, abs=1e-3)
    assert slice_intact(1024, 0.995) == pytest.approx(0.0059, abs=1e-4)
    assert slice_intact(1024, 0.999) == pytest.approx(0.359, abs=1e-3)
    assert slice_intact(0, 0.5) == 1.0 and slice_intact(10, 1.0) == 1.0
    assert host_availability_for(0.5, 1024) ** 1024 == pytest.approx(0.5)
    g = slice_goodput(0.995, 16)
    assert g.ocs_pct == pytest.approx(75.1, abs=0.1) and g.fixed_pct == pytest.approx(27.7, abs=0.1)
    assert slice_goodput(1.0, 16).ocs_pct == 100.0 and slice_goodput(0.0, 16).ocs_pct == 0.0
    whole = slice_goodput(0.999, 64)
    assert whole.ocs_pct == pytest.approx(whole.fixed_pct)  # the whole machine: an OCS cannot help


def test_headroom_dual_tor_budget():
    h = uplink_headroom()
    assert (h.uplinks, h.failures_tolerated, h.extra_pct) == (18, 2, 12.5)
    assert uplink_headroom(16, 1.0).failures_tolerated == 0 and uplink_headroom(0).extra_pct == 0.0
    assert uplink_headroom(8, 1.125).uplinks == 9  # 8 × 1.125 = 9 exactly
    d = dual_tor()
    assert (d.host_ports, d.loss_one_link_pct, d.backup_gpus) == (16, 6.25, 64)
    b = interruption_budget()
    assert b.spacing_h == pytest.approx(2.7811, abs=1e-4) and b.per_interruption_min == pytest.approx(16.69, abs=0.01)
    assert b.lost_allowed_min == pytest.approx(7776) and b.lost_allowed_min == pytest.approx(60 * b.lost_allowed_h)
    assert interruption_budget(effective_pct=100).per_interruption_min == 0.0


def test_decision_procedure():
    c = choose_fabric()
    assert c.last == "rail_only"
    assert ("gpus_3y", 65536, 1, 0) in rank_after_each_change("rail_only")  # first, alone
    assert ("can_fork", True, 1, 0) in rank_after_each_change("meta")
    lead = rail_only_leads(50.0)
    assert (lead.combinations, lead.alone, lead.shared) == (3840, 0, 96)
    assert choose_fabric(**{**DEFAULTS, "moe_pct": 10.0}).scores["rail_only"] == c.scores["rail_only"] - 4
    assert choose_fabric(**{**DEFAULTS, "moe_pct": 9.99}).scores["rail_only"] == c.scores["rail_only"]


@pytest.mark.parametrize("call, name", [
    (lambda: incast(-1), "senders"),
    (lambda: incast(16, chip_ports=0), "chip_ports"),
    (lambda: ecn_bound(12, 0), "ports"),
    (lambda: expected_idle(0, 5), "links"),
    (lambda: expected_idle(16, -1), "flows"),
    (lambda: hash_flows(16, 16, 0), "trials"),
    (lambda: slice_intact(256, 1.01), "availability"),
    (lambda: slice_goodput(1.5), "availability"),
    (lambda: slice_goodput(0.99, 65), "slice_cubes"),
    (lambda: host_availability_for(0.0, 10), "target"),
    (lambda: hpn_scale(0), "chip_tbps"),
    (lambda: hpn_scale(51.3), "chip_tbps"),
    (lambda: hpn_scale(51.2, 0), "nic_gbps"),
    (lambda: clos_tiers(10, 0), "radix"),
    (lambda: clos_tiers(-1, 8), "gpus"),
    (lambda: table2_row(1000, 128), "gpus"),
    (lambda: spine_cost(10, 11), "rail_switches"),
    (lambda: uplink_headroom(16, 0.9), "ratio"),
    (lambda: dual_tor(nics=0), "nics"),
    (lambda: choose_fabric(chip_tbps=25.6), "chip_tbps"),
    (lambda: choose_fabric(moe_pct=101), "moe_pct"),
    (lambda: tpu_v4_machine(ocs_ports=0), "ocs_ports"),
])
def test_errors_name_the_argument(call, name):
    with pytest.raises(ValueError, match=rf"^{name} "):
        call()


def test_failure_stepper():
    from clustermath.fabric_designs.redundancy import FAILURE_DESIGNS, failure_step
    speeds = {d: [failure_step(i, s).job_speed_pct for s in range(4)] for i, d in enumerate(FAILURE_DESIGNS)}
    assert speeds["meta"] == [100.0, 100.0, 100.0, 0.0]
    assert speeds["hpn"] == [100.0, 93.75, 100.0, 93.75]
    assert not failure_step(2, 1).running and failure_step(3, 3).running
    with pytest.raises(ValueError, match="^design "):
        failure_step(4, 0)
    with pytest.raises(ValueError, match="^step "):
        failure_step(0, -1)


def test_transfer_stepper():
    from clustermath.fabric_designs.designs import transfer_step
    ends = [transfer_step(i, 8) for i in range(4)]
    assert [e.network_links for e in ends] == [4, 2, 4, 0]
    assert [e.total_links for e in ends] == [4, 3, 4, 3]
    assert all(e.done for e in ends) and not transfer_step(0, 3).done
    assert transfer_step(1, 1).link == "NVLink" and transfer_step(0, 0).link == "start"
    with pytest.raises(ValueError, match="^pattern "):
        transfer_step(4, 0)


def test_link_loads():
    from clustermath.fabric_designs.load_balance import link_loads
    ecmp = link_loads(16, 16, 0)
    assert ecmp.sum() == 16 and (ecmp == 0).sum() > 0
    assert (link_loads(16, 16, spray=True) == 1.0).all()
    assert link_loads(4, 0).sum() == 0


# -- ties in the decision procedure: shown as ties, never settled by the order of PATTERNS -------------

def test_defaults_tie_hpn_and_torus_for_first():
    c = choose_fabric()
    assert c.scores == {"meta": 1, "hpn": 2, "torus": 2, "rail_only": 0}
    assert c.leaders == ("hpn", "torus") and c.first is None  # no pattern is first alone
    assert c.trailers == ("rail_only",) and c.last == "rail_only"
    assert (c.rank("hpn"), c.rank("torus"), c.rank("meta"), c.rank("rail_only")) == (1, 1, 3, 4)


def test_leaders_keep_every_tied_pattern_whatever_the_order():
    assert leaders_of({"meta": 0, "hpn": 0, "torus": -1, "rail_only": 0}) == ("meta", "hpn", "rail_only")
    assert leaders_of({"meta": -5, "hpn": -5, "torus": -5, "rail_only": -5}) == PATTERNS
    assert leaders_of({"meta": 1, "hpn": 0, "torus": 0, "rail_only": 0}) == ("meta",)


def test_exercise_6_case_ties_hpn_and_rail_only_at_20_percent_moe():
    case = dict(gpus_now=16_384, gpus_3y=131_072, power_mw=200.0, shared_hosts=False, own_stack=False,
                can_fork=False, cost_sensitive=True, chip_tbps=51.2)
    dense, moe = choose_fabric(**case, moe_pct=0.0), choose_fabric(**case, moe_pct=20.0)
    assert dense.first == "rail_only" and dense.scores["rail_only"] - dense.scores["hpn"] == 4
    assert moe.leaders == ("hpn", "rail_only") and moe.first is None and moe.scores["hpn"] == 0


def test_three_way_ties_are_reported_with_their_size():
    rows = {(n, v): (rank, tied) for n, v, rank, tied in rank_after_each_change("meta")}
    assert rows[("gpus_now", 16_384)] == (1, 2) and rows[("gpus_3y", 24_576)] == (1, 2)
    assert rows[("can_fork", True)] == (1, 0)


def test_decision_summary_names_a_tie_as_a_tie():
    s = decision_summary()
    assert s.first == "tie: HPN-style dual-plane = torus + OCS" and s.last == "rail-only"
    assert s.risk_of_first.count(" | ") == 1
    assert decision_summary(gpus_3y=65_536).first == "rail-only"


def test_the_decision_panel_marks_every_tied_bar():
    """The picture: each tied leader coloured as a leader and labelled "tie"; the text names them all."""
    from clustermath.views import fabric_designs as views
    from clustermath.views.base import CORRECT_COLOUR, LIMIT_COLOUR
    from matplotlib.colors import to_hex
    from matplotlib.figure import Figure

    ax = Figure(figsize=(6.4, 3.6)).add_subplot()
    update = views.view_decision(ax)
    update({**DEFAULTS})
    bars = {p: b for p, b in zip(PATTERNS, ax.patches)}
    assert to_hex(bars["hpn"].get_facecolor()) == to_hex(bars["torus"].get_facecolor()) == to_hex(CORRECT_COLOUR)
    assert to_hex(bars["rail_only"].get_facecolor()) == to_hex(LIMIT_COLOUR)
    labels = [t.get_text() for t in ax.texts]
    assert "+2  tie" in labels and labels.count("+2  tie") == 2 and "+0" in labels
    text = "\n".join(labels)
    assert "tied first at +2: HPN-style dual-plane, torus + OCS (no rule breaks the tie)" in text
    update({**DEFAULTS, "gpus_3y": 65_536})  # rail-only first alone; Meta-style and torus tie for last
    labels = [t.get_text() for t in ax.texts]
    assert "+2" in labels and labels.count("-1  tie") == 2 and any("first: rail-only" in x for x in labels)


def test_the_decision_table_and_texts_name_ties():
    from clustermath.views import fabric_designs as views
    assert "tie: HPN-style dual-plane = torus + OCS" in views.decision_explorer().report()
    moves = views.moves_text("meta")
    assert "GPUs today → 16,384: first, tied with 2 other patterns" in moves
    assert "team can change hash and library → yes: first, alone" in moves


def test_checkpoint_burst():
    from clustermath.fabric_designs.designs import checkpoint_burst
    b = checkpoint_burst(16_000, 4, 10)
    assert (b.total_tb, b.rate_tbytes_per_s) == (64.0, 6.4) and b.pause_at_7tb_s == pytest.approx(64 / 7)
    assert checkpoint_burst(0, 4, 1).total_tb == 0.0
    with pytest.raises(ValueError, match="^pause_s "):
        checkpoint_burst(10, 1, 0)


def test_queue_stepper_caps_each_port():
    from clustermath.fabric_designs.incast import queue_at
    start, mid, end = queue_at(0), queue_at(10), queue_at(80)
    assert (start.deep_mb, start.shallow_paused, start.rate_cut) == (0.0, False, False)
    assert mid.deep_mb == pytest.approx(7.5) and mid.shallow_mb == 0.78125 and mid.shallow_paused
    assert mid.admission_mb == pytest.approx(1.1)
    assert end.deep_mb == pytest.approx(54.0) and end.rate_cut and queue_at(72).rate_cut
    assert not queue_at(71.9).rate_cut
    with pytest.raises(ValueError, match="^time_us "):
        queue_at(-1)


def test_the_replicas_slider_is_log_scaled_with_the_chapters_values_as_stops():
    """34 stops instead of 1,023 (each a frame of the static page); the default 512, the chapter's
    worked split (TP8 × PP8 × DP512) and every power of two from 2 to 1,024 stay reachable."""
    import ipywidgets as W
    from clustermath.views import fabric_designs as views

    e = views.traffic_explorer()
    dp = e.controls["dp"]
    values = [v for _, v in dp.options]
    assert isinstance(dp, W.SelectionSlider) and dp.value == 512 and dp.label == "512"
    assert values[0] == 2 and values[-1] == 1024 and len(values) == 34
    assert {2 ** k for k in range(1, 11)} <= set(values)
    assert max(b / a for a, b in zip(values, values[1:])) <= 1.5
    assert "dp=512" in e.report()
