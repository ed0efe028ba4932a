"""Chapter 5's views: the ring builder explorer and the figures build, and every slider position is legal."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

pytest.importorskip("ipywidgets")

from clustermath.scaleup.ring_builder import draw_failures, ring_builder, ring_layout  # noqa: E402
from clustermath.scaleup.domains import synthetic_fault_trace  # noqa: E402
from clustermath.views.scaleup import (  # noqa: E402
    FAULT_STEP, PRESETS, WINDOW, _window, _window_geometry, figure_cut_waste, figure_design, figure_fault_trace,
    figure_fragmentation, figure_k_hop_ring, figure_ocstrx, figure_tor_wiring, fault_stops,
    ring_explorer,
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


def test_fault_stops_keep_no_faults_and_land_every_preset():
    x = ring_explorer()
    values = [v for _, v in x.controls["fault_pct"].options]
    assert values == fault_stops() and values[0] == 0.0 and values[-1] == 15.0
    assert set(PRESETS.values()) <= set(values) and len(values) == 15 / FAULT_STEP + 1 + len(PRESETS)
    assert max(b - a for a, b in zip(values, values[1:])) <= FAULT_STEP + 1e-12
    assert x.controls["fault_pct"].label == "2.33" and x.controls["fault_pct"].options[0][0] == "0.00"
    x.controls["fault_pct"].value = 0.0  # no faults stays reachable
    assert "nodes 0.00% faulty" in x.report() and ring_builder(0.0, 4, 32, 3).ring_cuts == 0
    assert 2.34 in fault_stops(2.34) and 2.34 not in values  # a default off the grid becomes a stop


def test_every_slider_combination_is_a_legal_input():
    x = ring_explorer()
    c = x.controls
    for r, tp, k in itertools.product(range(c["gpus_per_node"].min, c["gpus_per_node"].max + 1, c["gpus_per_node"].step),
                                      range(c["tp"].min, c["tp"].max + 1, c["tp"].step), range(1, 5)):
        assert tp % r == 0
        ring_builder(c["fault_pct"].options[-1][1] / 100, r, tp, k)


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


def _loop_x(geo):
    return sorted(round(float(loop[:, 0].mean())) for loop in geo["loops"])


def test_no_loopback_where_a_group_crosses_the_window_edge():
    """A group cut by the window's edge runs to the edge; loopbacks sit only at a group's real ends."""
    group = np.repeat(np.arange(10), 8)  # 80 healthy nodes, groups of 8
    role = np.zeros(80, np.int8)
    geo = _window_geometry(group, role, 4, width=WINDOW)  # nodes 4..35: groups 0 and 4 are cut by the edges
    ends = [x - 4 for x in range(80) if x % 8 in (0, 7) and 4 <= x < 36]
    assert _loop_x(geo) == ends and 0 not in _loop_x(geo) and WINDOW - 1 not in _loop_x(geo)
    edges = [seg for seg in geo["straight"] if seg[0][0] == -0.5 or seg[1][0] == WINDOW - 0.5]
    assert len(edges) == 2
    whole = _window_geometry(group[:32], role[:32], 0)  # the window is the whole line: every end loops
    assert _loop_x(whole) == [0, 7, 8, 15, 16, 23, 24, 31]


@pytest.mark.parametrize("p8, r, tp, k", [(2.33, 4, 32, 3), (7.22, 8, 32, 1), (7.22, 4, 64, 2), (15.0, 8, 48, 1)])
def test_the_explorers_window_draws_a_loopback_only_at_true_group_ends(p8, r, tp, k):
    m = ring_builder(p8 / 100, r, tp, k)
    failed = draw_failures(m.node_rate, 2_880 // r, 1, 0)[0]
    lay = ring_layout(failed, tp // r, k)
    w0 = _window(failed)
    geo = _window_geometry(lay.group, lay.role, w0)
    true_ends = {i - w0 for g in range(lay.groups) for i in (np.flatnonzero(lay.group == g)[[0, -1]])
                 if w0 <= i < w0 + WINDOW}
    assert set(_loop_x(geo)) == true_ends


def test_table_shows_interval_and_exact_value():
    x = ring_explorer()
    head = [c for c in x.table.value.split("</th>") if "scope='col'" in c]
    assert len(head) == 3 and ">exact<" in x.table.value and "simulated ± 95%" in x.table.value
    text = x.report()
    m = ring_builder(0.0233, 4, 32, 3)
    assert f"{m.ring_waste:.3%} ± {m.ci95('ring_waste'):.3%}" in text and f"{m.exact.ring_waste:.3%}" in text
    assert "worst case, (Nₜ/R)(1−Pₛ)Pₛᴷ" in text and f"{m.worst_case:.3%}" in text


def test_the_design_figures_draw_and_say_what_they_show():
    ocs = figure_ocstrx()
    texts = " ".join(t.get_text() for t in ocs.axes[0].texts)
    assert "MZI switch" in texts and "loopback" in texts and "60–80 µs" in texts
    design = figure_design()
    assert [ax.get_title(loc="left") for ax in design.axes] == [
        "(a) one transceiver, three paths", "(b) N2 has failed", "(c) the orchestrator"]
    for fig in (ocs, design):
        fig.canvas.draw()


def test_cut_waste_figure_marks_zero_means_on_the_floor():
    rows = {(r, k): ring_builder(0.0722, r, 32, k) for r in (4, 8) for k in (3, 4)}
    fig = figure_cut_waste(rows)
    fig.canvas.draw()
    labels = {t.get_text() for t in fig.legends[0].get_texts()}
    assert {"paper's bound 2(Nₜ − R)Pₛᴷ", "corrected worst case", "exact expectation"} <= labels
    assert rows[(4, 4)].cut_waste == 0 and "simulated mean 0 (no cut added waste)" in labels
