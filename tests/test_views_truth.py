"""Guards for what the explorers show a reader (no browser; the Playwright tests drive the pages).

Each class of defect that can come back silently has a test here:

* a value the model cannot represent is flagged on screen: a 16-bit output
  saturated at 65,535, a share of time above 100%, more minutes lost per day
  than a day has (``flags``, the table, the picture's caption and tooltip);
* labels are in words: no identifier (``comm_ms``) in any control's
  description or any table header, of any explorer or worked table;
* tables are in the house style (padding, right-aligned numbers, thousands
  separators, headers in words);
* sliders whose range spans decades put the default where a reader can reach
  it (log stops), and chapter 3's explorer reaches the chapter's own layout;
* the static site switches the controls off (the wiring in _config.yml);
* no control is dead: one step of any control, from the defaults, changes
  both the table and the picture (chapter 4's pattern slider once moved
  nothing on the picture).
"""
from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

import ipywidgets as W
import pytest

from clustermath.peak.worked_tables import TABLES
from clustermath.labels import WORDS, words
from clustermath import WINGS
from clustermath.views import peak, placement, reliability
from clustermath.views.base import OVER, ModelView, Slider, flags, ladder, table

REPO = Path(__file__).resolve().parent.parent
FACTORIES = {**{f"{wing}:{k}": v for wing in WINGS
                for k, v in getattr(importlib.import_module(f"clustermath.views.{wing}"), "EXPLORERS", {}).items()},
             "peak:lab": peak.lab_explorer}
"""Every wing's registered explorers (a new wing's ``EXPLORERS`` is picked up by name), and chapter 1's lab."""
IDENTIFIER = re.compile(r"\b[a-z]+_[a-z0-9_]+\b")


@pytest.fixture(scope="module")
def explorers():
    return {name: make() for name, make in FACTORIES.items()}


class _Cells(HTMLParser):
    def __init__(self):
        super().__init__()
        self.cells: list[tuple[str, dict, str]] = []
        self._open: tuple[str, dict] | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag in ("td", "th"):
            self._open, self._text = (tag, dict(attrs)), []

    def handle_data(self, data):
        if self._open:
            self._text.append(data)

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._open:
            self.cells.append((*self._open, "".join(self._text).strip()))
            self._open = None


def cells(html: str):
    parser = _Cells()
    parser.feed(html)
    return parser.cells


def set_controls(explorer, **values):
    for name, value in values.items():
        explorer.controls[name].value = value


# -- flags -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class _R:
    a: int
    b: float
    ok: bool


@dataclass(frozen=True)
class _Shares:
    young_lost_pct: float
    lost_min_per_day: int
    first_order_valid: bool


def test_saturation_flags_65535_only():
    assert flags(_R(65535, 1.0, True)) == {"a": "saturated at 65,535: the true value is larger"}
    assert flags(_R(65534, 65535.0, True)) == {}  # one below, and a float, are not saturated ports


def test_bounds_are_exclusive():
    assert flags(_Shares(100.0, 1440, True)) == {}
    found = flags(_Shares(100.01, 1441, False))
    assert set(found) == {"young_lost_pct", "lost_min_per_day", "first_order_valid"}
    assert all(found.values())


def test_every_bound_has_words():
    assert all(limit > 0 and note for limit, note in OVER.values())


@pytest.mark.parametrize("name, values, output", [
    ("cluster_scale", {"nodes": 1024, "node_tflops": 1000}, "ideal_tflops"),
    ("cluster_economics", {"nodes": 512, "node_cost": 1000}, "total_cost"),
    ("activation_memory", {"layers": 200, "batch": 64, "act_per_layer_mb": 64}, "act_mb"),
    ("fabric_bisection", {"nodes": 128, "link_gbps": 1600, "oversub_x": 1}, "full_bisection_gbps"),
])
def test_saturated_values_are_marked(name, values, output):
    e = peak.explorer(name)
    set_controls(e, **values)
    assert getattr(e.results()[0], output) == 65535
    assert "saturated at 65,535" in e.table.value
    assert any("saturated" in w for w in e.warnings(e.results()))
    assert "saturated" in e.alt
    e.broken.value = True  # the flag follows the build on the picture
    assert "saturated" in e.alt or not flags(e.results()[1])


def test_a_day_has_1440_minutes():
    e = peak.explorer("failure_recovery")
    set_controls(e, nodes=20000, node_mtbf_h=100)
    assert e.results()[0].lost_min_per_day > 1440
    assert "more minutes lost than a day has" in e.table.value
    assert "more minutes lost than a day has" in e.alt


def test_defaults_flag_nothing(explorers):
    for name, e in explorers.items():
        if hasattr(e, "warnings"):
            assert e.warnings(e.compute()) == [], name


@pytest.mark.parametrize("factory", [reliability.young_explorer, reliability.interruption_explorer])
def test_over_100_percent_lost_is_flagged(factory):
    e = factory()
    set_controls(e, save_s=900, gpus=200_000, gpu_mtbf_h=5_000)
    assert e.compute().young_lost_pct > 100  # 447%
    assert "over 100% lost" in e.table.value
    assert any("over 100%" in w for w in e.warnings(e.compute()))
    assert "over 100%" in e.alt


def test_goodput_out_of_range_is_flagged():
    e = reliability.goodput_explorer()
    set_controls(e, save_s=900, gpus=200_000, gpu_mtbf_h=5_000)
    assert not e.compute().first_order_valid
    assert "out of range" in e.table.value and "out of range" in e.alt


# -- words -----------------------------------------------------------------------------------

def test_words_are_words():
    for name, text in WORDS.items():
        assert "_" not in text and text != name or " " not in name, name
        assert "_" not in text, (name, text)
    assert words("comm_ms") == "communication per step (ms)"


def test_controls_are_labelled_in_words(explorers):
    for name, e in explorers.items():
        controls = list(e.controls.values()) + [getattr(e, "broken", None)]
        for control in filter(None, controls):
            label = control.description
            assert label and not IDENTIFIER.search(label), f"{name}: control labelled {label!r}"
            if isinstance(control, (W.IntSlider, W.FloatSlider, W.SelectionSlider)):
                assert control.tooltip, f"{name}: slider {label!r} has no accessible name"


def test_tables_are_in_words_and_house_style(explorers):
    for name, e in explorers.items():
        for tag, attrs, text in cells(e.table.value):
            assert not IDENTIFIER.search(text), f"{name}: table cell {text!r}"
            style = attrs.get("style", "")
            assert "padding:3px 10px" in style, f"{name}: cell {text!r} without the house padding"
            if tag == "td" and re.fullmatch(r"[-0-9.,%]+", text):
                assert "text-align:right" in style, f"{name}: number {text!r} not right-aligned"
            if tag == "td" and re.fullmatch(r"-?\d{4,}", text):
                pytest.fail(f"{name}: {text} without a thousands separator")


def test_the_table_helper():
    html = table(("output", "value"), [("GPUs", "16,384")], flagged={0: "over 100% lost"})
    found = cells(html)
    assert [c[0] for c in found[:4]] == ["th", "th", "th", "td"] and found[3][2] == "16,384"
    assert "text-align:right" in found[3][1]["style"]
    assert "⚠ over 100% lost" in html


def test_text_cells_wrap_and_numbers_do_not():
    """A column of words (``text=``) or a row of words in a numbers' column (``text_rows=``) is
    left-aligned and may wrap; a number is right-aligned, tabular and kept on one line (issue 41: the run
    explorer's assumed inputs were one 629 px line that squeezed the quantity column)."""
    html = table(("row", "source", "value"), [("a", "Narayanan et al. 2021", "1,024"),
                                              ("inputs assumed", "none", "scale-up link, peak, GPU")],
                 text=(1,), text_rows=(1,))
    found = {text: attrs["style"] for tag, attrs, text in cells(html) if tag in ("td", "th")}
    for words in ("source", "Narayanan et al. 2021", "none", "scale-up link, peak, GPU"):
        assert "text-align:left" in found[words] and "white-space:normal" in found[words], words
    for number in ("value", "1,024"):
        style = found[number]
        assert "text-align:right" in style and "white-space:nowrap" in style and "tabular-nums" in style, number


def test_identifiers_never_break_but_their_lists_do():
    """Issue 41: chapter 6's row ids ("ms24-t2-16") wrapped at a hyphen at 390 px once words could wrap.
    An ``ids`` column keeps each identifier on one line; a list of them still wraps between them."""
    html = table(("row", "rows with the same inputs", "note"),
                 [("ms24-t2-16", "nccl1455-ring-8, nccl1455-nvls-8", "a long note in words")],
                 text=(1, 2), ids=(0, 1))
    assert html.count("<span style='white-space:nowrap'>") == 3
    assert "<span style='white-space:nowrap'>ms24-t2-16</span>" in html
    assert ("<span style='white-space:nowrap'>nccl1455-ring-8</span>, "
            "<span style='white-space:nowrap'>nccl1455-nvls-8</span>") in html
    found = {text: attrs["style"] for tag, attrs, text in cells(html) if tag in ("td", "th")}
    assert "white-space:normal" in found["a long note in words"]  # words still wrap
    assert "span" not in table(("row", "x"), [("a-b", "1")])  # no ids named: the cell as before


def test_wrapped_headers_wrap_and_their_numbers_do_not():
    """``wrap_headers``: a numbers' column's header may wrap between words (still right-aligned), every
    header sits on the bottom line, and the numbers below stay on one line; without it, as before."""
    header, rows = ("row", "error, attention at the GEMMs' rate"), [("a", "+59.0%")]
    found = {text: attrs["style"] for tag, attrs, text in cells(table(header, rows, wrap_headers=True))
             if tag in ("td", "th")}
    wrapped, number = found["error, attention at the GEMMs' rate"], found["+59.0%"]
    assert "white-space:normal" in wrapped and "text-align:right" in wrapped and "vertical-align:bottom" in wrapped
    assert "vertical-align:bottom" in found["row"]
    assert "white-space:nowrap" in number and "text-align:right" in number
    plain = {text: attrs["style"] for tag, attrs, text in cells(table(header, rows)) if tag == "th"}
    assert "white-space:nowrap" in plain["error, attention at the GEMMs' rate"] and "vertical-align" not in plain["row"]


@pytest.mark.parametrize("name", sorted(TABLES))
def test_worked_tables_in_words_and_house_style(name):
    styler = TABLES[name].styled()
    headers = [c for level in styler.data.columns.levels for c in level]
    assert not [h for h in headers if IDENTIFIER.search(h)], headers
    css = styler.to_html()
    assert "padding: 3px 10px" in css and "text-align: right" in css
    assert "#1a1a1a" in css or "background-color" not in css  # shaded rows keep dark text in dark mode


# -- ranges ----------------------------------------------------------------------------------

def test_log_stops():
    stops = ladder(8, 200_000, 16_384, integer=True)
    assert stops[0] == 8 and stops[-1] == 200_000
    assert {1024, 4096, 16_384} <= set(stops)
    ratios = [b / a for a, b in zip(stops, stops[1:])]
    assert max(ratios) <= 1.35


def test_slider_stops_give_a_selection_slider_read_out_with_its_format():
    w = Slider("x", 0.0, 1.0, 0.25, readout_format=".2f", stops=(0.0, 0.25, 0.5, 1.0)).widget({}, W.Layout())
    assert isinstance(w, W.SelectionSlider) and w.value == 0.25
    assert w.options == (("0.00", 0.0), ("0.25", 0.25), ("0.50", 0.5), ("1.00", 1.0))
    ints = Slider("n", 1, 1000, 10, stops=(1, 10, 1000)).widget({}, W.Layout())
    assert [label for label, _ in ints.options] == ["1", "10", "1,000"]


@pytest.mark.parametrize("kwargs, message", [
    (dict(value=0.3), "value must be one of the stops of slider 'x', got 0.3"),
    (dict(stops=(0.0, 0.5, 0.25, 1.0)), "stops must be sorted and unique for slider 'x'"),
    (dict(stops=(0.0, 0.5, 0.5, 1.0)), "stops must be sorted and unique for slider 'x'"),
    (dict(stops=(0.25, 0.5, 1.0)), "stops must run from low 0.0 to high 1.0 for slider 'x'"),
    (dict(stops=(0.0, 0.25, 0.5)), "stops must run from low 0.0 to high 1.0 for slider 'x'"),
    (dict(stops=()), "stops must run from low 0.0 to high 1.0 for slider 'x'"),
    (dict(readout_format=".1f", stops=(0.0, 0.21, 0.25, 1.0)), "stops must read out differently"),
    (dict(log=True), "stops of slider 'x' cannot be combined with log or choices"),
])
def test_slider_stops_refuse_bad_lists(kwargs, message):
    args = dict(value=0.25, readout_format=".2f", stops=(0.0, 0.25, 0.5, 1.0)) | kwargs
    with pytest.raises(ValueError, match=re.escape(message)):
        Slider("x", 0.0, 1.0, **args)


def test_defaults_sit_inside_linear_ranges(explorers):
    """A linear slider never puts its default in its first 5% (the GPU slider's 1,024 did)."""
    for name, e in explorers.items():
        for port, c in e.controls.items():
            if isinstance(c, (W.IntSlider, W.FloatSlider)) and c.value != c.min:
                share = (c.value - c.min) / (c.max - c.min)
                assert share >= 0.05, f"{name}: {port} default at {share:.1%} of a linear range: use log=True"


def test_placement_reaches_the_llama_layout():
    e = placement.placement_explorer()
    set_controls(e, tp=8, pp=16, dp=128, domain_size=72)
    r = e.compute()
    assert (r.gpus, r.domains, r.pp_hops_crossing) == (16_384, 228, 213)
    assert "16,384" in e.table.value


# -- static pages ---------------------------------------------------------------------------

def test_pictures_carry_no_tooltip(explorers):
    """@jupyter-widgets/html-manager's ImageView fails to render an Image with a tooltip."""
    for name, e in explorers.items():
        picture = getattr(e, "picture", None)
        assert picture is None or picture.tooltip is None, name


def test_static_pages_switch_controls_off():
    config = (REPO / "_config.yml").read_text()
    assert "static-widgets.js" in config and "book/static" in config
    script = (REPO / "book" / "static" / "static-widgets.js").read_text()
    for needed in ("disabled", "aria-label", "make lab", "cm-static-note", "alt"):
        assert needed in script
    assert "sphinx_togglebutton" not in config.split("extra_extensions:")[1].split("config:")[0]


def test_reports_are_unchanged_by_words(explorers):
    """The compared cell under each explorer prints the model's own names (stored outputs stay valid)."""
    assert "achieved_tflops" in explorers["peak:cluster_scale"].report()


# -- no dead control ---------------------------------------------------------------------------

SUB_PIXEL_UP = {("scaleup:ring_builder", "hops")}
"""Controls whose step up from the default moves only what is thinner than a pixel: the ring builder's
K from 3 to 4 takes the paper's bound from 0.009% to 0.0001% of its 25% scale (a sliver either way,
issue 41's pictures at 2x no longer show the anti-aliasing that told them apart); one step down shows."""


def one_step(widget: W.ValueWidget, down: bool = False):
    """The value one key press away from the current one (up, or down at the top end; ``down``: down)."""
    if down and not isinstance(widget, (W.Checkbox, W.ToggleButton, W.SelectionSlider, W.Dropdown)):
        return widget.value - widget.step if widget.value - widget.step >= widget.min else widget.value + widget.step
    if isinstance(widget, (W.Checkbox, W.ToggleButton)):
        return not widget.value
    if isinstance(widget, (W.SelectionSlider, W.Dropdown)):
        values = [v for _, v in widget.options]
        i = values.index(widget.value)
        return values[i + 1] if i + 1 < len(values) else values[i - 1]
    up = widget.value + widget.step
    return up if up <= widget.max else widget.value - widget.step


def test_every_wings_explorers_are_found():
    """The factories come from each wing's ``EXPLORERS``: chapter 6's two are there without being listed."""
    assert {"validation:published_run", "validation:own_run", "scaleup:ring_builder"} <= set(FACTORIES)


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_every_control_changes_table_and_picture(name):
    """One step of any control redraws the picture; the table changes whenever the model's result does.

    (Chapter 1's models are 16-bit integer hardware: one step of a slider can leave
    an integer output as it was, and then the table rightly stays the same.)
    """
    for port in list(FACTORIES[name]().controls):
        e = FACTORIES[name]()
        control = e.controls[port]
        result = e.compute if hasattr(e, "compute") else e.rows  # the lab explorer is a table only
        picture = lambda: getattr(getattr(e, "picture", None), "value", None)  # noqa: E731
        result_before, table_before, picture_before = repr(result()), e.table.value, picture()
        control.value = one_step(control, down=(name, port) in SUB_PIXEL_UP)
        what = f"{name}: moving {control.description!r} to {control.value!r}"
        assert picture_before is None or picture() != picture_before, f"{what} left the picture as it was"
        if repr(result()) != result_before:
            assert e.table.value != table_before, f"{what} changed the result but not the table"


def test_table_rows_have_words():
    """Every row a model view shows has an entry in WORDS (no fallback to the identifier with spaces)."""
    for name, make in sorted(FACTORIES.items()):
        e = make()
        if isinstance(e, ModelView) and type(e).table_html is ModelView.table_html:
            missing = [k for k, _ in e._rows(e.compute()) if k not in WORDS]
            assert not missing, f"{name}: rows without words: {missing}"
