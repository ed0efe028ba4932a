"""Causal attention and the sources' FLOP conventions (issue 43, item 2)."""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from clustermath import (
    CONVENTIONS, attention_flops, convert_flop_rate, hardware_flops, model_flops, step_flops,
)
from clustermath.validation import load_measurements

GPT3 = dict(layers=96, hidden=12_288, seq_len=2048, vocab=51_200)
LLAMA2_70B = dict(layers=80, hidden=8192, seq_len=4096, vocab=32_000, ffn_hidden=28_672, heads=64, kv_heads=8,
                  gated_mlp=True)


@given(s=st.integers(1, 1 << 17), h=st.integers(1, 1 << 15))
def test_causal_attention_is_half_of_full_at_equal_shape(s, h):
    assert attention_flops(seq_len=s, hidden=h, causal=True) * 2 == attention_flops(seq_len=s, hidden=h)


def test_full_attention_is_two_products_of_two_s2h():
    assert attention_flops(seq_len=4096, hidden=8192) == 4 * 4096**2 * 8192 == 549_755_813_888


def test_megatron_convention_is_narayanans_eq3_and_the_predictors_model_flops():
    """72·B·s·l·h²(1 + s/6h + V/12hl) for B = 1,536 sequences of GPT-3 175B (f = 4h, no GQA, no gate)."""
    b, s, l, h, v = 1536, 2048, 96, 12_288, 51_200
    closed = 72.0 * b * s * l * h * h * (1 + s / (6 * h) + v / (12 * h * l))
    ours = step_flops("megatron", tokens=b * s, **GPT3)
    assert ours == pytest.approx(closed, rel=1e-12)
    assert ours == pytest.approx(model_flops(sequences=b, **GPT3), rel=1e-12)


def test_recompute_convention_is_eq3_as_printed():
    """96·B·s·l·h²(1 + s/6h + V/16lh): the hardware FLOPs of full recomputation."""
    b, s, l, h, v = 1536, 2048, 96, 12_288, 51_200
    closed = 96.0 * b * s * l * h * h * (1 + s / (6 * h) + v / (16 * h * l))
    assert step_flops("megatron_recompute", tokens=b * s, **GPT3) == pytest.approx(closed, rel=1e-12)
    assert closed == pytest.approx(hardware_flops(sequences=b, recompute="full", **GPT3), rel=1e-12)


def test_six_n_plus_attention_reaches_the_megatron_sum_and_six_n_leaves_attention_out():
    full = step_flops("megatron", tokens=1, **LLAMA2_70B)
    assert step_flops("six_n_attention", tokens=1, **LLAMA2_70B) == pytest.approx(full, rel=1e-12)
    attention = 3 * 80 * attention_flops(seq_len=4096, hidden=8192) / 4096
    assert step_flops("six_n", tokens=1, **LLAMA2_70B) == pytest.approx(full - attention, rel=1e-12)
    assert step_flops("causal", tokens=1, **LLAMA2_70B) == pytest.approx(full - attention / 2, rel=1e-12)


def test_nemos_printed_tflops_follow_the_megatron_convention():
    """NeMo 24.07's Llama 2 70B row prints 1,728 tokens/s and 768 model TFLOP/s per GPU: its FLOP
    counter (full attention, the layer's own shape) turns one into the other."""
    row = load_measurements().loc["nemo24-llama2-70b-64"]
    per_gpu_tokens = float(row["stated_tokens_per_s"]) / float(row["gpus"])
    assert per_gpu_tokens == 1728.0
    tflops = step_flops("megatron", tokens=per_gpu_tokens, **LLAMA2_70B) / 1e12
    assert tflops == pytest.approx(float(row["stated_tflops_per_gpu"]), rel=1e-3)  # 768.08 vs 768
    assert step_flops("causal", tokens=per_gpu_tokens, **LLAMA2_70B) / 1e12 < 768 * 0.97


def test_an_mfu_converts_between_conventions_and_back():
    """The same row's MFU on the BF16 peak (768/989 = 77.7%) counted as a causal kernel works (74.8%),
    and with 6N alone (72.0%), then back."""
    mfu = 768 / 989
    causal = convert_flop_rate(mfu, source="megatron", target="causal", **LLAMA2_70B)
    six_n = convert_flop_rate(causal, source="causal", target="six_n", **LLAMA2_70B)
    per_token = 444_491_366_400  # 3·(80·(1,711,276,032 + 134,217,728) + 2·32,000·8,192)
    assert causal == pytest.approx(mfu * (per_token - 3 * 80 * 2 * 4096 * 8192) / per_token, rel=1e-12)
    assert (round(100 * causal, 1), round(100 * six_n, 1)) == (74.8, 72.0)
    back = convert_flop_rate(six_n, source="six_n", target="megatron", **LLAMA2_70B)
    assert back == pytest.approx(mfu, rel=1e-12)
    for c in CONVENTIONS:
        assert convert_flop_rate(mfu, source=c, target=c, **LLAMA2_70B) == pytest.approx(mfu, rel=1e-15)


@pytest.mark.parametrize("call, name", [
    (lambda: attention_flops(seq_len=0, hidden=8), "seq_len"),
    (lambda: attention_flops(seq_len=8, hidden=8, causal="yes"), "causal"),
    (lambda: step_flops("palm", tokens=1, **GPT3), "convention"),
    (lambda: step_flops("megatron", tokens=-1, **GPT3), "tokens"),
    (lambda: step_flops("megatron", tokens=1, kv_heads=8, **GPT3), "kv_heads"),
    (lambda: step_flops("megatron", tokens=1, heads=96, kv_heads=97, **GPT3), "kv_heads"),
    (lambda: convert_flop_rate(0.5, source="megatron", target="mfu", **GPT3), "target"),
    (lambda: convert_flop_rate(0.5, source="x", target="megatron", **GPT3), "source"),
    (lambda: convert_flop_rate("§", source="megatron", target="causal", **GPT3), "value"),
])
def test_bad_input_is_refused_by_name(call, name):
    with pytest.raises(ValueError, match=f"^{name} must"):
        call()


def test_no_tokens_no_flops():
    assert step_flops("megatron", tokens=0, **GPT3) == 0.0


def test_megatron_bridges_printed_tflops_follow_the_causal_convention():
    """Megatron-Bridge 25.11 prints model TFLOP/s beside tokens/s: on every one of its five rows the
    causal count turns one into the other (within 0.1%), the full (NeMo 24.07) count does not (4-13% more)."""
    data = load_measurements()
    rows = [rid for rid in data.index if rid.startswith("mbridge25-")]
    assert len(rows) == 5
    for rid in rows:
        r = data.loc[rid]
        shape = dict(layers=int(r["layers"]), hidden=int(r["hidden"]), heads=int(r["heads"]),
                     kv_heads=int(r["kv_heads"]), ffn_hidden=int(r["ffn_hidden"]), gated_mlp=True,
                     seq_len=int(r["seq_len"]), vocab=int(r["vocab"]))
        tokens = float(r["value"]) / float(r["gpus"])
        stated = float(r["stated_tflops_per_gpu"])
        assert step_flops("causal", tokens=tokens, **shape) / 1e12 == pytest.approx(stated, rel=1e-3), rid
        assert step_flops("megatron", tokens=tokens, **shape) / 1e12 > 1.03 * stated, rid
