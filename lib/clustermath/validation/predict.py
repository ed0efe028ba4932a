"""Chapter 6: the book's models composed into one prediction of a dense transformer's training step.

``predict_run`` takes a published run's shape (model, batch, parallelism, hardware, stack) as
keywords, makes the five frozen records of ``inputs`` from them (``ModelShape``, ``Layout``,
``Hardware``, ``Stack``, ``Constants``), and ``predict_step`` returns its step time as the sum of the
terms the earlier chapters model one at a time, each its own function here::

    compute  = linear GEMMs / (N · peak · k · η(h))        k = 2 · fp8_efficiency with FP8, else 1
             + attention GEMMs / (N · peak · η(h))         16-bit always       (predicted_flops, gemm_times)
             + passes · elementwise_bytes / BW_mem         memory-bound        (memory_time)
             + the output layer, on the last stage only    16-bit always       (output_layer_time)
             + β · V · T·p/N / BW_mem, the loss there       memory-bound        (loss_time)
    tp, cp, pp, dp  collectives at α·steps + ring bytes / BW                 (transfers, collective_time)
    exposed  = hidden_behind(comm, what runs beside it)   with overlap; all of it without (stage_time)
    bubble   = bubble_time(work)  ·  straggler = straggler_time(work + bubble)             (predict_step)

* the FLOPs of a step, model FLOPs apart from hardware FLOPs (Narayanan et al. 2021, eq. 3;
  Korthikanti et al. 2022, appendix A), at a kernel efficiency that grows with the model's width
  (``kernel_share``), or each GEMM timed from its shape (``kernels=True``: ``kernel_layer_times``,
  through ``gemm.gemm_time`` calibrated on published GEMM tables, causal attention at 16 bits);
* the pipeline bubble with interleaving, ``(p − 1)/(v·m)`` (Narayanan et al. 2021, §2.2), through
  chapter 1's ``bubble_fraction``;
* the tensor-parallel all-reduces on the scale-up wire, the context-parallel key/value exchange, the
  pipeline sends and the data-parallel gradient all-reduce across the fabric, each a ring at chapter
  1's ``ring_factor`` and a measured bus-bandwidth efficiency, minus the share hidden behind compute;
* the straggler tax of chapter 2's ``straggler_tax``, for the slowest of the job's ranks.

What runs beside what, with ``overlap=True``: tensor-parallel collectives beside the linear GEMMs
of their layers; pipeline sends beside the next micro-batch (one micro-batch's sends exposed);
gradient buckets beside the backward of the last micro-batch, the last layer's bucket exposed; the
distributed optimizer's parameter all-gather beside the first micro-batch's forward; FSDP's gather
of each layer beside the previous layer's compute (the first layer's exposed) and its
reduce-scatter beside the next layer's backward. Hidden transfers still cost ``overlap_slowdown``
of their time (``hidden_behind``); ``tp_overlap``, ``pp_overlap`` and ``dp_overlap`` hide a further
share by hand (default 0).

Stages: the slowest stage sets the pipeline's pace. The fullest holds ``⌈l/p⌉`` layers; the last
holds ``⌊l/p⌋`` (a balanced split gives its fewest layers to the stage with the output layer, as
Llama 3 takes a layer off its last stage) and the output layer: ``3·2Vh`` FLOPs a token done by
that stage's ``N/p`` GPUs alone (``output_layer_time``), at the 16-bit rate even with FP8
(Megatron-Core's output layer is a ``ColumnParallelLinear``, not a Transformer Engine module, so
``fp8_autocast`` leaves it in BF16). Each stage's layers are split into ``v`` chunks. With
``p = 1`` the one stage holds everything and the logits are spread over every GPU. FSDP
(``sharding="full"``) communicates inside every micro-batch, so its exposed time joins the
pipeline's work; the other data-parallel traffic follows the last micro-batch. Recompute:
``none``, ``selective`` (the attention scores; FlashAttention's backward recomputes them whatever
the setting), ``full`` (a second forward of every layer).

Calibrated constants (``CALIBRATION`` names the rows, ``calibrate_defaults`` refits them, so the
defaults can be reproduced, and are, in ``tests/test_predict_run.py``): ``kernel_efficiency`` (η_∞)
and ``kernel_half_width`` (h½), together on rows ``nar21-t2-04`` (the throughput row whose step is
most purely compute, h = 20,480) and ``nar21-t1-01`` (the narrowest model, h = 2,304), chosen for
those reasons before any validation error was seen; ``hopper_kernel_efficiency`` (η for a peak
above 400 TFLOP/s, H100) on ``mosaic23-h100-70b-s2048-g64``, by the same rule among the 16-bit H100
rows (the largest GEMM share of its predicted step; chosen after the H100 rows were seen to come
out fast at the Ampere value, which the chapter says); ``bus_efficiency_up`` on ``nccl1455-ring-8``
and ``bus_efficiency_out`` on ``nccl1221-4node`` (the largest-message ring rows, one per wire);
``latency_s`` (α) on ``nccl1244-latency``, the only measured small-message row (a 4-byte
all-reduce on 16 GPUs: 47.54 µs over 2⌈log₂ 16⌉ = 8 steps); ``straggler_cv`` on
``ms24-evict-gain``; ``cp_attention_overhead`` (κ, the extra attention time of a context-parallel ring)
on ``nemo24-llama3-8b-8``, the context-parallel row at 8,192 tokens or fewer whose step is most
attention (added after the context-parallel rows were seen to come out fast). Stated, not fitted:
``fp8_efficiency`` (``FP8_GEMM_EFFICIENCY``), ``overlap_slowdown`` (``OVERLAP_SLOWDOWN``), the bytes of ``elementwise_bytes``, the memory
bandwidths, ``grad_bytes = 4`` (FP32 gradient reduction, Megatron-LM's
``accumulate_allreduce_grads_in_fp32``) and ``PARAM_BYTES = 2``. The GPU by name (issue 43):
``gpu`` (a name of ``gpus.GPUS`` or a ``Gpu``) fills ``peak_tflops``, ``scale_up_GBps``,
``scale_up_gpus``, ``memory_TBps`` and, from the part's reference system, ``scale_out_GBps`` where they
are not given (``inputs.Hardware.of``).
``causal_attention`` (default ``True``, issue 43) times the attention products as a causal kernel
runs them, half the full products (``flop_counts.attention_flops``), as every FlashAttention-style
kernel does; ``causal_attention=False`` counts them in full, the default before. The MFU and TFLOP/s
keep the rows' own FLOP counts.

Impossible input raises ``ValueError`` naming the argument and its range, where the record holding
it is made (``inputs``): counts below 1, ``gpus`` not a multiple of ``tp·pp·cp``, ``global_batch``
not a multiple of ``microbatch·dp``, ``virtual_stages > 1`` with ``pp = 1``, fewer layers than
``virtual_stages·pp``, a stage of ``⌈l/p⌉`` layers that ``virtual_stages`` does not divide,
``seq_len`` not a multiple of ``cp``, ``heads`` that ``hidden`` or ``tp`` cannot share,
efficiencies outside (0, 1], overlaps outside [0, 1], an unknown switch value; and, because chapter
1's ring and bubble models take 16-bit counts, a data-parallel group or ``v·m`` above 65,535.

Times in seconds, bandwidths in GB/s per GPU and direction (1 GB = 1e9 bytes), FLOP rates in
TFLOP/s (1e12). Sources: Narayanan et al. (2021) eqs. 2–3 and §§2.2, 3.2, 4.1; Korthikanti et al.
(2022) appendix A; Rajbhandari et al. (2020) for ZeRO's bytes; Dao et al. (2022) for
FlashAttention; chapter 1 (``ring_factor``, ``bubble_fraction``); chapter 2 (``straggler_tax``);
Hockney and Jesshope (1981) for ``h½``.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any, Mapping, NamedTuple, Sequence

from ..peak import U16_MAX, bubble_fraction, ring_factor
from ..reliability import straggler_tax
from ..validate import one_of, probability, real, whole
from .gpus import Gpu
from .inputs import (
    BUS_EFFICIENCY_OUT, BUS_EFFICIENCY_UP, CP_ATTENTION_OVERHEAD, DP_OVERLAP, FP8_GEMM_EFFICIENCY, GRAD_BYTES,
    HEAD_DIM, KERNEL_EFFICIENCY, KERNEL_EFFICIENCY_HOPPER, KERNEL_HALF_WIDTH, LATENCY_S, LOSS_BYTES, OVERLAP_SLOWDOWN, PRECISIONS, RECOMPUTE, SHARDINGS,
    STRAGGLER_CV, Constants, Hardware, Layout, ModelShape, Stack, check_fit, memory_bandwidth_TBps,
)
from .collectives import nccl_collective_time
from .kernels import (
    CAUSAL_SHARE, attention_kernel_time, attention_table_time, fp8_cast_bytes, layer_kernel_time, logits_kernel_time,
)

__all__ = [
    "BUS_EFFICIENCY_OUT", "BUS_EFFICIENCY_UP", "CALIBRATION", "CONSTANTS", "CP_ATTENTION_OVERHEAD", "Calibrated",
    "Calibration", "Constants",
    "DP_OVERLAP", "FP8_GEMM_EFFICIENCY", "GRAD_BYTES", "HEAD_DIM", "Hardware", "KERNEL_EFFICIENCY",
    "KERNEL_EFFICIENCY_HOPPER", "KERNEL_HALF_WIDTH", "LATENCY_S", "LOSS_BYTES", "Layout", "METRICS", "ModelShape", "OVERLAP_SLOWDOWN",
    "PARAM_BYTES", "PRECISIONS", "RECOMPUTE", "Rates", "RunPrediction", "SHARDINGS", "STRAGGLER_CV", "Stack", "Stage",
    "StepFlops", "Transfers", "calibrate", "calibrate_defaults", "check_fit", "collective_time", "compute_time",
    "data_parallel_bytes", "data_parallel_transfers", "dp_collective", "elementwise_bytes", "elementwise_time", "fp8_cast_time", "fsdp_exposed",
    "gemm_times", "gradient_exposed", "hardware_flops", "hidden_behind", "kernel_layer_times", "kernel_share",
    "latency_crossover_bytes", "layer_flops", "loss_time", "memory_bandwidth_TBps", "memory_time", "model_flops",
    "model_parallel_transfers", "output_layer_time", "parameter_count", "bubble_time", "predict_run", "predict_step",
    "refit_solved", "slowest_of", "stage_time", "predicted_flops", "straggler_time", "transfers", "wire_rates",
]

ACTIVATION_BYTES = 2
"""Bytes per activation element on the wire (BF16/FP16)."""

PARAM_BYTES = 2
"""Bytes per parameter element a sharded stack gathers: 16-bit weights (FP8 runs keep them too)."""


# -- the FLOPs of a step --------------------------------------------------------------------

def _model_flops(b: int, s: int, l: int, h: int, vocab: int) -> float:
    """Model FLOPs of one step: the formula of ``model_flops``."""
    return 72.0 * b * s * l * h * h * (1.0 + s / (6.0 * h) + vocab / (12.0 * h * l))


def _flops(b: int, s: int, l: int, h: int, vocab: int, recompute: str) -> tuple[float, float]:
    """(model FLOPs, hardware FLOPs) of one step; the formulas of ``model_flops`` and ``hardware_flops``."""
    model = _model_flops(b, s, l, h, vocab)
    if recompute == "selective":
        return model, model + 4.0 * b * s * s * h * l
    if recompute == "full":
        return model, model + 24.0 * b * s * l * h * h * (1.0 + s / (6.0 * h))
    return model, model


def _shape(layers: object, hidden: object, seq_len: object, vocab: object) -> tuple[int, int, int, int]:
    return (whole("layers", layers, low=1, integral_only=False),
            whole("hidden", hidden, low=1, integral_only=False),
            whole("seq_len", seq_len, low=1, integral_only=False),
            whole("vocab", vocab, low=0, integral_only=False))


def model_flops(*, layers: int, hidden: int, seq_len: int, vocab: int, sequences: int) -> float:
    """Model FLOPs of one training step (forward and backward, no recomputation).

    ``72 B s l h² (1 + s/(6h) + V/(12 h l))`` for ``B`` sequences of ``s``
    tokens through ``l`` layers of width ``h`` and a vocabulary of ``V``:
    per layer and token the forward pass does ``24h²`` FLOPs of matrix
    products and ``4sh`` of attention scores, the logits ``2Vh``, and the
    backward pass twice the forward.

    Source: Narayanan et al. (2021), eq. 3 without the recompute pass;
    Korthikanti et al. (2022), appendix A, eq. 7.
    """
    l, h, s, v = _shape(layers, hidden, seq_len, vocab)
    return _model_flops(whole("sequences", sequences, integral_only=False), s, l, h, v)


def hardware_flops(*, layers: int, hidden: int, seq_len: int, vocab: int, sequences: int,
                   recompute: str = "none") -> float:
    """FLOPs the GPUs execute in one step: the model FLOPs plus what recomputation repeats.

    ::

        none       model FLOPs
        selective  + 4 B s² h l                 one more forward of QKᵀ and of the scores times V
        full       + 24 B s l h² (1 + s/(6h))   one more forward of every layer (not the logits)

    Full recompute gives Narayanan et al.'s eq. 3, ``96 B s l h² (1 + s/(6h) +
    V/(16 l h))``. For selective recompute this is the forward of the two
    attention-score products Korthikanti et al. recompute; their eq. 8 prints
    ``72 B l s h² (1 + s/(3h) + …)``, which adds ``12 B s² h l``, three times
    as much (the forward and backward of those products), and is what their
    Table 5's HFU column follows (``DISAGREEMENTS``, ``korthikanti-eq8-selective``).
    """
    l, h, s, v = _shape(layers, hidden, seq_len, vocab)
    b = whole("sequences", sequences, integral_only=False)
    return _flops(b, s, l, h, v, one_of("recompute", recompute, RECOMPUTE))[1]


def parameter_count(*, layers: int, hidden: int, seq_len: int, vocab: int) -> float:
    """Parameters of a GPT-style model: ``12 l h² (1 + 13/(12h) + (V + s)/(12 l h))``.

    Source: Narayanan et al. (2021), eq. 2 (1,008.0 B for their 1 T row).
    """
    l, h, s, v = _shape(layers, hidden, seq_len, vocab)
    return _parameters(l, h, s, v)


def _parameters(l: int, h: int, s: int, vocab: int) -> float:
    return 12.0 * l * h * h * (1.0 + 13.0 / (12.0 * h) + (vocab + s) / (12.0 * l * h))


def kernel_share(hidden: float, *, efficiency: float = KERNEL_EFFICIENCY,
                 half_width: float = KERNEL_HALF_WIDTH) -> float:
    """Share of peak a layer of width ``hidden`` sustains: ``η_∞ · h / (h + h½)``.

    Per token, a layer's matrix products grow as ``h²`` while the work
    around them (layer norms, softmax, dropout, residual adds, bias and
    activation kernels, reading and writing activations) grows as ``h``
    and runs at memory speed. Time ``∝ h² + h½·h`` makes the sustained share
    ``η_∞ · h/(h + h½)``: Hockney's half-performance length, with the hidden
    size as the length. ``half_width = 0`` gives the flat ``η_∞``.

    Source: Hockney and Jesshope (1981), ``r = r_∞ · n/(n + n½)``.
    """
    return _kernel_share(real("hidden", hidden, low_open=True), probability("efficiency", efficiency, low_open=True),
                         real("half_width", half_width))


def _kernel_share(h: float, eta: float, half: float) -> float:
    """``kernel_share``'s formula, for inputs a record has checked."""
    return eta * h / (h + half)


# -- stragglers --------------------------------------------------------------------------------

_NORMAL = NormalDist()


def slowest_of(ranks: int) -> float:
    """Expected largest of ``ranks`` independent standard normal draws (Blom's approximation).

    ``Φ⁻¹((n − 0.375)/(n + 0.25))``: 0 for one rank, 0.59 for two (exact
    0.564), 3.35 for 1,536 and 3.89 for 12,288. A synchronous step waits for
    its slowest rank, so a job of ``n`` ranks whose step times vary with
    coefficient of variation ``cv`` runs at ``1/(1 + cv·slowest_of(n))`` of
    the typical rank's speed.

    Source: Blom (1958), the plotting position ``(i − 3/8)/(n + 1/4)`` for the
    expected ``i``-th order statistic of a normal sample.
    """
    n = whole("ranks", ranks, low=1, integral_only=False)
    return _NORMAL.inv_cdf((n - 0.375) / (n + 0.25))  # Φ⁻¹(0.5) = 0.0 exactly for one rank


# -- the prediction ------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class RunPrediction:
    """One predicted training step; the seven ``*_s`` parts sum to ``step_s``."""

    step_s: float
    """Wall time of one step (one optimizer update over ``global_batch`` sequences), s."""
    compute_s: float
    """The pacing stage's work per GPU, s: its layers' GEMMs at ``kernel_efficiency`` × peak and
    memory-bound work, plus the output layer when that stage is the last."""
    bubble_s: float
    """Pipeline fill and drain: ``(p − 1)/(v·m)`` × the pipeline's busy time, s."""
    tp_exposed_s: float
    """Tensor-parallel all-reduces not hidden behind compute, s."""
    cp_exposed_s: float
    """Context-parallel key/value exchange left over after the attention math it overlaps, s."""
    pp_exposed_s: float
    """Pipeline sends between stages not hidden behind compute, s."""
    dp_exposed_s: float
    """Data-parallel gradient all-reduce not hidden behind compute, s."""
    straggler_s: float
    """Waiting for the slowest rank: ``cv·E[max of N]`` × the pipeline's time, s."""
    mfu: float
    """Model FLOPs utilisation: model FLOPs ÷ (step × GPUs × peak)."""
    hfu: float
    """Hardware FLOPs utilisation: executed FLOPs (recompute included) ÷ (step × GPUs × peak)."""
    tflops_per_gpu: float
    """Executed TFLOP/s per GPU, recompute included (the count Narayanan et al. print); = hfu × peak."""
    model_tflops_per_gpu: float
    """Model TFLOP/s per GPU (mfu × peak)."""
    tokens_per_s: float
    """``global_batch × seq_len / step_s``."""
    dp: int
    """Data-parallel size ``gpus / (tp·pp·cp)``."""
    microbatches: int
    """Micro-batches per pipeline per step, ``m = global_batch / (microbatch·dp)``."""
    model_flops: float
    """Model FLOPs of one step."""
    hardware_flops: float
    """Executed FLOPs of one step."""
    parameters: float
    """Parameter count (Narayanan et al. eq. 2)."""
    tp_comm_s: float
    """Tensor-parallel all-reduce time before overlap, s."""
    cp_comm_s: float
    """Context-parallel exchange time before overlap, s."""
    pp_comm_s: float
    """Pipeline send time before overlap, s."""
    dp_comm_s: float
    """Data-parallel all-reduce time before overlap, s."""
    slowest_speed: float
    """Speed of the slowest rank relative to a typical one, ``1/(1 + cv·E[max of N])``."""
    memory_s: float = 0.0
    """The memory-bound part of ``compute_s`` (norms, activations, softmax unless fused, FP8 casts), s."""
    dp_bytes: float = 0.0
    """Bytes per rank the data-parallel group reduces and gathers in one step (``data_parallel_bytes``)."""
    stack: "Stack | None" = None
    """The switches the step was predicted with."""

    @property
    def iteration_s(self) -> float:
        """The step time under the name the measurements use."""
        return self.step_s

    @property
    def pct_peak(self) -> float:
        """"Percent of peak" as Narayanan et al. count it (recompute included): the HFU, as a fraction."""
        return self.hfu

    @property
    def parts(self) -> dict[str, float]:
        """The step's seven parts, in order, s."""
        return {"compute": self.compute_s, "bubble": self.bubble_s, "tp_exposed": self.tp_exposed_s,
                "cp_exposed": self.cp_exposed_s, "pp_exposed": self.pp_exposed_s,
                "dp_exposed": self.dp_exposed_s, "straggler": self.straggler_s}


def _link(bandwidth_GBps: float, efficiency: float) -> float:
    """Usable bytes per second of a link at a bus-bandwidth efficiency (inf stays inf)."""
    return bandwidth_GBps * 1e9 * efficiency


def _seconds(nbytes: float, rate: float) -> float:
    return 0.0 if nbytes == 0.0 or math.isinf(rate) else nbytes / rate


# -- one function per part of the step ---------------------------------------------------------------

def layer_flops(*, hidden: int, seq_len: int, ffn_hidden: int, kv_share: float = 1.0,
                gated_mlp: bool = False) -> tuple[float, float]:
    """Forward FLOPs of one layer per token: (linear GEMMs, attention scores).

    Linear: ``2h(h + 2h_kv)`` (Q, K, V with ``h_kv = h·kv_heads/heads``) ``+ 2h²``
    (projection) ``+ 2·n·h·f`` (MLP, ``n = 3`` matrices gated (SwiGLU), 2 otherwise);
    attention: ``4 s h`` (QKᵀ and scores × V). With ``f = 4h``, no GQA and no gate,
    ``24h² + 4sh``: Narayanan et al. (2021) eq. 3's per-layer count. FLOPs per token.
    """
    h, f = float(hidden), float(ffn_hidden)
    linear = 2.0 * h * (h + 2.0 * h * kv_share) + 2.0 * h * h + 2.0 * (3.0 if gated_mlp else 2.0) * h * f
    return linear, 4.0 * seq_len * h


def compute_time(*, flops: float, rate: float) -> float:
    """``flops / rate``: FLOPs at a sustained FLOP/s, s (the GEMMs' part of a layer's roofline)."""
    return flops / rate


def elementwise_bytes(*, hidden: int, ffn_hidden: int, seq_len: int, heads: float, tp: int,
                      sequence_parallel: bool, flash_attention: bool, gated_mlp: bool) -> float:
    """Bytes of memory-bound work one GPU moves per token and layer in one forward pass.

    In elements of 2 bytes: two layer norms (read and write ``h``: ``4h``), two residual adds
    (read two, write one: ``6h``) and two dropouts (read, write, a 1-byte mask: ``5h``), ``15h``,
    replicated on every tensor-parallel rank unless sequence parallelism splits them (``/t``);
    the activation (GeLU reads and writes ``f``: ``2f``; SwiGLU reads ``2f``, writes ``f``:
    ``3f``), ``/t``; without FlashAttention the scores of ``a`` heads (``a·s`` per token) are
    written by QKᵀ, read and written by the softmax, read and written by dropout with its mask,
    read by the product with V: ``6.5·a·s``, ``/t``; FlashAttention keeps them on chip (0).
    FP8 adds no pass: the cast of each GEMM's input is fused into the norm or activation kernel
    that writes it (Transformer Engine's fused LayerNorm/GeLU with FP8 output), so the bytes
    are counted at 16 bits, an upper bound. The backward pass moves twice this
    (``elementwise_time``).
    """
    h, f, s = float(hidden), float(ffn_hidden), float(seq_len)
    norms = 15.0 * h / (tp if sequence_parallel else 1)
    act = (3.0 if gated_mlp else 2.0) * f / tp
    scores = 0.0 if flash_attention else 6.5 * heads * s / tp
    return 2.0 * (norms + act + scores)


def elementwise_time(*, nbytes: float, passes: float, memory_TBps: float) -> float:
    """``passes × bytes / BW_mem``: memory-bound work at the GPU's memory bandwidth, s.

    ``passes``: 3 for a forward and its backward (the backward moves twice the forward's
    bytes), plus 1 for a full-recompute forward. An infinite bandwidth costs nothing.
    """
    return 0.0 if math.isinf(memory_TBps) else passes * nbytes / (memory_TBps * 1e12)


def collective_time(nbytes: float, ranks: int, rate: float, *, kind: str = "all_reduce",
                    latency_s: float = 0.0) -> float:
    """One collective of ``nbytes`` (per rank) among ``ranks`` on a wire of ``rate`` bytes/s, s.

    ``α·k + β``: the bandwidth term ``β`` of a ring, ``2(n−1)/n · bytes/rate`` for an
    all-reduce, ``(n−1)/n · bytes/rate`` for a reduce-scatter or all-gather, ``bytes/rate``
    for a send; the latency term ``α`` per step of a log-depth schedule (NCCL's trees for
    small messages), ``k = 2⌈log₂ n⌉`` for an all-reduce, ``⌈log₂ n⌉`` for a reduce-scatter
    or all-gather, 1 for a send. One rank moves nothing.

    The latency term is the larger below ``latency_crossover_bytes``: with α = 5.94 µs
    and 8 GPUs on 0.82 × 450 GB/s NVLink, about 7.5 MB for an all-reduce, so a 197 KB
    tensor-parallel all-reduce costs about 36 µs, nearly all of it latency.
    """
    if ranks <= 1 and kind != "send":
        return 0.0
    steps = {"all_reduce": 2 * math.ceil(math.log2(ranks)) if ranks > 1 else 0,
             "reduce_scatter": math.ceil(math.log2(ranks)) if ranks > 1 else 0,
             "all_gather": math.ceil(math.log2(ranks)) if ranks > 1 else 0, "send": 1}[kind]
    share = {"all_reduce": ring_factor(ranks) if ranks > 1 else 0.0, "send": 1.0}.get(
        kind, (ranks - 1) / ranks)
    return latency_s * steps + _seconds(share * nbytes, rate)


def latency_crossover_bytes(ranks: int, rate: float, *, latency_s: float) -> float:
    """Message size below which an all-reduce's latency term exceeds its bandwidth term, bytes:
    ``2⌈log₂ n⌉·α·rate / (2(n−1)/n)``."""
    return 2 * math.ceil(math.log2(ranks)) * latency_s * rate / ring_factor(ranks)


def hidden_behind(comm: float, window: float, *, floor: float = 0.0,
                  slowdown: float = OVERLAP_SLOWDOWN) -> float:
    """Exposed time of a transfer ``comm`` that runs beside compute lasting ``window``, s.

    ``max(floor, comm − window) + σ · min(comm, window)``: what outlasts the window (at least
    ``floor``, the part nothing can run beside, e.g. the last gradient bucket), plus the
    slowdown ``σ`` the hidden part inflicts on the compute it shares the GPU with. Never more
    than ``comm`` for ``σ ≤ 1`` and ``floor ≤ comm``: overlapping never slows a step.
    """
    hidden = max(0.0, min(comm - floor, window))
    return comm - hidden + slowdown * hidden


def data_parallel_bytes(*, parameters: float, sharding: str, grad_bytes: float, microbatches: int,
                        param_bytes: float = PARAM_BYTES) -> tuple[float, float]:
    """Bytes per rank a data-parallel group reduces and gathers per step: (gradient, parameter).

    ``none``: all-reduce of ``grad_bytes · P`` (the parameters ``P`` of one model-parallel shard);
    ``optimizer`` (ZeRO-1): reduce-scatter of ``grad_bytes · P``, all-gather of ``param_bytes · P``;
    ``full`` (ZeRO-3, FSDP): per micro-batch, the parameters gathered for the forward and again for
    the backward (``2 · param_bytes · P``) and the gradients reduce-scattered (``grad_bytes · P``).
    Sizes before the ring factors ``collective_time`` applies (Rajbhandari et al. 2020, §5).
    """
    if sharding == "none":
        return grad_bytes * parameters, 0.0
    if sharding == "optimizer":
        return grad_bytes * parameters, param_bytes * parameters
    return microbatches * grad_bytes * parameters, microbatches * 2.0 * param_bytes * parameters


def output_layer_time(*, tokens: float, vocab: int, hidden: int, stages: int, rate: float) -> float:
    """Time one GPU of the last pipeline stage spends in the output layer in one step, s.

    ``3 · 2Vh · T · p / R``: the logits' matrix product (``2Vh`` FLOPs a token forward, twice that
    backward) for the ``T`` tokens of a step, done only by the ``N/p`` GPUs of the last stage
    (``R`` is the whole job's sustained FLOP/s, ``N`` GPUs' worth), so ``p`` times what an even
    spread over all GPUs would give. Whichever stage takes longest sets a pipeline's pace, and the
    last one holds this product besides its layers (``predict_run``); with ``p = 1`` every GPU
    does its share and nothing moves. The softmax and loss over ``V`` logits are memory-bound
    work of ``V`` elements a token, timed apart (``loss_time``).

    Source: Narayanan et al. (2021), eq. 3's ``V/(12 h l)`` term (the logits), placed on the last
    stage as Megatron-LM's pipeline places it (the ``post_process`` stage builds the output layer).
    """
    return _output_layer_time(real("tokens", tokens), whole("vocab", vocab, low=0, integral_only=False),
                              whole("hidden", hidden, low=1, integral_only=False),
                              whole("stages", stages, low=1, high=U16_MAX, integral_only=False),
                              real("rate", rate, low_open=True, unit="FLOP/s"))


def _output_layer_time(t: float, v: int, hh: int, p: int, r: float) -> float:
    """``output_layer_time``'s formula, for inputs the records have checked."""
    return 3.0 * 2.0 * v * hh * t * p / r


def loss_time(*, tokens: float, vocab: int, stages: int, gpus: int, memory_TBps: float,
              loss_bytes: float = LOSS_BYTES) -> float:
    """Time one GPU of the last pipeline stage spends on the loss over the vocabulary in one step, s.

    ``β · V · T · p / (N · BW_mem)``: the softmax and cross entropy read and write every logit of
    the step's ``T`` tokens, ``β`` bytes each (``LOSS_BYTES``, forward and backward), at memory speed;
    the last stage's ``N/p`` GPUs hold them, each its ``T/(d·c)`` tokens' ``V/t`` logits (``N = d·c·t·p``).
    Beside the output layer's ``6Vh`` FLOPs a token it is ``β/(6h)`` bytes per FLOP, ``β·η·P/(6h·BW_mem)``
    of that product's time: about 30% at ``h = 4,096`` on an H100, 7% at 16,384. Of a whole step that is
    about 2% for Llama 3 8B on eight H100 and 15% for a 125M model on an A100 (``h = 768``,
    ``V = 50,368``). No HBM bound (``memory_TBps`` infinite) or ``β = 0`` gives 0.
    """
    t = real("tokens", tokens)
    v = whole("vocab", vocab, low=0, integral_only=False)
    p = whole("stages", stages, low=1, high=U16_MAX, integral_only=False)
    n = whole("gpus", gpus, low=1, integral_only=False)
    bandwidth = real("memory_TBps", memory_TBps, low_open=True, allow_inf=True, unit="TB/s")
    beta = real("loss_bytes", loss_bytes, unit="bytes")
    return _loss_time(t, v, p, n, bandwidth, beta)


def _loss_time(t: float, v: int, p: int, n: int, bandwidth: float, beta: float) -> float:
    """``loss_time``'s formula, for inputs the records have checked: the bytes at memory speed (``elementwise_time``)."""
    return elementwise_time(nbytes=beta * v * t * p / n, passes=1.0, memory_TBps=bandwidth)


def bubble_time(work: float, *, stages: int, chunks: int) -> float:
    """Fill and drain of a pipeline: ``work · f/(1 − f)``, ``f = bubble_fraction(p, v·m)`` = ``(p − 1)/(v m)``
    of the busy time (Narayanan et al. 2021, §2.2; chapter 1's ``bubble_fraction``), s."""
    share = bubble_fraction(stages, chunks)
    return work * share / (1.0 - share)


def straggler_time(busy: float, *, gpus: int, cv: float) -> tuple[float, float]:
    """(waiting for the slowest rank, its speed): ``(1/speed − 1) · busy``, ``speed = 1/(1 + cv·slowest_of(N))``
    (chapter 2's ``straggler_tax``), s."""
    speed = 1.0 / (1.0 + cv * slowest_of(gpus))
    return (straggler_tax(speed=speed, gpus=gpus).step_time_factor - 1.0) * busy, speed


def kernel_layer_times(record: Gpu | None, *, hidden: int, ffn_hidden: int, vocab: int, seq_len: int, microbatch: int,
                       microbatches: int, tp: int, cp: int, heads: int | None, kv_share: float, gated_mlp: bool,
                       precision: str, linear_passes: float, attention_passes: float,
                       attention_kernel: str | None = None) -> tuple[float, float, float]:
    """(one layer's linear GEMMs, its attention products, the output layer) of one GPU in one step, s,
    from the kernels' own shapes (``kernels``): ``m`` micro-batches, each layer forward and backward
    (a second forward with full recomputation, ``linear_passes = 4``), the causal attention products
    ``attention_passes`` forward-equivalents (or, with ``attention_kernel``, FlashAttention's own forward and
    backward at its benchmark's rates, ``attention_table_time``), the output layer forward and backward
    at 16 bits."""
    if heads is None:
        raise ValueError("heads must be given when kernels is True (the attention kernels' shape), got None")
    shape = dict(seq_len=seq_len, microbatch=microbatch, tp=tp, cp=cp, gpu=record)
    fwd, bwd = layer_kernel_time(hidden=hidden, ffn_hidden=ffn_hidden, kv_heads_share=kv_share,
                                 gated_mlp=gated_mlp, precision=precision, **shape)
    if attention_kernel is None:
        attention = attention_passes * attention_kernel_time(hidden=hidden, heads=heads, **shape)
    else:
        attention = attention_table_time(hidden=hidden, heads=heads, kernel=attention_kernel,
                                         recompute=linear_passes > 3.0, **shape)
    out_f, out_b = logits_kernel_time(hidden=hidden, vocab=vocab, **shape) if vocab else (0.0, 0.0)
    return (microbatches * (fwd + bwd + (fwd if linear_passes > 3.0 else 0.0)),
            microbatches * attention, microbatches * (out_f + out_b))


# -- the step, part by part, from the records -----------------------------------------------------------

class StepFlops(NamedTuple):
    """The FLOPs of a step: per layer and token forward (``layer_flops``), passes, and the step's totals."""

    linear: float
    """Forward FLOPs of one layer's linear GEMMs per token."""
    attention: float
    """Forward FLOPs of one layer's attention products per token (full, as the rows count them)."""
    logits: float
    """Forward FLOPs of the output layer per token, ``2Vh``."""
    linear_passes: float
    """Forward-equivalents of the linear GEMMs a step runs: 3 (forward and backward), 4 with full recompute."""
    attention_passes: float
    """Forward-equivalents of the attention products: 3, plus 1 with selective recompute or FlashAttention
    (its backward recomputes the scores), 4 with full recompute."""
    model: float
    """Model FLOPs of the step, ``3 T (l (linear + attention) + logits)`` for ``T = B·s`` tokens."""
    hardware: float
    """Executed FLOPs of the step, the passes above applied."""


def predicted_flops(shape: ModelShape, layout: Layout, stack: Stack) -> StepFlops:
    """A step's FLOPs from the model's shape: ``layer_flops`` per layer and token, ``2Vh`` for the logits,
    the passes recomputation and FlashAttention add (Narayanan et al. 2021 eq. 3; Korthikanti et al. 2022)."""
    full = layout.recompute == "full"
    tokens = layout.global_batch * shape.seq_len
    linear, attn = layer_flops(hidden=shape.hidden, seq_len=shape.seq_len, ffn_hidden=shape.mlp,
                               kv_share=shape.kv_share, gated_mlp=stack.gated_mlp)
    logits = 2.0 * shape.vocab * shape.hidden
    model = 3.0 * tokens * (shape.layers * (linear + attn) + logits)
    extra_attn = 1.0 if (layout.recompute == "selective" or stack.flash_attention) else 0.0  # one more QKᵀ, PV
    linear_passes, attn_passes = (4.0 if full else 3.0), (4.0 if full else 3.0 + extra_attn)
    hardware = tokens * (shape.layers * (linear_passes * linear + attn_passes * attn) + 3.0 * logits)
    return StepFlops(linear, attn, logits, linear_passes, attn_passes, model, hardware)


def gemm_times(shape: ModelShape, layout: Layout, hardware: Hardware, stack: Stack, constants: Constants,
               flops: StepFlops) -> tuple[float, float, float]:
    """(one layer's linear GEMMs, its attention products, the output layer) on one GPU of a stage in a step, s.

    ``FLOPs · p / (N · peak · k · η(h))``: a stage's GPUs do ``p/N`` of the job's work for each of its
    layers, at ``kernel_share``'s ``η(h)`` of the 16-bit peak; ``k = 2 · fp8_efficiency`` for the
    linear GEMMs with FP8, else 1; attention and the output layer at 16 bits always (Megatron-Core's
    output layer is a ``ColumnParallelLinear``, outside ``fp8_autocast``). ``causal_attention`` halves
    the attention products (``kernels.CAUSAL_SHARE``); ``attention_kernel`` times them instead as
    FlashAttention's fused kernel at its benchmark's rates, ``m · attention_table_time`` for the ``m``
    micro-batches of one GPU; ``kernels`` times every GEMM from its shape (``kernel_layer_times``). With
    context parallelism (``cp > 1``) the attention, however timed, takes ``1 + κ`` times as long, ``κ`` the
    ``cp_attention_overhead`` of a ring's steps (``inputs.CP_ATTENTION_OVERHEAD``)."""
    ring = 1.0 + constants.cp_attention_overhead if layout.cp > 1 else 1.0
    if constants.kernels:
        linear, attention, logits = kernel_layer_times(
            hardware.gpu, hidden=shape.hidden, ffn_hidden=shape.mlp, vocab=shape.vocab, seq_len=shape.seq_len,
            microbatch=layout.microbatch, microbatches=layout.microbatches, tp=layout.tp, cp=layout.cp,
            heads=shape.heads, kv_share=shape.kv_share, gated_mlp=stack.gated_mlp, precision=stack.precision,
            linear_passes=flops.linear_passes, attention_passes=flops.attention_passes,
            attention_kernel=constants.attention_kernel)
        return linear, ring * attention, logits
    n, p, tokens = layout.gpus, layout.pp, layout.global_batch * shape.seq_len
    eta = _kernel_share(shape.hidden, constants.efficiency(hardware), constants.kernel_half_width)
    rate16 = n * hardware.peak * eta
    rate_linear = rate16 * (2.0 * constants.fp8_efficiency if stack.precision == "fp8" else 1.0)
    layer_linear = compute_time(flops=tokens * p * flops.linear_passes * flops.linear, rate=rate_linear)
    if constants.attention_kernel is not None:
        layer_attn = layout.microbatches * attention_table_time(
            hidden=shape.hidden, heads=shape.heads, seq_len=shape.seq_len, microbatch=layout.microbatch,
            tp=layout.tp, cp=layout.cp, gpu=hardware.gpu, kernel=constants.attention_kernel,
            recompute=flops.linear_passes > 3.0)
    else:
        layer_attn = compute_time(flops=tokens * p * flops.attention_passes * flops.attention, rate=rate16) * (
            CAUSAL_SHARE if constants.causal_attention else 1.0)
    output = _output_layer_time(tokens, shape.vocab, shape.hidden, p, rate16)
    return layer_linear, ring * layer_attn, output


def memory_time(shape: ModelShape, layout: Layout, hardware: Hardware, stack: Stack,
                constants: Constants = Constants()) -> float:
    """One layer's memory-bound work on one GPU in a step, s: ``passes · T/(d·c) · elementwise_bytes / BW_mem``
    (each GPU of a stage handles its replica's ``T/(d·c)`` tokens; 3 passes, 4 with full recompute), plus,
    with ``fp8_casts`` on an FP8 run, ``fp8_cast_time``."""
    s, c = shape.seq_len, layout.cp
    per_gpu_tokens = layout.global_batch * s / (layout.dp * c)
    ew = elementwise_bytes(hidden=shape.hidden, ffn_hidden=shape.mlp, seq_len=s // c if stack.flash_attention else s,
                           heads=shape.head_count, tp=layout.tp, sequence_parallel=bool(stack.sequence_parallel),
                           flash_attention=stack.flash_attention, gated_mlp=stack.gated_mlp)
    elementwise = elementwise_time(nbytes=per_gpu_tokens * ew, passes=4.0 if layout.recompute == "full" else 3.0,
                                   memory_TBps=hardware.memory_TBps)
    if constants.fp8_casts is None or stack.precision != "fp8":
        return elementwise
    return elementwise + fp8_cast_time(shape, layout, hardware, stack, constants.fp8_casts, per_gpu_tokens)


def fp8_cast_time(shape: ModelShape, layout: Layout, hardware: Hardware, stack: Stack, casts: str,
                  tokens: float) -> float:
    """One layer's FP8 casts on one GPU in a step, s: ``(T/(d·c) · per-token bytes + k · weight bytes) / BW_mem``
    with ``kernels.fp8_cast_bytes``; the weights cast once a step (``te``) or per micro-batch (``dynamic``,
    ``k = m``). A full-recompute forward casts its forward operands again: not counted, so there the
    casts are a lower bound."""
    per_token, weights = fp8_cast_bytes(hidden=shape.hidden, ffn_hidden=shape.mlp, tp=layout.tp,
                                        kv_heads_share=shape.kv_share, gated_mlp=stack.gated_mlp, casts=casts)
    times = layout.microbatches if casts == "dynamic" else 1
    return elementwise_time(nbytes=tokens * per_token + times * weights, passes=1.0, memory_TBps=hardware.memory_TBps)


class Rates(NamedTuple):
    """Bytes per second each group's collective gets: tensor, context, pipeline and data parallel."""

    tp: float
    cp: float
    pp: float
    dp: float


def wire_rates(layout: Layout, hardware: Hardware, constants: Constants) -> Rates:
    """Which wire each group uses, at its bus efficiency: the scale-up link while the group fits in one
    domain of ``D`` GPUs, else the scale-out link. The members of one data-parallel group inside one
    domain share its NICs: ``k = min(d·c, max(1, D/t))`` rings in parallel, at most the scale-up rate;
    a group that fits in one domain (always so when the whole job does) stays on the scale-up wire."""
    t, c, n, domain = layout.tp, layout.cp, layout.gpus, hardware.scale_up_gpus
    up = _link(hardware.scale_up_GBps, constants.bus_efficiency_up)
    out = _link(hardware.scale_out_GBps, constants.bus_efficiency_out)
    ranks = layout.dp * c
    k = min(ranks, max(1, domain // t))
    return Rates(up if t <= domain else out, up if t * c <= domain else out, up if n <= domain else out,
                 up if ranks <= k else min(up, k * out))


class Transfers(NamedTuple):
    """What a step sends, before any overlap, on one GPU, s (``layer_*``: per layer of its stage)."""

    layer_tp: float
    layer_cp: float
    pp: float
    grad: float
    gather: float
    parameters: float
    """Parameters of the whole model (``_parameter_total``)."""
    dp_bytes: float
    """Bytes per rank the data-parallel group reduces and gathers (``data_parallel_bytes``)."""


def model_parallel_transfers(shape: ModelShape, layout: Layout, rates: Rates,
                             latency_s: float) -> tuple[float, float, float]:
    """(one layer's tensor-parallel all-reduces, its context-parallel exchange, the pipeline sends) of a step, s.

    TP: ``m · (4, 6 with full recompute) all-reduces of 2·b·(s/c)·h bytes``; CP: ``m · (2, 3) · 2``
    exchanges of half the ``2·b·s·h·a_kv/(a·t)`` key/value bytes; PP: ``2·m·v`` sends of the activation
    over ``t`` (Narayanan et al. 2021 §3.2; Korthikanti et al. 2022)."""
    b, s, h, t, c, m = layout.microbatch, shape.seq_len, shape.hidden, layout.tp, layout.cp, layout.microbatches
    full = layout.recompute == "full"
    activation = ACTIVATION_BYTES * b * (s // c) * h
    layer_tp = m * (6 if full else 4) * collective_time(activation, t, rates.tp, latency_s=latency_s)
    kv = ACTIVATION_BYTES * b * s * h * shape.kv_share / t
    layer_cp = (m * (3 if full else 2) * 2 * collective_time(kv / 2, c, rates.cp, latency_s=latency_s)
                if c > 1 else 0.0)
    send = collective_time(activation / t, 2, rates.pp, kind="send", latency_s=latency_s) if layout.pp > 1 else 0.0
    return layer_tp, layer_cp, 2 * m * layout.virtual_stages * send


def data_parallel_transfers(shape: ModelShape, layout: Layout, stack: Stack, rate: float,
                            constants: Constants, ranks_per_node: int = 1) -> tuple[float, float, float, float]:
    """(gradient reduction, parameter gathering, the model's parameters, bytes per rank) of a step, s.

    The bytes of ``data_parallel_bytes`` for one model-parallel shard, ``P/(t·p)``, in rings of ``d·c``
    ranks (``ranks_per_node`` of them in one scale-up domain); one call per bucket: one all-reduce
    bucket per layer of a stage without sharding, one reduce-scatter and all-gather per layer (per
    layer and micro-batch with ``full``, whose gather runs twice), each timed by ``dp_collective``."""
    params = _parameter_total(shape.layers, shape.hidden, shape.seq_len, shape.vocab, shape.mlp, shape.kv_share,
                              stack.gated_mlp)
    m, ranks = layout.microbatches, layout.dp * layout.cp
    stage_layers = -(-shape.layers // layout.pp)
    grad_b, param_b = data_parallel_bytes(parameters=params / (layout.tp * layout.pp), sharding=stack.sharding,
                                          grad_bytes=constants.grad_bytes, microbatches=m)
    if stack.sharding == "none":
        return (dp_collective(grad_b, ranks, rate, "all_reduce", stage_layers, constants, ranks_per_node), 0.0,
                params, grad_b + param_b)
    calls = stage_layers * (m if stack.sharding == "full" else 1)
    grad = dp_collective(grad_b, ranks, rate, "reduce_scatter", calls, constants, ranks_per_node)
    gather = dp_collective(param_b, ranks, rate, "all_gather", calls * (2 if stack.sharding == "full" else 1),
                           constants, ranks_per_node)
    return grad, gather, params, grad_b + param_b


def dp_collective(nbytes: float, ranks: int, rate: float, kind: str, calls: int, constants: Constants,
                  ranks_per_node: int = 1) -> float:
    """A data-parallel collective of ``nbytes`` per rank sent in ``calls`` buckets, s.

    ``dp_latency=None``: ``collective_time`` with ``α·calls`` per step of its log-depth schedule (the
    chapter's model). ``"rings_trees"``: ``collectives.nccl_collective_time``, each bucket run as NCCL's
    tuner picks it, a ring of ``2(n−1)`` steps or a tree of ``⌊log₂ N⌋`` levels over ``N`` nodes, at
    NCCL 2.30.7's per-step latencies (``src/graph/tuning.cc``)."""
    if constants.dp_latency is None:
        return collective_time(nbytes, ranks, rate, kind=kind, latency_s=constants.latency_s * calls)
    return nccl_collective_time(nbytes, ranks, rate, kind=kind, ranks_per_node=ranks_per_node, calls=calls)


def transfers(shape: ModelShape, layout: Layout, hardware: Hardware, stack: Stack,
              constants: Constants) -> Transfers:
    """Every transfer of a step before overlap: ``model_parallel_transfers`` and ``data_parallel_transfers``
    on the wires of ``wire_rates``."""
    rates = wire_rates(layout, hardware, constants)
    tp, cp, pp = model_parallel_transfers(shape, layout, rates, constants.latency_s)
    per_node = min(layout.dp * layout.cp, max(1, hardware.scale_up_gpus // layout.tp))
    return Transfers(tp, cp, pp, *data_parallel_transfers(shape, layout, stack, rates.dp, constants, per_node))


class Stage(NamedTuple):
    """One pipeline stage's step, s; compared as a tuple, its ``work`` first (the slower stage sets the pace)."""

    work: float
    compute: float
    memory: float
    tp_comm: float
    cp_comm: float
    tp_exposed: float
    cp_exposed: float
    pp_exposed: float
    layers: int


def stage_time(layers_in: int, head: float, times: tuple[float, float, float], sent: Transfers,
               layout: Layout, stack: Stack, constants: Constants, head_memory: float = 0.0) -> Stage:
    """A stage of ``layers_in`` layers (``head``: the output layer's time on the last stage, else 0;
    ``head_memory``: the loss's memory-bound time there, ``loss_time``, else 0).

    ``work = compute + exposed TP + exposed CP + exposed PP``; ``compute`` = its layers' GEMMs and
    memory-bound work (``times``: one layer's linear GEMMs, attention products and memory-bound work).
    With ``overlap``: TP transfers hide behind their layers' linear GEMMs; pipeline sends behind the next
    micro-batch's work (one micro-batch's sends exposed); each minus ``tp_overlap``/``pp_overlap`` by
    hand. The context-parallel exchange hides behind the attention it overlaps (``hidden_behind``)."""
    layer_linear, layer_attn, layer_memory = times
    m, sigma = layout.microbatches, constants.overlap_slowdown
    gemm_linear = layers_in * layer_linear + head
    attention = layers_in * layer_attn
    memory = layers_in * layer_memory + head_memory
    compute = gemm_linear + attention + memory
    tp_comm, cp_comm, pp_comm = layers_in * sent.layer_tp, layers_in * sent.layer_cp, sent.pp
    if stack.overlap:  # the sends hide behind the next micro-batch's work, the TP transfers it waits for included
        tp_exp = hidden_behind(tp_comm, gemm_linear, slowdown=sigma)
        pp_exp = hidden_behind(pp_comm, (compute + tp_exp) * (m - 1) / m, floor=pp_comm / m, slowdown=sigma)
    else:
        tp_exp, pp_exp = tp_comm, pp_comm
    tp_exposed = (1.0 - constants.tp_overlap) * tp_exp
    cp_exposed = max(0.0, cp_comm - attention)
    pp_exposed = (1.0 - constants.pp_overlap) * pp_exp
    return Stage(compute + tp_exposed + cp_exposed + pp_exposed, compute, memory, tp_comm, cp_comm,
                 tp_exposed, cp_exposed, pp_exposed, layers_in)


def fsdp_exposed(pace: Stage, sent: Transfers, layout: Layout, stack: Stack, constants: Constants,
                 backward_share: float, linear_passes: float) -> float:
    """Exposed time of FSDP's (``sharding="full"``) transfers, which run inside every micro-batch, s.

    Without ``overlap``, all of them. With it, each layer's gather hides behind the previous layer's
    forward and again behind its backward with the reduce-scatter; each micro-batch's first gather
    has nothing before it (``hidden_behind`` per layer and micro-batch)."""
    if not stack.overlap:
        return sent.grad + sent.gather
    sigma, m = constants.overlap_slowdown, layout.microbatches
    per_layer_microbatch = m * pace.layers
    per_layer = pace.work / per_layer_microbatch  # a layer's work, the transfers it waits for included
    fwd, bwd = per_layer / linear_passes, per_layer * backward_share
    g_layer, r_layer = sent.gather / (2 * per_layer_microbatch), sent.grad / per_layer_microbatch
    return (per_layer_microbatch * (hidden_behind(g_layer, fwd, slowdown=sigma)
                                    + hidden_behind(g_layer + r_layer, bwd, slowdown=sigma))
            + m * (1 - sigma) * min(g_layer, fwd))


def gradient_exposed(pace: Stage, bubble: float, sent: Transfers, layout: Layout, shape: ModelShape,
                     stack: Stack, constants: Constants, backward_share: float, linear_passes: float) -> float:
    """Exposed time of the data-parallel transfers without FSDP, which follow the last micro-batch, s.

    Without ``overlap``, all of them. With it, the gradient buckets hide behind the last micro-batch's
    backward and the drain (the last layer's bucket exposed), the distributed optimizer's parameter
    all-gather behind the fill and the first forward (``hidden_behind``)."""
    if not stack.overlap:
        return sent.grad + sent.gather
    sigma, stage_layers = constants.overlap_slowdown, -(-shape.layers // layout.pp)
    last_mb = pace.work / layout.microbatches
    return (hidden_behind(sent.grad, last_mb * backward_share + bubble / 2,
                          floor=sent.grad / stage_layers, slowdown=sigma)
            + hidden_behind(sent.gather, last_mb / linear_passes + bubble / 2,
                            floor=sent.gather / stage_layers, slowdown=sigma))


def _prediction(step: float, pace: Stage, bubble: float, dp_exposed: float, straggler: tuple[float, float],
                flops: StepFlops, sent: Transfers, layout: Layout, shape: ModelShape, hardware: Hardware,
                stack: Stack) -> RunPrediction:
    """The ``RunPrediction`` of a step whose parts are known: the utilisations and rates from the FLOPs."""
    n = layout.gpus
    capacity = step * n * hardware.peak
    return RunPrediction(
        step_s=step, compute_s=pace.compute, bubble_s=bubble, tp_exposed_s=pace.tp_exposed,
        cp_exposed_s=pace.cp_exposed, pp_exposed_s=pace.pp_exposed, dp_exposed_s=dp_exposed,
        straggler_s=straggler[0], mfu=flops.model / capacity, hfu=flops.hardware / capacity,
        tflops_per_gpu=flops.hardware / (step * n) / 1e12, model_tflops_per_gpu=flops.model / (step * n) / 1e12,
        tokens_per_s=layout.global_batch * shape.seq_len / step, dp=layout.dp, microbatches=layout.microbatches,
        model_flops=flops.model, hardware_flops=flops.hardware, parameters=sent.parameters,
        tp_comm_s=pace.tp_comm, cp_comm_s=pace.cp_comm, pp_comm_s=sent.pp, dp_comm_s=sent.grad + sent.gather,
        slowest_speed=straggler[1], memory_s=pace.memory, dp_bytes=sent.dp_bytes, stack=stack,
    )


def predict_step(shape: ModelShape, layout: Layout, hardware: Hardware, stack: Stack = Stack(),
            constants: Constants = Constants()) -> RunPrediction:
    """One training step from the five records, as the sum of its parts, s::

        step   = work + bubble + exposed data-parallel time + straggler
        work   = the slower of the fullest stage (⌈l/p⌉ layers) and the last (⌊l/p⌋, the output
                 layer and the loss, loss_time): compute + exposed TP, CP and PP transfers  (stage_time)
        bubble = bubble_time(work)   ·   straggler = straggler_time(work + bubble)

    FSDP's exposed time (``fsdp_exposed``) joins the pipeline's work: its transfers run inside every
    micro-batch. The other data-parallel traffic follows the last micro-batch (``gradient_exposed``).
    ``dp_overlap`` hides a further share of either by hand."""
    check_fit(shape, layout, hardware, constants, stack)
    flops = predicted_flops(shape, layout, stack)
    linear, attention, output = gemm_times(shape, layout, hardware, stack, constants, flops)
    times = (linear, attention, memory_time(shape, layout, hardware, stack, constants))
    sent = transfers(shape, layout, hardware, stack, constants)
    l, p, o_dp, fsdp = shape.layers, layout.pp, constants.dp_overlap, stack.sharding == "full"
    loss = _loss_time(layout.global_batch * shape.seq_len, shape.vocab, p, layout.gpus, hardware.memory_TBps,
                      constants.loss_bytes)
    pace = max(stage_time(-(-l // p), 0.0, times, sent, layout, stack, constants),
               stage_time(l // p, output, times, sent, layout, stack, constants, head_memory=loss))
    backward_share = (3.0 if layout.recompute == "full" else 2.0) / flops.linear_passes
    fsdp_exp = fsdp_exposed(pace, sent, layout, stack, constants, backward_share, flops.linear_passes) if fsdp else 0.0
    dp_in_work = (1.0 - o_dp) * fsdp_exp if fsdp else 0.0
    bubble = bubble_time(pace.work + dp_in_work, stages=p, chunks=layout.virtual_stages * layout.microbatches)
    dp_exp = fsdp_exp if fsdp else gradient_exposed(pace, bubble, sent, layout, shape, stack, constants,
                                                    backward_share, flops.linear_passes)
    dp_exposed = (1.0 - o_dp) * dp_exp
    work = pace.work + dp_in_work
    straggler = straggler_time(work + bubble, gpus=layout.gpus, cv=constants.straggler_cv)
    step = work + bubble + (0.0 if fsdp else dp_exposed) + straggler[0]
    return _prediction(step, pace, bubble, dp_exposed, straggler, flops, sent, layout, shape, hardware, stack)


def _stack_with(stack: Stack | None, **switches: object) -> Stack:
    """``stack`` (default ``Stack()``) with each switch given (not ``None``) put in; checked where made."""
    given = {k: x for k, x in switches.items() if x is not None}
    if stack is None:
        return Stack(**given)
    if not isinstance(stack, Stack):
        raise ValueError(f"stack must be a Stack or None, got {stack!r}")
    return dataclasses.replace(stack, **given) if given else stack


def predict_run(*, layers: int, hidden: int, seq_len: int, vocab: int, global_batch: int, microbatch: int,
                gpus: int, tp: int, pp: int, peak_tflops: float | None = None, scale_up_GBps: float | None = None,
                scale_out_GBps: float | None = None, virtual_stages: int = 1, recompute: str = "none", cp: int = 1,
                heads: int | None = None, kv_heads: int | None = None, ffn_hidden: int | None = None,
                scale_up_gpus: int | None = None, stack: Stack | None = None, precision: str | None = None,
                sharding: str | None = None, overlap: bool | None = None, flash_attention: bool | None = None,
                gated_mlp: bool | None = None, sequence_parallel: bool | str | None = None,
                memory_TBps: float | None = None, kernel_efficiency: float = KERNEL_EFFICIENCY,
                hopper_kernel_efficiency: float = KERNEL_EFFICIENCY_HOPPER,
                kernel_half_width: float = KERNEL_HALF_WIDTH, bus_efficiency_up: float = BUS_EFFICIENCY_UP,
                bus_efficiency_out: float = BUS_EFFICIENCY_OUT, latency_s: float = LATENCY_S,
                fp8_efficiency: float = FP8_GEMM_EFFICIENCY, overlap_slowdown: float = OVERLAP_SLOWDOWN,
                tp_overlap: float = 0.0, pp_overlap: float = 0.0, dp_overlap: float = DP_OVERLAP,
                straggler_cv: float = STRAGGLER_CV, grad_bytes: float = GRAD_BYTES,
                gpu: str | Gpu | None = None, kernels: bool = False, causal_attention: bool = True,
                attention_kernel: str | None = None, fp8_casts: str | None = None,
                dp_latency: str | None = None, loss_bytes: float = LOSS_BYTES,
                cp_attention_overhead: float = CP_ATTENTION_OVERHEAD) -> RunPrediction:
    """Predict one training step of a dense transformer from keywords a reader can type by hand.

    The keywords make the five records of ``inputs``, each checked where it is made, and ``predict_step``
    sums the step from them (the module's docstring tells each part)::

        ModelShape(layers, hidden, seq_len, vocab, ffn_hidden, heads, kv_heads)
        Layout(gpus, tp, pp, global_batch, microbatch, cp, virtual_stages, recompute)
        Hardware.of(gpu, peak_tflops, scale_up_GBps, scale_out_GBps, scale_up_gpus, memory_TBps)
        Stack: ``stack`` (default Megatron-LM 2021's) with each switch given as a keyword put in
        Constants(kernel_efficiency, …, grad_bytes, causal_attention, kernels, attention_kernel, fp8_casts,
                  dp_latency, loss_bytes, cp_attention_overhead)

    A number given wins over the ``gpu`` record's; with a ``gpu`` whose record names its reference system
    (every part of ``gpus.GPUS``), ``scale_out_GBps`` may be left out: its NIC rate per GPU (50 GB/s, a
    400 Gbps port, on H100, H200, B200 and GB200; 25 on A100). Times in s, link rates in GB/s per GPU and
    direction, peaks in TFLOP/s. ``ValueError`` names the argument and its range for impossible input.
    """
    return predict_step(
        ModelShape(layers, hidden, seq_len, vocab, ffn_hidden, heads, kv_heads),
        Layout(gpus, tp, pp, global_batch, microbatch, cp, virtual_stages, recompute),
        Hardware.of(gpu, peak_tflops=peak_tflops, scale_up_GBps=scale_up_GBps, scale_out_GBps=scale_out_GBps,
                    scale_up_gpus=scale_up_gpus, memory_TBps=memory_TBps),
        _stack_with(stack, precision=precision, sharding=sharding, overlap=overlap, flash_attention=flash_attention,
                    gated_mlp=gated_mlp, sequence_parallel=sequence_parallel),
        Constants(kernel_efficiency, hopper_kernel_efficiency, kernel_half_width, bus_efficiency_up,
                  bus_efficiency_out, latency_s, fp8_efficiency, overlap_slowdown, tp_overlap, pp_overlap,
                  dp_overlap, straggler_cv, grad_bytes, causal_attention, kernels, attention_kernel, fp8_casts,
                  dp_latency, loss_bytes, cp_attention_overhead))


def _parameter_total(l: int, h: int, s: int, vocab: int, f: int, kv_share: float, gated: bool) -> float:
    """Parameters with the layer's own shape: ``l(h(h + 2h_kv) + h² + n·h·f + 13h) + (V + s)h``;
    Narayanan et al.'s eq. 2 when ``f = 4h``, ``h_kv = h`` and ``n = 2``."""
    return l * (h * (h + 2.0 * h * kv_share) + h * h + (3.0 if gated else 2.0) * h * f + 13.0 * h) \
        + (vocab + s) * h

# -- calibration ---------------------------------------------------------------------------------

CONSTANTS = ("kernel_efficiency", "hopper_kernel_efficiency", "kernel_half_width", "bus_efficiency_up", "bus_efficiency_out",
             "latency_s", "fp8_efficiency", "overlap_slowdown", "tp_overlap", "pp_overlap", "dp_overlap",
             "straggler_cv", "cp_attention_overhead")
"""The constants of ``predict_run`` that ``calibrate`` can solve for."""

METRICS = ("step_s", "iteration_s", "mfu", "hfu", "pct_peak", "tflops_per_gpu", "model_tflops_per_gpu",
           "tokens_per_s")
"""The predicted quantities a measured figure can be compared with."""


@dataclass(frozen=True)
class Calibration:
    """One calibrated constant and the measured row of ``measurements.csv`` it was fitted on.

    Only the constant, its rounded default, the row's id and the search range
    live here; what was measured, the run's configuration, the source and the
    place in it are read from the CSV (``clustermath.validation.measurements``,
    loaded on first use), so each fact has one place.
    """

    constant: str
    value: float
    """The default ``predict_run`` uses (the fit, rounded)."""
    row: str
    """The id of the measured row in ``measurements.csv``."""
    low: float = 0.0
    high: float = 1.0

    @property
    def _data(self) -> Mapping[str, Any]:
        from . import measurements
        return measurements.load_measurements().loc[self.row]

    @property
    def metric(self) -> str:
        """What is compared: a ``METRICS`` name (a throughput row, solved with ``calibrate``);
        ``busbw_share``, a collective's bus bandwidth over its link rate (the constant itself);
        ``step_gain``, the step time saved by evicting stragglers (divided by ``slowest_of(ranks)``); or
        ``latency``, a small-message all-reduce's time, all of it latency (divided by its 2⌈log₂ n⌉ steps)."""
        family = self._data["family"]
        if family == "collectives":
            return "latency" if self._data["unit"] == "us" else "busbw_share"
        if family == "stragglers":
            return "step_gain"
        from . import measurements
        return measurements.comparable(self.row)[0]

    @property
    def measured(self) -> float:
        """The row's figure in the unit of ``metric`` (a share as a fraction)."""
        data = self._data
        if data["family"] == "collectives" and data["unit"] == "us":
            return float(data["value"]) * 1e-6
        if data["family"] == "collectives":
            return float(data["value"]) / float(data["link_GBps"])
        if data["family"] == "stragglers":
            return float(data["value"]) / 100.0
        from . import measurements
        return measurements.comparable(self.row)[1]

    @property
    def run(self) -> dict[str, Any]:
        """``predict_run`` arguments of a throughput row (empty for the direct ones)."""
        if self._data["family"] != "throughput":
            return {}
        from . import measurements
        return measurements.run_config(self.row, accepts=predict_run)

    @property
    def ranks(self) -> int:
        """Job size of a ``step_gain`` row, ranks of a ``latency`` row (0 otherwise)."""
        if self.metric == "latency":
            return int(self._data["ranks"])
        gpus = self._data["gpus"]
        return int(gpus) if self.metric == "step_gain" else 0

    @property
    def source(self) -> str:
        """Key in ``book/references.bib``."""
        return str(self._data["key"])

    @property
    def where(self) -> str:
        """Where in the source the figure is printed."""
        return str(self._data["where"])


CALIBRATION: tuple[Calibration, ...] = (
    Calibration("kernel_efficiency", KERNEL_EFFICIENCY, "nar21-t2-04", low=0.05, high=1.0),
    Calibration("kernel_half_width", KERNEL_HALF_WIDTH, "nar21-t1-01", low=0.0, high=20_000.0),
    Calibration("bus_efficiency_up", BUS_EFFICIENCY_UP, "nccl1455-ring-8"),
    Calibration("bus_efficiency_out", BUS_EFFICIENCY_OUT, "nccl1221-4node"),
    Calibration("latency_s", LATENCY_S, "nccl1244-latency", low=0.0, high=1e-3),
    Calibration("straggler_cv", STRAGGLER_CV, "ms24-evict-gain"),
    Calibration("hopper_kernel_efficiency", KERNEL_EFFICIENCY_HOPPER, "mosaic23-h100-70b-s2048-g64",
                low=0.05, high=1.0),
    Calibration("cp_attention_overhead", CP_ATTENTION_OVERHEAD, "nemo24-llama3-8b-8", low=0.0, high=5.0),
)
"""The rows the defaults were fitted on, by id in ``measurements.csv``: four of the throughput
rows (two Ampere, two Hopper), three of the 15 collective rows (the two largest-message rings, one per wire, and the only
small-message row), one of the 13 straggler rows (at most a fifth of each family), each chosen
for what it isolates. Six were chosen before any validation error was looked at; the seventh,
``hopper_kernel_efficiency``, was not: the constant was added after the H100 rows were seen to come
out fast at the Ampere value, and only its row was then picked by the Ampere rule (chapter 6 says
so, and reports leave-one-source-out, which refits it without the rows it was fitted near). The eighth,
``cp_attention_overhead``, was not either: it was added after every context-parallel row and case was
seen to come out fast, and its row is the context-parallel row at 8,192 tokens or fewer whose step is
most attention.
``calibrate_defaults`` refits them all."""


@dataclass(frozen=True)
class Calibrated:
    """The value of one constant at which ``predict_run`` meets a measured figure."""

    constant: str
    value: float
    """The solution, clipped to ``[low, high]``."""
    at_bound: bool
    """No value inside the range meets the figure; ``value`` is the nearer bound."""
    predicted: float
    """The metric ``predict_run`` gives at ``value`` (the measured figure itself for the direct ones)."""


def calibrate(constant: str, *, metric: str, measured: float, run: Mapping[str, Any],
              low: float = 0.0, high: float = 1.0, **constants: Any) -> Calibrated:
    """Solve for one of ``predict_run``'s constants so that ``metric`` equals ``measured``.

    Bisection on ``[low, high]`` (60 halvings): the metric must move
    monotonically with the constant, as MFU, HFU, TFLOP/s and tokens/s do
    with ``kernel_efficiency``, the bus efficiencies and the overlaps (and
    ``iteration_s`` the other way; all of them the other way with
    ``kernel_half_width`` and ``straggler_cv``). A bound at which the metric
    equals the figure exactly is the solution. When the figure lies outside
    what the range can reach, the nearer bound is returned with ``at_bound``
    (``low`` when both are as near, as when the metric does not depend on the
    constant).
    ``constants`` fixes the others (default: their calibrated values); a value
    of ``constant`` in ``run`` or ``constants`` is overridden.
    """
    one_of("constant", constant, CONSTANTS)
    one_of("metric", metric, METRICS)
    target = real("measured", measured, low_open=True)
    lo = real("low", low)
    hi = real("high", high, low=lo, low_open=True)

    def gap(x: float) -> float:
        return getattr(predict_run(**{**run, **constants, constant: x}), metric) - target

    g_lo, g_hi = gap(lo), gap(hi)
    if g_lo == 0.0 or g_hi == 0.0:  # a bound meets the figure exactly
        x, bound = (lo if g_lo == 0.0 else hi), False
    elif (g_lo < 0.0) != (g_hi < 0.0):
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            g_mid = gap(mid)
            if (g_mid < 0.0) == (g_lo < 0.0):
                lo, g_lo = mid, g_mid
            else:
                hi = mid
        x, bound = 0.5 * (lo + hi), False
    else:
        x, bound = (lo if abs(g_lo) <= abs(g_hi) else hi), True
    return Calibrated(constant, x, bound, getattr(predict_run(**{**run, **constants, constant: x}), metric))


def calibrate_defaults(rows: tuple[Calibration, ...] = CALIBRATION, *, sweeps: int = 40) -> dict[str, Calibrated]:
    """Refit every constant of ``rows`` from its measured figure, all at once.

    The direct ones first (a bus efficiency is its row's ratio; the straggler
    spread is the step gain over ``slowest_of(ranks)``), then the solved ones
    in turn, each with the others at their latest values, until a sweep
    moves none of them by more than 1e-12 (Gauss–Seidel; at most ``sweeps``).
    """
    fixed: dict[str, float] = {}
    result: dict[str, Calibrated] = {}
    for row in rows:
        if row.metric == "busbw_share":
            fixed[row.constant] = row.measured
        elif row.metric == "step_gain":
            fixed[row.constant] = row.measured / slowest_of(row.ranks)
        elif row.metric == "latency":
            fixed[row.constant] = row.measured / (2 * math.ceil(math.log2(row.ranks)))
        else:
            continue
        result[row.constant] = Calibrated(row.constant, fixed[row.constant], False, row.measured)
    solved = [row for row in rows if row.run]
    for row in solved:
        fixed[row.constant] = row.value
    fits = refit_solved([(row, row.run) for row in solved], fixed, sweeps=whole("sweeps", sweeps, low=1))
    return {**result, **fits}


def refit_solved(solved: Sequence[tuple[Calibration, Mapping[str, Any]]], fixed: dict[str, float], *,
                 sweeps: int = 40, tolerance: float = 1e-12) -> dict[str, Calibrated]:
    """Gauss–Seidel over the solved constants: each (calibration row, run) of ``solved`` refits the row's
    constant on that run (``calibrate``; the run is the row's own, ``Calibration.run``, or a switch's
    variant of it) with every other constant at its latest value in ``fixed``, which is updated in place;
    sweep after sweep until one moves none by more than ``tolerance`` (a negative one: exactly ``sweeps``),
    at most ``sweeps``. Returns each constant's last fit. Shared by ``calibrate_defaults``, leave-one-source-out
    (``holdout``) and the switches' refits (``ablation``)."""
    fits: dict[str, Calibrated] = {}
    for _ in range(sweeps):
        moved = 0.0
        for row, run in solved:
            others = {k: v for k, v in fixed.items() if k != row.constant}
            fit = calibrate(row.constant, metric=row.metric, measured=row.measured, run=dict(run),
                            low=row.low, high=row.high, **others)
            moved = max(moved, abs(fit.value - fixed[row.constant]))
            fixed[row.constant] = fit.value
            fits[row.constant] = fit
        if moved <= tolerance:
            break
    return fits
