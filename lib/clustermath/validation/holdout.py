"""Chapter 6: calibrate, then validate. Every model of the book against the measured rows it did not see.

For each family of ``measurements.csv`` one model (or a few) predicts what a row
measured, from the row's own configuration and, where the model has free
constants, from the rows those constants were fitted on (``CALIBRATION`` in
``predict``; at most a fifth of a family). Each predicted row is one
``Residual``, with a role:

``calibration``
    the row a constant was fitted on, or the measured reference a prediction
    scales from: its error says nothing about the model;
``validation``
    a prediction of a row the fit never saw: the error the chapter reports;
``outside``
    a row the model is known not to describe (an algorithm it has no term for,
    a software change it cannot see, a figure made with the model itself): the
    prediction is shown, with the reason, and left out of the statistics;
``identity``
    a design figure the model reproduces by the same arithmetic the design was
    drawn with (ports times rails, racks times GPUs): an identity check, shown,
    and left out of the statistics, since it could not have come out otherwise.

Rows that no model predicts (context, inputs of other rows) are not residuals.
``residuals()`` returns every residual as a DataFrame; ``summary()`` gives the
calibration rows, and the median and worst absolute error of the validation
rows, per family. Errors are ``predicted / measured − 1``.
"""
from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass

import pandas as pd

from ..fabric_designs import hpn_scale, megascale_tor_set, meta_zone
from ..validate import one_of
from . import measurements as m
from .predict import (
    BUS_EFFICIENCY_OUT, BUS_EFFICIENCY_UP, CALIBRATION, LATENCY_S, RunPrediction, hardware_flops, refit_solved,
    model_flops, parameter_count, predict_run, slowest_of, STRAGGLER_CV,
)
from .training_time import run_ettr

__all__ = [
    "CHECKPOINT_BYTES_PER_PARAMETER", "DESIGN_IDENTITIES", "ERROR_RANGE", "MEGATRON_SWITCHES", "MODELS", "OUTSIDE_RING", "OUTSIDE_THROUGHPUT",
    "FP8_PEAK_NOTE", "ROLES", "Residual",
    "SOFTWARE_ABLATIONS", "error_text", "input_sets", "leave_one_source_out", "llama3_ettr_inputs", "loso_constants",
    "loso_summary", "megascale_two_readings", "predicted_value", "residuals", "straggler_share", "summary", "throughput_prediction",
]

ROLES = ("calibration", "validation", "outside", "identity")

CHECKPOINT_BYTES_PER_PARAMETER = 14
"""Bytes a mixed-precision Adam checkpoint holds per parameter: 16-bit weights (2) and the
optimizer's FP32 master weights, momentum and variance (4 + 4 + 4). ZeRO's count of model
states (Rajbhandari et al. 2020) less the 16-bit gradients, which a checkpoint does not keep."""

SOFTWARE_ABLATIONS = tuple(f"ms24-t3-{i}" for i in range(2, 10))
"""MegaScale Table 3, rows 2-9: the 256-GPU run of row 1 with one software change after
another (parallel block, sliding-window attention, TP/PP/DP overlap, operators, LAMB).
``predict_run`` describes the Megatron-LM stack of row 1, so these are ``outside``."""

OUTSIDE_THROUGHPUT: dict[str, str] = {}
"""Throughput rows the model is known not to describe, with the reason: none now. MosaicML's 2023 FP8
rows stood here once, as "FP8 measured slower than BF16 beside it"; that was a unit slip of the data
file (their MFU divides by the FP8 peak, 1,979 TFLOP/s, and the file paired them with 989). On one basis
FP8 is faster than the BF16 row beside it, and the rows are validation rows (``FP8_PEAK_NOTE``)."""

FP8_PEAK_NOTE = "MFU against the FP8 peak, 1,979 TFLOP/s (llm-foundry's collect_results.py)"
"""The note of a row whose MFU divides by another peak than the 16-bit one (``mfu_peak_tflops``)."""

NARROW_HOPPER = ("a narrow model on H100: its small layers cost more than the roofline's GEMMs and "
                 "element-wise bytes count")
"""The note of the validation rows the model misses most: hidden ≤ 4,096 on a Hopper GPU."""

POWER_CAPPED = ("H100s at a 500 W power limit with HBM2e (the source: peak between SXM and NVL, not known); "
                "the model uses the SXM peak")
"""The note of torchtitan's validation rows: the source says its GPUs' peak is below the one the row assumes."""

OUTSIDE_RING = {
    "ncclt175-a100-2node": "on two nodes NCCL runs its tree algorithm (the thread's maintainer): outside the "
                           "ring model",
}
"""Collective rows run with an algorithm the ring model has no term for, though the data file says
``default``: the family's own rule (an algorithm outside the ring model is outside) applies to them."""

DESIGN_IDENTITIES = ("hpn-tor-oversub", "hpn-segment", "hpn-pod", "llama3-pod", "ms24-tor-servers")
"""Fabric rows that restate a design's own arithmetic (ports, rails, racks): identity checks, not
validation."""

MODELS = {
    "throughput": "predict_run",
    "collectives": "ring bus bandwidth: efficiency × link rate",
    "memory": "checkpoint bytes per parameter; recompute time from the FLOP count",
    "failures": "series failure model, and the effective training-time ratio",
    "stragglers": "slowest of N ranks with normal noise",
    "fabric": "chapter 4's scale units; predict_run's gradient bytes",
}
"""The model each family is held against, in words."""


@dataclass(frozen=True)
class Residual:
    """One measured row and what a model predicts for it, in the row's own unit."""

    id: str
    family: str
    role: str
    model: str
    measured: float
    predicted: float
    unit: str
    key: str
    note: str = ""
    """What the prediction assumed, or why the row is ``outside``."""

    @property
    def error(self) -> float:
        """``predicted / measured − 1`` (NaN when nothing was predicted)."""
        return self.predicted / self.measured - 1.0


# -- throughput ---------------------------------------------------------------------------------

_PERCENT = {"mfu", "hfu"}


def predicted_value(prediction: RunPrediction, row: str) -> float:
    """What ``prediction`` says about the figure of throughput row ``row``, in that row's unit.

    The row's metric decides the field (``measurements.comparable``): an MFU is the model-FLOP
    share, a "percent of peak" counted with recomputation (Narayanan et al.) is the HFU,
    a TFLOP/s per GPU counts executed FLOPs when the source counts them so, an iteration
    time is the step. Shares come back in percent, as the CSV prints them, on the row's own peak
    (``measurements.peak_basis``: an MFU measured against the FP8 peak is predicted against it).
    """
    field, _ = m.comparable(row)
    value = float(getattr(prediction, field))
    return 100.0 * value * m.peak_basis(row) if field in _PERCENT else value


@functools.lru_cache(maxsize=None)
def throughput_prediction(row: str) -> RunPrediction:
    """``predict_run`` at its calibrated defaults on one throughput row's configuration."""
    return predict_run(**m.run_config(row, accepts=predict_run))


def _throughput() -> list[Residual]:
    fitted = {c.row: c.constant for c in CALIBRATION}
    out = []
    for rid, r in m.family("throughput").iterrows():
        if rid in fitted:
            role, note = "calibration", f"fitted: {fitted[rid].replace('_', ' ')}"
        elif rid in SOFTWARE_ABLATIONS:
            role, note = "outside", "a software change (MegaScale's Table 3)"
        elif rid in OUTSIDE_THROUGHPUT:
            role, note = "outside", OUTSIDE_THROUGHPUT[rid]
        else:
            role, note = "validation", ""
        if r["software"] == "MegaScale" and role == "validation":
            note = "MegaScale's own stack"
        elif role == "validation" and r["key"] == "torchtitan2024llama3":
            note = POWER_CAPPED
        elif role == "validation" and r["peak_tflops"] > 400 and r["hidden"] <= 4096:
            note = NARROW_HOPPER
        if role == "validation" and not math.isnan(r["mfu_peak_tflops"]):
            note = f"{FP8_PEAK_NOTE}; {note}" if note else FP8_PEAK_NOTE
        out.append(Residual(rid, "throughput", role, MODELS["throughput"], float(r["value"]),
                            predicted_value(throughput_prediction(rid), rid), r["unit"], r["key"], note))
    return out


ERROR_RANGE = (-1.0, 10.0)
"""The errors a printed table shows without a flag: from −100% (a prediction of zero) to +1000%.
An error outside it is no miss of a positive quantity's model but a slip (a percent divided by
a fraction gives +9,900%). The opposite slip, a fraction divided by a percent, gives −99% and
stays inside the range: tests recompute the errors a table prints for that."""


def error_text(error: float, places: int = 1) -> str:
    """An error ``predicted / measured − 1`` as a signed percentage with a true minus sign (``−15.9%``),
    flagged outside ``ERROR_RANGE``; an error that rounds to zero prints ``+0.0%``, never ``−0.0%``.

    NaN (nothing predicted) prints as a dash. ``places`` must be a whole number in 0..6.
    """
    from ..validate import whole
    whole("places", places, low=0, high=6)
    if math.isnan(error):
        return "–"
    shown = round(100.0 * error, places) + 0.0   # + 0.0 turns a rounded −0.0 into 0.0
    text = f"{shown:+,.{places}f}%".replace("-", "\u2212")
    low, high = ERROR_RANGE
    if not low <= error <= high:
        text += " ⚠ outside −100%…+1000%: a unit slip?"
    return text


MEGATRON_SWITCHES = {"overlap": False, "flash_attention": False, "sharding": "none"}
"""A stock Megatron-LM of 2021 as ``predict_run`` switches: no overlap, no FlashAttention, no
sharded optimizer state."""


def megascale_two_readings() -> pd.DataFrame:
    """MegaScale's validation rows read two ways: with the switches MegaScale states for its stack
    (the data file's, as ``residuals()`` predicts them) and with Megatron-LM's (``MEGATRON_SWITCHES``).

    One row per run: ``gpus``, ``layers``, ``hidden``, ``measured`` (MFU, percent), and for each
    reading the predicted MFU (percent) and the error ``predicted / measured − 1`` (a fraction):
    ``predicted_megatron``, ``error_megatron``, ``predicted_megascale``, ``error_megascale``.
    """
    res = residuals("throughput")
    frame = m.load_measurements()
    rows = {}
    for rid in res.index[(res["software"] == "MegaScale") & (res["role"] == "validation")]:
        measured = float(frame.at[rid, "value"])
        as_megatron = 100.0 * predict_run(**{**m.run_config(rid, accepts=predict_run),
                                             **MEGATRON_SWITCHES}).mfu
        stated = float(res.at[rid, "predicted"])
        rows[rid] = {"gpus": int(frame.at[rid, "gpus"]), "layers": int(frame.at[rid, "layers"]),
                     "hidden": int(frame.at[rid, "hidden"]), "measured": measured,
                     "predicted_megatron": as_megatron, "error_megatron": as_megatron / measured - 1.0,
                     "predicted_megascale": stated, "error_megascale": stated / measured - 1.0}
    return pd.DataFrame.from_dict(rows, orient="index")


# -- collectives --------------------------------------------------------------------------------

def _collectives() -> list[Residual]:
    fitted = {c.row for c in CALIBRATION}
    out = []
    for rid, r in m.family("collectives").iterrows():
        if rid in fitted and r["unit"] == "us":  # the latency row: α times the 2⌈log₂ n⌉ steps
            steps = 2 * math.ceil(math.log2(int(r["ranks"])))
            out.append(Residual(rid, "collectives", "calibration", "latency α per log-depth step",
                                float(r["value"]), 1e6 * LATENCY_S * steps, r["unit"], r["key"],
                                f"fitted: latency α, {steps} steps of {int(r['ranks'])} ranks"))
            continue
        if r["unit"] != "GB/s" or r["collective"] != "all_reduce":
            continue
        link = r["link_GBps"]
        one_node = int(r["nodes"]) == 1 if not pd.isna(r["nodes"]) else True
        eta = BUS_EFFICIENCY_UP if one_node else BUS_EFFICIENCY_OUT
        predicted = eta * link  # NaN where no link rate is published
        if rid in fitted:
            role, note = "calibration", "fitted: bus efficiency " + ("up" if one_node else "out")
        elif rid in OUTSIDE_RING:
            role, note = "outside", OUTSIDE_RING[rid]
        elif r["algorithm"] == "nvls":
            role, note = "outside", "NVLink SHARP reduces inside the switch: bus bandwidth is no wire rate"
        elif math.isnan(link):
            role, note = "outside", "no link rate published"
        elif r["kind"] == "statement":
            role, note = "outside", "a maintainer's statement of the calibration row's figure"
        else:
            role, note = "validation", ("NVLink, one node" if one_node else f"{int(r['nodes'])} nodes, NIC-bound")
        out.append(Residual(rid, "collectives", role, MODELS["collectives"], float(r["value"]), predicted,
                            r["unit"], r["key"], note))
    return out


# -- memory and checkpoints -----------------------------------------------------------------------

def _layer_ratio(r: pd.Series, recompute: str) -> float:
    """Time of one layer with ``recompute`` over the time without, if time follows the FLOPs."""
    shape = dict(layers=1, hidden=int(r["hidden"]), seq_len=int(r["seq_len"]), vocab=0,
                 sequences=int(r["microbatch"]))
    return hardware_flops(**shape, recompute=recompute) / model_flops(**shape)


def _memory() -> list[Residual]:
    frame = m.family("memory")
    out = []
    r = frame.loc["nar21-ckpt-size"]
    params = parameter_count(layers=int(r["layers"]), hidden=int(r["hidden"]), seq_len=int(r["seq_len"]),
                             vocab=int(r["vocab"]))
    out.append(Residual("nar21-ckpt-size", "memory", "validation", "checkpoint: 14 bytes per parameter",
                        float(r["value"]), params * CHECKPOINT_BYTES_PER_PARAMETER / 1e12, r["unit"], r["key"],
                        "16-bit weights and FP32 Adam state; no gradients"))
    base = frame.loc["kor22-t4-1"]
    out.append(Residual("kor22-t4-1", "memory", "calibration", "layer time scaled by FLOPs", float(base["value"]),
                        float(base["value"]), base["unit"], base["key"], "the measured reference the others scale"))
    for rid in ("kor22-t4-2", "kor22-t4-3", "kor22-t4-4", "kor22-t4-5"):
        r = frame.loc[rid]
        extra = "; sequence parallelism adds no FLOPs" if r["sequence_parallel"] == "yes" else ""
        out.append(Residual(rid, "memory", "validation", "layer time scaled by FLOPs", float(r["value"]),
                            float(base["value"]) * _layer_ratio(r, r["recompute"]), r["unit"], r["key"],
                            f"{'no' if r['recompute'] == 'none' else r['recompute']} recompute{extra}"))
    for rid in ("kor22-ovh-full-large", "kor22-ovh-present-large"):
        r = frame.loc[rid]
        out.append(Residual(rid, "memory", "validation", "layer time scaled by FLOPs", 1 + float(r["value"]) / 100,
                            _layer_ratio(r, r["recompute"]), "× the time without recompute", r["key"],
                            f"{r['recompute']} recompute, the 530B model's layer"))
    return out


# -- failures and interruptions ------------------------------------------------------------------

def _failures() -> list[Residual]:
    frame = m.family("failures")
    rate_row = frame.loc["kok25-rsc1-rate"]
    rate = float(rate_row["value"]) / 1000.0  # per node-day
    out = [Residual("kok25-rsc1-rate", "failures", "calibration", "series failure model", float(rate_row["value"]),
                    float(rate_row["value"]), rate_row["unit"], rate_row["key"], "the fleet rate every row below uses")]
    other = frame.loc["kok25-rsc2-rate"]
    out.append(Residual("kok25-rsc2-rate", "failures", "validation", "series failure model", float(other["value"]),
                        float(rate_row["value"]), other["unit"], other["key"], "one fleet's rate carried to another"))
    for rid in ("kok25-mttf-1024", "kok25-mttf-8"):
        r = frame.loc[rid]
        hours = 24.0 / (int(r["nodes"]) * rate)
        predicted = hours / 24.0 if r["unit"] == "days" else hours
        out.append(Residual(rid, "failures", "validation", "series failure model", float(r["value"]),
                            predicted, r["unit"], r["key"], f"{int(r['gpus']):,} GPUs, {int(r['nodes'])} nodes"))
    r = frame.loc["kok25-mttf-16k"]
    out.append(Residual("kok25-mttf-16k", "failures", "outside", "series failure model", float(r["value"]),
                        24.0 / (int(r["nodes"]) * rate), r["unit"], r["key"],
                        "a projection made with this very model"))
    r = frame.loc["llama3-int-unexpected"]
    out.append(Residual("llama3-int-unexpected", "failures", "validation", "series failure model",
                        float(r["value"]), float(r["node_days"]) * rate, r["unit"], r["key"],
                        "16,384 H100 for 54 days at the A100 fleet's rate"))
    out.append(_llama3_ettr(frame))
    return out


def llama3_ettr_inputs() -> dict[str, float]:
    """``run_ettr`` inputs for Llama 3's run, each from a measured row: the rate of its own
    419 unexpected interruptions, a save of 16,384 GPUs × 4 GB at 2 TB/s (its upper end per GPU
    and its sustained storage rate), and MegaScale's 10-minute detection as the restart."""
    data = m.load_measurements()
    record = data.loc["llama3-int-unexpected"]
    per_gpu_gb, storage_tbs = float(data.at["llama3-ckpt-per-gpu", "value"]), float(data.at["llama3-storage", "value"])
    return dict(gpus=int(record["gpus"]), failures_per_node_day=float(record["value"]) / float(record["node_days"]),
                save_s=int(record["gpus"]) * per_gpu_gb / (storage_tbs * 1000.0),
                restart_s=60.0 * float(data.at["ms24-detect", "value"]))


def _llama3_ettr(frame: pd.DataFrame) -> Residual:
    r = frame.loc["llama3-ett"]
    e = run_ettr(**llama3_ettr_inputs())
    return Residual("llama3-ett", "failures", "validation", "effective training-time ratio (Daly)",
                    float(r["value"]), 100.0 * e.ettr, r["unit"], r["key"],
                    "measured figure is a lower bound; save and restart from other rows")


# -- stragglers ----------------------------------------------------------------------------------

def straggler_share(gpus: int, cv: float = STRAGGLER_CV) -> float:
    """Share of a job's time spent waiting for its slowest rank: ``x/(1 + x)``, ``x = cv·slowest_of(gpus)``."""
    x = cv * slowest_of(gpus)
    return x / (1.0 + x)


def _stragglers() -> list[Residual]:
    frame = m.family("stragglers")
    cal = next(c for c in CALIBRATION if c.constant == "straggler_cv")
    r = frame.loc[cal.row]
    out = [Residual(cal.row, "stragglers", "calibration", MODELS["stragglers"], float(r["value"]),
                    100.0 * STRAGGLER_CV * slowest_of(cal.ranks), r["unit"], r["key"],
                    f"fitted: straggler spread, at {cal.ranks:,} GPUs (assumed: the source says more than 10,000)")]
    for rid in ("lin25-waste-median", "lin25-waste-p90", "lin25-fleet"):
        r = frame.loc[rid]
        out.append(Residual(rid, "stragglers", "validation", MODELS["stragglers"], float(r["value"]),
                            100.0 * straggler_share(cal.ranks), r["unit"], r["key"],
                            f"every job granted {cal.ranks:,} GPUs, the model's largest share"))
    return out


# -- fabric --------------------------------------------------------------------------------------

def _fabric() -> list[Residual]:
    frame = m.family("fabric")
    hpn = hpn_scale()
    meta_pod, _ = meta_zone()
    servers, _ = megascale_tor_set()
    r = frame.loc["hpn-dp-traffic"]
    shards = int(r["tp"]) * int(r["pp"])
    grad_gb = parameter_count(layers=int(r["layers"]), hidden=int(r["hidden"]), seq_len=int(r["seq_len"]),
                              vocab=int(r["vocab"])) * 2 / shards / 1e9
    predicted = {
        "hpn-tor-oversub": (128 * 200 / (60 * 400), "design arithmetic: 128 × 200G down over 60 × 400G up"),
        "hpn-segment": (hpn.gpus_per_segment, "hpn_scale: 8 rails × a 128-port ToR pair"),
        "hpn-pod": (hpn.gpus_per_pod, "hpn_scale: 15 segments at 15:1"),
        "llama3-pod": (meta_pod, "meta_zone: 192 racks × 16 GPUs"),
        "ms24-tor-servers": (servers, "megascale_tor_set: 32 × 400G down, each split in two"),
        "hpn-dp-traffic": (grad_gb, f"16-bit gradients of 1/{shards} of the parameters (eq. 2)"),
    }
    return [Residual(rid, "fabric", "identity" if rid in DESIGN_IDENTITIES else "validation", MODELS["fabric"],
                     float(frame.at[rid, "value"]), float(value), frame.at[rid, "unit"], frame.at[rid, "key"], note)
            for rid, (value, note) in predicted.items()]


_BUILDERS = {"throughput": _throughput, "collectives": _collectives, "memory": _memory,
             "failures": _failures, "stragglers": _stragglers, "fabric": _fabric}


@functools.lru_cache(maxsize=1)
def _all() -> tuple[Residual, ...]:
    return tuple(res for family in m.FAMILIES for res in _BUILDERS[family]())


def residuals(family: str | None = None) -> pd.DataFrame:
    """Every residual (or one family's) as a DataFrame indexed by row id.

    Columns: ``family``, ``role``, ``model``, ``measured``, ``predicted``, ``unit``, ``error``
    (``predicted/measured − 1``), ``key`` (the source), ``system``, ``software``, ``publication``
    (from the CSV) and ``note``.
    """
    rows = _all() if family is None else [r for r in _all() if r.family == one_of("family", family, m.FAMILIES)]
    data = m.load_measurements()
    frame = pd.DataFrame([
        {"id": r.id, "family": r.family, "role": r.role, "model": r.model, "measured": r.measured,
         "predicted": r.predicted, "unit": r.unit, "error": r.error, "key": r.key,
         "system": data.at[r.id, "system"], "software": data.at[r.id, "software"],
         "publication": data.at[r.id, "publication"], "note": r.note}
        for r in rows])
    return frame.set_index("id", drop=False)


def input_sets(frame: pd.DataFrame | None = None) -> pd.Series:
    """Row id -> its *input set*: the first row (in the data's order) whose model inputs are all the same.

    For throughput rows the inputs are ``predict_run``'s keywords read from the row
    (``measurements.run_config``): two rows that share every one of them get one prediction, so
    they are one piece of evidence, however many figures were measured on them. In the other
    families a model's inputs are few (a rate, a link, a job size), and rows its model gives the
    same prediction in the same unit share them: ByteDance's three straggler figures, all predicted
    at one job size, are one set; a row predicted with its calibration row's own value (another
    fleet's failure rate, a layer time with the reference's FLOPs) shares that row's set, and
    ``summary`` counts no set that holds a calibration row as validation. A row with nothing
    predicted is a set of its own. ``frame`` defaults to ``residuals()``.
    """
    frame = residuals() if frame is None else frame
    first: dict[tuple, str] = {}
    out = {}
    for rid, family in frame["family"].items():
        if family == "throughput":
            key = ("throughput",) + tuple(sorted(m.run_config(rid, accepts=predict_run).items()))
        elif math.isnan(frame.at[rid, "predicted"]):
            key = (rid,)
        else:
            key = (family, frame.at[rid, "model"], frame.at[rid, "unit"], float(frame.at[rid, "predicted"]))
        out[rid] = first.setdefault(key, rid)
    return pd.Series(out, name="inputs", dtype=object)


def _per_set(errors: pd.Series, sets: pd.Series) -> pd.Series:
    """The mean absolute error of each input set's rows, indexed by the set."""
    return errors.abs().groupby(sets.loc[errors.index]).mean()


def summary() -> pd.DataFrame:
    """Per family: calibration rows, validation input sets, median and worst absolute error, the worst row.

    Columns: ``family``, ``model``, ``calibration`` (ids, comma-separated), ``fitted`` (rows),
    ``validated`` (distinct input sets among the validation rows, leaving out any set that holds a
    calibration row), ``validated_rows`` (the rows in those sets), ``rows`` (the family's rows in
    the CSV), ``median_abs_error`` (the median over the sets of each set's mean absolute error),
    ``worst_abs_error`` and ``worst`` (the validation row furthest off, and its error), ``outside``
    and ``identity`` (counts).
    """
    data = residuals()
    sets = input_sets(data)
    counts = m.load_measurements()["family"].value_counts()
    out = []
    for family in m.FAMILIES:
        part = data[data["family"] == family]
        cal = part[part["role"] == "calibration"]
        fitted_sets = set(sets.loc[cal.index])
        val = part[(part["role"] == "validation") & ~sets.loc[part.index].isin(fitted_sets)]
        errors = val["error"].abs()  # every family has validation rows
        per_set = _per_set(val["error"], sets)
        out.append({"family": family, "model": MODELS[family], "calibration": ", ".join(cal.index),
                    "fitted": len(cal), "validated": len(per_set), "validated_rows": len(errors),
                    "rows": int(counts[family]), "median_abs_error": float(per_set.median()),
                    "worst_abs_error": float(errors.max()), "worst": errors.idxmax(),
                    "outside": int((part["role"] == "outside").sum()),
                    "identity": int((part["role"] == "identity").sum())})
    return pd.DataFrame(out).set_index("family", drop=False)


# -- leave one source out ------------------------------------------------------------------------

def _swing(row: str, constant: str, low: float, high: float) -> float:
    """How far ``constant`` moves throughput row ``row``'s figure across its range, as a share of the
    larger end: the row that moves most pins the constant best. Read from the model alone, never
    from the row's measured figure."""
    run = m.run_config(row, accepts=predict_run)
    field = m.comparable(row)[0]
    a = float(getattr(predict_run(**{**run, constant: low}), field))
    b = float(getattr(predict_run(**{**run, constant: high}), field))
    return abs(b - a) / max(abs(a), abs(b))


def peak_assumed(row: pd.Series) -> bool:
    """Whether a row's ``peak_tflops`` is assumed (its ``assumed`` column names it): such a row cannot
    pin a constant that scales the peak (a GEMM efficiency), so the refit never fits on it."""
    return "peak_tflops" in str(row.get("assumed") or "").split(";")


@functools.lru_cache(maxsize=None)
def _loso_fit(source: str) -> tuple[tuple[tuple[str, str, float], ...], tuple[tuple[str, float], ...]]:
    """((constant, row fitted on, value), ...) and the full set of constants, refitted without ``source``,
    a *publication* (the data's ``publication`` column: two bibliography keys read in one document
    are one source).

    A constant whose row belongs to ``source`` is refitted: a throughput constant on the remaining
    throughput row (not one of MegaScale's ablations, not a row another constant uses, not a row
    whose peak is assumed: ``peak_assumed``) that it moves most (``_swing``); a constant read
    directly off its row (a bus efficiency, the straggler spread) with no such row left falls to
    its lower bound, and the row is given as ``""``. The
    solved constants are then refitted together, each on its row with the others at their latest
    values (``predict.refit_solved``, Gauss–Seidel, as ``calibrate_defaults`` does), until none moves
    by more than 1e-12.
    """
    frame = m.family("throughput")
    publication = _publications()
    used = {c.row for c in CALIBRATION}
    candidates = [rid for rid, r in frame.iterrows() if r["publication"] != source and rid not in SOFTWARE_ABLATIONS
                  and rid not in OUTSIDE_THROUGHPUT and not peak_assumed(r)]
    fixed: dict[str, float] = {}
    solved = []
    plan: list[tuple[str, str]] = []
    for c in CALIBRATION:
        if publication.get(c.source, c.source) != source:
            row = c
        elif c.run:
            free = [rid for rid in candidates if rid not in used]
            best = max(free, key=lambda rid: _swing(rid, c.constant, c.low, c.high))
            used.add(best)
            row = dataclasses.replace(c, row=best)
        else:
            fixed[c.constant] = c.low
            plan.append((c.constant, ""))
            continue
        plan.append((c.constant, row.row))
        if row.run:
            solved.append(row)
            fixed[c.constant] = c.value
        else:
            fixed[c.constant] = c.value  # a direct constant of another source: its default is its row's ratio
    refit_solved([(row, row.run) for row in solved], fixed)
    return (tuple((k, r, fixed[k]) for k, r in plan), tuple(fixed.items()))


def _publications() -> dict[str, str]:
    """Bibliography key -> the publication it was read in (the data's ``publication`` column)."""
    data = m.load_measurements()
    return dict(zip(data["key"], data["publication"]))


def loso_constants(source: str) -> pd.DataFrame:
    """The constants refitted without ``source`` (a publication of the throughput rows): ``constant``,
    ``row`` (fitted on; ``""`` if none is left), ``value``, ``default`` (the value fitted on every
    source) and ``moved`` (whether its row changed)."""
    one_of("source", source, tuple(dict.fromkeys(m.family("throughput")["publication"])))
    plan, _ = _loso_fit(source)
    default = {c.constant: (c.row, c.value) for c in CALIBRATION}
    return pd.DataFrame([{"constant": k, "row": r, "value": v, "default": default[k][1],
                          "moved": r != default[k][0]} for k, r, v in plan]).set_index("constant", drop=False)


def leave_one_source_out() -> pd.DataFrame:
    """Every throughput row the single split fits or validates, predicted with constants refitted without
    its own source (``loso_constants``).

    Columns: ``id``, ``key`` (the bibliography key), ``publication`` (the source left out), ``measured``,
    ``predicted`` (in the row's unit), ``error``
    (``predicted/measured − 1``), ``single_split`` (the row's error at the calibrated defaults),
    ``inputs`` (its input set, ``input_sets``) and ``software``.
    """
    single = residuals("throughput")
    sets = input_sets(single)
    data = m.load_measurements()
    out = []
    for rid, r in single[single["role"].isin(("calibration", "validation"))].iterrows():
        constants = dict(_loso_fit(r["publication"])[1])
        p = predict_run(**{**m.run_config(rid, accepts=predict_run), **constants})
        predicted = predicted_value(p, rid)
        out.append({"id": rid, "key": r["key"], "publication": r["publication"], "measured": r["measured"],
                    "predicted": predicted,
                    "error": predicted / r["measured"] - 1.0, "single_split": r["error"],
                    "inputs": sets[rid], "software": data.at[rid, "software"]})
    return pd.DataFrame(out).set_index("id", drop=False)


def loso_summary() -> pd.DataFrame:
    """Leave one source out, per source (publication) and pooled (the last row, ``all``).

    Columns: ``source``, ``rows``, ``sets`` (distinct input sets), ``median_abs_error`` (median over
    the sets of each set's mean absolute error), ``worst_abs_error`` and ``worst`` (the row furthest
    off), ``single_split_median`` (the same rows' median at the calibrated defaults, by set).
    """
    frame = leave_one_source_out()
    sets = frame["inputs"]
    out = []
    for source, part in [*frame.groupby("publication", sort=False), ("all", frame)]:
        per_set = _per_set(part["error"], sets)
        worst = part["error"].abs().idxmax()
        out.append({"source": source, "rows": len(part), "sets": len(per_set),
                    "median_abs_error": float(per_set.median()),
                    "worst_abs_error": float(abs(part.at[worst, "error"])), "worst": worst,
                    "single_split_median": float(_per_set(part["single_split"], sets).median())})
    return pd.DataFrame(out).set_index("source", drop=False)
