"""Chapter 3 ("Where the traffic lands"): the placement picture, its explorer and the Llama 3 figure.

The picture is a grid of NVLink domains. Each domain is a grey box whose
height stands for its GPUs; each tensor-parallel group is a coloured cell in
it (one colour per replica, labelled with replica and stage), as tall as the
GPUs it uses, so whatever grey stays visible is idle. Every pipeline hop is a
line from a group to the next stage of the same replica: solid green when it
stays inside the domain, dashed blue when it crosses the network.

Nothing here computes a count the model does not: positions come from
``placement.tp_group_layout`` and the numbers from ``placement.placement``.
``view_placement(ax)`` follows the blitting protocol of ``widgets.LiveFigure``
(every artist is created once, animated, and moved by ``update``); the axes
limits never change, so a redraw blits five collections and a few texts.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Mapping

import numpy as np
from matplotlib.axes import Axes
from matplotlib.collections import LineCollection, PolyCollection
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from ..check import fmt_value
from ..placement.parallelism import placement, tp_group_layout
from .base import CORRECT_COLOUR, SMALL, legible, ModelView, Slider, Updater

__all__ = ["EXPLORERS", "NETWORK_COLOUR", "NVLINK_COLOUR", "figure_llama_rehoused", "placement_explorer",
           "view_placement"]

NVLINK_COLOUR = "#2f8f3a"
"""A pipeline hop that stays on NVLink."""
NETWORK_COLOUR = CORRECT_COLOUR
"""A pipeline hop that crosses the network (dashed)."""
IDLE_COLOUR = "#dcdcdc"
REPLICA_COLOURS = ("#f6c89f", "#a6cee3", "#f9e07f", "#cab2d6", "#fbb4ae", "#b3de69", "#fdd0e6", "#bfd3e6")
"""Cell colours, one per replica, cycling."""
EXPLORER_DOMAINS = 24
"""The explorer draws at most this many domains (three rows of eight); the headline gives the whole job."""
MAX_LABELS = 24
"""The explorer labels its cells only while there are this many or fewer (and they are tall enough)."""

Inputs = Mapping[str, Any]


def _rects(x0: np.ndarray, y0: np.ndarray, w: np.ndarray | float, h: np.ndarray | float) -> np.ndarray:
    """Corner arrays of axis-aligned rectangles, shape (n, 4, 2), for ``PolyCollection.set_verts``."""
    x0, y0 = np.asarray(x0, float), np.asarray(y0, float)
    x1, y1 = x0 + w, y0 + h
    return np.stack([np.stack([x0, y0], -1), np.stack([x1, y0], -1),
                     np.stack([x1, y1], -1), np.stack([x0, y1], -1)], axis=1)


def view_placement(ax: Axes, *, max_domains: int | None = None, columns: int = 16, legend: bool = True,
                   status: bool = True, top: float = 0.9, fill_figure: bool = False,
                   max_labels: int = MAX_LABELS) -> Updater:
    """A grid of domains with one cell per tensor-parallel group and a line per pipeline hop.

    ``update(inputs, mode)`` takes ``tp``, ``pp``, ``dp`` and ``domain_size``.
    ``max_domains`` draws only the first domains (a zoom on a large job; a hop
    that leaves the zoom is drawn as a short stub); ``columns`` is how many
    domains share a row; cells get labels while there are at most
    ``max_labels`` of them (text is the slow part of a redraw). ``fill_figure`` lets the axes take the whole figure
    (for the explorer, whose figure holds nothing else).
    """
    if fill_figure:
        ax.figure.subplots_adjust(left=0.01, right=0.99, bottom=0.01, top=0.99)
    ax.set_axis_off()
    ax.set(xlim=(0, 1), ylim=(0, 1))
    bottom = 0.1 if legend else 0.01
    boxes = PolyCollection([], facecolor=IDLE_COLOUR, edgecolor="#555555", linewidth=0.8, animated=True)
    cells = PolyCollection([], edgecolor="#333333", linewidth=0.4, animated=True)
    green = LineCollection([], colors=NVLINK_COLOUR, linewidths=2.2, animated=True, capstyle="round")
    blue = LineCollection([], colors=NETWORK_COLOUR, linewidths=1.6, linestyles=(0, (3, 2)), animated=True)
    for artist in (boxes, cells, green, blue):
        ax.add_collection(artist)
    labels = [ax.text(0, 0, "", ha="left", va="center", fontsize=SMALL, animated=True, visible=False)
              for _ in range(max_labels)]
    headline = ax.text(0.0, 0.995, "", ha="left", va="top", fontsize=9, animated=True, transform=ax.transAxes)
    if legend:
        ax.legend(handles=[Line2D([], [], color=NVLINK_COLOUR, lw=2.2, label="pipeline hop on NVLink"),
                           Line2D([], [], color=NETWORK_COLOUR, lw=1.6, ls=(0, (3, 2)),
                                  label="pipeline hop over the network"),
                           Patch(facecolor=IDLE_COLOUR, edgecolor="#555555", label="idle GPUs of a domain")],
                  loc="lower center", bbox_to_anchor=(0.5, -0.01), ncol=3, fontsize=SMALL, frameon=False)

    def update(p: Inputs, mode: Any = None) -> None:
        tp, dsize = p["tp"], p["domain_size"]
        lay = tp_group_layout(tp, p["pp"], p["dp"], dsize)
        where = lay.placement
        shown = where.domains if max_domains is None else min(max_domains, where.domains)
        cols = min(shown, columns)
        rows = math.ceil(shown / cols)
        cw, rh = 0.99 / cols, (top - bottom) / rows
        bw, bh = cw * 0.84, rh * 0.86
        dom = np.arange(shown)
        bx = 0.005 + (dom % cols) * cw + (cw - bw) / 2
        btop = top - (dom // cols) * rh - (rh - bh) / 2
        boxes.set_verts(_rects(bx, btop - bh, bw, bh))

        keep = lay.domain < shown
        g_dom, g_slot = lay.domain[keep], lay.slot[keep]
        sh = bh * tp / dsize
        margin = min(0.12 * sh, 0.006)
        cx = bx[g_dom] + bw * 0.05
        cy = btop[g_dom] - (g_slot + 1) * sh + margin
        cw_cell, ch_cell = bw * 0.9, sh - 2 * margin
        cells.set_verts(_rects(cx, cy, cw_cell, ch_cell))
        cells.set_facecolor([REPLICA_COLOURS[r % len(REPLICA_COLOURS)] for r in lay.replica[keep]])
        mid_y = cy + ch_cell / 2

        # Hops: inside a domain a vertical line on the cells' right side; across domains a dashed
        # line between neighbouring cells, or two stubs when the next domain is on another row
        # or outside the zoom.
        inner, outer = [], []
        right = cx + cw_cell
        for g, crosses in zip(lay.hop_from, lay.hop_crosses):
            if g >= len(g_dom):
                break
            if not crosses:
                x = right[g] - bw * 0.08
                inner.append(((x, mid_y[g] - ch_cell * 0.2), (x, mid_y[g + 1] + ch_cell * 0.2)))
                continue
            start = (right[g], mid_y[g])
            if g + 1 < len(g_dom) and g_dom[g + 1] // cols == g_dom[g] // cols:
                outer.append((start, (cx[g + 1], mid_y[g + 1])))
            else:
                stub = (cw - bw) / 2 + 0.004
                outer.append((start, (right[g] + stub, mid_y[g])))
                if g + 1 < len(g_dom):
                    outer.append(((cx[g + 1] - stub, mid_y[g + 1]), (cx[g + 1], mid_y[g + 1])))
        green.set_segments(inner)
        blue.set_segments(outer)

        points = ch_cell * ax.bbox.height * 72 / ax.figure.dpi  # cell height in points, as fonts are sized
        cells.set_linewidth(0.4 if points >= 4 else 0.0)
        size = min(9.0, points * 0.6)
        label = len(g_dom) <= max_labels and size >= SMALL  # a label under the style's floor is left out
        for i, text in enumerate(labels):
            if label and i < len(g_dom):
                text.set_position((cx[i] + bw * 0.04, mid_y[i]))
                text.set_text(f"r{lay.replica[i]} s{lay.stage[i]}")
                text.set_fontsize(size)
                text.set_visible(True)
            else:
                text.set_visible(False)
        if status:
            zoom = "" if shown == where.domains else f" (first {shown} shown)"
            headline.set_text(
                f"{where.gpus:,} GPUs on {where.domains:,} domains of {dsize}{zoom}: "
                f"{where.pp_hops_on_nvlink:,} hops on NVLink, {where.pp_hops_crossing:,} over the network, "
                f"{where.idle_gpus:,} GPUs idle")

    return update


def placement_explorer(tp: int = 4, pp: int = 4, dp: int = 4, domain_size: int = 12) -> ModelView:
    """The chapter's explorer: sliders on the four sizes, the counts, and the placement picture.

    ``domain_size`` never goes below ``tp`` (its slider's floor follows tp), so
    the reader cannot reach the one input the model rejects.
    """
    explorer = ModelView(
        placement,
        [Slider("tp", 1, 16, tp, label="tensor parallel, TP (GPUs)"),
         Slider("pp", 1, 32, pp, label="pipeline stages, PP"),
         Slider("dp", 1, 256, dp, log=True, label="data-parallel replicas, DP"),
         Slider("domain_size", 1, 72, domain_size, label="GPUs per NVLink domain")],
        # reaches the chapter's Llama layout (TP8 x PP16 x DP128 on 72-GPU racks: 228 racks), so a
        # large job is drawn as a zoom on its first domains, and the headline says so
        lambda ax: view_placement(ax, fill_figure=True, status=True, top=0.92, max_domains=EXPLORER_DOMAINS,
                                  columns=8),
        hidden=("tp", "pp", "dp", "domain_size", "order", "packing", "pp_links", "pp_links_crossing", "warnings"),
        floors={"domain_size": "tp"},
        title="Placing TP × PP × DP on NVLink domains, tensor ranks innermost",
        figsize=(7.2, 3.9),
    )
    return explorer


EXPLORERS: dict[str, Callable[[], ModelView]] = {"placement": placement_explorer}
"""Factories for chapter 3's explorers (found by ``tools/bench_widgets.py``)."""


# -- the static figure for Llama 3 405B --------------------------------------------

def _rack_map(ax: Axes, tp: int, pp: int, dp: int, domain_size: int, columns: int) -> tuple[int, int, int]:
    """Every domain as a small square: blue if a pipeline hop leaves it over the network,
    green if none does (its last group ends a replica), grey hatched for a partly filled last one."""
    from matplotlib.colors import ListedColormap

    lay = tp_group_layout(tp, pp, dp, domain_size)
    n = lay.placement.domains
    leaving = np.bincount(lay.domain[lay.hop_from[lay.hop_crosses]], minlength=n)
    kind = np.where(leaving > 0, 0, 1)
    partial = lay.placement.partial_last_domain
    if partial:
        kind[-1] = 2
    rows = math.ceil(n / columns)
    grid = np.full(rows * columns, 3)
    grid[:n] = kind
    cmap = ListedColormap([NETWORK_COLOUR, NVLINK_COLOUR, IDLE_COLOUR, "white"])
    ax.imshow(grid.reshape(rows, columns), cmap=cmap, vmin=0, vmax=3, interpolation="nearest")
    ax.set_xticks(np.arange(-0.5, columns, 1), minor=True)
    ax.set_yticks(np.arange(-0.5, rows, 1), minor=True)
    ax.grid(which="minor", color="white", linewidth=1.2)
    ax.tick_params(which="both", length=0, labelbottom=False, labelleft=False)
    return int((kind == 0).sum()), int((kind == 1).sum()), int(partial)


def figure_llama_rehoused(tp: int = 8, pp: int = 16, dp: int = 128) -> Figure:
    """Llama 3 405B's layout on 8-GPU servers and re-housed on NVL72 racks.

    Top: the first 36 tensor-parallel groups on 8-GPU servers (every hop
    crosses) and the same groups on the first four racks (one hop in nine
    crosses). Bottom left: all racks, coloured by whether a pipeline hop leaves
    them over the network. Bottom right: the pipeline hops of the whole job on
    NVLink and on the network, for both housings.
    """
    fig = Figure(figsize=(10, 10.6), layout="constrained")
    grid = fig.add_gridspec(3, 2, height_ratios=(1.0, 2.1, 1.25), width_ratios=(1.35, 1))
    servers, racks = fig.add_subplot(grid[0, :]), fig.add_subplot(grid[1, :])
    rackmap, bars = fig.add_subplot(grid[2, 0]), fig.add_subplot(grid[2, 1])
    job = {"tp": tp, "pp": pp, "dp": dp}
    for ax, size, shown, cols, legend in ((servers, 8, 36, 12, False), (racks, 72, 4, 4, True)):
        update = view_placement(ax, max_domains=shown, columns=cols, legend=legend, status=False, top=0.9,
                                max_labels=shown * 9 if size == 72 else shown)
        update({**job, "domain_size": size})
        for artist in ax.get_children():
            artist.set_animated(False)
        for text in ax.texts:  # a page shows this figure at about 70%: keep its labels readable
            text.set_fontsize(max(text.get_fontsize(), 9.5))
    on_servers, on_racks = placement(tp, pp, dp, 8), placement(tp, pp, dp, 72)
    servers.set_title(f"8-GPU servers, the first 36 of {on_servers.domains:,}: every pipeline hop crosses "
                      f"the network", fontsize=10)
    racks.set_title(f"NVL72 racks, the same 36 groups on the first 4 of {on_racks.domains:,} racks: "
                    f"one hop in nine leaves the rack", fontsize=10)
    columns = 19
    leaving, ending, partial = _rack_map(rackmap, tp, pp, dp, 72, columns)
    rackmap.set_title(f"All {on_racks.domains} racks: {leaving} send a hop over the network (blue), "
                      f"{ending} end on a\nreplica boundary (green), the last holds "
                      f"{on_racks.last_domain_gpus} of 72 GPUs (grey)", fontsize=9)
    names = ["8-GPU servers", "NVL72 racks"]
    nvlink = [on_servers.pp_hops_on_nvlink, on_racks.pp_hops_on_nvlink]
    network = [on_servers.pp_hops_crossing, on_racks.pp_hops_crossing]
    bars.barh(names, nvlink, height=0.5, color=NVLINK_COLOUR, label="on NVLink")
    bars.barh(names, network, left=nvlink, height=0.5, color=NETWORK_COLOUR, hatch="//", edgecolor="white",
              label="over the network")
    for y, (a, b) in enumerate(zip(nvlink, network)):
        bars.text(0, y - 0.3, f"{fmt_value(b)} of {fmt_value(a + b)} over the network", va="bottom", fontsize=9)
    bars.set(xlabel="pipeline hops of the whole job", xlim=(0, on_racks.pp_hops * 1.02), ylim=(-0.8, 1.7))
    bars.set_title(f"The {on_racks.pp_hops:,} pipeline hops of the job", fontsize=10)
    bars.legend(loc="lower center", fontsize=SMALL, ncol=2, frameon=False)
    bars.invert_yaxis()
    return legible(fig)


# -- teaching figures --
# Static pictures for the chapter's prose; counts come from ``placement.placement``.

def figure_parallel_grid(tp: int = 4, pp: int = 3, dp: int = 3, domain_size: int = 8) -> Figure:
    """The TP × PP × DP grid: every GPU of a small job, its rank, its domain and its three kinds of traffic.

    One panel per data-parallel replica; in each, a row per pipeline stage and a
    column per tensor rank. A cell is a GPU, labelled with its global rank
    ``i + tp (s + pp r)`` and coloured by the NVLink domain that rank order puts
    it in (whole tensor-parallel groups, ``domain_size // tp`` to a domain).
    Brackets mark tensor-parallel all-reduces (along a row), arrows pipeline hops
    (down a column; dashed when the hop leaves its domain), and the dotted line
    one data-parallel group (the same cell in every replica).
    """
    from matplotlib.patches import FancyArrowPatch, Rectangle

    where = placement(tp, pp, dp, domain_size)
    per_domain = domain_size // tp
    palette = ["#8fb3de", "#f5b870", "#9fd49f", "#d3a6e0", "#f0a0a0", "#c8c8a0", "#a0d8d8", "#e0c0a0"]
    fig = Figure(figsize=(10, 1.2 + 1.0 * pp), layout="constrained")
    ax = fig.subplots()
    gap = 2.0
    width = tp + gap
    for r in range(dp):
        x0 = r * width
        ax.text(x0 + tp / 2 - 0.5, -0.95, f"replica {r + 1}", ha="center", fontsize=9, weight="bold")
        for s in range(pp):
            group = s + pp * r
            dom = group // per_domain
            for i in range(tp):
                rank = i + tp * (s + pp * r)
                ax.add_patch(Rectangle((x0 + i - 0.45, s - 0.35), 0.9, 0.7, color=palette[dom % len(palette)]))
                ax.text(x0 + i, s, f"{rank}", ha="center", va="center", fontsize=SMALL)
            ax.plot([x0 - 0.45, x0 + tp - 0.55], [s + 0.42, s + 0.42], color="#444444", lw=1.2)
            ax.text(x0 - 0.55, s, f"stage {s + 1}\ndomain {dom + 1}", ha="right", va="center", fontsize=SMALL)
            if s + 1 < pp:
                crosses = (group + 1) // per_domain != dom
                ax.add_patch(FancyArrowPatch((x0 + tp - 0.2, s + 0.3), (x0 + tp - 0.2, s + 0.7), arrowstyle="-|>",
                                             mutation_scale=8, color="#1f5fa8" if crosses else "#2f7d32",
                                             ls="--" if crosses else "-"))
    ax.plot([r * width for r in range(dp)], [-0.5] * dp, ls=":", marker="v", color="#b22222", lw=1.5)
    ax.set(xlim=(-1.9, dp * width - gap + 0.6), ylim=(pp - 0.4, -1.3), xticks=[], yticks=[])
    for side in ax.spines.values():
        side.set_visible(False)
    ax.set_title(f"TP {tp} × PP {pp} × DP {dp} on domains of {domain_size} GPUs; cell colour = domain, "
                 f"number = global rank\n"
                 f"black bar: a tensor-parallel group ({where.tp_groups_inside} of {where.tp_groups} inside a "
                 f"domain);  arrow: a pipeline hop, dashed blue if it leaves its domain ({where.pp_hops_crossing} "
                 f"of {where.pp_hops})\nred dotted: one data-parallel group, ranks 0, {tp * pp}, {2 * tp * pp}"
                 f" ({where.dp_groups_crossing} of {where.dp_groups} such groups cross the network)",
                 fontsize=SMALL, loc="left")
    return legible(fig)
