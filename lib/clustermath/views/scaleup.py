"""Chapter 5 ("Scale-up domains that survive faults"): the ring builder explorer and the chapter's figures.

Every count drawn comes from ``scaleup`` or ``ring_builder``; the functions here
only place nodes, links and bars. ``ring_explorer`` follows the blitting
protocol of ``views.base.LiveFigure``: its artists are created once, animated,
and moved by ``update``; the axes never change.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping

import ipywidgets as W
import numpy as np
from matplotlib.axes import Axes
from matplotlib.collections import LineCollection, PolyCollection
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter

from ..scaleup.ring_builder import RingBuilder, draw_failures, ring_builder, ring_layout
from ..scaleup.domains import fragmentation, tor_wiring
from .base import CORRECT_COLOUR, LIMIT_COLOUR, SMALL, legible, ModelView, Slider, Updater, table

__all__ = ["EXPLORERS", "FAULT_STEP", "PRESETS", "fault_stops", "figure_cut_waste", "figure_design",
           "figure_fault_trace", "figure_fragmentation", "figure_k_hop_ring", "figure_ocstrx", "figure_tor_wiring", "ring_explorer", "view_ring"]

GROUP_COLOURS = ("#6f9fd8", "#2f5f9f")
"""Alternate TP groups in two blues."""
IDLE_COLOUR = "#c8c8c8"
FAILED_COLOUR = "#d9534f"
CUT_COLOUR = "#7a1010"
LOOP_COLOUR = "#2f8f3a"
BACKUP_COLOUR = "#e08a1e"
WINDOW = 32
"""Nodes of one draw that the explorer draws."""
PRESETS = {"trace mean, 2.33%": 2.33, "trace p99, 7.22%": 7.22}
"""The fault-trace rates (share of faulty 8-GPU nodes, %) the explorer offers as buttons."""
FAULT_STEP = 0.05
"""The fault slider's grid (%): 301 stops from 0 to 15%, where a step of 0.01 made 1,501 (each a frame of the
static page, about 25 ms of a build's CPU); a step of 0.05% moves the waste by well under its 95% interval."""


def fault_stops(*extra: float) -> list[float]:
    """The fault slider's stops (%): every ``FAULT_STEP`` from 0 to 15 (0, no faults, included), the
    ``PRESETS`` and ``extra`` values exactly, so each preset button lands on a stop."""
    grid = {round(k * FAULT_STEP, 2) for k in range(round(15 / FAULT_STEP) + 1)}
    return sorted(grid | set(PRESETS.values()) | set(extra))
BAR_SCALE = 0.25
"""The waste bars are drawn on a fixed 0-25% scale; longer ones are clipped and say so."""

Inputs = Mapping[str, Any]


def _rects(x0: np.ndarray, y0: np.ndarray, w: Any, h: float) -> np.ndarray:
    x0, y0 = np.asarray(x0, float), np.asarray(y0, float)
    x1, y1 = x0 + w, y0 + h
    return np.stack([np.stack([x0, y0], -1), np.stack([x1, y0], -1),
                     np.stack([x1, y1], -1), np.stack([x0, y1], -1)], axis=1)


def _arc(x0: float, x1: float, y: float, height: float, n: int = 12) -> np.ndarray:
    """A bump from (x0, y) to (x1, y) rising by ``height``: a backup link that steps over nodes."""
    t = np.linspace(0.0, 1.0, n)
    return np.stack([x0 + (x1 - x0) * t, y + height * np.sin(np.pi * t)], axis=1)


def _loop(x: float, y: float, size: float = 0.28) -> np.ndarray:
    """A small open loop hanging under a node at the end of a TP group (the loopback path)."""
    t = np.linspace(0.15 * np.pi, 1.85 * np.pi, 14)
    return np.stack([x + size * 0.8 * np.sin(t), y - size - size * 0.9 * np.cos(t)], axis=1)


def _line_geometry(role: np.ndarray, group: np.ndarray, y: float = 0.0, *, before: int = -1,
                   after: int = -1) -> dict[str, Any]:
    """Where to put the nodes and links of a window of one line (x = 0, 1, ...).

    Active links join consecutive healthy nodes of the same TP group: straight
    when they are neighbours, an arc (a backup link in use) when failed nodes
    lie between them. Each group's first and last node gets a loopback, except
    where the group goes on outside the window: ``before`` and ``after`` name
    the groups that continue past the left and right edges, and their links
    run to the edge instead (a loopback there would be false).
    """
    straight, arcs, loops = [], [], []
    keep = np.flatnonzero(group >= 0)
    for a, b in zip(keep[:-1], keep[1:]):
        if group[a] != group[b]:
            continue
        if b == a + 1:
            straight.append(((a, y), (b, y)))
        else:
            arcs.append(_arc(a, b, y + 0.22, 0.45))
    for g in np.unique(group[keep]):
        members = np.flatnonzero(group == g)
        if g == before:
            straight.append(((-0.5, y), (members[0], y)))
        else:
            loops.append(_loop(members[0], y - 0.22))
        if g == after:
            straight.append(((members[-1], y), (role.size - 0.5, y)))
        else:
            loops.append(_loop(members[-1], y - 0.22))
    colours = [GROUP_COLOURS[gr % 2] if r == 0 else (IDLE_COLOUR, FAILED_COLOUR, CUT_COLOUR)[r - 1]
               for r, gr in zip(role.tolist(), group.tolist())]
    return {"straight": straight, "arcs": arcs, "loops": loops, "colours": colours}


def _node_boxes(n: int, y: float = 0.0, size: float = 0.44) -> np.ndarray:
    x = np.arange(n, dtype=float)
    return _rects(x - size / 2, np.full(n, y - size / 2), size, size)


def _window(failed: np.ndarray, width: int = WINDOW) -> int:
    """First node of a window of ``width`` nodes that starts a few nodes before the first failure."""
    hits = np.flatnonzero(failed)
    start = int(hits[0]) - 3 if hits.size else 0
    return max(0, min(start, failed.size - width))


def _window_geometry(group: np.ndarray, role: np.ndarray, w0: int, width: int = WINDOW) -> dict[str, Any]:
    """``_line_geometry`` of nodes ``w0 .. w0 + width - 1`` of a whole line, knowing which groups
    continue past the window's edges (they get a link to the edge, not a loopback)."""
    part = group[w0:w0 + width]
    left, right = group[:w0], group[w0 + width:]
    before = int(left[left >= 0][-1]) if (left >= 0).any() else -1
    after = int(right[right >= 0][0]) if (right >= 0).any() else -1
    return _line_geometry(role[w0:w0 + width], part, before=before if before in part else -1,
                          after=after if after in part else -1)


# -- the explorer's picture --------------------------------------------------------------------

BAR_NAMES = ("K-hop ring, simulated", "paper's bound (cut waste)", "corrected worst case", "static TP rings",
             "72-GPU switch domains")
"""The five bars of the explorer, top to bottom."""


def _bar_shares(result: RingBuilder) -> tuple[list[float], list[float]]:
    """Bar lengths: the ring's remainder part, the cuts' part, bound, worst case, static, switch; and the
    whole length of each of the five bars (for the off-scale marks)."""
    rest = result.ring_waste - result.cut_waste
    parts = [rest, result.cut_waste, result.bound, result.worst_case, result.static_waste, result.switch_waste]
    return parts, [result.ring_waste, *parts[2:]]


SLIVER = 0.05
"""The narrowest a waste bar above zero is drawn, in the ring picture's x units (about one CSS px)."""


def view_ring(ax: Axes) -> Updater:
    """Top: five waste bars on a fixed 0-25% scale: the K-hop ring (its line remainder pale, the cuts'
    part dark), the paper's bound and the corrected worst case on the cuts' part, static rings and
    switch domains; simulated bars carry their 95% interval and a tick at the exact expectation.
    Bottom: 32 nodes of the first draw, from a few nodes before its first failure.

    ``update(inputs, result)`` takes the explorer's inputs and the ``RingBuilder`` it computed.
    """
    ax.figure.subplots_adjust(left=0.01, right=0.99, bottom=0.01, top=0.99)
    ax.set_axis_off()
    ax.set(xlim=(-1.0, WINDOW + 0.2), ylim=(-1.9, 5.6))
    bar_x0, bar_w, height = 9.0, 18.0, 0.42
    ys = np.array([5.15, 4.6, 4.05, 3.5, 2.95])
    for y, name in zip(ys, BAR_NAMES):
        ax.text(bar_x0 - 0.3, y, name, ha="right", va="center", fontsize=8.5)
    for frac in (0.0, 0.05, 0.10, 0.15, 0.20, 0.25):
        x = bar_x0 + bar_w * frac / BAR_SCALE
        ax.plot([x, x], [2.65, 5.45], color="#e4e4e4", lw=0.8, zorder=0)
        ax.text(x, 2.5, f"{frac:.0%}", ha="center", va="top", fontsize=SMALL, color="#666666")
    key = ("bars: healthy GPUs left idle, as a share of all GPUs;",
           "ring: pale = the line's remainder, dark = what the cuts add",
           "| exact expectation     ⊢⊣ 95% interval of the 200-draw mean     ▶ off the scale")
    for y, line in zip((2.12, 1.8, 1.48), key):
        ax.text(bar_x0 + bar_w / 2, y, line, ha="center", va="center", fontsize=SMALL, color="#555555")
    bars = PolyCollection([], facecolor=["#a9c4e4", CORRECT_COLOUR, LIMIT_COLOUR, "#c77d7d", "#888888", "#b58b00"],
                          edgecolor="none", animated=True)
    spread = LineCollection([], colors="black", linewidths=1.0, animated=True)
    exact = LineCollection([], colors="black", linewidths=2.0, animated=True)
    (clipped,) = ax.plot([], [], ">", ms=7, color="black", animated=True)
    for artist in (bars, spread, exact):
        ax.add_collection(artist)

    ax.plot([-0.5, WINDOW - 0.5], [0, 0], color="#eeeeee", lw=1.0, zorder=0)
    nodes = PolyCollection(_node_boxes(WINDOW), edgecolor="#333333", linewidth=0.6, animated=True)
    straight = LineCollection([], colors=CORRECT_COLOUR, linewidths=1.8, animated=True)
    arcs = LineCollection([], colors=BACKUP_COLOUR, linewidths=1.8, animated=True)
    loops = LineCollection([], colors=LOOP_COLOUR, linewidths=1.4, animated=True)
    for artist in (straight, arcs, loops, nodes):
        ax.add_collection(artist)
    ax.text(-0.5, 1.05, f"{WINDOW} nodes of the first draw, from a few nodes before its first failure "
            "(a link to the edge: the group goes on)", ha="left", va="center", fontsize=8.5)
    ax.legend(handles=[Patch(facecolor=GROUP_COLOURS[0], edgecolor="#333333", label="in a TP group"),
                       Patch(facecolor=IDLE_COLOUR, edgecolor="#333333", label="idle remainder"),
                       Patch(facecolor=FAILED_COLOUR, edgecolor="#333333", label="failed, skipped"),
                       Patch(facecolor=CUT_COLOUR, edgecolor="#333333", label="failed, cuts the line"),
                       Line2D([], [], color=BACKUP_COLOUR, lw=1.8, label="backup link in use"),
                       Line2D([], [], color=LOOP_COLOUR, lw=1.4, label="loopback")],
              loc="lower center", bbox_to_anchor=(0.5, 0.0), ncol=6, fontsize=SMALL, frameon=False,
              handlelength=1.4, columnspacing=0.9)

    def x_of(share: float) -> float:
        return bar_x0 + bar_w * min(max(share, 0.0), BAR_SCALE) / BAR_SCALE

    def update(p: Inputs, result: RingBuilder | None = None) -> None:
        r = p["gpus_per_node"]
        if result is None:
            result = ring_builder(p["fault_pct"] / 100, r, p["tp"], p["hops"])
        parts, whole = _bar_shares(result)
        starts = [bar_x0, x_of(parts[0]), bar_x0, bar_x0, bar_x0, bar_x0]
        ends = [x_of(parts[0]), x_of(parts[0] + parts[1]), *(x_of(v) for v in parts[2:])]
        rows = ys[[0, 0, 1, 2, 3, 4]]
        widths = np.array(ends) - np.array(starts)
        widths[widths > 0] = np.maximum(widths[widths > 0], SLIVER)  # a share above zero never vanishes
        bars.set_verts(_rects(np.array(starts), rows - height / 2, widths, height))
        over = np.array(whole) > BAR_SCALE
        clipped.set_data(np.full(int(over.sum()), bar_x0 + bar_w + 0.35), ys[over])
        simulated = ((0, "ring_waste"), (3, "static_waste"), (4, "switch_waste"))
        spread.set_segments([((x_of(getattr(result, n) - result.ci95(n)), ys[i]),
                              (x_of(getattr(result, n) + result.ci95(n)), ys[i])) for i, n in simulated]
                            + [((x_of(getattr(result, n) + sign * result.ci95(n)), ys[i] - 0.1),
                                (x_of(getattr(result, n) + sign * result.ci95(n)), ys[i] + 0.1))
                               for i, n in simulated for sign in (-1, 1)])
        exact.set_segments([((x_of(getattr(result.exact, n)), ys[i] - 0.27), (x_of(getattr(result.exact, n)),
                                                                                ys[i] + 0.27))
                            for i, n in simulated])
        failed = _first_draw(result, r)
        lay = ring_layout(failed, p["tp"] // r, p["hops"])
        w0 = _window(failed)
        geo = _window_geometry(lay.group, lay.role, w0)
        nodes.set_facecolor(geo["colours"] + ["white"] * (WINDOW - len(geo["colours"])))
        straight.set_segments(geo["straight"])
        arcs.set_segments(geo["arcs"])
        loops.set_segments(geo["loops"])

    return update


def _first_draw(result: RingBuilder, gpus_per_node: int) -> np.ndarray:
    """The failed nodes of the first of ``result``'s draws (same seed and rate as the model)."""
    return draw_failures(result.node_rate, result.gpus // gpus_per_node, 1, 0)[0]


def _pm(value: float, half: float, spec: str) -> str:
    """A simulated mean with its 95% interval, e.g. ``0.460% ± 0.041%``."""
    return f"{format(value, spec)} ± {format(half, spec)}"


class RingExplorer(ModelView):
    """The ring builder: sliders for the chance an 8-GPU node is down, R, TP and K; preset buttons for the trace."""

    ROWS = (
        ("faulty nodes per draw", "faulty_nodes", "{:,.2f}"),
        ("cuts per draw", "ring_cuts", "{:,.3f}"),
        ("K-hop ring waste", "ring_waste", "{:.3%}"),
        ("  of which cuts add", "cut_waste", "{:.3%}"),
        ("static ring waste", "static_waste", "{:.3%}"),
        ("72-GPU switch waste", "switch_waste", "{:.3%}"),
        ("usable GPUs of 2,880", "usable_gpus", "{:,.1f}"),
    )
    """(label, field, format) of the simulated rows: the mean ± its 95% interval, and the exact value."""
    BOUNDS = (
        ("paper's bound, 2(Nₜ−R)Pₛᴷ", "bound", "{:.3%}"),
        ("worst case, (Nₜ/R)(1−Pₛ)Pₛᴷ", "worst_case", "{:.3%}"),
    )
    """(label, field, format) of the closed forms, shown in the exact column."""

    def __init__(self, fault_pct: float = 2.33, gpus_per_node: int = 4, tp: int = 32, hops: int = 3) -> None:
        self._last: RingBuilder | None = None
        super().__init__(
            _ring_model,
            [Slider("fault_pct", 0.0, 15.0, fault_pct, label="8-GPU node down (%)", readout_format=".2f",
                    stops=fault_stops(fault_pct)),
             Slider("gpus_per_node", 4, 8, gpus_per_node, 4, label="GPUs per node (R)"),
             Slider("tp", 16, 64, tp, 16, label="TP group size (GPUs)"),
             Slider("hops", 1, 4, hops, label="hops K")],
            lambda ax: _explorer_view(ax, self),
            title="Ring builder: 2,880 GPUs, 200 seeded draws, each node failing independently",
            figsize=(7.5, 3.5),
        )
        buttons = []
        for name, value in PRESETS.items():
            button = W.Button(description=name, layout=W.Layout(width="185px"))
            button.on_click(lambda _b, v=value: setattr(self.controls["fault_pct"], "value", v))
            buttons.append(button)
        self.presets = buttons
        left = self.children[1].children[0]
        # the table has three columns: it goes under the controls and the picture, at full width
        left.children = (*left.children[:-1], W.HBox(buttons))
        self.children[1].layout = W.Layout(flex_flow="row wrap")
        self.table.layout = W.Layout(overflow="auto", max_width="100%")
        self.children = (*self.children, self.table)

    def __repr__(self) -> str:
        return "RingExplorer(ring_builder)"

    def compute(self) -> RingBuilder:
        self._last = _ring_model(**self.arguments)
        return self._last

    def _word_rows(self, result: RingBuilder) -> list[tuple[str, str, str, bool]]:
        """(label, simulated ± 95%, exact, flagged): the bound is flagged when it exceeds 100%."""
        rate = ("chance a node is down, Pₛ", "", f"{result.node_rate:.2%}", False)
        sim = [(label, _pm(getattr(result, name), result.ci95(name), spec.strip("{:}")),
                spec.format(getattr(result.exact, name)), False) for label, name, spec in self.ROWS]
        closed = [(label, "—", spec.format(getattr(result, name)), getattr(result, name) > 1.0)
                  for label, name, spec in self.BOUNDS]
        return [rate, *sim[:4], *closed, *sim[4:]]

    def table_html(self, result: RingBuilder) -> str:
        rows = self._word_rows(result)
        flagged = {i: "the bound is above 100%: it says nothing here" for i, row in enumerate(rows) if row[3]}
        html = table(("output", "simulated ± 95%", "exact"), [row[:3] for row in rows], flagged=flagged)
        # labels on one line; on a phone the table scrolls sideways (the widget's overflow, set in
        # __init__) instead of folding every label
        return html.replace("text-align:left'>", "text-align:left;white-space:nowrap'>")

    def report(self) -> str:
        a = self.arguments
        head = (f"ring builder: 8-GPU nodes {a['fault_pct']:.2f}% faulty, R = {a['gpus_per_node']}, "
                f"TP-{a['tp']}, K = {a['hops']}, 200 draws of 2,880 GPUs")
        rows = self._word_rows(self.compute())
        width = max(len(k) for k, *_ in rows) + 2
        lines = [head, f"{'':<{width}}{'simulated, ± 95%':>22}{'exact':>14}"]
        lines += [f"{k:<{width}}{sim:>22}{exact:>14}{' (above 100%: says nothing)' if bad else ''}"
                  for k, sim, exact, bad in rows]
        return "\n".join(lines)


def _ring_model(fault_pct: float, gpus_per_node: int, tp: int, hops: int) -> RingBuilder:
    """``ring_builder`` with the rate in percent, as the slider gives it."""
    return ring_builder(fault_pct / 100.0, gpus_per_node, tp, hops)


def _explorer_view(ax: Axes, explorer: RingExplorer) -> Updater:
    update = view_ring(ax)

    def move(p: Inputs, mode: Any = None) -> None:
        update(p, explorer._last)

    return move


def ring_explorer(fault_pct: float = 2.33, gpus_per_node: int = 4, tp: int = 32, hops: int = 3) -> RingExplorer:
    """The chapter's ring builder (source 004's Panel 1). Defaults: the trace's mean rate, R = 4, TP-32, K = 3."""
    return RingExplorer(fault_pct, gpus_per_node, tp, hops)


EXPLORERS: dict[str, Callable[[], ModelView]] = {"ring_builder": ring_explorer}
"""Factories for chapter 5's explorers (found by ``tools/bench_widgets.py``)."""


# -- static figures ------------------------------------------------------------------------------

def _gpu_grid(ax: Axes, x0: float, y0: float, gpus: int, failed: set[int], tp: int, cols: int = 16,
              label: str = "") -> int:
    """Draw a domain of ``gpus`` squares, ``cols`` to a row; healthy GPUs fill TP groups in order."""
    f = fragmentation(gpus, len(failed), tp)
    colours, k = [], 0
    for i in range(gpus):
        if i in failed:
            colours.append(FAILED_COLOUR)
            continue
        colours.append(GROUP_COLOURS[(k // tp) % 2] if k < f.groups * tp else IDLE_COLOUR)
        k += 1
    idx = np.arange(gpus)
    ax.add_collection(PolyCollection(_rects(x0 + idx % cols, y0 - idx // cols, 0.86, 0.86), facecolor=colours,
                                     edgecolor="#333333", linewidth=0.5))
    rows = (gpus + cols - 1) // cols
    ax.add_patch(_frame(x0, y0, cols, rows))
    if label:
        ax.text(x0, y0 + 1.25, label, fontsize=9, va="bottom")
    return f.idle_gpus


def _frame(x0: float, y0: float, cols: int, rows: int):
    from matplotlib.patches import Rectangle

    return Rectangle((x0 - 0.15, y0 - rows + 0.85), cols + 0.16, rows + 0.3, fill=False, edgecolor="#555555", lw=1.0)


def figure_fragmentation() -> Figure:
    """The paper's example at TP-16: two 32-GPU domains with one failure each, one 64-GPU domain with two."""
    fig = Figure(figsize=(9.6, 3.9))
    ax = fig.add_axes((0.01, 0.02, 0.98, 0.96))
    ax.set_axis_off()
    a = _gpu_grid(ax, 0, 6, 32, {20}, 16, label="domain A, 32 GPUs, 1 failed")
    b = _gpu_grid(ax, 18, 6, 32, {9}, 16, label="domain B, 32 GPUs, 1 failed")
    c = _gpu_grid(ax, 0, 1, 64, {20, 41}, 16, cols=32, label="one 64-GPU domain, 2 failed")
    ax.text(34.6, 5.4, f"idle: {a} + {b} = {a + b} GPUs", fontsize=10, va="center", color="#333333")
    ax.text(34.6, 0.4, f"idle: {c} GPUs", fontsize=10, va="center", color="#333333")
    ax.set(xlim=(-0.5, 44), ylim=(-1.6, 7.9))
    ax.legend(handles=[Patch(facecolor=GROUP_COLOURS[0], edgecolor="#333333", label="in a TP-16 group"),
                       Patch(facecolor=IDLE_COLOUR, edgecolor="#333333", label="healthy but idle"),
                       Patch(facecolor=FAILED_COLOUR, edgecolor="#333333", label="failed")],
              loc="lower center", ncol=3, fontsize=9, frameon=False, bbox_to_anchor=(0.4, -0.02))
    return legible(fig)


def figure_fault_trace(trace: Any) -> Figure:
    """A synthetic series with the trace's mean, median and p99, and its distribution (clearly labelled)."""
    fig = Figure(figsize=(10, 3.4), layout="constrained")
    left, right = fig.subplots(1, 2, width_ratios=(2.1, 1))
    left.plot(trace.days, trace.faulty_pct, color="#7a7a7a", lw=0.6)
    for value, name, style in ((trace.mean_pct, "mean", "-"), (trace.median_pct, "median", "--"),
                               (trace.p99_pct, "p99", ":")):
        left.axhline(value, color=LIMIT_COLOUR if name == "p99" else CORRECT_COLOUR, ls=style, lw=1.2,
                     label=f"{name} {value:.2f}%")
    left.set(xlabel="day", ylabel="faulty 8-GPU nodes (%)", xlim=(0, trace.days[-1]), ylim=(0, None),
             title="SYNTHETIC series (not the paper's data): same mean, median and p99")
    left.legend(fontsize=SMALL, loc="upper right")
    values = np.sort(trace.faulty_pct)
    right.plot(values, (np.arange(values.size) + 0.5) / values.size, color="#444444")
    right.axvline(trace.median_pct, color=CORRECT_COLOUR, ls="--", lw=1.2)
    right.axvline(trace.p99_pct, color=LIMIT_COLOUR, ls=":", lw=1.2)
    right.set(xlabel="faulty 8-GPU nodes (%)", ylabel="share of time at or below", ylim=(0, 1.01),
              title="its distribution (synthetic)")
    return legible(fig)


def figure_k_hop_ring(failed_nodes: tuple[int, ...] = (3,), nodes: int = 9, group_nodes: int = 4,
                      hops: int = 2) -> Figure:
    """A line of nodes wired at +-1 and +-2 (K = 2): one failed node bypassed by a backup link,
    two TP groups closed by loopbacks at their ends. Node indices count from 0 (N1 is 0)."""
    failed = np.zeros(nodes, bool)
    failed[list(failed_nodes)] = True
    lay = ring_layout(failed, group_nodes, hops)
    geo = _line_geometry(lay.role, lay.group)
    fig = Figure(figsize=(9.2, 3.0))
    ax = fig.add_axes((0.01, 0.12, 0.98, 0.86))
    ax.set_axis_off()
    ax.set(xlim=(-0.9, nodes - 0.1), ylim=(-1.3, 1.45))
    idle = [((i, 0), (i + 1, 0)) for i in range(nodes - 1)]
    # backup links: hop h from even nodes above the row, from odd nodes below it
    idle_arcs = [_arc(i, i + h, 0.22, 0.3 + 0.25 * (h - 2)) if i % 2 == 0 else
                 _arc(i, i + h, -0.22, -0.3 - 0.25 * (h - 2)) for h in range(2, hops + 1) for i in range(nodes - h)]
    ax.add_collection(LineCollection(idle + idle_arcs, colors="#c4c4c4", linewidths=1.0, linestyles="--"))
    ax.add_collection(LineCollection(geo["straight"], colors=CORRECT_COLOUR, linewidths=2.2))
    ax.add_collection(LineCollection(geo["arcs"], colors=BACKUP_COLOUR, linewidths=2.4))
    ax.add_collection(LineCollection(geo["loops"], colors=LOOP_COLOUR, linewidths=1.8))
    ax.add_collection(PolyCollection(_node_boxes(nodes), facecolor=geo["colours"], edgecolor="#333333",
                                     linewidth=0.7))
    for i in range(nodes):
        ax.text(i, 0, f"N{i + 1}" + (" ✕" if failed[i] else ""), ha="center", va="center", fontsize=SMALL,
                color="white" if lay.role[i] in (0, 3) or failed[i] else "black")
    for g in range(lay.groups):
        members = np.flatnonzero(lay.group == g)
        ax.text(members.mean(), 1.25, f"TP group {g + 1}: " + " ".join(f"N{m + 1}" for m in members),
                ha="center", fontsize=9, color=GROUP_COLOURS[g % 2])
    ax.legend(handles=[Line2D([], [], color=CORRECT_COLOUR, lw=2.2, label="active link"),
                       Line2D([], [], color=BACKUP_COLOUR, lw=2.4, label="backup link in use"),
                       Line2D([], [], color="#c4c4c4", lw=1.0, ls="--", label="idle or backup link"),
                       Line2D([], [], color=LOOP_COLOUR, lw=1.8, label="loopback"),
                       Patch(facecolor=FAILED_COLOUR, edgecolor="#333333", label="failed")],
              loc="upper center", bbox_to_anchor=(0.5, 0.02), ncol=5, fontsize=SMALL, frameon=False)
    return legible(fig)


def figure_tor_wiring(tors: int = 4, nodes_per_tor: int = 4) -> Figure:
    """Four ToRs of four nodes: (a) the ring in deployment order, (b) InfiniteHBD's sub-line wiring.

    Nodes are drawn in ToR columns. One TP group is outlined in blue and the
    DP peers of its first GPU position are joined in red when they cross ToRs,
    green when they share one. The titles carry ``tor_wiring``'s counts.
    """
    fig = Figure(figsize=(10, 3.9), layout="constrained")
    axes = fig.subplots(1, 2)
    r = nodes_per_tor
    for ax, wiring, tag in ((axes[0], "in-order", "(a) ring in deployment order"),
                            (axes[1], "sub-line", "(b) sub-line wiring: main links to N(n ± r)")):
        g = r if wiring == "in-order" else tors
        counts = tor_wiring(tors, r, g, wiring)
        ax.set_axis_off()
        ax.set(xlim=(-0.8, tors - 0.2), ylim=(-r - 0.2, 1.0))
        pos = {}
        for n in range(tors * r):
            t, s = divmod(n, r)
            pos[n] = (t, -s)
        if wiring == "in-order":
            line = list(range(tors * r))
        else:
            line = [t * r + s for s in range(r) for t in range(tors)]
        segs = [(pos[a], pos[b]) for a, b in zip(line[:-1], line[1:])]
        ax.add_collection(LineCollection(segs, colors="#9a9a9a", linewidths=1.0))
        group = line[:g]
        peers = [line[j * g] for j in range(len(line) // g)]
        cross = len({pos[p][0] for p in peers}) > 1
        ax.add_collection(LineCollection([(pos[a], pos[b]) for a, b in zip(group[:-1], group[1:])],
                                         colors=CORRECT_COLOUR, linewidths=3.0))
        ax.add_collection(LineCollection([((pos[a][0] + 0.18, pos[a][1]), (pos[b][0] + 0.18, pos[b][1]))
                                          for a, b in zip(peers[:-1], peers[1:])],
                                         colors=LIMIT_COLOUR if cross else LOOP_COLOUR, linewidths=2.0,
                                         linestyles="--"))
        for n, (x, y) in pos.items():
            ax.text(x, y, f"N{n + 1}", ha="center", va="center", fontsize=SMALL,
                    bbox={"boxstyle": "round", "fc": "white", "ec": "#555555"})
        for t in range(tors):
            ax.text(t, 0.65, f"ToR {t + 1}", ha="center", fontsize=9, weight="bold")
        ax.set_title(f"{tag}\nTP groups across ToRs: {counts.tp_groups_across_tors} of {counts.tp_groups}; "
                     f"DP groups across ToRs: {counts.dp_groups_across_tors} of {counts.dp_groups}", fontsize=9)
    fig.legend(handles=[Line2D([], [], color="#9a9a9a", lw=1.0, label="HBD ring link"),
                        Line2D([], [], color=CORRECT_COLOUR, lw=3.0, label="one TP group"),
                        Line2D([], [], color=LIMIT_COLOUR, lw=2.0, ls="--", label="DP peers, across ToRs"),
                        Line2D([], [], color=LOOP_COLOUR, lw=2.0, ls="--", label="DP peers, one ToR")],
               loc="outside lower center", ncol=4, fontsize=SMALL, frameon=False)
    return legible(fig)


# -- the design, drawn from the source's description of the paper's Figures 2 and 3 ----------

def _box(ax: Axes, x: float, y: float, w: float, h: float, text: str, *, fc: str = "white",
         fontsize: float = 10, ec: str = "#444444") -> None:
    from matplotlib.patches import FancyBboxPatch

    ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0.02,rounding_size=0.12", fc=fc, ec=ec, lw=1.0))
    ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=fontsize)


def _arrow(ax: Axes, start: tuple[float, float], end: tuple[float, float], *, colour: str = "#444444",
           style: str = "-|>", ls: str = "-", rad: float = 0.0, lw: float = 1.3) -> None:
    from matplotlib.patches import FancyArrowPatch

    ax.add_patch(FancyArrowPatch(start, end, arrowstyle=style, mutation_scale=11, color=colour, lw=lw, ls=ls,
                                 connectionstyle=f"arc3,rad={rad}", shrinkA=1, shrinkB=1))


def figure_ocstrx() -> Figure:
    """The switching transceiver's signal chain, after the paper's Figure 3 as source 004 describes it.

    Transmit: the GPU's electrical lanes drive a modulator that puts them on one
    laser's light; two Mach-Zehnder elements send all of it to one of three
    outputs. Receive: each path has its own photodetector, then an amplifier
    (TIA) back to the GPU. The numbers are the prototype's (source 004, section 5).
    """
    fig = Figure(figsize=(9.6, 3.7))
    ax = fig.add_axes((0.01, 0.01, 0.98, 0.98))
    ax.set_axis_off()
    ax.set(xlim=(0, 15.3), ylim=(-0.05, 6.3))
    ax.add_patch(_frame_patch(1.75, 0.6, 7.45, 5.55))
    ax.text(1.9, 5.9, "photonic chip (silicon, 65 nm) and its 28 nm controller", fontsize=9.5, color="#555555")
    ax.text(0.05, 3.9, "from the\nGPU's lanes", fontsize=10.5, va="center")
    _box(ax, 2.1, 3.55, 1.5, 0.7, "driver")
    _box(ax, 4.1, 3.55, 1.6, 0.7, "modulator")
    _box(ax, 4.1, 4.75, 1.6, 0.6, "laser", fc="#fff4d6")
    _box(ax, 6.3, 3.3, 2.0, 1.2, "MZI switch\n(two elements)", fc="#e3ecf7")
    _box(ax, 6.3, 4.95, 2.0, 0.6, "OCS controller", fc="#f0f0f0")
    _arrow(ax, (1.15, 3.9), (2.1, 3.9))
    _arrow(ax, (3.6, 3.9), (4.1, 3.9))
    _arrow(ax, (4.9, 4.75), (4.9, 4.25), colour="#b58b00")
    _arrow(ax, (5.7, 3.9), (6.3, 3.9), colour="#b58b00")
    _arrow(ax, (7.3, 4.95), (7.3, 4.5), ls="--")
    ax.text(7.4, 4.72, "sets the path", fontsize=9.5, color="#555555", va="center")
    for y, text, colour in ((4.25, "1  main fibre: the next node", CORRECT_COLOUR),
                            (3.8, "2  backup fibre: a node further along", BACKUP_COLOUR)):
        _arrow(ax, (8.3, y), (9.6, y), colour=colour, lw=2.0)
        ax.text(9.7, y, text, fontsize=10.5, va="center")
    _arrow(ax, (7.0, 3.3), (4.75, 1.95), colour=LOOP_COLOUR, lw=2.0, rad=-0.3)
    ax.text(6.75, 2.2, "3  loopback", fontsize=10.5, color="#1d5e26")
    ax.text(9.7, 3.1, "3  loopback: back into the module,\n    onto the other half of the lanes", fontsize=10.5,
            va="center", color="#1d5e26")
    _box(ax, 2.1, 1.15, 1.3, 0.75, "TIA")
    _box(ax, 4.1, 1.15, 1.3, 0.75, "detectors\n× 3", fc="#e3f0e3")
    _arrow(ax, (4.1, 1.52), (3.4, 1.52))
    _arrow(ax, (2.1, 1.52), (1.15, 1.52))
    ax.text(0.05, 1.52, "to the\nGPU's lanes", fontsize=10.5, va="center")
    _arrow(ax, (9.6, 1.52), (5.4, 1.52), colour="#777777", ls="--")
    ax.text(9.7, 1.52, "light in from the main or\nbackup fibre", fontsize=10.5, va="center", color="#555555")
    ax.text(9.7, 0.5, "prototype: switches in 60–80 µs; switch core\nloses 2.5–4.0 dB (3.3 dB on average) and\n"
            "draws up to about 3.2 W; module under 12 W", fontsize=9.5, va="center", color="#333333",
            bbox={"boxstyle": "round", "fc": "#f7f7f7", "ec": "#bbbbbb"})
    return legible(fig)


def _frame_patch(x: float, y: float, w: float, h: float):
    from matplotlib.patches import Rectangle

    return Rectangle((x, y), w, h, fill=False, ec="#999999", lw=1.0, ls=":")


def figure_design() -> Figure:
    """InfiniteHBD's three parts, after the paper's Figure 2 as source 004 describes it: (a) the
    transceiver's three paths, (b) a failed node skipped by a backup link with loopbacks closing the
    ring, (c) the orchestrator's inputs and what it places."""
    fig = Figure(figsize=(10.4, 3.3))
    axes = [fig.add_axes((0.005 + 0.335 * i, 0.02, 0.325, 0.9)) for i in range(3)]
    titles = ("(a) one transceiver, three paths", "(b) N2 has failed", "(c) the orchestrator")
    for ax, title in zip(axes, titles):
        ax.set_axis_off()
        ax.set(xlim=(0, 10), ylim=(0, 7))
        ax.set_title(title, fontsize=11.5, loc="left")
    a, b, c = axes
    _box(a, 1.0, 2.8, 3.0, 1.4, "switching\ntransceiver", fc="#e3ecf7")
    _arrow(a, (4.0, 4.0), (8.6, 5.6), colour=CORRECT_COLOUR, lw=2.0)
    a.text(8.7, 5.9, "1 main", fontsize=10.5, ha="right")
    _arrow(a, (4.0, 3.5), (8.6, 3.5), colour=BACKUP_COLOUR, lw=2.0)
    a.text(8.7, 3.8, "2 backup", fontsize=10.5, ha="right")
    _arrow(a, (3.2, 2.8), (1.8, 2.8), colour=LOOP_COLOUR, lw=2.0, rad=-1.6)
    a.text(2.5, 0.6, "3 loopback", fontsize=10.5, ha="center", color="#1d5e26")
    a.text(5.0, 1.6, "all the light takes\none path at a time", fontsize=9.5, color="#555555")
    xs = (1.8, 5.0, 8.2)
    for i, x in enumerate(xs):
        dead = i == 1
        _box(b, x - 0.8, 2.7, 1.6, 1.3, f"N{i + 1}" + (" ✕" if dead else ""), fc=FAILED_COLOUR if dead else "#a9c4e4")
    b.add_collection(LineCollection([_arc(xs[0] + 0.8, xs[2] - 0.8, 3.75, 1.6)], colors=BACKUP_COLOUR, linewidths=2.2))
    b.add_collection(LineCollection([_arc(xs[0] + 0.8, xs[2] - 0.8, 2.95, -1.6)], colors=BACKUP_COLOUR,
                                    linewidths=2.2))
    for x0, x1 in ((xs[0] + 0.8, xs[1] - 0.8), (xs[1] + 0.8, xs[2] - 0.8)):
        b.plot([x0, x1], [3.35, 3.35], color="#c4c4c4", lw=1.0, ls="--")
    for x, side in ((xs[0] - 0.8, -1), (xs[2] + 0.8, 1)):
        b.add_collection(LineCollection([_loop_side(x, 3.35, side)], colors=LOOP_COLOUR, linewidths=2.0))
    b.text(5.0, 6.2, "backup link in use (out above, back below)", fontsize=9.5, ha="center", color="#9a5a00")
    b.text(5.0, 0.5, "loopbacks at both ends close one ring;\ndashed: links to N2, now unused", fontsize=9.5,
           ha="center", color="#555555")
    for y, text in ((5.6, "the job: TP, DP,\nPP, CP sizes"), (3.6, "the DCN: ToRs,\naggregation"),
                    (1.6, "the faults\nright now")):
        _box(c, -0.3, y - 0.7, 5.0, 1.3, text, fontsize=9.5)
        _arrow(c, (4.7, y), (5.5, 3.6))
    _box(c, 5.5, 1.6, 4.8, 4.0, "drop failed\nnodes, find\nhealthy pieces,\ncut TP groups\nin order, keep\n"
         "DP peers under\none ToR", fc="#e3ecf7", fontsize=9.5)
    c.set_xlim(-0.4, 10.4)  # room for the boxes at the legible size
    return legible(fig)


def _loop_side(x: float, y: float, side: int, size: float = 0.45) -> np.ndarray:
    """A loop on the outer side of an end node: light turned back into the same node."""
    t = np.linspace(-0.5 * np.pi, 0.5 * np.pi, 14)
    return np.stack([x + side * size * 1.3 * np.cos(t), y + size * np.sin(t)], axis=1)


def figure_cut_waste(rows: Any) -> Figure:
    """Waste from cuts against K at one rate, log scale: the paper's bound, the corrected worst case,
    the exact expectation and the simulated mean with its 95% interval, one panel per node size.

    ``rows`` is a mapping ``{(R, K): RingBuilder}``; simulated means of zero are drawn on the floor
    of the axis as open markers.
    """
    fig = Figure(figsize=(9.6, 3.9), layout="constrained")
    sizes = sorted({r for r, _ in rows})
    axes = fig.subplots(1, len(sizes), sharey=True, squeeze=False)[0]
    floor = 1e-6
    for ax, r in zip(axes, sizes):
        ks = sorted(k for rr, k in rows if rr == r)
        ms = [rows[(r, k)] for k in ks]
        ax.semilogy(ks, [m.bound for m in ms], "o-", color=LIMIT_COLOUR, label="paper's bound 2(Nₜ − R)Pₛᴷ")
        ax.semilogy(ks, [m.worst_case for m in ms], "s--", color="#c77d7d", label="corrected worst case")
        ax.semilogy(ks, [m.exact.cut_waste for m in ms], "D-", color=CORRECT_COLOUR, label="exact expectation")
        sim = np.array([m.cut_waste for m in ms])
        half = np.array([m.ci95("cut_waste") for m in ms])
        shown = sim > 0
        low = np.clip(sim - half, floor, None)
        ax.errorbar(np.array(ks)[shown], sim[shown], yerr=[sim[shown] - low[shown], half[shown]], fmt="x",
                    color="black", capsize=3, label="simulated mean, 200 draws, 95% interval")
        if (~shown).any():
            ax.plot(np.array(ks)[~shown], np.full(int((~shown).sum()), floor), "x", mfc="none", color="#777777",
                    label="simulated mean 0 (no cut added waste)")
        ax.set(xticks=ks, xlabel="hops K", title=f"{r}-GPU nodes, Pₛ = {ms[0].node_rate:.2%}", ylim=(floor / 2, 10))
        ax.axhline(1.0, color="#999999", lw=0.8, ls=":")
        ax.grid(True, which="major", color="#eeeeee")
    axes[0].set_ylabel("idle GPUs the cuts add,\nshare of all GPUs")
    axes[0].yaxis.set_major_formatter(FuncFormatter(lambda value, _pos: f"{100 * value:.4g}%"))
    handles: dict[str, Any] = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, handle)
    fig.legend(handles.values(), handles.keys(), loc="outside lower center", ncol=3, fontsize=SMALL, frameon=False)
    return legible(fig)
