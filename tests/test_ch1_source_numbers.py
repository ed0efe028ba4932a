"""Every number source 000 states for chapter 1, computed through the models.

Labels quote or paraphrase the source and give its section: the opening and
section 1, the prose after each module (sections 5-14), section 15
("Quantitative Reasoning") and section 16 ("Assertions"). The worked tables'
totals are checked in test_ch1_worked_tables.py.
"""
from __future__ import annotations

import pytest

from clustermath import (
    activation_memory,
    bubble_fraction,
    checkpoint_cost,
    cluster_economics,
    cluster_scale,
    collective_cost,
    fabric_bisection,
    failure_recovery,
    pipeline_bubble,
    ring_factor,
    spec_of,
    straggler_step,
)

CORRECT, BROKEN = False, True

# (label, model, build, inputs, expected outputs)
NUMBERS = [
    # --- scaling (opening, §1, §5, §15, §16)
    ("§15 64 nodes × 100 TFLOPS: a 6400 peak", cluster_scale, CORRECT,
     dict(nodes=64, node_tflops=100, compute_ms=100, comm_ms=100), dict(ideal_tflops=6400)),
    ("§15 half the step communicating: 50% and 3200 achieved", cluster_scale, CORRECT,
     dict(nodes=64, node_tflops=100, compute_ms=100, comm_ms=100),
     dict(efficiency_pct=50, achieved_tflops=3200, scales_well=False)),
    ("§15 three-quarters compute: 75% and 4800", cluster_scale, CORRECT,
     dict(nodes=64, node_tflops=100, compute_ms=300, comm_ms=100), dict(efficiency_pct=75, achieved_tflops=4800)),
    ("§16 300 ms compute against 100 comm is 75%, which exactly scales well", cluster_scale, CORRECT,
     dict(nodes=64, node_tflops=100, compute_ms=300, comm_ms=100), dict(efficiency_pct=75, scales_well=True)),
    ("§5 the peak-FLOPs view: 6400 of 6400", cluster_scale, BROKEN,
     dict(nodes=64, node_tflops=100, compute_ms=100, comm_ms=100),
     dict(step_ms=100, efficiency_pct=100, achieved_tflops=6400, comm_ignored_err=True)),
    ("§5 row five: no compute is zero efficiency", cluster_scale, CORRECT,
     dict(nodes=64, node_tflops=100, compute_ms=0, comm_ms=100), dict(efficiency_pct=0, step_ms=100)),
    ("§5 row 5: a 0 ms step in the peak-FLOPs build", cluster_scale, BROKEN,
     dict(nodes=64, node_tflops=100, compute_ms=0, comm_ms=100), dict(step_ms=0, comm_ignored_err=True)),
    ("§16 the no-communication case is not an omission", cluster_scale, CORRECT,
     dict(nodes=64, node_tflops=100, compute_ms=100, comm_ms=0), dict(comm_ignored_err=False)),
    ("§16 ... in the peak-FLOPs build either", cluster_scale, BROKEN,
     dict(nodes=64, node_tflops=100, compute_ms=100, comm_ms=0), dict(comm_ignored_err=False)),
    # --- the collective (§1, §6, §15, §16)
    ("§15 8 GB over eight ranks moves 14 GB: 140 ms at 800 Gbps", collective_cost, CORRECT,
     dict(bytes_gb=8, nodes=8, fabric_gbps=800, budget_ms=100), dict(moved_gb=14, collective_ms=140, within_budget=False)),
    ("§15 over sixty-four moves 15 GB: 150 ms", collective_cost, CORRECT,
     dict(bytes_gb=8, nodes=64, fabric_gbps=800, budget_ms=100), dict(moved_gb=15, collective_ms=150)),
    ("§15 over two moves exactly 8 GB: 80 ms", collective_cost, CORRECT,
     dict(bytes_gb=8, nodes=2, fabric_gbps=800, budget_ms=100), dict(moved_gb=8, collective_ms=80, understated_err=False)),
    ("§15 the flat model's 80 ms over eight ranks", collective_cost, BROKEN,
     dict(bytes_gb=8, nodes=8, fabric_gbps=800, budget_ms=100), dict(moved_gb=8, collective_ms=80, understated_err=True)),
    ("§6 a thousand ranks move 'very slightly more' - hidden by truncation", collective_cost, CORRECT,
     dict(bytes_gb=8, nodes=1000, fabric_gbps=800, budget_ms=100), dict(moved_gb=15, collective_ms=150)),
    ("§16 two ranks move the gradient once", collective_cost, CORRECT,
     dict(bytes_gb=8, nodes=2, fabric_gbps=640, budget_ms=100), dict(moved_gb=8)),
    ("§16 2 ranks at 640 Gbps: 100 ms, the whole budget", collective_cost, CORRECT,
     dict(bytes_gb=8, nodes=2, fabric_gbps=640, budget_ms=100), dict(collective_ms=100, within_budget=True)),
    ("§16 two ranks: both models right", collective_cost, BROKEN,
     dict(bytes_gb=8, nodes=2, fabric_gbps=640, budget_ms=100),
     dict(moved_gb=8, collective_ms=100, within_budget=True, understated_err=False)),
    # --- the pipeline (§1, §7, §15, §16)
    ("§15 eight stages bubble 87% on one microbatch", pipeline_bubble, CORRECT,
     dict(stages=8, microbatches=1), dict(bubble_pct=87, useful_pct=13)),
    ("§15 17% on thirty-two", pipeline_bubble, CORRECT, dict(stages=8, microbatches=32), dict(bubble_pct=17, acceptable=True)),
    ("§15 9% on sixty-four", pipeline_bubble, CORRECT, dict(stages=8, microbatches=64), dict(bubble_pct=9)),
    ("§16 a bubble exactly at the acceptance threshold (5 stages, 16 microbatches)", pipeline_bubble, CORRECT,
     dict(stages=5, microbatches=16), dict(bubble_pct=20, acceptable=True)),
    ("§16 a single stage is not an ignored bubble", pipeline_bubble, CORRECT,
     dict(stages=1, microbatches=8), dict(bubble_pct=0, bubble_ignored_err=False)),
    ("§16 ... nor in the no-bubble build", pipeline_bubble, BROKEN,
     dict(stages=1, microbatches=8), dict(bubble_pct=0, bubble_ignored_err=False)),
    ("§16 the empty-schedule guard", pipeline_bubble, CORRECT,
     dict(stages=1, microbatches=0), dict(bubble_pct=0, useful_pct=100, acceptable=True)),
    ("§7 the no-bubble model reports a pipeline as if it filled instantly", pipeline_bubble, BROKEN,
     dict(stages=8, microbatches=1), dict(bubble_pct=0, useful_pct=100, bubble_ignored_err=True)),
    # --- the checkpoint (§1, §8, §15, §16)
    ("§15 560 GB at 80 Gbps is 56 s: 18% of a five-minute interval", checkpoint_cost, CORRECT,
     dict(footprint_gb=560, tier_gbps=80, interval_s=300), dict(write_s=56, overhead_pct=18, affordable=False)),
    ("§15 93% of a one-minute one", checkpoint_cost, CORRECT,
     dict(footprint_gb=560, tier_gbps=80, interval_s=60), dict(write_s=56, overhead_pct=93)),
    ("§15 at 800 Gbps it is 5 s and 1%", checkpoint_cost, CORRECT,
     dict(footprint_gb=560, tier_gbps=800, interval_s=300), dict(write_s=5, overhead_pct=1, affordable=True)),
    ("§16 an overhead exactly at the threshold", checkpoint_cost, CORRECT,
     dict(footprint_gb=560, tier_gbps=80, interval_s=560), dict(overhead_pct=10, affordable=True)),
    ("§16 the missing-tier guard", checkpoint_cost, CORRECT,
     dict(footprint_gb=560, tier_gbps=0, interval_s=300), dict(write_s=65535, affordable=False, free_write_err=False)),
    ("§16 the missing-interval guard", checkpoint_cost, CORRECT,
     dict(footprint_gb=560, tier_gbps=80, interval_s=0), dict(overhead_pct=65535, affordable=False)),
    ("§8 the no-checkpoint model writes for free", checkpoint_cost, BROKEN,
     dict(footprint_gb=560, tier_gbps=80, interval_s=300), dict(write_s=0, overhead_pct=0, free_write_err=True)),
    # --- failures (§1, §9, §15, §16)
    ("§15 a thousand year-long nodes: an eight-hour cluster MTBF, three failures a day", failure_recovery, CORRECT,
     dict(nodes=1000, node_mtbf_h=8760, interval_min=60), dict(cluster_mtbf_h=8, failures_per_day=3)),
    ("§15 90 minutes lost at an hourly interval", failure_recovery, CORRECT,
     dict(nodes=1000, node_mtbf_h=8760, interval_min=60), dict(lost_min_per_day=90, tolerable=False)),
    ("§15 180 at a two-hourly one", failure_recovery, CORRECT,
     dict(nodes=1000, node_mtbf_h=8760, interval_min=120), dict(lost_min_per_day=180)),
    ("§16 the interval at which the loss is exactly tolerable", failure_recovery, CORRECT,
     dict(nodes=1000, node_mtbf_h=8760, interval_min=40), dict(lost_min_per_day=60, tolerable=True)),
    ("§16 an MTBF that rounds to nothing is asserted unbounded", failure_recovery, CORRECT,
     dict(nodes=10000, node_mtbf_h=8760, interval_min=60), dict(cluster_mtbf_h=0, failures_per_day=65535)),
    ("§9 the single-node model: a year between failures", failure_recovery, BROKEN,
     dict(nodes=1000, node_mtbf_h=8760, interval_min=60),
     dict(cluster_mtbf_h=8760, failures_per_day=0, lost_min_per_day=0, scale_ignored_err=True)),
    # --- stragglers (§10, §15, §16)
    ("§15 a 260 ms straggler over a 200 ms mean: 260 ms step, 30% tax", straggler_step, CORRECT,
     dict(mean_ms=200, slowest_ms=260), dict(step_ms=260, waste_ms=60, waste_pct=30, tolerable=False)),
    ("§10 the uniform model takes the mean", straggler_step, BROKEN,
     dict(mean_ms=200, slowest_ms=260), dict(step_ms=200, waste_pct=0, uniform_assumed_err=True)),
    ("§16 the uniform case: both models right", straggler_step, CORRECT,
     dict(mean_ms=200, slowest_ms=200), dict(step_ms=200, waste_pct=0, uniform_assumed_err=False)),
    ("§16 ... the uniform build too", straggler_step, BROKEN,
     dict(mean_ms=200, slowest_ms=200), dict(step_ms=200, waste_pct=0, uniform_assumed_err=False)),
    ("§16 the tolerance boundary driven exactly", straggler_step, CORRECT,
     dict(mean_ms=200, slowest_ms=220), dict(waste_pct=10, tolerable=True)),
    # --- activations (§11, §15, §16)
    ("§15 eighty layers at a batch of eight hold 10,240 MB", activation_memory, CORRECT,
     dict(layers=80, batch=8, act_per_layer_mb=16, hbm_mb=8192, recompute=False), dict(act_mb=10240, fits=False)),
    ("§15 128 MB with recomputation", activation_memory, CORRECT,
     dict(layers=80, batch=8, act_per_layer_mb=16, hbm_mb=8192, recompute=True), dict(act_mb=128, fits=True, spare_mb=8064)),
    ("§16 an activation set exactly filling the fast tier", activation_memory, CORRECT,
     dict(layers=80, batch=512, act_per_layer_mb=16, hbm_mb=8192, recompute=True), dict(act_mb=8192, fits=True, spare_mb=0)),
    ("§16 the empty batch is not a free activation", activation_memory, CORRECT,
     dict(layers=80, batch=0, act_per_layer_mb=16, hbm_mb=8192, recompute=False), dict(act_mb=0, activations_free_err=False)),
    ("§16 ... nor in the no-activations build", activation_memory, BROKEN,
     dict(layers=80, batch=0, act_per_layer_mb=16, hbm_mb=8192, recompute=False), dict(act_mb=0, activations_free_err=False)),
    ("§11 the model that ignores activations holds nothing", activation_memory, BROKEN,
     dict(layers=80, batch=8, act_per_layer_mb=16, hbm_mb=8192, recompute=False),
     dict(act_mb=0, fits=True, activations_free_err=True)),
    # --- the fabric (§12, §15, §16)
    ("§15 16 × 800 Gbps: 6400 full, 1600 at 4:1", fabric_bisection, CORRECT,
     dict(nodes=16, link_gbps=800, oversub_x=4, demand_gbps=1600),
     dict(full_bisection_gbps=6400, real_bisection_gbps=1600, sufficient=True)),
    ("§12 the full-bisection model quotes 6400", fabric_bisection, BROKEN,
     dict(nodes=16, link_gbps=800, oversub_x=4, demand_gbps=1600), dict(real_bisection_gbps=6400, oversub_ignored_err=True)),
    ("§16 one-to-one is not ignored oversubscription", fabric_bisection, CORRECT,
     dict(nodes=16, link_gbps=800, oversub_x=1, demand_gbps=1600), dict(real_bisection_gbps=6400, oversub_ignored_err=False)),
    ("§16 one-to-one: nor in the full-bisection build", fabric_bisection, BROKEN,
     dict(nodes=16, link_gbps=800, oversub_x=1, demand_gbps=1600), dict(real_bisection_gbps=6400, oversub_ignored_err=False)),
    ("§16 unstated is not ignored oversubscription", fabric_bisection, CORRECT,
     dict(nodes=16, link_gbps=800, oversub_x=0, demand_gbps=1600), dict(real_bisection_gbps=6400, oversub_ignored_err=False)),
    ("§16 unstated: nor in the full-bisection build", fabric_bisection, BROKEN,
     dict(nodes=16, link_gbps=800, oversub_x=0, demand_gbps=1600), dict(real_bisection_gbps=6400, oversub_ignored_err=False)),
    # --- economics (§13, §15, §16)
    ("§15 6400 spent, 3200 delivered: 2000 per useful teraflop", cluster_economics, CORRECT,
     dict(nodes=64, node_cost=100, node_tflops=100, efficiency_pct=50),
     dict(total_cost=6400, peak_tflops=6400, useful_tflops=3200, cost_per_useful=2000, acceptable=False)),
    ("§15 against a peak-priced 1000", cluster_economics, BROKEN,
     dict(nodes=64, node_cost=100, node_tflops=100, efficiency_pct=50),
     dict(useful_tflops=6400, cost_per_useful=1000, acceptable=True, efficiency_ignored_err=True)),
    ("§16 a quarter of the cluster delivers 800 teraflops", cluster_economics, CORRECT,
     dict(nodes=16, node_cost=100, node_tflops=100, efficiency_pct=50), dict(useful_tflops=800)),
    ("§16 at the same 2000 per useful teraflop", cluster_economics, CORRECT,
     dict(nodes=16, node_cost=100, node_tflops=100, efficiency_pct=50), dict(cost_per_useful=2000)),
    ("§13 the purchase order: 6400 teraflops at 6400", cluster_economics, BROKEN,
     dict(nodes=64, node_cost=100, node_tflops=100, efficiency_pct=50), dict(peak_tflops=6400, total_cost=6400)),
    ("§13 4× the nodes at half the efficiency costs more per useful TFLOPS (1000 at 100%)", cluster_economics, CORRECT,
     dict(nodes=16, node_cost=100, node_tflops=100, efficiency_pct=100), dict(cost_per_useful=1000, acceptable=True)),
]


@pytest.mark.parametrize(
    "model, broken, inputs, expected",
    [pytest.param(*row[1:], id=f"{row[0]} ({'broken' if row[2] else 'correct'})") for row in NUMBERS],
)
def test_source_number(model, broken, inputs, expected):
    result = model(**inputs, **{spec_of(model).broken_flag: broken})
    assert {k: getattr(result, k) for k in expected} == expected


def test_ring_factor_approaches_two():
    """§6: each half moves (N-1)/N; the fabric carries 2(N-1)/N, never below one beyond two ranks."""
    assert ring_factor(2) == 1.0
    assert 8 * ring_factor(8) == 14.0
    assert 14 < 8 * ring_factor(64) < 16  # 15.75, truncated to 15 GB
    assert ring_factor(64) < ring_factor(1000) < 2  # "very slightly more"


def test_doubling_microbatches_roughly_halves_the_bubble():
    """§7: "Doubling the microbatches roughly halves the bubble" (it falls as 1/M)."""
    for m in (32, 64, 128, 256):
        ratio = bubble_fraction(8, 2 * m) / bubble_fraction(8, m)
        assert 0.5 < ratio < 0.6


def test_ten_times_the_tier_bandwidth():
    """§8: a tier ten times faster takes the overhead from 18% to 1%."""
    slow = checkpoint_cost(footprint_gb=560, tier_gbps=80, interval_s=300)
    fast = checkpoint_cost(footprint_gb=560, tier_gbps=800, interval_s=300)
    assert (slow.overhead_pct, fast.overhead_pct) == (18, 1)


def test_doubling_the_interval_doubles_the_loss():
    """§9: doubling the checkpoint interval: 180 minutes a day instead of 90."""
    hourly = failure_recovery(nodes=1000, node_mtbf_h=8760, interval_min=60)
    two_hourly = failure_recovery(nodes=1000, node_mtbf_h=8760, interval_min=120)
    assert two_hourly.lost_min_per_day == 2 * hourly.lost_min_per_day == 180


def test_recomputation_is_a_factor_of_eighty():
    """§15: 10,240 MB against 128 MB with recomputation, a factor of 80."""
    held = activation_memory(layers=80, batch=8, act_per_layer_mb=16, hbm_mb=8192)
    recomputed = activation_memory(layers=80, batch=8, act_per_layer_mb=16, hbm_mb=8192, recompute=True)
    assert held.act_mb == 80 * recomputed.act_mb == 10240


def test_oversubscription_is_a_factor_of_four():
    """§15: four-to-one divides the collective's bandwidth by four."""
    r = fabric_bisection(nodes=16, link_gbps=800, oversub_x=4, demand_gbps=0)
    assert r.full_bisection_gbps == 4 * r.real_bisection_gbps == 6400


def test_scale_does_not_change_the_unit_economics():
    """§13/§15: 16 nodes at 50% cost the same per useful TFLOPS as 64 at 50%."""
    full = cluster_economics(nodes=64, node_cost=100, node_tflops=100, efficiency_pct=50)
    quarter = cluster_economics(nodes=16, node_cost=100, node_tflops=100, efficiency_pct=50)
    assert full.cost_per_useful == quarter.cost_per_useful == 2000
    # §13: 50% efficiency doubles the cost per useful TFLOPS.
    peak = cluster_economics(nodes=64, node_cost=100, node_tflops=100, efficiency_pct=50, ignore_efficiency=True)
    assert full.cost_per_useful == 2 * peak.cost_per_useful


def test_debug_lab_numbers_as_the_models_compute_them():
    """§21 (the debug lab) rounds where the models truncate; pinned at the models' values.

    The prose's "36% straggler tax" (180 ms mean, 244 ms max) is 35.6%, truncated to 35;
    its cost per useful teraflop "from 1400 to 2400" is 1428 and 2439; the pipeline
    bubble "from 9% to 17%" (four stages to eight, microbatches unchanged) is 8% and 17% at
    32 microbatches, and no single microbatch count gives 9 and 17 under truncation.
    """
    assert straggler_step(mean_ms=180, slowest_ms=244).waste_pct == 35
    lab = [cluster_economics(nodes=n, node_cost=100, node_tflops=100, efficiency_pct=e).cost_per_useful
           for n, e in ((32, 70), (64, 41))]
    assert lab == [1428, 2439]
    assert [pipeline_bubble(stages=s, microbatches=32).bubble_pct for s in (4, 8)] == [8, 17]
    pairs = {(pipeline_bubble(stages=4, microbatches=m).bubble_pct,
              pipeline_bubble(stages=8, microbatches=m).bubble_pct) for m in range(1, 200)}
    assert (9, 17) not in pairs
    # "64 x 0.41 against 32 x 0.70 is a ratio of 1.17"
    assert round(64 * 41 / (32 * 70), 2) == 1.17


def test_debug_lab_step_2_has_no_reading_that_gives_14_gb_at_both_sizes():
    """§21 step 2: "unchanged at 14 GB". The whole-cluster ring (the lab's own reason) gives
    15 GB at 32 and 64 ranks; eight replicas give 14 GB at four stages but 7 GB at eight."""
    from clustermath.peak.debug_lab import fabric_bytes

    w = fabric_bytes()
    assert (w.moved_32_ranks_gb, w.moved_64_ranks_gb) == (15, 15)
    assert (w.exact_32_ranks_gb, w.exact_64_ranks_gb) == (15.5, 15.75)
    assert (w.replicas_4_stages_gb, w.replicas_8_stages_gb) == (14, 7)
    assert 14 not in (w.moved_32_ranks_gb, w.moved_64_ranks_gb)
    # two-rank degenerate case: the ring moves the gradient once, whichever reading
    assert fabric_bytes(gradient_gb=2).replicas_8_stages_gb == 1
    assert fabric_bytes(gradient_gb=0).moved_64_ranks_gb == 0
