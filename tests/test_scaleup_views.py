"""Chapter 5's views: the ring builder explorer and the figures build, and every slider position is legal."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

pytest.importorskip("ipywidgets")

from clustermath.scaleup.ring_builder import ring_builder  # noqa: E402
from clustermath.scaleup.domains import synthetic_fault_trace  # noqa: E402
from clustermath.views.scaleup import (  # noqa: E402
    PRESETS, figure_fault_trace, figure_fragmentation, figure_k_hop_ring, figure_tor_wiring, ring_explorer,
)


def test_explorer_default_report_matches_the_model():
    x = ring_explorer()
    m = ring_builder(0.0233, 4, 32, 3)
    text = x.report()
    assert repr(x) == "RingExplorer(ring_builder)"
    assert f"{m.ring_waste:.3%}" in text and f"{m.static_waste:.3%}" in text and "usable GPUs of 2,880" in text
    assert x.picture.value[:8] == b"\x89PNG\r\n\x1a\n"


def test_presets_set_the_trace_rates():
    x = ring_explorer()
    for button, value in zip(x.presets, PRESETS.values()):
        button.click()
        assert x.controls["fault_pct"].value == value
    assert "7.22%" in x.report()


def test_every_slider_combination_is_a_legal_input():
    x = ring_explorer()
    c = x.controls
    for r, tp, k in itertools.product(range(c["gpus_per_node"].min, c["gpus_per_node"].max + 1, c["gpus_per_node"].step),
                                      range(c["tp"].min, c["tp"].max + 1, c["tp"].step), range(1, 5)):
        assert tp % r == 0
        ring_builder(c["fault_pct"].max / 100, r, tp, k)


def test_a_bound_above_100_percent_is_flagged():
    x = ring_explorer(fault_pct=7.22, gpus_per_node=8, hops=1)
    assert "above 100%" in x.report() and "⚠ the bound is above 100%" in x.table.value and "cm-flag" in x.table.value


def test_figures_draw():
    for fig in (figure_fragmentation(), figure_fault_trace(synthetic_fault_trace()), figure_k_hop_ring(),
                figure_tor_wiring()):
        fig.canvas.draw() if hasattr(fig.canvas, "draw") else None
        assert fig.axes
    ax = figure_k_hop_ring().axes[0]
    assert any("TP group 1: N1 N2 N3 N5" in t.get_text() for t in ax.texts)
    assert np.isfinite(synthetic_fault_trace().faulty_pct).all()
