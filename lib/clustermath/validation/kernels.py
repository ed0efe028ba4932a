"""Chapter 6: a transformer layer's compute as the GEMMs its kernels run, each timed from its shape
(issue 43, items 1 and 2, put together for ``predict_run``).

One micro-batch of ``b`` sequences of ``s`` tokens on one GPU of a tensor-parallel group of ``t``
and a context-parallel group of ``c`` holds ``T = b·s/c`` tokens. Its layer runs, in the forward
pass (``h_kv = h·kv_heads/heads``, ``n = 2`` matrices up for a gated MLP, else 1)::

    QKV        M = T   N = (h + 2h_kv)/t   K = h
    projection M = T   N = h               K = h/t
    MLP up     M = T   N = n·f/t           K = h
    MLP down   M = T   N = h               K = f/t
    QKᵀ        batch = b·a/t heads,  M = s/c   N = s     K = d       (d = h/a, the head dimension)
    scores·V   batch = b·a/t heads,  M = s/c   N = d     K = s

and the backward pass, for each linear GEMM ``M×N×K``, its data gradient ``M×K×N`` and its weight
gradient ``K×N×M``. The attention products are causal: a causal kernel skips the masked half, so
they take half the time of the full products at the same shape (``flop_counts.attention_flops``);
they run at 16 bits whatever the linear layers use. The output layer (logits) is ``M = T``,
``N = V/t``, ``K = h``, with its two gradients.

Attention as the FlashAttention kernels run it (``attention_table_time``, issue 43 item 2): instead of
two batched GEMMs, one fused kernel forward and one backward, each at the rate a published FlashAttention
benchmark prints for that kernel on that GPU generation, with the benchmark's own FLOP convention (the
causal forward ``2·b·a·s²·d``, half the full ``4·b·a·s²·d``; the backward 2.5 times the forward: five
products to the forward's two, the scores recomputed). ``ATTENTION_POINTS`` holds one point per kernel
and generation, chosen by a rule fixed before any training row was compared: head dimension 128 (every
model of the measurements but one), causal, the longest sequence the table prints.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..validate import one_of, real, whole
from .gemm import GEMM_PRECISIONS, KERNEL_FAMILY, gemm_time
from .gpus import Gpu, gpu as _gpu

__all__ = ["ATTENTION_BACKWARD_FLOPS", "ATTENTION_KERNELS", "ATTENTION_POINTS", "FP8_CASTS", "fp8_cast_bytes", "AttentionPoint", "CAUSAL_SHARE", "attention_kernel_time",
           "attention_table_time", "layer_gemm_shapes", "layer_kernel_time", "logits_kernel_time"]

CAUSAL_SHARE = 0.5
"""Share of the full attention products' time a causal kernel takes at the same shape."""


ATTENTION_KERNELS = ("fa2", "fa3")
"""FlashAttention-2 (``flash-attn`` 2, PyTorch's SDPA flash backend) and FlashAttention-3 (Hopper's fused
kernel; cuDNN's fused attention, which Transformer Engine calls, runs at its speed on long sequences)."""


@dataclass(frozen=True, slots=True)
class AttentionPoint:
    """One published attention benchmark point: a kernel on a GPU family, causal, head dimension ``d``,
    sequence ``s``, its forward and backward rates (TFLOP/s in the benchmark's convention) and where."""

    family: str
    kernel: str
    head_dim: int
    seq_len: int
    fwd_tflops: float
    bwd_tflops: float
    source: str

    def __post_init__(self) -> None:
        one_of("family", self.family, tuple(set(KERNEL_FAMILY.values())))
        one_of("kernel", self.kernel, ATTENTION_KERNELS)
        whole("head_dim", self.head_dim, low=1)
        whole("seq_len", self.seq_len, low=1)
        real("fwd_tflops", self.fwd_tflops, low_open=True, unit="TFLOP/s")
        real("bwd_tflops", self.bwd_tflops, low_open=True, unit="TFLOP/s")


_FA_PR1791 = ("Dao-AILab/flash-attention pull request #1791 ('ABI stable fa3', 2025-07-31), hopper/benchmark_attn.py "
              "on main, 'headdim = 128, causal = True, seqlen = 8192': {kernel} fwd {fwd_ms} ms, {fwd} TFLOPS; bwd "
              "{bwd_ms} ms, {bwd} TFLOPS. The GPU is not named; FlashAttention-3 runs only on Hopper (sm_90), and "
              "630 TFLOP/s is an H100-class part (an H20 peaks at 148)")
ATTENTION_POINTS: dict[tuple[str, str], AttentionPoint] = {
    ("H100-SXM5-80GB", "fa2"): AttentionPoint(
        "H100-SXM5-80GB", "fa2", 128, 8192, 284.1, 287.1,
        _FA_PR1791.format(kernel="Fav2", fwd_ms=1.935, fwd=284.1, bwd_ms=4.788, bwd=287.1)),
    ("H100-SXM5-80GB", "fa3"): AttentionPoint(
        "H100-SXM5-80GB", "fa3", 128, 8192, 630.0, 531.6,
        _FA_PR1791.format(kernel="Fav3", fwd_ms=0.873, fwd=630.0, bwd_ms=2.585, bwd=531.6)),
}
"""One point per (GPU family, kernel), by the module's rule. No Blackwell point: FlashAttention-3 does not
run there, and no FlashAttention-2 table for B200 was found; ``attention_table_time`` refuses it."""
ATTENTION_BACKWARD_FLOPS = 2.5
"""The backward's FLOPs over the forward's in FlashAttention's benchmarks (five products to two)."""


def _linear(m: int, n: int, k: int, g: Gpu | str, precision: str) -> tuple[float, float]:
    """(forward, backward) time of one linear GEMM ``M×N×K``: the product, then its two gradients, s."""
    fwd = gemm_time(m, n, k, gpu=g, precision=precision)
    return fwd, gemm_time(m, k, n, gpu=g, precision=precision) + gemm_time(k, n, m, gpu=g, precision=precision)


def _parts(value: int, by: int, name: str) -> int:
    """``value/by`` as a whole number of elements (at least one), ``ValueError`` naming ``name`` otherwise."""
    if value % by:
        raise ValueError(f"{name} must be a multiple of {by:,}, got {value!r}")
    return max(1, value // by)


def layer_gemm_shapes(*, hidden: int, ffn_hidden: int, seq_len: int, microbatch: int, tp: int = 1, cp: int = 1,
                      kv_heads_share: float = 1.0, gated_mlp: bool = False) -> tuple[tuple[int, int, int], ...]:
    """One layer's four linear GEMMs ``(M, N, K)`` for one micro-batch on one GPU, forward, in the order
    QKV, projection, MLP up, MLP down (the module's table); ``kv_heads_share = kv_heads/heads``.

    Their forward FLOPs, ``Σ 2·M·N·K``, are ``T/t`` times ``predict.layer_flops``'s linear count per token
    (``T = b·s/c`` tokens, TP's split ``t``): the kernel path and the analytic count carry the same work."""
    h = whole("hidden", hidden, low=1, integral_only=False)
    f = whole("ffn_hidden", ffn_hidden, low=1, integral_only=False)
    t = whole("tp", tp, low=1, integral_only=False)
    c = whole("cp", cp, low=1, integral_only=False)
    tokens = whole("microbatch", microbatch, low=1, integral_only=False) * _parts(
        whole("seq_len", seq_len, low=1, integral_only=False), c, "seq_len")
    qkv = max(1, round((h + 2 * h * kv_heads_share) / t))
    return ((tokens, qkv, h), (tokens, h, _parts(h, t, "hidden")),
            (tokens, (2 if gated_mlp else 1) * _parts(f, t, "ffn_hidden"), h),
            (tokens, h, _parts(f, t, "ffn_hidden")))


def layer_kernel_time(*, hidden: int, ffn_hidden: int, seq_len: int, microbatch: int, tp: int = 1, cp: int = 1,
                      kv_heads_share: float = 1.0, gated_mlp: bool = False, gpu: Gpu | str,
                      precision: str = "bf16") -> tuple[float, float]:
    """(forward, backward) time of one layer's linear GEMMs for one micro-batch on one GPU, s.

    Shapes as the module lists them (``layer_gemm_shapes``); ``kv_heads_share = kv_heads/heads``;
    ``precision`` the linear GEMMs' (``bf16``, ``fp16`` or ``fp8``).
    """
    shapes = layer_gemm_shapes(hidden=hidden, ffn_hidden=ffn_hidden, seq_len=seq_len, microbatch=microbatch, tp=tp,
                               cp=cp, kv_heads_share=kv_heads_share, gated_mlp=gated_mlp)
    one_of("precision", precision, GEMM_PRECISIONS)
    times = [_linear(m, n, k, gpu, precision) for m, n, k in shapes]
    return sum(x[0] for x in times), sum(x[1] for x in times)


def _attention_shape(hidden: int, heads: int, seq_len: int, microbatch: int, tp: int,
                     cp: int) -> tuple[int, int, int, int, int]:
    """The attention products' shape, checked: (h, a, s, c, b·a/t), the last the batched heads one GPU runs."""
    h = whole("hidden", hidden, low=1, integral_only=False)
    a = whole("heads", heads, low=1, integral_only=False)
    s = whole("seq_len", seq_len, low=1, integral_only=False)
    c = whole("cp", cp, low=1, integral_only=False)
    local = whole("microbatch", microbatch, low=1, integral_only=False) * _parts(
        a, whole("tp", tp, low=1, integral_only=False), "heads")
    return h, a, s, c, local


def attention_kernel_time(*, hidden: int, heads: int, seq_len: int, microbatch: int, tp: int = 1, cp: int = 1,
                          gpu: Gpu | str) -> float:
    """Forward time of one layer's causal attention products for one micro-batch on one GPU, s (16-bit)."""
    h, a, s, c, local = _attention_shape(hidden, heads, seq_len, microbatch, tp, cp)
    d, queries = _parts(h, a, "hidden"), _parts(s, c, "seq_len")
    full = (gemm_time(queries, s, d, gpu=gpu, batch=local)
            + gemm_time(queries, d, s, gpu=gpu, batch=local))
    return CAUSAL_SHARE * full


def logits_kernel_time(*, hidden: int, vocab: int, seq_len: int, microbatch: int, tp: int = 1, cp: int = 1,
                       gpu: Gpu | str, precision: str = "bf16") -> tuple[float, float]:
    """(forward, backward) time of the output layer's GEMM for one micro-batch on one GPU, s."""
    h = whole("hidden", hidden, low=1, integral_only=False)
    v = whole("vocab", vocab, low=1, integral_only=False)
    t = whole("tp", tp, low=1, integral_only=False)
    tokens = whole("microbatch", microbatch, low=1, integral_only=False) * _parts(
        whole("seq_len", seq_len, low=1, integral_only=False), whole("cp", cp, low=1, integral_only=False),
        "seq_len")
    return _linear(tokens, max(1, -(-v // t)), h, gpu, precision)



def attention_table_time(*, hidden: int, heads: int, seq_len: int, microbatch: int, tp: int = 1, cp: int = 1,
                         gpu: Gpu | str, kernel: str, recompute: bool = False) -> float:
    """Time of one layer's causal attention, forward and backward, for one micro-batch on one GPU, s, at
    the rates of ``ATTENTION_POINTS``::

        F = 2 · b · (a/t) · (s/c) · s · d            the causal forward's FLOPs (d = h/a)
        t = F / R_fwd + 2.5 · F / R_bwd   (+ F / R_fwd with full recomputation)

    ``kernel`` is ``fa2`` or ``fa3``; ``ValueError`` for a GPU family without that kernel's point."""
    h, a, s, c, local = _attention_shape(hidden, heads, seq_len, microbatch, tp, cp)
    record = gpu if isinstance(gpu, Gpu) else _gpu(gpu)
    point = ATTENTION_POINTS.get((KERNEL_FAMILY.get(record.name, ""), str(one_of("kernel", kernel, ATTENTION_KERNELS))))
    if point is None:
        raise ValueError(f"gpu must be one with a {kernel} table, one of {sorted({g for g, _ in ATTENTION_POINTS})!r} "
                         f"or a part of its family, got {record.name!r}")
    flops = 2.0 * local * _parts(s, c, "seq_len") * s * _parts(h, a, "hidden")
    forward = flops / (point.fwd_tflops * 1e12)
    return forward * (2.0 if recompute else 1.0) + ATTENTION_BACKWARD_FLOPS * flops / (point.bwd_tflops * 1e12)


FP8_CASTS = ("te", "dynamic")
"""How a stack makes the FP8 copies its GEMMs read (issue 43, item 3): ``te``, Transformer Engine, whose
LayerNorm and activation kernels write the FP8 inputs of QKV, FC1 and FC2 themselves (the amax taken in
the same pass) and which casts each weight once a step; ``dynamic``, per-tensor scaling computed where it
is used (torchtitan's float8), every FP8 operand read once for its amax and once for its cast, each
weight cast again for every micro-batch."""


def fp8_cast_bytes(*, hidden: int, ffn_hidden: int, tp: int, kv_heads_share: float = 1.0, gated_mlp: bool = False,
                   casts: str) -> tuple[float, float]:
    """(bytes per token, bytes per step) one GPU moves to make one layer's FP8 operands, forward and backward.

    Every cast reads the 16-bit tensor (2 bytes an element) and writes its FP8 copy and the transposed copy
    the other gradient GEMM reads (1 + 1): 4 bytes an element; ``dynamic`` reads it once more for the amax
    (6). Per token, elements (``h_kv = h·kv_heads/heads``, ``n = 2`` matrices up for a gated MLP, else 1)::

        forward   QKV in h, projection in h/t, FC1 in h, FC2 in f/t      (``te``: the projection's only)
        backward  gradients out of QKV (h + 2h_kv)/t, projection h, FC1 n·f/t, FC2 h

    Weights: the layer's ``(h(h + 2h_kv) + h² + (n + 1)·h·f)/t`` elements, 4 bytes each, once a step
    (``te``) or once a micro-batch (``dynamic``; the caller multiplies). Assumed from how the two stacks
    are built, not measured; an upper bound where a kernel fuses more."""
    h = whole("hidden", hidden, low=1, integral_only=False)
    f = whole("ffn_hidden", ffn_hidden, low=1, integral_only=False)
    t = whole("tp", tp, low=1, integral_only=False)
    kv = real("kv_heads_share", kv_heads_share, low_open=True, high=1.0)
    n = 2 if gated_mlp else 1
    dynamic = one_of("casts", casts, FP8_CASTS) == "dynamic"
    forward = (h + h / t + h + f / t) if dynamic else h / t
    backward = (h + 2 * h * kv) / t + h + n * f / t + h
    weights = (h * (h + 2 * h * kv) + h * h + (n + 1) * h * f) / t
    return (6.0 if dynamic else 4.0) * (forward + backward), 4.0 * weights
