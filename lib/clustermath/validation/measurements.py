"""Published measurements of real training systems, as data (chapter 6, "Do the models hold?").

``measurements.csv`` (shipped inside the package) holds one row per measured figure:
its system, the quantity, the value and unit, the configuration a model needs as
separate columns, the source's key in ``book/references.bib``, where in the source
the figure sits, and whether it was read in the primary text (``primary``) or only
in material quoting it (``secondary``). Six families:

==============  ==============================================================
``throughput``  achieved TFLOP/s, MFU or iteration time of whole training runs
                (Narayanan et al. 2021 Tables 1-2; Korthikanti et al. 2022 Table 5;
                MegaScale Tables 2-3 and Figure 9; Llama 3 Table 4)
``collectives`` nccl-tests bus bandwidth and latency (NVIDIA issue threads) and the
                effective bandwidths of a real run (Narayanan §5.9)
``memory``      checkpoint sizes and bandwidths, activation memory, recompute cost
``failures``    interruptions, failure rates, availability, restart costs
``stragglers``  slow hosts and their cost
``fabric``      Alibaba HPN, Meta and ByteDance fabric figures
==============  ==============================================================

Values are stored with the precision the source printed (``29.02``, ``433.6e3``), so a
cross-check can tell rounding from a real disagreement: :func:`cross_checks` recomputes
every figure a source lets one recompute from its other figures (MFU from TFLOP/s and
peak, tokens/s from iteration time x batch x sequence, aggregate PFLOP/s from per-GPU
x GPUs, Narayanan's parameter count from his eq. (2), nccl-tests' busbw = algbw x
2(n-1)/n, ...) with interval arithmetic on the printed digits; what does not hold is
listed, with its computation, in :data:`DISAGREEMENTS` (see :func:`disagreements`).

Columns a throughput row feeds to a step-time model: see :data:`PREDICT_RUN_INPUTS`
and :func:`run_config`. A value the source does not publish (a micro-batch size, the
number of virtual pipeline stages, an NVLink rate) is filled in and named in the
row's ``assumed`` column (``;``-separated column names), with the reason in ``note``.

Three columns describe how a figure is to be read rather than the run:

``publication``
    the document a figure was read in; two bibliography keys can be one publication (MosaicML's
    2023 and 2024 tables are the same llm-foundry README at two commits), and leaving one
    *source* out (``holdout.leave_one_source_out``) leaves out a whole publication;
``grad_bytes``
    bytes per gradient element in the data-parallel reduction (``predict_run``'s ``grad_bytes``):
    2 where the stack's published config reduces in BF16 (NeMo's rows whose NeMo-Framework-Launcher
    24.07 recipe or FP8 example sets ``grad_sync_dtype: bf16``, cited in the note), else 4 (FP32,
    Megatron-LM's default), and then an assumption the ``assumed`` column names: no paper in the
    data prints it;
``mfu_peak_tflops``
    the peak a row's MFU divides by when it is not ``peak_tflops``, the 16-bit dense peak the
    model works from: llm-foundry's FP8 rows give MFU against the FP8 peak, 1,979 TFLOP/s
    (its ``collect_results.py`` divides by the precision's own peak). :func:`peak_basis`
    converts a prediction to that basis.
"""
from __future__ import annotations

import functools
import inspect
import itertools
import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from importlib import resources

import pandas as pd

from ..validate import one_of

__all__ = [
    "CSV_NAME", "Check", "DISAGREEMENTS", "DISAGREEMENT_KINDS", "Disagreement", "FAMILIES", "KINDS", "KNOWN_UNITS",
    "LLAMA3_TABLE5", "METRICS", "MODEL_INPUTS", "PREDICT_RUN_INPUTS", "RECOMPUTE", "STATUSES",
    "assumed_columns", "comparable", "peak_basis", "cross_checks", "csv_path", "disagreements", "family", "korthikanti_hardware_flops",
    "korthikanti_model_flops", "load_measurements", "narayanan_flops", "narayanan_params", "printed",
    "run_config",
]

CSV_NAME = "measurements.csv"
"""File name of the data, next to this module inside the installed package."""

FAMILIES = ("collectives", "throughput", "memory", "failures", "stragglers", "fabric")
STATUSES = ("primary", "secondary")
KINDS = ("measured", "statement", "derived", "design", "projection")
"""``measured``: observed on a system; ``statement``: a maintainer's or author's stated
expectation; ``derived``: the source computed it from a formula (and compares it with a
figure); ``design``: a dimensioning fact of a fabric; ``projection``: an extrapolation."""
RECOMPUTE = ("none", "selective", "full")
METRICS = ("mfu", "hfu", "pct_peak", "tflops_per_gpu", "iteration_s", "tokens_per_s")
"""What a throughput row's ``value`` is. ``flops_basis`` says whether FLOPs count the
model's work only (``model``) or also recomputation (``hardware``): Narayanan's
"% of peak" uses his eq. (3), which counts the extra forward pass of full recompute."""

KNOWN_UNITS = frozenset({
    "%", "TFLOP/s", "s", "ms", "us", "min", "h", "days", "GB/s", "TB/s", "TB", "GB", "KB",
    "interruptions", "failures per 1000 node-days", "GPUs", "count", "ratio", "tokens/s",
})

PREDICT_RUN_INPUTS = (
    "layers", "hidden", "seq_len", "vocab", "global_batch", "microbatch", "gpus", "tp", "pp",
    "virtual_stages", "peak_tflops", "scale_up_GBps", "scale_out_GBps", "recompute",
)
"""Inputs every throughput row carries (issue 17's ``predict_run`` keywords). Link
speeds are per GPU, one direction, in GB/s; ``global_batch`` counts sequences."""

MODEL_INPUTS = PREDICT_RUN_INPUTS + ("heads", "kv_heads", "ffn_hidden", "cp", "sequence_parallel",
                                     "precision", "sharding", "overlap", "flash_attention", "gated_mlp",
                                     "memory_TBps", "grad_bytes")
"""All configuration columns :func:`run_config` may return (the last twelve where known): the shape's
heads, GQA and MLP width, context parallelism, the stack's switches (``predict.Stack``), and the GPU's
memory bandwidth in TB/s where a source prints it or the GPU is not an A100 or H100 SXM (empty: the
model's default for the peak, ``predict.memory_bandwidth_TBps``), and the bytes a gradient is reduced in."""

SWITCH_COLUMNS = ("sequence_parallel", "overlap", "flash_attention", "gated_mlp")
"""``yes``/``no`` columns, returned by :func:`run_config` as ``bool``."""

_INT_COLUMNS = (
    "layers", "hidden", "heads", "kv_heads", "ffn_hidden", "seq_len", "vocab", "global_batch",
    "microbatch", "gpus", "tp", "pp", "cp", "dp", "virtual_stages", "ranks", "nodes",
    "gpus_per_node", "message_bytes", "interruptions", "node_days", "stated_tokens_per_batch", "grad_bytes",
)
_FLOAT_COLUMNS = (
    "value", "peak_tflops", "scale_up_GBps", "scale_out_GBps", "memory_TBps", "stated_params_b",
    "stated_tflops_per_gpu", "stated_mfu_pct", "stated_hfu_pct", "stated_pct_peak",
    "stated_aggregate_pflops", "stated_iteration_s", "stated_tokens_per_s", "stated_days",
    "link_GBps", "stated_algbw_GBps", "stated_time_us", "days", "stated_share_pct", "mfu_peak_tflops",
)

LLAMA3_TABLE5: dict[str, tuple[str, int, float]] = {
    "Faulty GPU": ("GPU", 148, 30.1),
    "GPU HBM3 Memory": ("GPU", 72, 17.2),
    "Software Bug": ("Dependency", 54, 12.9),
    "Network Switch/Cable": ("Network", 35, 8.4),
    "Host Maintenance": ("Unplanned Maintenance", 32, 7.6),
    "GPU SRAM Memory": ("GPU", 19, 4.5),
    "GPU System Processor": ("GPU", 17, 4.1),
    "NIC": ("Host", 7, 1.7),
    "NCCL Watchdog Timeouts": ("Unknown", 7, 1.7),
    "Silent Data Corruption": ("GPU", 6, 1.4),
    "GPU Thermal Interface + Sensor": ("GPU", 6, 1.4),
    "SSD": ("Host", 3, 0.7),
    "Power Supply": ("Host", 3, 0.7),
    "Server Chassis": ("Host", 2, 0.5),
    "IO Expansion Board": ("Host", 2, 0.5),
    "Dependency": ("Dependency", 2, 0.5),
    "CPU": ("Host", 2, 0.5),
    "System Memory": ("Host", 2, 0.5),
}
"""Llama 3 Table 5 in full (Grattafiori et al. 2024, read in the primary text): component ->
(category, interruption count, percentage as printed). The seven largest rows are also rows
of the CSV (``llama3-t5-*``); the whole table is needed to recompute its sums."""


# --------------------------------------------------------------------------- loading
def csv_path():
    """The shipped CSV as an ``importlib.resources`` traversable (works from a wheel or a checkout)."""
    return resources.files(__package__).joinpath(CSV_NAME)


@functools.lru_cache(maxsize=1)
def _raw() -> pd.DataFrame:
    """Every cell as the text the CSV holds ("" when empty): the printed precision."""
    with csv_path().open("r", encoding="utf-8") as handle:
        return pd.read_csv(handle, dtype=str, keep_default_na=False).set_index("id", drop=False)


@functools.lru_cache(maxsize=1)
def _typed() -> pd.DataFrame:
    frame = _raw().copy()
    for column in _INT_COLUMNS:
        frame[column] = pd.to_numeric(frame[column].replace("", None)).astype("Int64")
    for column in _FLOAT_COLUMNS:
        frame[column] = pd.to_numeric(frame[column].replace("", None)).astype(float)
    return frame


def load_measurements() -> pd.DataFrame:
    """All measured figures as a DataFrame indexed by ``id`` (a fresh copy each call).

    Integer configuration columns are pandas ``Int64`` (``<NA>`` where empty), numbers are
    ``float`` (``NaN`` where empty), text columns are ``str`` (``""`` where empty). The ``id``
    column is kept as well as the index.
    """
    return _typed().copy()


def family(name: str, frame: pd.DataFrame | None = None) -> pd.DataFrame:
    """The rows of one family (one of :data:`FAMILIES`), from ``frame`` or the shipped data."""
    one_of("family", name, FAMILIES)
    frame = load_measurements() if frame is None else frame
    return frame[frame["family"] == name]


def _row(row: str | pd.Series | Mapping) -> Mapping:
    if isinstance(row, str):
        if row not in _typed().index:
            raise ValueError(f"row must be an id of the measurements, got {row!r}")
        return _typed().loc[row]
    return row


def _present(value: object) -> bool:
    return not (value is None or value is pd.NA or value == "" or
                (isinstance(value, float) and math.isnan(value)))


def run_config(row: str | pd.Series | Mapping, accepts: Callable | None = None) -> dict:
    """The model inputs present in one row, as plain Python values, ready for ``model(**config)``.

    ``row`` is a row id, a row of :func:`load_measurements`, or a mapping. The result holds the
    columns of :data:`MODEL_INPUTS` that are filled in that row: integers as ``int``, the
    peak and link speeds as ``float``, ``recompute``, ``precision`` and ``sharding`` as ``str``, the
    ``yes``/``no`` switches (:data:`SWITCH_COLUMNS`) as ``bool``.
    Given ``accepts`` (a callable such as ``predict_run``), only the keywords it accepts are
    kept (all of them if it takes ``**kwargs``).
    """
    data = _row(row)
    config: dict = {}
    for column in MODEL_INPUTS:
        value = data.get(column)  # a mapping and a pandas row both read an absent column as None
        if not _present(value):
            continue
        if column in SWITCH_COLUMNS:
            config[column] = str(value) == "yes"
        elif column in ("recompute", "precision", "sharding"):
            config[column] = str(value)
        elif column in _INT_COLUMNS:
            config[column] = int(value)
        else:
            config[column] = float(value)
    if accepts is not None:
        params = inspect.signature(accepts).parameters.values()
        if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
            names = {p.name for p in params}
            config = {k: v for k, v in config.items() if k in names}
    return config


_COMPARABLE = {
    ("mfu", "model"): "mfu", ("mfu", ""): "mfu", ("hfu", "hardware"): "hfu", ("hfu", ""): "hfu",
    ("pct_peak", "hardware"): "hfu", ("pct_peak", "model"): "mfu",
    ("tflops_per_gpu", "hardware"): "tflops_per_gpu", ("tflops_per_gpu", "model"): "model_tflops_per_gpu",
    ("iteration_s", ""): "step_s", ("iteration_s", "model"): "step_s", ("iteration_s", "hardware"): "step_s",
    ("tokens_per_s", ""): "tokens_per_s", ("tokens_per_s", "model"): "tokens_per_s",
    ("tokens_per_s", "hardware"): "tokens_per_s",
}


def comparable(row: str | pd.Series | Mapping) -> tuple[str, float]:
    """What a throughput row measures, as ``predict_run``'s result names it, and the figure in that unit.

    The row's ``metric`` and ``flops_basis`` decide the field: MFU (model FLOPs) is ``mfu``;
    HFU and a "percent of peak" counted with recomputation (``flops_basis = hardware``, as
    Narayanan et al.'s eq. 3 counts it) are ``hfu``; TFLOP/s per GPU is ``tflops_per_gpu``
    on the hardware basis (recompute included) and ``model_tflops_per_gpu`` on the model
    basis; an iteration time is ``step_s``. Percentages become fractions (41.2 -> 0.412).

    Raises ``ValueError`` for a row that is not a throughput row with a known metric, or
    that holds no figure in ``value``.
    """
    data = _row(row)
    key = (str(data.get("metric") or ""), str(data.get("flops_basis") or ""))
    if data.get("family") != "throughput" or key not in _COMPARABLE:
        raise ValueError(f"row must be a throughput row with a metric of {METRICS}, got {key[0]!r} "
                         f"(flops basis {key[1]!r})")
    if not _present(data.get("value")):
        raise ValueError(f"row must hold its measured figure in 'value', got {data.get('value')!r}")
    value = float(data.get("value"))
    return _COMPARABLE[key], value / 100.0 if data.get("unit") == "%" else value


def peak_basis(row: str | pd.Series | Mapping) -> float:
    """What a prediction's share of peak is multiplied by to be read on a throughput row's own basis.

    ``peak_tflops / mfu_peak_tflops`` for an MFU or HFU measured against another peak than the
    16-bit one the model uses (llm-foundry's FP8 rows: 989 / 1,979), else 1. ``ValueError`` for a row
    that is not a throughput row (``comparable``).
    """
    field, _ = comparable(row)
    data = _row(row)
    other = data.get("mfu_peak_tflops")
    if field not in ("mfu", "hfu") or not _present(other):
        return 1.0
    return float(data.get("peak_tflops")) / float(other)


def assumed_columns(row: str | pd.Series | Mapping) -> tuple[str, ...]:
    """The columns whose value in ``row`` was assumed, not read in the source."""
    data = _row(row)
    return tuple(part for part in str(data.get("assumed") or "").split(";") if part)


def printed(row_id: str, column: str = "value") -> tuple[float, float]:
    """The interval a printed number stands for: ``29.02`` -> (29.015, 29.025), ``433.6e3`` ->
    (433550, 433650), ``163`` -> (162.5, 163.5).

    Half a unit of the last printed digit either side, read from the CSV's text.
    """
    raw = _raw()
    if row_id not in raw.index:
        raise ValueError(f"row_id must be an id of the measurements, got {row_id!r}")
    if column not in raw.columns:
        raise ValueError(f"column must be a column of the measurements, got {column!r}")
    text = raw.at[row_id, column]
    if text == "":
        raise ValueError(f"{row_id} has no {column}")
    mantissa, _, exponent = text.lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    half = 0.5 * 10.0 ** (int(exponent or 0) - decimals)
    value = float(text)
    return value - half, value + half


# --------------------------------------------------------------------------- the sources' formulas
def narayanan_params(layers: int, hidden: int, vocab: int = 51200, seq_len: int = 2048) -> float:
    """Narayanan et al. 2021, eq. (2): P = 12 l h^2 (1 + 13/(12h) + (V + s)/(12 l h)) parameters."""
    return 12 * layers * hidden**2 * (1 + 13 / (12 * hidden) + (vocab + seq_len) / (12 * layers * hidden))


def narayanan_flops(batch: int, layers: int, hidden: int, vocab: int = 51200, seq_len: int = 2048) -> float:
    """Narayanan et al. 2021, eq. (3): F = 96 B s l h^2 (1 + s/(6h) + V/(16 l h)) FLOPs per iteration.

    Counts the extra forward pass of full activation recomputation (hardware FLOPs).
    """
    return 96 * batch * seq_len * layers * hidden**2 * (1 + seq_len / (6 * hidden) + vocab / (16 * layers * hidden))


def korthikanti_model_flops(batch: int, layers: int, hidden: int, vocab: int, seq_len: int) -> float:
    """Korthikanti et al. 2022, eq. (7): model FLOPs per iteration = 72 B L s h^2 (1 + s/(6h) + V/(12 h L))."""
    return 72 * batch * layers * seq_len * hidden**2 * (1 + seq_len / (6 * hidden) + vocab / (12 * hidden * layers))


def korthikanti_hardware_flops(batch: int, layers: int, hidden: int, vocab: int, seq_len: int) -> float:
    """Korthikanti et al. 2022, eq. (8): with selective recompute, 72 B L s h^2 (1 + s/(3h) + V/(12 h L))."""
    return 72 * batch * layers * seq_len * hidden**2 * (1 + seq_len / (3 * hidden) + vocab / (12 * hidden * layers))


# --------------------------------------------------------------------------- cross-checks
@dataclass(frozen=True)
class Check:
    """One figure a source prints, recomputed from its other printed figures.

    ``stated_low``/``stated_high`` is the interval the printed figure stands for; ``low``/``high``
    the recomputation's range over the printed precision of its inputs. The check holds when
    the two intervals overlap.
    """

    name: str
    id: str
    stated: float
    stated_low: float
    stated_high: float
    low: float
    high: float
    computation: str

    @property
    def computed(self) -> float:
        return (self.low + self.high) / 2

    @property
    def holds(self) -> bool:
        return self.low <= self.stated_high and self.high >= self.stated_low


def _span(func: Callable[..., float], *intervals: tuple[float, float]) -> tuple[float, float]:
    """Min and max of a function monotonic in each argument over the corners of the intervals."""
    values = [func(*corner) for corner in itertools.product(*intervals)]
    return min(values), max(values)


def _exact(x: float) -> tuple[float, float]:
    return float(x), float(x)


def _checks() -> Iterator[Check]:
    frame, raw = _typed(), _raw()

    def make(name, rid, column, span, computation):
        lo, hi = printed(rid, column)
        return Check(name, rid, float(raw.at[rid, column]), lo, hi, span[0], span[1], computation)

    for rid, r in frame[(frame["key"] == "narayanan2021") & (frame["family"] == "throughput")].iterrows():
        l, h, v, s = int(r["layers"]), int(r["hidden"]), int(r["vocab"]), int(r["seq_len"])
        params = narayanan_params(l, h, v, s) / 1e9
        yield make("params_eq2", rid, "stated_params_b", _exact(params),
                   f"eq. (2) with l={l}, h={h}, V={v}, s={s}: {params:.2f}B")
        tf = printed(rid)
        if _present(r["stated_pct_peak"]):
            yield make("pct_peak_vs_tflops", rid, "stated_pct_peak",
                       _span(lambda x: 100 * x / r["peak_tflops"], tf),
                       f"{r['value']:g} / {r['peak_tflops']:g} TFLOP/s = {100 * r['value'] / r['peak_tflops']:.2f}%")
        if _present(r["stated_aggregate_pflops"]):
            n = int(r["gpus"])
            yield make("aggregate_vs_tflops", rid, "stated_aggregate_pflops",
                       _span(lambda x: x * n / 1000, tf),
                       f"{r['value']:g} TFLOP/s x {n:,} GPUs = {r['value'] * n / 1000:.1f} PFLOP/s")
        if _present(r["stated_days"]):
            n, batch = int(r["gpus"]), int(r["global_batch"])
            per_token = narayanan_flops(batch, l, h, v, s) / (batch * s)
            days = lambda x: 300e9 * per_token / (n * x * 1e12) / 86400  # noqa: E731
            yield make("days_vs_eq3", rid, "stated_days", _span(days, tf),
                       f"300B tokens x {per_token:.4g} FLOPs/token (eq. 3) / ({n:,} x {r['value']:g} TFLOP/s) "
                       f"= {days(r['value']):.2f} days")

    for rid, r in frame[(frame["key"] == "korthikanti2023") & (frame["metric"] == "mfu")
                        & frame["stated_iteration_s"].notna()].iterrows():
        args = (int(r["global_batch"]), int(r["layers"]), int(r["hidden"]), int(r["vocab"]), int(r["seq_len"]))
        t = printed(rid, "stated_iteration_s")
        denom = int(r["gpus"]) * r["peak_tflops"] * 1e12
        mflops = korthikanti_model_flops(*args)
        yield make("mfu_from_iteration", rid, "value", _span(lambda x: 100 * mflops / (x * denom), t),
                   f"eq. (7) {mflops:.4g} FLOPs / ({r['stated_iteration_s']:g} s x {int(r['gpus'])} x "
                   f"{r['peak_tflops']:g} TFLOP/s) = {100 * mflops / (r['stated_iteration_s'] * denom):.2f}%")
        if _present(r["stated_hfu_pct"]):
            hflops = korthikanti_hardware_flops(*args)
            yield make("hfu_from_iteration", rid, "stated_hfu_pct", _span(lambda x: 100 * hflops / (x * denom), t),
                       f"eq. (8) {hflops:.4g} FLOPs / ({r['stated_iteration_s']:g} s x {int(r['gpus'])} x "
                       f"{r['peak_tflops']:g} TFLOP/s) = {100 * hflops / (r['stated_iteration_s'] * denom):.2f}%")

    for rid, r in frame[(frame["key"] == "jiang2024megascale") & frame["stated_iteration_s"].notna()].iterrows():
        n, peak = int(r["gpus"]), r["peak_tflops"]
        tokens_per_iter = int(r["global_batch"]) * int(r["seq_len"])
        yield make("mfu_vs_aggregate", rid, "value",
                   _span(lambda a: 100 * a * 1e3 / (n * peak), printed(rid, "stated_aggregate_pflops")),
                   f"{r['stated_aggregate_pflops']:g} PFLOP/s / ({n:,} x {peak:g} TFLOP/s) = "
                   f"{100 * r['stated_aggregate_pflops'] * 1e3 / (n * peak):.2f}%")
        yield make("tokens_vs_iteration", rid, "stated_tokens_per_s",
                   _span(lambda t: tokens_per_iter / t, printed(rid, "stated_iteration_s")),
                   f"{int(r['global_batch']):,} x {int(r['seq_len']):,} tokens / {r['stated_iteration_s']:g} s "
                   f"= {tokens_per_iter / r['stated_iteration_s']:,.0f} tokens/s")
        days = lambda x: 300e9 / x / 86400  # noqa: E731
        yield make("days_vs_tokens", rid, "stated_days", _span(days, printed(rid, "stated_tokens_per_s")),
                   f"300e9 tokens / {r['stated_tokens_per_s']:,.0f} tokens/s / 86,400 s = "
                   f"{days(r['stated_tokens_per_s']):.2f} days")

    for rid, r in frame[(frame["key"] == "grattafiori2024llama3") & (frame["family"] == "throughput")].iterrows():
        peak = r["peak_tflops"]
        yield make("mfu_vs_tflops", rid, "value",
                   _span(lambda x: 100 * x / peak, printed(rid, "stated_tflops_per_gpu")),
                   f"{r['stated_tflops_per_gpu']:g} / {peak:g} TFLOP/s = {100 * r['stated_tflops_per_gpu'] / peak:.2f}%")
        tokens = int(r["global_batch"]) * int(r["seq_len"])
        yield Check("tokens_per_batch", rid, float(r["stated_tokens_per_batch"]),
                    float(r["stated_tokens_per_batch"]), float(r["stated_tokens_per_batch"]), tokens, tokens,
                    f"{int(r['global_batch']):,} sequences (batch per DP group x DP) x {int(r['seq_len']):,} "
                    f"= {tokens:,} tokens")

    unexpected = float(frame.at["llama3-int-unexpected", "value"])
    for rid, r in frame[frame["stated_share_pct"].notna()].iterrows():
        yield make("share_vs_count", rid, "stated_share_pct", _exact(100 * r["value"] / unexpected),
                   f"{r['value']:g} / {unexpected:g} = {100 * r['value'] / unexpected:.2f}%")

    for rid, r in frame[frame["stated_algbw_GBps"].notna() & frame["ranks"].notna()].iterrows():
        n = int(r["ranks"])
        yield make("busbw_vs_algbw", rid, "value",
                   _span(lambda a: a * 2 * (n - 1) / n, printed(rid, "stated_algbw_GBps")),
                   f"{r['stated_algbw_GBps']:g} GB/s x 2({n}-1)/{n} = {r['stated_algbw_GBps'] * 2 * (n - 1) / n:.2f} GB/s")
    for rid, r in frame[frame["stated_algbw_GBps"].notna() & frame["stated_time_us"].notna()].iterrows():
        size = int(r["message_bytes"])
        yield make("algbw_vs_time", rid, "stated_algbw_GBps",
                   _span(lambda t: size / (t * 1e-6) / 1e9, printed(rid, "stated_time_us")),
                   f"{size:,} B / {r['stated_time_us']:g} us = {size / r['stated_time_us'] / 1e3:.2f} GB/s")


@functools.lru_cache(maxsize=1)
def _cross_checks() -> tuple[Check, ...]:
    return tuple(_checks())


def cross_checks() -> pd.DataFrame:
    """Every cross-check the sources allow, one row each.

    Columns: ``check`` (its name), ``id`` (the row), ``stated``, ``computed`` (mid-point of the
    recomputation's range), ``low``/``high`` (that range over the printed precision of the
    inputs), ``holds`` (the printed figure's interval overlaps it), ``flagged`` (the id of the
    :class:`Disagreement` that explains a check that does not hold, else ``""``) and
    ``computation`` (the arithmetic, with its numbers).
    """
    flagged = {(name, rid): d.id for d in disagreements() for name, rid in d.checks}
    return pd.DataFrame([
        {"check": c.name, "id": c.id, "stated": c.stated, "computed": c.computed, "low": c.low,
         "high": c.high, "holds": c.holds, "flagged": flagged.get((c.name, c.id), ""),
         "computation": c.computation}
        for c in _cross_checks()
    ])


# --------------------------------------------------------------------------- disagreements
DISAGREEMENT_KINDS = {
    "arithmetic": "a source's printed figure disagrees with its own other figures",
    "rounding": "off by more than the printed digits allow, by a small amount",
    "cross-source": "two sources, or a projection and a measurement, disagree",
    "metric": "figures that look comparable but count different things",
    "unit": "a figure printed in the wrong unit",
}


@dataclass(frozen=True)
class Disagreement:
    """A place where a source disagrees with its own arithmetic or with another source.

    ``stated`` is the figure as printed; ``recomputed`` what the source's other figures (or the
    other source) give, by ``computation``. ``checks`` names the :func:`cross_checks` entries
    (check name, row id) this explains.
    """

    id: str
    kind: str
    sources: tuple[str, ...]
    rows: tuple[str, ...]
    where: str
    claim: str
    stated: float
    recomputed: float
    unit: str
    computation: str
    checks: tuple[tuple[str, str], ...] = ()

    @property
    def difference(self) -> float:
        """``stated - recomputed``, in ``unit``."""
        return self.stated - self.recomputed


def _v(rid: str, column: str = "value") -> float:
    return float(_typed().at[rid, column])


def _agg_mfu(rid: str) -> float:
    return 100 * _v(rid, "stated_aggregate_pflops") * 1e3 / (_v(rid, "gpus") * _v(rid, "peak_tflops"))


def _build() -> tuple[Disagreement, ...]:
    out: list[Disagreement] = []
    ms = ("jiang2024megascale",)
    for rid, label in (("ms24-t2-16", "MegaScale, 12,288 GPUs"), ("ms24-t2-01", "Megatron-LM, 256 GPUs"),
                       ("ms24-t2-02", "Megatron-LM, 512 GPUs"), ("ms24-t2-04", "Megatron-LM, 1,024 GPUs"),
                       ("ms24-t2-15", "MegaScale, 8,192 GPUs")):
        mfu = _agg_mfu(rid)
        out.append(Disagreement(
            id=f"megascale-aggregate-{rid[-2:]}", kind="rounding" if abs(mfu - _v(rid)) < 0.2 else "arithmetic",
            sources=ms, rows=(rid,), where="Table 2", claim=f"{label}: MFU {_v(rid):g}%",
            stated=_v(rid), recomputed=mfu, unit="%",
            computation=(f"aggregate {_v(rid, 'stated_aggregate_pflops'):g} PFLOP/s / ({_v(rid, 'gpus'):,.0f} GPUs x "
                         f"{_v(rid, 'peak_tflops'):g} TFLOP/s) = {mfu:.2f}%, not {_v(rid):g}% (the peak 312 is what "
                         "the table's other rows imply)"),
            checks=(("mfu_vs_aggregate", rid),)))
    for rid, label in (("ms24-t2-12", "Megatron-LM, 12,288 GPUs"), ("ms24-t2-05", "MegaScale, 256 GPUs")):
        tokens = _v(rid, "global_batch") * _v(rid, "seq_len") / _v(rid, "stated_iteration_s")
        out.append(Disagreement(
            id=f"megascale-tokens-{rid[-2:]}", kind="rounding", sources=ms, rows=(rid,), where="Table 2",
            claim=f"{label}: {_v(rid, 'stated_tokens_per_s') / 1e3:.1f}k tokens/s",
            stated=_v(rid, "stated_tokens_per_s"), recomputed=tokens, unit="tokens/s",
            computation=(f"{_v(rid, 'global_batch'):,.0f} x {_v(rid, 'seq_len'):,.0f} tokens / "
                         f"{_v(rid, 'stated_iteration_s'):g} s = {tokens:,.0f} tokens/s; no iteration time that rounds to "
                         f"{_v(rid, 'stated_iteration_s'):g} s gives the printed throughput"),
            checks=(("tokens_vs_iteration", rid),)))
    for rids, printed_ratio in ((("ms24-t2-10", "ms24-t2-14"), 1.19), (("ms24-t2-11", "ms24-t2-15"), 1.26)):
        ratio = _v(rids[1]) / _v(rids[0])
        out.append(Disagreement(
            id=f"megascale-speedup-{rids[0][-2:]}", kind="rounding", sources=ms, rows=rids,
            where="Table 2 (MFU column, speed-up in parentheses)",
            claim=f"MegaScale over Megatron-LM at {_v(rids[0], 'gpus'):,.0f} GPUs: {printed_ratio:.2f}x",
            stated=printed_ratio, recomputed=ratio, unit="ratio",
            computation=(f"{_v(rids[1]):g}% / {_v(rids[0]):g}% = {ratio:.3f}, which rounds to {ratio:.2f}; the "
                         f"table prints {printed_ratio:.2f} (truncated)")))
    f9 = ("ms24-f9-1", "ms24-f9-2", "ms24-f9-3")
    drop = _v(f9[0]) - _v(f9[2])
    out.append(Disagreement(
        id="megascale-fig9-drop", kind="arithmetic", sources=ms, rows=f9, where="§6.1 text vs Figure 9 labels",
        claim="'MFU of Megatron-LM decreases by 1.6%' from 2,240 to 11,200 GPUs", stated=1.6, recomputed=drop,
        unit="%", computation=(f"labels {_v(f9[0]):.2f}% -> {_v(f9[2]):.2f}%: {drop:.1f} points, "
                               f"{100 * drop / _v(f9[0]):.1f}% relative; neither is 1.6")))
    out.append(Disagreement(
        id="megascale-lamb-bubbles", kind="arithmetic", sources=ms, rows=(), where="§3.1 (LAMB optimizer)",
        claim="a 4x batch with LAMB 'reduces 87.5% of the pipeline bubbles'", stated=87.5, recomputed=75.0, unit="%",
        computation=("the interleaved bubble of one step lasts (p-1) x t_microbatch / v whatever the number of "
                     "micro-batches m; four steps at batch B carry four bubbles, one step at 4B carries one: "
                     "1 - 1/4 = 75% of the bubble time per token (the bubble fraction (p-1)/(v m) also falls 4x)")))

    l3 = ("grattafiori2024llama3",)
    total = sum(count for _, count, _ in LLAMA3_TABLE5.values())
    out.append(Disagreement(
        id="llama3-t5-faulty-gpu", kind="arithmetic", sources=l3, rows=("llama3-t5-1",), where="Table 5",
        claim="Faulty GPU: 148 interruptions = 30.1%", stated=30.1, recomputed=100 * 148 / total, unit="%",
        computation=f"148 of the {total} unexpected interruptions = {100 * 148 / total:.1f}%, not 30.1%", checks=(("share_vs_count", "llama3-t5-1"),)))
    pct_sum = sum(p for _, _, p in LLAMA3_TABLE5.values())
    out.append(Disagreement(
        id="llama3-t5-sum", kind="arithmetic", sources=l3, rows=(), where="Table 5",
        claim="the percentage column of the 419 unexpected interruptions", stated=round(pct_sum, 1), recomputed=100.0,
        unit="%", computation=(f"the printed percentages add up to {pct_sum:.1f}%, while the counts add up to all {total} "
                               "unexpected interruptions; the 5.2-point gap is the faulty-GPU misprint")))
    gpu_count = sum(c for cat, c, _ in LLAMA3_TABLE5.values() if cat == "GPU")
    gpu_printed = sum(p for cat, _, p in LLAMA3_TABLE5.values() if cat == "GPU")
    out.append(Disagreement(
        id="llama3-gpu-share", kind="arithmetic", sources=l3, rows=("llama3-gpu-share",), where="§3.3.4 and Table 5",
        claim="'GPU issues ... accounting for 58.7% of all unexpected issues'", stated=_v("llama3-gpu-share"),
        recomputed=100 * gpu_count / total, unit="%",
        computation=(f"GPU-category counts {gpu_count} / {total} = {100 * gpu_count / total:.1f}%; the printed "
                     f"GPU percentages add up to {gpu_printed:.1f}%, so 58.7% inherits the 30.1% misprint")))
    r3 = _typed().loc["llama3-t4-3"]
    dp_gpus = int(r3["gpus"]) // (int(r3["tp"]) * int(r3["cp"]) * int(r3["pp"]))
    dp_tokens = int(r3["stated_tokens_per_batch"]) // (16 * int(r3["seq_len"]))
    out.append(Disagreement(
        id="llama3-t4-dp", kind="arithmetic", sources=l3, rows=("llama3-t4-3",), where="Table 4, row 3",
        claim="16,384 GPUs as TP 8 x CP 16 x PP 16 x DP 4, batch 16 per DP group, 131,072-token sequences, 16M tokens",
        stated=4, recomputed=dp_gpus, unit="count",
        computation=(f"8 x 16 x 16 x 4 = 8,192 GPUs, not 16,384; 16 x 4 x 131,072 = 8,388,608 tokens (8M), not 16M. "
                     f"DP = 16,384 / (8 x 16 x 16) = {dp_gpus} and DP = 16M / (16 x 131,072) = {dp_tokens} agree: "
                     "the printed DP 4 is the misprint (the CSV row uses DP 8)")))
    mfu2 = 100 * _v("llama3-t4-2", "stated_tflops_per_gpu") / _v("llama3-t4-2", "peak_tflops")
    out.append(Disagreement(
        id="llama3-t4-mfu", kind="rounding", sources=l3, rows=("llama3-t4-2",), where="Table 4, row 2",
        claim="400 TFLOPs/GPU = 41% BF16 MFU", stated=_v("llama3-t4-2"), recomputed=mfu2, unit="%",
        computation=(f"400 / 989 TFLOP/s = {mfu2:.2f}%, which rounds to 40%; 41% holds only if the TFLOPs/GPU "
                     "column is rounded to tens (>= 405 TFLOP/s gives >= 40.95%). Rows 1 and 3 agree "
                     "(430 -> 43.5%, 380 -> 38.4%)"),
        checks=(("mfu_vs_tflops", "llama3-t4-2"),)))

    r1t = _typed().loc["nar21-t1-10"]
    ratio = korthikanti_model_flops(1, 128, 25600, 51200, 2048) / narayanan_flops(1, 128, 25600)
    out.append(Disagreement(
        id="narayanan-pct-peak-is-hfu", kind="metric", sources=("narayanan2021", "korthikanti2023"),
        rows=("nar21-t1-10", "kor22-t5-4a"), where="Narayanan Table 1 and §5.1 eq. (3); Korthikanti Table 5",
        claim="1T model: '52% of peak' (Narayanan, 3,072 GPUs) vs 56.3% MFU (Korthikanti, 512 GPUs, no DP)",
        stated=r1t["stated_pct_peak"], recomputed=100 * r1t["value"] * ratio / r1t["peak_tflops"], unit="%",
        computation=(f"Narayanan's FLOPs count the recompute forward pass (96 vs 72 B s l h^2): model/hardware FLOPs "
                     f"= {ratio:.4f}, so 163 TFLOP/s is {100 * r1t['value'] * ratio / r1t['peak_tflops']:.1f}% MFU. "
                     "Korthikanti's higher MFU comes from selective recompute and sequence parallelism, on a smaller "
                     "run without data parallelism")))
    out.append(Disagreement(
        id="korthikanti-appc-175", kind="arithmetic", sources=("korthikanti2023",),
        rows=("kor22-appc-175", "kor22-t5-2a"), where="Appendix C vs Table 5",
        claim="microbatch-level recompute raises the 175B MFU to 52.3% (+0.7%)", stated=0.7,
        recomputed=_v("kor22-appc-175") - _v("kor22-t5-2a"), unit="%",
        computation=(f"{_v('kor22-appc-175'):g}% - {_v('kor22-t5-2a'):g}% (Table 5) = "
                     f"{_v('kor22-appc-175') - _v('kor22-t5-2a'):.1f} points; the 530B case agrees "
                     f"({_v('kor22-appc-530'):g} - {_v('kor22-t5-3a'):g} = 0.4)")))
    sbhp = 2048 * 1 * 20480 * 35 * 2
    out.append(Disagreement(
        id="korthikanti-sbhp-gib", kind="unit", sources=("korthikanti2023",), rows=("kor22-sbhp",),
        where="Appendix B", claim="sbhp = 2.73 GB", stated=_v("kor22-sbhp"), recomputed=sbhp / 1e9, unit="GB",
        computation=f"2048 x 1 x 20480 x 35 x 2 bytes = {sbhp:,} B = {sbhp / 1e9:.2f} GB = {sbhp / 2**30:.2f} GiB"))

    r22 = _typed().loc["kor22-t5-1a"]
    shape = (int(r22["global_batch"]), int(r22["layers"]), int(r22["hidden"]), int(r22["vocab"]), int(r22["seq_len"]))
    b, l, h, s = shape[0], shape[1], shape[2], shape[4]
    physical = korthikanti_model_flops(*shape) + 4 * b * l * s * s * h
    hfu = r22["value"] * physical / korthikanti_model_flops(*shape)
    out.append(Disagreement(
        id="korthikanti-eq8-selective", kind="metric", sources=("korthikanti2023",),
        rows=("kor22-t5-1a", "kor22-t5-2a", "kor22-t5-3a", "kor22-t5-4a"),
        where="Appendix A, eq. (8), which Table 5's HFU column follows",
        claim=f"22B model: HFU {r22['stated_hfu_pct']:g}% with selective recompute (MFU {r22['value']:g}%)",
        stated=float(r22["stated_hfu_pct"]), recomputed=hfu, unit="%",
        computation=("selective recompute repeats the forward pass of the two attention-score products, "
                     "Q K^T and scores x V, 2 B s^2 h FLOPs each per layer: 4 B L s^2 h in all. Eq. (8) writes "
                     "72 B L s h^2 (1 + s/(3h) + ...), which adds 12 B L s^2 h, the forward and the backward of "
                     f"those products, three times the repeated work. Counting the repeat once, the HFU is "
                     f"{r22['value']:g}% x {physical / korthikanti_model_flops(*shape):.4f} = {hfu:.1f}%; the gap "
                     "shrinks with width (56.5% against 57.0% at 1T)")))
    low, high = 100 / (4 * 3600) * 100, 100 / (2 * 3600) * 100
    out.append(Disagreement(
        id="hpn-checkpoint-overhead", kind="arithmetic", sources=("qian2024hpn",), rows=("hpn-ckpt-time",),
        where="§2.3, Figure 4", claim="checkpoint overhead 'still around 5%' at 100 s every 2-4 hours",
        stated=5.0, recomputed=high, unit="%",
        computation=f"100 s / 2 h = {high:.2f}%, 100 s / 4 h = {low:.2f}%; 5% would need a checkpoint every 33 min"))
    out.append(Disagreement(
        id="tpuv4-ocs-power", kind="cross-source", sources=("jouppi2023tpuv4", "google2023tpuv4blog"),
        rows=("jouppi23-ocs-power",), where="ISCA'23 abstract vs Google Cloud blog",
        claim="OCS and optics share of TPU v4 system power", stated=_v("jouppi23-ocs-power"), recomputed=5.0,
        unit="%", computation=("the ISCA paper's abstract says <3% of system power; Google's Cloud blog says <5% "
                               "(the blog read only as quoted in repositories). Both say <5% of system cost")))

    rate1, n1024 = _v("kok25-rsc1-rate") / 1000, _v("kok25-mttf-1024", "nodes")
    series = 24 / (n1024 * rate1)
    out.append(Disagreement(
        id="kokolis-series-1024", kind="arithmetic", sources=("kokolis2025",),
        rows=("kok25-mttf-1024", "kok25-rsc1-rate"), where="Figure 7 text and the ETTR section (secondary)",
        claim="measured MTTF of 1024-GPU jobs 7.9 h with an RSC-1 rate of 6.50 per 1000 node-days",
        stated=_v("kok25-mttf-1024"), recomputed=series, unit="h",
        computation=(f"series model: 24 h / ({n1024:.0f} nodes x {rate1:.5f} per node-day) = {series:.1f} h, "
                     f"{series / _v('kok25-mttf-1024'):.1f}x the measured 7.9 h; the 16,384-GPU projection "
                     f"(24 / (2048 x {rate1:.5f}) = {24 / (2048 * rate1):.2f} h) does follow the rate. Both numbers "
                     "read only in material quoting the paper")))
    l3_mttf = _v("llama3-int-unexpected", "days") * 24 / _v("llama3-int-unexpected")
    l3_rate = 1000 * _v("llama3-int-unexpected") / _v("llama3-int-unexpected", "node_days")
    out.append(Disagreement(
        id="kokolis-vs-llama3-16k", kind="cross-source", sources=("kokolis2025", "grattafiori2024llama3"),
        rows=("kok25-mttf-16k", "llama3-int-unexpected"), where="Kokolis §IV (secondary) vs Llama 3 §3.3.4",
        claim="projected MTTF of a 16,384-GPU job from the RSC-1 A100 rate", stated=_v("kok25-mttf-16k"),
        recomputed=l3_mttf, unit="h",
        computation=(f"Llama 3 measured 54 days x 24 h / 419 = {l3_mttf:.2f} h between unexpected interruptions on "
                     f"16,384 H100: {l3_rate:.2f} per 1000 node-days, between RSC-2's 2.34 and RSC-1's 6.50")))
    for rid in ("nccl1455-nvls-5", "nccl1455-nvls-8"):
        algbw, n = _v(rid, "stated_algbw_GBps"), int(_v(rid, "ranks"))
        busbw = algbw * 2 * (n - 1) / n
        out.append(Disagreement(
            id=f"nccl1455-nvls-{n}gpu", kind="rounding", sources=("nccl1455",), rows=(rid,),
            where="issue description, results 2-3",
            claim=f"NVLS on {n} GPUs: busbw {_v(rid):g} GB/s with algbw {algbw:g} GB/s ('about')",
            stated=_v(rid), recomputed=busbw, unit="GB/s",
            computation=(f"nccl-tests prints busbw = algbw x 2(n-1)/n whatever the algorithm: {algbw:g} x "
                         f"{2 * (n - 1)}/{n} = {busbw:.1f} GB/s, {100 * (_v(rid) / busbw - 1):.1f}% below the "
                         "reported busbw: the reporter's round figures, not a measurement error"),
            checks=(("busbw_vs_algbw", rid),)))
    out.append(Disagreement(
        id="nccltests175-theoretical", kind="cross-source", sources=("nccltests175", "nccl1048", "nccltests119"),
        rows=("ncclt175-a100-2node",), where="nccl-tests #175 vs the same report in nccl #1048",
        claim="theoretical inter-node all-reduce busbw for 4 x 200 Gbps NICs per node", stated=100.0,
        recomputed=96.0, unit="GB/s",
        computation=("the reporter wrote 100 GB/s (4 x 25) in nccl-tests #175 and 96 GB/s in nccl #1048; the NCCL "
                     "maintainer's rule of thumb is 24 GB/s per 200 Gbps NIC (nccl-tests #119): 4 x 24 = 96. "
                     "Measured 86 GB/s is 86% or 90% of it")))
    return tuple(out)


@functools.lru_cache(maxsize=1)
def disagreements() -> tuple[Disagreement, ...]:
    """Every disagreement found, recomputed from the data (cached); also ``DISAGREEMENTS``."""
    return _build()


def __getattr__(name: str):
    if name == "DISAGREEMENTS":
        return disagreements()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
