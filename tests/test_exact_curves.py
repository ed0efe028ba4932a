"""The exact-arithmetic curves chapter 1's explorers draw beside the integer models (peak/exact.py)."""
from __future__ import annotations

import math

import pytest

from clustermath.peak import (checkpoint_cost, cluster_economics, cluster_scale, failure_recovery,
                              pipeline_bubble)
from clustermath.peak.exact import (achieved_tflops_exact, bubble_pct_exact, cost_per_useful_exact,
                                    efficiency_pct_exact, lost_min_per_day_exact, overhead_pct_exact)


def test_the_truncation_gap_of_the_scaling_example():
    # 6,400 x 100/230: the integer model truncates 43.48% to 43% and delivers 2,752
    assert achieved_tflops_exact(nodes=64, node_tflops=100, compute_ms=100, comm_ms=130) == pytest.approx(
        6400 * 100 / 230)
    assert cluster_scale(nodes=64, node_tflops=100, compute_ms=100, comm_ms=130).achieved_tflops == 2752


@pytest.mark.parametrize("compute, comm", [(100, 0), (100, 100), (75, 25), (300, 100)])
def test_exact_equals_integer_where_nothing_truncates(compute, comm):
    exact = efficiency_pct_exact(compute_ms=compute, comm_ms=comm)
    assert exact == cluster_scale(nodes=1, node_tflops=1, compute_ms=compute, comm_ms=comm).efficiency_pct


@pytest.mark.parametrize("comm", range(0, 1001, 7))
def test_the_integer_staircase_never_rises_above_the_exact_curve(comm):
    r = cluster_scale(nodes=64, node_tflops=100, compute_ms=100, comm_ms=comm)
    assert r.efficiency_pct <= efficiency_pct_exact(compute_ms=100, comm_ms=comm) < r.efficiency_pct + 1


def test_degenerate_ends():
    assert efficiency_pct_exact(compute_ms=0, comm_ms=0) == 0.0
    assert efficiency_pct_exact(compute_ms=100, comm_ms=900, ignore_comm=True) == 100.0
    assert bubble_pct_exact(stages=1, microbatches=0) == 0.0
    assert bubble_pct_exact(stages=8, microbatches=0) == 100.0
    assert bubble_pct_exact(stages=8, microbatches=32, ignore_bubble=True) == 0.0
    assert overhead_pct_exact(footprint_gb=0, tier_gbps=0, interval_s=0) == 0.0
    assert overhead_pct_exact(footprint_gb=560, tier_gbps=0, interval_s=300) == math.inf
    assert overhead_pct_exact(footprint_gb=560, tier_gbps=80, interval_s=0) == math.inf
    assert overhead_pct_exact(footprint_gb=560, tier_gbps=80, interval_s=300, ignore_checkpoint=True) == 0.0
    assert lost_min_per_day_exact(nodes=0, node_mtbf_h=24, interval_min=60) == 30.0  # counted as one node
    assert lost_min_per_day_exact(nodes=1000, node_mtbf_h=0, interval_min=60) == math.inf
    assert lost_min_per_day_exact(nodes=1000, node_mtbf_h=0, interval_min=0) == 0.0
    assert cost_per_useful_exact(nodes=64, node_cost=100, node_tflops=100, efficiency_pct=0) == math.inf
    assert cost_per_useful_exact(nodes=0, node_cost=100, node_tflops=100, efficiency_pct=50) == math.inf


def test_the_worked_values_agree_with_the_integer_models_where_they_divide_exactly():
    assert bubble_pct_exact(stages=5, microbatches=12) == pipeline_bubble(stages=5, microbatches=12).bubble_pct == 25
    assert overhead_pct_exact(footprint_gb=560, tier_gbps=80, interval_s=280) == 20.0
    assert checkpoint_cost(footprint_gb=560, tier_gbps=80, interval_s=280).overhead_pct == 20
    assert lost_min_per_day_exact(nodes=1000, node_mtbf_h=8000, interval_min=60) == 90.0
    assert failure_recovery(nodes=1000, node_mtbf_h=8000, interval_min=60).lost_min_per_day == 90
    # scale cancels: 100,000 / efficiency for nodes of cost 100 and 100 TFLOPS
    for eff in (1, 23, 50, 100):
        exact = cost_per_useful_exact(nodes=64, node_cost=100, node_tflops=100, efficiency_pct=eff)
        assert exact == pytest.approx(100000 / eff)
        assert cluster_economics(nodes=64, node_cost=100, node_tflops=100,
                                 efficiency_pct=eff).cost_per_useful == min(int(exact), 65535)
    assert cost_per_useful_exact(nodes=64, node_cost=100, node_tflops=100, efficiency_pct=50,
                                 ignore_efficiency=True) == 1000.0


@pytest.mark.parametrize("call, name", [
    (lambda: efficiency_pct_exact(compute_ms=-1, comm_ms=0), "compute_ms"),
    (lambda: efficiency_pct_exact(compute_ms=1, comm_ms=float("nan")), "comm_ms"),
    (lambda: achieved_tflops_exact(nodes=-1, node_tflops=1, compute_ms=1, comm_ms=1), "nodes"),
    (lambda: bubble_pct_exact(stages=0, microbatches=4), "stages"),
    (lambda: bubble_pct_exact(stages=2, microbatches=-1), "microbatches"),
    (lambda: overhead_pct_exact(footprint_gb=1, tier_gbps=-1, interval_s=1), "tier_gbps"),
    (lambda: lost_min_per_day_exact(nodes=1, node_mtbf_h=-5, interval_min=1), "node_mtbf_h"),
    (lambda: cost_per_useful_exact(nodes=1, node_cost=1, node_tflops=1, efficiency_pct=101), "efficiency_pct"),
    (lambda: efficiency_pct_exact(compute_ms=1, comm_ms=1, ignore_comm=2), "ignore_comm"),
])
def test_impossible_inputs_are_refused_by_name(call, name):
    with pytest.raises(ValueError, match=name):
        call()
