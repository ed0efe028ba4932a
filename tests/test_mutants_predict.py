"""Mutation tests of chapter 6's step and goodput models (``predict.py``, ``training_time.py``), second pass.

Written against the survivors ``make mutants`` left after ``tests/test_mutants_validation.py``:
what a GPU executes when nothing waits, the sends that interleaving multiplies, a
data-parallel group that context parallelism splits across domains, a send's bytes counted
exactly, the refit's stopping rule at exactly its 1e-12 threshold, and node counts written
as whole floats.
Values come from the formulas the docstrings print, not from the code under test; nothing
is computed from the models at import time (see ``validation_fresh``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import pytest

from clustermath import Calibrated, calibrate_defaults, kernel_share, parameter_count, predict_run, ring_factor, \
    run_ettr
from validation_fresh import fresh

INF = math.inf


@pytest.fixture(autouse=True)
def _fresh():
    fresh()


# -- predict_run ------------------------------------------------------------------------------------

def test_one_gpu_with_nothing_to_wait_for_runs_at_the_kernel_share_of_peak():
    """One GPU, unlimited wires, no straggler spread: the step is its compute, and the GPU executes
    exactly ``kernel_share(h)`` × peak TFLOP/s (1 TFLOP/s = 1e12 FLOP/s) with attention counted in full
    (the FLOPs it is credited with are the ones it spends); counted causal (the default), it spends half
    the attention products' time and the same credited FLOPs come out faster."""
    shape = dict(layers=2, hidden=1024, seq_len=2048, vocab=0, memory_TBps=INF, latency_s=0.0, global_batch=4,
                 microbatch=1, gpus=1, tp=1, pp=1, peak_tflops=312.0, scale_up_GBps=INF, scale_out_GBps=INF,
                 straggler_cv=0.0)
    causal = predict_run(**shape)
    r = predict_run(**shape, causal_attention=False)
    assert causal.step_s == causal.compute_s < r.step_s and causal.model_tflops_per_gpu > r.model_tflops_per_gpu
    assert r.step_s == r.compute_s
    assert r.bubble_s == r.tp_exposed_s == r.pp_exposed_s == r.dp_exposed_s == r.straggler_s == 0.0
    eta = kernel_share(1024)
    assert r.tflops_per_gpu == pytest.approx(312.0 * eta, rel=1e-14)
    assert r.model_tflops_per_gpu == pytest.approx(312.0 * eta, rel=1e-14)  # no recompute: the same FLOPs
    assert r.hfu == pytest.approx(eta, rel=1e-14)


# a pipeline of 2 stages, 2 micro-batches, on a 1 GB/s scale-up wire at efficiency 1 (whole job in one domain)
PIPE = dict(layers=8, hidden=512, seq_len=1024, vocab=0, memory_TBps=INF, latency_s=0.0, global_batch=4, microbatch=2, gpus=2, tp=1, pp=2,
            peak_tflops=100.0, scale_up_GBps=1.0, scale_out_GBps=1.0, bus_efficiency_up=1.0,
            bus_efficiency_out=1.0, straggler_cv=0.0)


@pytest.mark.parametrize("v", [1, 2, 4])
def test_interleaving_multiplies_the_pipeline_sends_by_the_chunks(v):
    """``pp_comm = 2 m v · 2 b s h / t / BW``: each of the ``v`` chunks a stage holds sends every
    micro-batch's activations once each way."""
    r = predict_run(**PIPE, virtual_stages=v)
    assert r.microbatches == 2
    sends = 2 * 2 * v * (2 * 2 * 1024 * 512)  # 2 m v sends of 2 bytes × b × s × h
    assert r.pp_comm_s == sends / 1e9
    assert r.pp_comm_s == v * predict_run(**PIPE).pp_comm_s


def test_context_parallel_ranks_join_the_data_parallel_gradient_ring():
    """The gradient all-reduce runs over ``d·c`` ranks: CP 2 × DP 2 and DP 4 are the same ring of 4.
    In 2-GPU domains that ring spans two domains, so it crosses the NICs: 2 rings in parallel at
    ``min(up, 2 · out)``; the scale-up wire would be five times faster."""
    base = dict(layers=2, hidden=512, seq_len=1024, vocab=0, memory_TBps=INF, latency_s=0.0, microbatch=1, gpus=4, tp=1, pp=1,
                peak_tflops=100.0, scale_up_GBps=100.0, scale_out_GBps=10.0, scale_up_gpus=2,
                bus_efficiency_up=1.0, bus_efficiency_out=1.0, straggler_cv=0.0)
    split = predict_run(**base, cp=2, global_batch=2)
    plain = predict_run(**base, cp=1, global_batch=4)
    assert (split.dp, plain.dp) == (2, 4)
    grads = ring_factor(4) * 4 * parameter_count(layers=2, hidden=512, seq_len=1024, vocab=0)
    assert split.dp_comm_s == pytest.approx(grads / (2 * 10e9), rel=1e-12)
    assert split.dp_comm_s == plain.dp_comm_s



def test_a_send_counts_its_bytes_exactly_even_beyond_2_to_the_53():
    """A send carries ``2 b (s/c) h`` whole bytes, counted in integers and rounded to a float once.

    At any shape a run has (under 2^53 bytes per micro-batch) the count is exact however it is
    computed; this unphysical micro-batch of 457,613,130,863 sequences (about 2.2e20 bytes a send)
    is where a count in floats, rounded at each product, would lose the last bit."""
    b, s, c, h = 457_613_130_863, 39_366, 2, 12_288
    r = predict_run(layers=2, hidden=h, seq_len=s, vocab=0, memory_TBps=INF, latency_s=0.0, global_batch=b, microbatch=b, gpus=4, tp=1, pp=2,
                    cp=2, peak_tflops=100.0, scale_up_GBps=1.0, scale_out_GBps=1.0, bus_efficiency_up=1.0,
                    bus_efficiency_out=1.0, straggler_cv=0.0)
    assert (r.dp, r.microbatches) == (1, 1)
    send = 2 * b * (s // c) * h           # bytes of one micro-batch's activations, exact
    assert r.pp_comm_s == float(2 * send) / 1e9  # one send each way at 1 GB/s

# -- calibrate_defaults: the stopping rule at its threshold ------------------------------------------

@dataclass(frozen=True)
class Row:
    """A solved calibration row with its figure given here (a ``Calibration`` reads its row's from the CSV)."""

    constant: str
    value: float
    measured: float
    run: dict[str, Any] = field(default_factory=dict)
    metric: str = "step_s"
    low: float = 0.0
    high: float = 1.0


# TP 2 × PP 2 on 4 GPUs, both wires slow enough that the sends matter: both overlaps move the step
OVERLAPS = dict(layers=4, hidden=512, seq_len=1024, vocab=0, memory_TBps=INF, latency_s=0.0, global_batch=4, microbatch=1, gpus=4, tp=2, pp=2,
                peak_tflops=100.0, scale_up_GBps=1.0, scale_out_GBps=1.0, bus_efficiency_up=1.0,
                bus_efficiency_out=1.0, straggler_cv=0.0)


def test_a_sweep_that_moves_a_constant_by_exactly_1e_12_ends_the_refit():
    """"until a sweep moves none of them by more than 1e-12": a move of exactly 1e-12 stops it.

    Two solved rows: the tensor-parallel overlap, whose figure the step meets at 0 with the
    pipeline overlap at its starting 1e-12, and the pipeline overlap, whose figure the step meets
    at 0 with both at 0. The first sweep keeps the first at 0 and moves the second from 1e-12 to 0,
    by exactly 1e-12: the refit ends there. Another sweep would refit the first against the pipeline
    overlap's new 0, where the step is longer, and move it off 0."""
    def step(tp_overlap: float, pp_overlap: float) -> float:
        return predict_run(**OVERLAPS, tp_overlap=tp_overlap, pp_overlap=pp_overlap).step_s

    before, after = step(0.0, 1e-12), step(0.0, 0.0)
    assert before < after  # the pipeline overlap's move is visible in the step
    rows = (Row("tp_overlap", 0.0, before, OVERLAPS), Row("pp_overlap", 1e-12, after, OVERLAPS))
    assert abs(0.0 - 1e-12) == 1e-12
    fits = calibrate_defaults(rows)
    assert fits == {"tp_overlap": Calibrated("tp_overlap", 0.0, False, before),
                    "pp_overlap": Calibrated("pp_overlap", 0.0, False, after)}


# -- run_ettr ------------------------------------------------------------------------------------------

def test_run_ettr_takes_a_whole_number_of_nodes_written_as_a_float():
    """A node count read from a table as ``4.0`` is four nodes, as a GPU count ``32.0`` is."""
    kw = dict(failures_per_node_day=0.5, save_s=60, restart_s=600, days=30)
    whole_float = run_ettr(nodes=4.0, **kw)
    assert whole_float == run_ettr(nodes=4, **kw) == run_ettr(gpus=32.0, **kw)
    assert whole_float.nodes == 4 and type(whole_float.nodes) is int
