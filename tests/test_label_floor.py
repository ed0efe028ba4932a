"""Issue 41: no text on a picture the book draws is under 11 CSS px where a 1366 px wide page shows it.

A text's size on screen, in CSS px, is its font size (pt) × the figure's dpi / 72 × the width the page
shows the picture at / the picture's own width in pixels (``views.base.text_sizes_px``).

* An explorer's picture is drawn at ``DENSITY`` (2) pixels per CSS px and carries its size in CSS
  px, so it is shown at ``CSS_DPI`` (96) px per inch whenever it fits the page's column (at 1366 px the
  column of a chapter is ``COLUMN_PX`` wide, measured in Chromium): every explorer is built, each of its
  controls moved to its first and last value (one at a time, back to the default between), and
  every text on its picture checked after each move, tick labels and the flag line included. Each text
  must also lie inside the picture (a label the larger type pushed off the edge is not read either).
* A static figure is shown at its own width (the notebook's PNG at the figure's dpi, tight box) or
  squeezed to the column when wider. ``STATIC_FIGURES`` builds each one the chapters draw, with the
  chapter's own arguments.

The drills plant a 7 pt label on an explorer's picture and on a static figure and expect the check to
name it.
"""
from __future__ import annotations

import importlib

import ipywidgets as W
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.text import Text

from clustermath import WINGS
from clustermath.views import fabric_designs, peak, placement, reliability, scaleup
from clustermath.views.frames import controls_of
from clustermath.views.base import COLUMN_PX, CSS_DPI, DENSITY, LABEL_FLOOR_PX, LiveFigure, text_sizes_px

EXPLORERS = {f"{wing}:{k}": v for wing in WINGS
             for k, v in getattr(importlib.import_module(f"clustermath.views.{wing}"), "EXPLORERS", {}).items()}


def _trace():
    from clustermath.scaleup import synthetic_fault_trace
    return synthetic_fault_trace(mean_pct=2.33, median_pct=1.67, p99_pct=7.22, days=348, seed=4)


def _residuals():
    from clustermath.validation import holdout
    return holdout.residuals()


STATIC_FIGURES = {
    "1 peak to delivered": lambda: peak.figure_peak_to_delivered(),
    "1 ring all-reduce": lambda: peak.figure_ring_allreduce(4),
    "1 pipeline schedules": lambda: peak.figure_pipeline_schedules(stages=4, microbatches=8),
    "1 rank timeline": lambda: peak.figure_rank_timeline(),
    "1 diagnosis tree": lambda: peak.figure_diagnosis_tree(),
    "1 lab step breakdown": lambda: peak.figure_lab_step_breakdown(),
    "2 root causes": lambda: reliability.figure_root_causes(),
    "2 young vs daly": lambda: reliability.figure_young_vs_daly(),
    "2 blast radius": lambda: reliability.figure_blast_radius(job_gpus=16_384, replica_gpus=128),
    "3 parallel grid": lambda: placement.figure_parallel_grid(tp=4, pp=3, dp=3, domain_size=8),
    "3 llama rehoused": lambda: placement.figure_llama_rehoused(),
    "4 patterns": lambda: fabric_designs.figure_patterns(),
    "4 astral": lambda: fabric_designs.figure_astral(),
    "4 buffers": lambda: fabric_designs.figure_buffers(),
    "4 queue": lambda: fabric_designs.figure_queue(),
    "4 polarization": lambda: fabric_designs.figure_polarization(),
    "4 astral spread": lambda: fabric_designs.figure_astral_spread(),
    "4 scale axis": lambda: fabric_designs.figure_scale_axis(),
    "4 decision tree": lambda: fabric_designs.figure_decision_tree(),
    "4 spraying": lambda: fabric_designs.figure_spraying(),
    "5 fragmentation": lambda: scaleup.figure_fragmentation(),
    "5 fault trace": lambda: scaleup.figure_fault_trace(_trace()),
    "5 design": lambda: scaleup.figure_design(),
    "5 ocstrx": lambda: scaleup.figure_ocstrx(),
    "5 k-hop ring": lambda: scaleup.figure_k_hop_ring(failed_nodes=(3,), nodes=9, group_nodes=4, hops=2),
    "5 tor wiring": lambda: scaleup.figure_tor_wiring(4, 4),
    "6 predicted vs measured": lambda: _validation().figure_predicted_vs_measured(
        (r := _residuals())[r["family"] == "throughput"]),
    "6 residuals": lambda: _validation().figure_residuals(_residuals()),
}
"""Every static figure the chapters draw, with the chapter's arguments (chapter 2's availability
figure and chapter 5's cut-waste figure need the chapter's own simulation and are left to the build)."""

def _validation():
    from clustermath.views import validation
    return validation


def smallest_on_picture(explorer: LiveFigure) -> tuple[float, str]:
    """The smallest text on an explorer's picture as the page shows it (CSS px), and that text."""
    return text_sizes_px(explorer.figure)[0]


def outside(figure: Figure) -> list[str]:
    """Texts that reach beyond the figure's edge by more than a pixel (tick labels aside: matplotlib
    keeps some beyond the axes' limits, never drawn)."""
    renderer = figure.canvas.get_renderer()
    box = figure.bbox
    ticks = {id(t) for ax in figure.axes for t in (*ax.get_xticklabels(which="both"), *ax.get_yticklabels(which="both"))}
    found = []
    for text in figure.findobj(Text):
        if not text.get_visible() or not text.get_text().strip() or id(text) in ticks:
            continue
        extent = text.get_window_extent(renderer)
        if extent.x0 < box.x0 - 1 or extent.x1 > box.x1 + 1 or extent.y0 < box.y0 - 1 or extent.y1 > box.y1 + 1:
            found.append(text.get_text())
    return found


def _moves(explorer: LiveFigure):
    """Each control (as the static site's frames find them) to its first and last value, one at
    a time, back to its default after; each button pressed once."""
    controls, buttons = controls_of(explorer)
    for control in controls:
        last = len(control.values) - 1
        for k in sorted({0, last} - {control.default}):
            control.set(k)
            yield f"{control.label} {control.values[k]!r}"
        control.set(control.default)
    for button in buttons:
        button.click()
        yield f"button {button.description!r}"


@pytest.mark.parametrize("name", sorted(EXPLORERS))
def test_explorer_text_is_at_least_the_floor_in_every_state(name):
    explorer = EXPLORERS[name]()
    if not isinstance(explorer, LiveFigure):
        pytest.skip("a table only: no picture")
    width, height = int(explorer.picture.width), int(explorer.picture.height)
    assert width <= COLUMN_PX, f"{name}: {width} CSS px is wider than the column ({COLUMN_PX}): it would shrink"
    assert explorer.canvas.get_width_height() == (width * DENSITY, height * DENSITY), name
    assert explorer.figure.dpi == CSS_DPI * DENSITY
    explorer.canvas.draw()  # tick labels are made while drawing
    problems = []
    for state in ["defaults", *_moves(explorer)]:
        size, text = smallest_on_picture(explorer)
        if size < LABEL_FLOOR_PX:
            problems.append(f"{state}: {text!r} at {size:.1f} px")
        problems += [f"{state}: {t!r} runs off the picture" for t in outside(explorer.figure)]
    assert not problems, f"{name}: " + "; ".join(dict.fromkeys(problems))


def shown_sizes(figure: Figure) -> list[tuple[float, str]]:
    """A static figure's texts in CSS px as the page shows it at 1366 px (its own width, or the column's)."""
    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    natural = figure.get_tightbbox(canvas.get_renderer()).width * figure.dpi  # the PNG's CSS px (1x)
    scale = min(1.0, COLUMN_PX / natural)
    # text_sizes_px takes the width shown for the figure's own width (the tight box adds a margin)
    return text_sizes_px(figure, shown_px=figure.get_figwidth() * figure.dpi * scale)


@pytest.mark.parametrize("name", list(STATIC_FIGURES))
def test_static_figure_text_is_at_least_the_floor(name):
    size, text = shown_sizes(STATIC_FIGURES[name]())[0]
    assert size >= LABEL_FLOOR_PX, f"{name}: {text!r} at {size:.1f} px"


def test_drill_a_planted_small_label_on_an_explorer_is_caught():
    explorer = peak.explorer("cluster_scale")
    assert smallest_on_picture(explorer)[0] >= LABEL_FLOOR_PX
    explorer.axes.text(0.5, 0.5, "planted", fontsize=7, transform=explorer.axes.transAxes)
    size, text = smallest_on_picture(explorer)
    assert (text, round(size, 2)) == ("planted", round(7 * CSS_DPI / 72, 2)) and size < LABEL_FLOOR_PX


def test_drill_a_planted_small_label_on_a_static_figure_is_caught():
    figure = fabric_designs.figure_decision_tree()
    assert shown_sizes(figure)[0][0] >= LABEL_FLOOR_PX
    figure.axes[0].text(0.5, 0.5, "planted", fontsize=7)
    assert shown_sizes(figure)[0][1] == "planted"


def test_drill_a_label_pushed_off_the_picture_is_caught():
    explorer = peak.explorer("cluster_scale")
    explorer.axes.text(1.0, 0.5, "far too long a label for the right margin", transform=explorer.axes.transAxes)
    explorer.canvas.draw()
    assert outside(explorer.figure) == ["far too long a label for the right margin"]


def test_a_long_flag_keeps_the_floor():
    explorer = peak.explorer("cluster_scale")
    explorer._flag.set_text("⚠ " + "; ".join(["a note about a value the model cannot represent"] * 6))
    explorer._fit_flag()
    assert explorer._flag.get_fontsize() * CSS_DPI / 72 >= LABEL_FLOOR_PX
    assert explorer._flag.get_text().endswith("…")
    assert explorer._flag.get_window_extent(explorer.canvas.get_renderer()).x1 <= explorer.figure.bbox.x1
