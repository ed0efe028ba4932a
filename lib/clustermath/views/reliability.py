"""Chapter 2 ("Something is always broken"): explorers and figures.

Each ``view_*(ax)`` draws a fixed frame once and returns ``update(inputs,
mode)``, which moves only artists created with ``animated=True`` and returns
True when it changed the axis limits (see ``widgets.LiveFigure``). Every
number drawn comes from ``reliability`` or ``goodput``; nothing here does
arithmetic of its own beyond evaluating those formulas on a grid.
"""
from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from ..reliability.goodput import goodput_budget
from ..reliability.interruptions import (
    LLAMA3_405B, SOURCE_003_TABLE, checkpoint_plan, daly_exact_interval, daly_interval, daly_lost,
    first_order_lost, interruption_row, job_mtbf_s, root_cause_checks, young_interval, young_lost,
)
from .base import CORRECT_COLOUR, BROKEN_COLOUR, LIMIT_COLOUR, SMALL, legible, ModelView, Slider, Updater

__all__ = [
    "EXPLORERS", "GOODPUT_COLOURS", "figure_root_causes", "figure_young_vs_daly", "goodput_explorer",
    "interruption_explorer", "view_goodput", "view_interruptions", "view_young", "young_explorer",
]

Inputs = Mapping[str, Any]


RECORD_GPU_MTBF_H = LLAMA3_405B.gpu_hours / LLAMA3_405B.unexpected
"""One GPU's mean time between failures in the Llama 3 record, h (about 50,677)."""
DALY_COLOUR = "#2f7d32"

_TAUS = np.geomspace(10.0, 1e6, 241)
_GPUS = np.unique(np.geomspace(8, 262_144, 181).round().astype(int))


def _status(ax: Axes, x: float = 0.0, y: float = 1.02, ha: str = "left", va: str = "bottom") -> Any:
    """A one-line moving text just above the axes, where it hides no marker (one line keeps a redraw cheap)."""
    return ax.text(x, y, "", transform=ax.transAxes, va=va, ha=ha, fontsize=8.5, animated=True)


_TOP = 1000.0
"""Top of the time-lost axes (%): the band above 100% shows how far the first-order model has left its range."""


def _beyond(ax: Axes) -> None:
    """Shade the band above 100% lost and say what it means."""
    ax.axhspan(100, _TOP, color="#f2dede", lw=0, zorder=0)
    ax.axhline(100, color=LIMIT_COLOUR, lw=0.8, ls=":")
    ax.annotate("over 100% lost: beyond the first-order model", (0.99, 300), xycoords=("axes fraction", "data"),
                ha="right", va="center", fontsize=SMALL, color=LIMIT_COLOUR)


def _pinned(values: Any) -> np.ndarray:
    """Values pinned under the top of the axes (a point above it is drawn on the edge)."""
    return np.minimum(np.asarray(values, float), _TOP * 0.97)


def _first_order_pct(taus: Any, delta: float, m: float) -> list[float]:
    """``first_order_lost`` in percent at each interval of a grid."""
    return [100.0 * first_order_lost(float(t), delta, m) for t in taus]


def _daly_pct(taus: Any, delta: float, m: float) -> list[float]:
    """``daly_lost`` (no restart) in percent at each interval of a grid."""
    return [100.0 * daly_lost(float(t), delta, m) for t in taus]


def _fmt_s(seconds: float) -> str:
    if math.isinf(seconds):
        return "never"
    return f"{seconds:,.0f} s" if seconds < 3600 else f"{seconds / 3600:,.2f} h"


# -- Young's curve --------------------------------------------------------------------------

def view_young(ax: Axes) -> Updater:
    """Time lost against the checkpoint interval: Young's first order and Daly's model, optima marked.

    Both axes are logarithmic and fixed, so no input ever forces a full redraw."""
    ax.figure.subplots_adjust(left=0.13, right=0.97, bottom=0.19, top=0.84)
    ax.set(xscale="log", yscale="log", xlim=(10, 1e6), ylim=(0.1, _TOP),
           xlabel="checkpoint interval τ (s, log scale)", ylabel="time lost (%, log scale)",
           title="Checkpoint interval: Young's optimum and Daly's")
    (young,) = ax.plot([], [], color=CORRECT_COLOUR, lw=2, animated=True, label="first order  δ/τ + τ/2M")
    (daly,) = ax.plot([], [], color=DALY_COLOUR, lw=1.5, ls="--", animated=True, label="Daly's model (no restart)")
    band = ax.axvspan(1, 2, color=CORRECT_COLOUR, alpha=0.12, lw=0, animated=True)
    (y_opt,) = ax.plot([], [], "o", ms=8, color=CORRECT_COLOUR, mec="black", animated=True,
                       label="Young  √(2δM)")
    (d_opt,) = ax.plot([], [], "D", ms=6, color=DALY_COLOUR, mec="black", animated=True,
                       label="Daly's estimate")
    (tens,) = ax.plot([], [], "x", ms=8, mew=2, color=BROKEN_COLOUR, animated=True, label="10× off")
    ax.plot([], [], color=CORRECT_COLOUR, alpha=0.3, lw=6, label="2× off either way")
    ax.legend(loc="lower left", fontsize=SMALL, ncol=2)
    _beyond(ax)
    status = _status(ax)

    def update(p: Inputs, mode: Any = None) -> None:
        plan = checkpoint_plan(**p)
        m, delta = plan.mtbf_s, float(p["save_s"])
        young.set_data(_TAUS, _first_order_pct(_TAUS, delta, m))
        daly.set_data(_TAUS, _daly_pct(_TAUS, delta, m))
        tau = plan.young_interval_s
        band.set_x(tau / 2)
        band.set_width(tau * 2 - tau / 2)
        y_opt.set_data([tau], _pinned([plan.young_lost_pct]))
        d_opt.set_data([plan.daly_interval_s], _pinned([plan.daly_lost_pct]))
        ten = np.array([tau / 10, tau * 10])
        tens.set_data(ten, _pinned(_first_order_pct(ten, delta, m)))
        over = " (over 100%: out of range)" if plan.young_lost_pct > 100 else ""
        status.set_text(f"Young {_fmt_s(tau)}: {plan.young_lost_pct:.1f}%   "
                        f"Daly {_fmt_s(plan.daly_interval_s)}: {plan.daly_lost_pct:.1f}%{over}")

    return update


def young_explorer() -> ModelView:
    """Young's curve for any save time, GPU count and per-GPU MTBF (default: Llama 3, 60 s save)."""
    return ModelView(
        checkpoint_plan,
        [Slider("save_s", 5, 900, 60, log=True, label="save time δ (s)"),
         Slider("gpus", 8, 200_000, 16_384, log=True, label="GPUs in the job, N"),
         Slider("gpu_mtbf_h", 5_000, 200_000, 50_677, log=True, label="one GPU's MTBF (h)")],
        view_young,
        formats={"mtbf_s": ",.0f", "young_interval_s": ",.0f", "young_lost_pct": ".2f",
                 "daly_interval_s": ",.0f", "daly_lost_pct": ".2f", "exact_interval_s": ",.0f",
                 "young_in_daly_pct": ".2f"},
        title="Young's interval and Daly's: time lost against the checkpoint interval",
        figsize=(6.2, 3.4),
    )


# -- the interruption table for any GPU count ---------------------------------------------------

def view_interruptions(ax: Axes) -> Updater:
    """Time lost at the optimum against the GPU count (log-log), source 003's rows marked."""
    ax.figure.subplots_adjust(left=0.13, right=0.97, bottom=0.19, top=0.84)
    ax.set(xscale="log", yscale="log", xlim=(8, 262_144), ylim=(0.05, _TOP), xlabel="GPUs in the job (log)",
           ylabel="time lost at the optimum (%)", title="Reliability divides: loss grows as √N")
    ax.plot([r[0] for r in SOURCE_003_TABLE], [r[4] for r in SOURCE_003_TABLE], "s", ms=7, mfc="none",
            mec="black", label="source 003 (60 s save)")
    (young,) = ax.plot([], [], color=CORRECT_COLOUR, lw=2, animated=True, label="Young, first order")
    (daly,) = ax.plot([], [], color=DALY_COLOUR, lw=1.5, ls="--", animated=True, label="Daly at Daly's interval")
    (marker,) = ax.plot([], [], "o", ms=8, color=CORRECT_COLOUR, mec="black", animated=True)
    ax.legend(loc="lower right", fontsize=SMALL)
    _beyond(ax)
    status = _status(ax)

    def update(p: Inputs, mode: Any = None) -> None:
        delta, rate = float(p["save_s"]), 1.0 / float(p["gpu_mtbf_h"])
        ms = [job_mtbf_s(rate, int(n)) for n in _GPUS]
        young.set_data(_GPUS, _pinned([100.0 * young_lost(delta, m) for m in ms]))
        daly.set_data(_GPUS, _pinned([100.0 * daly_lost(daly_interval(delta, m), delta, m) for m in ms]))
        row = interruption_row(**p)
        over = row.young_lost_pct > 100
        marker.set_data([max(row.gpus, 8)], _pinned([max(row.young_lost_pct, 0.05)]))
        marker.set_marker("^" if over else "o")
        marker.set_markeredgecolor(LIMIT_COLOUR if over else "black")
        status.set_text(f"{row.gpus:,} GPUs: {row.per_day:.3g} a day, {row.young_lost_pct:.1f}% lost"
                        + (" (over 100%: out of range)" if over else ""))

    return update


def interruption_explorer() -> ModelView:
    """Source 003's interruption table as a row for any GPU count, save time and per-GPU MTBF."""
    return ModelView(
        interruption_row,
        [Slider("gpus", 8, 200_000, 16_384, log=True, label="GPUs in the job, N"),
         Slider("save_s", 5, 900, 60, log=True, label="save time δ (s)"),
         Slider("gpu_mtbf_h", 5_000, 200_000, 50_677, log=True, label="one GPU's MTBF (h)")],
        view_interruptions,
        formats={"per_day": ".3g", "mtbf_s": ",.0f", "young_interval_s": ",.0f", "young_lost_pct": ".1f",
                 "daly_interval_s": ",.0f", "daly_lost_pct": ".1f"},
        title="The interruption table, one row at a time",
        figsize=(6.2, 3.4),
    )


# -- the goodput budget -----------------------------------------------------------------------

GOODPUT_COLOURS = {
    "useful": "#2f7d32",
    "straggler": "#9e6bb5",
    "checkpoint": "#e0b040",
    "rework": BROKEN_COLOUR,
    "restart": LIMIT_COLOUR,
    "up": "#8fb3de",
}
"""Colour of each share of elapsed time, in the figures and the explorer."""

_GOODPUT_PARTS = ("useful", "straggler", "checkpoint", "rework", "restart")


def view_goodput(ax: Axes) -> Updater:
    """Two bars of elapsed time: what availability counts, and what goodput counts."""
    ax.figure.subplots_adjust(left=0.2, bottom=0.3, top=0.84)
    ax.set(xlim=(0, 100), ylim=(-0.6, 1.6), xlabel="share of elapsed time (%)",
           title="Where the time goes")
    ax.set_yticks([0, 1], ["goodput", "availability"])
    parts = {name: ax.barh([0], [0], color=GOODPUT_COLOURS[name], animated=True, label=name)[0]
             for name in _GOODPUT_PARTS}
    up = ax.barh([1], [0], color=GOODPUT_COLOURS["up"], animated=True, label="up (holding its GPUs)")[0]
    down = ax.barh([1], [0], color=GOODPUT_COLOURS["restart"], animated=True)[0]
    ax.legend(loc="upper center", bbox_to_anchor=(0.45, -0.22), ncol=6, fontsize=SMALL, frameon=False,
              handlelength=1.2, columnspacing=0.8)
    status = _status(ax)

    def update(p: Inputs, mode: Any = None) -> None:
        b = goodput_budget(**p)
        left = 0.0
        for name in _GOODPUT_PARTS:
            width = getattr(b, f"{name}_pct")
            parts[name].set_x(left)
            parts[name].set_width(width)
            left += width
        up.set_width(b.availability_pct)
        down.set_x(b.availability_pct)
        down.set_width(100.0 - b.availability_pct)
        warn = "" if b.first_order_valid else " (first order out of range)"
        status.set_text(f"goodput {b.useful_pct:.1f}%, Daly {b.daly_goodput_pct:.1f}%{warn}")

    return update


def goodput_explorer() -> ModelView:
    """The goodput budget: failures, checkpoints and one straggler (default: Llama 3 scale)."""
    return ModelView(
        goodput_budget,
        [Slider("gpus", 8, 200_000, 16_384, log=True, label="GPUs in the job, N"),
         Slider("gpu_mtbf_h", 5_000, 200_000, 50_677, log=True, label="one GPU's MTBF (h)"),
         Slider("save_s", 5, 900, 60, log=True, label="save time δ (s)"),
         Slider("restart_s", 0, 1800, 600, 30, label="restart time R (s)"),
         Slider("interval_x", 0.1, 10.0, 1.0, 0.05, label="interval ÷ Young's", readout_format=".2f"),
         Slider("straggler_speed", 0.5, 1.0, 0.9, 0.01, label="slowest rank's speed (× typical)", readout_format=".2f")],
        view_goodput,
        formats={"mtbf_s": ",.0f", "interval_s": ",.0f", "useful_pct": ".1f", "straggler_pct": ".1f",
                 "checkpoint_pct": ".1f", "rework_pct": ".1f", "restart_pct": ".1f",
                 "availability_pct": ".1f", "daly_goodput_pct": ".1f"},
        title="Goodput against availability",
        figsize=(6.2, 3.0),
    )


# -- static figures ---------------------------------------------------------------------------

CATEGORY_COLOURS = {
    "GPU": CORRECT_COLOUR,
    "Dependency": "#7f7f7f",
    "Network": "#9e6bb5",
    "Unplanned maintenance": "#e0b040",
    "Host": BROKEN_COLOUR,
    "Unknown": "#bbbbbb",
}


def figure_root_causes() -> Figure:
    """The 419 unexpected interruptions by root cause: printed percentage and the count's share."""
    rows = root_cause_checks()
    fig = Figure(figsize=(9.5, 5.2), layout="constrained")
    ax = fig.subplots()
    ys = np.arange(len(rows))[::-1]
    for y, r in zip(ys, rows):
        ax.barh(y, r.published_pct, color=CATEGORY_COLOURS[r.category], height=0.7)
        ax.plot([r.count_pct], [y], "|", ms=14, mew=2.5, color="black")
        note = f"{r.published_pct:.1f}%  ({r.count} of {LLAMA3_405B.unexpected})"
        if not r.agrees:
            note += f": the count is {r.count_pct:.1f}%"
        ax.annotate(note, (max(r.published_pct, r.count_pct) + 0.8, y), va="center", fontsize=SMALL,
                    color=LIMIT_COLOUR if not r.agrees else "black")
    ax.set_yticks(ys, [r.component for r in rows], fontsize=SMALL)
    for category, colour in CATEGORY_COLOURS.items():
        ax.barh([np.nan], [0], color=colour, label=category)
    ax.plot([], [], "|", ms=10, mew=2.5, color="black", label="count ÷ 419")
    ax.legend(loc="lower right", fontsize=SMALL, title="category (bar: printed %)", title_fontsize=SMALL)
    ax.set(xlim=(0, 62), xlabel="share of the 419 unexpected interruptions (%)",
           title="Llama 3 405B, 54 days: root causes of unexpected interruptions")
    return legible(fig)


def figure_young_vs_daly(save_s: float = 60.0) -> Figure:
    """Daly's estimate and the exact optimum of his model, relative to Young's, against δ/M."""
    ratios = np.geomspace(1e-5, 2.0, 200)
    daly = [daly_interval(r, 1.0) / young_interval(r, 1.0) for r in ratios]
    exact = [daly_exact_interval(r, 1.0) / young_interval(r, 1.0) for r in ratios]
    fig = Figure(figsize=(8.5, 3.6), layout="constrained")
    ax = fig.subplots()
    ax.plot(ratios, daly, color=DALY_COLOUR, lw=2, label="Daly's estimate ÷ Young's")
    ax.plot(ratios, exact, color="black", lw=1, ls=":", label="exact optimum of Daly's model ÷ Young's")
    ax.axhline(1.0, color=CORRECT_COLOUR, lw=1.5, label="Young's √(2δM)")
    ax.axhline(0.95, color=LIMIT_COLOUR, lw=0.8, ls=":")
    ax.annotate("5% shorter", (1.2e-5, 0.95), va="bottom", fontsize=SMALL, color=LIMIT_COLOUR)
    for gpus, *_ in SOURCE_003_TABLE:
        m = job_mtbf_s(1.0 / RECORD_GPU_MTBF_H, gpus)
        x = save_s / m
        ax.plot([x], [daly_interval(save_s, m) / young_interval(save_s, m)], "s", ms=6, mfc="white",
                mec="black")
        ax.annotate(f"{gpus:,} GPUs", (x, daly_interval(save_s, m) / young_interval(save_s, m)),
                    textcoords="offset points", xytext=(-4, -13), fontsize=SMALL, ha="right")
    ax.set(xscale="log", xlim=(1e-5, 2.0), ylim=(0.4, 1.05), xlabel="save time ÷ mean time between failures, δ/M (log)",
           ylabel="interval ÷ Young's", title=f"Where Young and Daly part (squares: source 003's rows, δ = {save_s:g} s)")
    ax.legend(loc="lower left", fontsize=SMALL)
    return legible(fig)


EXPLORERS = {
    "young": young_explorer,
    "interruptions": interruption_explorer,
    "goodput": goodput_explorer,
}
"""Chapter 2's explorers by name (``tools/bench_widgets.py`` times every ``EXPLORERS`` registry)."""


# -- teaching figures --
# Static pictures for the chapter's prose; every number comes from ``goodput``.

FAILED_COLOUR = "#b22222"

def figure_availability_goodput(**inputs: Any) -> Figure:
    """Availability against goodput for one job, as two bars of the same elapsed time.

    ``inputs`` go to ``goodput.goodput_budget``. The first bar is what an
    availability dashboard sees (up, or restarting); the second splits the same
    "up" time into what moved training forward and what the job spent saving,
    redoing lost work and waiting for its slowest rank.
    """
    b = goodput_budget(**inputs)
    fig = Figure(figsize=(9, 2.9), layout="constrained")
    ax = fig.subplots()
    rows = [
        ("availability", [("up", b.availability_pct, "up (holding its GPUs, running)"),
                          ("restart", b.restart_pct, "restarting")]),
        ("goodput", [("useful", b.useful_pct, "goodput"), ("straggler", b.straggler_pct, "waiting for the straggler"),
                     ("checkpoint", b.checkpoint_pct, "saving"), ("rework", b.rework_pct, "redoing lost work"),
                     ("restart", b.restart_pct, "restarting")]),
    ]
    for y, (_, parts) in enumerate(rows):
        left = 0.0
        for key, pct, label in parts:
            ax.barh(y, pct, left=left, color=GOODPUT_COLOURS[key], ec="white", lw=0.8)
            if pct >= 4:
                ax.text(left + pct / 2, y, f"{label}\n{pct:.1f}%" if pct > 12 else f"{pct:.1f}%", ha="center",
                        va="center", fontsize=SMALL, color="white" if key in ("useful", "restart", "up", "rework",
                                                                          "straggler") else "black")
            left += pct
    ax.set_yticks(range(2), ["what the dashboard\nreports (availability)", "what the run\ngets (goodput)"])
    ax.invert_yaxis()
    ax.set(xlim=(0, 100), xlabel="share of elapsed time (%)")
    ax.set_title(f"Up {b.availability_pct:.1f}% of the time, productive {b.useful_pct:.1f}%: the gap is saving, "
                 "redoing work and waiting, all with the GPUs busy", fontsize=9, loc="left")
    handles = [__import__("matplotlib.patches", fromlist=["Patch"]).Patch(color=GOODPUT_COLOURS[k], label=l)
               for k, l in (("straggler", "waiting for the straggler"), ("checkpoint", "saving"),
                            ("rework", "redoing lost work"), ("restart", "restarting"))]
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.32), ncol=4, fontsize=SMALL, frameon=False)
    return legible(fig)


def figure_blast_radius(job_gpus: int = 16_384, replica_gpus: int = 128) -> Figure:
    """The hole one failed part leaves: an NVL72 tray against an 8-GPU server, 72 GPUs drawn each.

    Each square is a GPU. Red: the GPUs that failed; orange: healthy GPUs idled
    because they share the failed part's NVLink domain; grey: unaffected. The
    counts come from ``goodput.blast_radius`` for the chapter's Llama 3 job.
    """
    from matplotlib.patches import Patch

    from ..reliability.goodput import blast_radius

    tray = blast_radius(job_gpus=job_gpus, domain_gpus=72, failed_gpus=4, replica_gpus=replica_gpus)
    server = blast_radius(job_gpus=job_gpus, domain_gpus=8, failed_gpus=8, replica_gpus=replica_gpus)
    fig = Figure(figsize=(9, 3.8), layout="constrained")
    axes = fig.subplots(1, 2)
    cases = [
        (axes[0], "NVL72 rack: one 4-GPU tray fails", tray, 72, 4),
        (axes[1], "Nine 8-GPU servers: one server fails", server, 8, 8),
    ]
    from matplotlib.patches import Rectangle

    for ax, title, r, domain, failed in cases:
        for g in range(72):
            if domain == 72:      # one rack: 18 trays of 4, drawn as 6 rows of 3 trays
                x, y = g % 12 + (g % 12 // 4) * 0.4, -(g // 12)
            else:                 # nine servers of 8, each a 4 x 2 block
                k, i = divmod(g, 8)
                x, y = (k % 3) * 4.6 + i % 4, -((k // 3) * 2.5 + i // 4)
            colour = FAILED_COLOUR if g < failed else ("#f5b870" if g < domain else "#d0d0d0")
            ax.add_patch(Rectangle((x, y), 0.85, 0.85, color=colour))
        ax.set(xlim=(-0.3, 13.6), ylim=(-6.3, 1.1), aspect="equal", xticks=[], yticks=[])
        for side in ax.spines.values():
            side.set_visible(False)
        ax.set_title(f"{title}\n{r.failed_gpus} GPUs fail, {r.domain_gpus} stop ({r.healthy_idled_gpus} of them "
                     f"healthy):\n{r.domain_share_pct:.2f}% of a {job_gpus:,}-GPU job", fontsize=9)
    fig.legend(handles=[Patch(color=FAILED_COLOUR, label="failed"),
                        Patch(color="#f5b870", label="healthy, idled with the failed part's domain"),
                        Patch(color="#d0d0d0", label="unaffected")],
               loc="outside lower center", ncol=3, fontsize=SMALL, frameon=False)
    return legible(fig)
