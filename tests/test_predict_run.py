"""Chapter 6's composed model: ``predict_run``, its calibration, the ETTR and the days to train.

Limits (one stage, unlimited bandwidth, one GPU, a single micro-batch), exact
hand-computed cases, the FLOP and parameter formulas against the figures
Narayanan et al. print, every ``ValueError``, and Hypothesis properties (more
bandwidth never slows a step, a bigger batch never raises the bubble's share,
MFU never exceeds the kernel efficiency, more nodes never shrink the failure loss).
"""
from __future__ import annotations

import math
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from argument_errors import BAD, assert_errors_name_their_argument
from clustermath import (
    BUS_EFFICIENCY_OUT, BUS_EFFICIENCY_UP, CALIBRATION, DP_OVERLAP, KERNEL_EFFICIENCY, KERNEL_HALF_WIDTH,
    STRAGGLER_CV, LATENCY_S, KERNEL_EFFICIENCY_HOPPER, bubble_fraction, calibrate, calibrate_defaults, days_to_train, hardware_flops,
    kernel_share, model_flops, parameter_count, predict_run, ring_factor, run_ettr, slowest_of,
    straggler_tax,
)
from clustermath.reliability import daly_wall_ratio, young_interval
from clustermath.validation import family
from clustermath.validation.inputs import CP_ATTENTION_OVERHEAD, Constants, Hardware, Layout, ModelShape, Stack
from clustermath.validation.predict import gemm_times, predicted_flops

INF = math.inf
A100 = {"peak_tflops": 312.0, "scale_up_GBps": 300.0, "scale_out_GBps": 25.0, "memory_TBps": INF, "latency_s": 0.0}
"""The hand-computed cases run where the naive model is right: no memory-bound work, no latency."""
GPT3 = {"layers": 96, "hidden": 12288, "heads": 96, "seq_len": 2048, "vocab": 51200,
        "global_batch": 1536, "microbatch": 1, "gpus": 768, "tp": 8, "pp": 12, "recompute": "full", **A100}
"""Narayanan et al. (2021) Table 2's 174.6 B PTD-P run on 768 GPUs (TP 8 × PP 12, as their §4.1 and sc21 scripts)."""

PARTS = ("compute_s", "bubble_s", "tp_exposed_s", "cp_exposed_s", "pp_exposed_s", "dp_exposed_s", "straggler_s")


def parts_sum(r) -> float:
    return sum(getattr(r, k) for k in PARTS)


# -- the FLOPs and the parameters ------------------------------------------------------------

# Narayanan et al. (2021) Table 1: parameters (billions) as printed, with heads, hidden, layers.
NARAYANAN_TABLE_1 = ((1.7, 2304, 24), (3.6, 3072, 30), (7.5, 4096, 36), (18.4, 6144, 40), (39.1, 8192, 48),
                     (76.1, 10240, 60), (145.6, 12288, 80), (310.1, 16384, 96), (529.6, 20480, 105),
                     (1008.0, 25600, 128))


@pytest.mark.parametrize("billions, hidden, layers", NARAYANAN_TABLE_1)
def test_parameter_count_is_narayanans_eq_2(billions, hidden, layers):
    p = parameter_count(layers=layers, hidden=hidden, seq_len=2048, vocab=51200)
    assert p / 1e9 == pytest.approx(billions, abs=0.05 + 1e-9)


def test_flops_per_step_by_hand():
    # h = 512, s = 6h = 3072, l = 4, V = 12 h l = 24,576: each bracket term is 1.
    kw = dict(layers=4, hidden=512, seq_len=3072, vocab=24_576, sequences=8)
    base = 72 * 8 * 3072 * 4 * 512 ** 2  # 72 B s l h² = 1,855,425,871,872
    assert base == 1_855_425_871_872
    assert model_flops(**kw) == 3 * base
    assert hardware_flops(**kw) == 3 * base
    # selective: one more forward of QKᵀ and scores×V: 4 B s² h l
    assert hardware_flops(**kw, recompute="selective") == 3 * base + 4 * 8 * 3072 ** 2 * 512 * 4
    # full: one more forward of every layer, 24 B s l h² (1 + s/6h), not the logits
    assert hardware_flops(**kw, recompute="full") == 3 * base + base / 3 * 2


def test_full_recompute_is_narayanans_eq_3():
    for _, h, l in NARAYANAN_TABLE_1:
        kw = dict(layers=l, hidden=h, seq_len=2048, vocab=51200, sequences=512)
        eq3 = 96 * 512 * 2048 * l * h * h * (1 + 2048 / (6 * h) + 51200 / (16 * l * h))
        assert hardware_flops(**kw, recompute="full") == pytest.approx(eq3, rel=1e-12)
        assert model_flops(**kw) / eq3 == pytest.approx(
            (1 + 2048 / (6 * h) + 51200 / (12 * l * h)) * 72 / (96 * (1 + 2048 / (6 * h) + 51200 / (16 * l * h))))


# -- an exact case -------------------------------------------------------------------------------

SMALL = dict(layers=4, hidden=512, seq_len=3072, vocab=24_576, global_batch=8, microbatch=1, gpus=8,
             tp=2, pp=2, peak_tflops=100.0, scale_up_GBps=100.0, scale_out_GBps=10.0,
             kernel_efficiency=0.5, kernel_half_width=0.0, bus_efficiency_up=1.0, bus_efficiency_out=1.0,
             straggler_cv=0.0, memory_TBps=INF, latency_s=0.0,
             causal_attention=False)  # the hand counts below take the attention products in full


def test_small_run_by_hand():
    r = predict_run(**SMALL)
    assert (r.dp, r.microbatches) == (2, 4)           # d = 8/(2·2), m = 8/(1·2)
    f_model = 3 * 1_855_425_871_872                    # the FLOPs above
    f_hw = f_model
    # the last stage paces: its 2 layers' share (2/3 of the FLOPs over 8 GPUs) and the logits (the other
    # third) on its 4 GPUs alone, p = 2 times their even share: (2/3 + 2·1/3) of f over 8 GPUs
    assert r.compute_s == pytest.approx(f_hw * (2 / 3 + 2 / 3) / (8 * 100e12 * 0.5))   # 0.018554259 s
    assert r.compute_s == pytest.approx(0.018554258719, rel=1e-9)
    # TP: m · l/p · 4 all-reduces · 2(2−1)/2 · 2 B·1·3072·512 bytes over 100 GB/s (the 8 GPUs share a domain)
    assert r.tp_comm_s == pytest.approx(4 * 2 * 4 * 1 * 2 * 3072 * 512 / 100e9)  # 0.00100663296 s
    # PP: 2 m v sends of 2·1·3072·512/2 bytes over 100 GB/s
    assert r.pp_comm_s == pytest.approx(2 * 4 * 1 * 3072 * 512 / 100e9)         # 0.000125829 s
    # DP: 2(2−1)/2 · 4 bytes · P/(t·p) over 100 GB/s
    p = 12 * 4 * 512 ** 2 * (1 + 13 / (12 * 512) + (24_576 + 3072) / (12 * 4 * 512))
    assert r.parameters == pytest.approx(p)
    assert r.dp_comm_s == pytest.approx(1 * 4 * p / 4 / 100e9)
    work = r.compute_s + r.tp_comm_s + r.pp_comm_s
    assert r.bubble_s == pytest.approx(work * (2 - 1) / (1 * 4))               # (p−1)/(v·m)
    assert (r.cp_exposed_s, r.straggler_s) == (0.0, 0.0)
    assert r.step_s == pytest.approx(work * 1.25 + r.dp_comm_s)
    assert r.mfu == pytest.approx(f_model / (r.step_s * 8 * 100e12))
    assert r.mfu == r.hfu and r.tflops_per_gpu == r.model_tflops_per_gpu
    assert r.tokens_per_s == pytest.approx(8 * 3072 / r.step_s)
    assert (r.iteration_s, r.pct_peak) == (r.step_s, r.hfu)
    assert parts_sum(r) == pytest.approx(r.step_s, rel=1e-12)


def test_bubble_is_chapter_1s_bubble_fraction():
    for v in (1, 2, 4):
        r = predict_run(**{**SMALL, "layers": 16, "pp": 4, "virtual_stages": v, "gpus": 8, "global_batch": 16})
        share = r.bubble_s / (r.bubble_s + r.compute_s + r.tp_exposed_s + r.pp_exposed_s)
        assert share == pytest.approx(bubble_fraction(4, v * r.microbatches))
        assert r.bubble_s == pytest.approx((r.compute_s + r.tp_exposed_s + r.pp_exposed_s) * 3 / (v * 16))


def test_interleaving_divides_the_bubble():
    runs = [predict_run(**{**GPT3, "virtual_stages": v, "scale_out_GBps": INF}) for v in (1, 2, 4)]
    assert runs[0].bubble_s / runs[1].bubble_s == pytest.approx(2)
    assert runs[0].bubble_s / runs[2].bubble_s == pytest.approx(4)


# -- limits -----------------------------------------------------------------------------------------

def test_one_stage_has_no_bubble():
    r = predict_run(**{**GPT3, "layers": 96, "pp": 1, "gpus": 64, "global_batch": 64})
    assert r.bubble_s == 0 and r.pp_comm_s == 0


def test_unlimited_bandwidth_leaves_compute_alone():
    finite = predict_run(**GPT3)
    free = predict_run(**{**GPT3, "scale_up_GBps": INF, "scale_out_GBps": INF})
    assert free.compute_s == finite.compute_s
    assert (free.tp_exposed_s, free.cp_exposed_s, free.pp_exposed_s, free.dp_exposed_s) == (0, 0, 0, 0)
    assert free.step_s < finite.step_s
    assert free.step_s == pytest.approx(free.compute_s + free.bubble_s + free.straggler_s)


def test_one_gpu_is_pure_compute():
    r = predict_run(layers=2, hidden=256, seq_len=128, vocab=1000, global_batch=4, microbatch=4, gpus=1,
                    tp=1, pp=1, peak_tflops=10, scale_up_GBps=1, scale_out_GBps=1, recompute="full",
                    memory_TBps=INF, causal_attention=False)   # HFU on the full count: at most η(h)
    assert r.step_s == r.compute_s and r.dp == 1 and r.microbatches == 1
    assert (r.tp_comm_s, r.dp_comm_s, r.pp_comm_s, r.cp_comm_s, r.straggler_s) == (0, 0, 0, 0, 0)
    assert r.slowest_speed == 1.0
    assert r.hfu == pytest.approx(KERNEL_EFFICIENCY * 256 / (256 + KERNEL_HALF_WIDTH))
    assert r.hfu == pytest.approx(kernel_share(256))
    assert r.mfu == pytest.approx(r.hfu * r.model_flops / r.hardware_flops)


def test_one_microbatch_pays_the_whole_fill():
    r = predict_run(**{**SMALL, "global_batch": 2, "microbatch": 1})   # m = 1
    assert r.microbatches == 1
    assert r.bubble_s == pytest.approx(r.compute_s + r.tp_exposed_s + r.pp_exposed_s)


def test_tp_beyond_the_domain_uses_the_nic():
    inside = predict_run(**GPT3)
    outside = predict_run(**GPT3, scale_up_gpus=4)
    assert outside.tp_comm_s / inside.tp_comm_s == pytest.approx(
        (300 * BUS_EFFICIENCY_UP) / (25 * BUS_EFFICIENCY_OUT))
    one_domain = predict_run(**{**SMALL, "scale_up_GBps": INF})
    assert one_domain.dp_comm_s == 0  # 8 GPUs, one domain: DP rides the (infinite) scale-up wire


def test_overlaps_hide_their_share():
    r = predict_run(**GPT3, tp_overlap=0.25, pp_overlap=1.0, dp_overlap=0.5)
    assert r.tp_exposed_s == pytest.approx(0.75 * r.tp_comm_s)
    assert r.pp_exposed_s == 0 and r.dp_exposed_s == pytest.approx(0.5 * r.dp_comm_s)


def test_recompute_changes_hardware_not_model_flops():
    runs = {rc: predict_run(**{**GPT3, "recompute": rc}) for rc in ("none", "selective", "full")}
    assert len({r.model_flops for r in runs.values()}) == 1
    assert runs["none"].hardware_flops < runs["selective"].hardware_flops < runs["full"].hardware_flops
    assert runs["none"].mfu == runs["none"].hfu
    assert runs["full"].tp_comm_s / runs["none"].tp_comm_s == pytest.approx(6 / 4)
    assert runs["selective"].tp_comm_s == runs["none"].tp_comm_s


def test_context_parallel_exchange_hides_behind_attention():
    long = dict(layers=16, hidden=4096, heads=32, kv_heads=8, seq_len=131_072, vocab=128_000,
                global_batch=16, microbatch=1, gpus=128, tp=8, pp=1, cp=16, peak_tflops=989,
                scale_up_GBps=450, scale_out_GBps=50, latency_s=0.0)
    r = predict_run(**long)
    assert r.cp_comm_s > 0 and r.cp_exposed_s == 0          # 128 k tokens: the attention math hides it
    short = predict_run(**{**long, "seq_len": 2048, "scale_out_GBps": 0.5})
    assert short.cp_exposed_s > 0
    mha = predict_run(**{**long, "kv_heads": None})
    assert mha.cp_comm_s == pytest.approx(4 * r.cp_comm_s)   # 32 key/value heads instead of 8
    assert predict_run(**{**long, "cp": 1, "gpus": 8}).cp_comm_s == 0


def test_stragglers_reuse_chapter_2():
    r = predict_run(**GPT3)
    speed = 1 / (1 + STRAGGLER_CV * slowest_of(768))
    assert r.slowest_speed == pytest.approx(speed)
    tax = straggler_tax(speed=speed, gpus=768).step_time_factor - 1
    assert r.straggler_s == pytest.approx(tax * (r.step_s - r.dp_exposed_s - r.straggler_s))
    assert predict_run(**GPT3, straggler_cv=0).straggler_s == 0


def test_slowest_of():
    assert slowest_of(1) == 0
    assert slowest_of(2) == pytest.approx(1 / math.sqrt(math.pi), rel=0.05)   # exact E[max of 2]
    assert slowest_of(12_288) == pytest.approx(3.89, abs=0.01)
    values = [slowest_of(n) for n in (1, 2, 8, 64, 1024, 100_000)]
    assert values == sorted(values)


def test_ring_factor_reused():
    r = predict_run(**GPT3)
    assert r.dp_comm_s == pytest.approx(ring_factor(8) * 4 * r.parameters / 96 / (25e9 * BUS_EFFICIENCY_OUT))


def test_a_data_parallel_group_shares_its_domains_nics():
    # TP 1: the 8 GPUs of a node are 8 members of one data-parallel group, 8 rings through 8 NICs
    base = dict(layers=24, hidden=2304, seq_len=2048, vocab=51200, global_batch=512, microbatch=16,
                gpus=32, pp=1, recompute="full", **A100)
    r = predict_run(**base, tp=1)
    assert r.dp_comm_s == pytest.approx(ring_factor(32) * 4 * r.parameters / (8 * 25e9 * BUS_EFFICIENCY_OUT))
    r2 = predict_run(**{**base, "global_batch": 256}, tp=2)                   # 4 members per node
    assert r2.dp_comm_s == pytest.approx(ring_factor(16) * 4 * r2.parameters / 2 / (4 * 25e9 * BUS_EFFICIENCY_OUT))
    wide = predict_run(**base, tp=1, scale_up_gpus=72)   # 32 GPUs in one 72-GPU domain: NVLink only
    assert wide.dp_comm_s == pytest.approx(ring_factor(32) * 4 * wide.parameters / (300e9 * BUS_EFFICIENCY_UP))


def test_kernel_share():
    assert kernel_share(954, half_width=954) == pytest.approx(KERNEL_EFFICIENCY / 2)
    assert kernel_share(1e12) == pytest.approx(KERNEL_EFFICIENCY)
    assert kernel_share(1000, efficiency=0.5, half_width=0) == 0.5
    assert kernel_share(2304, half_width=954) < kernel_share(20480, half_width=954) < KERNEL_EFFICIENCY
    # the calibrated h½ is small: the narrowest 2021 model keeps 92% of η_∞
    assert KERNEL_EFFICIENCY > kernel_share(2304) > 0.9 * KERNEL_EFFICIENCY
    for bad, message in (({"hidden": 0}, "hidden must be a number in (0, inf)"),
                         ({"efficiency": 1.5}, "efficiency must be a number in (0, 1]"),
                         ({"half_width": -1}, "half_width must be a number in [0, inf)")):
        with pytest.raises(ValueError) as err:
            kernel_share(**{"hidden": 1000, **bad})
        assert str(err.value).startswith(message)


def test_mfu_never_exceeds_kernel_efficiency_at_the_limit():
    r = predict_run(**{**SMALL, "pp": 1, "tp": 1, "gpus": 1, "global_batch": 1, "kernel_efficiency": 0.7})
    assert r.mfu == pytest.approx(0.7) and r.mfu <= 0.7
    narrow = predict_run(**{**SMALL, "pp": 1, "tp": 1, "gpus": 1, "global_batch": 1, "kernel_half_width": 512})
    assert narrow.mfu == pytest.approx(0.5 / 2)      # h = h½: half the asymptotic share


# -- calibration -----------------------------------------------------------------------------------

DEFAULTS = {"kernel_efficiency": (KERNEL_EFFICIENCY, 0.0005), "kernel_half_width": (KERNEL_HALF_WIDTH, 0.5),
            "bus_efficiency_up": (BUS_EFFICIENCY_UP, 0.005), "bus_efficiency_out": (BUS_EFFICIENCY_OUT, 0.005),
            "latency_s": (LATENCY_S, 5e-9), "straggler_cv": (STRAGGLER_CV, 0.00005),
            "hopper_kernel_efficiency": (KERNEL_EFFICIENCY_HOPPER, 0.0005),
            "cp_attention_overhead": (CP_ATTENTION_OVERHEAD, 0.0005)}


def test_defaults_are_their_calibration():
    fits = calibrate_defaults()
    assert set(fits) == set(DEFAULTS) == {c.constant for c in CALIBRATION}
    for name, (default, rounding) in DEFAULTS.items():
        assert fits[name].value == pytest.approx(default, abs=rounding + 1e-12), name
    for row in CALIBRATION:
        assert row.value == DEFAULTS[row.constant][0]
        if row.run:
            assert fits[row.constant].predicted == pytest.approx(row.measured) or fits[row.constant].at_bound
    h = fits["kernel_half_width"]
    assert not h.at_bound and h.value < 300.0   # the memory-bound work explains most of the width law (η(2304) ≥ 0.88 η∞)
    assert not fits["kernel_efficiency"].at_bound
    assert fits["latency_s"].value == pytest.approx(47.54e-6 / 8)
    # four of the throughput rows, at most a fifth of them
    throughput = len(family("throughput"))
    assert sum(1 for c in CALIBRATION if c.run) == 4 <= throughput // 5


def test_calibrate_finds_a_known_value():
    truth = predict_run(**SMALL, tp_overlap=0.3).mfu
    fit = calibrate("tp_overlap", metric="mfu", measured=truth, run=SMALL)
    assert fit.value == pytest.approx(0.3, abs=1e-9) and not fit.at_bound
    slow = predict_run(**SMALL).iteration_s
    fit = calibrate("kernel_efficiency", metric="iteration_s", measured=slow, run={**SMALL, "kernel_efficiency": 0.9},
                    low=0.1)
    assert fit.value == pytest.approx(0.5, abs=1e-9)


# -- argument checks ----------------------------------------------------------------------------------

VALID = {**SMALL, "heads": 8, "kv_heads": 4, "cp": 1, "virtual_stages": 2, "recompute": "selective",
         "scale_up_gpus": 8, "tp_overlap": 0.0, "pp_overlap": 0.0, "dp_overlap": 0.0, "grad_bytes": 4}


def test_every_argument_error_names_its_argument():
    assert_errors_name_their_argument(predict_run, VALID)


@pytest.mark.parametrize("change, message", [
    ({"gpus": 6}, "gpus must be a multiple of tp·pp·cp = 4"),
    ({"global_batch": 7}, "global_batch must be a multiple of microbatch·dp = 2"),
    ({"pp": 1, "gpus": 4}, "virtual_stages must be 1 when pp = 1"),
    ({"layers": 1}, "layers must be at least pp = 2"),
    ({"cp": 2, "gpus": 12}, "gpus must be a multiple of tp·pp·cp = 8"),
    ({"cp": 2, "seq_len": 3071, "gpus": 16, "global_batch": 4}, "seq_len must be a multiple of cp = 2"),
    ({"heads": 7}, "heads must divide hidden = 512"),
    ({"heads": 1, "kv_heads": None}, "heads must divide hidden = 512 and be a multiple of tp = 2"),
    ({"kv_heads": 3}, "kv_heads must divide heads = 8"),
    ({"kv_heads": 9}, "kv_heads must be a whole number in 1..8"),
    ({"heads": None}, "kv_heads must be None when heads is None"),
    ({"gpus": 4 * 65_536, "global_batch": 65_536 * 2, "virtual_stages": 1},
     "gpus must keep the data-parallel group"),
    ({"global_batch": 2 * 40_000}, "virtual_stages must keep virtual_stages·microbatches within 1..65,535"),
    ({"tp": 70_000}, "tp must be a whole number in 1..65,535"),
    ({"recompute": "some"}, "recompute must be one of ['none', 'selective', 'full']"),
    ({"kernel_efficiency": 0}, "kernel_efficiency must be a number in (0, 1]"),
    ({"kernel_half_width": -1}, "kernel_half_width must be a number in [0, inf)"),
    ({"bus_efficiency_up": 1.01}, "bus_efficiency_up must be a number in (0, 1]"),
    ({"dp_overlap": -0.1}, "dp_overlap must be a number in [0, 1]"),
    ({"peak_tflops": INF}, "peak_tflops must be a number in (0, inf) TFLOP/s"),
    ({"scale_out_GBps": 0}, "scale_out_GBps must be a number in (0, inf] GB/s"),
    ({"straggler_cv": math.nan}, "straggler_cv must be a number in [0, inf)"),
    ({"grad_bytes": 0}, "grad_bytes must be a number in (0, inf) bytes"),
    ({"layers": True}, "layers must be a whole number in 1..inf"),
    ({"vocab": -1}, "vocab must be a whole number in 0..inf"),
])
def test_impossible_runs_are_refused(change, message):
    with pytest.raises(ValueError) as err:
        predict_run(**{**VALID, **change})
    assert str(err.value).startswith(message), str(err.value)


def test_formula_errors_name_their_argument():
    shape = dict(layers=4, hidden=512, seq_len=1024, vocab=0)
    assert_errors_name_their_argument(model_flops, {**shape, "sequences": 0})
    assert_errors_name_their_argument(hardware_flops, {**shape, "sequences": 1, "recompute": "full"})
    assert_errors_name_their_argument(parameter_count, shape)
    with pytest.raises(ValueError, match="^hidden must be a whole number in 1..inf"):
        parameter_count(**{**shape, "hidden": 0})


def test_whole_floats_from_a_table_are_accepted():
    as_floats = {k: float(v) if isinstance(v, int) and not isinstance(v, bool) else v for k, v in VALID.items()}
    assert predict_run(**as_floats) == predict_run(**VALID)
    with pytest.raises(ValueError, match="^layers must be a whole number"):
        predict_run(**{**VALID, "layers": 4.5})


def test_calibrate_refuses_unknown_names():
    with pytest.raises(ValueError, match="^constant must be one of"):
        calibrate("peak_tflops", metric="mfu", measured=0.5, run=SMALL)
    with pytest.raises(ValueError, match="^metric must be one of"):
        calibrate("kernel_efficiency", metric="bubble_s", measured=0.5, run=SMALL)
    with pytest.raises(ValueError, match=r"^high must be a number in \(0.5, inf\)"):
        calibrate("kernel_efficiency", metric="mfu", measured=0.5, run=SMALL, low=0.5, high=0.5)


# -- properties -------------------------------------------------------------------------------------

@st.composite
def runs(draw):
    t = draw(st.sampled_from((1, 2, 4, 8)))
    p = draw(st.sampled_from((1, 2, 4, 8)))
    c = draw(st.sampled_from((1, 1, 2)))
    d = draw(st.integers(1, 64))
    b = draw(st.sampled_from((1, 2, 4)))
    m = draw(st.integers(1, 64))
    v = draw(st.integers(1, 3)) if p > 1 else 1
    heads = t * draw(st.integers(1, 8))
    return dict(
        layers=p * v * draw(st.integers(1, 8)), hidden=heads * draw(st.sampled_from((64, 128))), heads=heads,
        seq_len=c * draw(st.sampled_from((256, 1024, 4096))), vocab=draw(st.integers(0, 200_000)),
        global_batch=b * d * m, microbatch=b, gpus=t * p * c * d, tp=t, pp=p, cp=c, virtual_stages=v,
        recompute=draw(st.sampled_from(("none", "selective", "full"))),
        peak_tflops=draw(st.floats(10, 5000)), scale_up_GBps=draw(st.floats(1, 2000)),
        scale_out_GBps=draw(st.floats(0.5, 200)), scale_up_gpus=draw(st.sampled_from((1, 4, 8, 72))),
        kernel_efficiency=draw(st.floats(0.05, 1.0)), kernel_half_width=draw(st.floats(0, 5000)),
        straggler_cv=draw(st.floats(0, 0.05)),
        dp_overlap=draw(st.floats(0, 1)), tp_overlap=draw(st.floats(0, 1)),
    )


@settings(max_examples=150, deadline=None)
@given(runs())
def test_parts_sum_and_mfu_is_bounded(run):
    r = predict_run(**run, causal_attention=False)   # the bound is on the full count
    assert predict_run(**run).compute_s <= r.compute_s   # causal (the default) never takes longer
    assert all(getattr(r, k) >= 0 for k in PARTS)
    assert parts_sum(r) == pytest.approx(r.step_s, rel=1e-9)
    eta = run["kernel_efficiency"] if run["peak_tflops"] <= 400 else KERNEL_EFFICIENCY_HOPPER
    assert r.mfu <= r.hfu <= eta * (1 + 1e-12)
    assert r.compute_s <= r.step_s


@settings(max_examples=100, deadline=None)
@given(runs(), st.floats(1.0, 100.0), st.sampled_from(("scale_up_GBps", "scale_out_GBps")))
def test_more_bandwidth_never_slows_a_step(run, factor, link):
    slow = predict_run(**run)
    fast = predict_run(**{**run, link: run[link] * factor})
    assert fast.step_s <= slow.step_s * (1 + 1e-12)
    assert fast.compute_s == slow.compute_s


@settings(max_examples=100, deadline=None)
@given(runs(), st.integers(2, 8))
def test_a_bigger_batch_never_raises_the_bubbles_share(run, k):
    small = predict_run(**run)
    big = predict_run(**{**run, "global_batch": run["global_batch"] * k})
    assert big.bubble_s / big.step_s <= small.bubble_s / small.step_s * (1 + 1e-12)


# -- the ETTR and the days to train -----------------------------------------------------------------

LLAMA3 = dict(gpus=16_384, failures_per_node_day=419 / (2048 * 54), save_s=60, restart_s=600)


def test_llama3_interruptions_by_hand():
    e = run_ettr(**LLAMA3, days=54)
    assert e.nodes == 2048
    assert e.mtbf_h == pytest.approx(54 * 24 / 419)                  # 3.093 h, Llama 3's record
    assert e.interruptions == pytest.approx(419)
    assert e.interval_s == pytest.approx(young_interval(60, e.mtbf_h * 3600))
    assert e.ettr == pytest.approx(1 / daly_wall_ratio(e.interval_s, 60, e.mtbf_h * 3600, 600))
    tau, m = e.interval_s, e.mtbf_h * 3600
    assert e.ettr_first_order == pytest.approx((1 - (600 + tau / 2) / m) / (1 + 60 / tau))
    assert e.checkpoint_share + e.rework_share + e.restart_share == pytest.approx(
        60 / (tau + 60) + tau / (2 * m) + 600 / m)
    assert 0.84 < e.ettr < 0.86 and abs(e.ettr - e.ettr_first_order) < 0.005
    assert e.lost_days == pytest.approx(54 * (1 - e.ettr)) and not e.short_run
    assert run_ettr(**{**LLAMA3, "gpus": None}, nodes=2048) == run_ettr(**LLAMA3)


def test_zero_failures_keep_the_checkpoint_only_ratio():
    e = run_ettr(gpus=1024, failures_per_node_day=0, save_s=30, restart_s=600, interval_s=1800, days=10)
    assert e.ettr == e.ettr_first_order == e.checkpoint_only == pytest.approx(1800 / 1830)
    assert e.interruptions == 0 and e.short_run
    young = run_ettr(gpus=1024, failures_per_node_day=0, save_s=30, restart_s=600)
    assert young.interval_s == INF and young.ettr == young.checkpoint_only == 1.0


def test_failing_without_checkpoints_trains_nothing():
    e = run_ettr(gpus=8, failures_per_node_day=0.01, save_s=30, restart_s=0, interval_s=INF)
    assert e.ettr == e.ettr_first_order == 0.0


def test_kokolis_100k_example():
    # 12,500 nodes at RSC-2's 2.34 per 1,000 node-days: M = 49 min; 2 min restart, 2 min interval
    e = run_ettr(nodes=12_500, failures_per_node_day=2.34e-3, save_s=1e-9, restart_s=120, interval_s=120)
    assert e.mtbf_h * 60 == pytest.approx(49.2, abs=0.05)
    assert e.ettr_first_order == pytest.approx(1 - 3 / 49.23, abs=1e-3)


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 100_000), st.integers(1, 100_000), st.floats(1e-4, 0.05), st.floats(1, 600),
       st.floats(0, 3600))
def test_more_gpus_never_shrink_the_failure_loss(a, b, rate, save, restart):
    small, big = sorted((a, b))
    kw = dict(failures_per_node_day=rate, save_s=save, restart_s=restart)
    assert run_ettr(gpus=big, **kw).ettr <= run_ettr(gpus=small, **kw).ettr * (1 + 1e-12)
    e = run_ettr(gpus=big, **kw)
    assert 0 <= e.ettr <= e.checkpoint_only <= 1


def test_days_to_train():
    d = days_to_train(tokens=300e9, tokens_per_s=1_466_800, ettr=0.9)
    assert d.compute_days == pytest.approx(300e9 / 1_466_800 / 86_400)      # 2.37 days: MegaScale Table 2's 2.37
    assert round(d.compute_days, 2) == 2.37
    assert d.wall_days == pytest.approx(d.compute_days / 0.9)
    assert d.lost_days == pytest.approx(d.wall_days - d.compute_days)
    assert days_to_train(tokens=1, tokens_per_s=1, ettr=0).wall_days == INF
    assert days_to_train(tokens=0, tokens_per_s=1, ettr=0).wall_days == 0
    r = predict_run(**GPT3)
    assert days_to_train(tokens=1e9, tokens_per_s=r.tokens_per_s).compute_days == pytest.approx(
        1e9 / r.tokens_per_s / 86_400)


def test_ettr_and_days_errors():
    assert_errors_name_their_argument(run_ettr, dict(gpus=8, failures_per_node_day=0.01, save_s=30,
                                                     restart_s=60, gpus_per_node=8, interval_s=100, days=1))
    assert_errors_name_their_argument(days_to_train, dict(tokens=1, tokens_per_s=1, ettr=0.5))
    for kw in ({}, {"gpus": 8, "nodes": 1}):
        with pytest.raises(ValueError, match="^gpus must be given, or nodes, but not both"):
            run_ettr(failures_per_node_day=0.01, save_s=30, restart_s=60, **kw)
    with pytest.raises(ValueError, match="^nodes must be a whole number in 1..inf"):
        run_ettr(nodes=BAD, failures_per_node_day=0.01, save_s=30, restart_s=60)
    with pytest.raises(ValueError, match=r"^save_s must be a number in \(0, inf\) s"):
        run_ettr(gpus=8, failures_per_node_day=0.01, save_s=0, restart_s=60)
    with pytest.raises(ValueError, match=r"^ettr must be a number in \[0, 1\]"):
        days_to_train(tokens=1, tokens_per_s=1, ettr=1.5)


# -- speed ------------------------------------------------------------------------------------------

def test_one_prediction_is_well_under_a_millisecond():
    predict_run(**GPT3)
    best = min(_timed(lambda: predict_run(**GPT3), 50) for _ in range(5))
    assert best < 1e-3, f"{best * 1e6:.0f} µs per call"


def _timed(call, n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        call()
    return (time.perf_counter() - start) / n


@settings(max_examples=80, deadline=None)
@given(runs(), st.floats(0, 1), st.sampled_from(("tp_overlap", "pp_overlap", "dp_overlap")))
def test_hiding_more_communication_never_slows_a_step(run, more, knob):
    less = predict_run(**{**run, knob: 0.0})
    hidden = predict_run(**{**run, knob: more})
    assert hidden.step_s <= less.step_s * (1 + 1e-12)
    assert hidden.compute_s == less.compute_s


@settings(max_examples=80, deadline=None)
@given(runs(), st.floats(1.0, 4.0))
def test_faster_kernels_never_slow_a_step(run, factor):
    slow = predict_run(**{**run, "kernel_efficiency": run["kernel_efficiency"] / factor})
    fast = predict_run(**run)
    assert fast.step_s <= slow.step_s * (1 + 1e-12)
    assert fast.mfu >= slow.mfu * (1 - 1e-12)


def test_a_context_parallel_ring_adds_its_overhead_to_the_attention_alone():
    """``cp > 1``: the attention products take ``1 + κ`` times as long (``CP_ATTENTION_OVERHEAD``), the linear
    layers and the output layer do not; ``κ = 0`` times the ring as one fused kernel; CP 1 never pays it;
    with the kernels' own timing too."""
    run = dict(layers=32, hidden=4096, heads=32, kv_heads=8, ffn_hidden=14_336, gated_mlp=True, seq_len=8192,
               vocab=128_256, global_batch=16, microbatch=1, gpus=16, tp=1, pp=1, cp=2, gpu="H100",
               precision="fp8", sharding="optimizer", flash_attention=True, overlap=True)
    ring, fused = predict_run(**run), predict_run(**run, cp_attention_overhead=0.0)
    assert ring.step_s > fused.step_s and CP_ATTENTION_OVERHEAD > 0
    flat = dict(run, cp=1, gpus=8, global_batch=8)
    assert predict_run(**flat) == predict_run(**flat, cp_attention_overhead=0.0)
    assert predict_run(**flat, cp_attention_overhead=3.0) == predict_run(**flat)
    shape = ModelShape(32, 4096, 8192, 128_256, 14_336, 32, 8)
    layout, hardware = Layout(16, 1, 1, 16, 1, 2, 1, "none"), Hardware.of("H100")
    stack = Stack(precision="fp8", sharding="optimizer", overlap=True, flash_attention=True, gated_mlp=True)
    for kernels in (False, True):
        with_ring = gemm_times(shape, layout, hardware, stack, Constants(kernels=kernels),
                               predicted_flops(shape, layout, stack))
        without = gemm_times(shape, layout, hardware, stack, Constants(kernels=kernels, cp_attention_overhead=0.0),
                             predicted_flops(shape, layout, stack))
        assert with_ring[0] == without[0] and with_ring[2] == without[2]
        assert with_ring[1] == pytest.approx((1 + CP_ATTENTION_OVERHEAD) * without[1], rel=1e-12)
    with pytest.raises(ValueError, match="^cp_attention_overhead must be"):
        predict_run(**run, cp_attention_overhead=-0.1)
