"""A layer's compute as its kernels' GEMMs (issue 43): bounded by the peak, near FLOPs/(η·peak) for
large shapes, backward about twice forward, FP8 within its bounds, causal attention half of full."""
from __future__ import annotations

import pytest

from clustermath import attention_flops, gpu, layer_flops
from clustermath.validation.gemm import GEMM_CONSTANTS, gemm_time
from clustermath.validation.kernels import (
    CAUSAL_SHARE, attention_kernel_time, layer_gemm_shapes, layer_kernel_time, logits_kernel_time,
)

LLAMA70B = dict(hidden=8192, ffn_hidden=28_672, seq_len=4096, microbatch=1, tp=4, kv_heads_share=0.125,
                gated_mlp=True)


@pytest.mark.parametrize("name", ["H100", "H200", "B200", "GB200"])
def test_a_layer_never_beats_its_peak_and_lands_near_the_fitted_efficiency(name):
    g = gpu(name)
    fwd, bwd = layer_kernel_time(gpu=g, **LLAMA70B)
    linear, _ = layer_flops(hidden=8192, seq_len=4096, ffn_hidden=28_672, kv_share=0.125, gated_mlp=True)
    ideal = 4096 * linear / 4 / (g.bf16_tflops * g.timed_share * 1e12)  # a GB200 at its timed peak
    eta = GEMM_CONSTANTS[("H100-SXM5-80GB" if name in ("H100", "H200") else "B200-SXM-180GB", "bf16")].efficiency
    assert ideal < fwd < 1.25 * ideal / eta
    assert bwd == pytest.approx(2 * fwd, rel=0.15)


@pytest.mark.parametrize("shape", [LLAMA70B, dict(hidden=12_288, ffn_hidden=49_152, seq_len=2048, microbatch=1, tp=4),
                                   dict(hidden=4096, ffn_hidden=14_336, seq_len=8192, microbatch=2, tp=1, cp=2,
                                        kv_heads_share=0.25, gated_mlp=True)])
def test_the_kernel_path_carries_the_analytic_flops(shape):
    # the kernel gap is not a missing GEMM: Σ 2MNK of a layer's GEMMs is T/t times layer_flops' linear count
    shapes = layer_gemm_shapes(**shape)
    tokens = shape["microbatch"] * shape["seq_len"] / shape.get("cp", 1)
    linear, _ = layer_flops(hidden=shape["hidden"], seq_len=shape["seq_len"], ffn_hidden=shape["ffn_hidden"],
                            kv_share=shape.get("kv_heads_share", 1.0), gated_mlp=shape.get("gated_mlp", False))
    assert sum(2 * m * n * k for m, n, k in shapes) == pytest.approx(tokens / shape["tp"] * linear, rel=1e-12)
    assert len(shapes) == 4 and all(m == tokens for m, _, _ in shapes)


def test_fp8_linear_layers_are_faster_but_not_beyond_the_peak_ratio():
    f16 = sum(layer_kernel_time(gpu="H100", **LLAMA70B))
    f8 = sum(layer_kernel_time(gpu="H100", precision="fp8", **LLAMA70B))
    assert f16 / 2 <= f8 < f16


def test_causal_attention_takes_half_the_full_products_time():
    full = (gemm_time(4096, 4096, 128, gpu="H100", batch=16) + gemm_time(4096, 128, 4096, gpu="H100", batch=16))
    assert attention_kernel_time(hidden=8192, heads=64, seq_len=4096, microbatch=1, tp=4, gpu="H100") \
        == CAUSAL_SHARE * full == full / 2
    causal_flops = 64 / 4 * attention_flops(seq_len=4096, hidden=128, causal=True)
    assert full / 2 > causal_flops / 989e12


def test_context_parallelism_splits_the_queries():
    one = attention_kernel_time(hidden=4096, heads=32, seq_len=32_768, microbatch=1, gpu="H100")
    two = attention_kernel_time(hidden=4096, heads=32, seq_len=32_768, microbatch=1, cp=2, gpu="H100")
    assert two == pytest.approx(one / 2, rel=0.02)


def test_logits_split_the_vocabulary_over_tensor_parallel_ranks():
    one = sum(logits_kernel_time(hidden=8192, vocab=128_256, seq_len=8192, microbatch=1, gpu="B200"))
    four = sum(logits_kernel_time(hidden=8192, vocab=128_256, seq_len=8192, microbatch=1, tp=4, gpu="B200"))
    assert four == pytest.approx(one / 4, rel=0.05)


@pytest.mark.parametrize("call, name", [
    (lambda: layer_kernel_time(gpu="H100", **{**LLAMA70B, "seq_len": 4095, "cp": 2}), "seq_len"),
    (lambda: layer_kernel_time(gpu="H100", **{**LLAMA70B, "tp": 3}), "hidden"),
    (lambda: layer_kernel_time(gpu="H100", **{**LLAMA70B, "precision": "int8"}), "precision"),
    (lambda: layer_kernel_time(gpu="A100-SXM4-80GB", **LLAMA70B), "gpu"),
    (lambda: attention_kernel_time(hidden=8192, heads=64, seq_len=4096, microbatch=1, tp=3, gpu="H100"), "heads"),
    (lambda: attention_kernel_time(hidden=8192, heads=0, seq_len=4096, microbatch=1, gpu="H100"), "heads"),
    (lambda: logits_kernel_time(hidden=8192, vocab=0, seq_len=4096, microbatch=1, gpu="H100"), "vocab"),
])
def test_bad_input_is_refused_by_name(call, name):
    with pytest.raises(ValueError, match=f"^{name} must"):
        call()



# -- attention at FlashAttention's own rates (issue 43, item 2) ------------------------------------------

from clustermath.validation.kernels import ATTENTION_POINTS, attention_table_time  # noqa: E402

BENCH = dict(hidden=2048, heads=16, seq_len=8192, microbatch=2)
"""benchmark_attn.py's shape for the printed points: 2 sequences of 8,192 tokens, 16 heads of 128."""


@pytest.mark.parametrize("kernel, fwd_ms, bwd_ms", [("fa2", 1.935, 4.788), ("fa3", 0.873, 2.585)])
def test_the_flashattention_table_points_are_reproduced(kernel, fwd_ms, bwd_ms):
    point = ATTENTION_POINTS[("H100-SXM5-80GB", kernel)]
    flops = 2.0 * 2 * 16 * 8192 * 8192 * 128                # causal forward: half of 4·b·a·s²·d
    near = dict(rel=2.5e-4, abs=5e-4)   # printed to four digits (half a unit of 287.1 is 1.7e-4 of it), ms to three
    assert flops / (point.fwd_tflops * 1e12) * 1e3 == pytest.approx(fwd_ms, **near)
    assert 2.5 * flops / (point.bwd_tflops * 1e12) * 1e3 == pytest.approx(bwd_ms, **near)
    assert attention_table_time(**BENCH, gpu="H100", kernel=kernel) * 1e3 == pytest.approx(fwd_ms + bwd_ms, abs=1e-3)
    # full recomputation runs the forward once more
    assert attention_table_time(**BENCH, gpu="H100", kernel=kernel, recompute=True) * 1e3 == pytest.approx(
        2 * fwd_ms + bwd_ms, abs=1.5e-3)


def test_flashattention_time_grows_with_its_sizes_and_fa3_beats_fa2():
    base = attention_table_time(**BENCH, gpu="H200", kernel="fa3")      # H200 runs the H100's kernels
    assert base == attention_table_time(**BENCH, gpu="H100", kernel="fa3")
    assert base < attention_table_time(**BENCH, gpu="H100", kernel="fa2")
    for change in ({"seq_len": 16_384}, {"microbatch": 4}, {"heads": 32, "hidden": 4096}):
        assert attention_table_time(**{**BENCH, **change}, gpu="H100", kernel="fa3") > base
    assert attention_table_time(**BENCH, gpu="H100", kernel="fa3", tp=2) == pytest.approx(base / 2)
    assert attention_table_time(**BENCH, gpu="H100", kernel="fa3", cp=2) == pytest.approx(base / 2)


@pytest.mark.parametrize("change, message", [
    ({"kernel": "fa4"}, "kernel must be one of ['fa2', 'fa3']"),
    ({"gpu": "B200"}, "gpu must be one with a fa3 table"),
    ({"heads": 0}, "heads must be a whole number in 1..inf"),
    ({"tp": 3}, "heads must be a multiple of 3"),
])
def test_flashattention_refuses_what_it_has_no_table_for(change, message):
    with pytest.raises(ValueError) as err:
        attention_table_time(**{**BENCH, "gpu": "H100", "kernel": "fa3", **change})
    assert str(err.value).startswith(message), str(err.value)


def test_predict_run_times_attention_by_the_table_only_where_asked():
    from clustermath import predict_run
    run = dict(layers=32, hidden=4096, heads=32, kv_heads=8, ffn_hidden=14_336, seq_len=8192, vocab=128_256,
               global_batch=64, microbatch=1, gpus=8, tp=1, pp=1, scale_out_GBps=50.0, gpu="H100",
               flash_attention=True, gated_mlp=True, kernels=True)
    gemm, fa2, fa3 = (predict_run(**run, attention_kernel=k) for k in (None, "fa2", "fa3"))
    assert fa3.step_s < fa2.step_s and fa2.dp_comm_s == gemm.dp_comm_s == fa3.dp_comm_s
    assert fa2.model_flops == gemm.model_flops
    with pytest.raises(ValueError, match="^attention_kernel must be None without a gpu record and heads"):
        predict_run(**{**run, "heads": None, "kv_heads": None, "kernels": False}, attention_kernel="fa3")
    with pytest.raises(ValueError, match="^attention_kernel must be None without a gpu record and heads"):
        predict_run(**{k: v for k, v in run.items() if k not in ("gpu", "kernels")}, peak_tflops=989.0,
                    scale_up_GBps=450.0, attention_kernel="fa3")
    with pytest.raises(ValueError, match=r"^attention_kernel must be one of \[None, 'fa2', 'fa3'\]"):
        predict_run(**run, attention_kernel="flash")


def test_flashattention_on_todays_path_replaces_the_attention_products_only():
    """Without ``kernels``: the linear layers keep today's rate; the attention term becomes the table's
    forward and backward, ``m · attention_table_time`` on one GPU (one stage, 8 micro-batches, 32 layers)."""
    from clustermath import predict_run
    run = dict(layers=32, hidden=4096, heads=32, kv_heads=8, ffn_hidden=14_336, seq_len=8192, vocab=128_256,
               global_batch=64, microbatch=1, gpus=8, tp=1, pp=1, scale_out_GBps=50.0, gpu="H100",
               flash_attention=True, gated_mlp=True)
    today, fa2 = predict_run(**run), predict_run(**run, attention_kernel="fa2")
    fa2_table = attention_table_time(hidden=4096, heads=32, seq_len=8192, microbatch=1, gpu="H100", kernel="fa2")
    causal = predict_run(**run, causal_attention=False).compute_s - today.compute_s   # half the products' time
    assert fa2.compute_s - today.compute_s == pytest.approx(32 * 8 * fa2_table - causal, rel=1e-9)
    assert fa2.model_flops == today.model_flops and fa2.dp_comm_s == today.dp_comm_s
    with pytest.raises(ValueError, match="^gpu must be one with a fa2 table"):
        predict_run(**{**run, "gpu": "B200"}, attention_kernel="fa2")


# -- FP8 casts as memory traffic (issue 43, item 3) ---------------------------------------------------------

from clustermath.validation.kernels import fp8_cast_bytes  # noqa: E402


def test_fp8_cast_bytes_by_hand():
    h, f, t = 1024, 4096, 2
    per_token, weights = fp8_cast_bytes(hidden=h, ffn_hidden=f, tp=t, casts="te")
    backward = 3 * h / t + h + f / t + h             # QKV, projection, FC1, FC2 gradients (no GQA, no gate)
    assert per_token == 4 * (h / t + backward)       # TE: only the projection's input is cast in the forward
    assert weights == 4 * (3 * h * h + h * h + 2 * h * f) / t
    dynamic, same = fp8_cast_bytes(hidden=h, ffn_hidden=f, tp=t, casts="dynamic")
    assert dynamic == 6 * (h + h / t + h + f / t + backward) and same == weights
    # GQA and a gate change the shapes the casts see
    gqa, _ = fp8_cast_bytes(hidden=h, ffn_hidden=f, tp=t, kv_heads_share=0.25, gated_mlp=True, casts="te")
    assert gqa == 4 * (h / t + (h + 2 * h * 0.25) / t + h + 2 * f / t + h)
    with pytest.raises(ValueError, match=r"^casts must be one of \['te', 'dynamic'\]"):
        fp8_cast_bytes(hidden=h, ffn_hidden=f, tp=t, casts="fused")
    with pytest.raises(ValueError, match=r"^kv_heads_share must be a number in \(0, 1\]"):
        fp8_cast_bytes(hidden=h, ffn_hidden=f, tp=t, kv_heads_share=0, casts="te")


def test_fp8_casts_slow_an_fp8_run_only():
    from clustermath import predict_run
    run = dict(layers=32, hidden=4096, heads=32, kv_heads=8, ffn_hidden=14_336, seq_len=8192, vocab=128_256,
               global_batch=64, microbatch=1, gpus=8, tp=1, pp=1, scale_out_GBps=50.0, gpu="H100",
               flash_attention=True, gated_mlp=True, kernels=True, precision="fp8")
    none, te, dynamic = (predict_run(**run, fp8_casts=c) for c in (None, "te", "dynamic"))
    assert none.memory_s < te.memory_s < dynamic.memory_s and none.step_s < te.step_s < dynamic.step_s
    assert te.tp_comm_s == none.tp_comm_s and te.model_flops == none.model_flops
    bf16 = {**run, "precision": "bf16"}
    assert predict_run(**bf16, fp8_casts="te") == predict_run(**bf16)   # no FP8 GEMM, nothing to cast
    with pytest.raises(ValueError, match="^fp8_casts must be None unless kernels is True"):
        predict_run(**{**run, "kernels": False}, fp8_casts="te")
