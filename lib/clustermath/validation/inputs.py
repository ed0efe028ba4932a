"""Chapter 6: a run's inputs as five frozen records, each checked once where it is made (issue 43, item 7).

``predict_run`` takes a run as keywords, as a reader types it by hand; it makes these records from
them, and every part of the prediction reads records only:

* ``ModelShape``  what is trained: layers, hidden and MLP widths, sequence, vocabulary, heads;
* ``Layout``      how it is spread and batched: GPUs, tensor, pipeline and context parallel sizes,
                  interleaving, the global batch and the micro-batch, recomputation; it derives the
                  data-parallel size ``dp`` and the micro-batches ``microbatches``;
* ``Hardware``    the GPU and its wires: 16-bit peak, HBM, scale-up link and domain, scale-out link;
                  ``Hardware.of`` fills what is not given from a ``gpus.Gpu`` record;
* ``Stack``       the training stack's switches (precision, sharding, overlap, FlashAttention, gated
                  MLP, sequence parallelism);
* ``Constants``   the calibrated and the stated constants, and the two ways of timing compute that
                  issue 43 added (causal attention, kernels).

A record checks its own fields (``ValueError`` naming the field and its range) and normalises them
(``4.0`` layers become ``4``; the CSV's ``"yes"`` a ``True``). What needs two records (layers per
pipeline stage, heads per tensor-parallel rank, tokens per context-parallel rank, kernels needing a
GPU's table) is checked by ``check_fit``. The calibrated defaults live here, beside the record that
carries them; ``predict.CALIBRATION`` names the row each was fitted on.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from functools import partial
from typing import Callable, Mapping

from ..peak import U16_MAX
from ..validate import flag, one_of, probability, real, whole
from .gpus import Gpu, gpu as gpu_named
from .collectives import DP_LATENCIES
from .kernels import ATTENTION_KERNELS, FP8_CASTS

__all__ = [
    "BUS_EFFICIENCY_OUT", "BUS_EFFICIENCY_UP", "Constants", "DP_OVERLAP", "FP8_GEMM_EFFICIENCY", "GRAD_BYTES",
    "HEAD_DIM", "Hardware", "KERNEL_EFFICIENCY", "KERNEL_EFFICIENCY_HOPPER", "KERNEL_HALF_WIDTH", "LATENCY_S",
    "LOSS_BYTES", "Layout", "ModelShape", "OVERLAP_SLOWDOWN", "PRECISIONS", "PRECISION_NAMES", "RECOMPUTE", "RECOMPUTE_NAMES", "SHARDINGS", "SHARDING_NAMES", "STRAGGLER_CV", "Stack",
    "check_fit", "memory_bandwidth_TBps",
]

RECOMPUTE = ("none", "selective", "full")
"""Activation recomputation: none; the attention scores only (Korthikanti et al. 2022); every layer."""
RECOMPUTE_NAMES = {"no": "none", "off": "none", "core_attn": "selective", "uniform": "full", "block": "full",
                   "activation_checkpointing": "full"}
"""Other names ``Layout`` reads as a ``RECOMPUTE`` choice: Megatron's ``recompute_granularity`` and
``recompute_method`` (``uniform`` and ``block`` recompute whole layers), PyTorch's activation checkpointing."""
PRECISIONS = ("bf16", "fp16", "fp8")
"""Arithmetic of the linear layers' GEMMs: 16-bit (``bf16``, ``fp16``, the same peak) or 8-bit."""
PRECISION_NAMES = {"bfloat16": "bf16", "amp_bf16": "bf16", "float16": "fp16", "half": "fp16", "amp_fp16": "fp16",
                   "float8": "fp8", "amp_fp8": "fp8", "fp8_cs": "fp8", "fp8_ds": "fp8", "fp8_mx": "fp8",
                   "mxfp8": "fp8", "hybrid": "fp8", "e4m3": "fp8"}
"""Other names ``Stack`` reads as a ``PRECISIONS`` choice: PyTorch's dtypes, llm-foundry's ``amp_*``,
torchtitan's ``float8``, the FP8 recipes of Megatron-Bridge's tables (current, delayed and MX block
scaling: ``FP8-CS``, ``FP8-DS``, ``FP8-MX``/``MXFP8``) and Transformer Engine's formats. Every FP8
recipe runs its GEMMs at the FP8 rate here; the tables measure MX block scaling a few percent slower
than current scaling on Blackwell (Megatron-Bridge ``docs/performance-summary-archive.md``), which the
model does not tell apart."""
SHARDINGS = ("none", "optimizer", "full")
"""Data-parallel state: replicated; ZeRO-1 (Megatron's distributed optimizer); ZeRO-3 (FSDP)."""
SHARDING_NAMES = {"ddp": "none", "zero0": "none", "zero1": "optimizer", "distributed_optimizer": "optimizer",
                  "fsdp": "full", "fsdp2": "full", "zero3": "full", "hsdp": "full"}
"""Other names ``Stack`` reads as a ``SHARDINGS`` choice: PyTorch's DDP (replicated), ZeRO stage 1 and
Megatron's distributed optimizer, FSDP and ZeRO stage 3."""
HEAD_DIM = 128
"""Head dimension assumed when ``heads`` is not given (the attention scores' traffic needs a count)."""


_UNSET = object()


def _set(record: object, **values: object) -> None:
    """Store normalised values on a frozen record (only ever from its ``__post_init__``)."""
    for name, value in values.items():
        if getattr(record, name, _UNSET) is not value:   # a derived field is unset until then
            object.__setattr__(record, name, value)


Check = Callable[[str, object], object]


def _checked_fields(record: object, checks: Mapping[str, tuple[Check, object, object]]) -> None:
    """Check and normalise every field of ``checks`` (name → (check, default, the default checked)).

    A field still holding its default object is taken as the default checked once at import, so a
    run typed with the calibrated defaults pays only for what it changes."""
    for name, (validate, default, default_checked) in checks.items():
        value = getattr(record, name)
        normal = default_checked if value is default else validate(name, value)
        if normal is not value:
            object.__setattr__(record, name, normal)


def _checks(cls: type, **checks: Check) -> dict[str, tuple[Check, object, object]]:
    """``_checked_fields``' table for ``cls``: each field's check, its default and the default checked."""
    defaults = {f.name: f.default for f in fields(cls)}
    return {name: (validate, defaults[name], validate(name, defaults[name])) for name, validate in checks.items()}


def _spelled(name: str) -> str:
    """A choice's name as ``_choice`` compares it: lower case, without spaces, hyphens or underscores."""
    return "".join(ch for ch in name.lower() if ch not in " -_")


def _choice(allowed: tuple, synonyms: Mapping[str, str] | None = None) -> Check:
    """A check for a switch with named choices: the choice itself, a name compared without regard to case,
    spaces, hyphens or underscores (``"FP8"`` is ``"fp8"``, ``"Rings-Trees"`` is ``"rings_trees"``), or one
    of ``synonyms`` (another common name of a choice, compared the same way), else ``ValueError`` listing
    ``allowed``."""
    known = {_spelled(k): v for k, v in (synonyms or {}).items()}
    known.update({_spelled(c): c for c in allowed if isinstance(c, str)})

    def check(name: str, value: object) -> object:
        spelled = known.get(_spelled(value), value) if isinstance(value, str) else value
        chosen = one_of(name, spelled, allowed)
        return str(chosen) if isinstance(chosen, str) else chosen
    return check


# -- what is trained ---------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class ModelShape:
    """A dense transformer's shape: ``l`` layers of width ``h``, MLP width ``f`` (default ``4h``),
    ``s`` tokens a sequence, a vocabulary of ``V`` (0: no output layer counted), ``a`` heads of which
    ``a_kv`` carry keys and values (grouped-query attention; ``None``: as many as ``heads``)."""

    layers: int
    hidden: int
    seq_len: int
    vocab: int
    ffn_hidden: int | None = None
    heads: int | None = None
    kv_heads: int | None = None
    mlp: int = field(init=False, repr=False, compare=False)
    """The MLP's width ``f``: ``ffn_hidden``, or ``4h`` when not given."""
    kv_share: float = field(init=False, repr=False, compare=False)
    """``a_kv/a``, the share of heads that carry keys and values (1 without grouped-query attention)."""
    head_count: float = field(init=False, repr=False, compare=False)
    """``a``, or ``h/HEAD_DIM`` when ``heads`` is not given (for the attention scores' traffic)."""

    def __post_init__(self) -> None:
        l, h, s, v, f, a, a_kv = self._checked()
        _set(self, layers=l, hidden=h, seq_len=s, vocab=v, ffn_hidden=f, heads=a, kv_heads=a_kv,
             mlp=4 * h if f is None else f, kv_share=1.0 if a is None or a_kv is None else a_kv / a,
             head_count=h / HEAD_DIM if a is None else a)

    def _checked(self) -> tuple:
        """The given fields checked and normalised: (l, h, s, V, f or None, a or None, a_kv or None)."""
        h = whole("hidden", self.hidden, low=1, integral_only=False)
        shape = (whole("layers", self.layers, low=1, integral_only=False), h,
                 whole("seq_len", self.seq_len, low=1, integral_only=False),
                 whole("vocab", self.vocab, low=0, integral_only=False),
                 None if self.ffn_hidden is None else whole("ffn_hidden", self.ffn_hidden, low=1, integral_only=False))
        if self.heads is None:
            if self.kv_heads is not None:
                raise ValueError(f"kv_heads must be None when heads is None, got {self.kv_heads!r}")
            return (*shape, None, None)
        a = whole("heads", self.heads, low=1, integral_only=False)
        if h % a:
            raise ValueError(f"heads must divide hidden = {h:,}, got {self.heads!r}")
        a_kv = None if self.kv_heads is None else whole("kv_heads", self.kv_heads, low=1, high=a,
                                                        integral_only=False)
        if a_kv is not None and a % a_kv:
            raise ValueError(f"kv_heads must divide heads = {a:,}, got {self.kv_heads!r}")
        return (*shape, a, a_kv)


# -- how it is spread and batched ---------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Layout:
    """The parallel layout and batch of a run: ``N = gpus``, tensor ``t = tp``, pipeline ``p = pp``,
    context ``c = cp`` parallel sizes, ``v = virtual_stages`` chunks a stage, ``B = global_batch`` and
    ``b = microbatch`` sequences, and ``recompute`` (``RECOMPUTE``). Derived: ``dp = N/(t·p·c)`` and
    ``microbatches = B/(b·dp)``, both whole (``ValueError`` otherwise). Chapter 1's ring and bubble models
    take 16-bit counts, so the data-parallel group ``dp·c`` and ``v·m`` are at most 65,535."""

    gpus: int
    tp: int
    pp: int
    global_batch: int
    microbatch: int
    cp: int = 1
    virtual_stages: int = 1
    recompute: str = "none"
    dp: int = field(init=False, repr=False, compare=False)
    """Data-parallel size ``d = N/(t·p·c)``."""
    microbatches: int = field(init=False, repr=False, compare=False)
    """Micro-batches per pipeline per step, ``m = B/(b·d)``."""

    def __post_init__(self) -> None:
        batch = whole("global_batch", self.global_batch, low=1, integral_only=False)
        b = whole("microbatch", self.microbatch, low=1, integral_only=False)
        n = whole("gpus", self.gpus, low=1, integral_only=False)
        t, p, c = (whole(k, getattr(self, k), low=1, high=U16_MAX, integral_only=False) for k in ("tp", "pp", "cp"))
        v = whole("virtual_stages", self.virtual_stages, low=1, integral_only=False)
        recompute = _choice(RECOMPUTE, RECOMPUTE_NAMES)("recompute", self.recompute)
        if recompute is not self.recompute:
            object.__setattr__(self, "recompute", recompute)
        if n % (t * p * c):
            raise ValueError(f"gpus must be a multiple of tp·pp·cp = {t * p * c:,}, got {n!r}")
        d = n // (t * p * c)
        if d * c > U16_MAX:
            raise ValueError(f"gpus must keep the data-parallel group gpus/(tp·pp) within 1..{U16_MAX:,} "
                             f"ranks, got {n!r} ({d * c:,} ranks)")
        if batch % (b * d):
            raise ValueError(f"global_batch must be a multiple of microbatch·dp = {b * d:,} sequences, got {batch!r}")
        m = batch // (b * d)
        if v > 1 and p == 1:
            raise ValueError(f"virtual_stages must be 1 when pp = 1 (interleaving needs a pipeline), got {v!r}")
        if v * m > U16_MAX:
            raise ValueError(f"virtual_stages must keep virtual_stages·microbatches within 1..{U16_MAX:,}, "
                             f"got {v!r} ({v * m:,})")
        _set(self, gpus=n, tp=t, pp=p, global_batch=batch, microbatch=b, cp=c, virtual_stages=v,
             recompute=recompute, dp=d, microbatches=m)


# -- the GPU and its wires ----------------------------------------------------------------------------

def memory_bandwidth_TBps(peak_tflops: float) -> float:
    """Default HBM bandwidth of a GPU with this 16-bit dense peak, TB/s: H100 SXM's 3.35 above
    400 TFLOP/s (989 TFLOP/s), A100's 2.0 below (312 TFLOP/s; 2.04 for the 80 GB SXM part, 1.56
    for the 40 GB). Sources: NVIDIA's A100 and H100 datasheets."""
    peak = real("peak_tflops", peak_tflops, low_open=True, unit="TFLOP/s")
    return 3.35 if peak > 400.0 else 2.0


_FROM_GPU = ("peak_tflops", "scale_up_GBps", "scale_up_gpus", "memory_TBps", "scale_out_GBps")


@dataclass(frozen=True, slots=True)
class Hardware:
    """One GPU and its wires: the 16-bit dense ``peak_tflops`` (TFLOP/s), ``scale_up_GBps`` and
    ``scale_out_GBps`` per GPU and direction (GB/s; ``inf`` for a wire that costs nothing),
    ``scale_up_gpus`` in one scale-up domain (default 8), ``memory_TBps`` (TB/s; default
    ``memory_bandwidth_TBps(peak)``), and the ``gpus.Gpu`` record they came from (``None``: typed by hand)."""

    peak_tflops: float
    scale_up_GBps: float
    scale_out_GBps: float
    scale_up_gpus: int = 8
    memory_TBps: float | None = None
    gpu: Gpu | None = None

    def __post_init__(self) -> None:
        domain = whole("scale_up_gpus", self.scale_up_gpus, low=1, integral_only=False)
        peak = real("peak_tflops", self.peak_tflops, low_open=True, unit="TFLOP/s")
        _set(self, scale_up_gpus=domain, peak_tflops=peak,
             scale_up_GBps=real("scale_up_GBps", self.scale_up_GBps, low_open=True, allow_inf=True, unit="GB/s"),
             scale_out_GBps=real("scale_out_GBps", self.scale_out_GBps, low_open=True, allow_inf=True, unit="GB/s"),
             memory_TBps=(memory_bandwidth_TBps(peak) if self.memory_TBps is None else
                          real("memory_TBps", self.memory_TBps, low_open=True, allow_inf=True, unit="TB/s")))
        if self.gpu is not None and not isinstance(self.gpu, Gpu):
            raise ValueError(f"gpu must be a Gpu record or None, got {self.gpu!r}")

    @classmethod
    def of(cls, gpu: str | Gpu | None = None, *, peak_tflops: float | None = None,
           scale_up_GBps: float | None = None, scale_out_GBps: float | None = None, scale_up_gpus: int | None = None,
           memory_TBps: float | None = None) -> "Hardware":
        """The hardware of a run: each number given wins; a missing one comes from ``gpu`` (a name of
        ``gpus.GPUS`` or a ``Gpu``; ``Gpu.run_inputs``, the NIC rate from the part's reference system);
        without ``gpu`` the domain is 8 GPUs and ``scale_out_GBps`` must be given."""
        if gpu is None:
            if scale_out_GBps is None:
                raise ValueError("scale_out_GBps must be given (GB/s per GPU and direction, above 0) when no gpu "
                                 "names the part, got None")
            return cls(peak_tflops, scale_up_GBps, scale_out_GBps, 8 if scale_up_gpus is None else scale_up_gpus,
                       memory_TBps)
        record = gpu if isinstance(gpu, Gpu) else gpu_named(gpu)  # type: ignore[arg-type]
        filled = record.run_inputs
        given = (peak_tflops, scale_up_GBps, scale_up_gpus, memory_TBps, scale_out_GBps)
        if scale_out_GBps is None and "scale_out_GBps" not in filled:
            raise ValueError(f"scale_out_GBps must be given (GB/s per GPU and direction, above 0): the record "
                             f"{record.name!r} names no reference system, got None")
        peak, up, domain, memory, out = (filled[k] if g is None else g for g, k in zip(given, _FROM_GPU))
        return cls(peak, up, out, domain, memory, record)

    @property
    def peak(self) -> float:
        """The 16-bit peak in FLOP/s."""
        return self.peak_tflops * 1e12


# -- the training stack's switches --------------------------------------------------------------------

_WORDS = {"yes": True, "no": False, "true": True, "false": False, "on": True, "off": False}


def _switch(name: str, value: object) -> bool:
    """A boolean switch; the CSV's ``yes``/``no`` (and ``true``/``false``, ``on``/``off``, any case) read
    as True/False."""
    word = value.strip().lower() if isinstance(value, str) else None
    return _WORDS[word] if word in _WORDS else flag(name, value)


@dataclass(frozen=True, slots=True)
class Stack:
    """The switches a training stack states in its configuration; the defaults are Megatron-LM's
    2021 stack (Narayanan et al. 2021), the stack of most rows in ``measurements.csv``.

    ``sequence_parallel = None`` means "as the run's ``tp`` implies": off (the 2021 default).
    Checked where made: ``ValueError`` naming the switch for a value outside its choices.
    """

    precision: str = "bf16"
    sharding: str = "none"
    overlap: bool = False
    flash_attention: bool = False
    gated_mlp: bool = False
    sequence_parallel: bool | None = None

    def __post_init__(self) -> None:
        _checked_fields(self, _STACK_CHECKS)

    def checked(self) -> "Stack":
        """The record itself: a ``Stack`` is checked when it is made (kept for older callers)."""
        return self


def _optional_switch(name: str, value: object) -> bool | None:
    return None if value is None else _switch(name, value)


_STACK_CHECKS = _checks(
    Stack, precision=_choice(PRECISIONS, PRECISION_NAMES), sharding=_choice(SHARDINGS, SHARDING_NAMES),
    overlap=_switch, flash_attention=_switch, gated_mlp=_switch, sequence_parallel=_optional_switch)


# -- the constants ----------------------------------------------------------------------------------

KERNEL_EFFICIENCY = 0.700
"""Share of the 16-bit peak the GEMMs sustain (fitted with KERNEL_HALF_WIDTH: CALIBRATION rows
``nar21-t2-04`` and ``nar21-t1-01``)."""
KERNEL_EFFICIENCY_HOPPER = 0.605
"""Share of the 16-bit peak a Hopper GPU's (H100's) GEMMs sustain, used for a peak above 400 TFLOP/s
(fitted: CALIBRATION row ``mosaic23-h100-70b-s2048-g64``). Added after looking: the H100 rows came
out too fast at ``KERNEL_EFFICIENCY``, and the constant was introduced then, its row picked by the
Ampere rule. A plausible reason, not a measured one: a Hopper's GEMMs reach a smaller share of their
peak than an Ampere's, the 700 W power limit holding the clocks below the boost clock the peak is
quoted at."""
KERNEL_HALF_WIDTH = 167.0
"""Hidden size at which the GEMMs reach half of ``KERNEL_EFFICIENCY`` (Hockney's n½). Fitted with
KERNEL_EFFICIENCY, it stays small (167, against hidden sizes of 2,304 and up: the 1.7 B row's GEMMs
keep 93% of η_∞): once the memory-bound work of ``elementwise_bytes`` and of the loss (``LOSS_BYTES``)
is counted, the narrow rows need few slower GEMMs; the width law of the 2021 runs is mostly that
traffic (their unfused softmax above all), not the GEMMs. With the attention products counted causal
(the default since issue 43), a narrow row loses some of the attention time the full count gave it,
and the fit takes a little of it back here (17 with the full count). Before the loss was counted it
was 204 (51 with the full count)."""
BUS_EFFICIENCY_UP = 0.82
"""Ring all-reduce bus bandwidth over the scale-up link rate (CALIBRATION[2])."""
BUS_EFFICIENCY_OUT = 0.80
"""Ring all-reduce bus bandwidth over the scale-out (NIC) rate (CALIBRATION[3])."""
DP_OVERLAP = 0.0
"""Share of the data-parallel traffic hidden by hand beyond what ``overlap`` computes (not fitted)."""
LATENCY_S = 5.94e-6
"""α, the latency of one step of a collective, s: the 4-byte all-reduce of row ``nccl1244-latency``
(47.54 µs on 16 GPUs) over its 2⌈log₂ 16⌉ = 8 steps."""
STRAGGLER_CV = 0.0018
"""Coefficient of variation of one rank's step time (CALIBRATION[5])."""
GRAD_BYTES = 4
"""Bytes per gradient element in the data-parallel reduction: FP32 (not fitted; Megatron-LM's
``accumulate_allreduce_grads_in_fp32``)."""
FP8_GEMM_EFFICIENCY = 0.80
"""Share of its 16-bit efficiency an FP8 GEMM keeps against the doubled 8-bit peak (assumed, not
fitted): per-tensor scaling, the FP8 GEMMs' higher demand on operand bandwidth and the smaller
tiles of Hopper's FP8 path keep large FP8 GEMMs near 1.6× the BF16 rate, not 2×."""
OVERLAP_SLOWDOWN = 0.10
"""Share of a hidden transfer's time that the compute it runs beside still loses (assumed): the
collective's kernels occupy streaming multiprocessors and memory bandwidth while they run."""
LOSS_BYTES = 40.0
"""Bytes of memory traffic per logit (one token, one vocabulary entry) the loss moves in a step (counted,
not fitted): Megatron-Core's fused cross entropy (``megatron/core/fusions/fused_cross_entropy.py``) upcasts
the 16-bit logits to FP32 with their maximum (read 2, write 4), exponentiates them in place (read 4, write
4), sums each row (read 4) and normalises them in place (read 4, write 4); its backward scales that
softmax in place (read 4, write 4) and casts it back to 16 bits (read 4, write 2): 6 + 8 + 4 + 8 + 8 + 6
= 40. Its unfused path (``tensor_parallel/cross_entropy.py``) moves more (the upcast and the maximum
apart, the cast left to autograd); the loss of a stack built without Megatron-Core was not counted, and
one fused into fewer passes (Transformer Engine's) moves less: set ``loss_bytes`` for it."""

CP_ATTENTION_OVERHEAD = 0.515
"""Extra share of its attention time a layer pays when context parallelism splits the sequence
(``cp > 1``; fitted: CALIBRATION row ``nemo24-llama3-8b-8``): the attention then runs as a ring of ``c``
steps, each its own forward and backward kernels on a block of the sequence, the partial results merged
with a log-sum-exp correction and the key/value gradients passed back round the ring, and it sustains
``1/(1 + κ)`` of the rate one fused kernel keeps on the whole sequence. Added after looking: every row
and case with ``cp > 1`` came out fast (NeMo 24.07's two, Megatron-Bridge's 405B ones, NeMo's long
sequences), while the same sources' CP 1 rows scatter on both sides; its row is the context-parallel row at the
chapter's usual lengths (8,192 tokens or fewer) whose step is most attention (Llama 3 8B, CP 2)."""


@dataclass(frozen=True, slots=True)
class Constants:
    """The predictor's constants (defaults: the calibrated and stated values above) and its ways of
    timing compute: ``causal_attention`` (default: the attention products at a causal kernel's half;
    ``False``: in full),
    ``kernels`` (every GEMM timed from its shape by ``gemm.gemm_time``; needs a GPU with a table),
    ``attention_kernel`` (``fa2`` or ``fa3``: attention forward and backward at a published FlashAttention
    benchmark's rates, ``kernels.attention_table_time``, with or without ``kernels``; needs a GPU record
    with that kernel's point and ``heads``; ``None``: as two batched GEMMs at the GEMMs' rate) and, with
    ``kernels``, ``fp8_casts`` (``te`` or ``dynamic``: the FP8 casts as memory traffic, ``kernels.fp8_cast_bytes``, on
    a run whose precision is FP8; ``None``: not counted), and ``dp_latency`` (``rings_trees``: the
    data-parallel collectives timed as NCCL's tuner times them, a ring's ``2(n−1)`` steps or a tree's
    ``⌊log₂ N⌋`` levels, whichever is faster, at NCCL's own per-step latencies,
    ``collectives.nccl_collective_time``; ``None``: ``α`` per step of a log-depth schedule).

    Efficiencies are shares in (0, 1]; ``overlap_slowdown`` and the hand-set overlaps in [0, 1];
    ``kernel_half_width`` (a hidden size), ``latency_s`` (s), ``straggler_cv``, ``loss_bytes`` (bytes per
    logit, ``LOSS_BYTES``; 0 leaves the loss's memory traffic out) and ``cp_attention_overhead``
    (``CP_ATTENTION_OVERHEAD``; 0 times a context-parallel ring's attention as one fused kernel) at least 0;
    ``grad_bytes`` above 0."""

    kernel_efficiency: float = KERNEL_EFFICIENCY
    hopper_kernel_efficiency: float = KERNEL_EFFICIENCY_HOPPER
    kernel_half_width: float = KERNEL_HALF_WIDTH
    bus_efficiency_up: float = BUS_EFFICIENCY_UP
    bus_efficiency_out: float = BUS_EFFICIENCY_OUT
    latency_s: float = LATENCY_S
    fp8_efficiency: float = FP8_GEMM_EFFICIENCY
    overlap_slowdown: float = OVERLAP_SLOWDOWN
    tp_overlap: float = 0.0
    pp_overlap: float = 0.0
    dp_overlap: float = DP_OVERLAP
    straggler_cv: float = STRAGGLER_CV
    grad_bytes: float = GRAD_BYTES
    causal_attention: bool = True
    kernels: bool = False
    attention_kernel: str | None = None
    fp8_casts: str | None = None
    dp_latency: str | None = None
    loss_bytes: float = LOSS_BYTES
    cp_attention_overhead: float = CP_ATTENTION_OVERHEAD

    def __post_init__(self) -> None:
        _checked_fields(self, _CONSTANT_CHECKS)

    def efficiency(self, hardware: Hardware) -> float:
        """η_∞ for this GPU: ``hopper_kernel_efficiency`` above a 400 TFLOP/s peak, else ``kernel_efficiency``."""
        return self.hopper_kernel_efficiency if hardware.peak > 400e12 else self.kernel_efficiency


_share = partial(probability, low_open=True)
_CONSTANT_CHECKS = _checks(
    Constants, kernel_efficiency=_share, hopper_kernel_efficiency=_share, kernel_half_width=real,
    bus_efficiency_up=_share, bus_efficiency_out=_share, latency_s=partial(real, unit="s"), fp8_efficiency=_share,
    overlap_slowdown=probability, tp_overlap=probability, pp_overlap=probability, dp_overlap=probability,
    straggler_cv=real, grad_bytes=partial(real, low_open=True, unit="bytes"), causal_attention=flag, kernels=flag,
    attention_kernel=_choice((None, *ATTENTION_KERNELS)), fp8_casts=_choice((None, *FP8_CASTS)),
    dp_latency=_choice((None, *DP_LATENCIES)), loss_bytes=partial(real, unit="bytes"),
    cp_attention_overhead=real)


# -- what needs two records ---------------------------------------------------------------------------

def check_fit(shape: ModelShape, layout: Layout, hardware: Hardware, constants: Constants,
              stack: Stack | None = None) -> None:
    """``ValueError`` unless the records fit one another: a layer per pipeline stage, a chunk per layer at
    most (the embedding and the loss may each take one, as Megatron-Core's
    ``account_for_embedding_in_pipeline_split`` and ``account_for_loss_in_pipeline_split`` let them:
    ``v·p ≤ l + 2``), ``seq_len`` a multiple of ``cp``, ``heads`` a multiple
    of ``tp``, ``kernels`` and ``attention_kernel`` given a GPU record and ``heads``, ``fp8_casts`` only
    with ``kernels``, and (given the ``stack``) FP8 only on a GPU record with FP8 tensor cores (a GPU
    given by its numbers alone cannot say, and is taken at its word). The chunks need not hold equal
    layer counts: the fullest stage is timed with its ``⌈l/p⌉`` layers whatever ``v`` is."""
    l, p, v = shape.layers, layout.pp, layout.virtual_stages
    if l < p:
        raise ValueError(f"layers must be at least pp = {p:,} (a layer per stage), got {l!r}")
    if l + 2 < v * p:
        raise ValueError(f"virtual_stages·pp must be at most layers + 2 = {l + 2:,} (a chunk per layer, the "
                         f"embedding and the loss), got virtual_stages = {v:,} with pp = {p:,} ({v * p:,})")
    if shape.seq_len % layout.cp:
        raise ValueError(f"seq_len must be a multiple of cp = {layout.cp:,} tokens, got {shape.seq_len!r}")
    if shape.heads is not None and shape.heads % layout.tp:
        raise ValueError(f"heads must divide hidden = {shape.hidden:,} and be a multiple of tp = {layout.tp:,}, "
                         f"got {shape.heads!r}")
    if constants.kernels and hardware.gpu is None:
        raise ValueError("gpu must name a GPU with a kernel table when kernels is True, got None")
    if constants.kernels and shape.heads is None:
        raise ValueError("heads must be given when kernels is True (the attention kernels' shape), got None")
    if stack is not None and stack.precision == "fp8" and hardware.gpu is not None and not hardware.gpu.fp8_tflops:
        raise ValueError(f"precision must not be 'fp8' on {hardware.gpu.name}: it has no FP8 tensor cores")
    if constants.fp8_casts is not None and not constants.kernels:
        raise ValueError(f"fp8_casts must be None unless kernels is True, got {constants.fp8_casts!r}")
    if constants.attention_kernel is not None and (hardware.gpu is None or shape.heads is None):
        raise ValueError(f"attention_kernel must be None without a gpu record and heads (its table and its "
                         f"shape), got {constants.attention_kernel!r} with gpu "
                         f"{getattr(hardware.gpu, 'name', None)!r} and heads {shape.heads!r}")
