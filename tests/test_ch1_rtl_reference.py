"""Differential test: models 1-9 against a line-by-line transliteration of source 000's RTL.

Each ``rtl_*`` function below follows its SystemVerilog module (sections 5-13):
32-bit intermediates, 16-bit outputs saturating at 65535, and - where the RTL
holds a value in a fixed width without saturating - wrapping modulo 2**16 or
2**32. Each returns its outputs and the names of the intermediates that wrapped.

Where nothing wraps, clustermath must agree with the RTL exactly, in both
builds. Where something wraps, the intermediate must be listed in
``ports.WRAP_ERRATA`` and clustermath must give the exact-then-saturated value
instead. The sweep is a fixed-seed pseudo-random sample (no hypothesis), so it
is repeatable and fast.
"""
from __future__ import annotations

import random

import pytest

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
from clustermath.peak.ports import WRAP_ERRATA

M16, M32 = 0xFFFF, 0xFFFFFFFF


class Width:
    """Fixed-width arithmetic that records which named intermediate overflowed."""

    def __init__(self, wrap: bool):
        self.wrap = wrap
        self.wrapped: set[str] = set()

    def fit(self, name: str, value: int, mask: int) -> int:
        """A value held in a register of ``mask`` width.

        The RTL wraps it. The book (WRAP_ERRATA) keeps it exact; whatever reaches a
        16-bit output is saturated there.
        """
        if value > mask:
            self.wrapped.add(name)
            if self.wrap:
                return value & mask
        return value


def sat(x: int) -> int:
    return M16 if x > M16 else x


def rtl_scale(w, nodes, node_tflops, compute_ms, comm_ms, broken):
    ideal = sat(nodes * node_tflops)  # 65535**2 fits 32 bits
    step = compute_ms if broken else w.fit("cluster_scale.step_ms", compute_ms + comm_ms, M16)
    eff = 0 if step == 0 else sat(compute_ms * 100 // step)
    achieved = sat(ideal * eff // 100)
    step = sat(step)  # the book's output saturates; its efficiency used the exact sum
    return dict(ideal_tflops=ideal, step_ms=step, efficiency_pct=eff, achieved_tflops=achieved,
                scales_well=eff >= 75, comm_ignored_err=comm_ms != 0 and step == compute_ms)


def rtl_coll(w, bytes_gb, nodes, fabric_gbps, budget_ms, broken):
    if broken:
        m = bytes_gb
    elif nodes == 0:
        m = 0
    else:
        m = w.fit("collective_cost.moved_gb", 2 * bytes_gb * (nodes - 1), M32) // nodes
    moved = sat(m)
    t = M16 if fabric_gbps == 0 else moved * 8000 // fabric_gbps
    ms = sat(t)
    return dict(moved_gb=moved, collective_ms=ms, within_budget=ms <= budget_ms,
                understated_err=nodes > 2 and moved == bytes_gb)


def rtl_pipe(w, stages, microbatches, broken):
    denom = w.fit("pipeline_bubble.denom", microbatches + stages - 1, M16)
    b = 0 if broken or denom == 0 else (stages - 1) * 100 // denom
    bubble = sat(b)
    return dict(bubble_pct=bubble, useful_pct=(100 - bubble) & M16, acceptable=bubble <= 20,
                bubble_ignored_err=stages > 1 and bubble == 0)


def rtl_ckpt(w, footprint_gb, tier_gbps, interval_s, broken):
    write = sat(0 if broken else M16 if tier_gbps == 0 else footprint_gb * 8 // tier_gbps)
    overhead = sat(M16 if interval_s == 0 else write * 100 // interval_s)
    return dict(write_s=write, overhead_pct=overhead, affordable=overhead <= 10,
                free_write_err=footprint_gb != 0 and tier_gbps != 0 and write == 0)


def rtl_fail(w, nodes, node_mtbf_h, interval_min, broken):
    mtbf = sat(node_mtbf_h if broken or nodes == 0 else node_mtbf_h // nodes)
    per_day = sat(M16 if mtbf == 0 else 24 // mtbf)
    lost = sat(per_day * interval_min // 2)
    return dict(cluster_mtbf_h=mtbf, failures_per_day=per_day, lost_min_per_day=lost,
                tolerable=lost <= 60, scale_ignored_err=nodes > 1 and mtbf == node_mtbf_h)


def rtl_strag(w, mean_ms, slowest_ms, broken):
    step = mean_ms if broken else slowest_ms
    waste = step - mean_ms if step > mean_ms else 0
    pct = sat(0 if mean_ms == 0 else waste * 100 // mean_ms)
    return dict(step_ms=step, waste_ms=waste, waste_pct=pct, tolerable=pct <= 10,
                uniform_assumed_err=slowest_ms > mean_ms and step == mean_ms)


def rtl_act(w, layers, batch, act_per_layer_mb, hbm_mb, recompute, broken):
    held = 1 if recompute else layers
    a = 0 if broken else w.fit("activation_memory.act_mb", held * batch * act_per_layer_mb, M32)
    act = sat(a)
    fits = act <= hbm_mb
    return dict(act_mb=act, spare_mb=hbm_mb - act if fits else 0, fits=fits,
                activations_free_err=layers != 0 and batch != 0 and act_per_layer_mb != 0 and act == 0)


def rtl_fab(w, nodes, link_gbps, oversub_x, demand_gbps, broken):
    full = sat(nodes * link_gbps // 2)
    real = sat(full if broken or oversub_x == 0 else full // oversub_x)
    return dict(full_bisection_gbps=full, real_bisection_gbps=real, sufficient=real >= demand_gbps,
                oversub_ignored_err=oversub_x > 1 and real == full)


def rtl_econ(w, nodes, node_cost, node_tflops, efficiency_pct, broken):
    total, peak = sat(nodes * node_cost), sat(nodes * node_tflops)
    useful = sat(peak if broken else peak * efficiency_pct // 100)
    cost = sat(M16 if useful == 0 else total * 1000 // useful)  # 65535 * 1000 fits 32 bits
    return dict(total_cost=total, peak_tflops=peak, useful_tflops=useful, cost_per_useful=cost,
                acceptable=cost <= 1500, efficiency_ignored_err=efficiency_pct < 100 and useful == peak)


REFERENCE = {
    cluster_scale: rtl_scale, collective_cost: rtl_coll, pipeline_bubble: rtl_pipe,
    checkpoint_cost: rtl_ckpt, failure_recovery: rtl_fail, straggler_step: rtl_strag,
    activation_memory: rtl_act, fabric_bisection: rtl_fab, cluster_economics: rtl_econ,
}


def reference(model, inputs, broken, wrap):
    w = Width(wrap)
    return REFERENCE[model](w, **inputs, broken=broken), w.wrapped


def draw(rng: random.Random) -> int:
    """A 16-bit value biased towards the small, the typical and the top of the range."""
    band = rng.random()
    if band < 0.15:
        return rng.randint(0, 3)
    if band < 0.5:
        return rng.randint(0, 300)
    if band < 0.8:
        return rng.randint(0, 10_000)
    return rng.randint(60_000, 65_535)


def sample(model, n, seed):
    rng = random.Random(f"{model.__name__}-{seed}")
    for _ in range(n):
        inputs = {p: (rng.random() < 0.5 if p == "recompute" else draw(rng)) for p in spec_of(model).inputs}
        if model is pipeline_bubble:
            inputs["stages"] = max(inputs["stages"], 1)
        if model is straggler_step and inputs["slowest_ms"] < inputs["mean_ms"]:
            inputs["mean_ms"], inputs["slowest_ms"] = inputs["slowest_ms"], inputs["mean_ms"]
        if model is cluster_economics:
            inputs["efficiency_pct"] %= 101
        yield inputs


@pytest.mark.parametrize("broken", [False, True], ids=["correct", "broken"])
@pytest.mark.parametrize("model", list(REFERENCE), ids=lambda m: m.__name__)
def test_agrees_with_the_rtl(model, broken):
    flag = spec_of(model).broken_flag
    for inputs in sample(model, 600, seed=2024):
        got = model(**inputs, **{flag: broken})
        got = {k: getattr(got, k) for k in spec_of(model).outputs}
        rtl, wrapped = reference(model, inputs, broken, wrap=True)
        if not wrapped:
            assert got == rtl, inputs
            continue
        assert wrapped <= set(WRAP_ERRATA), inputs
        book, _ = reference(model, inputs, broken, wrap=False)
        assert got == book, inputs


# One input per erratum where the RTL wraps: (erratum, model, inputs, output, RTL value, book value)
ERRATA_CASES = [
    ("cluster_scale.step_ms", cluster_scale, dict(nodes=1, node_tflops=1, compute_ms=65535, comm_ms=1),
     "step_ms", 0, 65535),
    ("cluster_scale.step_ms", cluster_scale, dict(nodes=64, node_tflops=100, compute_ms=65000, comm_ms=1000),
     "efficiency_pct", 14008, 98),
    ("collective_cost.moved_gb", collective_cost, dict(bytes_gb=65535, nodes=65535, fabric_gbps=800, budget_ms=0),
     "moved_gb", (2 * 65535 * 65534 & M32) // 65535, 65535),
    ("pipeline_bubble.denom", pipeline_bubble, dict(stages=65535, microbatches=3),
     "bubble_pct", 65535, 99),  # exact: 6553400 // 65537
    ("pipeline_bubble.denom", pipeline_bubble, dict(stages=65535, microbatches=2),
     "bubble_pct", 0, 99),  # exact: 6553400 // 65536
    ("activation_memory.act_mb", activation_memory,
     dict(layers=63514, batch=193, act_per_layer_mb=2803, hbm_mb=8509, recompute=False),
     "act_mb", 63514 * 193 * 2803 & M32, 65535),
    ("activation_memory.act_mb", activation_memory,
     dict(layers=63514, batch=193, act_per_layer_mb=2803, hbm_mb=8509, recompute=False),
     "fits", True, False),
]


@pytest.mark.parametrize("erratum, model, inputs, output, rtl_value, book_value", ERRATA_CASES,
                         ids=[f"{c[0]}:{c[3]}#{i}" for i, c in enumerate(ERRATA_CASES)])
def test_wrap_erratum(erratum, model, inputs, output, rtl_value, book_value):
    assert erratum in WRAP_ERRATA
    rtl, wrapped = reference(model, inputs, False, wrap=True)
    assert wrapped == {erratum}
    assert rtl[output] == rtl_value != book_value
    assert getattr(model(**inputs), output) == book_value


def test_every_erratum_is_demonstrated():
    assert {c[0] for c in ERRATA_CASES} == set(WRAP_ERRATA)


def test_no_wrap_without_an_erratum():
    """Overflow-prone intermediates not in WRAP_ERRATA fit their width at the extremes."""
    top = 65535
    assert top * top <= M32  # ideal_tflops, total_cost, peak_tflops, full bisection
    assert top * 8000 <= M32  # collective_ms numerator
    assert top * 1000 <= M32  # cost_per_useful numerator
    assert top * 100 <= M32  # every percentage numerator
    assert top * 8 <= M32  # checkpoint write numerator
