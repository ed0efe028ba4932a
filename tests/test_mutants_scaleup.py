"""Tests added to kill the mutants that chapter 5's tests let live (see tools/mutants/REPORT.md).

Chapter 5's models: ``scaleup`` and ``ring_builder``.
"""
from __future__ import annotations

import numpy as np
import pytest

from clustermath.ring_builder import draw_failures, ring_builder, ring_draws, ring_layout
from clustermath.scaleup import (
    alignment_fault_radius, convert_node_rate, db_to_fraction, fragmentation, gpu_fault_probability,
    link_budget, synthetic_fault_trace, tor_wiring, waste_bound,
)

BAD = "§"  # not a number, not a choice: every check rejects it
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
     dict(tp=f"{W} 1..inf GPUs", gpus_per_node=f"{W} 1..inf GPUs", node_rate=f"{N} [0, 1]", hops=f"{W} 1..inf")),
    (tor_wiring, dict(tors=4, nodes_per_tor=4, group_nodes=4),
     dict(tors=f"{W} 1..inf", nodes_per_tor=f"{W} 1..inf", group_nodes=f"{W} 1..inf",
          wiring="one of ['in-order', 'sub-line']")),
    (alignment_fault_radius, dict(gpus_per_node=8, nodes_per_tor=4, aligned=True),
     dict(gpus_per_node=f"{W} 1..inf GPUs", nodes_per_tor=f"{W} 1..inf")),
    (db_to_fraction, dict(loss_db=3.0), dict(loss_db=f"{N} [0, inf) dB")),
    (link_budget, {}, dict(loss_db=f"{N} [0, inf) dB", module_w=f"{N} (0, inf) W", switch_w=f"{N} [0, 12] W",
                           rate_gbps=f"{N} (0, inf) Gb/s", switch_s=f"{N} (0, inf) s",
                           reference_s=f"{N} (0, inf) s")),
    (synthetic_fault_trace, {}, dict(mean_pct=f"{N} (0, 100] %", median_pct=f"{N} (0, 2.33) %",
                                     p99_pct=f"{N} (1.67, 100) %", days=f"{W} 1..inf days",
                                     samples_per_day=f"{W} 1..inf", weeks_memory=f"{N} (0, inf) weeks")),
    (draw_failures, dict(node_rate=0.1, nodes=10, draws=1),
     dict(node_rate=f"{N} [0, 1]", nodes=f"{W} 0..inf", draws=f"{W} 1..inf")),
    (ring_draws, dict(failed=ROW, gpus_per_node=4, tp=16, hops=2),
     dict(gpus_per_node=f"{W} 1..inf GPUs", tp=f"{W} 1..inf GPUs", hops=f"{W} 1..inf",
          switch_gpus=f"{W} 1..inf GPUs")),
    (ring_builder, dict(draws=1), dict(node_rate_8gpu=f"{N} [0, 1]", gpus_per_node=f"{W} 1..inf GPUs",
                                       tp=f"{W} 1..inf GPUs", hops=f"{W} 1..inf", gpus=f"{W} 0..inf GPUs",
                                       draws=f"{W} 1..inf", switch_gpus=f"{W} 1..inf GPUs")),
    (ring_layout, dict(failed_row=ROW[0], group_nodes=4, hops=2),
     dict(group_nodes=f"{W} 1..inf", hops=f"{W} 1..inf")),
]


@pytest.mark.parametrize("function, valid, expected", MESSAGES, ids=[f.__name__ for f, _, _ in MESSAGES])
def test_every_error_names_its_argument_range_and_unit(function, valid, expected):
    """Each ValueError names the argument that is wrong, its range and its unit (and no other argument's)."""
    for name, text in expected.items():
        with pytest.raises(ValueError) as err:
            function(**{**valid, name: BAD})
        assert str(err.value).startswith(f"{name} must be {text}, got '§'"), (name, str(err.value))
