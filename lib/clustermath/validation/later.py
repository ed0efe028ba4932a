"""Chapter 6: runs the model never saw, from later releases of a source it was validated on.

Megatron-Bridge's performance archive (``later_releases.csv``: ``docs/performance-summary-archive.md`` of
NVIDIA-NeMo/Megatron-Bridge at commit 067f987, 2026-08-22) prints, release by release from 25.09 to 26.06,
the tokens per second per GPU of Llama 3 8B and 70B and Llama 3.1 405B pre-training in FP8 on DGX-H100,
DGX-B200 and DGX-GB200 systems. The chapter's data holds five of those lines (25.11's H100 and B200 runs,
``measurements.csv``'s ``megatronbridge2025perf`` rows); every other line was read after the model and its
constants were fixed, and nothing is fitted on it. Lines on GPUs without a ``gpus.Gpu`` record (GB300,
B300) and in a precision the model has no rate for (NVFP4) are not in the file.

``later_config`` turns a line into ``predict_run``'s keywords by one rule, fixed before any error was
looked at: the model's shape and the stack's switches (overlap, FlashAttention, gated MLP, the gradient's
bytes, the scale-out link) from the chapter's 25.11 row of the same model, the GPU by name (its peaks,
NVLink, domain and HBM from its record), the layout as printed, FSDP (a sharding group above 0) as
``full`` sharding and otherwise Megatron's distributed optimizer, sequence parallelism with tensor
parallelism, and every FP8 recipe (current scaling, MX blocks, 32×32 blocks) as ``fp8``: the model has one
FP8 rate. Lines that give the model the same inputs are one *case* (the chapter's input sets): one
prediction, compared with the mean of their measured figures, counted once. Needs pandas.
"""
from __future__ import annotations

import functools
from pathlib import Path

import pandas as pd

from . import measurements as m
from .gpus import gpu
from .predict import predict_run

__all__ = ["LATER_RELEASES", "SHAPE_ROWS", "gb200_over_b200", "later_cases", "later_config", "later_summary",
           "load_later"]

LATER_RELEASES = Path(__file__).with_name("later_releases.csv")
"""One line per printed figure: release, system, GPU record, model, precision as printed, layout,
tokens/s/GPU and model TFLOP/s/GPU, and where in the archive."""

SHAPE_ROWS = {"LLAMA3_8B": "mbridge25-h100-llama3-8b", "LLAMA3_70B": "mbridge25-h100-llama3-70b",
              "LLAMA3.1_405B": "mbridge25-h100-llama31-405b"}
"""The chapter's row whose model shape and stack switches a later line of each model reuses."""

_FROM_CHAPTER_ROW = ("layers", "hidden", "heads", "kv_heads", "ffn_hidden", "vocab", "overlap", "flash_attention",
                     "gated_mlp", "scale_out_GBps", "grad_bytes", "recompute")
_CASE_INPUTS = ("gpu", "layers", "seq_len", "global_batch", "microbatch", "gpus", "tp", "pp", "cp",
                "virtual_stages", "sharding")


@functools.lru_cache(maxsize=None)
def load_later() -> pd.DataFrame:
    """``later_releases.csv`` indexed by ``id``, with ``in_chapter``: the line is one of the chapter's rows
    (the same GPU, model, GPU count and batch, and the same figure: the row's tokens/s over its GPUs)."""
    frame = pd.read_csv(LATER_RELEASES, dtype={"release": str}).set_index("id")
    data = m.load_measurements()
    chapter = {(str(c["gpu_type"]), int(c["layers"]), int(c["gpus"]), int(c["global_batch"]),
                int(c["value"]) // int(c["gpus"])) for _, c in data[data["key"] == "megatronbridge2025perf"].iterrows()}
    layers = {model: int(m.run_config(row)["layers"]) for model, row in SHAPE_ROWS.items()}
    frame["in_chapter"] = [(r["gpu_type"], layers[r["model"]], int(r["gpus"]), int(r["global_batch"]),
                            int(r["tokens_per_s_per_gpu"])) in chapter for _, r in frame.iterrows()]
    return frame


def later_config(line: str | pd.Series, *, data_sheet_peak: bool = False) -> dict:
    """``predict_run``'s keywords for one line of ``later_releases.csv`` (by id or as a row), by the
    module's rule; ``data_sheet_peak`` times the GPU at its data sheet's 16-bit peak instead of the
    record's timed one (they differ for a GB200 alone: ``gpus.Gpu.timed_bf16_tflops``)."""
    r = load_later().loc[line] if isinstance(line, str) else line
    base = m.run_config(SHAPE_ROWS[str(r["model"])], accepts=predict_run)
    tp = int(r["tp"])
    return {**{k: base[k] for k in _FROM_CHAPTER_ROW if k in base},
            "seq_len": int(r["seq_len"]), "global_batch": int(r["global_batch"]), "microbatch": int(r["microbatch"]),
            "gpus": int(r["gpus"]), "tp": tp, "pp": int(r["pp"]), "cp": int(r["cp"]),
            "virtual_stages": 1 if pd.isna(r["virtual_stages"]) else int(r["virtual_stages"]),
            "gpu": str(r["gpu_type"]), "precision": "fp8", "sharding": "full" if int(r["fsdp"]) > 0 else "optimizer",
            "sequence_parallel": tp > 1,
            **({"peak_tflops": gpu(str(r["gpu_type"])).bf16_tflops} if data_sheet_peak else {})}


def later_cases(*, data_sheet_peak: bool = False) -> pd.DataFrame:
    """One line per case: its lines' ids, releases and precisions, whether the chapter's data holds one
    of them, the mean measured and the predicted tokens/s/GPU, and the error ``predicted/measured − 1``
    (``data_sheet_peak``: as ``later_config``)."""
    frame = load_later()
    configs = {i: later_config(r, data_sheet_peak=data_sheet_peak) for i, r in frame.iterrows()}
    keys = {i: tuple(c[k] for k in _CASE_INPUTS) for i, c in configs.items()}
    cases = []
    for key in dict.fromkeys(keys.values()):
        ids = [i for i in frame.index if keys[i] == key]
        first = frame.loc[ids[0]]
        config = configs[ids[0]]
        predicted = predict_run(**config).tokens_per_s / config["gpus"]
        measured = float(frame.loc[ids, "tokens_per_s_per_gpu"].mean())
        cases.append({
            "ids": ", ".join(ids), "lines": len(ids), "system": first["system"], "model": first["model"],
            "releases": ", ".join(sorted(set(frame.loc[ids, "release"]), key=_release_order)),
            "precisions": ", ".join(dict.fromkeys(frame.loc[ids, "precision"])),
            "gpus": config["gpus"], "layout": _layout(first), "in_chapter": bool(frame.loc[ids, "in_chapter"].any()),
            "measured": measured, "predicted": predicted, "error": predicted / measured - 1.0})
    return pd.DataFrame(cases)


def _release_order(release: str) -> tuple[int, ...]:
    """A release's place in time: ``"26.04.01"`` after ``"26.04"``, both after ``"25.11"``."""
    return tuple(int(x) for x in release.split("."))


def _layout(r: pd.Series) -> str:
    """A line's layout as the chapter prints it, parts joined by ", " (each part kept on one line there):
    ``"TP 4 · PP 16, CP 1 · VP 4, MBS 1 · GBS 1,536"``, then ``", FSDP 64"`` for a sharding group."""
    vp = "" if pd.isna(r["virtual_stages"]) else f" · VP {int(r['virtual_stages'])}"
    fsdp = f", FSDP {int(r['fsdp'])}" if int(r["fsdp"]) else ""
    return (f"TP {int(r['tp'])} · PP {int(r['pp'])}, CP {int(r['cp'])}{vp}, "
            f"MBS {int(r['microbatch'])} · GBS {int(r['global_batch']):,}{fsdp}")


def later_summary(cases: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per system and over all, the cases the chapter's data does not hold: how many, the median |error|,
    the median signed error, and the worst case (its ids and error)."""
    cases = later_cases() if cases is None else cases
    new = cases[~cases["in_chapter"]]
    groups = [(s, new[new["system"] == s]) for s in dict.fromkeys(new["system"])] + [("all", new)]
    out = []
    for name, part in groups:
        worst = part["error"].abs().idxmax()
        out.append({"group": name, "cases": len(part), "median_abs_error": float(part["error"].abs().median()),
                    "median_error": float(part["error"].median()), "worst": part.at[worst, "ids"],
                    "worst_error": float(part.at[worst, "error"])})
    return pd.DataFrame(out).set_index("group")


def gb200_over_b200() -> pd.DataFrame:
    """Every run printed for both a DGX-GB200 and a DGX-B200 in one release, with one model, precision and
    layout: tokens/s/GPU on the GB200 over the B200's, beside the ratio of their data sheets' 16-bit peaks."""
    frame = load_later()
    same = ["release", "model", "precision", "gpus", "global_batch", "microbatch", "fsdp", "tp", "pp", "cp"]
    gb, b = frame[frame["system"] == "DGX-GB200"], frame[frame["system"] == "DGX-B200"]
    pairs = gb.reset_index().merge(b.reset_index(), on=same, suffixes=("_gb200", "_b200"))
    pairs = pairs[pairs["virtual_stages_gb200"].fillna(0) == pairs["virtual_stages_b200"].fillna(0)]
    pairs["ratio"] = pairs["tokens_per_s_per_gpu_gb200"] / pairs["tokens_per_s_per_gpu_b200"]
    pairs["peak_ratio"] = gpu("GB200").bf16_tflops / gpu("B200").bf16_tflops
    return pairs[same[:3] + ["id_gb200", "id_b200", "ratio", "peak_ratio"]]
