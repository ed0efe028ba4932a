"""A layer's compute as its kernels' GEMMs (issue 43): bounded by the peak, near FLOPs/(η·peak) for
large shapes, backward about twice forward, FP8 within its bounds, causal attention half of full."""
from __future__ import annotations

import pytest

from clustermath import attention_flops, gpu, layer_flops
from clustermath.validation.gemm import GEMM_CONSTANTS, gemm_time
from clustermath.validation.kernels import (
    CAUSAL_SHARE, attention_kernel_time, layer_kernel_time, logits_kernel_time,
)

LLAMA70B = dict(hidden=8192, ffn_hidden=28_672, seq_len=4096, microbatch=1, tp=4, kv_heads_share=0.125,
                gated_mlp=True)


@pytest.mark.parametrize("name", ["H100", "H200", "B200", "GB200"])
def test_a_layer_never_beats_its_peak_and_lands_near_the_fitted_efficiency(name):
    g = gpu(name)
    fwd, bwd = layer_kernel_time(gpu=g, **LLAMA70B)
    linear, _ = layer_flops(hidden=8192, seq_len=4096, ffn_hidden=28_672, kv_share=0.125, gated_mlp=True)
    ideal = 4096 * linear / 4 / (g.bf16_tflops * 1e12)
    eta = GEMM_CONSTANTS[("H100-SXM5-80GB" if name in ("H100", "H200") else "B200-SXM-180GB", "bf16")].efficiency
    assert ideal < fwd < 1.25 * ideal / eta
    assert bwd == pytest.approx(2 * fwd, rel=0.15)


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

