"""Tests added to kill the mutants that chapter 4's tests let live (see tools/mutants/REPORT.md).

Chapter 4's models: ``fabric_designs``, ``fabric_choice``, ``incast``, ``load_balance``, ``redundancy``.
"""
from __future__ import annotations

import pytest

from clustermath.fabric_designs.choice import DEFAULTS, choose_fabric, rail_only_leads, rank_after_each_change
from clustermath.fabric_designs.designs import (
    checkpoint_burst, clos_max_gpus, clos_ports, clos_switches, clos_tiers, hpn_scale, megascale_tor_set, meta_zone,
    spine_cost, table2_row, tier_counts, tiers_for, tpu_v4_machine, transfer_step,
)
from clustermath.fabric_designs.incast import bdp_bytes, ecn_bound, incast, queue_at, queue_trace
from clustermath.fabric_designs.load_balance import (
    expected_idle, hash_flows, link_loads, polarized_loads, queue_reduction_pct,
)
from clustermath.fabric_designs.redundancy import (
    dual_tor, failure_step, host_availability_for, interruption_budget, slice_goodput, slice_intact,
    uplink_headroom,
)

from argument_errors import assert_errors_name_their_argument


# function, valid keyword arguments, {argument: what its ValueError says the argument must be}
N, W = "a number in", "a whole number in"
MESSAGES = [
    (bdp_bytes, dict(port_gbps=400, rtt_us=22),
     dict(port_gbps=f"{N} [0, inf) Gbps", rtt_us=f"{N} [0, inf) µs")),
    (incast, {}, dict(senders=f"{W} 0..inf senders", port_gbps=f"{N} [0, inf) Gbps", rtt_us=f"{N} [0, inf) µs",
                      notify_us=f"{N} [0, inf) µs", chip_mb=f"{N} [0, inf) MB", chip_ports=f"{W} 1..inf ports",
                      deep_ms=f"{N} [0, inf) ms")),
    (queue_trace, {}, dict(senders=f"{W} 0..inf senders", cap_mb=f"{N} [0, inf] MB", points=f"{W} 2..inf")),
    (ecn_bound, dict(buffer_mb=12, ports=32), dict(buffer_mb=f"{N} [0, inf) MB", ports=f"{W} 1..inf ports")),
    (expected_idle, dict(links=16, flows=16),
     dict(links=f"{W} 1..4,096 uplinks", flows=f"{W} 0..65,536 flows")),
    (hash_flows, dict(trials=10), dict(links=f"{W} 1..4,096 uplinks", flows=f"{W} 0..65,536 flows",
                                      trials=f"{W} 1..100,000", seed=f"{W} 0..inf")),
    (polarized_loads, {}, dict(links=f"{W} 1..256 uplinks", flows=f"{W} 0..65,536 flows", seed=f"{W} 0..inf")),
    (link_loads, {}, dict(links=f"{W} 1..4,096 uplinks", flows=f"{W} 0..65,536 flows", seed=f"{W} 0..inf")),
    (queue_reduction_pct, dict(before_kb=267, after_kb=20),
     dict(before_kb=f"{N} (0, inf) KB", after_kb=f"{N} [0, inf) KB")),
    (slice_intact, dict(hosts=256, availability=0.995), dict(hosts=f"{W} 0..inf hosts", availability=f"{N} [0, 1]")),
    (host_availability_for, dict(target=0.5, hosts=10), dict(target=f"{N} (0, 1]", hosts=f"{W} 1..inf hosts")),
    (slice_goodput, {}, dict(availability=f"{N} [0, 1]", slice_cubes=f"{W} 1..64 cubes", cubes=f"{W} 1..4,096 cubes",
                             hosts_per_cube=f"{W} 1..inf hosts")),
    (uplink_headroom, {}, dict(downlinks=f"{W} 0..inf ports", ratio=f"{N} [1, inf)")),
    (dual_tor, {}, dict(nics=f"{W} 1..inf", ports_per_nic=f"{W} 1..inf ports", tors=f"{W} 0..inf",
                        backup_ports_per_tor=f"{W} 0..inf ports")),
    (interruption_budget, {}, dict(effective_pct=f"{N} [0, 100] %")),
    (failure_step, {}, dict(design=f"{W} 0..3", step=f"{W} 0..3")),
    (hpn_scale, {}, dict(chip_tbps=f"{N} (0, inf) Tbps", nic_gbps=f"{W} 1..inf Gbps", rails=f"{W} 1..inf",
                         core_ratio=f"{W} 1..inf", segments=f"{W} 0..inf", building_mw=f"{N} (0, inf) MW",
                         kw_per_gpu=f"{N} (0, inf) kW")),
    (checkpoint_burst, dict(gpus=16_000, gb_per_gpu=4, pause_s=10),
     dict(gpus=f"{W} 0..inf GPUs", gb_per_gpu=f"{N} [0, inf) GB", pause_s=f"{N} (0, inf) s")),
    (queue_at, {}, dict(time_us=f"{N} [0, inf) µs", senders=f"{W} 0..inf senders", port_gbps=f"{N} [0, inf) Gbps",
                        rtt_us=f"{N} [0, inf) µs", notify_us=f"{N} [0, inf) µs")),
    (meta_zone, {}, dict(racks=f"{W} 1..inf", gpus_per_rack=f"{W} 1..inf", pods=f"{W} 1..inf")),
    (megascale_tor_set, {}, dict(chip_tbps=f"{N} (0, inf) Tbps", tors=f"{W} 1..inf", gpus_per_server=f"{W} 1..inf",
                                 split_gbps=f"{W} 1..400 Gbps")),
    (tpu_v4_machine, {}, dict(ocs_count=f"{W} 0..inf", ocs_ports=f"{W} 1..inf", faces=f"{W} 1..inf",
                              links_per_face=f"{W} 1..inf", chips_per_cube=f"{W} 1..inf",
                              chips_per_host=f"{W} 1..inf")),
    (clos_max_gpus, dict(radix=128, tiers=2), dict(radix=f"{W} 2..inf ports", tiers=f"{W} 1..inf")),
    (clos_tiers, dict(gpus=10, radix=8), dict(gpus=f"{W} 0..inf GPUs", radix=f"{W} 2..inf ports")),
    (clos_ports, dict(gpus=10, radix=8), dict(gpus=f"{W} 0..inf", radix=f"{W} 2..inf ports")),
    (clos_switches, dict(gpus=10, radix=8), dict(gpus=f"{W} 0..inf GPUs", radix=f"{W} 2..inf ports")),
    (table2_row, dict(gpus=32_768, radix=128),
     dict(gpus=f"{W} 1..inf GPUs", radix=f"{W} 4..inf ports", hb_domain=f"{W} 1..inf GPUs")),
    (spine_cost, {}, dict(clos_switches=f"{W} 0..inf", rail_switches=f"{W} 0..1,280", radix=f"{W} 1..inf ports")),
    (tiers_for, dict(gpus=100), dict(gpus=f"{W} 0..inf GPUs", chip_tbps=f"{N} (0, 1e+06] Tbps",
                                     nic_gbps=f"{W} 1..inf Gbps")),
    (tier_counts, dict(gpus=100), dict(gpus=f"{W} 0..inf GPUs")),
    (transfer_step, {}, dict(pattern=f"{W} 0..3", step=f"{W} 0..8")),
    (choose_fabric, {}, dict(gpus_now=f"{W} 1..inf GPUs", gpus_3y=f"{W} 1..inf GPUs", power_mw=f"{N} (0, inf) MW",
                             moe_pct=f"{N} [0, 100] %", shared_hosts="True or False (or 1 or 0)",
                             own_stack="True or False (or 1 or 0)", can_fork="True or False (or 1 or 0)",
                             cost_sensitive="True or False (or 1 or 0)", chip_tbps="one of [51.2, 102.4]")),
    (rank_after_each_change, dict(pattern="meta"), dict(pattern="one of ['meta', 'hpn', 'torus', 'rail_only']")),
]


@pytest.mark.parametrize("function, valid, expected", MESSAGES, ids=[f.__name__ for f, _, _ in MESSAGES])
def test_every_error_names_its_argument_range_and_unit(function, valid, expected):
    """Each ValueError names the argument that is wrong, its range and its unit (and no other argument's)."""
    assert_errors_name_their_argument(function, valid, expected)


# -- fabric_designs ------------------------------------------------------------------------------

def test_hpn_scale_every_field_at_51_2t():
    s = hpn_scale()
    assert (s.radix, s.gpus_per_tor, s.gpus_per_tor_pair, s.gpus_per_segment) == (128, 64, 128, 1_024)
    assert (s.segments_single_plane, s.segments_dual_plane, s.segments_per_pod) == (4, 8, 15)
    assert (s.gpus_dual_plane, s.gpus_per_pod, s.gpus_per_building) == (8_192, 15_360, 15_000)
    assert s.pod_power_mw == pytest.approx(18.432) and s.buildings_needed == pytest.approx(1.024)


def test_hpn_scale_follows_every_input():
    s = hpn_scale(102.4, 200, rails=4, core_ratio=3, building_mw=10, kw_per_gpu=2.0)
    assert (s.radix, s.gpus_per_tor, s.gpus_per_tor_pair, s.gpus_per_segment) == (256, 256, 512, 2_048)
    # 3:1 toward the core: 192 of 256 aggregation ports down, 4 ToRs a segment per plane: 48 segments
    assert (s.segments_single_plane, s.segments_dual_plane, s.segments_per_pod) == (16, 32, 48)
    assert (s.agg_down_ports, s.agg_up_ports, s.core_ports_freed_pct, s.agg_ports_moved_pct) == (192, 64, 50.0, 25.0)
    assert (s.gpus_plain_pod, s.gpus_dual_tor_pod) == (16_384, 32_768)
    assert (s.gpus_dual_plane, s.gpus_per_pod, s.gpus_per_building) == (65_536, 98_304, 5_000)
    assert s.pod_power_mw == pytest.approx(196.608) and s.buildings_needed == pytest.approx(19.6608)
    assert s.binding == "building power"
    assert hpn_scale(102.4, 200, rails=4, core_ratio=3, segments=2).gpus_per_pod == 4_096


def test_hpn_scale_degenerate_building_and_rounding():
    with pytest.raises(ValueError, match=r"^building_mw "):
        hpn_scale(building_mw=0)
    tiny = hpn_scale(building_mw=0.001)
    assert tiny.gpus_per_building == 0 and tiny.binding == "building power"
    assert hpn_scale(segments=0).gpus_per_pod == 0 and hpn_scale(segments=0).binding == "switch ports"
    # 2.2 MW / 1.1 kW is 1999.9999999999998 in floating point: still 2,000 GPUs
    assert hpn_scale(building_mw=2.2, kw_per_gpu=1.1).gpus_per_building == 2_000


def test_hpn_scale_smallest_chip_and_its_errors():
    tiny = hpn_scale(0.8, 400)  # two 400G ports: one GPU each side of a dual-ToR pair
    assert (tiny.radix, tiny.gpus_per_tor_pair, tiny.gpus_per_tor) == (2, 2, 1)
    with pytest.raises(ValueError, match=r"^chip_tbps must be a whole number \(>= 2\) of 400G ports, got 0.4$"):
        hpn_scale(0.4)
    with pytest.raises(ValueError, match=r"^chip_tbps must be a whole number \(>= 2\) of 400G ports, got 51.3$"):
        hpn_scale(51.3)
    with pytest.raises(ValueError, match=r"^nic_gbps must leave at least one GPU per ToR, got 800$"):
        hpn_scale(0.8, 800)


def test_other_scale_units_follow_their_inputs():
    assert meta_zone(2, 3, 5) == (6, 30)
    assert megascale_tor_set(51.2, 4, 2, 400) == (64, 128)
    assert megascale_tor_set(12.8, 3, 5, 100) == (64, 320)
    assert megascale_tor_set(0.8, 1, 1, 400) == (1, 1)  # one downlink, one server: the smallest set
    with pytest.raises(ValueError, match=r"^chip_tbps must give at least one downlink, got 0.4$"):
        megascale_tor_set(0.4)
    # a 400G port split into links faster than itself was blamed on chip_tbps; it is split_gbps's error
    with pytest.raises(ValueError, match=r"^split_gbps must be a whole number in 1..400 Gbps, got 800$"):
        megascale_tor_set(0.8, 1, 1, 800)
    assert megascale_tor_set(0.8, 1, 1, 400) == (1, 1)
    assert tpu_v4_machine(10, 20, 2, 5, 3, 2) == (20, 60, 30)
    assert tpu_v4_machine(1, 7, 1, 2, 3, 2) == (3, 9, 4)  # whole cubes and hosts only


def test_clos_counts_off_the_worked_example():
    assert clos_max_gpus(6, 2) == 18 and clos_max_gpus(7, 2) == 18 and clos_max_gpus(7, 1) == 6
    assert clos_ports(100, 8) == 500 and clos_switches(100, 8) == 63  # 3 tiers: 2 × 25 + 13 switches
    assert clos_switches(10, 8) == 5 and clos_ports(1, 8) == 0 and clos_switches(1, 8) == 0
    with pytest.raises(ValueError, match=r"^radix must be at least 4 to connect more than two GPUs in a Clos, got 2$"):
        clos_tiers(3, 2)
    assert clos_tiers(2, 2) == 1 and clos_ports(2, 2) == 2 and clos_switches(2, 2) == 1  # one 2-port switch


def test_table2_every_field():
    r = table2_row(32_768, 128)
    assert (r.gpus, r.radix, r.hb_domain) == (32_768, 128, 256)
    assert (r.clos_tiers, r.clos_switches, r.clos_ports) == (3, 1_280, 163_840)
    assert (r.rail_tiers, r.rail_switches, r.rail_ports) == (1, 256, 32_768)
    assert r.clos_cost_musd == pytest.approx(152.829952) and r.rail_cost_musd == pytest.approx(35.782656)
    assert r.saving_pct == pytest.approx(76.58662092624357)
    assert r.ports_removed == 131_072 and r.cost_removed_musd == pytest.approx(117.047296)
    assert r.power_removed_mw == pytest.approx(3.538944)
    small = table2_row(1_024, 8, hb_domain=8)
    assert (small.clos_tiers, small.clos_switches, small.clos_ports) == (5, 1_152, 9_216)
    assert (small.rail_tiers, small.rail_switches, small.rail_ports) == (3, 640, 5_120)
    assert small.saving_pct == pytest.approx(43.37056823700826)
    with pytest.raises(ValueError, match=r"^gpus must be a multiple of hb_domain=256, got 1000$"):
        table2_row(1_000, 128)


def test_spine_cost_follows_its_inputs():
    c = spine_cost(10, 3, 4)
    assert (c.switches_removed, c.ports_removed) == (7, 28)
    assert c.cost_musd == pytest.approx(28 * 893 / 1e6) and c.power_mw == pytest.approx(28 * 27 / 1e6)


def test_tiers_for_and_tier_counts():
    assert tiers_for(100, 1.6, 400) == 6 and tiers_for(10, 1.6, 400) == 3  # radix 4 exactly: allowed
    assert tiers_for(200, 51.2, 800) == 2 and tiers_for(10_000, 51.2, 100) == 2
    with pytest.raises(ValueError, match=r"^nic_gbps must leave a radix of at least 4 ports, got 400 on 1.2 Tbps$"):
        tiers_for(10, 1.2, 400)
    # each count at a GPU number where that generation's radix is exactly enough or one short
    rows = {g: tuple(vars(tier_counts(g)).values()) for g in (100, 2_000, 8_000, 8_400, 32_500, 33_000)}
    assert rows == {100: (100, 1, 2, 1, 1), 2_000: (2_000, 2, 2, 2, 2), 8_000: (8_000, 2, 3, 2, 2),
                    8_400: (8_400, 3, 3, 2, 3), 32_500: (32_500, 3, 3, 2, 3), 33_000: (33_000, 3, 3, 3, 3)}


TRANSFERS = {
    0: [("GPU 0, server A", "start", 0), ("leaf 0", "network", 1), ("spine", "network", 2),
        ("leaf 5", "network", 3), ("GPU 5, server B", "network", 4)],
    1: [("GPU 0, server A", "start", 0), ("GPU 5, server A", "NVLink", 0), ("rail-5 switch", "network", 1),
        ("GPU 5, server B", "network", 2)],
    2: [("GPU 0, server A", "start", 0), ("ToR1, rail 0", "network", 1), ("agg, plane 1", "network", 2),
        ("ToR1, rail 5", "network", 3), ("GPU 5, server B", "network", 4)],
    3: [("chip (0,0,0)", "start", 0), ("chip (1,0,0)", "ICI", 0), ("chip (2,0,0)", "ICI", 0),
        ("chip (2,1,0)", "ICI", 0)],
}


@pytest.mark.parametrize("pattern", sorted(TRANSFERS))
def test_transfer_step_walks_the_whole_path_and_stays_at_the_end(pattern):
    path = TRANSFERS[pattern]
    for step in range(9):
        s = transfer_step(pattern, step)
        at, link, network = path[min(step, len(path) - 1)]
        assert (s.step, s.at, s.link, s.network_links, s.total_links) == (step, at, link, network, len(path) - 1)
        assert s.done == (step >= len(path) - 1)


# -- fabric_choice: each rule at its threshold, every reason as printed --------------------------

def rules(**inputs) -> list[tuple[str, int, str]]:
    return list(choose_fabric(**{**DEFAULTS, **inputs}).rules)


def fired(**inputs) -> list[tuple[str, int]]:
    return [(pattern, points) for pattern, points, _ in rules(**inputs)]


def test_defaults_fire_four_rules_and_ties_keep_the_pattern_order():
    c = choose_fabric()
    assert c.rules == (
        ("hpn", 2, "fits one 51.2T segment (1,024 GPUs): one hop per rail"),
        ("meta", 2, "fits one full-bisection Meta pod (3,072 GPUs)"),
        ("torus", 2, "fits one torus machine (4,096 chips) and you own the stack"),
        ("meta", -1, "no team to change hash and library: QP scaling is out of reach"))
    assert c.scores == {"meta": 1, "hpn": 2, "torus": 2, "rail_only": 0}
    assert c.ranking == ("hpn", "torus", "meta", "rail_only") and (c.first, c.last) == (None, "rail_only")
    assert c.leaders == ("hpn", "torus")  # a tie for first: the order of PATTERNS decides nothing
    assert (c.target_gpus, c.building_gpus) == (1_024, 66_666)


def test_every_other_rule_with_its_reason():
    c = choose_fabric(gpus_now=1_025, gpus_3y=1, power_mw=1.2, moe_pct=10.0, shared_hosts=True, own_stack=False,
                      can_fork=True, cost_sensitive=True, chip_tbps=102.4)
    assert c.rules == (
        ("hpn", 2, "fits one 102.4T segment (2,048 GPUs): one hop per rail"),
        ("meta", 2, "fits one full-bisection Meta pod (3,072 GPUs)"),
        ("torus", -3, "a torus needs one organisation to own chip, compiler, scheduler and switches"),
        ("hpn", 1, "target exceeds one building (1,000 GPUs at 1.2 kW): HPN's pod is one building, and only "
                   "pipeline traffic crosses its 15:1 core"),
        ("rail_only", -1, "every rail would span buildings (fibres beyond 100 m rule out multi-mode optics)"),
        ("rail_only", -4, "MoE share 10% ≥ 10%: all-to-all needs paths between rails"),
        ("torus", -2, "MoE all-to-all must cross the mesh"),
        ("rail_only", -4, "shared hosts: one tenant cannot relay over another's NVLink"),
        ("rail_only", 2, "network cost matters: rail-only removes the spine (38-77% of network cost)"),
        ("torus", 1, "network cost matters: optics are under 5% of system cost"),
        ("meta", -1, "network cost matters: deep-buffer chassis cost more"),
        ("meta", 1, "team can change hash and library: QP scaling on the destination QP"))
    assert c.scores == {"meta": 2, "hpn": 3, "torus": -4, "rail_only": -7}
    assert c.ranking == ("hpn", "meta", "torus", "rail_only") and c.target_gpus == 1_025
    big = rules(gpus_3y=32_769)
    assert ("hpn", 1, "fits one HPN pod (15,360 GPUs)") not in big
    assert ("meta", 1, "fits eight Meta pods at 1:7 (24,576 GPUs)") not in big
    assert ("torus", -1, "more than one torus machine (4,096 chips)") in big
    assert ("rail_only", 2, "above 32,768 GPUs rail-only saves the most") in big
    assert ("hpn", 1, "fits one HPN pod (15,360 GPUs)") in rules(gpus_3y=15_360)
    assert ("meta", 1, "fits eight Meta pods at 1:7 (24,576 GPUs)") in rules(gpus_3y=24_576)


@pytest.mark.parametrize("at, above, rule", [
    (1_024, 1_025, ("hpn", 2)), (15_360, 15_361, ("hpn", 1)), (3_072, 3_073, ("meta", 2)),
    (24_576, 24_577, ("meta", 1)), (4_096, 4_097, ("torus", 2)),
])
def test_scale_rules_hold_at_their_threshold_and_stop_one_above(at, above, rule):
    assert rule in fired(gpus_3y=at) and rule not in fired(gpus_3y=above)


@pytest.mark.parametrize("at, above, rule", [(4_096, 4_097, ("torus", -1)), (32_768, 32_769, ("rail_only", 2))])
def test_size_penalties_start_one_above_their_threshold(at, above, rule):
    assert rule not in fired(gpus_3y=at) and rule in fired(gpus_3y=above)


def test_target_is_the_larger_count_and_the_building_rule_starts_above_it():
    assert choose_fabric(gpus_now=3_000, gpus_3y=2_000).target_gpus == 3_000
    assert choose_fabric(gpus_now=2_000, gpus_3y=3_000).target_gpus == 3_000
    # 2.01 MW / 1.2 kW is 1674.9999999999998 in floating point: still 1,675 GPUs
    assert choose_fabric(power_mw=2.01).building_gpus == 1_675
    assert ("rail_only", -1) not in fired(gpus_3y=1_675, power_mw=2.01)
    assert ("rail_only", -1) in fired(gpus_3y=1_676, power_mw=2.01)


def test_workload_and_team_rules_at_their_thresholds():
    assert {("rail_only", -4), ("torus", -2)} <= set(fired(moe_pct=10.0))
    assert not {("rail_only", -4), ("torus", -2)} & set(fired(moe_pct=9.99))
    assert fired(shared_hosts=True).count(("rail_only", -4)) == 1
    assert ("torus", -3) in fired(own_stack=False) and ("torus", 2) not in fired(own_stack=False)
    assert ("meta", 1) in fired(can_fork=True) and ("meta", -1) not in fired(can_fork=True)


def test_rank_after_each_change_lists_every_other_value_once():
    # (input, value, competition rank, patterns tied with rail-only at that score)
    assert rank_after_each_change("rail_only") == [
        ("gpus_now", 4_096, 3, 1), ("gpus_now", 8_192, 2, 1), ("gpus_now", 16_384, 1, 2), ("gpus_3y", 4_096, 3, 1),
        ("gpus_3y", 16_384, 1, 2), ("gpus_3y", 24_576, 1, 2), ("gpus_3y", 65_536, 1, 0), ("gpus_3y", 131_072, 1, 1),
        ("power_mw", 10.0, 4, 0), ("power_mw", 20.0, 4, 0), ("power_mw", 40.0, 4, 0), ("power_mw", 200.0, 4, 0),
        ("moe_pct", 5.0, 4, 0), ("moe_pct", 20.0, 4, 0), ("moe_pct", 50.0, 4, 0), ("shared_hosts", True, 4, 0),
        ("own_stack", False, 3, 0), ("can_fork", True, 4, 0), ("cost_sensitive", True, 2, 1),
        ("chip_tbps", 102.4, 4, 0)]
    moved = rank_after_each_change("meta", can_fork=True)
    assert ("can_fork", False, 3, 0) in moved and not [r for r in moved if r[:2] == ("can_fork", True)]


def test_rail_only_can_come_first_without_moe():
    lead = rail_only_leads(0.0)
    assert lead.alone > 0 and lead.combinations == 3_840
    assert rail_only_leads(9.99).alone == lead.alone  # the MoE rule starts at 10%
    assert rail_only_leads(10.0).alone == 0


def test_decision_summary_flattens_the_choice():
    from clustermath.fabric_designs.choice import decision_summary
    s = decision_summary()
    assert (s.target_gpus, s.building_gpus, s.meta, s.hpn, s.torus, s.rail_only) == (1_024, 66_666, 1, 2, 2, 0)
    assert (s.first, s.last) == ("tie: HPN-style dual-plane = torus + OCS", "rail-only")
    assert s.risk_of_first.startswith("one tier holds 1,024 GPUs")
    assert decision_summary(gpus_3y=65_536).first == "rail-only"


# -- incast ----------------------------------------------------------------------------------------

def test_incast_every_field_of_the_worked_example():
    i = incast()
    assert (i.shallow_per_port_mb, i.shallow_share_pct, i.deep_per_port_mb) == (0.78125, 54.0, 100.0)
    assert (i.fits_shallow_port, i.fits_shallow_chip, i.fits_deep_port) == (False, True, True)
    assert i.admission_bound_mb == pytest.approx(1.1)
    assert incast(2).admission_bound_mb == pytest.approx(1.1)  # two senders: admission applies already


def test_incast_fits_each_buffer_at_equality_and_not_above():
    # 2 senders at 400G for 2 ms: 50 GB/s × 2 ms = 100 MB, exactly the 2 ms deep buffer
    assert incast(2, 400, 2_000, 0).queued_mb == 100.0 and incast(2, 400, 2_000, 0).fits_deep_port
    assert not incast(2, 400, 2_000.5, 0).fits_deep_port
    assert not incast(2, 400, 1_000, 0, deep_ms=0.999).fits_deep_port and incast(2, 400, 1_000, 0, deep_ms=1).fits_deep_port
    # 0.1 MB queued into a 0.1 MB chip of one port: fits the chip and the port, exactly
    at = incast(2, 400, 2, 0, chip_mb=0.1, chip_ports=1)
    assert (at.queued_mb, at.shallow_share_pct, at.fits_shallow_chip, at.fits_shallow_port) == (0.1, 100.0, True, True)
    over = incast(2, 400, 2, 0, chip_mb=0.0999, chip_ports=1)
    assert not over.fits_shallow_chip and not over.fits_shallow_port


def test_incast_with_no_memory_and_no_senders():
    assert incast(0, chip_mb=0).shallow_share_pct == float("inf") and incast(0).excess_senders == 0
    assert incast(2, chip_mb=0).shallow_share_pct == float("inf")
    assert incast(16, 400, 22, 0).window_us == 22.0 and incast(16, 400, 0, 50).window_us == 50.0


def test_queue_trace_samples_the_window_evenly():
    t, q = queue_trace(3, 80, 10, 0, points=3)  # 20 GB/s for 10 µs: 0.2 MB at the end
    assert t.tolist() == [0.0, 5.0, 10.0] and q == pytest.approx([0.0, 0.1, 0.2])
    t, q = queue_trace(points=2)
    assert t.tolist() == [0.0, 72.0] and q == pytest.approx([0.0, 54.0])
    assert queue_trace()[0].size == 145
    assert queue_trace(admission=True, cap_mb=0.5)[1].max() == 0.5  # the smaller of the cap and the BDP
    assert queue_trace(admission=True, cap_mb=2.0)[1].max() == pytest.approx(1.1)
    assert queue_trace(admission=False, cap_mb=2.0)[1].max() == 2.0
    with pytest.raises(ValueError, match="^points "):
        queue_trace(points=1)


def test_bdp_and_ecn_bound_scale_with_each_input():
    assert bdp_bytes(800, 10) == pytest.approx(1e6) and bdp_bytes(0, 22) == 0.0
    assert ecn_bound(0, 1) == 0.0 and ecn_bound(7, 1) == 7.0


# -- load_balance: the vectorised models against plain loops ----------------------------------------

def _hash_reference(header: int, salt: int) -> int:
    x = ((header ^ salt) * 0x9E3779B1) % 2**64
    x ^= x >> 15
    x = (x * 0x85EBCA77) & 0xFFFFFFFF
    return x ^ (x >> 13)


@pytest.mark.parametrize("links, flows, trials, seed", [(4, 6, 50, 0), (3, 1, 7, 2), (1, 3, 4, 1), (5, 40, 20, 9)])
def test_hash_flows_equals_a_loop_over_trials(links, flows, trials, seed):
    import numpy as np
    picks = np.random.default_rng(seed).integers(0, links, size=(trials, flows), dtype=np.int32)
    idle, ratio = [], []
    for row in picks.tolist():
        counts = [row.count(link) for link in range(links)]
        idle.append(counts.count(0))
        ratio.append(max(counts) / (flows / links))
    r = hash_flows(links, flows, trials, seed)
    assert (r.links, r.flows, r.trials) == (links, flows, trials)
    assert r.formula_idle == expected_idle(links, flows)
    assert r.simulated_idle == pytest.approx(sum(idle) / trials)
    assert r.busiest_over_mean == pytest.approx(sum(ratio) / trials)
    assert r.worst_busiest_over_mean == pytest.approx(max(ratio))
    assert r.all_busy_pct == pytest.approx(100 * idle.count(0) / trials)


def test_hash_flows_ends():
    one = hash_flows(1, 3, 5)
    assert (one.simulated_idle, one.busiest_over_mean, one.worst_busiest_over_mean, one.all_busy_pct) == (0, 1, 1, 100)
    zero = hash_flows(4, 0, 10)
    assert (zero.worst_busiest_over_mean, zero.all_busy_pct, zero.formula_idle) == (0.0, 0.0, 4.0)
    assert hash_flows(16, 16, 50, seed=1) != hash_flows(16, 16, 50, seed=2)
    assert expected_idle(2, 1) == 1.0 and expected_idle(4, 2) == pytest.approx(4 * 0.75 ** 2)


@pytest.mark.parametrize("salted", [False, True])
@pytest.mark.parametrize("links, flows, seed", [(8, 64, 0), (3, 20, 5), (1, 4, 1)])
def test_polarized_loads_equal_two_tiers_of_a_plain_hash(links, flows, seed, salted):
    import numpy as np
    headers = np.random.default_rng(seed).integers(0, 2**31, size=flows).tolist()
    loads = np.zeros((links, links), dtype=int)
    for h in headers:
        agg = _hash_reference(h, 0) % links
        loads[agg, _hash_reference(h, 0x5BD1E995 * (agg + 1) if salted else 0) % links] += 1
    assert polarized_loads(links, flows, seed, salted=salted).tolist() == loads.tolist()


def test_polarization_uses_one_uplink_per_switch():
    import numpy as np
    same = polarized_loads(8, 64)
    assert (same == np.diag(np.diag(same))).all()  # switch j sends every flow up its uplink j


def test_queue_reduction_and_link_loads():
    assert queue_reduction_pct(200, 50) == 75.0 and queue_reduction_pct(10, 0) == 100.0
    assert queue_reduction_pct(10, 20) == -100.0  # a longer queue is a negative reduction
    import numpy as np
    picks = np.random.default_rng(3).integers(0, 5, size=12)
    assert link_loads(5, 12, 3).tolist() == np.bincount(picks, minlength=5).astype(float).tolist()
    assert link_loads(5, 12, 3).dtype == float and link_loads(5, 12, 4).tolist() != link_loads(5, 12, 3).tolist()
    assert link_loads(4, 10, spray=True).tolist() == [2.5] * 4 and link_loads(4, 10, spray=True).size == 4


# -- redundancy ------------------------------------------------------------------------------------

def _binomial_goodput(p, slice_cubes, cubes, hosts_per_cube):
    from math import comb
    q = p ** hosts_per_cube
    pmf = [comb(cubes, k) * q ** k * (1 - q) ** (cubes - k) for k in range(cubes + 1)]
    ocs = 100 * sum(pk * (k // slice_cubes) * slice_cubes for k, pk in enumerate(pmf)) / cubes
    return q, ocs, 100 * sum(pmf[slice_cubes:])


@pytest.mark.parametrize("p, s, cubes, hosts", [(0.995, 16, 64, 16), (0.99, 5, 12, 2), (0.9, 1, 3, 1),
                                                 (0.5, 3, 3, 1)])
def test_slice_goodput_equals_the_binomial_sum(p, s, cubes, hosts):
    g = slice_goodput(p, s, cubes=cubes, hosts_per_cube=hosts)
    q, ocs, one = _binomial_goodput(p, s, cubes, hosts)
    assert g.cube_up == pytest.approx(q) and g.expected_working_cubes == pytest.approx(cubes * q)
    assert g.slices == cubes // s and g.ocs_pct == pytest.approx(ocs) and g.ocs_one_slice_pct == pytest.approx(one)
    assert g.fixed_pct == pytest.approx(100 * p ** (s * hosts) * (cubes // s) * s / cubes)


def test_slice_goodput_at_the_ends():
    up = slice_goodput(1.0, 5, cubes=12, hosts_per_cube=2)
    assert (up.ocs_pct, up.ocs_one_slice_pct, up.fixed_pct) == (pytest.approx(100 * 10 / 12), 100.0, 100 * 10 / 12)
    down = slice_goodput(0.0, 5, cubes=12, hosts_per_cube=2)
    assert (down.ocs_pct, down.ocs_one_slice_pct, down.fixed_pct, down.cube_up) == (0.0, 0.0, 0.0, 0.0)
    assert slice_goodput(1.0, 16).ocs_pct == 100.0 and slice_goodput(1.0, 16).ocs_one_slice_pct == 100.0
    assert slice_goodput(0.999, 64).slices == 1 and slice_goodput(0.999, 1).slices == 64


def test_headroom_dual_tor_and_budget_follow_their_inputs():
    h = uplink_headroom(10, 1.01)
    assert (h.uplinks, h.failures_tolerated, h.extra_pct) == (11, 1, 10.0)
    assert uplink_headroom(16, 1.0).uplinks == 16 and uplink_headroom(0, 2.0).uplinks == 0
    d = dual_tor(3, 4, 5, 6)
    assert (d.host_ports, d.loss_one_link_pct, d.backup_gpus) == (12, pytest.approx(100 / 12), 7)
    b = interruption_budget()
    assert b.lost_allowed_h == pytest.approx(129.6) and b.spacing_h == pytest.approx(1_296 / 466)
    assert b.per_interruption_min == pytest.approx(129.6 * 60 / 466)
    assert interruption_budget(effective_pct=0).lost_allowed_h == pytest.approx(1_296)
    import dataclasses
    from clustermath.reliability.interruptions import LLAMA3_405B
    one = interruption_budget(dataclasses.replace(LLAMA3_405B, total=1))
    assert one.spacing_h == pytest.approx(1_296) and one.per_interruption_min == pytest.approx(129.6 * 60)
    with pytest.raises(ValueError, match=r"^record.total must be at least 1 interruption, got 0$"):
        interruption_budget(dataclasses.replace(LLAMA3_405B, total=0))


def test_host_availability_inverts_slice_intact():
    assert host_availability_for(0.25, 2) == pytest.approx(0.5) and host_availability_for(1.0, 7) == 1.0
    assert host_availability_for(0.3, 1) == 0.3
    assert slice_intact(3, 0.5) == 0.125 and slice_intact(1, 0.0) == 0.0 and slice_intact(0, 0.0) == 1.0


FAILURE_TABLE = [
    ("meta", "healthy rack: 16 downlinks, 18 uplinks", 100.0, True, "flows hash over all 18 uplinks"),
    ("meta", "one uplink fails", 100.0, True, "its flows rehash onto 17 uplinks, still above 1:1"),
    ("meta", "a second uplink fails (2 tolerated)", 100.0, True,
     "16 uplinks for 16 downlinks: exactly 1:1, no slowdown"),
    ("meta", "the rack switch fails", 0.0, False, "the rack drops out; the job restarts from its checkpoint without it"),
    ("hpn", "healthy host: 8 NICs × 2 ports to two ToRs", 100.0, True, "traffic on all 16 ports, both planes"),
    ("hpn", "one NIC-to-ToR link fails", 93.75, True,
     "the bond moves its traffic to the NIC's other port, on the other ToR"),
    ("hpn", "the link is repaired", 100.0, True, "both ports carry traffic again, no restart"),
    ("hpn", "a whole ToR fails", 93.75, True,
     "each host under it loses one of 16 ports; the twin ToR carries the rest"),
    ("megascale", "healthy job; heartbeats carry RDMA counters", 100.0, True, "work on every node"),
    ("megascale", "a node's traffic drops; the driver suspends the job", 0.0, False,
     "diagnosis: loopback, NIC-to-NIC and small collectives under one ToR"),
    ("megascale", "the faulty node is evicted", 0.0, False, "a node from the standby pool takes its ranks"),
    ("megascale", "the job resumes from its checkpoint", 100.0, True, "work on the replacement node"),
    ("tpu", "healthy slice of 16 cubes", 100.0, True, "the OCS wires the slice's cubes into a torus"),
    ("tpu", "one host fails: its cube is down", 0.0, False, "the torus is broken for the slice that holds it"),
    ("tpu", "the scheduler picks a spare working cube", 0.0, False, "the OCS mirrors rewire in milliseconds"),
    ("tpu", "the slice resumes from its checkpoint", 100.0, True, "work on the rewired torus"),
]


def test_failure_stepper_says_what_happens_at_every_step():
    """Animation 13.3's captions and speeds, step by step (the reader sees exactly these)."""
    rows = [failure_step(d, s) for d in range(4) for s in range(4)]
    assert [(f.design, f.event, f.job_speed_pct, f.running, f.where_it_goes) for f in rows] == FAILURE_TABLE
    assert [f.step for f in rows] == [0, 1, 2, 3] * 4


# -- survivors of the first run (tools/mutants/REPORT.md) ----------------------------------------

def test_defaults_are_the_books_settings():
    """Called without arguments, each stepper and figure model uses the values the chapter names."""
    assert transfer_step() == transfer_step(0, 0) and failure_step() == failure_step(0, 0)
    assert polarized_loads().tolist() == polarized_loads(8, 64, 0).tolist()
    assert link_loads().tolist() == link_loads(16, 16, 0).tolist()
    assert tiers_for(8_192) == 2 and tiers_for(8_193) == 3  # 51.2T at 400G: radix 128, 8,192 in two tiers


def test_transfer_step_names_its_pattern():
    from clustermath.fabric_designs.designs import TRANSFER_PATHS
    assert [transfer_step(p).pattern for p in range(4)] == list(TRANSFER_PATHS)


def test_unit_conversions_are_exact():
    assert bdp_bytes(400, 22) == pytest.approx(1.1e6, rel=1e-12)
    r = table2_row(32_768, 128)
    assert r.clos_cost_musd == pytest.approx(152.829952, rel=1e-12) and r.rail_cost_musd == pytest.approx(
        35.782656, rel=1e-12)
    assert r.cost_removed_musd == pytest.approx(117.047296, rel=1e-12)
    assert r.power_removed_mw == pytest.approx(3.538944, rel=1e-12)
    c = spine_cost()
    assert c.cost_musd == pytest.approx(117.047296, rel=1e-12) and c.power_mw == pytest.approx(3.538944, rel=1e-12)


def test_whole_ports_servers_and_switches():
    # 51.76 Tbps is 129.4 ports of 400G: 129 whole ports, 64 of them down, 128 servers at 200G
    assert megascale_tor_set(51.76, 1, 1, 200) == (128, 128)
    # a 400G port split into 300G links serves one server per whole link: 32 × 400 // 300 = 42
    servers, gpus = megascale_tor_set(25.6, 8, 8, 300)
    assert (servers, gpus) == (42, 336) and isinstance(servers, int)
    # an odd radix: 3 whole ports down per lower-tier switch (not 3.5)
    assert clos_switches(100, 7) == 3 * 34 + 15


def test_empty_loads_keep_their_shape():
    assert polarized_loads(4, 0).tolist() == [[0] * 4] * 4
    assert link_loads(5, 0).tolist() == [0.0] * 5


def test_more_defaults_and_the_dead_machine():
    assert slice_goodput() == slice_goodput(0.995, 16, cubes=64, hosts_per_cube=16)
    assert hash_flows() == hash_flows(16, 16, 2_000, 0)
    dead = slice_goodput(0.0, 1, cubes=3, hosts_per_cube=1)  # no cube works: not even a one-cube slice runs
    assert (dead.ocs_pct, dead.ocs_one_slice_pct) == (0.0, 0.0)


def test_a_share_is_never_above_100_percent():
    # 64 one-cube slices at q = 0.9: the binomial terms sum to 1 + 3e-14 in floating point
    assert slice_goodput(0.9, 1, cubes=64, hosts_per_cube=1).ocs_one_slice_pct == 100.0


def test_default_core_ratio_and_ocs_ports():
    # a 13.6T chip (34 ports): 31 of 34 down at 15:1 gives 3 segments of 8 ToRs (16:1: 32 down, 4 segments)
    assert hpn_scale(13.6).segments_per_pod == 3 and hpn_scale(13.6, core_ratio=16).segments_per_pod == 4
    assert tpu_v4_machine(96) == (128, 8_192, 2_048)  # twice the OCSes of 128 ports: twice the cubes


def test_hpn_scale_counts_are_whole_numbers():
    s = hpn_scale(10.0, 400, rails=5)  # 25 ports: odd, and 5 rails divide nothing evenly
    counts = ("radix", "gpus_per_tor", "gpus_per_tor_pair", "gpus_per_segment", "segments_single_plane",
              "segments_dual_plane", "segments_per_pod", "gpus_dual_plane", "gpus_per_pod", "gpus_per_building",
              "gpus_plain_pod", "gpus_dual_tor_pod", "agg_down_ports", "agg_up_ports")
    assert all(type(getattr(s, name)) is int for name in counts), {n: getattr(s, n) for n in counts}
    assert (s.gpus_per_tor, s.segments_single_plane, s.segments_dual_plane) == (12, 1, 2)
    # 15 ports, 14 down at 15:1: 14 // 8 = 1 segment of 8 ToRs
    assert hpn_scale(6.0).segments_per_pod == 1 and hpn_scale(204.8).radix == 512


def test_tiers_for_a_radix_of_two_thousand():
    # 1 Gbps ports on a 2 Tbps chip: radix 2,000, so 2,000 GPUs take one tier and 2,001 take two
    assert tiers_for(2_000, 2.0, 1) == 1 and tiers_for(2_001, 2.0, 1) == 2


@pytest.mark.parametrize("call, name", [
    (lambda: link_loads(spray="yes"), "spray"),
    (lambda: polarized_loads(salted=2), "salted"),
])
def test_switches_take_only_true_or_false(call, name):
    with pytest.raises(ValueError, match=f"^{name} must be True or False"):
        call()


# -- survivors of the run after the chapter review (issue 21; tools/mutants/REPORT.md) -------------------

def test_an_odd_radix_frees_core_ports_from_its_lower_half():
    """25 ports of 400G (10 Tbps): half the radix is 12 whole ports; at 15:1 the aggregation switch keeps
    25 × 15 // 16 = 23 down and 2 up, so 12 − 2 = 10 core-facing ports are freed: 10 / 12 of a core
    switch's half and 10 / 25 of the aggregation switch's ports."""
    s = hpn_scale(10.0, 400, rails=5)
    assert (s.agg_down_ports, s.agg_up_ports) == (23, 2)
    assert s.core_ports_freed_pct == pytest.approx(100 * 10 / 12, rel=1e-15)
    assert s.agg_ports_moved_pct == 40.0


def test_tiers_for_takes_a_chip_of_at_most_a_million_tbps():
    assert tiers_for(10**9, 1e6) == 2  # radix 2.5 million at 400G: 3.1e12 GPUs in two tiers
    with pytest.raises(ValueError, match=r"^chip_tbps must be a number in \(0, 1e\+06\] Tbps, got 1000000.5$"):
        tiers_for(1, 1_000_000.5)


def test_queue_at_defaults_and_time():
    assert queue_at() == queue_at(0.0, 16, 400.0, 22.0, 50.0)
    assert queue_at(10).time_us == 10.0 and queue_at(72.5).time_us == 72.5


def test_the_single_chip_pauses_when_the_queue_reaches_its_share_exactly():
    """Two senders: one sender's worth, 50 GB/s, piles up; after 15.625 µs that is 781,250 bytes, exactly
    the chip's 100 MB / 128 ports: PFC pauses at equality, not one byte later."""
    at = queue_at(15.625, senders=2)
    assert at.deep_mb == 0.78125 == at.shallow_mb and at.shallow_paused
    assert not queue_at(15.624, senders=2).shallow_paused


def test_a_tie_for_last_place_has_no_single_last():
    """A three-year target of 4,096 GPUs: torus 2 (one machine, own stack), HPN 1 (one pod), Meta 0
    (eight pods, but no team for the hash) and rail-only 0: the bottom is shared."""
    from clustermath.fabric_designs.choice import decision_summary
    c = choose_fabric(gpus_3y=4_096)
    assert c.scores == {"meta": 0, "hpn": 1, "torus": 2, "rail_only": 0}
    assert c.trailers == ("meta", "rail_only") and c.last is None and c.first == "torus"
    assert decision_summary(gpus_3y=4_096).last == "tie: Meta-style Clos, deep spine = rail-only"


def test_the_risk_of_a_shared_first_place_names_both_patterns():
    from clustermath.fabric_designs.choice import RISKS, decision_summary
    assert decision_summary().risk_of_first == RISKS["hpn"] + " | " + RISKS["torus"]
    assert decision_summary(gpus_3y=65_536).risk_of_first == RISKS["rail_only"]


def test_rail_only_leads_counts_alone_and_shared_apart(monkeypatch):
    """Only the three-year target varies (the other inputs at the panel's defaults): at 1,024 GPUs rail-only
    is last, at 16,384 it shares the top with two others, at 65,536 it leads alone (the rank table above)."""
    from clustermath.fabric_designs import choice
    grid = {name: (value,) for name, value in DEFAULTS.items() if name != "moe_pct"}
    grid["gpus_3y"] = (1_024, 16_384, 65_536)
    monkeypatch.setattr(choice, "CHOICES", grid)
    lead = rail_only_leads(0.0)
    assert (lead.combinations, lead.alone, lead.shared) == (3, 1, 1)
