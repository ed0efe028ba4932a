"""The stack's switches of ``predict_run`` (issue 27, part 1) and the small functions it is composed of.

Each part on its own (formula by hand), then the laws the switches must keep, as Hypothesis
properties over the same runs ``test_predict_run.py`` draws: FP8 never slower than BF16 and never
more than 2× faster; overlapping never slows a step; FSDP never moves fewer bytes than ZeRO-1;
an infinite memory bandwidth leaves the GEMMs alone; and the new arguments refused like every other.
"""
from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from argument_errors import assert_errors_name_their_argument
from clustermath import (
    LATENCY_S, OVERLAP_SLOWDOWN, Stack, collective_time, data_parallel_bytes, elementwise_bytes,
    elementwise_time, hidden_behind, latency_crossover_bytes, layer_flops, memory_bandwidth_TBps,
    LOSS_BYTES, loss_time, output_layer_time, predict_run,
    ring_factor,
)
from test_predict_run import runs

INF = math.inf
H100 = dict(peak_tflops=989.0, scale_up_GBps=450.0, scale_out_GBps=50.0)
LLAMA70B = dict(layers=80, hidden=8192, heads=64, kv_heads=8, ffn_hidden=28_672, gated_mlp=True, seq_len=4096,
                vocab=128_256, global_batch=128, microbatch=1, gpus=128, tp=4, pp=4, virtual_stages=5, **H100)
"""A Llama-2-70B-shaped run on 128 H100 (GQA with 8 key/value heads, SwiGLU FFN of 28,672)."""
VALID = {**LLAMA70B, "precision": "fp8", "sharding": "optimizer", "overlap": True, "flash_attention": True,
         "sequence_parallel": True, "memory_TBps": 3.35, "latency_s": 5e-6, "fp8_efficiency": 0.8,
         "overlap_slowdown": 0.1}


# -- the parts, by hand -----------------------------------------------------------------------------

def test_layer_flops_is_narayanans_count_and_grows_with_gate_and_kv_heads():
    h, s = 4096, 2048
    assert layer_flops(hidden=h, seq_len=s, ffn_hidden=4 * h) == (24 * h * h, 4 * s * h)
    gqa = layer_flops(hidden=h, seq_len=s, ffn_hidden=4 * h, kv_share=8 / 32)[0]
    assert gqa == 2 * h * (h + 2 * h / 4) + 2 * h * h + 16 * h * h
    swiglu = layer_flops(hidden=h, seq_len=s, ffn_hidden=11_008, gated_mlp=True)[0]
    assert swiglu == 6 * h * h + 2 * h * h + 6 * h * 11_008


def test_elementwise_bytes_by_hand():
    kw = dict(hidden=1024, ffn_hidden=4096, seq_len=2048, heads=16, tp=2, sequence_parallel=False,
              flash_attention=False, gated_mlp=False)
    assert elementwise_bytes(**kw) == 2 * (15 * 1024 + 2 * 4096 / 2 + 6.5 * 16 * 2048 / 2)
    flash = elementwise_bytes(**{**kw, "flash_attention": True})
    assert flash == 2 * (15 * 1024 + 4096)               # the scores stay on chip
    assert elementwise_bytes(**{**kw, "flash_attention": True, "sequence_parallel": True}) == 2 * (15 * 512 + 4096)
    assert elementwise_time(nbytes=1e12, passes=3, memory_TBps=2.0) == 1.5
    assert elementwise_time(nbytes=1e12, passes=3, memory_TBps=INF) == 0.0


def test_memory_bandwidth_defaults_per_gpu():
    assert memory_bandwidth_TBps(312) == 2.0 and memory_bandwidth_TBps(989) == 3.35
    assert memory_bandwidth_TBps(400) == 2.0


def test_collective_time_alpha_beta():
    rate = 100e9
    assert collective_time(1e9, 8, rate) == pytest.approx(6 * 1e-6 * 0 + ring_factor(8) * 1e9 / rate)
    assert collective_time(1e9, 8, rate, latency_s=1e-6) == pytest.approx(6e-6 + ring_factor(8) * 1e9 / rate)
    assert collective_time(1e9, 8, rate, kind="all_gather", latency_s=1e-6) == pytest.approx(3e-6 + 7 / 8 * 1e9 / rate)
    assert collective_time(1e9, 8, rate, kind="send", latency_s=1e-6) == pytest.approx(1e-6 + 1e9 / rate)
    assert collective_time(1e9, 1, rate, latency_s=1e-6) == 0.0
    # the row it is fitted on: a 4-byte all-reduce of 16 ranks is all latency, 47.54 µs
    assert collective_time(4, 16, 400e9 * 0.8, latency_s=LATENCY_S) == pytest.approx(47.52e-6, rel=1e-3)


@pytest.mark.parametrize("ranks", [2, 8, 16, 1024])
def test_latency_dominates_below_the_stated_crossover(ranks):
    rate = 0.82 * 450e9
    edge = latency_crossover_bytes(ranks, rate, latency_s=LATENCY_S)
    steps = 2 * math.ceil(math.log2(ranks)) * LATENCY_S
    for nbytes, latency_wins in ((edge / 2, True), (edge * 2, False)):
        bandwidth = collective_time(nbytes, ranks, rate)
        assert (steps > bandwidth) is latency_wins
    assert collective_time(edge, ranks, rate) == pytest.approx(steps)   # equal at the edge
    assert 7e6 < latency_crossover_bytes(8, rate, latency_s=LATENCY_S) < 8e6  # the docstring's 7.5 MB


def test_a_narrow_model_is_communication_bound():
    narrow = dict(layers=4, hidden=64, heads=8, seq_len=128, vocab=0, global_batch=64, microbatch=1, gpus=64,
                  tp=8, pp=1, **H100)
    r = predict_run(**narrow)
    assert r.tp_exposed_s > r.compute_s
    assert predict_run(**narrow, latency_s=0.0).tp_exposed_s < r.tp_exposed_s / 10


def test_hidden_behind():
    assert hidden_behind(1.0, 0.0) == 1.0
    assert hidden_behind(1.0, 4.0) == pytest.approx(OVERLAP_SLOWDOWN)
    assert hidden_behind(1.0, 0.25, slowdown=0.0) == 0.75
    assert hidden_behind(1.0, 4.0, floor=0.3, slowdown=0.0) == pytest.approx(0.3)


def test_data_parallel_bytes_per_zero_stage():
    assert data_parallel_bytes(parameters=10, sharding="none", grad_bytes=4, microbatches=3) == (40, 0)
    assert data_parallel_bytes(parameters=10, sharding="optimizer", grad_bytes=4, microbatches=3) == (40, 20)
    assert data_parallel_bytes(parameters=10, sharding="full", grad_bytes=2, microbatches=3) == (60, 120)


# -- the switches on a run --------------------------------------------------------------------------

def test_the_default_stack_is_megatron_2021():
    assert Stack() == Stack("bf16", "none", False, False, False, None)
    r = predict_run(**LLAMA70B)
    assert r.stack == Stack(gated_mlp=True)
    assert predict_run(**{**LLAMA70B, "gated_mlp": None}, stack=Stack(gated_mlp=True)) == r
    # keywords override the record
    assert predict_run(**LLAMA70B, stack=Stack(precision="fp8"), precision="bf16") == r


def test_sequence_parallel_is_a_keyword():
    off = predict_run(**LLAMA70B, sequence_parallel=False)
    on = predict_run(**LLAMA70B, sequence_parallel=True)
    assert on.memory_s < off.memory_s and on.tp_comm_s == off.tp_comm_s   # same bytes: AG + RS = AR
    assert predict_run(**LLAMA70B, sequence_parallel="yes") == on


def test_fp8_speeds_the_linear_layers_only():
    bf16 = predict_run(**LLAMA70B, flash_attention=True)
    fp8 = predict_run(**LLAMA70B, flash_attention=True, precision="fp8")
    assert 1.2 < bf16.step_s / fp8.step_s < 1.6
    assert fp8.model_flops == bf16.model_flops and fp8.tp_comm_s == bf16.tp_comm_s


def test_flash_attention_removes_the_score_traffic():
    plain = predict_run(**LLAMA70B)
    flash = predict_run(**LLAMA70B, flash_attention=True)
    assert flash.memory_s < plain.memory_s / 2 and flash.step_s < plain.step_s
    assert flash.hardware_flops > plain.hardware_flops     # its backward recomputes the scores


def test_overlap_hides_what_runs_beside_compute():
    plain = predict_run(**LLAMA70B, sharding="optimizer")
    over = predict_run(**LLAMA70B, sharding="optimizer", overlap=True)
    assert over.dp_exposed_s < plain.dp_exposed_s and over.tp_exposed_s < plain.tp_exposed_s
    assert over.dp_comm_s == plain.dp_comm_s


def test_fsdp_moves_more_and_hides_behind_layers():
    fsdp = dict(layers=32, hidden=2560, heads=20, seq_len=2048, vocab=50_368, global_batch=512, microbatch=8,
                gpus=64, tp=1, pp=1, peak_tflops=312.0, scale_up_GBps=300.0, scale_out_GBps=25.0, grad_bytes=2,
                flash_attention=True)
    zero1 = predict_run(**fsdp, sharding="optimizer")
    zero3 = predict_run(**fsdp, sharding="full")
    assert zero3.dp_bytes > zero1.dp_bytes
    assert predict_run(**fsdp, sharding="full", overlap=True).step_s < zero3.step_s


@pytest.mark.parametrize("change, message", [
    ({"layers": 8, "pp": 8, "virtual_stages": 8, "gpus": 256, "global_batch": 32},
     "virtual_stages·pp must be at most layers + 2 = 10 (a chunk per layer, the embedding and the loss), got "
     "virtual_stages = 8 with pp = 8 (64)"),
    ({"ffn_hidden": 0}, "ffn_hidden must be a whole number in 1..inf"),
    ({"precision": "fp4"}, "precision must be one of ['bf16', 'fp16', 'fp8'], got 'fp4'"),
    ({"sharding": "zero2"}, "sharding must be one of ['none', 'optimizer', 'full'], got 'zero2'"),
    ({"overlap": 2}, "overlap must be True or False"),
    ({"stack": "megatron"}, "stack must be a Stack or None"),
])
def test_impossible_switches_are_refused(change, message):
    with pytest.raises(ValueError) as err:
        predict_run(**{**LLAMA70B, **change})
    assert str(err.value).startswith(message)


def test_every_new_argument_error_names_its_argument():
    assert_errors_name_their_argument(predict_run, VALID)


def test_uneven_stages_run_at_the_slowest():
    # without an output layer: stages of 20, 20, 19, 19 run at the pace of the 20-layer ones
    even = predict_run(**{**LLAMA70B, **EXACT, "virtual_stages": 1, "vocab": 0})
    uneven = predict_run(**{**LLAMA70B, **EXACT, "virtual_stages": 1, "vocab": 0, "layers": 78})
    assert uneven.compute_s == pytest.approx(even.compute_s, rel=1e-9)
    # with it, the last stage's 19 layers and the output layer (more than a layer's work at V = 128,256)
    out = predict_run(**{**LLAMA70B, **EXACT, "virtual_stages": 1, "layers": 78})
    assert out.compute_s == pytest.approx(even.compute_s * 19 / 20 + _output(LLAMA70B), rel=1e-9)


# -- the output layer on the last stage ------------------------------------------------------------

EXACT = {"memory_TBps": INF, "kernel_efficiency": 0.5, "hopper_kernel_efficiency": 0.5, "kernel_half_width": 0.0}
"""Where the compute is the FLOPs at one rate: no memory-bound work, one flat efficiency."""


def _output(run: dict, efficiency: float = 0.5) -> float:
    """The output layer's time on one GPU of the last stage, by hand: 3·2Vh·B·s·p / (N·peak·η)."""
    return (3 * 2 * run["vocab"] * run["hidden"] * run["global_batch"] * run["seq_len"] * run["pp"]
            / (run["gpus"] * run["peak_tflops"] * 1e12 * efficiency))


def test_output_layer_time_by_hand():
    assert output_layer_time(tokens=1000, vocab=100, hidden=10, stages=4, rate=1e6) == 3 * 2 * 100 * 10 * 1000 * 4 / 1e6
    assert output_layer_time(tokens=1000, vocab=0, hidden=10, stages=4, rate=1e6) == 0.0   # no vocabulary
    assert output_layer_time(tokens=0, vocab=100, hidden=10, stages=4, rate=1e6) == 0.0    # an empty batch
    assert_errors_name_their_argument(output_layer_time, dict(tokens=1000, vocab=100, hidden=10, stages=4, rate=1e6))


def test_loss_time_by_hand():
    # 1,000 tokens, 100 logits each, 40 bytes a logit, the last of 4 stages on 8 of 32 GPUs, 1 TB/s
    assert loss_time(tokens=1000, vocab=100, stages=4, gpus=32, memory_TBps=1.0) == \
        pytest.approx(40 * 100 * 1000 * 4 / (32 * 1e12), rel=1e-15)
    assert LOSS_BYTES == 40.0 == 6 + 8 + 4 + 8 + 8 + 6   # upcast+max, exp, row sum, normalise, scale, cast back
    assert loss_time(tokens=1000, vocab=100, stages=1, gpus=8, memory_TBps=2.0, loss_bytes=10.0) == \
        pytest.approx(10 * 100 * 1000 / (8 * 2e12), rel=1e-15)


@pytest.mark.parametrize("zero", [dict(vocab=0), dict(tokens=0), dict(loss_bytes=0.0), dict(memory_TBps=INF)])
def test_loss_time_is_zero_without_logits_bytes_or_a_memory_bound(zero):
    assert loss_time(**{**dict(tokens=1000, vocab=100, stages=4, gpus=32, memory_TBps=1.0), **zero}) == 0.0


def test_loss_time_refuses_impossible_input_by_name():
    assert_errors_name_their_argument(loss_time, dict(tokens=1000, vocab=100, stages=4, gpus=32, memory_TBps=1.0,
                                                      loss_bytes=40.0))


def test_the_loss_lands_on_the_last_stage_whole():
    # no stragglers, one stage: the step grows by exactly the loss's time; with four stages the last stage,
    # which sets the pace, grows by its loss time, four times the even spread's
    run = dict(layers=8, hidden=1024, seq_len=1024, vocab=50_000, global_batch=64, microbatch=1, gpus=8, tp=1,
               scale_out_GBps=25.0, peak_tflops=312.0, scale_up_GBps=300.0, memory_TBps=2.0, straggler_cv=0.0)
    tokens = 64 * 1024
    one = predict_run(**run, pp=1)
    assert one.step_s - predict_run(**run, pp=1, loss_bytes=0.0).step_s == pytest.approx(
        loss_time(tokens=tokens, vocab=50_000, stages=1, gpus=8, memory_TBps=2.0), rel=1e-9)
    four, four_free = predict_run(**run, pp=4), predict_run(**run, pp=4, loss_bytes=0.0)
    assert four.memory_s - four_free.memory_s == pytest.approx(
        loss_time(tokens=tokens, vocab=50_000, stages=4, gpus=8, memory_TBps=2.0), rel=1e-9)
    assert four.step_s > four_free.step_s


def test_a_narrow_model_with_a_wide_vocabulary_pays_most_for_its_loss():
    # the loss's share of the step shrinks as the width grows at one vocabulary (beta / 6h bytes per FLOP)
    def share(hidden: int) -> float:
        run = dict(layers=12, hidden=hidden, seq_len=2048, vocab=50_368, global_batch=64, microbatch=8, gpus=8,
                   tp=1, pp=1, gpu="A100-80GB", scale_out_GBps=25.0)
        return 1.0 - predict_run(**run, loss_bytes=0.0).step_s / predict_run(**run).step_s
    shares = [share(h) for h in (768, 2048, 4096, 8192)]
    assert shares == sorted(shares, reverse=True)
    assert shares[0] > 0.10 > 0.02 > shares[-1] > 0.0


def test_one_stage_keeps_the_even_spread():
    # pp = 1: every GPU does its share of the logits, as the naive model has it: f_hw / (N·peak·η)
    run = {**LLAMA70B, **EXACT, "pp": 1, "virtual_stages": 1, "gpus": 32, "causal_attention": False}  # f_hw in full
    r = predict_run(**run)
    assert r.compute_s == pytest.approx(r.hardware_flops / (32 * 989e12 * 0.5), rel=1e-12)
    # and the output layer is its p = 1 share: the step without a vocabulary is shorter by exactly that
    bare = predict_run(**{**run, "vocab": 0})
    assert r.compute_s - bare.compute_s == pytest.approx(_output(run), rel=1e-9)


def test_the_last_stage_is_slower_by_the_output_layer():
    run = {**LLAMA70B, **EXACT, "virtual_stages": 1}   # 80 layers on 4 stages: 20 each
    with_head, bare = predict_run(**run), predict_run(**{**run, "vocab": 0})
    assert with_head.compute_s - bare.compute_s == pytest.approx(_output(run), rel=1e-9)
    # p times what an even spread would give: the job's logit FLOPs over N GPUs
    even_share = 3 * 2 * run["vocab"] * run["hidden"] * 128 * 4096 / (128 * 989e12 * 0.5)
    assert _output(run) == pytest.approx(4 * even_share)
    assert with_head.step_s > bare.step_s


def test_the_output_layer_runs_at_16_bits_under_fp8():
    # Megatron-Core's output layer is no Transformer Engine module: FP8 speeds the layers, not the logits
    run = {**LLAMA70B, **EXACT, "virtual_stages": 1, "precision": "fp8"}
    with_head, bare = predict_run(**run), predict_run(**{**run, "vocab": 0})
    assert with_head.compute_s - bare.compute_s == pytest.approx(_output(run), rel=1e-9)


@pytest.mark.parametrize("pp", [1, 2, 4, 8])
def test_a_bigger_vocabulary_never_speeds_a_step(pp):
    steps = [predict_run(**{**LLAMA70B, "pp": pp, "virtual_stages": 1, "vocab": v}).step_s
             for v in (0, 32_000, 128_256, 256_000, 1_000_000)]
    assert steps == sorted(steps) and steps[0] < steps[-1]


# -- properties -------------------------------------------------------------------------------------

@st.composite
def stacked(draw):
    run = draw(runs())
    return {**run, "flash_attention": draw(st.booleans()), "gated_mlp": draw(st.booleans()),
            "sequence_parallel": draw(st.booleans()), "sharding": draw(st.sampled_from(("none", "optimizer", "full"))),
            "overlap": draw(st.booleans()), "memory_TBps": draw(st.floats(0.5, 10.0)),
            "latency_s": draw(st.floats(0.0, 5e-5)), "grad_bytes": draw(st.sampled_from((2, 4)))}


@settings(max_examples=80, deadline=None)
@given(stacked())
def test_fp8_never_slower_than_bf16_nor_twice_as_fast(run):
    bf16 = predict_run(**{**run, "precision": "bf16"})
    fp8 = predict_run(**{**run, "precision": "fp8"})
    assert fp8.step_s <= bf16.step_s * (1 + 1e-12)
    assert fp8.step_s >= bf16.step_s / 2 * (1 - 1e-12)


@settings(max_examples=80, deadline=None)
@given(stacked(), st.sampled_from((10.0, 40.0, 52.0)))
def test_the_loss_never_speeds_a_step_and_costs_at_most_its_time_at_the_pace(run, beta):
    free, paid = predict_run(**{**run, "loss_bytes": 0.0}), predict_run(**{**run, "loss_bytes": beta})
    loss = loss_time(tokens=run["global_batch"] * run["seq_len"], vocab=run["vocab"], stages=run["pp"],
                     gpus=run["gpus"], memory_TBps=run["memory_TBps"], loss_bytes=beta)
    assert free.step_s <= paid.step_s * (1 + 1e-12)
    # the last stage's work grows by the loss at most; the bubble and the stragglers scale the work
    scale = (paid.step_s - paid.dp_exposed_s) / max(paid.step_s - paid.dp_exposed_s - paid.bubble_s - paid.straggler_s,
                                                    1e-300)
    rounding = 1e-12 * paid.step_s   # two steps of ~16 s differ by 4e-7 s: their difference keeps ~1e-15 s of noise
    assert paid.step_s - free.step_s <= loss * scale * (1 + 1e-9) + rounding + abs(paid.dp_exposed_s - free.dp_exposed_s)


@settings(max_examples=80, deadline=None)
@given(stacked())
def test_overlap_never_slows_a_step(run):
    assert predict_run(**{**run, "overlap": True}).step_s <= predict_run(**{**run, "overlap": False}).step_s * (1 + 1e-12)


@settings(max_examples=80, deadline=None)
@given(stacked())
def test_full_sharding_never_moves_fewer_bytes_than_zero1(run):
    assert predict_run(**{**run, "sharding": "full"}).dp_bytes >= predict_run(**{**run, "sharding": "optimizer"}).dp_bytes


@settings(max_examples=80, deadline=None)
@given(stacked())
def test_infinite_memory_bandwidth_leaves_the_gemms_alone(run):
    finite = predict_run(**run)
    free = predict_run(**{**run, "memory_TBps": INF})
    assert free.memory_s == 0.0
    assert free.compute_s == pytest.approx(finite.compute_s - finite.memory_s, rel=1e-9)
    assert free.hardware_flops == finite.hardware_flops


def test_published_layouts_with_uneven_chunks_are_predicted():
    """Megatron-Bridge's Llama 3.1 405B on 256 GB200 (docs/performance-summary-archive.md, 26.04 and 26.06,
    MXFP8): 126 layers in 16 stages of 8 chunks, the embedding and the loss a chunk each (its recipes set
    ``account_for_embedding_in_pipeline_split`` and ``account_for_loss_in_pipeline_split``). One chunk more
    per stage is refused. A stage of 20 layers in 3 chunks of unequal size is predicted too, its bubble
    between those of 2 and 4 chunks."""
    run = dict(layers=126, hidden=16_384, heads=128, kv_heads=8, ffn_hidden=53_248, seq_len=8192, vocab=128_256,
               global_batch=1536, microbatch=1, gpus=256, tp=4, pp=16, gpu="GB200", scale_out_GBps=50.0,
               precision="fp8", sharding="optimizer", overlap=True, flash_attention=True, gated_mlp=True,
               sequence_parallel=True)
    assert predict_run(**run, virtual_stages=8).bubble_s < predict_run(**run, virtual_stages=4).bubble_s
    with pytest.raises(ValueError, match=r"^virtual_stages·pp must be at most layers \+ 2 = 128 "):
        predict_run(**run, virtual_stages=9)
    bubbles = [predict_run(**{**LLAMA70B, "virtual_stages": v}).bubble_s for v in (2, 3, 4)]
    assert bubbles[0] > bubbles[1] > bubbles[2]
