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
"""
from __future__ import annotations

from ..validate import one_of, whole
from .gemm import GEMM_PRECISIONS, gemm_time
from .gpus import Gpu

__all__ = ["CAUSAL_SHARE", "attention_kernel_time", "layer_kernel_time", "logits_kernel_time"]

CAUSAL_SHARE = 0.5
"""Share of the full attention products' time a causal kernel takes at the same shape."""


def _linear(m: int, n: int, k: int, g: Gpu | str, precision: str) -> tuple[float, float]:
    """(forward, backward) time of one linear GEMM ``M×N×K``: the product, then its two gradients, s."""
    fwd = gemm_time(m, n, k, gpu=g, precision=precision)
    return fwd, gemm_time(m, k, n, gpu=g, precision=precision) + gemm_time(k, n, m, gpu=g, precision=precision)


def _parts(value: int, by: int, name: str) -> int:
    """``value/by`` as a whole number of elements (at least one), ``ValueError`` naming ``name`` otherwise."""
    if value % by:
        raise ValueError(f"{name} must be a multiple of {by:,}, got {value!r}")
    return max(1, value // by)


def layer_kernel_time(*, hidden: int, ffn_hidden: int, seq_len: int, microbatch: int, tp: int = 1, cp: int = 1,
                      kv_heads_share: float = 1.0, gated_mlp: bool = False, gpu: Gpu | str,
                      precision: str = "bf16") -> tuple[float, float]:
    """(forward, backward) time of one layer's linear GEMMs for one micro-batch on one GPU, s.

    Shapes as the module lists them; ``kv_heads_share = kv_heads/heads``; ``precision`` the linear
    GEMMs' (``bf16``, ``fp16`` or ``fp8``).
    """
    h = whole("hidden", hidden, low=1, integral_only=False)
    f = whole("ffn_hidden", ffn_hidden, low=1, integral_only=False)
    t = whole("tp", tp, low=1, integral_only=False)
    c = whole("cp", cp, low=1, integral_only=False)
    tokens = whole("microbatch", microbatch, low=1, integral_only=False) * _parts(
        whole("seq_len", seq_len, low=1, integral_only=False), c, "seq_len")
    one_of("precision", precision, GEMM_PRECISIONS)
    qkv = max(1, round((h + 2 * h * kv_heads_share) / t))
    shapes = ((tokens, qkv, h), (tokens, h, _parts(h, t, "hidden")),
              (tokens, (2 if gated_mlp else 1) * _parts(f, t, "ffn_hidden"), h),
              (tokens, h, _parts(f, t, "ffn_hidden")))
    times = [_linear(m, n, k, gpu, precision) for m, n, k in shapes]
    return sum(x[0] for x in times), sum(x[1] for x in times)


def attention_kernel_time(*, hidden: int, heads: int, seq_len: int, microbatch: int, tp: int = 1, cp: int = 1,
                          gpu: Gpu | str) -> float:
    """Forward time of one layer's causal attention products for one micro-batch on one GPU, s (16-bit)."""
    h = whole("hidden", hidden, low=1, integral_only=False)
    a = whole("heads", heads, low=1, integral_only=False)
    s = whole("seq_len", seq_len, low=1, integral_only=False)
    c = whole("cp", cp, low=1, integral_only=False)
    local = whole("microbatch", microbatch, low=1, integral_only=False) * _parts(
        a, whole("tp", tp, low=1, integral_only=False), "heads")
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

