"""Chapter 6 ("Do the models hold?"): the explorers of ``predict_run`` and the chapter's figures.

* ``run_explorer``: choose a published run, move the calibrated constants, the
  micro-batch and the interleaving; the predicted step, split into its parts, is
  drawn as a share of the measured step, which stays at 1.
* ``plan_explorer``: enter a run of your own (model shape, GPUs and their
  parallelism, links, failure rate, checkpoint cost) and read its step time,
  MFU, effective training-time ratio and days to train.
* ``figure_predicted_vs_measured`` and ``figure_residuals``: the calibrate-then-
  validate picture (y = x with ±10% and ±25% bands, one marker per source) and
  every family's residuals on one ratio axis; ``residual_table`` the rows in the
  book's table style.

Every number comes from ``clustermath.validation``; the views place bars and
markers. Both explorers follow ``views.base.LiveFigure``'s blitting protocol: the
axes never change, the bars and the status line are the animated artists.
"""
from __future__ import annotations

import math
import re
from typing import Any, Callable, Mapping, Sequence

import ipywidgets as W
import numpy as np
from IPython.display import HTML
from matplotlib.axes import Axes
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from ..validation import days_to_train, predict_run, run_ettr
from ..validation.predict import (
    BUS_EFFICIENCY_OUT, BUS_EFFICIENCY_UP, DP_OVERLAP, KERNEL_EFFICIENCY, KERNEL_HALF_WIDTH, STRAGGLER_CV,
    RunPrediction,
)
from .base import FLAG_COLOUR, LIMIT_COLOUR, SMALL, LiveFigure, Slider, Updater, table

__all__ = [
    "EXPLORERS", "MARKERS", "PART_COLOURS", "PART_NAMES", "PLAN_FLAGS_SHORT", "PlanExplorer", "RunExplorer",
    "SOURCE_NAMES",
    "figure_predicted_vs_measured", "figure_residuals", "interleavings", "plan_explorer", "plan_flags",
    "residual_table", "run_explorer",
]

Inputs = Mapping[str, Any]

# Okabe and Ito's colour-blind-safe palette
PART_COLOURS = {"compute": "#0072B2", "bubble": "#E69F00", "tp_exposed": "#56B4E9", "cp_exposed": "#999999",
                "pp_exposed": "#CC79A7", "dp_exposed": "#D55E00", "straggler": "#009E73"}
PART_NAMES = {"compute": "compute", "bubble": "pipeline bubble", "tp_exposed": "tensor-parallel wait",
              "cp_exposed": "context-parallel wait", "pp_exposed": "pipeline sends",
              "dp_exposed": "data-parallel wait", "straggler": "stragglers"}
WALL_COLOURS = {"training": "#0072B2", "checkpoint": "#F0E442", "rework": "#882255", "restart": "#332288"}
WALL_NAMES = {"training": "training", "checkpoint": "saving checkpoints", "rework": "redoing lost work",
              "restart": "restarting"}

SOURCE_NAMES = {"narayanan2021": "Narayanan et al. 2021", "korthikanti2023": "Korthikanti et al. 2023",
                "jiang2024megascale": "MegaScale 2024", "grattafiori2024llama3": "Llama 3 2024"}
"""The throughput sources, as the picture's legend names them."""
MARKERS = {"narayanan2021": ("o", "#0072B2"), "korthikanti2023": ("s", "#E69F00"),
           "jiang2024megascale": ("^", "#009E73"), "grattafiori2024llama3": ("D", "#CC79A7")}
"""One marker shape and one colour-blind-safe colour per source."""

ASSUMED_WORDS = {"scale_up_GBps": "scale-up link", "scale_out_GBps": "scale-out link", "peak_tflops": "peak",
                 "gpu_type": "GPU", "virtual_stages": "interleaving", "microbatch": "micro-batch",
                 "sequence_parallel": "sequence parallelism", "grad_bytes": "gradient bytes"}
"""How the run explorer names a row's assumed inputs."""

SCALE = 1.5
"""The run explorer's axis ends at 1.5 times the measured step; a longer prediction is clipped and flagged."""


def _rects(x0: np.ndarray, y0: float, widths: np.ndarray, height: float) -> np.ndarray:
    x0 = np.asarray(x0, float)
    x1 = x0 + np.asarray(widths, float)
    y1 = y0 + height
    return np.stack([np.stack([x0, np.full_like(x0, y0)], -1), np.stack([x1, np.full_like(x0, y0)], -1),
                     np.stack([x1, np.full_like(x0, y1)], -1), np.stack([x0, np.full_like(x0, y1)], -1)], axis=1)


def _stack(shares: Sequence[float], y0: float, height: float, scale: float) -> np.ndarray:
    """Rectangles laid end to end from 0, clipped at ``scale``."""
    widths = np.asarray(shares, float)
    starts = np.concatenate([[0.0], np.cumsum(widths)[:-1]])
    ends = np.minimum(starts + widths, scale)
    starts = np.minimum(starts, scale)
    return _rects(starts, y0, ends - starts, height)


def _pct(x: float, places: int = 1) -> str:
    return f"{100 * x:,.{places}f}%"


# -- published runs --------------------------------------------------------------------------------

def gpu_name(gpu_type: str) -> str:
    """The short name of a GPU of the data: "H100" for "H100-SXM5-80GB", "A100-class" for
    "Ampere (A100-class)"; a type with no such name comes back as it is."""
    found = re.search(r"\b[A-Z]\d{3}\b", gpu_type)
    if found is None:
        return gpu_type
    return found.group(0) + ("-class" if "class" in gpu_type else "")


def _runs() -> dict[str, str]:
    """Dropdown labels -> row id, for every throughput row of the data: the row id (source, table or
    figure, run) and the run's GPUs, e.g. "ms24-t2-12: 12,288 A100-class". Short enough for the
    picker's box at 390 px and at 1366 px (issue 40); the configuration is in the explorer's table."""
    from ..validation import family

    return {f"{rid}: {int(r['gpus']):,} {gpu_name(r['gpu_type'])}": rid
            for rid, r in family("throughput").iterrows()}


def _divisors(n: int, cap: int = 64) -> list[int]:
    return [k for k in range(1, min(n, cap) + 1) if n % k == 0]


def interleavings(layers: int, pp: int, own: int = 1, cap: int = 16) -> list[int]:
    """The interleavings a pipeline of ``pp`` stages over ``layers`` layers can run: the divisors of
    its layers per stage (up to ``cap``), so every chunk holds whole layers; 1 alone without a
    pipeline. ``own``, a published run's value, is kept even when it does not divide (the explorer
    flags it)."""
    if pp == 1:
        return [1]
    per_stage = layers // pp
    return sorted(set(_divisors(per_stage, cap)) | {own})


PLAN_FLAGS_SHORT = {"microbatches": "more stages than micro-batches", "bubble": "bubble over half the step",
                    "tp": "TP beyond the scale-up domain", "layers": "stages of unequal depth"}
"""The flags of ``plan_flags`` as the line over an explorer's picture names them."""


def plan_flags(*, layers: int, pp: int, tp: int, microbatches: int, bubble_share: float,
               virtual_stages: int = 1, scale_up_gpus: int = 8) -> dict[str, str]:
    """What makes a plan degenerate, by the table row it concerns: a pipeline deeper than its
    micro-batches, a bubble above half the step, tensor parallelism beyond the scale-up domain,
    stages of unequal depth, or an interleaving that does not divide the layers per stage."""
    flags = {}
    if pp > microbatches:
        flags["microbatches"] = (f"{pp:,} stages but {microbatches:,} micro-batch"
                                 f"{'' if microbatches == 1 else 'es'}: most stages idle most of the step")
    if bubble_share > 0.5:
        flags["bubble"] = "the pipeline bubble is more than half the step"
    if tp > scale_up_gpus:
        flags["tp"] = (f"tensor parallelism of {tp:,} spills out of the {scale_up_gpus:,}-GPU scale-up domain "
                       f"onto the network")
    if layers % pp:
        flags["layers"] = f"{layers:,} layers do not split evenly over {pp:,} stages"
    elif pp > 1 and (layers // pp) % virtual_stages:
        flags["layers"] = (f"an interleaving of {virtual_stages:,} does not divide the {layers // pp:,} "
                           f"layers per stage")
    return flags


class RunExplorer(LiveFigure):
    """A published run under ``predict_run``: the row, the calibrated constants, micro-batch and interleaving."""

    CONSTANTS = (
        Slider("kernel_efficiency", 0.30, 0.95, KERNEL_EFFICIENCY, 0.001, label="kernel efficiency",
               readout_format=".3f"),
        # a grid of 3 from 2 holds the calibrated 167 (2 is as good as flat: η(2,304) = 0.999 η∞)
        Slider("kernel_half_width", 2.0, 1001.0, KERNEL_HALF_WIDTH, 3.0, label="half-speed width (h)",
               readout_format=",.0f"),
        Slider("bus_efficiency_up", 0.40, 1.0, BUS_EFFICIENCY_UP, 0.01, label="bus efficiency, scale-up",
               readout_format=".2f"),
        Slider("bus_efficiency_out", 0.40, 1.0, BUS_EFFICIENCY_OUT, 0.01, label="bus efficiency, scale-out",
               readout_format=".2f"),
        Slider("tp_overlap", 0.0, 1.0, 0.0, 0.05, label="tensor-parallel share hidden", readout_format=".2f"),
        Slider("pp_overlap", 0.0, 1.0, 0.0, 0.05, label="pipeline sends hidden", readout_format=".2f"),
        Slider("dp_overlap", 0.0, 1.0, DP_OVERLAP, 0.05, label="data-parallel share hidden", readout_format=".2f"),
        Slider("straggler_cv", 0.0, 0.01, STRAGGLER_CV, 0.0001, label="rank spread (CV)",
               readout_format=".4f"),
    )

    frames_by = "row"
    """The static page's frames are computed per published run (``views.frames``): a chosen run stays chosen."""

    def __init__(self, row: str = "ms24-t2-12") -> None:
        from ..validation import measurements

        self._m = measurements
        self._rows_seen: dict[str, tuple[dict[str, Any], str, float]] = {}
        self._facts_seen: dict[str, tuple[float, str]] = {}
        self._labels = _runs()
        if row not in self._labels.values():
            raise ValueError(f"row must be a throughput row of the measurements, got {row!r}")
        self._hold = False
        layout = W.Layout(width="100%", max_width="470px")
        style = {"description_width": "185px"}
        # the picker's own label column is narrower than the sliders': its choices need the room
        run = W.Dropdown(options=list(self._labels.items()), value=row, description="published run",
                         tooltip="published run", style={"description_width": "100px"}, layout=layout)
        controls: dict[str, W.ValueWidget] = {"row": run}
        controls.update({s.port: s.widget(style, layout) for s in self.CONSTANTS})
        config = self._row(row)[0]
        controls["microbatch"] = W.SelectionSlider(options=[("1", 1)], value=1, description="micro-batch (sequences)",
                                                   tooltip="micro-batch (sequences)", continuous_update=True,
                                                   style=style, layout=layout)
        controls["virtual_stages"] = W.SelectionSlider(options=[("1", 1)], value=1, description="interleaving (chunks)",
                                                       tooltip="interleaving (chunks)", continuous_update=True,
                                                       style=style, layout=layout)
        self._retarget(controls, config)
        super().__init__(controls, lambda ax: view_run(ax), title="A published run under predict_run: the "
                         "predicted step against the measured one", figsize=(5.6, 3.1))
        run.observe(self._on_run, names="value")

    def __repr__(self) -> str:
        return "RunExplorer(predict_run)"

    @staticmethod
    def _retarget(controls: Mapping[str, W.ValueWidget], config: Mapping[str, Any]) -> None:
        """Offer the micro-batches that divide the run's sequences per pipeline, and the interleavings
        that divide its layers per stage (``interleavings``); set both to the run's own values."""
        tp, pp, cp = config["tp"], config["pp"], config.get("cp", 1)
        per_pipeline = config["global_batch"] // (config["gpus"] // (tp * pp * cp))
        mb, v = controls["microbatch"], controls["virtual_stages"]
        mb.options = [(f"{k:,}", k) for k in _divisors(per_pipeline)]
        mb.value = config["microbatch"]
        # a stage holds the layers rounded up (predict_run's rule): 126 layers on 16 stages are stages of 8
        stage = -(-config["layers"] // pp)
        v.options = [(str(k), k) for k in interleavings(stage * pp, pp, config["virtual_stages"])
                     if k * pp <= config["layers"] or k == config["virtual_stages"]]
        v.value = config["virtual_stages"]
        v.disabled = pp == 1

    def _on_run(self, change: Mapping[str, Any]) -> None:
        self._hold = True
        try:
            self._retarget(self.controls, self._row(change["new"])[0])
        finally:
            self._hold = False
        self.update()

    def _on_change(self, change: Mapping[str, Any]) -> None:
        if not self._hold and change.get("owner") is not self.controls["row"]:
            self.update()

    def _row(self, row: str) -> tuple[dict[str, Any], str, float]:
        """The row's configuration, the field it measured and the figure in that field's unit (cached:
        the CSV is read once per row, not on every update)."""
        if row not in self._rows_seen:
            field, measured = self._m.comparable(row)
            # a share measured against another peak (FP8's), read on the model's 16-bit basis
            measured /= self._m.peak_basis(row)
            self._rows_seen[row] = (self._m.run_config(row, accepts=predict_run), field, measured)
        return self._rows_seen[row]

    def arguments(self) -> dict[str, Any]:
        """``predict_run``'s arguments: the row's configuration with the controls' values over it."""
        values = self.inputs
        config, _, _ = self._row(values.pop("row"))
        return {**config, **values}

    def compute(self) -> tuple[RunPrediction, float, float, str]:
        """(prediction, the measured figure, the measured step in seconds, the figure's field)."""
        _, field, measured = self._row(self.controls["row"].value)
        p = predict_run(**self.arguments())
        scale = 100.0 if field in ("mfu", "hfu") else 1.0
        shown = scale * measured
        value = scale * getattr(p, field)
        step = measured if field == "step_s" else p.step_s * value / shown
        self._last = (p, shown, step, field)
        return self._last

    def mode(self) -> Any:
        return self._last

    def _rows(self, result: tuple[RunPrediction, float, float, str]) -> list[tuple[str, str]]:
        p, measured, step, field = result
        row = self.controls["row"].value
        share = field in ("mfu", "hfu")
        value = (100.0 if share else 1.0) * getattr(p, field)
        peak = float(self._row(row)[0]["peak_tflops"])
        basis = f"% of the {peak:,.0f} TFLOP/s 16-bit peak"
        what = {"mfu": f"MFU ({basis})", "hfu": f"HFU ({basis})",
                "tflops_per_gpu": "TFLOP/s per GPU, recompute counted",
                "model_tflops_per_gpu": "model TFLOP/s per GPU", "step_s": "iteration time (s)",
                "tokens_per_s": "tokens per second"}[field]
        measured_step = ("measured step (s)" if field == "step_s"
                         else f"step derived from the {what.split(' (')[0]}, by this book's FLOP count (s)")
        fmt = ",.1f" if share else ",.4g"   # predicted shares in percent to a tenth of a point
        rows = [(f"measured {what}", f"{measured:,.4g}"), (f"predicted {what}", f"{value:{fmt}}")]
        to_printed = self._facts(row)[0] if share else 1.0
        if to_printed != 1.0:  # a share the source printed against another peak (FP8's): both bases shown
            other = f"% of the {peak / to_printed:,.0f} TFLOP/s FP8 peak, as printed"
            name = what.split(" (")[0]
            rows += [(f"measured {name} ({other})", f"{measured * to_printed:,.4g}"),
                     (f"predicted {name} ({other})", f"{value * to_printed:{fmt}}")]
        rows += [("error, predicted ÷ measured − 1", f"{value / measured - 1:+.1%}"),
                 (measured_step, f"{step:,.3f}"), ("predicted step (s)", f"{p.step_s:,.3f}")]
        rows += [(f"  {PART_NAMES[k]} (s)", f"{v:,.3f}") for k, v in p.parts.items() if k != "cp_exposed" or v]
        rows += [(f"model FLOPs utilisation ({basis})", _pct(p.mfu)),
                 (f"hardware FLOPs utilisation ({basis})", _pct(p.hfu)),
                 ("layers per stage", f"{self._layers_per_stage():,.4g}"),
                 ("micro-batches per pipeline", f"{p.microbatches:,}"),
                 ("data-parallel size", f"{p.dp:,}"),
                 ("inputs assumed, not published", self._assumed(self.controls["row"].value))]
        return rows

    def _layers_per_stage(self) -> float:
        config = self._row(self.controls["row"].value)[0]
        return config["layers"] / config["pp"]

    def _assumed(self, row: str) -> str:
        return self._facts(row)[1]

    def _facts(self, row: str) -> tuple[float, str]:
        """The row's peak basis (``measurements.peak_basis``) and its assumed inputs in words, read
        from the data once per row (every update asked the data frame again: a tenth of a frame's time)."""
        if row not in self._facts_seen:
            names = self._m.assumed_columns(row)
            words = ", ".join(ASSUMED_WORDS.get(c, c.replace("_", " ")) for c in names) if names else "none"
            self._facts_seen[row] = (self._m.peak_basis(row), words)
        return self._facts_seen[row]

    def _plan(self, result: tuple[RunPrediction, float, float, str]) -> dict[str, str]:
        p = result[0]
        a = self.arguments()
        return plan_flags(layers=a["layers"], pp=a["pp"], tp=a["tp"], microbatches=p.microbatches,
                          bubble_share=p.bubble_s / p.step_s, virtual_stages=a.get("virtual_stages", 1),
                          scale_up_gpus=a.get("scale_up_gpus", 8))

    def _flags(self, result: tuple[RunPrediction, float, float, str],
               shown: Sequence[tuple[str, str]] | None = None) -> dict[int, str]:
        """Table row -> note: the prediction off the picture, or a degenerate schedule (``shown``: the
        table's rows, where already made)."""
        flags: dict[int, str] = {}
        if result[0].step_s > SCALE * result[2]:
            flags[2] = "the prediction is off the picture's scale (over 1.5 × the measured step)"
        plan = self._plan(result)
        rows = [label for label, _ in (self._rows(result) if shown is None else shown)]
        at = {"microbatches": rows.index("micro-batches per pipeline"),
              "bubble": rows.index(f"  {PART_NAMES['bubble']} (s)"),
              "tp": rows.index(f"  {PART_NAMES['tp_exposed']} (s)"), "layers": rows.index("layers per stage")}
        for key, note in plan.items():
            flags[at[key]] = (flags[at[key]] + "; " + note) if at[key] in flags else note
        return flags

    def table_html(self, result: tuple[RunPrediction, float, float, str]) -> str:
        rows = self._rows(result)
        words = [i for i, (label, _) in enumerate(rows) if label == "inputs assumed, not published"]  # wraps
        return table(("quantity", "value"), rows, flagged=self._flags(result, rows), text_rows=words)

    def warnings(self, result: tuple[RunPrediction, float, float, str]) -> list[str]:
        notes = ["predicted step off the scale (over 1.5 × measured)"] if result[0].step_s > SCALE * result[2] else []
        return notes + [PLAN_FLAGS_SHORT[key] for key in self._plan(result)]

    def report(self) -> str:
        result = self.compute()
        head = f"predict_run on row {self.controls['row'].value} " + ", ".join(
            f"{k}={v!r}" for k, v in self.inputs.items() if k != "row")
        rows = self._rows(result)
        width = max(len(k) for k, _ in rows) + 2
        return "\n".join([head] + [f"{k:<{width}}{v:>12}" for k, v in rows])


def view_run(ax: Axes) -> Updater:
    """The predicted step's parts laid end to end as shares of the measured step (fixed at 1), with the
    ±10% and ±25% bands around it; ``update(inputs, result)`` takes ``RunExplorer.compute()``."""
    ax.figure.subplots_adjust(left=0.04, right=0.97, bottom=0.34, top=0.80)
    ax.set(xlim=(0, SCALE), ylim=(0, 1), yticks=[], xlabel="time per step, as a share of the step measured (or derived from the MFU)")
    ax.axvspan(0.75, 1.25, color="#eeeeee", lw=0, zorder=0)
    ax.axvspan(0.9, 1.1, color="#d9d9d9", lw=0, zorder=0)
    ax.axvline(1.0, color="black", lw=1.6, zorder=3)
    ax.text(1.0, 0.97, "measured", ha="center", va="top", fontsize=SMALL, zorder=4,
            bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none"})
    ax.text(0.905, 0.03, "±10%", ha="left", va="bottom", fontsize=SMALL, color="#444444")
    ax.text(0.755, 0.03, "±25%", ha="left", va="bottom", fontsize=SMALL, color="#444444")
    names = list(PART_COLOURS)
    bars = PolyCollection(_stack([0.0] * len(names), 0.3, 0.4, SCALE), facecolors=[PART_COLOURS[k] for k in names],
                          edgecolors="white", linewidths=0.5, animated=True, zorder=2)
    ax.add_collection(bars)
    (clipped,) = ax.plot([], [], ">", ms=8, color=FLAG_COLOUR, animated=True, zorder=5)
    status = ax.text(0.0, 1.02, "", transform=ax.transAxes, ha="left", va="bottom", fontsize=8.5, animated=True)
    ax.legend(handles=[Patch(facecolor=PART_COLOURS[k], label=PART_NAMES[k]) for k in names],
              loc="upper center", bbox_to_anchor=(0.5, -0.28), ncol=4, fontsize=SMALL, frameon=False,
              handlelength=1.2, columnspacing=0.8)

    def update(p: Inputs, result: Any = None) -> None:
        prediction, measured, step, _ = result
        shares = [v / step for v in prediction.parts.values()]
        bars.set_verts(_stack(shares, 0.3, 0.4, SCALE))
        total = prediction.step_s / step
        clipped.set_data(([SCALE - 0.02], [0.5]) if total > SCALE else ([], []))
        status.set_text(f"predicted ÷ measured step: {total:.4f}")

    return update


def run_explorer(row: str = "ms24-t2-12") -> RunExplorer:
    """The chapter's published-run explorer; default: MegaScale Table 2's Megatron-LM run on 12,288 GPUs."""
    return RunExplorer(row)


# -- your own run ------------------------------------------------------------------------------------

PEAKS = (("A100 (312)", 312.0), ("H100 (989)", 989.0), ("B200 (2,250)", 2250.0))
"""Dense 16-bit peaks the plan explorer offers (datasheet values)."""


class PlanExplorer(LiveFigure):
    """A run of your own: shape, parallelism, links, failures and checkpoints -> step, MFU, ETTR, days."""

    SLIDERS = (
        Slider("layers", 16, 160, 96, 8, label="layers"),
        Slider("hidden", 1024, 32768, 12288, log=True, label="hidden size"),
        Slider("seq_len", 1024, 32768, 2048, log=True, label="sequence (tokens)"),
        Slider("tp", 1, 16, 8, log=True, label="tensor-parallel size"),
        Slider("pp", 1, 16, 8, log=True, label="pipeline stages"),
        Slider("dp", 1, 4096, 16, log=True, label="data-parallel size"),
        Slider("microbatch", 1, 8, 1, log=True, label="micro-batch (sequences)"),
        Slider("microbatches", 1, 512, 96, log=True, label="micro-batches per step"),
        Slider("scale_up_GBps", 50.0, 1800.0, 300.0, log=True, label="scale-up link (GB/s)",
               readout_format=",.0f"),
        Slider("scale_out_GBps", 5.0, 200.0, 25.0, log=True, label="scale-out link (GB/s)",
               readout_format=",.1f"),
        Slider("failures_per_1000", 0.5, 20.0, 3.8, 0.1, label="failures/1,000 node-days",
               readout_format=".1f"),
        Slider("save_s", 5.0, 900.0, 60.0, log=True, label="checkpoint save (s)", readout_format=",.0f"),
        Slider("restart_s", 60.0, 3600.0, 600.0, log=True, label="restart after a failure (s)",
               readout_format=",.0f"),
        Slider("tokens_b", 100, 20_000, 300, log=True, label="tokens to train (billions)"),
    )

    def __init__(self) -> None:
        layout = W.Layout(width="100%", max_width="470px")
        style = {"description_width": "185px"}
        controls: dict[str, W.ValueWidget] = {s.port: s.widget(style, layout) for s in self.SLIDERS[:8]}
        controls["peak_tflops"] = W.SelectionSlider(options=list(PEAKS), value=312.0, description="GPU (TFLOP/s peak)",
                                                    tooltip="GPU (TFLOP/s peak)", continuous_update=True,
                                                    style=style, layout=layout)
        controls["recompute"] = W.SelectionSlider(options=[("none", "none"), ("selective", "selective"),
                                                           ("full", "full")], value="selective",
                                                  description="recompute activations",
                                                  tooltip="recompute activations", continuous_update=True,
                                                  style=style, layout=layout)
        controls.update({s.port: s.widget(style, layout) for s in self.SLIDERS[8:]})
        super().__init__(controls, lambda ax: view_plan(ax), title="Your own run: step time, MFU, effective "
                         "training-time ratio and days to train", figsize=(5.6, 3.1))

    def __repr__(self) -> str:
        return "PlanExplorer(predict_run, run_ettr)"

    def compute(self) -> tuple[RunPrediction, Any, Any]:
        a = self.inputs
        gpus = a["tp"] * a["pp"] * a["dp"]
        p = predict_run(layers=a["layers"], hidden=a["hidden"], seq_len=a["seq_len"], vocab=51200,
                        global_batch=a["microbatch"] * a["dp"] * a["microbatches"], microbatch=a["microbatch"],
                        gpus=gpus, tp=a["tp"], pp=a["pp"], peak_tflops=a["peak_tflops"],
                        scale_up_GBps=a["scale_up_GBps"], scale_out_GBps=a["scale_out_GBps"],
                        recompute=a["recompute"])
        e = run_ettr(gpus=gpus, failures_per_node_day=a["failures_per_1000"] / 1000, save_s=a["save_s"],
                     restart_s=a["restart_s"])
        d = days_to_train(tokens=a["tokens_b"] * 1e9, tokens_per_s=p.tokens_per_s, ettr=e.ettr)
        self._last = (p, e, d)
        return self._last

    def mode(self) -> Any:
        return self._last

    def _rows(self, result: tuple[RunPrediction, Any, Any]) -> list[tuple[str, str]]:
        p, e, d = result
        a = self.inputs
        return [("GPUs", f"{a['tp'] * a['pp'] * a['dp']:,}"),
                ("parameters (billions)", f"{p.parameters / 1e9:,.1f}"),
                ("batch (sequences)", f"{a['microbatch'] * a['dp'] * a['microbatches']:,}"),
                ("layers per stage", f"{a['layers'] / a['pp']:,.4g}"),
                ("tensor-parallel size (scale-up domain: 8 GPUs)", f"{a['tp']:,}"),
                ("micro-batches per pipeline", f"{p.microbatches:,}"),
                ("pipeline bubble, share of the step", _pct(p.bubble_s / p.step_s)),
                ("step time (s)", f"{p.step_s:,.3f}"),
                ("model FLOPs utilisation", _pct(p.mfu)), ("hardware FLOPs utilisation", _pct(p.hfu)),
                ("tokens per second", f"{p.tokens_per_s:,.0f}"),
                ("job's mean time between failures (h)", f"{e.mtbf_h:,.2f}"),
                ("Young's checkpoint interval (min)", f"{e.interval_s / 60:,.1f}"),
                ("effective training-time ratio", _pct(e.ettr)),
                ("days to train, computing only", f"{d.compute_days:,.1f}"),
                ("days to train, wall clock", f"{d.wall_days:,.1f}" if math.isfinite(d.wall_days) else "never")]

    def _plan(self, result: tuple[RunPrediction, Any, Any]) -> dict[str, str]:
        p, a = result[0], self.inputs
        return plan_flags(layers=a["layers"], pp=a["pp"], tp=a["tp"], microbatches=p.microbatches,
                          bubble_share=p.bubble_s / p.step_s)

    def _flags(self, result: tuple[RunPrediction, Any, Any]) -> dict[int, str]:
        """Table row -> note: a degenerate plan (``plan_flags``) or a wall clock mostly lost."""
        e = result[1]
        rows = [label for label, _ in self._rows(result)]
        at = {"layers": 3, "tp": 4, "microbatches": 5, "bubble": 6}
        flags = {at[k]: note for k, note in self._plan(result).items()}
        if e.ettr < 0.5:
            flags[rows.index("effective training-time ratio")] = \
                "below 50%: failures and restarts take more wall time than training"
        return flags

    def table_html(self, result: tuple[RunPrediction, Any, Any]) -> str:
        return table(("quantity", "value"), self._rows(result), flagged=self._flags(result))

    def warnings(self, result: tuple[RunPrediction, Any, Any]) -> list[str]:
        notes = [PLAN_FLAGS_SHORT[key] for key in self._plan(result)]
        return notes + (["effective training-time ratio below 50%"] if result[1].ettr < 0.5 else [])

    def report(self) -> str:
        rows = self._rows(self.compute())
        head = "predict_run and run_ettr: " + ", ".join(f"{k}={v!r}" for k, v in self.inputs.items())
        width = max(len(k) for k, _ in rows) + 2
        return "\n".join([head] + [f"{k:<{width}}{v:>12}" for k, v in rows])


def view_plan(ax: Axes) -> Updater:
    """Two bars on a fixed 0-100% axis: where one step goes, and where the wall clock goes."""
    ax.figure.subplots_adjust(left=0.16, right=0.97, bottom=0.40, top=0.84)
    ax.set(xlim=(0, 1), ylim=(0, 2), yticks=[0.5, 1.5], yticklabels=["wall\nclock", "one\nstep"],
           xlabel="share of the time (%)")
    ax.set_xticks(np.linspace(0, 1, 6), [f"{int(x * 100)}" for x in np.linspace(0, 1, 6)])
    step_bars = PolyCollection(_stack([0.0] * len(PART_COLOURS), 1.2, 0.6, 1.0),
                               facecolors=list(PART_COLOURS.values()), edgecolors="white", linewidths=0.5,
                               animated=True)
    wall_bars = PolyCollection(_stack([0.0] * len(WALL_COLOURS), 0.2, 0.6, 1.0),
                               facecolors=list(WALL_COLOURS.values()), edgecolors="white", linewidths=0.5,
                               animated=True)
    ax.add_collection(step_bars)
    ax.add_collection(wall_bars)
    status = ax.text(0.0, 1.02, "", transform=ax.transAxes, ha="left", va="bottom", fontsize=8.5, animated=True)
    handles = [Patch(facecolor=PART_COLOURS[k], label="compute / training" if k == "compute" else PART_NAMES[k])
               for k in PART_COLOURS if k != "cp_exposed"]
    handles += [Patch(facecolor=WALL_COLOURS[k], label=WALL_NAMES[k]) for k in ("checkpoint", "rework", "restart")]
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.45, -0.30), ncol=3, fontsize=SMALL,
              frameon=False, handlelength=1.2, columnspacing=0.8)

    def update(p: Inputs, result: Any = None) -> None:
        prediction, e, d = result
        step_bars.set_verts(_stack([v / prediction.step_s for v in prediction.parts.values()], 1.2, 0.6, 1.0))
        first = (e.checkpoint_share, e.rework_share, e.restart_share)
        total = sum(first)
        lost = [(1.0 - e.ettr) * x / total if total > 0 else 0.0 for x in first]
        wall_bars.set_verts(_stack([e.ettr, *lost], 0.2, 0.6, 1.0))
        days = f"{d.wall_days:,.1f} days" if math.isfinite(d.wall_days) else "never done"
        status.set_text(f"MFU {prediction.mfu:.2%} × ETTR {e.ettr:.2%}; {days}")

    return update


def plan_explorer() -> PlanExplorer:
    """The chapter's own-run explorer; default: a GPT-3-sized model on 1,024 A100 GPUs."""
    return PlanExplorer()


EXPLORERS: dict[str, Callable[[], LiveFigure]] = {"published_run": run_explorer, "own_run": plan_explorer}
"""Factories for chapter 6's explorers (found by ``tools/bench_widgets.py`` and the view tests)."""


# -- static figures -----------------------------------------------------------------------------------

def _as_share_of_peak(frame: Any) -> tuple[np.ndarray, np.ndarray]:
    """Measured and predicted figures of throughput rows as a share of peak (%): TFLOP/s ÷ peak, an
    iteration time as the MFU it implies; MFU rows as they are."""
    from ..validation import load_measurements

    data = load_measurements()
    measured, predicted = [], []
    for rid, r in frame.iterrows():
        peak = float(data.at[rid, "peak_tflops"])
        if r["unit"] == "TFLOP/s":
            measured.append(100 * r["measured"] / peak)
            predicted.append(100 * r["predicted"] / peak)
        elif r["unit"] == "s":
            from ..validation.holdout import throughput_prediction

            mfu = 100 * throughput_prediction(rid).mfu
            measured.append(mfu * r["predicted"] / r["measured"])
            predicted.append(mfu)
        else:
            measured.append(r["measured"])
            predicted.append(r["predicted"])
    return np.array(measured), np.array(predicted)


def figure_predicted_vs_measured(frame: Any, *, figsize: tuple[float, float] = (6.4, 5.0)) -> Figure:
    """Throughput rows, predicted against measured, as a share of peak: y = x, ±10% and ±25% bands,
    one marker per source; calibration rows hollow, rows outside the model grey."""
    fig = Figure(figsize=figsize, layout="constrained")
    ax = fig.add_subplot()
    lo, hi = 30.0, 70.0
    x = np.linspace(lo, hi, 2)
    ax.fill_between(x, x * 0.75, x * 1.25, color="#f0f0f0", lw=0, label="within ±25%")
    ax.fill_between(x, x * 0.9, x * 1.1, color="#d9d9d9", lw=0, label="within ±10%")
    ax.plot(x, x, color="black", lw=1.0, label="predicted = measured")
    measured, predicted = _as_share_of_peak(frame)
    roles = frame["role"].to_numpy()
    keys = frame["key"].to_numpy()
    for key, (marker, colour) in MARKERS.items():
        for role, face, size in (("validation", colour, 42), ("calibration", "white", 70)):
            pick = (keys == key) & (roles == role)
            if pick.any():
                ax.scatter(measured[pick], predicted[pick], marker=marker, s=size, facecolors=face,
                           edgecolors=colour, linewidths=1.4, zorder=3,
                           label=f"{SOURCE_NAMES[key]}" + (" (calibration)" if role == "calibration" else ""))
    pick = roles == "outside"
    if pick.any():
        ax.scatter(measured[pick], predicted[pick], marker="x", s=36, color="#7f7f7f", zorder=2,
                   label="MegaScale ablations (outside the model)")
    ax.set(xlim=(lo, hi), ylim=(lo, hi), aspect="equal",
           xlabel="measured share of peak (%): MFU, or HFU where the source counts recompute",
           ylabel="predicted share of peak (%), same basis")
    ax.legend(fontsize=SMALL, loc="upper left", frameon=False)
    return fig


FAMILY_NAMES = {"throughput": "throughput and MFU", "collectives": "collectives (bus bandwidth)",
                "memory": "memory and recompute", "failures": "failures and interruptions",
                "stragglers": "stragglers", "fabric": "fabric figures (HPN and others)"}


def figure_residuals(frame: Any, *, figsize: tuple[float, float] = (7.2, 3.8)) -> Figure:
    """Every validation and calibration row, predicted ÷ measured on a log axis, one line per family; rows
    outside the model as grey crosses, identity checks as grey diamonds."""
    fig = Figure(figsize=figsize, layout="constrained")
    ax = fig.add_subplot()
    families = list(FAMILY_NAMES)
    ax.axvspan(0.75, 1.25, color="#f0f0f0", lw=0)
    ax.axvspan(0.9, 1.1, color="#d9d9d9", lw=0)
    ax.axvline(1.0, color="black", lw=1.0)
    rng = np.random.default_rng(6)
    for i, family in enumerate(families):
        part = frame[(frame["family"] == family) & frame["predicted"].notna()]
        ratio = (part["predicted"] / part["measured"]).to_numpy()
        jitter = rng.uniform(-0.22, 0.22, ratio.size)
        val = (part["role"] == "validation").to_numpy()
        ax.scatter(ratio[val], i + jitter[val], s=22, color="#0072B2", zorder=3)
        ax.scatter(ratio[~val & (part["role"] == "calibration").to_numpy()],
                   i + jitter[~val & (part["role"] == "calibration").to_numpy()], s=30, facecolors="white",
                   edgecolors="#0072B2", zorder=3)
        out = (part["role"] == "outside").to_numpy()
        ax.scatter(ratio[out], i + jitter[out], marker="x", s=22, color="#7f7f7f", zorder=2)
        same = (part["role"] == "identity").to_numpy()
        ax.scatter(ratio[same], i + jitter[same], marker="D", s=18, facecolors="none", edgecolors="#7f7f7f",
                   zorder=2)
    ax.set_xscale("log")
    ax.set(yticks=range(len(families)), yticklabels=[FAMILY_NAMES[f] for f in families], ylim=(-0.6, len(families) - 0.4),
           xlim=(0.02, 5), xlabel="predicted ÷ measured (log scale; 1 = exact, bands ±10% and ±25%)")
    ax.set_xticks([0.02, 0.05, 0.1, 0.25, 0.5, 1, 2, 4], ["0.02", "0.05", "0.1", "0.25", "0.5", "1", "2", "4"])
    ax.invert_yaxis()
    ax.legend(handles=[Line2D([], [], marker="o", ls="", color="#0072B2", label="validation"),
                       Line2D([], [], marker="o", ls="", markerfacecolor="white", color="#0072B2",
                              label="calibration"),
                       Line2D([], [], marker="x", ls="", color="#7f7f7f", label="outside the model"),
                       Line2D([], [], marker="D", ls="", markerfacecolor="none", color="#7f7f7f",
                              label="identity check (not validation)")],
              fontsize=SMALL, loc="lower right", frameon=True)
    return fig


ROLE_WORDS = {"calibration": "fitted", "validation": "validated", "outside": "outside",
              "identity": "identity check"}
"""How the residual tables name a row's role."""


def residual_table(frame: Any) -> HTML:
    """Residual rows in the book's table style (``views.base.table``): the calibration rows first,
    then the validation rows, then the rows outside the model, each with its measured and
    predicted figure, the error and what the prediction assumed; a validation row off by more
    than 25% is shaded."""
    from ..validation.holdout import error_text  # pandas, as the frame itself

    order = {"calibration": 0, "validation": 1, "outside": 2, "identity": 3}
    frame = frame.sort_values("role", key=lambda r: r.map(order), kind="stable")
    header = ("row", "role", "measured", "predicted", "unit", "error", "note")
    rows, flagged = [], {}
    for i, (rid, r) in enumerate(frame.iterrows()):
        err = r["error"]
        shown = ",.1f" if r["unit"] == "%" else ",.4g"   # a share to a tenth of a point, as sources print it
        rows.append((rid, ROLE_WORDS[r["role"]], f"{r['measured']:,.6g}",
                     "–" if math.isnan(r["predicted"]) else f"{r['predicted']:{shown}}", r["unit"],
                     error_text(err), r["note"]))
        if not math.isnan(err) and abs(err) > 0.25 and r["role"] == "validation":
            flagged[i] = f"off by more than 25%: {rid}"
    return HTML(table(header, rows, flagged=flagged, text=(1, 4, 6), nowrap_labels=True, wrap_headers=True))
