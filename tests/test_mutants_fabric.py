"""Tests added to kill the mutants that chapter 4's tests let live (see tools/mutants/REPORT.md).

Chapter 4's models: ``fabric_designs``, ``fabric_choice``, ``incast``, ``load_balance``, ``redundancy``.
"""
from __future__ import annotations

import pytest

from clustermath.fabric_choice import choose_fabric, rank_after_each_change
from clustermath.fabric_designs import (
    clos_max_gpus, clos_ports, clos_switches, clos_tiers, hpn_scale, megascale_tor_set, meta_zone, spine_cost,
    table2_row, tier_counts, tiers_for, tpu_v4_machine, transfer_step,
)
from clustermath.incast import bdp_bytes, ecn_bound, incast, queue_trace
from clustermath.load_balance import expected_idle, hash_flows, link_loads, polarized_loads, queue_reduction_pct
from clustermath.redundancy import (
    dual_tor, failure_step, host_availability_for, interruption_budget, slice_goodput, slice_intact,
    uplink_headroom,
)

BAD = "§"  # not a number, not a flag, not a choice: every check rejects it

# function, valid keyword arguments, {argument: what its ValueError says the argument must be}
N, W = "a number in", "a whole number in"
MESSAGES = [
    (bdp_bytes, dict(port_gbps=400, rtt_us=22),
     dict(port_gbps=f"{N} [0, inf) Gb/s", rtt_us=f"{N} [0, inf) µs")),
    (incast, {}, dict(senders=f"{W} 0..inf senders", port_gbps=f"{N} [0, inf) Gb/s", rtt_us=f"{N} [0, inf) µs",
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
    (hpn_scale, {}, dict(chip_tbps=f"{N} (0, inf) Tb/s", nic_gbps=f"{W} 1..inf Gb/s", rails=f"{W} 1..inf",
                         core_ratio=f"{W} 1..inf", building_mw=f"{N} [0, inf) MW", kw_per_gpu=f"{N} (0, inf) kW")),
    (meta_zone, {}, dict(racks=f"{W} 1..inf", gpus_per_rack=f"{W} 1..inf", pods=f"{W} 1..inf")),
    (megascale_tor_set, {}, dict(chip_tbps=f"{N} (0, inf) Tb/s", tors=f"{W} 1..inf", gpus_per_server=f"{W} 1..inf",
                                 split_gbps=f"{W} 1..400 Gb/s")),
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
    (tiers_for, dict(gpus=100), dict(gpus=f"{W} 0..inf GPUs", chip_tbps=f"{N} (0, inf) Tb/s",
                                     nic_gbps=f"{W} 1..inf Gb/s")),
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
    for name, text in expected.items():
        with pytest.raises(ValueError) as err:
            function(**{**valid, name: BAD})
        assert str(err.value).startswith(f"{name} must be {text}, got '§'"), (name, str(err.value))


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
    assert (s.segments_single_plane, s.segments_dual_plane, s.segments_per_pod) == (16, 32, 24)
    assert (s.gpus_dual_plane, s.gpus_per_pod, s.gpus_per_building) == (65_536, 49_152, 5_000)
    assert s.pod_power_mw == pytest.approx(98.304) and s.buildings_needed == pytest.approx(9.8304)
    assert s.binding == "building power"


def test_hpn_scale_degenerate_building_and_rounding():
    none = hpn_scale(building_mw=0)
    assert none.gpus_per_building == 0 and none.buildings_needed == float("inf") and none.binding == "building power"
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
    with pytest.raises(ValueError, match=r"^split_gbps must be a whole number in 1..400 Gb/s, got 800$"):
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
    with pytest.raises(ValueError, match=r"^nic_gbps must leave a radix of at least 4 ports, got 400 on 1.2 Tb/s$"):
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
