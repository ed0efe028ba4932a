"""Chapter 6: the book's models composed into one prediction of a dense transformer's training step.

``predict_run`` takes a published run's shape (model, batch, parallelism,
hardware) and returns its step time split into the terms the earlier chapters
model one at a time:

* the FLOPs of a step, model FLOPs apart from hardware FLOPs (Narayanan et al.
  2021, eq. 3; Korthikanti et al. 2022, appendix A), at a kernel efficiency
  that grows with the model's width (``kernel_share``);
* the pipeline bubble with interleaving, ``(p − 1)/(v·m)`` (Narayanan et al.
  2021, §2.2), through chapter 1's ``bubble_fraction``;
* the tensor-parallel all-reduces on the scale-up wire, the context-parallel
  key/value exchange, the pipeline sends and the data-parallel gradient
  all-reduce across the fabric, each a ring at chapter 1's ``ring_factor``
  and a measured bus-bandwidth efficiency, minus the share hidden behind compute;
* the straggler tax of chapter 2's ``straggler_tax``, for the slowest of the
  job's ranks.

Every calibrated constant is a keyword argument whose default is its calibrated
value; ``CALIBRATION`` holds the measured rows each was fitted on,
``calibrate`` solves for one constant and ``calibrate_defaults`` refits them
all, so the defaults can be reproduced (and are, in ``tests/test_predict_run.py``). Times in seconds, bandwidths in GB/s per GPU and
direction (1 GB = 1e9 bytes), FLOP rates in TFLOP/s (1e12).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any, Mapping

from ..peak import U16_MAX, bubble_fraction, ring_factor
from ..reliability import straggler_tax
from ..validate import one_of, probability, real, whole

__all__ = [
    "BUS_EFFICIENCY_OUT", "BUS_EFFICIENCY_UP", "CALIBRATION", "CONSTANTS", "Calibrated", "Calibration",
    "DP_OVERLAP", "GRAD_BYTES", "KERNEL_EFFICIENCY", "KERNEL_HALF_WIDTH", "METRICS", "RECOMPUTE",
    "RunPrediction", "STRAGGLER_CV", "calibrate", "calibrate_defaults", "hardware_flops", "kernel_share",
    "model_flops", "parameter_count", "predict_run", "slowest_of",
]

RECOMPUTE = ("none", "selective", "full")
"""Activation recomputation: none; the attention scores only (Korthikanti et al. 2022); every layer."""

ACTIVATION_BYTES = 2
"""Bytes per activation element on the wire (BF16/FP16)."""

# -- calibrated constants (see CALIBRATION for the rows) -----------------------------------

KERNEL_EFFICIENCY = 0.638
"""Share of peak the kernels of a very wide model sustain when nothing waits (fitted with
KERNEL_HALF_WIDTH: CALIBRATION[0] and [1])."""
KERNEL_HALF_WIDTH = 954.0
"""Hidden size at which the kernels reach half of ``KERNEL_EFFICIENCY`` (Hockney's n½;
fitted with KERNEL_EFFICIENCY: CALIBRATION[0] and [1])."""
BUS_EFFICIENCY_UP = 0.82
"""Ring all-reduce bus bandwidth over the scale-up link rate (CALIBRATION[2])."""
BUS_EFFICIENCY_OUT = 0.80
"""Ring all-reduce bus bandwidth over the scale-out (NIC) rate (CALIBRATION[3])."""
DP_OVERLAP = 0.0
"""Share of the data-parallel all-reduce hidden behind compute (fitted: CALIBRATION[4], at its bound)."""
STRAGGLER_CV = 0.0018
"""Coefficient of variation of one rank's step time (CALIBRATION[5])."""
GRAD_BYTES = 4
"""Bytes per gradient element in the data-parallel reduction: FP32 (not fitted; see ``predict_run``)."""


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
    h = real("hidden", hidden, low_open=True)
    eta = probability("efficiency", efficiency, low_open=True)
    half = real("half_width", half_width)
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
    """Hardware FLOPs per GPU at ``kernel_efficiency`` × peak, s."""
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


def predict_run(*, layers: int, hidden: int, seq_len: int, vocab: int, global_batch: int,
                microbatch: int, gpus: int, tp: int, pp: int, peak_tflops: float,
                scale_up_GBps: float, scale_out_GBps: float, virtual_stages: int = 1,
                recompute: str = "none", cp: int = 1, heads: int | None = None,
                kv_heads: int | None = None, scale_up_gpus: int = 8,
                kernel_efficiency: float = KERNEL_EFFICIENCY,
                kernel_half_width: float = KERNEL_HALF_WIDTH,
                bus_efficiency_up: float = BUS_EFFICIENCY_UP,
                bus_efficiency_out: float = BUS_EFFICIENCY_OUT,
                tp_overlap: float = 0.0, pp_overlap: float = 0.0, dp_overlap: float = DP_OVERLAP,
                straggler_cv: float = STRAGGLER_CV, grad_bytes: float = GRAD_BYTES) -> RunPrediction:
    """Predict one training step of a dense transformer from its shape, parallelism and hardware.

    Inputs: ``l = layers``, ``h = hidden``, ``s = seq_len``, ``V = vocab``,
    ``B = global_batch`` and ``b = microbatch`` (sequences), ``N = gpus``,
    ``t = tp``, ``p = pp``, ``c = cp`` (context parallel), ``v =
    virtual_stages``; ``peak_tflops`` per GPU (dense, in the precision the
    run computes in); ``scale_up_GBps`` and ``scale_out_GBps`` per GPU and
    direction (NVLink; the GPU's NIC); ``scale_up_gpus`` GPUs share one
    scale-up domain. Derived: ``d = N/(t·p·c)`` data-parallel replicas and
    ``m = B/(b·d)`` micro-batches per pipeline. The parts of a step::

        compute   = F_hw / (N · peak · η_∞ · h/(h + h½))     F_hw: hardware_flops; kernel_share
        tp_comm   = m · (l/p) · n_ar · 2(t−1)/t · 2 b (s/c) h / BW_tp
                    n_ar = 4 all-reduces per layer and micro-batch (2 forward, 2 backward),
                    6 with full recompute
        cp_comm   = m · (l/p) · (2 + full) · 2 (c−1)/c · 2 b s h_kv / t / BW_cp
                    K and V gathered forward, their gradients reduce-scattered backward
        pp_comm   = 2 m v · 2 b (s/c) h / t / BW_pp          one send each way per micro-batch and chunk
        dp_comm   = 2(dc − 1)/(dc) · grad_bytes · P/(t·p) / BW_dp      P: parameter_count
        work      = compute + (1 − o_tp) tp_comm + max(0, cp_comm − attention) + (1 − o_pp) pp_comm
        bubble    = work · f/(1 − f) = work · (p − 1)/(v m),  f = bubble_fraction(p, v·m)
        straggler = (1/speed − 1) (work + bubble),  speed = 1/(1 + cv · slowest_of(N))   (straggler_tax)
        step      = work + bubble + (1 − o_dp) dp_comm + straggler
        MFU = F_model / (step · N · peak),   HFU = F_hw / (step · N · peak)

    ``attention`` is the compute time of the attention-score FLOPs, behind
    which the context-parallel exchange runs; ``h_kv = h · kv_heads/heads``
    (grouped-query attention; ``h`` when either is not given).

    Ranks are laid out tensor-parallel first, then context-parallel,
    data-parallel, and pipeline stages outermost (Megatron-LM's order). A
    group's wire ``BW`` is the scale-up link (``η_up`` × ``scale_up_GBps``)
    when the group fits in one scale-up domain (TP: ``t`` GPUs; CP: ``t·c``;
    PP and DP: the whole job) and the scale-out NIC (``η_out`` ×
    ``scale_out_GBps``) otherwise. The ``k = min(d·c, domain/t)`` members of
    a data-parallel group that share a domain run ``k`` rings side by side,
    one through each member's NIC: ``BW_dp = min(k · η_out · BW_out, η_up ·
    BW_up)``. An infinite bandwidth makes a transfer take no time.

    Calibrated constants (defaults; ``CALIBRATION`` names the rows,
    ``calibrate_defaults`` refits them):

    * ``kernel_efficiency`` (η_∞) 0.638 and ``kernel_half_width`` (h½) 954,
      together: row ``nar21-t2-04`` (Narayanan et al. 2021, Table 2, the
      529.6 B model with PTD-P on 560 GPUs, 171 TFLOP/s per GPU: of the
      throughput rows, the one whose predicted step is most purely compute,
      90%, at h = 20,480) and row ``nar21-t1-01`` (Table 1, the 1.7 B model
      on 32 GPUs, 137 TFLOP/s per GPU: the narrowest model, h = 2,304).
    * ``bus_efficiency_up`` 0.82: row ``nccl1455-ring-8``, 8 × H100, NCCL
      ring all-reduce, 370 GB/s bus bandwidth over 450 GB/s NVLink.
    * ``bus_efficiency_out`` 0.80: row ``nccl1221-4node``, 4 nodes of 8 × H100
      on 8 × 400 Gbps RoCE, 320 GB/s bus bandwidth over 400 GB/s.
    * ``dp_overlap`` 0: row ``ms24-t2-12`` (MegaScale, Jiang et al. 2024,
      Table 2: Megatron-LM on 12,288 GPUs, MFU 41.2%, the row with the
      largest data-parallel share). The row asks for less than nothing
      hidden, so the constant sits at its bound.
    * ``straggler_cv`` 0.0018: row ``ms24-evict-gain`` (MegaScale §6.3:
      evicting the slow hosts of a >10,000-GPU job gained about 0.7%):
      ``0.007 / slowest_of(12,288)``.

    Not fitted: ``tp_overlap = pp_overlap = 0`` (Megatron-LM, the stack of
    most published rows, waits for these transfers; a stack that overlaps
    them, as MegaScale §3.2 does, passes its share); ``grad_bytes = 4``
    (Megatron-LM reduces BF16 gradients in FP32,
    ``accumulate_allreduce_grads_in_fp32``).

    MFU and HFU never exceed ``kernel_share(h)``, hence never ``kernel_efficiency``;
    a single stage has no bubble; unlimited bandwidth leaves compute, bubble
    and stragglers only.

    Raises ``ValueError`` naming the argument and its range for impossible
    input: counts below 1, ``gpus`` not a multiple of ``tp·pp·cp``,
    ``global_batch`` not a multiple of ``microbatch·dp``, ``virtual_stages >
    1`` with ``pp = 1``, fewer layers than stages, ``seq_len`` not a multiple
    of ``cp``, ``heads`` that ``hidden`` or ``tp`` cannot share, efficiencies
    outside (0, 1], overlaps outside [0, 1], an unknown ``recompute``; and,
    because chapter 1's ring and bubble models take 16-bit counts, a
    data-parallel group or ``v·m`` above 65,535.

    Sources: Narayanan et al. (2021) eqs. 2–3 and §§2.2, 3.2, 4.1; Korthikanti
    et al. (2022) appendix A; chapter 1 (``ring_factor``, ``bubble_fraction``);
    chapter 2 (``straggler_tax``); Hockney and Jesshope (1981) for ``h½``.
    """
    l, h, s, vocab_ = _shape(layers, hidden, seq_len, vocab)
    batch = whole("global_batch", global_batch, low=1, integral_only=False)
    b = whole("microbatch", microbatch, low=1, integral_only=False)
    n = whole("gpus", gpus, low=1, integral_only=False)
    t = whole("tp", tp, low=1, high=U16_MAX, integral_only=False)
    p = whole("pp", pp, low=1, high=U16_MAX, integral_only=False)
    c = whole("cp", cp, low=1, high=U16_MAX, integral_only=False)
    v = whole("virtual_stages", virtual_stages, low=1, integral_only=False)
    one_of("recompute", recompute, RECOMPUTE)
    domain = whole("scale_up_gpus", scale_up_gpus, low=1, integral_only=False)
    peak = real("peak_tflops", peak_tflops, low_open=True, unit="TFLOP/s") * 1e12
    up_bw = real("scale_up_GBps", scale_up_GBps, low_open=True, allow_inf=True, unit="GB/s")
    out_bw = real("scale_out_GBps", scale_out_GBps, low_open=True, allow_inf=True, unit="GB/s")
    eta = kernel_share(h, efficiency=probability("kernel_efficiency", kernel_efficiency, low_open=True),
                       half_width=real("kernel_half_width", kernel_half_width))
    eta_up = probability("bus_efficiency_up", bus_efficiency_up, low_open=True)
    eta_out = probability("bus_efficiency_out", bus_efficiency_out, low_open=True)
    o_tp = probability("tp_overlap", tp_overlap)
    o_pp = probability("pp_overlap", pp_overlap)
    o_dp = probability("dp_overlap", dp_overlap)
    cv = real("straggler_cv", straggler_cv)
    g_bytes = real("grad_bytes", grad_bytes, low_open=True, unit="bytes")

    model_parallel = t * p * c
    if n % model_parallel:
        raise ValueError(f"gpus must be a multiple of tp·pp·cp = {model_parallel:,}, got {gpus!r}")
    d = n // model_parallel
    if d * c > U16_MAX:
        raise ValueError(f"gpus must keep the data-parallel group gpus/(tp·pp) within 1..{U16_MAX:,} "
                         f"ranks, got {gpus!r} ({d * c:,} ranks)")
    if batch % (b * d):
        raise ValueError(f"global_batch must be a multiple of microbatch·dp = {b * d:,} sequences, "
                         f"got {global_batch!r}")
    m = batch // (b * d)
    if v > 1 and p == 1:
        raise ValueError(f"virtual_stages must be 1 when pp = 1 (interleaving needs a pipeline), "
                         f"got {virtual_stages!r}")
    if v * m > U16_MAX:
        raise ValueError(f"virtual_stages must keep virtual_stages·microbatches within 1..{U16_MAX:,}, "
                         f"got {virtual_stages!r} ({v * m:,})")
    if l < p:
        raise ValueError(f"layers must be at least pp = {p:,} (a layer per stage), got {layers!r}")
    if s % c:
        raise ValueError(f"seq_len must be a multiple of cp = {c:,} tokens, got {seq_len!r}")
    if heads is None:
        if kv_heads is not None:
            raise ValueError(f"kv_heads must be None when heads is None, got {kv_heads!r}")
        kv_share = 1.0
    else:
        a = whole("heads", heads, low=1, integral_only=False)
        if h % a or a % t:
            raise ValueError(f"heads must divide hidden = {h:,} and be a multiple of tp = {t:,}, got {heads!r}")
        a_kv = a if kv_heads is None else whole("kv_heads", kv_heads, low=1, high=a, integral_only=False)
        if a % a_kv:
            raise ValueError(f"kv_heads must divide heads = {a:,}, got {kv_heads!r}")
        kv_share = a_kv / a

    # the work
    f_model, f_hw = _flops(batch, s, l, h, vocab_, recompute)
    rate = n * peak * eta
    compute = f_hw / rate
    attention = 12.0 * batch * s * s * h * l / rate

    # the wires
    up, out = _link(up_bw, eta_up), _link(out_bw, eta_out)
    tp_rate = up if t <= domain else out
    cp_rate = up if t * c <= domain else out
    pp_rate = up if n <= domain else out
    # the members of one data-parallel group inside one domain share its NICs: k rings in parallel;
    # a group that fits in one domain (always so when the whole job does) stays on the scale-up wire
    k = min(d * c, max(1, domain // t))
    dp_rate = up if d * c <= k else min(up, k * out)
    full = recompute == "full"
    per_layer_microbatch = m * (l / p)
    activation = ACTIVATION_BYTES * b * (s // c) * h
    tp_comm = _seconds(per_layer_microbatch * (6 if full else 4) * ring_factor(t) * activation, tp_rate)
    kv = ACTIVATION_BYTES * b * s * h * kv_share / t
    cp_comm = _seconds(per_layer_microbatch * (3 if full else 2) * 2 * (ring_factor(c) / 2) * kv, cp_rate)
    pp_comm = _seconds(2 * m * v * activation / t, pp_rate) if p > 1 else 0.0
    params = _parameters(l, h, s, vocab_)
    dp_comm = _seconds(ring_factor(d * c) * g_bytes * params / (t * p), dp_rate)

    tp_exposed = (1.0 - o_tp) * tp_comm
    cp_exposed = max(0.0, cp_comm - attention)
    pp_exposed = (1.0 - o_pp) * pp_comm
    work = compute + tp_exposed + cp_exposed + pp_exposed
    share = bubble_fraction(p, v * m)
    bubble = work * share / (1.0 - share)
    dp_exposed = (1.0 - o_dp) * dp_comm
    speed = 1.0 / (1.0 + cv * slowest_of(n))
    straggler = (straggler_tax(speed=speed, gpus=n).step_time_factor - 1.0) * (work + bubble)
    step = work + bubble + dp_exposed + straggler

    capacity = step * n * peak
    return RunPrediction(
        step_s=step, compute_s=compute, bubble_s=bubble, tp_exposed_s=tp_exposed,
        cp_exposed_s=cp_exposed, pp_exposed_s=pp_exposed, dp_exposed_s=dp_exposed,
        straggler_s=straggler,
        mfu=f_model / capacity, hfu=f_hw / capacity,
        tflops_per_gpu=f_hw / (step * n) / 1e12, model_tflops_per_gpu=f_model / (step * n) / 1e12,
        tokens_per_s=batch * s / step, dp=d, microbatches=m,
        model_flops=f_model, hardware_flops=f_hw, parameters=params,
        tp_comm_s=tp_comm, cp_comm_s=cp_comm, pp_comm_s=pp_comm, dp_comm_s=dp_comm,
        slowest_speed=speed,
    )


# -- calibration ---------------------------------------------------------------------------------

CONSTANTS = ("kernel_efficiency", "kernel_half_width", "bus_efficiency_up", "bus_efficiency_out",
             "tp_overlap", "pp_overlap", "dp_overlap", "straggler_cv")
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
        or ``step_gain``, the step time saved by evicting stragglers (divided by ``slowest_of(ranks)``)."""
        family = self._data["family"]
        if family == "collectives":
            return "busbw_share"
        if family == "stragglers":
            return "step_gain"
        from . import measurements
        return measurements.comparable(self.row)[0]

    @property
    def measured(self) -> float:
        """The row's figure in the unit of ``metric`` (a share as a fraction)."""
        data = self._data
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
        """Job size of a ``step_gain`` row (0 otherwise)."""
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
    Calibration("dp_overlap", DP_OVERLAP, "ms24-t2-12"),
    Calibration("straggler_cv", STRAGGLER_CV, "ms24-evict-gain"),
)
"""The rows the defaults were fitted on, by id in ``measurements.csv``: three of the 62
throughput rows, two of the 15 collective rows, one of the 13 straggler rows (at most a
fifth of each family). ``calibrate_defaults`` refits them all."""


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
        else:
            continue
        result[row.constant] = Calibrated(row.constant, fixed[row.constant], False, row.measured)
    solved = [row for row in rows if row.run]
    for row in solved:
        fixed[row.constant] = row.value
    for _ in range(whole("sweeps", sweeps, low=1)):
        moved = 0.0
        for row in solved:
            others = {k: v for k, v in fixed.items() if k != row.constant}
            fit = calibrate(row.constant, metric=row.metric, measured=row.measured, run=row.run,
                            low=row.low, high=row.high, **others)
            moved = max(moved, abs(fit.value - fixed[row.constant]))
            fixed[row.constant] = fit.value
            result[row.constant] = fit
        if moved <= 1e-12:
            break
    return result
