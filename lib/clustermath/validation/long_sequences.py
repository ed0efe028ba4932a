"""Chapter 6: long sequences, where the attention kernel's rate and a context-parallel ring's overhead
decide the step (issue 43, item 2).

NeMo's long-sequence page (``long_sequences.csv``: ``docs/source/performance/performance_long_sequence.md``
of NVIDIA/NeMo at commit 19fadb67, 2025-05-08) prints the TFLOP/s per GPU of two models pre-trained in
FP8 at a fixed batch of about four million tokens a step, the sequence growing from 4K to 1M tokens
(K = 1,024) and the GPUs with it, each run with its tensor-, pipeline-, data- and context-parallel sizes:

* Llama 2 7B on DGX-H100 (NeMo 24.03.01), nine runs from 4K to 1,024K;
* Llama 3 8B on DGX-B200 (NeMo 25.04.rc2), eight runs from 8K to 1,024K. In every one of its rows the
  printed sizes multiply to a quarter of the printed GPU count (``b200_size_mismatch``), so the table
  does not say how the runs were laid out, and its rows are not predicted.

Each H100 run becomes ``predict_run``'s keywords by one rule (``long_sequence_config``): the model's shape
and the stack's switches (FP8, the distributed optimizer, overlap, FlashAttention, SwiGLU, gradients at 2
bytes) from the chapter's NeMo 24.07 row of the same model (``SHAPE_ROW``); the GPU by name; the layout
as printed, one sequence a micro-batch (not printed), sequence parallelism with tensor parallelism and no
recomputation (assumed). The printed TFLOP/s are compared with the model's ``model_tflops_per_gpu``,
which counts the FLOPs as NeMo's ``perf_metrics`` does (attention in full, not halved for the causal mask;
the chapter's NeMo rows say where). The page's columns without context parallelism are not predicted:
their layouts are not printed.

``long_sequence_errors`` predicts each run four ways (``ATTENTION_WAYS``): the defaults, whose
context-parallel ring overhead was fitted on an 8,192-token row of another NeMo release; the same without
that overhead; and FlashAttention-2's or -3's published rate (``kernels.ATTENTION_POINTS``) without it.
Nothing is fitted on these rows; they were read after the model and its constants were fixed. Which
kernel NeMo 24.03 ran is not printed. Needs pandas.
"""
from __future__ import annotations

import functools
from pathlib import Path

import pandas as pd

from . import measurements as m
from .predict import predict_run

__all__ = ["ATTENTION_WAYS", "LONG_SEQUENCES", "SHAPE_ROW", "b200_size_mismatch", "load_long_sequences",
           "long_sequence_config", "long_sequence_errors", "long_sequence_summary"]

LONG_SEQUENCES = Path(__file__).with_name("long_sequences.csv")
"""One line per printed run: model, precision, container, system, GPU record, sequence (in K = 1,024
tokens), GPUs, global batch, TP, PP, DP, CP, TFLOP/s per GPU with context parallelism and without it (the
page's best layout without it, not printed), and where on the page."""

SHAPE_ROW = "nemo24-llama2-7b-8"
"""The chapter's row (NeMo 24.07, Llama 2 7B on 8 H100s) whose model shape and stack switches the H100
runs reuse."""

_FROM_SHAPE_ROW = ("layers", "hidden", "heads", "kv_heads", "ffn_hidden", "vocab", "precision", "sharding",
                   "overlap", "flash_attention", "gated_mlp", "grad_bytes")

ATTENTION_WAYS = {"today": {}, "no_ring": {"cp_attention_overhead": 0.0},
                  "fa2": {"attention_kernel": "fa2", "cp_attention_overhead": 0.0},
                  "fa3": {"attention_kernel": "fa3", "cp_attention_overhead": 0.0}}
"""How the attention is timed: ``today``, the defaults (the attention products at the GEMMs' rate, a
context-parallel ring's overhead ``CP_ATTENTION_OVERHEAD`` on top); ``no_ring``, the same without the
ring's overhead (one fused kernel's time, the default before); ``fa2`` and ``fa3``, FlashAttention-2's
or FlashAttention-3's published rate on the GPU (``attention_kernel``), without the ring's overhead."""


@functools.lru_cache(maxsize=None)
def _frame() -> pd.DataFrame:
    return pd.read_csv(LONG_SEQUENCES).set_index("id")


def load_long_sequences() -> pd.DataFrame:
    """``long_sequences.csv`` indexed by ``id``, with ``seq_len`` in tokens (``seq_len_k`` · 1,024) and
    ``sizes``, the product TP · PP · DP · CP of the printed parallel sizes."""
    frame = _frame().copy()
    frame["seq_len"] = frame["seq_len_k"] * 1024
    frame["sizes"] = frame["tp"] * frame["pp"] * frame["dp"] * frame["cp"]
    return frame


def b200_size_mismatch() -> pd.DataFrame:
    """The B200 rows: printed GPUs, the product of the printed sizes, and their ratio (4 in every row)."""
    frame = load_long_sequences()
    b200 = frame[frame["gpu_type"] == "B200-SXM-180GB"]
    return pd.DataFrame({"gpus": b200["gpus"], "sizes": b200["sizes"], "ratio": b200["gpus"] / b200["sizes"]})


def long_sequence_config(line: str | pd.Series) -> dict:
    """``predict_run``'s keywords for one H100 run of the page (by id or as a row), by the module's rule.
    ``ValueError`` for a row whose printed sizes do not multiply to its GPUs (the B200 table's)."""
    r = load_long_sequences().loc[line] if isinstance(line, str) else line
    if int(r["sizes"]) != int(r["gpus"]):
        raise ValueError(f"line must be a run whose TP·PP·DP·CP is its GPU count, got {int(r['sizes']):,} for "
                         f"{int(r['gpus']):,} GPUs ({r.name})")
    base = m.run_config(SHAPE_ROW, accepts=predict_run)
    tp = int(r["tp"])
    return {**{k: base[k] for k in _FROM_SHAPE_ROW}, "gpu": str(r["gpu_type"]), "seq_len": int(r["seq_len"]),
            "global_batch": int(r["global_batch"]), "microbatch": 1, "gpus": int(r["gpus"]), "tp": tp,
            "pp": int(r["pp"]), "cp": int(r["cp"]), "sequence_parallel": tp > 1, "recompute": "none"}


def long_sequence_errors() -> pd.DataFrame:
    """One line per H100 run: sequence (K), GPUs, TP, PP, DP, CP, the printed TFLOP/s per GPU and, for each
    of ``ATTENTION_WAYS``, the predicted model TFLOP/s per GPU and the error ``predicted/measured − 1``."""
    frame = load_long_sequences()
    lines = []
    for run, r in frame[frame["sizes"] == frame["gpus"]].iterrows():
        config = long_sequence_config(r)
        line = {"id": run, **{k: int(r[k]) for k in ("seq_len_k", "gpus", "tp", "pp", "dp", "cp")},
                "measured": float(r["tflops_per_gpu"])}
        for way, switch in ATTENTION_WAYS.items():
            predicted = predict_run(**config, **switch).model_tflops_per_gpu
            line[f"predicted_{way}"], line[f"error_{way}"] = predicted, predicted / line["measured"] - 1.0
        lines.append(line)
    return pd.DataFrame(lines).set_index("id")


def long_sequence_summary(errors: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per way of timing attention: the runs, the median |error|, the lowest and the highest error."""
    errors = long_sequence_errors() if errors is None else errors
    return pd.DataFrame([{"way": way, "runs": len(errors), "median_abs_error": errors[f"error_{way}"].abs().median(),
                          "lowest": errors[f"error_{way}"].min(), "highest": errors[f"error_{way}"].max()}
                         for way in ATTENTION_WAYS]).set_index("way")
