"""Chapter 6: attention as a causal kernel does it, and the FLOP conventions the sources count in
(issue 43, item 2).

Attention's two products, ``QKᵀ`` and scores × ``V``, cost ``2·s²·h`` FLOPs each in the forward
pass of one sequence of ``s`` tokens through one layer of width ``h = heads × head_dim`` (grouped
key/value heads do not change it: every query head still scores every key). A causal mask lets a
token see only the tokens before it, so a causal kernel (FlashAttention 2 and 3 skip the blocks
above the diagonal) does about half: ``s(s+1)/2`` of the ``s²`` pairs, counted here as exactly
half, as FlashAttention's own benchmarks count it.

The sources count a training step's FLOPs in different ways, so an MFU or a TFLOP/s figure is only
comparable with another on the same convention (``CONVENTIONS``):

=====================  ==================================================================================
``megatron``           ``3·T·(l·(linear + 4sh) + 2Vh)``: every GEMM by the layer's shape and full (not
                       causal) attention. Narayanan et al. (2021) eq. 3 without its recompute pass,
                       ``72·B·s·l·h²(1 + s/6h + V/12hl)`` when ``f = 4h``, no GQA, no gate; Korthikanti
                       et al. (2022) eq. 7; NeMo's ``perf_metrics`` (quoted in ``measurements.csv``).
``megatron_recompute`` the same plus a second forward of every layer (full activation recomputation):
                       Narayanan et al.'s eq. 3 as printed, ``96·B·s·l·h²(1 + s/6h + V/16hl)``, the basis
                       of the rows whose ``flops_basis`` is ``hardware``.
``causal``             ``megatron`` with the attention products halved: what a causal kernel executes,
                       and the count behind Megatron-Bridge 25.11's printed TFLOP/s (its five rows
                       in ``measurements.csv`` to 0.1 %).
``six_n``              ``6·N·T``, ``N`` the weights the step multiplies (the layers' matrices and the
                       output layer; the input embedding is a lookup): no attention at all.
``six_n_attention``    ``6·N·T + 12·l·h·s·T`` (PaLM's appendix B; torchtitan): the same sum as
                       ``megatron``, reached from the parameter count.
=====================  ==================================================================================

``T`` tokens per step, ``l`` layers, ``V`` vocabulary, ``linear`` the forward FLOPs of a layer's
matrices per token (``layer_flops``). Norms, biases, softmax and activations are left out by all five.
"""
from __future__ import annotations

from ..validate import one_of, real, whole
from .predict import layer_flops

__all__ = ["CONVENTIONS", "attention_flops", "convert_flop_rate", "step_flops"]

CONVENTIONS = ("megatron", "megatron_recompute", "causal", "six_n", "six_n_attention")
"""The FLOP counts a source's MFU or TFLOP/s can be on (see the module's table)."""


def attention_flops(*, seq_len: int, hidden: int, causal: bool = False) -> float:
    """Forward FLOPs of one layer's attention products for one sequence: ``4·s²·h``, half if ``causal``.

    ``QKᵀ`` (``2·s²·h``) and scores × ``V`` (``2·s²·h``) over all heads; a causal kernel skips the
    masked half. The backward pass does twice the forward, so a step does three times this.
    """
    s = whole("seq_len", seq_len, low=1, integral_only=False)
    h = whole("hidden", hidden, low=1, integral_only=False)
    if causal not in (True, False):
        raise ValueError(f"causal must be True or False, got {causal!r}")
    full = 4.0 * s * s * h
    return full / 2.0 if causal else full


def step_flops(convention: str, *, layers: int, hidden: int, seq_len: int, vocab: int, tokens: float,
               ffn_hidden: int | None = None, heads: int | None = None, kv_heads: int | None = None,
               gated_mlp: bool = False) -> float:
    """FLOPs of one training step of ``tokens`` tokens under ``convention`` (one of ``CONVENTIONS``).

    Shape as ``predict_run`` takes it: ``ffn_hidden`` defaults to ``4h``; ``kv_heads/heads`` is the
    share of key/value heads (grouped-query attention); ``gated_mlp`` a SwiGLU MLP of three matrices.
    """
    one_of("convention", convention, CONVENTIONS)
    l = whole("layers", layers, low=1, integral_only=False)
    h = whole("hidden", hidden, low=1, integral_only=False)
    s = whole("seq_len", seq_len, low=1, integral_only=False)
    v = whole("vocab", vocab, low=0, integral_only=False)
    t = real("tokens", tokens, unit="tokens")
    f = 4 * h if ffn_hidden is None else whole("ffn_hidden", ffn_hidden, low=1, integral_only=False)
    kv_share = 1.0
    if heads is not None:
        a = whole("heads", heads, low=1, integral_only=False)
        kv_share = (a if kv_heads is None else whole("kv_heads", kv_heads, low=1, high=a, integral_only=False)) / a
    elif kv_heads is not None:
        raise ValueError(f"kv_heads must be None when heads is None, got {kv_heads!r}")
    linear, _ = layer_flops(hidden=h, seq_len=s, ffn_hidden=f, kv_share=kv_share, gated_mlp=bool(gated_mlp))
    per_token_attention = attention_flops(seq_len=s, hidden=h, causal=convention == "causal") / s
    logits = 2.0 * v * h
    if convention == "six_n":
        per_token_attention = 0.0
    passes = 4.0 if convention == "megatron_recompute" else 3.0
    return t * (l * (passes * linear + passes * per_token_attention) + 3.0 * logits)


def convert_flop_rate(value: float, *, source: str, target: str, **shape: object) -> float:
    """An MFU, or a TFLOP/s, counted under ``source`` re-counted under ``target``.

    The step time and the peak are the same whatever is counted, so the figure scales with the
    FLOP counts: ``value × step_flops(target) / step_flops(source)`` (``shape``: ``step_flops``'s
    keywords; ``tokens`` cancels and defaults to 1).
    """
    x = real("value", value, unit="")
    shape = {"tokens": 1.0, **shape}
    one_of("source", source, CONVENTIONS)
    one_of("target", target, CONVENTIONS)
    return x * step_flops(target, **shape) / step_flops(source, **shape)  # type: ignore[arg-type]
