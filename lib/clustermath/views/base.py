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
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from PIL import Image as PILImage

from ..check import fmt_value
from ..labels import words
from ..runner import SPEC_SHEET_BUILD, saturated, spec_of

__all__ = ["Explorer", "Framed", "LiveFigure", "ModelView", "Slider", "encode_png", "flags", "ladder", "prose", "still", "table",
           "BROKEN_BUILD", "CORRECT_COLOUR", "BROKEN_COLOUR", "FLAG_COLOUR", "LIMIT_COLOUR", "OVER"]

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
          text_rows: Sequence[int] = (), nowrap_labels: bool = False) -> str:
    """The book's one table style, as inline HTML (so it holds in JupyterLab and on the static site).

    ``header`` is in words; the first column is a label (left-aligned), the
    others numbers (right-aligned, already formatted with thousands
    separators). ``flagged`` maps a row index to a note: the row is shaded and
    the note shown under it. ``chosen`` shades one column's header;
    ``differ`` lists rows printed in the flag colour (the two builds disagree);
    ``text`` lists further columns of words and ``text_rows`` rows whose every cell is words (a
    row of a numbers' column that holds a list in words): left-aligned, allowed to wrap, where a
    number's cell is right-aligned, tabular and kept on one line;
    ``nowrap_labels`` keeps each row's label on one line (identifiers with hyphens).
    """
    flagged = dict(flagged or {})
    words_at = {0, *text}
    head = "".join(
        f"<th scope='col' style='{_PAD if i == 0 else _TEXT if i in words_at else _NUM};border-bottom:1px solid #888;"
        f"{'background:rgba(31,95,168,0.14);' if i == chosen else ''}'>{html.escape(h)}</th>"
        for i, h in enumerate(header))
    body = []
    for r, row in enumerate(rows):
        shade = "background:#fff3cd;color:#1a1a1a;" if r in flagged else ""
        colour = f"color:{FLAG_COLOUR};" if r in differ and r not in flagged else ""
        cells = "".join(
            (f"<th scope='row' style='{_PAD};font-weight:normal;text-align:left"
             f"{';white-space:nowrap' if nowrap_labels else ''}'>{html.escape(c)}</th>" if i == 0
             else f"<td style='{_TEXT if i in words_at or r in text_rows else _NUM}'>{html.escape(c)}</td>")
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


class Slider:
    """A slider specification: port name, range, step, default and an optional label.

    Integer bounds give an ``IntSlider``; any float among them gives a
    ``FloatSlider`` (with ``readout_format``, default ``.3g``). ``log=True``
    gives a ``SelectionSlider`` over ``ladder(low, high, value)``: stops
    evenly spaced on a log scale, for ranges that span decades. ``choices``
    names the stops of an integer port that picks one of several things (a
    design, a pattern): the slider then reads out the name, not the index.
    The label defaults to the port in words, with its unit
    (``clustermath.labels``).
    """

    def __init__(self, port: str, low: float, high: float, value: float, step: float = 1,
                 label: str | None = None, readout_format: str = ".3g", log: bool = False,
                 choices: Sequence[str] | None = None):
        if choices is not None and (len(choices) != high - low + 1 or step != 1 or log):
            raise ValueError(f"choices must name each of the stops {low}..{high} of slider {port!r} "
                             f"(step 1, not log), got {len(choices)} names")
        if not low <= value <= high:
            raise ValueError(f"value must be in {low}..{high} for slider {port!r}, got {value}")
        steps = (value - low) / step if step > 0 else -1.0
        if not log and (step <= 0 or abs(steps - round(steps)) > 1e-9):
            raise ValueError(f"step must be > 0 and put {value} on the slider's grid "
                             f"{low}, {low + step}, ... for slider {port!r}, got step {step}")
        self.port, self.low, self.high, self.value, self.step = port, low, high, value, step
        self.label = label or words(port)
        self.readout_format = readout_format
        self.log = log
        self.choices = tuple(choices) if choices is not None else None

    @property
    def is_float(self) -> bool:
        return any(isinstance(v, float) for v in (self.low, self.high, self.value, self.step))

    def widget(self, style: Mapping[str, str], layout: W.Layout) -> W.ValueWidget:
        """The ipywidgets slider for this specification."""
        if self.choices is not None:
            options = [(name, int(self.low) + i) for i, name in enumerate(self.choices)]
            return W.SelectionSlider(options=options, value=self.value, description=self.label,
                                     tooltip=self.label, continuous_update=True, style=style, layout=layout)
        if self.log:
            stops = ladder(self.low, self.high, self.value, integer=not self.is_float)
            options = [(format(v, ",") if isinstance(v, int) else format(v, self.readout_format), v) for v in stops]
            return W.SelectionSlider(options=options, value=self.value, description=self.label,
                                     tooltip=self.label, continuous_update=True, style=style, layout=layout)
        common = dict(value=self.value, min=self.low, max=self.high, step=self.step, description=self.label,
                      tooltip=self.label, continuous_update=True, style=style, layout=layout)
        if self.is_float:
            return W.FloatSlider(readout_format=self.readout_format, **common)
        return W.IntSlider(**common)


def encode_png(canvas: FigureCanvasAgg) -> bytes:
    """Encode what an Agg canvas holds now as PNG, with light compression (fast)."""
    width, height = canvas.get_width_height()
    image = PILImage.frombuffer("RGBA", (width, height), canvas.buffer_rgba(), "raw", "RGBA", 0, 1)
    out = io.BytesIO()
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
    """

    encoding = True

    def __init__(
        self,
        controls: Mapping[str, W.ValueWidget],
        view: Setup,
        *,
        extras: Sequence[W.ValueWidget] = (),
        floors: Mapping[str, str] | None = None,
        title: str = "",
        figsize: tuple[float, float] = (5.4, 2.9),
        dpi: int = 80,
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
        self.figure = Figure(figsize=figsize, dpi=dpi)
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
                                    fontsize=8.5, color="white", animated=True, clip_on=False,
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
        self.canvas.draw()
        self._frame = self.canvas.copy_from_bbox(self.figure.bbox)
        self._overlay = None
        if not self._overlays:
            return
        renderer = self.canvas.get_renderer()
        renderer.clear()  # fully transparent
        for artist in self._overlays:
            artist.draw(renderer)
        layer = np.array(self.canvas.buffer_rgba(), copy=True)
        alpha = layer[..., 3:4]
        rows = np.flatnonzero(alpha.any(axis=(1, 2)))
        if rows.size:
            top, bottom = int(rows[0]), int(rows[-1]) + 1
            self._overlay = (top, bottom, layer[top:bottom, :, :3].astype(np.float32),
                             alpha[top:bottom].astype(np.float32) / 255.0)
        self.canvas.restore_region(self._frame)

    def _fit_flag(self, largest: float = 8.5, smallest: float = 6.0) -> None:
        """Shrink the flag line's font until it fits between its start and the picture's right edge
        (several notes at once would otherwise run off the picture), down to ``smallest``."""
        self._flag.set_fontsize(largest)
        renderer = self.canvas.get_renderer()
        box = self._flag.get_window_extent(renderer)
        room = self.figure.bbox.x1 - box.x0 - 6  # the rounded box's padding
        if box.width > room > 0:
            self._flag.set_fontsize(max(smallest, largest * room / box.width))

    def _composite_overlays(self) -> None:
        if self._overlay is None:
            return
        top, bottom, colour, alpha = self._overlay
        buffer = np.asarray(self.canvas.buffer_rgba())
        band = buffer[top:bottom, :, :3]
        band[...] = (colour * alpha + band * (1.0 - alpha)).astype(np.uint8)

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
    floors, title, figsize, dpi:
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
        dpi: int = 80,
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
                         figsize=figsize, dpi=dpi)

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
        dpi: int = 80,
    ) -> None:
        self.model = model
        self.fixed = dict(fixed or {})
        self.formats = dict(formats or {})
        self.hidden = set(hidden)
        super().__init__(_controls(sliders, checkboxes), view, floors=floors, title=title, figsize=figsize, dpi=dpi)

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
