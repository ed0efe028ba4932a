"""``predict_run`` with a GPU by name, causal attention and kernel-timed GEMMs (issue 43): every
default as before, a GPU by name equal to the same GPU by numbers, each switch refused by name."""
from __future__ import annotations

import dataclasses

import pytest

from clustermath import GPUS, gpu, kernel_share, layer_flops, predict_run
from clustermath.validation.kernels import attention_kernel_time

SHAPE = dict(layers=32, hidden=4096, heads=32, kv_heads=8, ffn_hidden=14_336, gated_mlp=True, seq_len=8192,
             vocab=128_256, global_batch=64, microbatch=1, gpus=64, tp=2, pp=4, scale_out_GBps=50.0,
             sequence_parallel=True, flash_attention=True, overlap=True, sharding="optimizer")
"""A Llama-3-8B-shaped run on 64 GPUs (TP 2, PP 4, DP 8)."""


@pytest.mark.parametrize("name", sorted(GPUS))
def test_a_gpu_by_name_equals_the_same_gpu_by_numbers(name):
    record = gpu(name)
    by_numbers = predict_run(**{**record.run_inputs, **SHAPE})  # the numbers the record gives predict_run
    assert predict_run(gpu=name, **SHAPE) == predict_run(gpu=record, **SHAPE) == by_numbers
    run = {k: v for k, v in SHAPE.items() if k != "scale_out_GBps"}
    assert predict_run(gpu=name, **run) == predict_run(**record.run_inputs, **run)  # the NIC from the record too


def test_the_nic_comes_from_the_parts_reference_system_unless_given():
    run = {k: v for k, v in SHAPE.items() if k != "scale_out_GBps"}
    assert predict_run(gpu="H100", **run) == predict_run(gpu="H100", scale_out_GBps=50.0, **run)
    assert predict_run(gpu="A100", **run) == predict_run(gpu="A100", scale_out_GBps=25.0, **run)
    assert predict_run(gpu="H100", scale_out_GBps=12.5, **run) != predict_run(gpu="H100", **run)


def test_a_run_without_a_gpu_or_a_reference_system_must_give_its_nic():
    run = {k: v for k, v in SHAPE.items() if k != "scale_out_GBps"}
    with pytest.raises(ValueError, match="^scale_out_GBps must be given .* when no gpu names the part, got None"):
        predict_run(peak_tflops=989.0, scale_up_GBps=450.0, **run)
    bare = dataclasses.replace(gpu("H100"), scale_out_GBps=0.0)
    with pytest.raises(ValueError, match="^scale_out_GBps must be given .* names no reference system, got None"):
        predict_run(gpu=bare, **run)
    assert predict_run(gpu=bare, scale_out_GBps=50.0, **run) == predict_run(gpu="H100", **run)


def test_numbers_given_win_over_the_record():
    mine = predict_run(gpu="H100", scale_up_GBps=100.0, **SHAPE)
    assert mine == predict_run(peak_tflops=989.0, scale_up_GBps=100.0, memory_TBps=3.35, **SHAPE)
    assert mine != predict_run(gpu="H100", **SHAPE)


def test_without_a_gpu_the_domain_is_still_eight():
    assert predict_run(peak_tflops=989.0, scale_up_GBps=450.0, **SHAPE) == \
        predict_run(peak_tflops=989.0, scale_up_GBps=450.0, scale_up_gpus=8, **SHAPE)


def test_causal_attention_halves_the_attention_products_at_todays_rate():
    """One stage (pp = 1), no overlap: compute drops by half the attention products' time; causal is the
    default, full attention the keyword a reader types for the old count."""
    run = dict(SHAPE, pp=1, tp=1, gpus=8, global_batch=8, overlap=False, flash_attention=False, gated_mlp=False,
               heads=32, kv_heads=None, ffn_hidden=None, peak_tflops=312.0, scale_up_GBps=300.0)
    full, causal = predict_run(causal_attention=False, **run), predict_run(**run)
    assert causal == predict_run(causal_attention=True, **run)
    _, attn = layer_flops(hidden=4096, seq_len=8192, ffn_hidden=4 * 4096)
    attention_s = 32 * 8 * 8192 * 3 * attn / (8 * 312e12 * kernel_share(4096))  # 32 layers, 3 passes
    assert full.compute_s - causal.compute_s == pytest.approx(attention_s / 2, rel=1e-12)
    assert causal.mfu > full.mfu and causal.model_flops == full.model_flops


@pytest.mark.parametrize("name", ["H100", "H200", "B200", "GB200"])
def test_kernel_timed_fp8_is_never_slower_and_never_beats_the_fp8_peak(name):
    bf16 = predict_run(gpu=name, kernels=True, precision="bf16", **SHAPE)
    fp8 = predict_run(gpu=name, kernels=True, precision="fp8", **SHAPE)
    assert fp8.compute_s <= bf16.compute_s
    assert fp8.hardware_flops / (SHAPE["gpus"] * fp8.compute_s) < gpu(name).fp8_tflops * 1e12


def test_kernel_timed_compute_holds_the_kernels_causal_attention():
    """The busiest stage holds 32/4 = 8 layers, 8 micro-batches each, 4 attention passes (FlashAttention's
    backward recomputes the products): its compute is at least those products' kernel time."""
    on = predict_run(gpu="H100", kernels=True, **SHAPE)
    per = attention_kernel_time(hidden=4096, heads=32, seq_len=8192, microbatch=1, tp=2, gpu="H100")
    assert on.compute_s > 8 * 8 * 4 * per > 0


@pytest.mark.parametrize("kwargs, name", [
    (dict(kernels=True), "gpu"), (dict(kernels=True, gpu="A100-SXM4-80GB"), "gpu"),
    (dict(kernels="yes", gpu="H100"), "kernels"), (dict(causal_attention=2, gpu="H100"), "causal_attention"),
    (dict(gpu="V100"), "name"), (dict(), "peak_tflops"),
])
def test_bad_switches_are_refused_by_name(kwargs, name):
    run = {k: v for k, v in SHAPE.items()}
    if "gpu" not in kwargs and name == "gpu":
        run["peak_tflops"], run["scale_up_GBps"] = 989.0, 450.0
    with pytest.raises(ValueError, match=f"^{name} must"):
        predict_run(**run, **kwargs)


def test_kernels_need_the_heads():
    with pytest.raises(ValueError, match="^heads must be given when kernels is True"):
        predict_run(gpu="H100", kernels=True, **{**SHAPE, "heads": None, "kv_heads": None})


def test_a_record_of_ones_own_is_accepted():
    slow = dataclasses.replace(gpu("H100"), name="H100 at 500 W", memory_TBps=2.4)
    assert predict_run(gpu=slow, **SHAPE).step_s >= predict_run(gpu="H100", **SHAPE).step_s
