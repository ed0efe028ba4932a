"""Chapter 1 ("Peak is bought, efficiency is earned"): the ten explorers' views.

Every curve is the model evaluated point by point; nothing here computes a
number the model does not. Each ``view_*(ax)`` draws a fixed frame and
returns ``update(inputs, broken)`` (see ``widgets.Explorer``);
``explorer(name)`` builds the interactive view of one model at the chapter's
defaults, and ``widgets.still`` draws the same view as a static figure.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Mapping

import ipywidgets as W
import numpy as np
from matplotlib.axes import Axes

from ..peak.activations import activation_memory
from ..peak.assembled import PROPERTIES, training_cluster_model
from ..peak.checkpoint import AFFORDABLE_OVERHEAD_PCT, checkpoint_cost
from ..peak.collectives import collective_cost
from ..peak.economics import ACCEPTABLE_COST_PER_USEFUL, cluster_economics
from ..peak.fabric import fabric_bisection
from ..peak.failures import TOLERABLE_LOST_MIN_PER_DAY, failure_recovery
from ..peak.pipeline import ACCEPTABLE_BUBBLE_PCT, pipeline_bubble
from ..peak.scaling import SCALES_WELL_PCT, cluster_scale
from ..peak.stragglers import straggler_step
from ..peak.debug_lab import lab_summary
from ..peak.exact import (achieved_tflops_exact, bubble_pct_exact, cost_per_useful_exact, efficiency_pct_exact,
                          lost_min_per_day_exact, overhead_pct_exact)
from ..labels import words
from .base import Framed, table
from .base import BROKEN_BUILD, BROKEN_COLOUR, CORRECT_COLOUR, FLAG_COLOUR, LIMIT_COLOUR, SMALL, legible, Explorer, Slider, Updater
from ..runner import saturated

__all__ = ["explorer", "EXPLORERS", "VIEWS"]

Inputs = Mapping[str, Any]


def _colour(broken: bool) -> str:
    return BROKEN_COLOUR if broken else CORRECT_COLOUR


def _limit(ax: Axes, y: float, text: str, animated: bool = False) -> Any:
    line = ax.axhline(y, color=LIMIT_COLOUR, ls=":", lw=1.2, animated=animated)
    if text:
        ax.annotate(text, (1.0, y), xycoords=("axes fraction", "data"), ha="right", va="bottom",
                    fontsize=SMALL, color=LIMIT_COLOUR)
    return line


def _status(ax: Axes) -> Any:
    """A moving line of text just above the axes (where it never hides the marker or a curve)."""
    return ax.text(0.0, 1.02, "", transform=ax.transAxes, va="bottom", fontsize=9, animated=True)


EXACT_COLOUR = "#222222"
"""The exact-arithmetic curve: a thin dashed dark line beside the integer staircases."""


def _moving_curve(ax: Axes) -> tuple[dict[bool, Any], Any, Any]:
    """Both builds' integer curves (keyed by ``broken``), the exact curve of the build on the
    picture, and the marker."""
    builds = {flag: ax.plot([], [], lw=2, color=_colour(flag), drawstyle="steps-post", animated=True)[0]
              for flag in (False, True)}
    (exact,) = ax.plot([], [], lw=1, ls="--", color=EXACT_COLOUR, animated=True)
    (marker,) = ax.plot([], [], "o", ms=8, mec="black", animated=True)
    return builds, exact, marker


def _show(curves: tuple[dict[bool, Any], Any, Any], xs: Any, ys: dict[bool, Any], exact_ys: Any,
          x: float, y: float, broken: bool, flagged: bool = False) -> None:
    """Move both builds' curves (the build on the picture drawn thick, the other thin), the exact
    curve and the marker; a flagged point (saturated, or off the top of the axes) is a triangle
    pinned to the top edge, outlined in the flag colour."""
    builds, exact, marker = curves
    for flag, line in builds.items():
        line.set_data(xs, ys[flag])
        line.set_linewidth(3 if flag == broken else 1)
    top = marker.axes.get_ylim()[1]
    exact.set_data(xs, np.minimum(np.asarray(exact_ys, float), top * 10))  # inf drawn off the top
    off = flagged or y > top
    marker.set_data([x], [min(y, top)])
    marker.set_marker("^" if off else "o")
    marker.set_markeredgecolor(FLAG_COLOUR if off else "black")
    marker.set_markeredgewidth(2 if off else 1)
    marker.set_color(_colour(broken))


def _mark(result: Any, *names: str) -> str:
    """What the status line adds when one of ``names`` saturated, or was computed from a value that did."""
    ceiling = saturated(result)
    hit = [ceiling[n] for n in names if n in ceiling]
    if any(upstream == () for upstream in hit):
        return " (saturated)"
    return " (from a saturated value)" if hit else ""


def _legend(ax: Axes, loc: str) -> None:
    ax.plot([], [], color=CORRECT_COLOUR, lw=2, label="correct build (integer)")
    ax.plot([], [], color=BROKEN_COLOUR, lw=2, label=f"{BROKEN_BUILD} (integer)")
    ax.plot([], [], color=EXACT_COLOUR, lw=1, ls="--", label="exact arithmetic, build shown")
    ax.legend(loc=loc, fontsize=SMALL)


def _exact(value: float, unit: str = "", digits: int = 0) -> str:
    """`` (exact 2,783)``: an exact value for a status line (infinite shown as "unbounded")."""
    return " (exact unbounded)" if math.isinf(value) else f" (exact {value:,.{digits}f}{unit})"


def _both(model: Callable[..., Any], flag_name: str, output: str, inputs: list[dict[str, Any]]) -> dict[bool, list]:
    """``output`` of ``model`` at each of ``inputs``, in the correct (False) and broken (True) build."""
    return {flag: [getattr(model(**i, **{flag_name: flag}), output) for i in inputs] for flag in (False, True)}


# -- the ten views ----------------------------------------------------------------

def view_cluster_scale(ax: Axes) -> Updater:
    comm = np.arange(0, 1001, 5)
    ax.set(xlabel="communication per step (ms)", ylabel="efficiency (%)", xlim=(0, 1000), ylim=(-3, 105),
           title="Efficiency against communication")
    _limit(ax, SCALES_WELL_PCT, "scales well at or above 75%")
    _legend(ax, "center right")
    curves = _moving_curve(ax)
    status = _status(ax)

    def update(p: Inputs, broken: bool) -> None:
        eff = _both(cluster_scale, "ignore_comm", "efficiency_pct", [{**p, "comm_ms": int(c)} for c in comm])
        exact = [efficiency_pct_exact(compute_ms=p["compute_ms"], comm_ms=c, ignore_comm=broken) for c in comm]
        r = cluster_scale(**p, ignore_comm=broken)
        _show(curves, comm, eff, exact, p["comm_ms"], r.efficiency_pct, broken)
        sat = _mark(r, "achieved_tflops")
        true = achieved_tflops_exact(nodes=p["nodes"], node_tflops=p["node_tflops"], compute_ms=p["compute_ms"],
                                     comm_ms=p["comm_ms"], ignore_comm=broken)
        status.set_text(f"{p['compute_ms']} ms compute: {r.efficiency_pct}%, {r.achieved_tflops:,} TFLOPS{sat}"
                        + _exact(true))

    return update


def view_collective_cost(ax: Axes) -> Updater:
    ranks = np.arange(1, 257)
    # A linear time axis, so the steep rise from 1 to a handful of ranks shows. Its top follows the
    # data in steps of a 1-2-5 ladder; the curves are drawn as fractions of that top on a fixed
    # 0..1 axis and the tick labels are moving texts, so a new scale costs no full redraw.
    ax.set(xlabel="ranks (log scale)", ylabel="all-reduce time (ms)", xscale="log", xlim=(1, 256), ylim=(0, 1.05),
           title="All-reduce time against the rank count")
    ax.set_xticks([1, 2, 4, 8, 16, 32, 64, 128, 256], ["1", "2", "4", "8", "16", "32", "64", "128", "256"])
    ax.minorticks_off()
    fractions = (0.0, 0.25, 0.5, 0.75, 1.0)
    ax.set_yticks(fractions, [""] * len(fractions))
    ax.set_ylabel("all-reduce time (ms)", labelpad=38)
    ax.figure.subplots_adjust(left=0.2)
    ticks = [ax.text(-0.015, f, "", transform=ax.get_yaxis_transform(), ha="right", va="center", fontsize=10,
                     animated=True) for f in fractions]
    (ring,) = ax.plot([], [], lw=2, color=CORRECT_COLOUR, drawstyle="steps-post", animated=True,
                      label="correct build: 2(N-1)/N of the gradient")
    (flat,) = ax.plot([], [], lw=2, color=BROKEN_COLOUR, drawstyle="steps-post", animated=True,
                      label=f"{BROKEN_BUILD}: the gradient once")
    budget = _limit(ax, 100, "", animated=True)
    ax.plot([], [], color=LIMIT_COLOUR, ls=":", label="budget")
    (marker,) = ax.plot([], [], "o", ms=8, mec="black", animated=True)
    ax.legend(loc="lower right", fontsize=SMALL)
    status = _status(ax)

    def update(p: Inputs, broken: bool) -> None:
        curves, highest = [], 0
        for line, flag in ((ring, False), (flat, True)):
            ms = [collective_cost(**{**p, "nodes": int(n)}, ignore_topology=flag).collective_ms for n in ranks]
            curves.append((line, flag, np.asarray(ms, float)))
            highest = max(highest, max(ms))
        r = collective_cost(**p, ignore_topology=broken)
        top = _nice_top(max(highest, p["budget_ms"], 1) * 1.15)
        for line, flag, ms in curves:
            line.set_data(ranks, ms / top)
            line.set_linewidth(3 if flag == broken else 1)
        for text, f in zip(ticks, fractions):
            text.set_text(f"{top * f:,.0f}" if top >= 10 else f"{top * f:,.2g}")
        marker.set_data([max(p["nodes"], 1)], [r.collective_ms / top])
        marker.set_color(_colour(broken))
        budget.set_ydata([p["budget_ms"] / top] * 2)
        sat = _mark(r, "moved_gb", "collective_ms")
        status.set_text(f"{p['nodes']} ranks move {r.moved_gb:,} GB: {r.collective_ms:,} ms "
                        f"({'within' if r.within_budget else 'over'} budget){sat}")

    return update


def _nice_top(value: float) -> float:
    """The smallest 1, 2 or 5 times a power of ten at or above ``value``."""
    exponent = 10 ** math.floor(math.log10(value))
    for m in (1, 2, 5, 10):
        if m * exponent >= value:
            return float(m * exponent)
    return float(10 * exponent)


def view_pipeline_bubble(ax: Axes) -> Updater:
    mbs = np.arange(0, 257)
    ax.set(xlabel="microbatches per step", ylabel="bubble (%)", xlim=(0, 256), ylim=(-3, 105),
           title="Bubble against microbatches")
    _limit(ax, ACCEPTABLE_BUBBLE_PCT, "acceptable at or below 20%")
    _legend(ax, "center right")
    curves = _moving_curve(ax)
    status = _status(ax)

    def update(p: Inputs, broken: bool) -> None:
        bub = _both(pipeline_bubble, "ignore_bubble", "bubble_pct",
                    [{"stages": p["stages"], "microbatches": int(m)} for m in mbs])
        exact = [bubble_pct_exact(stages=p["stages"], microbatches=m, ignore_bubble=broken) for m in mbs]
        r = pipeline_bubble(**p, ignore_bubble=broken)
        _show(curves, mbs, bub, exact, p["microbatches"], r.bubble_pct, broken)
        true = bubble_pct_exact(**p, ignore_bubble=broken)
        status.set_text(f"{p['stages']} stages, {p['microbatches']} microbatches: {r.bubble_pct}% idle"
                        + _exact(true, "%", 1))

    return update


def view_checkpoint_cost(ax: Axes) -> Updater:
    intervals = np.unique(np.geomspace(10, 7200, 160).astype(int))
    ax.set(xscale="log", xlabel="checkpoint interval (s, log scale)", ylabel="overhead (%)",
           xlim=(10, 7200), ylim=(-3, 100), title="Checkpoint overhead against the interval")
    _limit(ax, AFFORDABLE_OVERHEAD_PCT, "affordable at or below 10%")
    _legend(ax, "center right")
    curves = _moving_curve(ax)
    status = _status(ax)

    def update(p: Inputs, broken: bool) -> None:
        over = _both(checkpoint_cost, "ignore_checkpoint", "overhead_pct",
                     [{**p, "interval_s": int(t)} for t in intervals])
        exact = [overhead_pct_exact(**{**p, "interval_s": int(t)}, ignore_checkpoint=broken) for t in intervals]
        r = checkpoint_cost(**p, ignore_checkpoint=broken)
        sat = _mark(r, "write_s", "overhead_pct")
        _show(curves, intervals, over, exact, max(p["interval_s"], 10), r.overhead_pct, broken,
              flagged=r.overhead_pct > 100 or bool(sat))
        status.set_text(f"write {r.write_s:,} s every {p['interval_s']:,} s: {r.overhead_pct:,}% overhead{sat}"
                        + _exact(overhead_pct_exact(**p, ignore_checkpoint=broken), "%", 1))

    return update


def view_failure_recovery(ax: Axes) -> Updater:
    nodes = np.unique(np.geomspace(1, 20000, 200).astype(int))
    ax.set(xscale="log", xlabel="nodes (log scale)", ylabel="work lost (min/day)", xlim=(1, 20000),
           ylim=(-10, 600), title="Work lost to failures against the node count")
    _limit(ax, TOLERABLE_LOST_MIN_PER_DAY, "tolerable at or below 60 min a day")
    _legend(ax, "center left")
    curves = _moving_curve(ax)
    status = _status(ax)

    def update(p: Inputs, broken: bool) -> None:
        lost = _both(failure_recovery, "ignore_failures", "lost_min_per_day", [{**p, "nodes": int(n)} for n in nodes])
        exact = [lost_min_per_day_exact(**{**p, "nodes": int(n)}, ignore_failures=broken) for n in nodes]
        r = failure_recovery(**p, ignore_failures=broken)
        sat = _mark(r, "lost_min_per_day")
        _show(curves, nodes, lost, exact, max(p["nodes"], 1), r.lost_min_per_day, broken,
              flagged=r.lost_min_per_day > 1440 or bool(sat))
        more = " (more than a day has)" if r.lost_min_per_day > 1440 else sat
        status.set_text(f"MTBF {r.cluster_mtbf_h:,} h, {r.failures_per_day:,} a day, "
                        f"{r.lost_min_per_day:,} min lost{more}"
                        + _exact(lost_min_per_day_exact(**p, ignore_failures=broken)))

    return update


def view_straggler_step(ax: Axes) -> Updater:
    names = ("typical rank", "slowest rank")
    ax.figure.subplots_adjust(left=0.22)
    ax.set(xlabel="time in one step (% of the mean rank's)", xlim=(0, 300), ylim=(-0.6, 1.9),
           title="One slow rank sets the step")
    work = ax.barh(names, [0, 0], color=CORRECT_COLOUR, animated=True, label="computing")
    wait = ax.barh(names, [0, 0], color="#bbbbbb", hatch="//", animated=True, label="waiting at the barrier")
    step = ax.axvline(0, color="black", lw=1.5, animated=True)
    ax.legend(loc="lower right", fontsize=SMALL)
    status = _status(ax)

    def update(p: Inputs, broken: bool) -> None:
        r = straggler_step(**p, assume_uniform=broken)
        unit = 100 / p["mean_ms"] if p["mean_ms"] else 0.0  # ms -> % of the mean (bars vanish at 0)
        times = (p["mean_ms"], p["slowest_ms"])
        for bar, w in zip(work, times):
            bar.set_width(w * unit)
            bar.set_color(_colour(broken))
        for bar, w, waited in zip(wait, times, (r.step_ms - p["mean_ms"], max(r.step_ms - p["slowest_ms"], 0))):
            bar.set_x(w * unit)
            bar.set_width(waited * unit)
        step.set_xdata([r.step_ms * unit] * 2)
        status.set_text(f"step {r.step_ms} ms, waste {r.waste_pct:,}%{_mark(r, 'waste_pct')}")

    return update


def view_activation_memory(ax: Axes) -> Updater:
    batches = np.arange(0, 65)
    ax.set(xlabel="batch", ylabel="activations held (MB, log)", xlim=(0, 64), yscale="log", ylim=(10, 1e5),
           title="Activation memory against the batch")
    (held,) = ax.plot([], [], "-", lw=2, animated=True)
    (recomputed,) = ax.plot([], [], "--", lw=2, animated=True)
    hbm = _limit(ax, 0, "", animated=True)
    # the legend tells the lines apart by their dash, in a neutral colour: both take the colour
    # of the build on the picture (blue correct, orange spec sheet)
    ax.plot([], [], "-", color="#444444", lw=2, label="hold every layer")
    ax.plot([], [], "--", color="#444444", lw=2, label="recompute")
    ax.plot([], [], color=LIMIT_COLOUR, ls=":", label="fast memory")
    (marker,) = ax.plot([], [], "o", ms=8, mec="black", animated=True)
    ax.legend(loc="lower right", fontsize=SMALL)
    status = _status(ax)

    def update(p: Inputs, broken: bool) -> None:
        for line, recompute in ((held, False), (recomputed, True)):
            act = [activation_memory(**{**p, "batch": int(b), "recompute": recompute},
                                     ignore_activations=broken).act_mb for b in batches]
            line.set_data(batches, np.maximum(act, 10))  # 0 MB sits on the log axis's floor
            line.set_color(_colour(broken))
            line.set_linewidth(3 if recompute == p["recompute"] else 1)
        r = activation_memory(**p, ignore_activations=broken)
        marker.set_data([p["batch"]], [max(r.act_mb, 10)])
        marker.set_color(_colour(broken))
        sat = _mark(r, "act_mb")
        marker.set_markeredgecolor(FLAG_COLOUR if sat else "black")
        hbm.set_ydata([max(p["hbm_mb"], 10)] * 2)
        status.set_text(f"{r.act_mb:,} MB{sat} of {p['hbm_mb']:,}: {'fits' if r.fits else 'does not fit'}")

    return update


def view_fabric_bisection(ax: Axes) -> Updater:
    ax.set(ylabel="across the cut (Gbps, log)", yscale="log", ylim=(10, 1e5),
           title="Full bisection against what the cut carries")
    bars = ax.bar(["full bisection", "what the cut carries"], [10, 10], bottom=1, color=["#999999", CORRECT_COLOUR],
                  animated=True)
    demand = _limit(ax, 0, "", animated=True)
    ax.plot([], [], color=LIMIT_COLOUR, ls=":", label="demand")
    ax.legend(loc="upper right", fontsize=SMALL)
    status = _status(ax)

    def update(p: Inputs, broken: bool) -> None:
        r = fabric_bisection(**p, assume_full=broken)
        bars[0].set_height(max(r.full_bisection_gbps, 1))
        bars[1].set_height(max(r.real_bisection_gbps, 1))
        bars[1].set_color(_colour(broken))
        demand.set_ydata([max(p["demand_gbps"], 10)] * 2)
        sat = _mark(r, "real_bisection_gbps", "full_bisection_gbps")
        status.set_text(f"{p['oversub_x']}:1 carries {r.real_bisection_gbps:,} Gbps{sat}: "
                        f"{'sufficient' if r.sufficient else 'short'}")

    return update


def view_cluster_economics(ax: Axes) -> Updater:
    effs = np.arange(1, 101)
    ax.set(xlabel="measured efficiency (%)", ylabel="cost per 1,000 useful TFLOPS", xlim=(0, 100),
           ylim=(0, 6000), title="Cost per useful teraflop against efficiency")
    _limit(ax, ACCEPTABLE_COST_PER_USEFUL, "acceptable at or below 1,500")
    _legend(ax, "center right")
    curves = _moving_curve(ax)
    status = _status(ax)

    def update(p: Inputs, broken: bool) -> None:
        cost = _both(cluster_economics, "ignore_efficiency", "cost_per_useful",
                     [{**p, "efficiency_pct": int(e)} for e in effs])
        exact = [cost_per_useful_exact(**{**p, "efficiency_pct": int(e)}, ignore_efficiency=broken) for e in effs]
        r = cluster_economics(**p, ignore_efficiency=broken)
        sat = _mark(r, "cost_per_useful", "useful_tflops", "total_cost")
        _show(curves, effs, cost, exact, p["efficiency_pct"], r.cost_per_useful, broken, flagged=bool(sat))
        status.set_text(f"{r.useful_tflops:,} useful TFLOPS at {r.cost_per_useful:,} per 1,000{sat}"
                        + _exact(cost_per_useful_exact(**p, ignore_efficiency=broken)))

    return update


def view_training_cluster_model(ax: Axes) -> Updater:
    names = [name for name, _ in PROPERTIES]
    ax.figure.subplots_adjust(left=0.34, bottom=0.12)
    ax.set(xticks=[], xlim=(0, 1), title="Six properties, one verdict")
    bars = ax.barh([words(n) for n in names[::-1]], [1] * 6, color="#dddddd", animated=True)
    labels = [ax.text(0.5, y, "", ha="center", va="center", fontsize=SMALL, animated=True) for y in range(6)]
    verdict = ax.text(0.5, -0.02, "", transform=ax.transAxes, ha="center", va="top", fontsize=9,
                      animated=True, bbox={"boxstyle": "round", "fc": "white", "ec": "#cccccc"})

    def update(p: Inputs, broken: bool) -> None:
        r = training_cluster_model(**p, scale_only=broken)
        for y, name in enumerate(names[::-1]):
            looked_at = name == "nodes_added" or not broken
            holds = bool(p[name])
            bars[y].set_color(("#4d9a4d" if holds else LIMIT_COLOUR) if looked_at else "#dddddd")
            labels[y].set_text(("holds" if holds else "fails") + ("" if looked_at else " (not looked at)"))
            labels[y].set_color("white" if looked_at else "#555555")
        verdict.set_text(f"scales: {'yes' if r.scales else 'no'}   failing properties {r.fail_mask:06b}"
                         + ("   FALSE CLAIM" if r.false_scale_err else ""))

    return update


VIEWS: dict[str, Callable[[Axes], Updater]] = {
    "cluster_scale": view_cluster_scale,
    "collective_cost": view_collective_cost,
    "pipeline_bubble": view_pipeline_bubble,
    "checkpoint_cost": view_checkpoint_cost,
    "failure_recovery": view_failure_recovery,
    "straggler_step": view_straggler_step,
    "activation_memory": view_activation_memory,
    "fabric_bisection": view_fabric_bisection,
    "cluster_economics": view_cluster_economics,
    "training_cluster_model": view_training_cluster_model,
}
"""The view of each chapter-1 model, by model name."""

EXPLORERS: dict[str, Callable[[], Explorer]] = {
    "cluster_scale": lambda: Explorer(
        cluster_scale,
        [Slider("nodes", 1, 1024, 64, log=True), Slider("node_tflops", 1, 1000, 100, log=True),
         Slider("compute_ms", 0, 1000, 100, 10), Slider("comm_ms", 0, 1000, 100, 10)],
        view_cluster_scale, title="Scaling efficiency: compute against communication"),
    "collective_cost": lambda: Explorer(
        collective_cost,
        [Slider("bytes_gb", 0, 64, 8), Slider("nodes", 0, 256, 8, log=True),
         Slider("fabric_gbps", 0, 3200, 800, 40), Slider("budget_ms", 0, 1000, 100, 10)],
        view_collective_cost, title="The all-reduce: bytes moved and time taken"),
    "pipeline_bubble": lambda: Explorer(
        pipeline_bubble,
        [Slider("stages", 1, 64, 8), Slider("microbatches", 0, 256, 32, log=True)],
        view_pipeline_bubble, title="The pipeline bubble against the microbatch count"),
    "checkpoint_cost": lambda: Explorer(
        checkpoint_cost,
        [Slider("footprint_gb", 0, 4000, 560, 10, log=True), Slider("tier_gbps", 0, 1600, 80, 10, log=True),
         Slider("interval_s", 0, 7200, 300, 10, log=True)],
        view_checkpoint_cost, title="Checkpoint overhead against the interval"),
    "failure_recovery": lambda: Explorer(
        failure_recovery,
        [Slider("nodes", 0, 20000, 1000, 50, log=True), Slider("node_mtbf_h", 0, 50000, 8760, 10, log=True),
         Slider("interval_min", 0, 240, 60, 5)],
        view_failure_recovery, title="Work lost to failures against the node count"),
    "straggler_step": lambda: Explorer(
        straggler_step,
        [Slider("mean_ms", 0, 1000, 200, 5), Slider("slowest_ms", 0, 1000, 260, 5)],
        view_straggler_step, floors={"slowest_ms": "mean_ms"},
        title="One slow rank sets the step"),
    "activation_memory": lambda: Explorer(
        activation_memory,
        [Slider("layers", 0, 200, 80), Slider("batch", 0, 64, 8), Slider("act_per_layer_mb", 0, 64, 16),
         Slider("hbm_mb", 0, 65535, 8192, 512, log=True)],
        view_activation_memory, checkboxes={"recompute": False},
        title="Activation memory against the batch"),
    "fabric_bisection": lambda: Explorer(
        fabric_bisection,
        [Slider("nodes", 0, 128, 16), Slider("link_gbps", 0, 1600, 800, 100),
         Slider("oversub_x", 0, 16, 4), Slider("demand_gbps", 0, 65535, 3200, 100, log=True)],
        view_fabric_bisection, title="Full bisection against what the cut carries"),
    "cluster_economics": lambda: Explorer(
        cluster_economics,
        [Slider("nodes", 1, 512, 64, log=True), Slider("node_cost", 1, 1000, 100, log=True),
         Slider("node_tflops", 10, 1000, 100, log=True), Slider("efficiency_pct", 0, 100, 50)],
        view_cluster_economics, title="Cost per useful teraflop against efficiency"),
    "training_cluster_model": lambda: Explorer(
        training_cluster_model, [], view_training_cluster_model,
        checkboxes={name: True for name, _ in PROPERTIES},
        title="Six properties, one verdict"),
}
"""Factories for the ten explorers, keyed by model name, with the chapter's defaults."""


def explorer(name: str) -> Explorer:
    """A fresh explorer for one of the ten chapter-1 models, at the chapter's defaults."""
    try:
        return EXPLORERS[name]()
    except KeyError:
        raise ValueError(f"name must be one of {sorted(EXPLORERS)}, got {name!r}") from None


# -- static figures -----------------------------------------------------------------

def figure_peak_to_delivered() -> "Figure":
    """Figure 1: peak against delivered, term by term, and where the peak's time goes."""
    from matplotlib.figure import Figure

    from ..peak.budget import peak_to_delivered

    terms = peak_to_delivered()
    fig = Figure(figsize=(10, 3.6), layout="constrained")
    left, right = fig.subplots(1, 2, width_ratios=(3, 2))
    names = [t.name for t in terms]
    values = [t.remaining_tflops for t in terms]
    colours = [CORRECT_COLOUR] + ["#8fb3de"] * (len(terms) - 2) + ["#2f7d32"]
    bars = left.bar(range(len(terms)), values, color=colours)
    for bar, v in zip(bars, values):
        left.annotate(f"{v:,.0f}", (bar.get_x() + bar.get_width() / 2, v), ha="center", va="bottom", fontsize=9)
    left.set_xticks(range(len(terms)), [n.replace(" (", "\n(").replace("pipeline ", "pipeline\n") for n in names],
                    fontsize=SMALL)
    left.set(ylabel="TFLOPS left after each term", title="Peak is bought ...", ylim=(0, values[0] * 1.12))
    lost = [terms[i - 1].remaining_tflops - terms[i].remaining_tflops for i in range(1, len(terms))]
    shares = [terms[-1].remaining_tflops] + lost
    labels = ["delivered"] + [t.name for t in terms[1:]]
    bottom = 0.0
    palette = ["#2f7d32", "#d9822b", "#e0b040", "#9e6bb5", "#7f7f7f"]
    for share, label, colour in zip(shares, labels, palette):
        pct = 100 * share / values[0]
        right.bar([0], [pct], bottom=bottom, color=colour, width=0.5)
        right.annotate(f"{label}: {pct:.0f}%", (0.3, bottom + pct / 2), va="center", fontsize=9)
        bottom += pct
    right.set(xlim=(-0.4, 1.6), ylim=(0, 100), xticks=[], ylabel="share of the peak (%)",
              title="... efficiency is earned")
    return legible(fig)


def figure_rank_timeline(ranks: int = 4, steps: int = 2) -> "Figure":
    """Section 10's picture: ranks computing, waiting for the slowest, then all-reducing together.

    Uses the chapter's worked values: 200 ms mean rank, one 260 ms rank, and
    the collective of the scaling table's first row (100 ms).
    """
    from matplotlib.figure import Figure

    mean, slow, comm = 200, 260, 100
    step = straggler_step(mean_ms=mean, slowest_ms=slow).step_ms
    fig = Figure(figsize=(10, 2.6), layout="constrained")
    ax = fig.subplots()
    for s in range(steps):
        start = s * (step + comm)
        for r in range(ranks):
            work = slow if r == ranks - 1 else mean
            ax.broken_barh([(start, work)], (r - 0.35, 0.7), color=CORRECT_COLOUR)
            if step > work:
                ax.broken_barh([(start + work, step - work)], (r - 0.35, 0.7), color="#bbbbbb", hatch="//")
            ax.broken_barh([(start + step, comm)], (r - 0.35, 0.7), color=BROKEN_COLOUR)
    ax.set_yticks(range(ranks), [f"rank {r}" + (" (slow)" if r == ranks - 1 else "") for r in range(ranks)])
    ax.set(xlabel="time (ms)", xlim=(0, steps * (step + comm)),
           title="blue: computing   grey: waiting for the slowest rank   orange: all-reduce")
    return legible(fig)


def figure_diagnosis_tree() -> "Figure":
    """Figure 4: the first split (compute against the rest) and the four owners of the rest."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(10, 3.4))
    ax = fig.subplots()
    ax.set_axis_off()
    ax.set(xlim=(0, 10), ylim=(0, 4))
    box = {"boxstyle": "round,pad=0.4", "fc": "#eef3fa", "ec": CORRECT_COLOUR}
    ax.text(5, 3.5, "split the step: compute against everything else", ha="center", va="center", bbox=box, fontsize=10)
    ax.text(1.6, 2.2, "compute: the part\nthat delivers TFLOPS", ha="center", va="center", fontsize=9,
            bbox={**box, "fc": "#e3f4e1", "ec": "#2f7d32"})
    ax.text(6.6, 2.2, "everything else: which term grew?", ha="center", va="center", fontsize=9, bbox=box)
    ax.annotate("", (1.6, 2.55), (4.2, 3.2), arrowprops={"arrowstyle": "->"})
    ax.annotate("", (6.6, 2.5), (5.8, 3.2), arrowprops={"arrowstyle": "->"})
    leaves = [
        (2.6, "collective and fabric\nnetwork team"),
        (4.9, "straggler\nper-node operations"),
        (7.2, "pipeline bubble\nscheduler configuration"),
        (9.3, "checkpoint\nstorage team"),
    ]
    for x, text in leaves:
        ax.text(x, 0.6, text, ha="center", va="center", fontsize=8.5,
                bbox={**box, "fc": "#fdf0e2", "ec": BROKEN_COLOUR})
        ax.annotate("", (x, 1.0), (6.6, 1.9), arrowprops={"arrowstyle": "->"})
    return legible(fig)


# -- the debug lab's replay -------------------------------------------------------------

class LabExplorer(Framed, W.VBox):
    """Sliders for the lab's inputs and a table of what they imply; a view over ``lab_summary``."""

    def __init__(self) -> None:
        style = {"description_width": "170px"}
        layout = W.Layout(width="100%", max_width="470px")
        self.controls = {
            "share_32_pct": W.IntSlider(70, 1, 100, description="compute share, 32 nodes", style=style, layout=layout),
            "share_64_pct": W.IntSlider(41, 1, 100, description="compute share, 64 nodes", style=style, layout=layout),
            "microbatches": W.IntSlider(32, 1, 256, description="microbatches", style=style, layout=layout),
            "slowest_ms": W.IntSlider(244, 180, 400, description="slowest rank (ms)", style=style, layout=layout),
        }
        self.table = W.HTML()
        for widget in self.controls.values():
            widget.tooltip = widget.description
            widget.observe(lambda change: self.update(), names="value")
        super().__init__([W.HTML("<b>Debug lab: the doubled cluster</b>"), *self.controls.values(), self.table])
        self.update()

    def __repr__(self) -> str:
        return "LabExplorer()"

    def rows(self) -> list[tuple[str, str, str]]:
        values = {k: w.value for k, w in self.controls.items()}
        return lab_summary(values["share_32_pct"], values["share_64_pct"], values["microbatches"],
                           180, values["slowest_ms"])

    def update(self) -> None:
        self.table.value = table(("", "32 nodes", "64 nodes"), self.rows())

    def report(self) -> str:
        lines = [f"{'':<28}{'32 nodes':>12}{'64 nodes':>26}"]
        lines += [f"{q:<28}{a:>12}{b:>26}" for q, a, b in self.rows()]
        return "\n".join(lines)


def lab_explorer() -> LabExplorer:
    """An interactive replay of the debug lab: sliders for its stated inputs, a table of what they imply."""
    return LabExplorer()


# -- teaching figures --
# Static pictures for the chapter's prose. Each draws a fixed case and returns a
# matplotlib Figure; every number on it comes from a chapter-1 model.

def figure_ring_allreduce(ranks: int = 4) -> "Figure":
    """A ring all-reduce over ``ranks`` ranks: reduce-scatter, then all-gather.

    Each panel is one step. A row is a rank, a column is a 1/N slice of the
    gradient; the shade is how many ranks' contributions the slice holds (light:
    its own only; dark: the full sum). In every step each rank sends one slice
    (1/N of the gradient) to its right-hand neighbour, so the 2(N - 1) steps put
    2(N - 1)/N of the gradient through every link (``collectives.ring_factor``).
    """
    from matplotlib.figure import Figure

    from ..peak.collectives import ring_factor

    n = ranks
    held = np.ones((n, n), dtype=int)          # held[rank, slice] = contributions summed there
    frames = [("start: each\nrank holds its\nown gradient", held.copy(), None)]
    for step in range(n - 1):                  # reduce-scatter: rank r sends slice (r - step) % n
        sent = [(r, (r - step) % n) for r in range(n)]
        new = held.copy()
        for r, c in sent:
            new[(r + 1) % n, c] = held[(r + 1) % n, c] + held[r, c]
        held = new
        frames.append((f"reduce-scatter {step + 1}", held.copy(), sent))
    for step in range(n - 1):                  # all-gather: rank r forwards its finished slice
        sent = [(r, (r + 1 - step) % n) for r in range(n)]
        new = held.copy()
        for r, c in sent:
            new[(r + 1) % n, c] = held[r, c]
        held = new
        frames.append((f"all-gather {step + 1}", held.copy(), sent))
    fig = Figure(figsize=(10, 3.3), layout="constrained")
    axes = fig.subplots(1, len(frames))
    cmap = __import__("matplotlib").colormaps["Blues"]
    for ax, (title, grid, sent) in zip(axes, frames):
        ax.imshow(grid, cmap=cmap, vmin=0, vmax=n + 0.5)
        for r in range(n):
            for c in range(n):
                ax.text(c, r, str(grid[r, c]), ha="center", va="center", fontsize=10,
                        color="white" if grid[r, c] > n / 2 else "black")
        if sent:
            for r, c in sent:
                ax.add_patch(__import__("matplotlib.patches", fromlist=["Rectangle"]).Rectangle(
                    (c - 0.5, r - 0.5), 1, 1, fill=False, ec="#d9822b", lw=2))
        ax.set_xticks(range(n), [f"{c + 1}" for c in range(n)], fontsize=SMALL)
        ax.set_yticks(range(n), [f"rank {r}" for r in range(n)] if ax is axes[0] else [], fontsize=SMALL)
        ax.set_title(title, fontsize=9)
        ax.tick_params(length=0)
    axes[0].set_xlabel("slice of the gradient", fontsize=SMALL)
    fig.suptitle(f"Ring all-reduce over {n} ranks: {2 * (n - 1)} steps, each sending 1/{n} of the gradient "
                 f"per link, {2 * (n - 1)}/{n} = {ring_factor(n):.2f} gradients in all\n"
                 "orange: the slice each rank sends to the next rank in that step; "
                 "number: how many ranks' contributions the slice holds", fontsize=9)
    return legible(fig)


def _schedule(stages: int, microbatches: int, one_f_one_b: bool) -> tuple[list[list[tuple[int, str, int]]], int]:
    """Start slot of every forward and backward pass, one slot each, dependencies honoured."""
    orders = []
    for s in range(stages):
        if not one_f_one_b:
            ops = [("F", m) for m in range(microbatches)] + [("B", m) for m in range(microbatches)]
        else:
            warm = min(stages - s - 1, microbatches)
            ops = [("F", m) for m in range(warm)]
            f, b = warm, 0
            while f < microbatches or b < microbatches:
                if f < microbatches:
                    ops.append(("F", f)); f += 1
                if b < microbatches:
                    ops.append(("B", b)); b += 1
        orders.append(ops)
    done: dict[tuple[str, int, int], int] = {}
    free = [0] * stages
    pos = [0] * stages
    placed: list[list[tuple[int, str, int]]] = [[] for _ in range(stages)]
    while any(pos[s] < len(orders[s]) for s in range(stages)):
        progressed = False
        for s in range(stages):
            if pos[s] >= len(orders[s]):
                continue
            kind, m = orders[s][pos[s]]
            deps = [("F", s - 1, m)] if kind == "F" and s > 0 else []
            if kind == "B":
                deps = [("F", s, m)] + ([("B", s + 1, m)] if s < stages - 1 else [("F", s, m)])
            if all(d in done for d in deps):
                start = max([free[s]] + [done[d] for d in deps])
                done[(kind, s, m)] = start + 1
                free[s] = start + 1
                placed[s].append((start, kind, m))
                pos[s] += 1
                progressed = True
        if not progressed:  # pragma: no cover - the orders above never deadlock
            raise RuntimeError("schedule deadlocked")
    return placed, max(free)


def figure_pipeline_schedules(stages: int = 4, microbatches: int = 8) -> "Figure":
    """GPipe and one-forward-one-backward (1F1B) on the same pipeline, one slot per pass.

    Both schedules leave each stage idle for (S - 1)/(M + S - 1) of the step
    (``pipeline.bubble_fraction``); 1F1B changes how many microbatches a stage
    holds activations for (at most S instead of M), not the bubble. Forward and
    backward passes are drawn one slot long each, the simplification under
    which the bubble formula is exact.
    """
    from matplotlib.figure import Figure

    from ..peak.pipeline import bubble_fraction

    fig = Figure(figsize=(10, 4.4), layout="constrained")
    axes = fig.subplots(2, 1, sharex=True)
    for ax, (name, ofob) in zip(axes, (("GPipe: every forward, then every backward", False),
                                       ("1F1B: one forward, one backward, after a short warm-up", True))):
        placed, length = _schedule(stages, microbatches, ofob)
        in_flight = 0
        for s, ops in enumerate(placed):
            ax.broken_barh([(0, length)], (s - 0.4, 0.8), color="#e8e8e8")
            live, most = 0, 0
            for start, kind, m in sorted(ops):
                live += 1 if kind == "F" else -1
                most = max(most, live)
                ax.broken_barh([(start, 1)], (s - 0.4, 0.8),
                               color="#8fb3de" if kind == "F" else "#2f7d32", ec="white", lw=0.6)
                ax.text(start + 0.5, s, f"{kind}{m + 1}", ha="center", va="center", fontsize=SMALL,
                        color="black" if kind == "F" else "white")
            in_flight = max(in_flight, most)
            ax.text(length + 0.3, s, f"holds ≤ {most}", va="center", fontsize=SMALL)
        busy = 2 * microbatches
        ax.set_yticks(range(stages), [f"stage {s + 1}" for s in range(stages)], fontsize=SMALL)
        ax.invert_yaxis()
        ax.set_title(f"{name}: step of {length} slots, each stage idle {length - busy} "
                     f"({100 * (length - busy) / length:.1f}%)", fontsize=9, loc="left")
        ax.set_xlim(0, length + 3)
    axes[1].set_xlabel("time slot (one forward or one backward pass of one microbatch)")
    fig.suptitle(f"{stages} stages, {microbatches} microbatches: bubble (S−1)/(M+S−1) = "
                 f"{100 * bubble_fraction(stages, microbatches):.1f}% in both; blue forward, green backward, "
                 "grey idle;\n'holds' is the most microbatches whose activations a stage keeps at once",
                 fontsize=SMALL)
    return legible(fig)


def figure_lab_step_breakdown() -> "Figure":
    """The debug lab's step at 32 and at 64 nodes: what the doubling bought, and where it went.

    Left: each node count's step as compute against everything else (the lab's
    70% and 41%, ``debug_lab.step_split``). Right: delivered TFLOPS against the
    doubling the team expected, with the three terms that grew.
    """
    from matplotlib.figure import Figure

    from ..peak import debug_lab as lab

    split = lab.step_split()
    shift = lab.bubble_shift(32)
    tax = lab.straggler_tax()
    cut = lab.cut_bandwidth()
    fig = Figure(figsize=(10, 3.6), layout="constrained")
    left, right = fig.subplots(1, 2, width_ratios=(3, 2))
    sizes = ("32 nodes", "64 nodes")
    comp = (split.efficiency_before_pct, split.efficiency_after_pct)
    for y, (name, c) in enumerate(zip(sizes, comp)):
        left.barh(y, c, color=CORRECT_COLOUR)
        left.barh(y, 100 - c, left=c, color="#d9822b")
        left.text(c / 2, y, f"compute\n{c}%", ha="center", va="center", color="white", fontsize=9)
        left.text(c + (100 - c) / 2, y, f"everything else\n{100 - c}%", ha="center", va="center", fontsize=9)
    left.set_yticks(range(2), sizes)
    left.invert_yaxis()
    left.set(xlim=(0, 100), title="The step, split (step 1 of the lab)")
    left.set_xlabel(f"share of one step (%)\nwhat grew in 'everything else': bubble {shift.exact_before_pct:.1f}% → "
                    f"{shift.exact_after_pct:.1f}% (4 → 8 stages, 32 microbatches);\nstraggler tax absorbed → "
                    f"{tax.exact_pct:.1f}%; the fabric's cut carries 1/{cut.factor} of its full-bisection figure",
                    fontsize=SMALL)
    expected = 2 * split.achieved_before_tflops
    vals = (split.achieved_before_tflops, split.achieved_after_tflops, expected)
    bars = right.bar(range(3), vals, color=[CORRECT_COLOUR, CORRECT_COLOUR, "#cccccc"])
    for bar, v in zip(bars, vals):
        right.annotate(f"{v:,.0f}", (bar.get_x() + bar.get_width() / 2, v), ha="center", va="bottom", fontsize=9)
    right.set_xticks(range(3), ["32 nodes", "64 nodes", "64, if it\nhad scaled"], fontsize=SMALL)
    right.set(ylabel="delivered TFLOPS", ylim=(0, expected * 1.15),
              title=f"Twice the nodes, {split.throughput_ratio:.2f}× the throughput")
    return legible(fig)
