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
                                 split_gbps=f"{W} 1..inf Gb/s")),
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
