"""Unit tests for chapter 4's models: thresholds at equality, degenerate inputs, errors naming the argument."""
from __future__ import annotations

import math

import pytest

from clustermath.fabric_designs.choice import DEFAULTS, choose_fabric, rail_only_ever_first, rank_after_each_change
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
    assert (s.gpus_dual_plane, s.gpus_per_pod, s.gpus_per_building) == (8192, 15360, 15000)
    assert s.binding == "switch ports"  # 18.4 MW is inside the 5% slack of one 18 MW building
    big = hpn_scale(102.4, 400)
    assert (big.gpus_per_tor_pair, big.gpus_per_segment, big.gpus_per_pod) == (256, 2048, 30720)
    assert big.pod_power_mw == pytest.approx(36.864) and big.binding == "building power"
    assert hpn_scale(102.4, 800).gpus_per_pod == hpn_scale(51.2, 400).gpus_per_pod  # 800G halves it back


def test_hpn_binding_at_the_slack_edge():
    # exactly 5% over one building still counts as sized to it
    s = hpn_scale(building_mw=15360 * 1.2 / 1000 / 1.05)
    assert s.binding == "switch ports"
    assert hpn_scale(building_mw=17.0).binding == "building power"


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
    assert interruption_budget(effective_pct=100).per_interruption_min == 0.0


def test_decision_procedure():
    c = choose_fabric()
    assert c.last == "rail_only"
    assert ("gpus_3y", 65536, 1) in rank_after_each_change("rail_only")
    assert ("can_fork", True, 1) in rank_after_each_change("meta")
    assert not rail_only_ever_first(50.0)
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
