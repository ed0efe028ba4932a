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
* ``timings`` records model and redraw latency of every update, which
  ``tools/bench_widgets.py`` reports.
"""
from __future__ import annotations

import html
import io
import time
from dataclasses import fields
from typing import Any, Callable, Mapping, Sequence

import ipywidgets as W
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from PIL import Image as PILImage

from ..check import fmt_value
from ..runner import spec_of

__all__ = ["Explorer", "LiveFigure", "ModelView", "Slider", "encode_png", "still", "CORRECT_COLOUR", "BROKEN_COLOUR", "LIMIT_COLOUR"]

CORRECT_COLOUR = "#1f5fa8"
"""Colour of the correct build in every figure of the book."""
BROKEN_COLOUR = "#d9822b"
"""Colour of the broken (specification-sheet) build."""
LIMIT_COLOUR = "#b22222"
"""Colour of a threshold line."""

Updater = Callable[[Mapping[str, Any], bool], "bool | None"]
Setup = Callable[[Axes], Updater]
"""A view: ``setup(ax)`` draws the frame and returns ``update(inputs, broken)``.

``update`` returns True when it changed the frame itself (axis limits), so
the explorer redraws the frame before blitting."""


class Slider:
    """A slider specification: port name, range, step, default and an optional label.

    Integer bounds give an ``IntSlider``; any float among them gives a
    ``FloatSlider`` (with ``readout_format``, default ``.3g``).
    """

    def __init__(self, port: str, low: float, high: float, value: float, step: float = 1,
                 label: str | None = None, readout_format: str = ".3g"):
        if not low <= value <= high:
            raise ValueError(f"value must be in {low}..{high} for slider {port!r}, got {value}")
        steps = (value - low) / step if step > 0 else -1.0
        if step <= 0 or abs(steps - round(steps)) > 1e-9:
            raise ValueError(f"step must be > 0 and put {value} on the slider's grid "
                             f"{low}, {low + step}, ... for slider {port!r}, got step {step}")
        self.port, self.low, self.high, self.value, self.step = port, low, high, value, step
        self.label = label or port
        self.readout_format = readout_format

    @property
    def is_float(self) -> bool:
        return any(isinstance(v, float) for v in (self.low, self.high, self.value, self.step))

    def widget(self, style: Mapping[str, str], layout: W.Layout) -> W.ValueWidget:
        """The ipywidgets slider for this specification."""
        common = dict(value=self.value, min=self.low, max=self.high, step=self.step, description=self.label,
                      continuous_update=True, style=style, layout=layout)
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
    return html.escape(fmt_value(value))


class LiveFigure(W.VBox):
    """Controls → computation → (HTML table, blitted plot): the base of every explorer.

    A subclass says what to compute (``compute``), how to tabulate it
    (``table_html``), what to print for a compared notebook cell
    (``report``) and what to pass to the view besides the inputs (``mode``).

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
    """

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
        self.table = W.HTML()
        self.picture = W.Image(format="png", layout=W.Layout(align_self="flex-start"))
        self.figure = Figure(figsize=figsize, dpi=dpi)
        self.canvas = FigureCanvasAgg(self.figure)
        self.axes = self.figure.add_subplot()
        self.figure.subplots_adjust(left=0.15, right=0.97, bottom=0.17, top=0.9)
        self._move = view(self.axes)
        self._moving = [a for a in self.axes.get_children() if a.get_animated()]
        self.canvas.draw()
        self._frame = self.canvas.copy_from_bbox(self.figure.bbox)
        for widget in (*self.controls.values(), *extras):
            widget.observe(self._on_change, names="value")
        heading = W.HTML(f"<b>{html.escape(title)}</b>") if title else W.HTML()
        left = W.VBox([*self.controls.values(), *extras, self.table])
        super().__init__([heading, W.HBox([left, self.picture])])
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

    # -- shared machinery -------------------------------------------------------------
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
        start = time.perf_counter()
        self.table.value = self.table_html(self.compute())
        modelled = time.perf_counter()
        if self._move(self.inputs, self.mode()):
            self.canvas.draw()
            self._frame = self.canvas.copy_from_bbox(self.figure.bbox)
        self.canvas.restore_region(self._frame)
        for artist in self._moving:
            self.axes.draw_artist(artist)
        self.picture.value = encode_png(self.canvas)
        self.timings.append((modelled - start, time.perf_counter() - modelled))


_STYLE = {"description_width": "140px"}
_LAYOUT_WIDTH = "380px"


def _controls(sliders: Sequence[Slider], checkboxes: Mapping[str, bool] | None) -> dict[str, W.ValueWidget]:
    """One slider per ``Slider`` and one checkbox per boolean input, keyed by input name."""
    layout = W.Layout(width=_LAYOUT_WIDTH)
    controls: dict[str, W.ValueWidget] = {s.port: s.widget(_STYLE, layout) for s in sliders}
    for port, value in (checkboxes or {}).items():
        controls[port] = W.Checkbox(value=value, description=port, style=_STYLE, indent=False)
    return controls


class Explorer(LiveFigure):
    """A chapter-1 model with its two builds: sliders, a broken-build toggle, both builds' outputs.

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
            description=f"plot the broken build ({self.spec.broken_flag})",
            tooltip="The broken build is what a specification sheet says.",
            layout=W.Layout(width=_LAYOUT_WIDTH),
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

    def table_html(self, result: tuple[Any, Any]) -> str:
        """Both builds' outputs as a small HTML table; rows where they differ are red."""
        correct, broken = result
        chosen = 2 if self.broken.value else 1
        head = ("output", "correct", "spec sheet")
        cells = "".join(
            f"<th style='padding:2px 8px;{'background:#eef3fa' if i == chosen else ''}'>{h}</th>"
            for i, h in enumerate(head)
        )
        rows = [f"<tr>{cells}</tr>"]
        for f in fields(correct):
            a, b = getattr(correct, f.name), getattr(broken, f.name)
            mark = " style='color:#b22222'" if a != b else ""
            rows.append(
                f"<tr{mark}><td style='padding:2px 8px'><code>{f.name}</code></td>"
                f"<td style='padding:2px 8px;text-align:right'>{_cell(a)}</td>"
                f"<td style='padding:2px 8px;text-align:right'>{_cell(b)}</td></tr>"
            )
        return "<table style='border-collapse:collapse;font-size:90%'>" + "".join(rows) + "</table>"

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
    build. ``formats`` maps an output field to a format spec (default:
    ``fmt_value``); ``hidden`` lists fields left out of the table.
    """

    def __init__(
        self,
        model: Callable[..., Any],
        sliders: Sequence[Slider],
        view: Setup,
        *,
        checkboxes: Mapping[str, bool] | None = None,
        fixed: Mapping[str, Any] | None = None,
        formats: Mapping[str, str] | None = None,
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

    def _rows(self, result: Any) -> list[tuple[str, str]]:
        return [(f.name, format(getattr(result, f.name), self.formats[f.name]) if f.name in self.formats
                 else fmt_value(getattr(result, f.name)))
                for f in fields(result) if f.name not in self.hidden]

    def table_html(self, result: Any) -> str:
        rows = "".join(f"<tr><td style='padding:2px 8px'><code>{html.escape(k)}</code></td>"
                       f"<td style='padding:2px 8px;text-align:right'>{html.escape(v)}</td></tr>"
                       for k, v in self._rows(result))
        return f"<table style='border-collapse:collapse;font-size:90%'>{rows}</table>"

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
    return ax.figure  # type: ignore[return-value]
