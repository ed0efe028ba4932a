"""Thin widget views over clustermath models.

An ``Explorer`` puts sliders on a model's input ports, a toggle on its broken
build, a table of both builds' outputs and a small plot that moves with the
inputs. It holds no arithmetic of its own: every number it shows is the
model's output for the current slider values.

Design notes
------------
* The plot is a ``matplotlib.figure.Figure`` drawn off-screen (Agg) and shown
  in an ``ipywidgets.Image``; no ``Output`` widget and no ``print`` in a
  callback, so nothing leaks into the cell's stdout under nbval, and the
  default state (sliders, table, picture) is stored with the notebook and
  rendered by the HTML book without a kernel.
* Redraws are blitted: a view's ``setup(ax)`` draws the fixed frame (axes,
  limits, labels, threshold lines) once and creates its moving artists with
  ``animated=True``; it returns an ``update(inputs, broken)`` that only moves
  them. Each update restores the saved frame and draws the moving artists
  alone, which keeps a redraw to a few milliseconds (text rendering, the
  slow part of Agg, happens once).
* ``repr(explorer)`` is a short stable string, so the cell's text output is
  deterministic and nbval can compare it.
* Slider ranges are chosen by the caller so a reader can never reach an input
  the model rejects; ``floors`` ties one slider's minimum to another's value
  (for example slowest rank >= mean rank).
* ``timings`` records model and redraw latency of every update (wall
  clock), ``cpu_timings`` the same in process CPU time; both are reported
  by ``tools/bench_widgets.py``.
* What a reader sees is in words: controls and table rows are labelled from
  ``clustermath.labels.WORDS`` (with units), numbers are right-aligned with
  thousands separators (``table``), and a value the model cannot represent
  is flagged on screen, in the table and in the picture: a 16-bit output
  saturated at 65,535, a share of time above 100%, more minutes lost per day
  than a day has (``flags``).
* Controls sit above the picture when the page is narrow (the row wraps).
  On the static HTML book no kernel runs the callbacks: when the book is
  built, each explorer displayed writes its frames (``frames.py``: the table
  and picture for every value of every control, one control at a time from
  the defaults), and ``book/static/static-widgets.js`` swaps them in as a
  reader moves a control (``Framed``, the display hook every explorer has).
"""
from __future__ import annotations

import html
import io
import math
import re
import textwrap
import time
from dataclasses import fields
from typing import Any, Callable, Mapping, Sequence

import ipywidgets as W
import numpy as np
from matplotlib import rc_context, rcParams
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.legend import Legend
from matplotlib.text import Text
from PIL import Image as PILImage

from ..check import fmt_value
from ..labels import words
from ..runner import SPEC_SHEET_BUILD, saturated, spec_of

__all__ = ["Explorer", "Framed", "LiveFigure", "ModelView", "Slider", "encode_png", "flags", "ladder", "prose", "still", "table",
           "BROKEN_BUILD", "CORRECT_COLOUR", "BROKEN_COLOUR", "FLAG_COLOUR", "LIMIT_COLOUR", "OVER",
           "COLUMN_PX", "CSS_DPI", "DENSITY", "FIGURE_STYLE", "LABEL_FLOOR_PX", "SMALL", "legible",
           "text_sizes_px"]

CORRECT_COLOUR = "#1f5fa8"
"""Colour of the correct build in every figure of the book."""
BROKEN_COLOUR = "#d9822b"
"""Colour of the broken (specification-sheet) build."""
LIMIT_COLOUR = "#b22222"
"""Colour of a threshold line."""
FLAG_COLOUR = "#a40000"
"""Colour of a flagged value (saturated, or beyond what the model covers)."""
BROKEN_BUILD = SPEC_SHEET_BUILD
"""The book's one name for the build that takes the specification sheet at its word."""

# -- the book's one figure style -------------------------------------------------------------------
LABEL_FLOOR_PX = 11.0
"""No text on a picture the book draws is smaller than this, in CSS px, where the page shows it at 1366 px."""
CSS_DPI = 96
"""CSS px per inch of an explorer's picture: a point of its text is a point of the page's (1 pt = 4/3 px)."""
DENSITY = 2
"""Device pixels per CSS px an explorer's picture is rendered at: sharp on high-density screens (pixel
ratio 2), shown at half its pixel size (the picture's width and height are given in CSS px)."""
SMALL = 8.5
"""The smallest text of a figure, in points: 8.5 pt at 96 CSS px per inch is 11.3 CSS px."""
FIGURE_STYLE: dict[str, Any] = {
    "font.size": 10, "axes.titlesize": 10.5, "axes.labelsize": 9.5, "xtick.labelsize": 9, "ytick.labelsize": 9,
    "legend.fontsize": SMALL, "legend.title_fontsize": SMALL, "figure.titlesize": 11,
    "figure.labelsize": 9.5, "figure.dpi": CSS_DPI * DENSITY,
}
"""Every explorer's picture is drawn in this style (``matplotlib.rc_context``): text sizes in points,
none under ``SMALL``; the views' own text uses ``SMALL`` or more."""
FLAG_PT = 9.5
"""The flag line over a picture (white on the flag colour), in points, before it is fitted."""


def picture_size(figsize: tuple[float, float]) -> tuple[int, int]:
    """An explorer picture's size in CSS px (whole px; its pixels are ``DENSITY`` times as many)."""
    return round(figsize[0] * CSS_DPI), round(figsize[1] * CSS_DPI)


def text_sizes_px(figure: Figure, shown_px: float | None = None) -> list[tuple[float, str]]:
    """Every visible text of ``figure`` with its size in CSS px where it is shown ``shown_px`` CSS px wide.

    size (CSS px) = font size (pt) × dpi / 72 × shown width / the figure's width in its own pixels.
    ``shown_px`` None: the figure is shown at its own width divided by ``DENSITY`` (an explorer's
    picture). Tick labels count once the figure has been drawn (they are made while drawing).
    Returns (size, text) pairs, smallest first."""
    natural = figure.get_figwidth() * figure.dpi
    shown = natural / DENSITY if shown_px is None else shown_px
    scale = figure.dpi / 72 * shown / natural
    hidden = {id(t) for legend in figure.findobj(Legend) if not legend.get_visible()
              for t in (*legend.texts, legend.get_title())}
    found = [(round(text.get_fontsize() * scale, 2), text.get_text())
             for text in figure.findobj(Text)
             if text.get_visible() and text.get_text().strip() and id(text) not in hidden]
    return sorted(found)


COLUMN_PX = 729
"""The width of a chapter's output column where the page is 1366 px wide (CSS px; sphinx-book-theme,
measured in Chromium): a wider picture is squeezed to it."""


def legible(figure: Figure, column_px: float = COLUMN_PX) -> Figure:
    """Raise every text of a static figure that the page would show under ``LABEL_FLOOR_PX`` to that size.

    The notebook shows a figure at its own width (its tight box at its dpi, in CSS px) or, when that is
    wider than the column, squeezed to the column: a figure 10 in wide keeps 73% of its width, and
    its 8.5 pt labels come out at 8.6 px. Returns the figure (for ``return legible(fig)``)."""
    canvas = figure.canvas if isinstance(figure.canvas, FigureCanvasAgg) else FigureCanvasAgg(figure)
    canvas.draw()  # makes the tick labels
    # the PNG's width in CSS px: the tight box with its padding, no wider than the figure's (text that
    # runs off the figure is a fault of its own, not a reason for larger type)
    pad = 2 * rcParams["savefig.pad_inches"]
    natural = min(figure.get_tightbbox(canvas.get_renderer()).width + pad, figure.get_figwidth() + pad) * figure.dpi
    per_pt = figure.dpi / 72 * min(1.0, column_px / natural)
    floor_pt = math.ceil(LABEL_FLOOR_PX / per_pt * 4) / 4  # to a quarter point
    for text in figure.findobj(Text):
        if text.get_text().strip() and text.get_fontsize() < floor_pt:
            text.set_fontsize(floor_pt)
    for axes in figure.axes:  # tick labels are made again at each draw: in the raised size
        for name, axis in (("x", axes.xaxis), ("y", axes.yaxis)):
            labels = axis.get_ticklabels(which="both")
            if labels and min(t.get_fontsize() for t in labels) < floor_pt:
                axes.tick_params(axis=name, which="both", labelsize=floor_pt)
    return figure


SATURATED_AND_DERIVED = "saturated at 65,535; values computed from it are off too"
"""The picture's one note for an output at the ceiling and the values computed from it."""

OVER: dict[str, tuple[float, str]] = {
    "young_lost_pct": (100.0, "over 100% lost: beyond the first-order model"),
    "daly_lost_pct": (100.0, "over 100% lost: beyond the model"),
    "young_in_daly_pct": (100.0, "over 100% lost: beyond the model"),
    "overhead_pct": (100.0, "over 100%: saving outlasts the interval"),
    "lost_min_per_day": (1440.0, "more minutes lost than a day has (1,440)"),
}
"""Outputs that stop meaning anything above a bound: the bound and what to say on screen."""


def flags(result: Any) -> dict[str, str]:
    """What is wrong with each flagged output of a model result, by field name.

    * a 16-bit integer output at 65,535 (the chapter-1 models saturate there:
      the true value is at least that);
    * an output computed from such an output (``clustermath.runner.saturated``:
      1,024 nodes of 1,000 TFLOPS show 32,767 achieved TFLOPS at 50%, truly
      512,000), including a verdict (yes/no) taken from one;
    * a field of ``OVER`` above its bound (a share of time above 100%, more
      minutes lost a day than a day has);
    * ``first_order_valid`` false (the goodput budget's shares are capped).
    """
    found: dict[str, str] = {}
    ceiling = saturated(result)
    for f in fields(result):
        value = getattr(result, f.name)
        upstream = ceiling.get(f.name)
        if upstream is not None and (upstream or f.name not in OVER):
            roots = " and ".join(words(u) for u in upstream or ())
            found[f.name] = ("saturated at 65,535: the true value is larger" if not upstream else
                             f"decided on {roots}, which saturated: the verdict may be wrong"
                             if isinstance(value, bool) else
                             f"computed from {roots}, which saturated: not the true value")
        elif isinstance(value, bool):
            if f.name == "first_order_valid" and not value:
                found[f.name] = "first-order model out of range: its shares are capped"
        elif f.name in OVER and isinstance(value, (int, float)) and value > OVER[f.name][0]:
            found[f.name] = OVER[f.name][1]
    return found


_PAD = "padding:3px 10px"
_NUM = f"{_PAD};text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap"
_TEXT = f"{_PAD};text-align:left;white-space:normal"
"""A cell of words: left-aligned and allowed to wrap (a number's cell stays right-aligned on one line)."""


def table(header: Sequence[str], rows: Sequence[Sequence[str]], *, flagged: Mapping[int, str] | None = None,
          chosen: int | None = None, differ: Sequence[int] = (), text: Sequence[int] = (),
          text_rows: Sequence[int] = (), nowrap_labels: bool = False, ids: Sequence[int] = (),
          wrap_headers: bool = False) -> str:
    """The book's one table style, as inline HTML (so it holds in JupyterLab and on the static site).

    ``header`` is in words; the first column is a label (left-aligned), the
    others numbers (right-aligned, already formatted with thousands
    separators). ``flagged`` maps a row index to a note: the row is shaded and
    the note shown under it. ``chosen`` shades one column's header;
    ``differ`` lists rows printed in the flag colour (the two builds disagree);
    ``text`` lists further columns of words and ``text_rows`` rows whose every cell is words (a
    row of a numbers' column that holds a list in words): left-aligned, allowed to wrap, where a
    number's cell is right-aligned, tabular and kept on one line;
    ``nowrap_labels`` keeps each row's label on one line (identifiers with hyphens);
    ``ids`` lists columns (the label's 0 among them) that hold identifiers, one or a list
    joined by ", ": each identifier stays on one line ("ms24-t2-16" never breaks at a hyphen),
    a list still wraps between them; ``wrap_headers`` lets a numbers' column's header wrap between words
    (still right-aligned), so a table of many such columns fits a narrow column of text.
    """
    flagged = dict(flagged or {})

    def cell(i: int, c: str) -> str:
        if i not in ids:
            return html.escape(c)
        return ", ".join(f"<span style='white-space:nowrap'>{html.escape(x)}</span>" for x in c.split(", "))

    words_at = {0, *text}
    number_head = _NUM.replace(";white-space:nowrap", ";white-space:normal") if wrap_headers else _NUM
    bottom = ";vertical-align:bottom" if wrap_headers else ""
    head_style = {i: (_PAD if i == 0 else _TEXT if i in words_at else number_head) + bottom for i in range(len(header))}
    head = "".join(
        f"<th scope='col' style='{head_style[i]};border-bottom:1px solid #888;"
        f"{'background:rgba(31,95,168,0.14);' if i == chosen else ''}'>{html.escape(h)}</th>"
        for i, h in enumerate(header))
    body = []
    for r, row in enumerate(rows):
        shade = "background:#fff3cd;color:#1a1a1a;" if r in flagged else ""
        colour = f"color:{FLAG_COLOUR};" if r in differ and r not in flagged else ""
        cells = "".join(
            (f"<th scope='row' style='{_PAD};font-weight:normal;text-align:left"
             f"{';white-space:nowrap' if nowrap_labels else ''}'>{cell(i, c)}</th>" if i == 0
             else f"<td style='{_TEXT if i in words_at or r in text_rows else _NUM}'>{cell(i, c)}</td>")
            for i, c in enumerate(row))
        body.append(f"<tr style='{shade}{colour}'>{cells}</tr>")
        if r in flagged:
            body.append(f"<tr style='{shade}'><td colspan='{len(row)}' class='cm-flag' "
                        f"style='{_PAD};color:{FLAG_COLOUR};font-weight:bold'>⚠ {html.escape(flagged[r])}</td></tr>")
    return (f"<table class='cm-table' style='border-collapse:collapse;font-size:90%;margin:4px 0'>"
            f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>")


PLACEHOLDER = re.compile(r"\{\{\s*(\w+)\s*\}\}")
"""A number's place in a paragraph of prose: ``{{name}}`` (MyST roles keep their single braces)."""


def prose(text: str, **values: str) -> "Markdown":
    """A paragraph of the book's prose with the numbers the code computed put in, as Markdown.

    ``text`` is MyST markdown in which every number a model or the data produces is a
    ``{{name}}`` placeholder, and ``values`` gives each its text, formatted where it was
    computed. A code cell that returns ``prose(...)`` (its source hidden by ``remove-input``)
    renders in the book, in JupyterLab and on Colab alike, and nbval compares the paragraph.
    Every placeholder needs a value and every value a placeholder (ValueError otherwise), so
    a number cannot be left typed beside a stale one.
    """
    from IPython.display import Markdown

    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"text must be a non-empty string of markdown, got {text!r}")
    wanted = PLACEHOLDER.findall(text)
    missing = sorted(set(wanted) - set(values))
    if missing:
        raise ValueError(f"values must give every placeholder of text a value; missing: {', '.join(missing)}")
    unused = sorted(set(values) - set(wanted))
    if unused:
        raise ValueError(f"values must each fill a placeholder of text; unused: {', '.join(unused)}")
    for name, value in values.items():
        if not isinstance(value, str):
            raise ValueError(f"{name} must be text formatted where it is computed, got {value!r}")
    return Markdown(PLACEHOLDER.sub(lambda match: values[match.group(1)], textwrap.dedent(text).strip()))


def ladder(low: float, high: float, value: float, integer: bool) -> list[float]:
    """Slider stops evenly spread on a log scale: 1, 1.25, 1.5, 2, 2.5, 3, 4, 5, 6, 8 per decade, the
    powers of two, and ``low``, ``high`` and ``value`` themselves (0 too, when ``low`` is 0)."""
    mantissas = (1, 1.25, 1.5, 2, 2.5, 3, 4, 5, 6, 8)
    stops = {low, high, value}
    floor = max(low, 1 if integer else low or 1e-3)
    exponent = math.floor(math.log10(floor)) - 1
    while 10 ** exponent <= high:
        stops.update(m * 10 ** exponent for m in mantissas)
        exponent += 1
    two = 1
    while two <= high:
        stops.add(two)
        two *= 2
    kept = sorted({(int(round(v)) if integer else float(v)) for v in stops if low <= v <= high
                   and (v == low or v >= floor)})
    return kept

Updater = Callable[[Mapping[str, Any], bool], "bool | None"]
Setup = Callable[[Axes], Updater]
"""A view: ``setup(ax)`` draws the frame and returns ``update(inputs, broken)``.

``update`` returns True when it changed the frame itself (axis limits), so
the explorer redraws the frame before blitting."""


def _readout(value: float, readout_format: str) -> str:
    """A stop of a ``SelectionSlider`` as its readout shows it: an integer with thousands separators."""
    return format(value, ",") if isinstance(value, int) else format(value, readout_format)


class Slider:
    """A slider specification: port name, range, step, default and an optional label.

    Integer bounds give an ``IntSlider``; any float among them gives a
    ``FloatSlider`` (with ``readout_format``, default ``.3g``). ``log=True``
    gives a ``SelectionSlider`` over ``ladder(low, high, value)``: stops
    evenly spaced on a log scale, for ranges that span decades. ``choices``
    names the stops of an integer port that picks one of several things (a
    design, a pattern): the slider then reads out the name, not the index.
    ``stops`` lists the values a ``SelectionSlider`` offers, from ``low`` to
    ``high``, sorted and unique, read out with ``readout_format``: a coarser
    grid than ``step`` that still holds the values that matter (0, presets),
    so a static page needs fewer frames (``frames.py`` computes one per stop).
    The label defaults to the port in words, with its unit
    (``clustermath.labels``).
    """

    def __init__(self, port: str, low: float, high: float, value: float, step: float = 1,
                 label: str | None = None, readout_format: str = ".3g", log: bool = False,
                 choices: Sequence[str] | None = None, stops: Sequence[float] | None = None):
        if stops is not None:
            stops = tuple(stops)
            if log or choices is not None:
                raise ValueError(f"stops of slider {port!r} cannot be combined with log or choices")
            if not stops or stops[0] != low or stops[-1] != high:
                raise ValueError(f"stops must run from low {low} to high {high} for slider {port!r}, "
                                 f"got {stops[:1]}..{stops[-1:]}")
            if any(b <= a for a, b in zip(stops, stops[1:])):
                raise ValueError(f"stops must be sorted and unique for slider {port!r}")
            if value not in stops:
                raise ValueError(f"value must be one of the stops of slider {port!r}, got {value}")
            if len({_readout(v, readout_format) for v in stops}) != len(stops):
                raise ValueError(f"stops must read out differently with readout_format {readout_format!r} "
                                 f"for slider {port!r}")
        if choices is not None and (len(choices) != high - low + 1 or step != 1 or log):
            raise ValueError(f"choices must name each of the stops {low}..{high} of slider {port!r} "
                             f"(step 1, not log), got {len(choices)} names")
        if not low <= value <= high:
            raise ValueError(f"value must be in {low}..{high} for slider {port!r}, got {value}")
        steps = (value - low) / step if step > 0 else -1.0
        if not log and stops is None and (step <= 0 or abs(steps - round(steps)) > 1e-9):
            raise ValueError(f"step must be > 0 and put {value} on the slider's grid "
                             f"{low}, {low + step}, ... for slider {port!r}, got step {step}")
        self.port, self.low, self.high, self.value, self.step = port, low, high, value, step
        self.label = label or words(port)
        self.readout_format = readout_format
        self.log = log
        self.choices = tuple(choices) if choices is not None else None
        self.stops = stops

    @property
    def is_float(self) -> bool:
        return any(isinstance(v, float) for v in (self.low, self.high, self.value, self.step))

    def widget(self, style: Mapping[str, str], layout: W.Layout) -> W.ValueWidget:
        """The ipywidgets slider for this specification."""
        if self.choices is not None:
            options = [(name, int(self.low) + i) for i, name in enumerate(self.choices)]
            return W.SelectionSlider(options=options, value=self.value, description=self.label,
                                     tooltip=self.label, continuous_update=True, style=style, layout=layout)
        if self.log or self.stops is not None:
            stops = self.stops or ladder(self.low, self.high, self.value, integer=not self.is_float)
            options = [(_readout(v, self.readout_format), v) for v in stops]
            return W.SelectionSlider(options=options, value=self.value, description=self.label,
                                     tooltip=self.label, continuous_update=True, style=style, layout=layout)
        common = dict(value=self.value, min=self.low, max=self.high, step=self.step, description=self.label,
                      tooltip=self.label, continuous_update=True, style=style, layout=layout)
        if self.is_float:
            return W.FloatSlider(readout_format=self.readout_format, **common)
        return W.IntSlider(**common)


LEVELS = 16
"""Levels each colour channel of an explorer's picture keeps (0, 17, ..., 255: white and black exact).
A step of 17 in 255 is invisible on anti-aliased edges and shifts a colour by at most 8 in 255, and a
picture of few colours packs small: the static site's frames at twice the pixels weigh about 1.5 times
what they weighed at 80 dpi, instead of 2.4 times (issue 41)."""
_LEVEL = np.round(np.round(np.arange(256) / 255 * (LEVELS - 1)) * 255 / (LEVELS - 1)).astype(np.uint8)
_LEVELS_RGBA = [int(v) for v in _LEVEL] * 4


def picture_pixels(canvas: FigureCanvasAgg) -> np.ndarray:
    """The RGBA pixels an explorer shows for what its canvas holds now: each channel to ``LEVELS`` levels.
    Its PNG (``encode_png``) and the static site's frames (``frames.py``) both hold exactly these."""
    return np.asarray(_levelled(canvas))


def _levelled(canvas: FigureCanvasAgg) -> PILImage.Image:
    width, height = canvas.get_width_height()
    image = PILImage.frombuffer("RGBA", (width, height), canvas.buffer_rgba(), "raw", "RGBA", 0, 1)
    return image.point(_LEVELS_RGBA)  # PIL's table lookup: a quarter of numpy's time


def encode_png(canvas: FigureCanvasAgg) -> bytes:
    """Encode the picture an Agg canvas holds now (``picture_pixels``) as PNG, with light compression (fast).

    A picture of at most 256 colours (nearly every one: 16 levels a channel leave a hundred or so) is
    stored with a palette: half the bytes, a fifth of the time of 32-bit pixels, the same pixels."""
    image = _levelled(canvas)
    out = io.BytesIO()
    pixels = np.asarray(image).reshape(-1, 4)
    key = pixels.astype(np.uint16) // 17  # each channel's level, 0..15
    key = (key[:, 0] << 12) | (key[:, 1] << 8) | (key[:, 2] << 4) | key[:, 3]
    present = np.flatnonzero(np.bincount(key, minlength=1 << 16))
    if present.size <= 256:
        number = np.zeros(1 << 16, np.uint8)
        number[present] = np.arange(present.size)
        levels = np.stack([(present >> shift) & 15 for shift in (12, 8, 4, 0)], axis=1) * 17
        image = PILImage.fromarray(number[key].reshape(image.height, image.width), "P")
        image.putpalette(levels[:, :3].astype(np.uint8).ravel().tolist())
        image.save(out, format="png", compress_level=1, transparency=bytes(levels[:, 3].astype(np.uint8)))
    else:
        image.save(out, format="png", compress_level=1)
    return out.getvalue()


def _cell(value: Any) -> str:
    return fmt_value(value)


class Framed:
    """Mixin of every explorer: while the static site is built, displaying it writes its frames.

    The explorer needs ``table`` (an ``HTML`` widget), its controls anywhere in
    its widget tree, and optionally ``picture`` (an ``Image``); see ``frames.py``.
    Outside the book's build (``frames.ENV`` unset) displaying it does nothing more.
    """

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        from .frames import publish

        publish(self)  # type: ignore[arg-type]
        return super()._repr_mimebundle_(**kwargs)  # type: ignore[misc]


class LiveFigure(Framed, W.VBox):
    """Controls → computation → (HTML table, blitted plot): the base of every explorer.

    A subclass says what to compute (``compute``), how to tabulate it
    (``table_html``), what to print for a compared notebook cell
    (``report``), what to pass to the view besides the inputs (``mode``)
    and what to flag (``warnings``: shown in red over the picture).

    Parameters
    ----------
    controls:
        Input widgets keyed by the name of the argument they feed.
    view:
        ``view(ax)`` draws the fixed frame and returns ``update(inputs, mode)``,
        which moves the view's animated artists (see the module notes).
    extras:
        Widgets shown under the controls that also trigger an update (a
        broken-build toggle, say) but are not inputs.
    floors:
        ``{name: other}``: the slider of ``name`` never goes below the
        current value of ``other`` (its minimum follows it).
    title:
        Shown in words above the explorer (the picture's axes title moves
        there, which leaves the space above the axes to the moving status
        line) and used as the picture's accessible name.

    ``encoding`` (True) says whether an update encodes the canvas into the
    picture; ``frames.py`` turns it off while it reads the canvas's pixels
    (the same pixels the PNG would hold) for the static site's frames.
    ``drawing`` (True) says whether an update computes and draws at all (after
    moving the floors); ``frames.py`` turns it off while it only reads which
    options the controls offer, and updates once when it turns it back on.
    """

    encoding = True
    drawing = True

    def __init__(
        self,
        controls: Mapping[str, W.ValueWidget],
        view: Setup,
        *,
        extras: Sequence[W.ValueWidget] = (),
        floors: Mapping[str, str] | None = None,
        title: str = "",
        figsize: tuple[float, float] = (5.4, 2.9),
    ) -> None:
        self.controls = dict(controls)
        self._floors = dict(floors or {})
        self.timings: list[tuple[float, float]] = []
        self.cpu_timings: list[tuple[float, float]] = []
        self.title = title
        self.alt = title
        self.table = W.HTML()
        self.picture = W.Image(format="png", layout=W.Layout(max_width="100%", height="auto",
                                                             object_fit="contain", flex="0 1 auto"))
        self.picture.add_class("cm-picture")
        width, height = picture_size(figsize)
        self.picture.width, self.picture.height = str(width), str(height)  # CSS px: shown at half its pixels
        with rc_context(FIGURE_STYLE):
            self.figure = Figure(figsize=(width * DENSITY + 0.25) / FIGURE_STYLE["figure.dpi"]
                                 * np.array([1.0, height / width]))
            self.canvas = FigureCanvasAgg(self.figure)
            self.axes = self.figure.add_subplot()
            self.figure.subplots_adjust(left=0.15, right=0.97, bottom=0.17, top=0.84)
            self._move = view(self.axes)
            if title and self.axes.get_title():
                self.axes.set_title("")  # the heading above the explorer says it
            self._moving = [a for a in self.axes.get_children() if a.get_animated()]
            legend = self.axes.get_legend()
            # drawn again over the moving curves, so a curve never hides a legend or a threshold's label
            self._overlays = ([legend] if legend is not None else []) + [
                t for t in self.axes.texts if not t.get_animated() and t.get_text()]
            # flags sit on a line of their own above the status line (which sits just above the axes)
            self._flag = self.axes.text(0.0, 1.13, "", transform=self.axes.transAxes, ha="left", va="bottom",
                                        fontsize=FLAG_PT, color="white", animated=True, clip_on=False,
                                        bbox={"boxstyle": "round,pad=0.2", "fc": FLAG_COLOUR, "ec": FLAG_COLOUR})
            self._redraw_frame()
        for widget in (*self.controls.values(), *extras):
            widget.observe(self._on_change, names="value")
        heading = W.HTML(f"<b>{html.escape(title)}</b>") if title else W.HTML()
        left = W.VBox([*self.controls.values(), *extras, self.table],
                      layout=W.Layout(flex="1 1 320px", max_width="480px", min_width="0"))
        left.add_class("cm-controls")
        row = W.HBox([left, self.picture], layout=W.Layout(flex_flow="row wrap", align_items="flex-start",
                                                            width="100%"))
        super().__init__([heading, row], layout=W.Layout(width="100%", max_width="100%"))
        self.add_class("cm-explorer")
        self.update()

    # -- what a subclass provides ---------------------------------------------------
    def compute(self) -> Any:
        """The model's outputs for the current inputs."""
        raise NotImplementedError

    def table_html(self, result: Any) -> str:
        """The outputs as a small HTML table."""
        raise NotImplementedError

    def report(self) -> str:
        """The current case as plain text (for a compared cell under the widget)."""
        raise NotImplementedError

    def mode(self) -> Any:
        """What the view's ``update`` receives besides the inputs (None by default)."""
        return None

    def warnings(self, result: Any) -> list[str]:
        """Notes to flag over the picture for this result (none by default)."""
        return []

    # -- shared machinery -------------------------------------------------------------
    def _redraw_frame(self) -> None:
        """Draw the fixed frame and save it; render the overlays (legend, threshold labels) alone,
        on a transparent canvas, once, so each update lays them over the moving artists by an
        alpha blend instead of rendering their text again (text is the slow part of Agg)."""
        with rc_context(FIGURE_STYLE):  # tick labels are made while drawing: in the style's sizes
            self.canvas.draw()
        self._frame = self.canvas.copy_from_bbox(self.figure.bbox)
        self._overlay = None
        if not self._overlays:
            return
        renderer = self.canvas.get_renderer()
        renderer.clear()  # fully transparent
        for artist in self._overlays:
            artist.draw(renderer)
        layer = np.array(self.canvas.buffer_rgba(), copy=True).reshape(-1, 4)
        drawn = np.flatnonzero(layer[:, 3])  # the pixels the overlays touch (a few in a hundred)
        if drawn.size:
            self._overlay = (drawn, layer[drawn, :3].astype(np.float32),
                             layer[drawn, 3:4].astype(np.float32) / 255.0)
        self.canvas.restore_region(self._frame)

    def _fit_flag(self, largest: float = FLAG_PT, smallest: float = SMALL) -> None:
        """Shrink the flag line's font until it fits between its start and the picture's right edge
        (several notes at once would otherwise run off the picture), down to ``smallest`` (the style's
        floor; a note longer still is cut short with an ellipsis)."""
        self._flag.set_fontsize(largest)
        renderer = self.canvas.get_renderer()
        box = self._flag.get_window_extent(renderer)
        room = self.figure.bbox.x1 - box.x0 - 6  # the rounded box's padding
        if box.width > room > 0:
            self._flag.set_fontsize(max(smallest, largest * room / box.width))
            note = self._flag.get_text()
            while len(note) > 8 and self._flag.get_window_extent(renderer).width > room:
                note = note[:int(len(note) * 0.95)].rstrip("; ,")
                self._flag.set_text(note + "…")

    def _composite_overlays(self) -> None:
        if self._overlay is None:
            return
        drawn, colour, alpha = self._overlay
        pixels = np.asarray(self.canvas.buffer_rgba()).reshape(-1, 4)
        pixels[drawn, :3] = (colour * alpha + pixels[drawn, :3] * (1.0 - alpha)).astype(np.uint8)

    @property
    def inputs(self) -> dict[str, Any]:
        """The current values of the input controls."""
        return {name: w.value for name, w in self.controls.items()}

    def _on_change(self, change: Mapping[str, Any]) -> None:
        self.update()

    def update(self) -> None:
        """Recompute, refresh the table, redraw the plot; record model and redraw latency."""
        for name, floor in self._floors.items():
            slider, low = self.controls[name], self.controls[floor].value
            if slider.min != low:
                raised = slider.value < low
                slider.min = low  # clamps the value; a change re-enters update()
                if raised:
                    return
        if not self.drawing:
            return
        start, cpu_start = time.perf_counter(), time.process_time()
        result = self.compute()
        self.table.value = self.table_html(result)
        notes = self.warnings(result)
        modelled, cpu_modelled = time.perf_counter(), time.process_time()
        if self._move(self.inputs, self.mode()):
            self._redraw_frame()
        self.canvas.restore_region(self._frame)
        for artist in self._moving:
            self.axes.draw_artist(artist)
        self._composite_overlays()
        if notes:
            self._flag.set_text("⚠ " + "; ".join(dict.fromkeys(notes)))
            self._fit_flag()
            self.axes.draw_artist(self._flag)
        if self.encoding:
            self.picture.value = encode_png(self.canvas)
        # the picture's description (the html-manager's ImageView breaks on a tooltip, so the book's
        # static-widgets.js writes the alt text from the heading and the flags on the page)
        self.alt = self.title + (": " + "; ".join(notes) if notes else "")
        self.timings.append((modelled - start, time.perf_counter() - modelled))
        self.cpu_timings.append((cpu_modelled - cpu_start, time.process_time() - cpu_modelled))


_STYLE = {"description_width": "185px"}


def _controls(sliders: Sequence[Slider], checkboxes: Mapping[str, bool] | None) -> dict[str, W.ValueWidget]:
    """One slider per ``Slider`` and one checkbox per boolean input, keyed by input name."""
    layout = W.Layout(width="100%", max_width="470px")
    controls: dict[str, W.ValueWidget] = {s.port: s.widget(_STYLE, layout) for s in sliders}
    for port, value in (checkboxes or {}).items():
        controls[port] = W.Checkbox(value=value, description=words(port), tooltip=words(port), style=_STYLE,
                                    indent=False)
    return controls


class Explorer(LiveFigure):
    """A chapter-1 model with its two builds: sliders, a spec-sheet-build toggle, both builds' outputs.

    Parameters
    ----------
    model:
        A registered clustermath model (``cluster_scale`` ...).
    sliders:
        One ``Slider`` per integer input port.
    view:
        ``view(ax)`` returns ``update(inputs, broken)``.
    checkboxes:
        Boolean input ports (``recompute``, the six properties ...) and their defaults.
    floors, title, figsize:
        As for ``LiveFigure``.
    """

    def __init__(
        self,
        model: Callable[..., Any],
        sliders: Sequence[Slider],
        view: Setup,
        *,
        checkboxes: Mapping[str, bool] | None = None,
        floors: Mapping[str, str] | None = None,
        title: str = "",
        figsize: tuple[float, float] = (5.4, 2.9),
    ) -> None:
        self.model = model
        self.spec = spec_of(model)
        controls = _controls(sliders, checkboxes)
        self.broken = W.ToggleButton(
            value=False,
            description=f"plot the {BROKEN_BUILD}",
            tooltip="The spec-sheet build takes the specification sheet at its word.",
            layout=W.Layout(width="100%", max_width="470px"),
        )
        super().__init__(controls, view, extras=[self.broken], floors=floors, title=title,
                         figsize=figsize)

    def __repr__(self) -> str:
        return f"Explorer({self.spec.name})"

    def results(self) -> tuple[Any, Any]:
        """Model outputs for the current inputs: (correct build, broken build)."""
        inputs = self.inputs
        flag = self.spec.broken_flag
        return self.model(**inputs, **{flag: False}), self.model(**inputs, **{flag: True})

    compute = results

    def mode(self) -> bool:
        return bool(self.broken.value)

    def warnings(self, result: tuple[Any, Any]) -> list[str]:
        """The flags of the build on the picture (the table under each row says which value and why).

        Values computed from a saturated output share one short note with it, so the
        line over the picture stays within the picture's width."""
        shown = result[1] if self.broken.value else result[0]
        notes, ceiling = flags(shown), saturated(shown)
        if any(ceiling.get(name) for name in notes):
            # keep the notes that are not about the ceiling (a share over 100% ...), as flags() words them
            rest = [note for name, note in notes.items()
                    if name not in ceiling or (not ceiling[name] and name in OVER)]
            return [SATURATED_AND_DERIVED, *rest]
        return list(notes.values())

    def table_html(self, result: tuple[Any, Any]) -> str:
        """Both builds' outputs in words; rows where they differ in the flag colour, flagged rows shaded."""
        correct, broken = result
        bad_correct, bad_broken = flags(correct), flags(broken)
        names = [f.name for f in fields(correct)]
        rows, flagged, differ = [], {}, []
        for i, name in enumerate(names):
            a, b = getattr(correct, name), getattr(broken, name)
            rows.append((words(name), _cell(a), _cell(b)))
            if a != b:
                differ.append(i)
            notes = [f"{build}: {bad[name]}" for build, bad in (("correct", bad_correct), (BROKEN_BUILD, bad_broken))
                     if name in bad]
            if notes:
                flagged[i] = "; ".join(notes)
        chosen = 2 if self.broken.value else 1
        return table(("output", "correct build", BROKEN_BUILD), rows, flagged=flagged, chosen=chosen, differ=differ)

    def report(self) -> str:
        """The current case, both builds, as plain text."""
        correct, broken = self.results()
        args = ", ".join(f"{k}={v!r}" for k, v in self.inputs.items())
        lines = [f"{self.spec.name}({args})", f"{'output':<24}{'correct':>12}{'spec sheet':>12}"]
        for f in fields(correct):
            lines.append(
                f"{f.name:<24}{fmt_value(getattr(correct, f.name)):>12}{fmt_value(getattr(broken, f.name)):>12}"
            )
        return "\n".join(lines)


class ModelView(LiveFigure):
    """Any function of keyword arguments that returns a dataclass: sliders in, its fields out.

    For the real-valued models of later chapters, which have no broken
    build. ``formats`` maps an output field to a format spec, or to a
    function from the value to its text (default: ``fmt_value``); ``hidden``
    lists fields left out of the table. Row labels come from
    ``clustermath.labels.WORDS``.
    """

    def __init__(
        self,
        model: Callable[..., Any],
        sliders: Sequence[Slider],
        view: Setup,
        *,
        checkboxes: Mapping[str, bool] | None = None,
        fixed: Mapping[str, Any] | None = None,
        formats: Mapping[str, str | Callable[[Any], str]] | None = None,
        hidden: Sequence[str] = (),
        floors: Mapping[str, str] | None = None,
        title: str = "",
        figsize: tuple[float, float] = (5.4, 2.9),
    ) -> None:
        self.model = model
        self.fixed = dict(fixed or {})
        self.formats = dict(formats or {})
        self.hidden = set(hidden)
        super().__init__(_controls(sliders, checkboxes), view, floors=floors, title=title, figsize=figsize)

    def __repr__(self) -> str:
        return f"ModelView({self.model.__name__})"

    @property
    def arguments(self) -> dict[str, Any]:
        """The fixed arguments and the controls' current values."""
        return {**self.fixed, **self.inputs}

    def compute(self) -> Any:
        return self.model(**self.arguments)

    def warnings(self, result: Any) -> list[str]:
        return [note for name, note in flags(result).items() if name not in self.hidden]

    def _cell(self, name: str, value: Any) -> str:
        spec = self.formats.get(name)
        if spec is None:
            return fmt_value(value)
        return spec(value) if callable(spec) else format(value, spec)

    def _rows(self, result: Any) -> list[tuple[str, str]]:
        return [(f.name, self._cell(f.name, getattr(result, f.name)))
                for f in fields(result) if f.name not in self.hidden]

    def table_html(self, result: Any) -> str:
        bad = flags(result)
        rows = self._rows(result)
        flagged = {i: bad[k] for i, (k, _) in enumerate(rows) if k in bad}
        return table(("output", "value"), [(words(k), v) for k, v in rows], flagged=flagged)

    def report(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.arguments.items())
        rows = self._rows(self.compute())
        width = max((len(k) for k, _ in rows), default=0) + 2
        return "\n".join([f"{self.model.__name__}({args})"] + [f"{k:<{width}}{v:>14}" for k, v in rows])


def still(view: Setup, inputs: Mapping[str, Any], broken: bool = False, *,
          figsize: tuple[float, float] = (5.4, 2.9), ax: Axes | None = None) -> Figure:
    """Draw a view once, as an ordinary static figure (for the book's figures and tests)."""
    if ax is None:
        figure = Figure(figsize=figsize)
        ax = figure.add_subplot()
    update = view(ax)
    update(inputs, broken)
    for artist in ax.get_children():
        if artist.get_animated():
            artist.set_animated(False)
    if ax.get_title() and any(t.get_text() and t.get_position()[1] > 1 for t in ax.texts):
        ax.set_title(ax.get_title(), pad=18)  # the status line sits where the title would
    return ax.figure  # type: ignore[return-value]
