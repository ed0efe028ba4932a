"""Behaviour of chapter 1's models 1-9 (source 000, sections 5-13), in both builds.

* THRESHOLDS: every inclusive threshold at exact equality and one step either side.
* GUARDS: every degenerate input and the value the source defines for it.
* SPEC_SHEET_RIGHT: where the broken (specification-sheet) build is right, and its
  ``*_err`` flag stays quiet; ERR_FIRES: where it is wrong and the flag fires.
* SATURATION: every 16-bit output that can exceed 65535.
* QUIRKS: behaviours the docstrings (or the source's RTL) imply that look odd;
  pinned so that changing one is a deliberate act.

The assembled model (RTL 10) is in test_ch1_assembled.py, bad-input errors in
test_ch1_validation.py, the source's stated numbers in test_ch1_source_numbers.py.
"""
from __future__ import annotations

import dataclasses

import pytest

import clustermath as cm
from clustermath import (
    activation_memory,
    checkpoint_cost,
    cluster_economics,
    cluster_scale,
    collective_cost,
    fabric_bisection,
    failure_recovery,
    pipeline_bubble,
    spec_of,
    straggler_step,
)

CORRECT, BROKEN = False, True


def build(model, inputs, broken):
    """Call ``model`` in the correct (broken=False) or the broken build."""
    return model(**inputs, **{spec_of(model).broken_flag: broken})


def err_name(model):
    (name,) = [o for o in spec_of(model).outputs if o.endswith("_err")]
    return name


def fields(result, names):
    return {n: getattr(result, n) for n in names}


def cases(label, model, inputs, correct, broken="same"):
    """One param per build. ``broken="same"`` expects the correct build's values."""
    yield pytest.param(model, inputs, CORRECT, correct, id=f"{label}/correct")
    if broken is not None:
        yield pytest.param(model, inputs, BROKEN, correct if broken == "same" else broken, id=f"{label}/broken")


def table(*groups):
    return [p for g in groups for p in g]


# Short constructors for the models' inputs.
def scale(nodes=64, node_tflops=100, compute_ms=300, comm_ms=100):
    return dict(nodes=nodes, node_tflops=node_tflops, compute_ms=compute_ms, comm_ms=comm_ms)


def coll(bytes_gb=8, nodes=8, fabric_gbps=800, budget_ms=100):
    return dict(bytes_gb=bytes_gb, nodes=nodes, fabric_gbps=fabric_gbps, budget_ms=budget_ms)


def pipe(stages, microbatches):
    return dict(stages=stages, microbatches=microbatches)


def ckpt(footprint_gb=560, tier_gbps=80, interval_s=300):
    return dict(footprint_gb=footprint_gb, tier_gbps=tier_gbps, interval_s=interval_s)


def fail(nodes=1000, node_mtbf_h=8760, interval_min=60):
    return dict(nodes=nodes, node_mtbf_h=node_mtbf_h, interval_min=interval_min)


def strag(mean_ms=200, slowest_ms=260):
    return dict(mean_ms=mean_ms, slowest_ms=slowest_ms)


def act(layers=80, batch=8, act_per_layer_mb=16, hbm_mb=8192, recompute=False):
    return dict(layers=layers, batch=batch, act_per_layer_mb=act_per_layer_mb, hbm_mb=hbm_mb, recompute=recompute)


def fab(nodes=16, link_gbps=800, oversub_x=4, demand_gbps=1600):
    return dict(nodes=nodes, link_gbps=link_gbps, oversub_x=oversub_x, demand_gbps=demand_gbps)


def econ(nodes=64, node_cost=100, node_tflops=100, efficiency_pct=50):
    return dict(nodes=nodes, node_cost=node_cost, node_tflops=node_tflops, efficiency_pct=efficiency_pct)


# ============================================================ thresholds
# (label, model, build, inputs, measured output, its value, property output, property value)
# Each threshold appears as below / exactly at / above, in every build that can reach it.

THRESHOLDS = [
    # RTL 1: scales_well = efficiency_pct >= 75. The broken build's efficiency is only ever
    # 0 or 100, so the threshold is reachable in the correct build only.
    ("scale 74%", cluster_scale, CORRECT, scale(compute_ms=74, comm_ms=26), "efficiency_pct", 74, "scales_well", False),
    ("scale 75%", cluster_scale, CORRECT, scale(compute_ms=75, comm_ms=25), "efficiency_pct", 75, "scales_well", True),
    ("scale 76%", cluster_scale, CORRECT, scale(compute_ms=76, comm_ms=24), "efficiency_pct", 76, "scales_well", True),
    # RTL 2: within_budget = collective_ms <= budget_ms; 8 GB at 640 Gbps is exactly 100 ms.
    ("coll 2 ranks budget 99", collective_cost, CORRECT, coll(nodes=2, fabric_gbps=640, budget_ms=99), "collective_ms", 100, "within_budget", False),
    ("coll 2 ranks budget 100", collective_cost, CORRECT, coll(nodes=2, fabric_gbps=640, budget_ms=100), "collective_ms", 100, "within_budget", True),
    ("coll 2 ranks budget 101", collective_cost, CORRECT, coll(nodes=2, fabric_gbps=640, budget_ms=101), "collective_ms", 100, "within_budget", True),
    ("coll 101 ms", collective_cost, CORRECT, coll(nodes=2, fabric_gbps=633, budget_ms=100), "collective_ms", 101, "within_budget", False),
    ("coll 99 ms", collective_cost, CORRECT, coll(nodes=2, fabric_gbps=641, budget_ms=100), "collective_ms", 99, "within_budget", True),
    ("coll flat budget 99", collective_cost, BROKEN, coll(nodes=8, fabric_gbps=640, budget_ms=99), "collective_ms", 100, "within_budget", False),
    ("coll flat budget 100", collective_cost, BROKEN, coll(nodes=8, fabric_gbps=640, budget_ms=100), "collective_ms", 100, "within_budget", True),
    ("coll flat budget 101", collective_cost, BROKEN, coll(nodes=8, fabric_gbps=640, budget_ms=101), "collective_ms", 100, "within_budget", True),
    # RTL 3: acceptable = bubble_pct <= 20; 5 stages and 16 microbatches is exactly 20%.
    # The no-bubble build reports 0 always, so only the correct build reaches 20.
    ("pipe 21%", pipeline_bubble, CORRECT, pipe(5, 15), "bubble_pct", 21, "acceptable", False),
    ("pipe 20%", pipeline_bubble, CORRECT, pipe(5, 16), "bubble_pct", 20, "acceptable", True),
    ("pipe 19%", pipeline_bubble, CORRECT, pipe(5, 17), "bubble_pct", 19, "acceptable", True),
    # RTL 4: affordable = overhead_pct <= 10. At 8 Gbps a GB takes a second, so write_s = footprint.
    # The free-write build's overhead is 0 or 65535, so only the correct build reaches 10.
    ("ckpt 9%", checkpoint_cost, CORRECT, ckpt(footprint_gb=9, tier_gbps=8, interval_s=100), "overhead_pct", 9, "affordable", True),
    ("ckpt 10%", checkpoint_cost, CORRECT, ckpt(footprint_gb=10, tier_gbps=8, interval_s=100), "overhead_pct", 10, "affordable", True),
    ("ckpt 11%", checkpoint_cost, CORRECT, ckpt(footprint_gb=11, tier_gbps=8, interval_s=100), "overhead_pct", 11, "affordable", False),
    ("ckpt 560 GB 10%", checkpoint_cost, CORRECT, ckpt(interval_s=560), "overhead_pct", 10, "affordable", True),
    # RTL 5: tolerable = lost_min_per_day <= 60. A 12 h cluster MTBF fails twice a day, so the
    # loss equals the interval. The single-node build reaches it when the node's MTBF is 12 h.
    ("fail 59 min", failure_recovery, CORRECT, fail(nodes=1, node_mtbf_h=12, interval_min=59), "lost_min_per_day", 59, "tolerable", True),
    ("fail 60 min", failure_recovery, CORRECT, fail(nodes=1, node_mtbf_h=12, interval_min=60), "lost_min_per_day", 60, "tolerable", True),
    ("fail 61 min", failure_recovery, CORRECT, fail(nodes=1, node_mtbf_h=12, interval_min=61), "lost_min_per_day", 61, "tolerable", False),
    ("fail 1000 nodes 60 min", failure_recovery, CORRECT, fail(interval_min=40), "lost_min_per_day", 60, "tolerable", True),
    ("fail 1000 nodes 61 min", failure_recovery, CORRECT, fail(interval_min=41), "lost_min_per_day", 61, "tolerable", False),
    ("fail single-node view 59", failure_recovery, BROKEN, fail(nodes=500, node_mtbf_h=12, interval_min=59), "lost_min_per_day", 59, "tolerable", True),
    ("fail single-node view 60", failure_recovery, BROKEN, fail(nodes=500, node_mtbf_h=12, interval_min=60), "lost_min_per_day", 60, "tolerable", True),
    ("fail single-node view 61", failure_recovery, BROKEN, fail(nodes=500, node_mtbf_h=12, interval_min=61), "lost_min_per_day", 61, "tolerable", False),
    # RTL 6: tolerable = waste_pct <= 10. The uniform build's waste is always 0.
    ("strag 9%", straggler_step, CORRECT, strag(100, 109), "waste_pct", 9, "tolerable", True),
    ("strag 10%", straggler_step, CORRECT, strag(100, 110), "waste_pct", 10, "tolerable", True),
    ("strag 11%", straggler_step, CORRECT, strag(100, 111), "waste_pct", 11, "tolerable", False),
    ("strag 200 ms 10%", straggler_step, CORRECT, strag(200, 220), "waste_pct", 10, "tolerable", True),
    # RTL 7: fits = act_mb <= hbm_mb (80 layers x 8 x 16 MB = 10,240 MB).
    ("act hbm 10239", activation_memory, CORRECT, act(hbm_mb=10239), "act_mb", 10240, "fits", False),
    ("act hbm 10240", activation_memory, CORRECT, act(hbm_mb=10240), "act_mb", 10240, "fits", True),
    ("act hbm 10241", activation_memory, CORRECT, act(hbm_mb=10241), "act_mb", 10240, "fits", True),
    ("act no-activations hbm 0", activation_memory, BROKEN, act(hbm_mb=0), "act_mb", 0, "fits", True),
    # RTL 8: sufficient = real_bisection_gbps >= demand_gbps (16 x 800 / 2 / 4 = 1600).
    ("fab demand 1599", fabric_bisection, CORRECT, fab(demand_gbps=1599), "real_bisection_gbps", 1600, "sufficient", True),
    ("fab demand 1600", fabric_bisection, CORRECT, fab(demand_gbps=1600), "real_bisection_gbps", 1600, "sufficient", True),
    ("fab demand 1601", fabric_bisection, CORRECT, fab(demand_gbps=1601), "real_bisection_gbps", 1600, "sufficient", False),
    ("fab full demand 6399", fabric_bisection, BROKEN, fab(demand_gbps=6399), "real_bisection_gbps", 6400, "sufficient", True),
    ("fab full demand 6400", fabric_bisection, BROKEN, fab(demand_gbps=6400), "real_bisection_gbps", 6400, "sufficient", True),
    ("fab full demand 6401", fabric_bisection, BROKEN, fab(demand_gbps=6401), "real_bisection_gbps", 6400, "sufficient", False),
    # RTL 9: acceptable = cost_per_useful <= 1500. With 100/100 nodes no whole efficiency gives
    # 1500 (see test_ch1_worked_tables), so the node figures are chosen: one 2000-TFLOPS node at
    # 50% delivers 1000, and cost_per_useful is then the node cost.
    ("econ 1499", cluster_economics, CORRECT, econ(1, 1499, 2000, 50), "cost_per_useful", 1499, "acceptable", True),
    ("econ 1500", cluster_economics, CORRECT, econ(1, 1500, 2000, 50), "cost_per_useful", 1500, "acceptable", True),
    ("econ 1501", cluster_economics, CORRECT, econ(1, 1501, 2000, 50), "cost_per_useful", 1501, "acceptable", False),
    ("econ 10 nodes at 75, 50%", cluster_economics, CORRECT, econ(10, 75, 100, 50), "cost_per_useful", 1500, "acceptable", True),
    ("econ 100% 1500", cluster_economics, CORRECT, econ(1, 3, 2, 100), "cost_per_useful", 1500, "acceptable", True),
    ("econ peak-priced 1499", cluster_economics, BROKEN, econ(1, 1499, 1000, 50), "cost_per_useful", 1499, "acceptable", True),
    ("econ peak-priced 1500", cluster_economics, BROKEN, econ(1, 1500, 1000, 50), "cost_per_useful", 1500, "acceptable", True),
    ("econ peak-priced 1501", cluster_economics, BROKEN, econ(1, 1501, 1000, 50), "cost_per_useful", 1501, "acceptable", False),
]


@pytest.mark.parametrize(
    "model, broken, inputs, measured, value, prop, holds",
    [pytest.param(*row[1:], id=f"{row[0]}/{'broken' if row[2] else 'correct'}") for row in THRESHOLDS],
)
def test_threshold(model, broken, inputs, measured, value, prop, holds):
    result = build(model, inputs, broken)
    assert (getattr(result, measured), getattr(result, prop)) == (value, holds)


# ============================================================ guards
# Degenerate inputs and the value the source defines (65535 = unbounded).

GUARDS = table(
    # RTL 1: step_ms == 0 gives efficiency 0.
    cases("scale empty step", cluster_scale, scale(compute_ms=0, comm_ms=0),
          dict(step_ms=0, efficiency_pct=0, achieved_tflops=0, scales_well=False, comm_ignored_err=False)),
    cases("scale no compute", cluster_scale, scale(compute_ms=0, comm_ms=100),
          dict(step_ms=100, efficiency_pct=0, achieved_tflops=0, scales_well=False, comm_ignored_err=False),
          dict(step_ms=0, efficiency_pct=0, achieved_tflops=0, scales_well=False, comm_ignored_err=True)),
    cases("scale zero nodes", cluster_scale, scale(nodes=0),
          dict(ideal_tflops=0, efficiency_pct=75, achieved_tflops=0, scales_well=True),
          dict(ideal_tflops=0, efficiency_pct=100, achieved_tflops=0, scales_well=True)),
    cases("scale zero tflops", cluster_scale, scale(node_tflops=0),
          dict(ideal_tflops=0, achieved_tflops=0), dict(ideal_tflops=0, achieved_tflops=0)),
    # RTL 2: nodes == 0 moves nothing; fabric_gbps == 0 is unbounded (65535).
    cases("coll zero nodes", collective_cost, coll(nodes=0),
          dict(moved_gb=0, collective_ms=0, within_budget=True, understated_err=False),
          dict(moved_gb=8, collective_ms=80, within_budget=True, understated_err=False)),
    cases("coll one rank", collective_cost, coll(nodes=1),
          dict(moved_gb=0, collective_ms=0, within_budget=True, understated_err=False),
          dict(moved_gb=8, collective_ms=80, within_budget=True, understated_err=False)),
    cases("coll zero fabric", collective_cost, coll(fabric_gbps=0),
          dict(moved_gb=14, collective_ms=65535, within_budget=False, understated_err=False),
          dict(moved_gb=8, collective_ms=65535, within_budget=False, understated_err=True)),
    cases("coll zero fabric zero nodes", collective_cost, coll(nodes=0, fabric_gbps=0),
          dict(moved_gb=0, collective_ms=65535, within_budget=False),
          dict(moved_gb=8, collective_ms=65535, within_budget=False)),
    cases("coll zero budget", collective_cost, coll(budget_ms=0),
          dict(collective_ms=140, within_budget=False), dict(collective_ms=80, within_budget=False)),
    # RTL 3: microbatches + stages - 1 == 0 (one stage, no microbatches) gives 0.
    cases("pipe empty schedule", pipeline_bubble, pipe(1, 0),
          dict(bubble_pct=0, useful_pct=100, acceptable=True, bubble_ignored_err=False)),
    cases("pipe no microbatches, 8 stages", pipeline_bubble, pipe(8, 0),
          dict(bubble_pct=100, useful_pct=0, acceptable=False, bubble_ignored_err=False),
          dict(bubble_pct=0, useful_pct=100, acceptable=True, bubble_ignored_err=True)),
    # RTL 4: tier_gbps == 0 and interval_s == 0 are unbounded (65535).
    cases("ckpt zero tier", checkpoint_cost, ckpt(tier_gbps=0),
          dict(write_s=65535, overhead_pct=21845, affordable=False, free_write_err=False),
          dict(write_s=0, overhead_pct=0, affordable=True, free_write_err=False)),
    cases("ckpt zero interval", checkpoint_cost, ckpt(interval_s=0),
          dict(write_s=56, overhead_pct=65535, affordable=False, free_write_err=False),
          dict(write_s=0, overhead_pct=65535, affordable=False, free_write_err=True)),
    cases("ckpt zero tier and interval", checkpoint_cost, ckpt(tier_gbps=0, interval_s=0),
          dict(write_s=65535, overhead_pct=65535, affordable=False, free_write_err=False),
          dict(write_s=0, overhead_pct=65535, affordable=False, free_write_err=False)),
    # RTL 5: nodes == 0 keeps the node's MTBF; an MTBF of 0 h is unbounded failures (65535).
    cases("fail zero nodes", failure_recovery, fail(nodes=0),
          dict(cluster_mtbf_h=8760, failures_per_day=0, lost_min_per_day=0, tolerable=True, scale_ignored_err=False)),
    cases("fail MTBF truncates to 0", failure_recovery, fail(nodes=10000),
          dict(cluster_mtbf_h=0, failures_per_day=65535, lost_min_per_day=65535, tolerable=False, scale_ignored_err=False),
          dict(cluster_mtbf_h=8760, failures_per_day=0, lost_min_per_day=0, tolerable=True, scale_ignored_err=True)),
    cases("fail node MTBF 0, one node", failure_recovery, fail(nodes=1, node_mtbf_h=0),
          dict(cluster_mtbf_h=0, failures_per_day=65535, lost_min_per_day=65535, tolerable=False, scale_ignored_err=False)),
    cases("fail zero interval", failure_recovery, fail(interval_min=0),
          dict(failures_per_day=3, lost_min_per_day=0, tolerable=True),
          dict(failures_per_day=0, lost_min_per_day=0, tolerable=True)),
    # RTL 6: mean_ms == 0 gives waste_pct 0 (the source's choice, not "unbounded").
    cases("strag zero mean", straggler_step, strag(0, 50),
          dict(step_ms=50, waste_ms=50, waste_pct=0, tolerable=True, uniform_assumed_err=False),
          dict(step_ms=0, waste_ms=0, waste_pct=0, tolerable=True, uniform_assumed_err=True)),
    cases("strag all zero", straggler_step, strag(0, 0),
          dict(step_ms=0, waste_ms=0, waste_pct=0, tolerable=True, uniform_assumed_err=False)),
    # RTL 7: an empty batch (or no layers, or empty layers) holds nothing and is not an error.
    cases("act empty batch", activation_memory, act(batch=0),
          dict(act_mb=0, spare_mb=8192, fits=True, activations_free_err=False)),
    cases("act no layers", activation_memory, act(layers=0),
          dict(act_mb=0, spare_mb=8192, fits=True, activations_free_err=False)),
    cases("act zero per-layer", activation_memory, act(act_per_layer_mb=0),
          dict(act_mb=0, spare_mb=8192, fits=True, activations_free_err=False)),
    cases("act zero hbm", activation_memory, act(hbm_mb=0),
          dict(act_mb=10240, spare_mb=0, fits=False, activations_free_err=False),
          dict(act_mb=0, spare_mb=0, fits=True, activations_free_err=True)),
    # RTL 8: no nodes or no links is a zero fabric; oversub_x == 0 ("unstated") keeps the full figure.
    cases("fab zero nodes, no demand", fabric_bisection, fab(nodes=0, oversub_x=1, demand_gbps=0),
          dict(full_bisection_gbps=0, real_bisection_gbps=0, sufficient=True, oversub_ignored_err=False)),
    cases("fab zero links, some demand", fabric_bisection, fab(link_gbps=0, oversub_x=1, demand_gbps=1),
          dict(full_bisection_gbps=0, real_bisection_gbps=0, sufficient=False, oversub_ignored_err=False)),
    cases("fab oversubscription 65535", fabric_bisection, fab(oversub_x=65535, demand_gbps=0),
          dict(full_bisection_gbps=6400, real_bisection_gbps=0, sufficient=True, oversub_ignored_err=False),
          dict(full_bisection_gbps=6400, real_bisection_gbps=6400, sufficient=True, oversub_ignored_err=True)),
    # RTL 9: useful_tflops == 0 is an unbounded cost (65535).
    cases("econ zero efficiency", cluster_economics, econ(efficiency_pct=0),
          dict(useful_tflops=0, cost_per_useful=65535, acceptable=False, efficiency_ignored_err=False),
          dict(useful_tflops=6400, cost_per_useful=1000, acceptable=True, efficiency_ignored_err=True)),
    cases("econ zero nodes at 100%", cluster_economics, econ(nodes=0, efficiency_pct=100),
          dict(total_cost=0, peak_tflops=0, useful_tflops=0, cost_per_useful=65535, acceptable=False,
               efficiency_ignored_err=False)),
    cases("econ free nodes", cluster_economics, econ(node_cost=0),
          dict(total_cost=0, useful_tflops=3200, cost_per_useful=0, acceptable=True),
          dict(total_cost=0, useful_tflops=6400, cost_per_useful=0, acceptable=True)),
)


@pytest.mark.parametrize("model, inputs, broken, expected", GUARDS)
def test_guard(model, inputs, broken, expected):
    assert fields(build(model, inputs, broken), expected) == expected


# ============================================================ where the spec sheet is right
# The broken build returns exactly what the correct one does, and the check stays quiet.

SPEC_SHEET_RIGHT = [
    pytest.param(cluster_scale, scale(compute_ms=100, comm_ms=0), id="scale: no communication"),
    pytest.param(collective_cost, coll(nodes=2), id="coll: two ranks"),
    pytest.param(collective_cost, coll(nodes=2, fabric_gbps=640), id="coll: two ranks at the budget"),
    pytest.param(pipeline_bubble, pipe(1, 8), id="pipe: a single stage"),
    pytest.param(pipeline_bubble, pipe(1, 0), id="pipe: a single stage, empty"),
    pytest.param(checkpoint_cost, ckpt(footprint_gb=0), id="ckpt: an empty state"),
    pytest.param(failure_recovery, fail(nodes=1), id="fail: a single node"),
    pytest.param(failure_recovery, fail(nodes=0), id="fail: no nodes"),
    pytest.param(straggler_step, strag(200, 200), id="strag: uniform ranks"),
    pytest.param(activation_memory, act(batch=0), id="act: an empty batch"),
    pytest.param(fabric_bisection, fab(oversub_x=1), id="fab: one-to-one"),
    pytest.param(fabric_bisection, fab(oversub_x=0), id="fab: oversubscription unstated"),
    pytest.param(cluster_economics, econ(efficiency_pct=100), id="econ: 100% efficiency"),
]


@pytest.mark.parametrize("model, inputs", SPEC_SHEET_RIGHT)
def test_spec_sheet_build_is_right_and_the_check_is_quiet(model, inputs):
    correct, broken = build(model, inputs, CORRECT), build(model, inputs, BROKEN)
    assert broken == correct
    assert getattr(broken, err_name(model)) is False
    assert getattr(correct, err_name(model)) is False


# ============================================================ where the spec sheet is wrong

ERR_FIRES = [
    pytest.param(cluster_scale, scale(compute_ms=100, comm_ms=100), id="scale: 50% reported as 100%"),
    pytest.param(collective_cost, coll(nodes=3), id="coll: three ranks"),
    pytest.param(collective_cost, coll(nodes=64), id="coll: 64 ranks"),
    pytest.param(pipeline_bubble, pipe(2, 64), id="pipe: two stages"),
    pytest.param(pipeline_bubble, pipe(8, 32), id="pipe: eight stages"),
    pytest.param(checkpoint_cost, ckpt(), id="ckpt: 560 GB in no time"),
    pytest.param(failure_recovery, fail(nodes=2), id="fail: two nodes"),
    pytest.param(failure_recovery, fail(), id="fail: a thousand nodes"),
    pytest.param(straggler_step, strag(200, 201), id="strag: one ms slower"),
    pytest.param(straggler_step, strag(200, 260), id="strag: 260 ms rank"),
    pytest.param(activation_memory, act(), id="act: 10 GB held, none counted"),
    pytest.param(activation_memory, act(recompute=True), id="act: recomputation, none counted"),
    pytest.param(fabric_bisection, fab(oversub_x=2), id="fab: two-to-one"),
    pytest.param(fabric_bisection, fab(), id="fab: four-to-one"),
    pytest.param(cluster_economics, econ(efficiency_pct=99), id="econ: 99%"),
    pytest.param(cluster_economics, econ(), id="econ: 50%"),
]


@pytest.mark.parametrize("model, inputs", ERR_FIRES)
def test_check_fires_in_the_broken_build_only(model, inputs):
    correct, broken = build(model, inputs, CORRECT), build(model, inputs, BROKEN)
    assert getattr(broken, err_name(model)) is True
    assert getattr(correct, err_name(model)) is False
    assert broken != correct


# ============================================================ saturation at 65535
# (label, model, build, inputs, output, the exact unsaturated value)

SATURATION = [
    ("scale ideal", cluster_scale, CORRECT, scale(nodes=1000), "ideal_tflops", 100_000),
    ("scale ideal", cluster_scale, BROKEN, scale(nodes=65535, node_tflops=65535), "ideal_tflops", 65535**2),
    ("scale achieved at 100% of a saturated ideal", cluster_scale, BROKEN, scale(nodes=1000), "achieved_tflops", 100_000),
    ("scale step (RTL wraps)", cluster_scale, CORRECT, scale(compute_ms=65535, comm_ms=1), "step_ms", 65536),
    ("coll moved", collective_cost, CORRECT, coll(bytes_gb=40000, nodes=64), "moved_gb", 78750),
    ("coll moved (RTL wraps)", collective_cost, CORRECT, coll(bytes_gb=65535, nodes=65535), "moved_gb", 2 * 65535 * 65534 // 65535),
    ("coll time", collective_cost, CORRECT, coll(bytes_gb=9, nodes=2, fabric_gbps=1), "collective_ms", 72000),
    ("coll time", collective_cost, BROKEN, coll(bytes_gb=9, fabric_gbps=1), "collective_ms", 72000),
    ("ckpt write", checkpoint_cost, CORRECT, ckpt(footprint_gb=65535, tier_gbps=1), "write_s", 524280),
    ("ckpt overhead", checkpoint_cost, CORRECT, ckpt(tier_gbps=1, interval_s=1), "overhead_pct", 448000),
    ("ckpt overhead of a zero tier", checkpoint_cost, CORRECT, ckpt(tier_gbps=0, interval_s=1), "overhead_pct", 6553500),
    ("fail lost", failure_recovery, CORRECT, fail(nodes=8760, interval_min=65535), "lost_min_per_day", 24 * 65535 // 2),
    ("fail lost, unbounded failures", failure_recovery, CORRECT, fail(nodes=10000), "lost_min_per_day", 65535 * 60 // 2),
    ("fail lost, node MTBF 0", failure_recovery, BROKEN, fail(node_mtbf_h=0), "lost_min_per_day", 65535 * 60 // 2),
    ("strag waste", straggler_step, CORRECT, strag(1, 65535), "waste_pct", 6553400),
    ("act held", activation_memory, CORRECT, act(batch=100), "act_mb", 128_000),
    ("act held (RTL wraps)", activation_memory, CORRECT, act(65535, 65535, 65535), "act_mb", 65535**3),
    ("fab full", fabric_bisection, CORRECT, fab(nodes=1000), "full_bisection_gbps", 400_000),
    ("fab full", fabric_bisection, BROKEN, fab(nodes=1000), "full_bisection_gbps", 400_000),
    ("fab real one-to-one", fabric_bisection, CORRECT, fab(nodes=1000, oversub_x=1), "real_bisection_gbps", 400_000),
    ("econ total", cluster_economics, CORRECT, econ(nodes=1000), "total_cost", 100_000),
    ("econ peak", cluster_economics, BROKEN, econ(nodes=1000), "peak_tflops", 100_000),
    ("econ useful at 100% (peak saturated)", cluster_economics, CORRECT, econ(nodes=1000, efficiency_pct=100), "useful_tflops", 100_000),
    ("econ cost per useful", cluster_economics, CORRECT, econ(1, 6400, 1, 100), "cost_per_useful", 6_400_000),
    ("econ cost per useful", cluster_economics, BROKEN, econ(1, 6400, 1, 50), "cost_per_useful", 6_400_000),
]


@pytest.mark.parametrize(
    "model, broken, inputs, output, exact",
    [pytest.param(*row[1:], id=f"{row[0]}/{'broken' if row[2] else 'correct'}") for row in SATURATION],
)
def test_saturates_at_65535(model, broken, inputs, output, exact):
    assert exact > 65535
    assert getattr(build(model, inputs, broken), output) == 65535


def test_saturated_inputs_downstream():
    # Downstream arithmetic runs on the saturated value, as in the source.
    assert fabric_bisection(**fab(nodes=1000)).real_bisection_gbps == 65535 // 4
    big = cluster_economics(**econ(nodes=1000))  # cost and peak both saturate at 65535
    assert (big.useful_tflops, big.cost_per_useful) == (32767, 2000)
    assert cluster_scale(**scale(nodes=1000, compute_ms=50, comm_ms=50)).achieved_tflops == 32767


# ============================================================ pinned quirks
# Each looks odd, follows from the source's arithmetic, and is pinned deliberately.

QUIRKS = table(
    # collective_cost docstring: understated_err fires whenever truncation makes moved == bytes.
    cases("coll 1 GB over three ranks truncates to 1 GB", collective_cost, coll(bytes_gb=1, nodes=3),
          dict(moved_gb=1, understated_err=True)),
    cases("coll empty gradient", collective_cost, coll(bytes_gb=0, nodes=64),
          dict(moved_gb=0, collective_ms=0, understated_err=True)),
    # Not in the docstring: saturation can also make moved == bytes (87,380 GB saturates to 65,535).
    cases("coll saturated move equals a 65535 GB gradient", collective_cost, coll(bytes_gb=65535, nodes=3),
          dict(moved_gb=65535, understated_err=True)),
    # "Unbounded" (65535 ms) still fits a 65535 ms budget: the comparison is inclusive.
    cases("coll unbounded time within a 65535 budget", collective_cost, coll(fabric_gbps=0, budget_ms=65535),
          dict(collective_ms=65535, within_budget=True)),
    # pipeline_bubble docstring: a bubble under 1% truncates to 0 and raises the error.
    cases("pipe 2 stages, 99 microbatches is 1%", pipeline_bubble, pipe(2, 99),
          dict(bubble_pct=1, bubble_ignored_err=False), dict(bubble_pct=0, bubble_ignored_err=True)),
    cases("pipe 2 stages, 100 microbatches truncates to 0%", pipeline_bubble, pipe(2, 100),
          dict(bubble_pct=0, useful_pct=100, bubble_ignored_err=True)),
    # checkpoint_cost docstring: a sub-second write truncates to 0 s and raises the error.
    cases("ckpt 9 GB at 80 Gbps (0.9 s) is free", checkpoint_cost, ckpt(footprint_gb=9),
          dict(write_s=0, overhead_pct=0, free_write_err=True)),
    cases("ckpt 10 GB at 80 Gbps is 1 s", checkpoint_cost, ckpt(footprint_gb=10),
          dict(write_s=1, free_write_err=False), dict(write_s=0, free_write_err=True)),
    # Truncated percentages make the threshold generous: 10.98% is "10" and affordable.
    cases("ckpt 56 s every 510 s is 10.98%", checkpoint_cost, ckpt(interval_s=510),
          dict(overhead_pct=10, affordable=True), dict(overhead_pct=0, affordable=True)),
    # failure_recovery docstring: a cluster MTBF over 24 h counts as no failures a day.
    cases("fail 24 h MTBF: one a day", failure_recovery, fail(nodes=365),
          dict(cluster_mtbf_h=24, failures_per_day=1, lost_min_per_day=30, scale_ignored_err=False), None),
    cases("fail 25 h MTBF: none a day", failure_recovery, fail(nodes=350),
          dict(cluster_mtbf_h=25, failures_per_day=0, lost_min_per_day=0, scale_ignored_err=False), None),
    # Unbounded failures lose nothing when nothing is ever lost (interval 0).
    cases("fail unbounded failures, zero interval", failure_recovery, fail(nodes=10000, interval_min=0),
          dict(failures_per_day=65535, lost_min_per_day=0, tolerable=True),
          dict(failures_per_day=0, lost_min_per_day=0, tolerable=True)),
    # Not in the docstring: a 0 h node MTBF divides to 0 h, equal to the node's, so the
    # scale check fires in the correct build too (as in the source).
    cases("fail node MTBF 0 on two nodes", failure_recovery, fail(nodes=2, node_mtbf_h=0),
          dict(cluster_mtbf_h=0, failures_per_day=65535, scale_ignored_err=True)),
    # Integer division: nodes 1 with 1 Gbps links bisect at 0 Gbps.
    cases("fab one node bisects at half a link, truncated", fabric_bisection, fab(nodes=1, link_gbps=1, oversub_x=1, demand_gbps=0),
          dict(full_bisection_gbps=0, real_bisection_gbps=0)),
    # Not in the docstring: a zero fabric with a stated ratio has real == full == 0, so the
    # oversubscription check fires in the correct build too (as in the source).
    cases("fab zero fabric at four-to-one", fabric_bisection, fab(nodes=0, demand_gbps=0),
          dict(full_bisection_gbps=0, real_bisection_gbps=0, sufficient=True, oversub_ignored_err=True)),
    # activation_memory docstring: recomputation holds one layer even with layers = 0.
    cases("act recompute with no layers holds one", activation_memory, act(layers=0, recompute=True),
          dict(act_mb=128, spare_mb=8064, fits=True, activations_free_err=False),
          dict(act_mb=0, spare_mb=8192, fits=True, activations_free_err=False)),
    cases("act recompute with no layers can fail to fit", activation_memory, act(layers=0, hbm_mb=127, recompute=True),
          dict(act_mb=128, fits=False), dict(act_mb=0, fits=True)),
    # A saturated 128,000 MB "fits" 65,535 MB of memory (saturate, then compare; as in the source).
    cases("act saturated activations fit 65535 MB", activation_memory, act(batch=100, hbm_mb=65535),
          dict(act_mb=65535, spare_mb=0, fits=True), dict(act_mb=0, spare_mb=65535, fits=True)),
    # cluster_scale docstring: a saturated step equal to compute_ms raises the error in the correct build.
    cases("scale saturated step", cluster_scale, scale(compute_ms=65535, comm_ms=1),
          dict(step_ms=65535, efficiency_pct=99, scales_well=True, comm_ignored_err=True),
          dict(step_ms=65535, efficiency_pct=100, scales_well=True, comm_ignored_err=True)),
    cases("scale saturated step below the compute's 65535", cluster_scale, scale(compute_ms=65000, comm_ms=1000),
          dict(step_ms=65535, efficiency_pct=98, achieved_tflops=6272, comm_ignored_err=False),
          dict(step_ms=65000, efficiency_pct=100, achieved_tflops=6400, comm_ignored_err=True)),
    # Not in the docstring: with no peak, useful == peak == 0, so the efficiency check fires
    # in the correct build too (as in the source).
    cases("econ zero nodes at 50%", cluster_economics, econ(nodes=0),
          dict(peak_tflops=0, useful_tflops=0, cost_per_useful=65535, efficiency_ignored_err=True)),
    cases("econ zero-TFLOPS nodes at 50%", cluster_economics, econ(node_tflops=0),
          dict(peak_tflops=0, useful_tflops=0, cost_per_useful=65535, efficiency_ignored_err=True)),
    # Truncation: 1 TFLOPS at 99% delivers nothing; the check is quiet because useful != peak.
    cases("econ 1 TFLOPS at 99%", cluster_economics, econ(1, 100, 1, 99),
          dict(useful_tflops=0, cost_per_useful=65535, efficiency_ignored_err=False),
          dict(useful_tflops=1, cost_per_useful=65535, efficiency_ignored_err=True)),
)


@pytest.mark.parametrize("model, inputs, broken, expected", QUIRKS)
def test_quirk(model, inputs, broken, expected):
    assert fields(build(model, inputs, broken), expected) == expected


# ============================================================ invariants and helpers


@pytest.mark.parametrize("microbatches", [0, 1, 16, 32, 64, 1000, 65535])
@pytest.mark.parametrize("stages", [1, 2, 5, 8, 64, 65535])
def test_bubble_plus_useful_is_100(stages, microbatches):
    r = pipeline_bubble(stages=stages, microbatches=microbatches)
    assert r.bubble_pct + r.useful_pct == 100
    assert 0 <= cm.bubble_fraction(stages, microbatches) <= 1


@pytest.mark.parametrize("microbatches", [0, 1, 16, 32, 64, 1000, 30000])
@pytest.mark.parametrize("stages", [1, 2, 5, 8, 64, 1000, 35000])
def test_bubble_is_the_truncated_exact_fraction(stages, microbatches):
    denom = microbatches + stages - 1
    assert denom <= 65535  # below the point where the source's 16-bit denominator wraps
    r = pipeline_bubble(stages=stages, microbatches=microbatches)
    assert r.bubble_pct == (0 if denom == 0 else (stages - 1) * 100 // denom)
    assert r.bubble_pct == int(cm.bubble_fraction(stages, microbatches) * 100 + 1e-9)


# The source's RTL wraps the 16-bit denominator M+S-1 (S=M=65535 gives 100%); the book keeps it exact.
@pytest.mark.parametrize("stages, microbatches, exact_pct", [(65535, 65535, 49), (40000, 40000, 49), (30000, 50000, 37)])
def test_bubble_with_a_denominator_past_65535_is_the_exact_fraction(stages, microbatches, exact_pct):
    assert (stages - 1) * 100 // (microbatches + stages - 1) == exact_pct
    assert pipeline_bubble(stages=stages, microbatches=microbatches).bubble_pct == exact_pct


def test_bubble_at_the_extremes():
    # The RTL's 16-bit denominator wraps to 1 and 0 here (100% saturating to 65535, and 0%).
    assert pipeline_bubble(stages=65535, microbatches=3).bubble_pct == 99
    assert pipeline_bubble(stages=65535, microbatches=2).bubble_pct == 99
    assert pipeline_bubble(stages=65535, microbatches=0).bubble_pct == 100


def test_ring_factor():
    assert cm.ring_factor(0) == 0.0
    assert cm.ring_factor(1) == 0.0
    assert cm.ring_factor(2) == 1.0
    assert cm.ring_factor(8) == 1.75
    assert cm.ring_factor(64) == 1.96875
    # Never below one beyond two ranks, approaching two.
    factors = [cm.ring_factor(n) for n in range(2, 2000)]
    assert factors == sorted(factors) and factors[-1] < 2
    with pytest.raises(ValueError, match=r"^nodes must be in 0\.\.65535"):
        cm.ring_factor(-1)


def test_bubble_fraction_guards():
    assert cm.bubble_fraction(1, 0) == 0.0
    assert cm.bubble_fraction(5, 16) == 0.2
    with pytest.raises(ValueError, match=r"^stages must be in 1\.\.65535, got 0$"):
        cm.bubble_fraction(0, 8)


def test_checkpoint_and_failures_trade_in_opposite_directions():
    """Section 18: a shorter interval costs overhead, a longer one costs lost work."""
    minutes = [5, 10, 30, 60, 120, 240]
    overhead = [checkpoint_cost(**ckpt(interval_s=60 * m)).overhead_pct for m in minutes]
    lost = [failure_recovery(**fail(interval_min=m)).lost_min_per_day for m in minutes]
    assert overhead == sorted(overhead, reverse=True) and overhead[0] > overhead[-1]
    assert lost == sorted(lost) and lost[0] < lost[-1]


def test_economics_scale_cancels():
    """With 100-unit, 100-TFLOPS nodes the cost is 100000 // efficiency at any size."""
    for nodes in (1, 16, 64, 500):
        for eff in (1, 41, 50, 70, 99, 100):
            assert cluster_economics(**econ(nodes=nodes, efficiency_pct=eff)).cost_per_useful == min(100_000 // eff, 65535)


# ============================================================ immutability

RESULTS = [
    (cluster_scale, scale()), (collective_cost, coll()), (pipeline_bubble, pipe(8, 32)),
    (checkpoint_cost, ckpt()), (failure_recovery, fail()), (straggler_step, strag()),
    (activation_memory, act()), (fabric_bisection, fab()), (cluster_economics, econ()),
    (cm.training_cluster_model, dict(nodes_added=True, comm_costed=True, bubble_bounded=True,
                                     checkpoint_affordable=True, stragglers_bounded=True,
                                     bisection_sufficient=True)),
]


@pytest.mark.parametrize("model, inputs", RESULTS, ids=[m.__name__ for m, _ in RESULTS])
def test_results_are_frozen_with_the_source_port_names(model, inputs):
    result = model(**inputs)
    first = dataclasses.fields(result)[0].name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(result, first, 0)
    with pytest.raises((AttributeError, TypeError)):
        result.extra = 1  # slots: no new attributes
    assert tuple(f.name for f in dataclasses.fields(result)) == spec_of(model).outputs
    assert hash(result) == hash(model(**inputs))  # frozen results are hashable values
