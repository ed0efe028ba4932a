"""Chapter 6: what each of issue 43's switches moves, source by source, on the rows ``holdout`` validates.

Each *variant* predicts every throughput row ``holdout`` counts as ``validation`` with one change:

``today``     ``predict_run`` at its calibrated defaults (``holdout``'s own errors; attention causal);
``by_name``   the GPU by name: a row's peak, NVLink, domain and HBM come from its ``gpu_type``'s
              ``Gpu`` record instead of the row's columns (rows on a part with no record unchanged);
``full_attention`` ``causal_attention=False``: the attention products counted in full, the default
              before issue 43 (twice a causal kernel's work);
``no_loss``   ``loss_bytes=0``: the loss over the vocabulary moves no memory traffic, the model before
              ``loss_time`` (the last stage's softmax and cross entropy, ``LOSS_BYTES`` a logit);
``attention_fa`` today's path with the attention products timed as FlashAttention's fused kernel at a
              published benchmark's rates (``attention_kernel``, ``kernels.attention_table_time``): on a row
              whose stack runs FlashAttention, on a GPU family with that kernel's point (H100, H200), by
              ``kernels_fa``'s rule (``fa3`` under Transformer Engine, ``fa2`` elsewhere); other rows as
              ``today``. The linear layers keep today's rate;
``kernels``   ``kernels=True`` with the row's GPU (every GEMM timed from its shape by ``gemm_time``)
              where the GPU has a GEMM table; elsewhere (A100) ``today`` unchanged;
``kernels_fa`` ``kernels`` with attention at a FlashAttention benchmark's rates (``attention_kernel``):
              ``fa3`` for a stack built on Transformer Engine (its cuDNN fused attention runs at
              FlashAttention-3's speed on long sequences), ``fa2`` for any other (flash-attn 2, PyTorch's
              SDPA); a GPU family without a point (Blackwell) keeps ``kernels``. The rule is the stack's
              ``software`` column, fixed before any error was looked at;
``kernels_fp8`` ``kernels_fa`` with the FP8 casts as memory traffic on FP8 rows (``fp8_casts``): ``dynamic``
              for torchtitan's float8 (its ``software`` names float8), ``te`` for every other FP8 stack
              (Transformer Engine; llm-foundry's FP8 also runs through it);
``dp_rings``  ``dp_latency="rings_trees"``: the data-parallel collectives timed as NCCL's tuner times
              them (a ring's 2(n−1) steps or a tree's ⌊log₂ N⌋ levels, the faster, at NCCL's own
              per-step latencies, ``collectives.nccl_collective_time``); everything else as ``today``.

A variant that changes the step's timing has the chapter's solved constants (``CALIBRATION`` rows with a
run: ``kernel_efficiency``, ``kernel_half_width``, ``hopper_kernel_efficiency``) refitted on their own
rows with the switch on, as today's are fitted without it; a row the variant times from kernels fits
nothing (the kernel constants come from GEMM tables only) and its constant keeps its default. Errors
are ``predicted / measured − 1``. Needs pandas: import as ``from clustermath.validation import ablation``.

Three more views of the same errors. ``ablation_by_family``: per row family, a GPU generation and the
linear layers' precision (``row_family``), the median |error| and the median signed error read as speed
(``speed_error``). ``loso_by_variant``: leave one source out (``holdout``'s plan) with each switch on.
``kernel_gap``: why ``kernels`` comes out 30–45% fast on the Megatron-Core rows on H100. No FLOP is
missing (a layer's GEMMs from ``kernels.layer_gemm_shapes``, forward and both gradients, carry exactly
``predict.layer_flops``' linear count; bubble, recomputation and output layer are charged alike); the
rate differs: the GEMM tables give those rows' linear layers 1.4–1.6 times the rate today's model keeps,
whose Hopper efficiency was fitted on a training row (``efficiency_ratio``: 0.71 of the tables' η). The
gap is no larger on narrow models, so it is not memory-bound work left out; it is what a training step
loses between and beside its GEMMs, which the kernel path may not learn from a training row (issue 43's
rule): a limit of the model.
"""
from __future__ import annotations

import dataclasses
import functools

import pandas as pd

from ..validate import one_of
from . import holdout, measurements as m
from .gemm import GEMM_CONSTANTS, KERNEL_FAMILY, gemm_time
from .gpus import GPUS
from .inputs import FP8_GEMM_EFFICIENCY, KERNEL_EFFICIENCY, KERNEL_EFFICIENCY_HOPPER, KERNEL_HALF_WIDTH
from .kernels import ATTENTION_POINTS, layer_gemm_shapes
from .predict import CALIBRATION, kernel_share, layer_flops, predict_run, refit_solved

__all__ = ["ABLATIONS", "FAMILIES", "ablation_by_family", "ablation_config", "ablation_errors", "ablation_summary",
           "efficiency_ratio", "gemm_rates", "kernel_gap", "kernel_gap_rows", "loso_by_variant", "loso_errors",
           "refit_for", "row_family", "speed_error"]

ABLATIONS = ("today", "by_name", "full_attention", "no_loss", "attention_fa", "kernels", "kernels_fa", "kernels_fp8",
             "dp_rings")
"""The variants, in the order the summary prints them."""

_HARDWARE = ("peak_tflops", "scale_up_GBps", "scale_up_gpus", "memory_TBps")


def ablation_config(variant: str, row: str) -> dict:
    """``predict_run``'s arguments for throughput row ``row`` under ``variant``."""
    one_of("variant", variant, ABLATIONS)
    config = m.run_config(row, accepts=predict_run)
    part = str(m.load_measurements().loc[row, "gpu_type"])
    if variant == "by_name" and part in GPUS:
        return {**{k: x for k, x in config.items() if k not in _HARDWARE}, "gpu": part}
    if variant in ("kernels", "kernels_fa", "kernels_fp8") and part in KERNEL_FAMILY:
        software = str(m.load_measurements().loc[row, "software"])
        kernel = _attention_kernel_of(row)
        fa = variant != "kernels" and (KERNEL_FAMILY[part], kernel) in ATTENTION_POINTS
        casts = variant == "kernels_fp8" and config.get("precision") == "fp8"
        return {**config, "kernels": True, "gpu": part, **({"attention_kernel": kernel} if fa else {}),
                **({"fp8_casts": "dynamic" if "float8" in software else "te"} if casts else {})}
    if variant == "attention_fa" and part in KERNEL_FAMILY and config.get("flash_attention") and config.get("heads"):
        kernel = _attention_kernel_of(row)
        return {**config, "gpu": part, "attention_kernel": kernel} if (KERNEL_FAMILY[part], kernel) in \
            ATTENTION_POINTS else config
    if variant == "full_attention":
        return {**config, "causal_attention": False}
    if variant == "no_loss":
        return {**config, "loss_bytes": 0.0}
    if variant == "dp_rings":
        return {**config, "dp_latency": "rings_trees"}
    return config


def _attention_kernel_of(row: str) -> str:
    """The FlashAttention a row's stack runs, by the rule fixed before any error was seen: ``fa3`` for a
    stack built on Transformer Engine (cuDNN's fused attention), ``fa2`` for any other."""
    return "fa3" if "Transformer Engine" in str(m.load_measurements().loc[row, "software"]) else "fa2"


@functools.lru_cache(maxsize=None)
def refit_for(variant: str, sweeps: int = 6) -> tuple[tuple[str, float], ...]:
    """The solved constants refitted with ``variant``'s switch on their rows (none for ``today``, ``by_name``)."""
    one_of("variant", variant, ABLATIONS)
    if variant in ("today", "by_name"):
        return ()
    solved = [c for c in CALIBRATION if c.run]
    fixed = _refit(variant, solved, {c.constant: c.value for c in CALIBRATION}, sweeps)
    return tuple((c.constant, fixed[c.constant]) for c in solved)


def _refit(variant: str, solved: list, fixed: dict[str, float], sweeps: int) -> dict[str, float]:
    """``fixed`` with each of ``solved``'s constants (``Calibration`` rows with a run) refitted on its row under
    ``variant``, in turn, ``sweeps`` times (Gauss–Seidel); a row the variant times from kernels fits nothing.
    Two variants that give every row the same run share one fit (``kernels``' three steps do on these rows)."""
    plan = []
    for c in solved:
        run = ablation_config(variant, c.row)
        plan.append((c, None if run.get("kernels") else tuple(sorted(run.items()))))
    return dict(_refit_plan(tuple(plan), tuple(sorted(fixed.items())), sweeps))


@functools.lru_cache(maxsize=None)
def _refit_plan(plan: tuple, fixed_items: tuple, sweeps: int) -> tuple[tuple[str, float], ...]:
    """``_refit``'s Gauss–Seidel on (calibration, run or ``None`` to skip) pairs, cached by them."""
    fixed = dict(fixed_items)
    refit_solved([(c, run) for c, run in plan if run is not None], fixed, sweeps=sweeps,
                 tolerance=-1.0)   # exactly ``sweeps`` sweeps
    return tuple(fixed.items())


def ablation_errors(variants: tuple[str, ...] = ABLATIONS) -> pd.DataFrame:
    """One line per validation throughput row: its source (``key``), GPU, precision and each variant's error."""
    rows = holdout.residuals("throughput")
    rows = rows[rows.role == "validation"]
    data = m.load_measurements()
    fits = {v: dict(refit_for(v)) for v in variants}
    out = []
    for rid, r in rows.iterrows():
        line = {"id": rid, "key": r["key"], "gpu_type": data.loc[rid, "gpu_type"],
                "precision": data.loc[rid, "precision"]}
        for v in variants:
            predicted = holdout.predicted_value(predict_run(**{**ablation_config(v, rid), **fits[v]}), rid)
            line[v] = predicted / float(r["measured"]) - 1.0
        out.append(line)
    return pd.DataFrame(out).set_index("id")


def ablation_summary(errors: pd.DataFrame | None = None) -> pd.DataFrame:
    """Median |error| per source and variant, in percent, with the row count; last line: all rows pooled."""
    frame = ablation_errors() if errors is None else errors
    variants = [v for v in ABLATIONS if v in frame.columns]
    table = frame.groupby("key")[variants].agg(lambda e: 100.0 * e.abs().median())
    table.loc["pooled"] = [100.0 * frame[v].abs().median() for v in variants]
    table.insert(0, "rows", [*frame.groupby("key").size(), len(frame)])
    return table


# -- row families: what each switch moved, family by family ---------------------------------------------

GENERATIONS = (("Ampere", ("A100", "Ampere")), ("Hopper", ("H100", "H200")), ("Blackwell", ("B200", "GB200")))
"""A GPU generation and the starts of the ``gpu_type`` names that belong to it."""
FAMILIES = tuple(f"{g} {p}" for g, _ in GENERATIONS for p in ("16-bit", "FP8"))
"""Every family a row can fall in, in the order ``ablation_by_family`` prints them."""


def row_family(gpu_type: str, precision: str) -> str:
    """A row's family: its GPU's generation (by the start of ``gpu_type``: A100 and A100-class parts are
    Ampere, H100 and H200 Hopper, B200 and GB200 Blackwell) and its linear layers' precision (``fp16`` and
    ``bf16`` are 16-bit, ``fp8`` FP8). The rule reads two columns of the data and was fixed before any
    family's error was computed; ``ValueError`` names a part or a precision outside it."""
    one_of("precision", precision, ("fp16", "bf16", "fp8"))
    for generation, starts in GENERATIONS:
        if str(gpu_type).startswith(starts):
            return f"{generation} {'FP8' if precision == 'fp8' else '16-bit'}"
    raise ValueError(f"gpu_type must start with one of {[s for _, x in GENERATIONS for s in x]!r}, got {gpu_type!r}")


def speed_error(error: float, row: str) -> float:
    """A row's error read as speed, predicted over measured − 1: a throughput figure's error as it is, a step
    time's ``e`` as ``1/(1 + e) − 1``; so a positive error always means the prediction is faster."""
    return 1.0 / (1.0 + error) - 1.0 if m.comparable(row)[0] in ("step_s", "iteration_s") else error


def ablation_by_family(errors: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per row family (``row_family``) and variant: the median |error| (column ``<variant>``) and the median
    signed error read as speed (``<variant>_signed``, ``speed_error``: positive is faster than measured), in
    percent, with the row count; families without rows left out; last line ``pooled``, all rows. ``errors``
    is ``ablation_errors``' frame (computed if not given)."""
    frame = ablation_errors() if errors is None else errors
    variants = [v for v in ABLATIONS if v in frame.columns]
    speed = frame[variants].apply(lambda col: [speed_error(x, rid) for rid, x in col.items()])
    family = pd.Series([row_family(g, p) for g, p in zip(frame["gpu_type"], frame["precision"])], index=frame.index)
    out = []
    for name, part in [*((f, frame[family == f]) for f in FAMILIES), ("pooled", frame)]:
        if len(part):
            line: dict[str, object] = {"family": name, "rows": len(part)}
            for v in variants:
                line[v] = 100.0 * part[v].abs().median()
                line[f"{v}_signed"] = 100.0 * speed.loc[part.index, v].median()
            out.append(line)
    return pd.DataFrame(out).set_index("family")


# -- leave one source out, switch by switch -----------------------------------------------------------

@functools.lru_cache(maxsize=None)
def _loso_constants(variant: str, source: str, sweeps: int = 6) -> tuple[tuple[str, float], ...]:
    """Every constant ``holdout``'s leave-one-source-out fits without ``source``, its solved ones then refitted
    on the same rows with ``variant``'s switch on (as ``refit_for`` does on the chapter's rows)."""
    plan, fixed = holdout._loso_fit(source)
    if variant in ("today", "by_name"):
        return fixed
    calibrations = {c.constant: c for c in CALIBRATION}
    solved = [dataclasses.replace(calibrations[k], row=r) for k, r, _ in plan if r and calibrations[k].run]
    return tuple(_refit(variant, [c for c in solved if c.run], dict(fixed), sweeps).items())


def loso_errors(variant: str, sources: tuple[str, ...] | None = None) -> pd.DataFrame:
    """``holdout.leave_one_source_out``'s rows (the throughput rows the single split fits or validates; of
    ``sources``, every publication if ``None``), each predicted
    under ``variant`` with the constants fitted without its own publication (``_loso_constants``): columns
    ``publication``, ``inputs`` (its input set) and ``error`` (``predicted / measured − 1``)."""
    one_of("variant", variant, ABLATIONS)
    single = holdout.residuals("throughput")
    sets = holdout.input_sets(single)
    frame = single[single["role"].isin(("calibration", "validation"))]
    if sources is not None:
        frame = frame[frame["publication"].isin(sources)]
    out = []
    for rid, r in frame.iterrows():
        constants = dict(_loso_constants(variant, r["publication"]))
        predicted = holdout.predicted_value(predict_run(**{**ablation_config(variant, rid), **constants}), rid)
        out.append({"id": rid, "publication": r["publication"], "inputs": sets[rid],
                    "error": predicted / r["measured"] - 1.0})
    return pd.DataFrame(out).set_index("id")


def loso_by_variant(variants: tuple[str, ...] = ABLATIONS, sources: tuple[str, ...] | None = None) -> pd.DataFrame:
    """Leave one source out for each variant: the pooled median |error| over the input sets (as
    ``holdout.loso_summary`` counts it, in percent), the worst source (the highest median) and its median,
    and the worst row and its |error|."""
    out = []
    for v in variants:
        frame = loso_errors(v, sources)
        per_source = {s: holdout._per_set(part["error"], frame["inputs"]).median()
                      for s, part in frame.groupby("publication", sort=False)}
        worst_source = max(per_source, key=per_source.get)
        worst_row = frame["error"].abs().idxmax()
        out.append({"variant": v, "pooled": 100.0 * holdout._per_set(frame["error"], frame["inputs"]).median(),
                    "worst_source": worst_source, "worst_source_median": 100.0 * per_source[worst_source],
                    "worst_row": worst_row, "worst_row_error": 100.0 * abs(frame.at[worst_row, "error"])})
    return pd.DataFrame(out).set_index("variant")


# -- the kernel gap: why ``kernels`` is fast on Megatron-Core's H100 rows ------------------------------

def kernel_gap_rows() -> list[str]:
    """The rows the kernel gap is read on, by a rule on the data's columns alone: validation throughput
    rows on an ``H100-SXM5-80GB`` whose ``software`` names Megatron-Core (NeMo 24.07, MLPerf's NeMo 23.09,
    Megatron-Bridge)."""
    rows = holdout.residuals("throughput")
    data = m.load_measurements()
    return [rid for rid in rows.index[rows.role == "validation"]
            if data.at[rid, "gpu_type"] == "H100-SXM5-80GB" and "Megatron-Core" in str(data.at[rid, "software"])]


def gemm_rates(row: str) -> tuple[float, float, float]:
    """(today's rate, the kernel path's rate, kernel FLOPs ÷ analytic FLOPs) of throughput row ``row``'s linear
    GEMMs on one GPU, TFLOP/s, for one micro-batch of one layer, forward and both gradients.

    Today: ``P · η(h) · k`` (``predict.kernel_share`` at the Hopper efficiency on a peak above 400 TFLOP/s,
    else the Ampere one; ``k = 2·fp8_efficiency`` with FP8). ``ValueError`` for a part without a GEMM table. Kernel path: ``Σ 6·M·N·K / Σ (t(M,N,K) + t(M,K,N) + t(K,N,M))``
    over ``kernels.layer_gemm_shapes`` with ``gemm.gemm_time``. The FLOP ratio sets ``Σ 2·M·N·K`` against
    ``T/t · layer_flops`` (linear): 1 when the kernel path counts the analytic work."""
    run = m.run_config(row, accepts=predict_run)
    part = str(m.load_measurements().loc[row, "gpu_type"])
    h, tp, fp8 = run["hidden"], run["tp"], run.get("precision") == "fp8"
    f = run.get("ffn_hidden") or 4 * h
    kv = (run.get("kv_heads") or run["heads"]) / run["heads"]
    gated = bool(run.get("gated_mlp"))
    shapes = layer_gemm_shapes(hidden=h, ffn_hidden=f, seq_len=run["seq_len"], microbatch=run["microbatch"], tp=tp,
                               cp=run.get("cp", 1), kv_heads_share=kv, gated_mlp=gated)
    precision = "fp8" if fp8 else "bf16"
    flops = sum(2.0 * a * b * c for a, b, c in shapes)
    seconds = sum(gemm_time(a, b, c, gpu=part, precision=precision) + gemm_time(a, c, b, gpu=part, precision=precision)
                  + gemm_time(c, b, a, gpu=part, precision=precision) for a, b, c in shapes)
    tokens = run["microbatch"] * run["seq_len"] / run.get("cp", 1)
    analytic = tokens / tp * layer_flops(hidden=h, seq_len=run["seq_len"], ffn_hidden=f, kv_share=kv,
                                         gated_mlp=gated)[0]
    hopper = run["peak_tflops"] > 400.0  # as inputs.Constants.efficiency picks it
    eta = kernel_share(h, efficiency=KERNEL_EFFICIENCY_HOPPER if hopper else KERNEL_EFFICIENCY,
                       half_width=KERNEL_HALF_WIDTH)
    today = run["peak_tflops"] * eta * (2.0 * FP8_GEMM_EFFICIENCY if fp8 else 1.0)
    return today, 3.0 * flops / seconds / 1e12, flops / analytic


def kernel_gap(errors: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per row of ``kernel_gap_rows``: ``hidden``, ``precision``, the linear GEMMs' rate today and from the
    kernels (``today_tflops``, ``kernel_tflops``, TFLOP/s), their ratio (``rate_ratio``), the FLOP ratio
    (``flops_ratio``) and how much faster than measured the row is predicted today and with ``kernels``
    (``fast_today``, ``fast_kernels``: ``speed_error``; from ``errors``, ``ablation_errors``' frame with both
    columns, computed if not given)."""
    frame = ablation_errors(("today", "kernels")) if errors is None else errors
    out = []
    for rid in kernel_gap_rows():
        today, kernel, ratio = gemm_rates(rid)
        run = m.run_config(rid, accepts=predict_run)
        fast = {v: speed_error(frame.at[rid, v], rid) for v in ("today", "kernels")}
        out.append({"id": rid, "hidden": run["hidden"], "precision": run.get("precision"), "today_tflops": today,
                    "kernel_tflops": kernel, "rate_ratio": kernel / today, "flops_ratio": ratio,
                    "fast_today": fast["today"], "fast_kernels": fast["kernels"]})
    return pd.DataFrame(out).set_index("id")


def efficiency_ratio() -> float:
    """Today's Hopper efficiency (fitted on a training row) over the H100 BF16 GEMM tables' ``η``."""
    return KERNEL_EFFICIENCY_HOPPER / GEMM_CONSTANTS[("H100-SXM5-80GB", "bf16")].efficiency
