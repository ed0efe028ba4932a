"""Frames: what an explorer shows for every state a reader can reach, written for the static site.

The published book runs no kernel. When the book is built, every explorer that
is displayed writes its *frames*: for each value each control offers (every
slider step, every option, both states of a toggle), moved one control at a
time from the defaults, the table and the picture the explorer itself shows
(or, where every combination of the controls makes at most ``GRID_LIMIT``
frames, the whole grid). ``book/static/static-widgets.js`` swaps them in when a
reader moves a control on the static page. There is one drawing code path: the
frames are read from the explorer's own ``table`` and ``picture`` widgets after
its own controls were moved, exactly as a reader's key press moves them in a
live kernel.

Switched on by the environment: when ``CLUSTERMATH_FRAMES_DIR`` names a folder
(``book/_ext/static_frames.py`` sets it per notebook while the book builds),
displaying an explorer writes ``<folder>/<key>/index.js`` and its pictures, and
adds the classes the page's script finds it by. Anywhere else (JupyterLab,
nbval, Voila) displaying an explorer does nothing more than before.

What is written, per explorer (``key`` = its order among the notebook's
explorers and its title, so it is the same in every build):

* ``index.js``: ``__cmFrames("<key>", {...})``, loaded as a script so pages
  opened from ``file://`` work too. It lists the controls (kind, label,
  values, default), the frames by the state the reader asks for (``"i,j,k"``:
  each control's value index), each frame's table (as ids into a shared list
  of tag and text tokens; joined back they are the table's HTML exactly) and
  its picture file, and a fingerprint of the default state the page must show
  (its table and a hash of its picture) so a stale set of frames is refused.
* Pictures as *overlays* on the default picture: the pixels that differ from
  it, opaque, the rest transparent; the page draws the default picture and
  the overlay into a canvas of the picture's natural size, which restores the
  frame exactly, and shows that one image (so the browser scales the frame
  itself at any pixel ratio). Each is stored
  as lossless WebP or PNG, whichever is smaller, named by a hash of its bytes
  (identical frames share one file); a frame whose picture equals the default
  has none.

Frames per run: an explorer whose ``frames_by`` names one of its controls (chapter 6's run picker)
gets its frames per value of that control, each set one control at a time from *that* value's
defaults (the options the explorer offers there, e.g. a run's own micro-batches), with each slider
on a coarse grid of about ``RUN_STEPS`` values (a stride anchored at the default), so a
chosen run stays chosen while another control moves. The index then says, per value of that control
(``by``): the defaults, the grid of each slider and the option labels of each control whose options
it changes; the page snaps a slider to the grid (``book/static/static-frames.js``) and
``book/_ext/static_frames.py`` packs each value's frames (tables and pictures) into one script.

Controls understood: ``IntSlider``, ``FloatSlider``, ``SelectionSlider``,
``Dropdown``, ``Checkbox``, ``ToggleButton``; a ``Button`` (a preset) is
pressed once from the defaults and its resulting frame recorded. An explorer
with another kind of control is not framed (the page keeps it still, with the
note on how to go live).
"""
from __future__ import annotations

import contextlib
import hashlib
import html
import io
import itertools
import json
import os
import pickle
import re
import sys
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import ipywidgets as W
import numpy as np
from PIL import Image as PILImage

from .base import picture_pixels

__all__ = ["ENV", "GRID_LIMIT", "Control", "Frame", "controls_of", "frame_states", "key_of", "overlay",
           "publish", "write_frames", "encode", "table_text"]

ENV = "CLUSTERMATH_FRAMES_DIR"
"""The environment variable naming the folder a notebook's frames are written to."""
GRID_LIMIT = 64
"""Carry every combination of the controls when there are at most this many."""
RUN_STEPS = 6
"""Frames per run: about this many values of each slider (five equal steps over its range): 132 runs
of chapter 6 make about 8,000 frames (12,300 and 7 MB gzipped at 11)."""
FORMAT_VERSION = 1

_KINDS: tuple[tuple[type, str], ...] = (
    (W.SelectionSlider, "selection"), (W.Dropdown, "select"), (W.IntSlider, "slider"),
    (W.FloatSlider, "slider"), (W.Checkbox, "checkbox"), (W.ToggleButton, "toggle"))


class NotFramed(Exception):
    """The explorer has a control the static page cannot move."""


@dataclass
class Control:
    """One control of an explorer: its widget, what kind of element the page shows, the values it offers.

    ``values`` are those the control offers at the defaults, which is what the static page keeps (its
    widget state is the default's). Where another control changes this one's options (chapter 6's run
    picker offers each run's own micro-batches), the control is *detached* while they differ: its
    index means nothing on the page, and a frame gives the words its readout shows instead."""

    widget: W.ValueWidget
    kind: str
    values: list[Any]
    default: int
    labels: tuple[str, ...] = ()
    disabled: bool = False
    _array: np.ndarray | None = field(default=None, repr=False, compare=False)

    @property
    def label(self) -> str:
        return str(getattr(self.widget, "description", "") or "")

    def attached(self) -> bool:
        """Whether the control offers what it offered at the defaults (and shows a value among them)."""
        w = self.widget
        if self.kind in ("selection", "select"):
            return tuple(w._options_labels) == self.labels
        if self.kind == "slider":
            step = abs(self.values[1] - self.values[0]) if len(self.values) > 1 else 1.0
            return self.values[0] - step / 2 <= w.value <= self.values[-1] + step / 2
        return True

    def index(self) -> int:
        """The index of the control's current value among ``values`` (-1 while detached)."""
        w = self.widget
        if not self.attached():
            return -1
        if self.kind in ("selection", "select"):
            return int(w.index)
        if self.kind in ("checkbox", "toggle"):
            return int(bool(w.value))
        if self._array is None:
            self._array = np.asarray(self.values, dtype=float)
        return int(np.abs(self._array - w.value).argmin())

    def readout(self) -> str:
        """What the control's readout says now (for a detached control's frame)."""
        w = self.widget
        if self.kind in ("selection", "select"):
            return str(w.label)
        if self.kind in ("checkbox", "toggle"):
            return "on" if w.value else "off"
        try:
            return format(w.value, getattr(w, "readout_format", "") or "")
        except (TypeError, ValueError):
            return str(w.value)

    def set(self, k: int) -> None:
        """Move the control to its ``k``-th value, as a reader would."""
        w = self.widget
        if self.kind in ("selection", "select"):
            w.index = k
        else:
            w.value = self.values[k]

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "label": self.label, "default": self.default,
                               "count": len(self.values)}
        if self.kind == "slider":
            out["values"] = self.values
        if self.kind == "selection":  # the page's option labels: a detached control's handle goes to its words
            out["labels"] = list(self.labels)
        if self.disabled:
            out["disabled"] = True
        return out


def _kind(widget: W.Widget) -> str | None:
    for cls, name in _KINDS:
        if isinstance(widget, cls):
            return name
    return None


def _values(widget: W.ValueWidget, kind: str) -> list[Any]:
    if kind in ("selection", "select"):
        return list(range(len(widget.options)))
    if kind in ("checkbox", "toggle"):
        return [False, True]
    low, high, step = widget.min, widget.max, widget.step
    count = int(np.floor((high - low) / step + 1e-9)) + 1
    if isinstance(widget, W.IntSlider):
        return [int(low + k * step) for k in range(count)]
    return [round(float(low + k * step), 12) for k in range(count)]


def _walk(widget: W.Widget) -> Iterator[W.Widget]:
    yield widget
    for child in getattr(widget, "children", ()) or ():
        yield from _walk(child)


def controls_of(explorer: W.Widget) -> tuple[list[Control], list[W.Button]]:
    """The explorer's controls and buttons, in the order the page shows them."""
    controls, buttons = [], []
    for widget in _walk(explorer):
        if isinstance(widget, W.Button):
            buttons.append(widget)
            continue
        kind = _kind(widget)
        if kind is None:
            if isinstance(widget, W.ValueWidget) and not isinstance(widget, (W.HTML, W.Image, W.Label)):
                raise NotFramed(f"{type(widget).__name__} {getattr(widget, 'description', '')!r}")
            continue
        values = _values(widget, kind)
        labels = tuple(widget._options_labels) if kind in ("selection", "select") else ()
        control = Control(widget, kind, values, 0, labels, bool(getattr(widget, "disabled", False)))
        control.default = control.index()
        controls.append(control)
    return controls, buttons


def key_of(state: Sequence[int]) -> str:
    """A state as the page names it: each control's value index, comma-separated."""
    return ",".join(str(k) for k in state)


def frame_states(controls: Sequence[Control], grid_limit: int = GRID_LIMIT) -> tuple[bool, list[tuple[int, ...]]]:
    """The states to compute: (whole grid?, states), the defaults first.

    Every combination when there are at most ``grid_limit``; otherwise the
    defaults and, for each control in turn, each of its other values with the
    rest at their defaults."""
    defaults = tuple(c.default for c in controls)
    offered = [[c.default] if c.disabled else range(len(c.values)) for c in controls]  # a disabled control stays
    grid = 1
    for values in offered:
        grid *= len(values)
    if grid <= grid_limit:
        return True, [defaults] + [s for s in itertools.product(*offered) if s != defaults]
    states = [defaults]
    for i, values in enumerate(offered):
        for k in values:
            if k != defaults[i]:
                states.append(defaults[:i] + (k,) + defaults[i + 1:])
    return False, states


def coarse(count: int, default: int, steps: int = RUN_STEPS) -> list[int]:
    """The value indices of a slider framed per run: every one when there are at most ``steps``; else
    every ``stride``-th from the default both ways (``stride`` leaves about ``steps`` values over the
    range), and each end not within half a stride of one."""
    if count <= steps:
        return list(range(count))
    stride = -(-(count - 1) // (steps - 1))
    grid = set(range(default % stride, count, stride))
    ends = {k for k in (0, count - 1) if min(abs(k - g) for g in grid) * 2 >= stride}  # not beside a stop
    return sorted(grid | ends)


def run_states(controls: Sequence[Control], by: int, steps: int = RUN_STEPS) -> list[tuple[int, ...]]:
    """One run's states: its defaults, then each other control moved alone over its values (a slider
    over ``coarse``), the control ``by`` held at the run; a switched-off control stays."""
    defaults = tuple(c.default for c in controls)
    states = [defaults]
    for i, c in enumerate(controls):
        if i == by or c.disabled:
            continue
        grid = coarse(len(c.values), c.default, steps) if c.kind == "slider" else range(len(c.values))
        states += [defaults[:i] + (k,) + defaults[i + 1:] for k in grid if k != c.default]
    return states


@dataclass
class Frame:
    """What the explorer showed for one requested state."""

    requested: tuple[int, ...]
    state: tuple[int, ...]
    """Each control's value index (-1: detached, see ``Control``)."""
    table: str
    picture: bytes | np.ndarray | None
    """The picture as PNG bytes, or as RGBA pixels."""
    readouts: dict[int, str] = field(default_factory=dict)
    """The readout of each detached control."""


def _picture(explorer: W.Widget) -> W.Image | None:
    picture = getattr(explorer, "picture", None)
    return picture if isinstance(picture, W.Image) else None


def _reset(controls: Sequence[Control]) -> None:
    """Put every control back at its default (in up to three passes: a floor may hold one up until its
    anchor has moved; a detached control comes back when the control that moved its options does)."""
    for _ in range(3):
        if all(c.index() == c.default for c in controls):
            return
        for c in controls:
            k = c.index()
            if k != -1 and k != c.default:
                c.set(c.default)
    raise RuntimeError("the explorer's controls do not return to their defaults")


def _canvas_pixels(explorer: W.Widget) -> np.ndarray | None:
    """The explorer's canvas (RGBA), where it draws on one and can skip encoding it (``LiveFigure``)."""
    canvas = getattr(explorer, "canvas", None)
    if canvas is None or not hasattr(explorer, "encoding"):
        return None
    return picture_pixels(canvas)


def _snapshot(explorer: W.Widget, controls: Sequence[Control], requested: tuple[int, ...]) -> Frame:
    """What the explorer shows now: its table, and its picture (the canvas's pixels when it is not
    encoding them, else the picture widget's PNG)."""
    picture = _picture(explorer)
    shown: bytes | np.ndarray | None = None
    if picture is not None:
        shown = _canvas_pixels(explorer) if getattr(explorer, "encoding", True) is False else picture.value
    state = tuple(c.index() for c in controls)
    readouts = {i: c.readout() for i, (c, k) in enumerate(zip(controls, state)) if k == -1}
    return Frame(requested, state, explorer.table.value, shown, readouts)


@contextlib.contextmanager
def _raw(explorer: W.Widget) -> Iterator[None]:
    """While frames are computed, the explorer leaves its PNG alone and frames read its canvas instead
    (encoding every frame only to decode it again costs a quarter of the time). Used only where the
    canvas holds exactly the picture's pixels now."""
    picture = _picture(explorer)
    pixels = _canvas_pixels(explorer)
    if picture is None or pixels is None or not np.array_equal(pixels, _rgba(picture.value)):
        yield
        return
    explorer.encoding = False
    try:
        yield
    finally:
        explorer.encoding = True


@contextlib.contextmanager
def _quiet(explorer: W.Widget) -> Iterator[None]:
    """Hold every widget's messages to the front end: only the final (default) state is sent, once."""
    with contextlib.ExitStack() as stack:
        for widget in _walk(explorer):
            stack.enter_context(widget.hold_sync())
        yield


def _goto(controls: Sequence[Control], requested: tuple[int, ...]) -> None:
    """Move the controls to ``requested``, as from the defaults.

    Only the controls that differ are moved (the explorers are functions of their
    controls' values, so the order does not matter), never a detached one (a reader
    moving one control does not touch the controls it retargets); where a control's
    floor held one of them up, the state is reached again from the defaults, as a
    reader moving one control from the defaults would reach it."""
    def move() -> bool:
        """Move the attached controls that differ; whether every attached control is where asked."""
        for c, k in zip(controls, requested):
            now = c.index()
            if now != -1 and now != k:
                c.set(k)
        return all(now in (-1, k) for now, k in ((c.index(), k) for c, k in zip(controls, requested)))

    if not move():
        _reset(controls)
        move()


@contextlib.contextmanager
def _still(explorer: W.Widget) -> Iterator[None]:
    """The explorer neither computes nor draws inside (``LiveFigure.drawing``), and updates once after."""
    if getattr(explorer, "drawing", None) is not True:
        yield
        return
    explorer.drawing = False
    try:
        yield
    finally:
        explorer.drawing = True
        explorer.update()


def _visit(explorer: W.Widget, controls: Sequence[Control], states: Sequence[tuple[int, ...]]) -> Iterator[Frame]:
    for requested in states:
        with _still(explorer):  # one update per frame, however many moves reach it (floors, resets)
            _goto(controls, tuple(requested))
        yield _snapshot(explorer, controls, tuple(requested))


def _press(explorer: W.Widget, controls: Sequence[Control], button: W.Button) -> Frame:
    """Press a button from the defaults: the frame it leads to, named by the state it leaves."""
    _reset(controls)
    button.click()
    frame = _snapshot(explorer, controls, ())
    frame.requested = frame.state
    return frame


def _by(explorer: W.Widget, controls: Sequence[Control]) -> int | None:
    """The index of the control the explorer's frames are computed per value of (``frames_by``), if any."""
    port = getattr(explorer, "frames_by", None)
    if not port:
        return None
    widget = explorer.controls[port]
    return next(i for i, c in enumerate(controls) if c.widget is widget)


def _runs_of(explorer: W.Widget, controls: Sequence[Control], by: int) -> list[list[Control]]:
    """The controls as each value of control ``by`` offers them: its options, its defaults (the control
    ``by`` itself held there, as switched off). Only the options are read: the explorer does not draw."""
    found = []
    with _still(explorer):
        for r in range(len(controls[by].values)):
            _reset(controls)
            controls[by].set(r)
            these, _ = controls_of(explorer)
            these[by].disabled = True
            found.append(these)
        _reset(controls)
    return found


def _describe_run(these: Sequence[Control], page: Sequence[Control], by: int) -> dict[str, Any]:
    """What the page needs of one run: its defaults, each slider's grid, and the option labels of each
    control whose options differ from the page's."""
    out: dict[str, Any] = {"default": key_of(tuple(c.default for c in these)), "grids": {}, "labels": {}}
    for i, (c, p) in enumerate(zip(these, page)):
        if c.kind == "slider" and not c.disabled and len(c.values) > RUN_STEPS:
            out["grids"][str(i)] = coarse(len(c.values), c.default)
        if c.kind == "selection" and c.labels != p.labels:
            out["labels"][str(i)] = list(c.labels)
        if i != by and c.disabled != p.disabled:
            out.setdefault("disabled", {})[str(i)] = c.disabled
    return out


def _visit_runs(explorer: W.Widget, controls: Sequence[Control], per_run: Sequence[Sequence[Control]], by: int,
                states: Sequence[tuple[int, ...]]) -> Iterator[Frame]:
    """``_visit`` over states of several runs: each in its run, its indices those of that run's options."""
    now = -1
    for requested in states:
        r = requested[by]
        these = per_run[r]
        with _still(explorer):
            if r != now:
                _reset(controls)
                controls[by].set(r)
                _reset(these)
                now = r
            _goto(these, tuple(requested))
        yield _snapshot(explorer, these, tuple(requested))


# -- writing ------------------------------------------------------------------------------------------

def _rgba(png: bytes) -> np.ndarray:
    return np.asarray(PILImage.open(io.BytesIO(png)).convert("RGBA"))


def _pixels(rgba: np.ndarray) -> np.ndarray:
    """One 32-bit number per RGBA pixel (a fast comparison)."""
    return np.ascontiguousarray(rgba).view(np.uint32)[..., 0]


def overlay(default: np.ndarray, frame: np.ndarray) -> np.ndarray | None:
    """The frame's pixels that differ from the default, opaque, on a transparent ground (None: no difference).

    Laid over the default picture it gives the frame exactly, provided both are opaque and of one size
    (the caller checks)."""
    found = _overlay_box(default, frame)
    return None if found is None else found[0]


def _overlay_box(default: np.ndarray, frame: np.ndarray) -> tuple[np.ndarray, tuple[int, int, int, int]] | None:
    """``overlay`` and the box that holds every pixel it draws: (top, bottom, left, right), ends excluded."""
    pixels = _pixels(frame)
    differs = _pixels(default) != pixels
    rows = np.flatnonzero(differs.any(axis=1))
    if not rows.size:
        return None
    top, bottom = int(rows[0]), int(rows[-1]) + 1
    cols = np.flatnonzero(differs[top:bottom].any(axis=0))
    # one 32-bit select per pixel: a tenth of the time of a boolean-mask copy of RGBA rows
    layer = np.where(differs, pixels, np.uint32(0)).view(np.uint8).reshape(frame.shape)
    return layer, (top, bottom, int(cols[0]), int(cols[-1]) + 1)


def _digest(layer: np.ndarray, box: tuple[int, int, int, int] | None = None) -> str:
    """A hash of a picture's pixels; of an overlay, only the box holding what it draws (outside it every
    pixel is transparent, 0), with the box and the size: a third of the bytes to hash, on average."""
    if box is None:
        return hashlib.sha1(layer.tobytes()).hexdigest()
    top, bottom, left, right = box
    digest = hashlib.sha1(repr((layer.shape, box)).encode())
    digest.update(np.ascontiguousarray(layer[top:bottom, left:right]).data)
    return digest.hexdigest()


WEBP = {"lossless": True, "method": 2, "quality": 0}
"""The WebP encoder's settings (lossless; for lossless WebP ``quality`` is the effort). On 180 overlays of
chapters 1, 5 and 6 (December 2026): method 1 at effort 50 took 10.3 ms a picture for 432 kB in all; method 2
at effort 0 4.4 ms for 479 kB (11% more bytes, the chapters stay far under their budgets); method 0 8.4 ms for
9.8 MB; PNG at level 6 10.1 ms for 1.46 MB."""


def encode(pixels: np.ndarray, formats: Sequence[str] = ("webp", "png")) -> tuple[str, bytes]:
    """The picture, lossless, in the smallest of ``formats``: (suffix, bytes)."""
    image = PILImage.fromarray(pixels, "RGBA")
    found = []
    for suffix in formats:
        out = io.BytesIO()
        if suffix == "webp":
            image.save(out, format="webp", **WEBP)
        else:
            image.save(out, format="png", compress_level=6)
        found.append((suffix, out.getvalue()))
    return min(found, key=lambda kv: len(kv[1]))


TRIAL = 16
"""Each explorer's first pictures are encoded as both WebP and PNG; PNG is kept trying only if it won one."""


class _Tokens:
    """Tables as lists of ids into one list of tag and text tokens (the tables share nearly all their markup).

    The first table (the default's) is listed whole; a later one with as many tokens is listed as
    ``[-1, position, id, position, id, ...]``: the positions where it differs from the first."""

    SPLIT = re.compile(r"(<[^>]*>)")

    def __init__(self) -> None:
        self.tokens: list[str] = []
        self._ids: dict[str, int] = {}
        self.tables: list[list[int]] = []
        self._tables: dict[str, int] = {}

    def add(self, table: str) -> int:
        if table not in self._tables:
            ids = []
            for token in self.SPLIT.split(table):
                if token == "":
                    continue
                if token not in self._ids:
                    self._ids[token] = len(self.tokens)
                    self.tokens.append(token)
                ids.append(self._ids[token])
            first = self.tables[0] if self.tables else None
            if first is not None and len(first) == len(ids):
                ids = [-1] + [x for i, (a, b) in enumerate(zip(first, ids)) if a != b for x in (i, b)]
            self._tables[table] = len(self.tables)
            self.tables.append(ids)
        return self._tables[table]

    def text(self, number: int) -> str:
        """The table's HTML, joined back from its tokens."""
        ids = self.tables[number]
        if ids and ids[0] == -1:
            whole = list(self.tables[0])
            for i in range(1, len(ids), 2):
                whole[ids[i]] = ids[i + 1]
            ids = whole
        return "".join(self.tokens[i] for i in ids)


def table_text(table: str) -> str:
    """A table's text as a browser's ``textContent`` reads it, without its white space (the staleness check)."""
    return "".join(html.unescape(re.sub(r"<[^>]*>", "", table)).split())


def slug(text: str, limit: int = 40) -> str:
    """The title in lower-case words joined by hyphens, cut after a whole word within ``limit``."""
    words = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    if len(words) > limit:
        cut = words[: limit + 1]
        words = cut[: cut.rfind("-")] if "-" in cut else words[:limit]
    return words or "explorer"


class _Pictures:
    """Writes each frame's picture as an overlay on the default one; returns its file name (None: the default)."""

    def __init__(self, out: Path, default_png: bytes | None) -> None:
        self.out = out
        self.default_png = default_png
        self.base = _rgba(default_png) if default_png is not None else None
        self.opaque = self.base is not None and bool((self.base[..., 3] == 255).all())
        self.trials = [0, 0]  # pictures encoded both ways, and how often PNG was the smaller
        self.written: set[str] = set()
        self.encoded: dict[str, str] = {}  # a hash of an overlay's pixels -> its file

    def file(self, picture: bytes | np.ndarray | None) -> str | None:
        if picture is None or self.base is None:
            return None
        if isinstance(picture, bytes):
            if picture == self.default_png:
                return None
            pixels = _rgba(picture)
        else:
            pixels = picture
        box = None
        if self.opaque and pixels.shape == self.base.shape and (pixels[..., 3] == 255).all():
            found = _overlay_box(self.base, pixels)
            if found is None:
                return None
            (layer, box), prefix = found, ""
        else:  # a picture with transparency, or of another size, cannot be laid over the default: store it whole
            layer, prefix = pixels, "full-"
        seen = _digest(layer, box)
        if seen in self.encoded:  # the same picture again: encoded once
            return self.encoded[seen]
        formats = ("webp", "png") if self.trials[0] < TRIAL or self.trials[1] else ("webp",)
        suffix, data = encode(layer, formats)
        self.trials[0] += 1
        self.trials[1] += suffix == "png"
        name = f"{prefix}{hashlib.sha1(data).hexdigest()[:16]}.{suffix}"
        if name not in self.written:
            (self.out / name).write_bytes(data)
            self.written.add(name)
        self.encoded[seen] = name
        return name


Row = tuple[tuple[int, ...], tuple[int, ...], str, "str | None", dict]
"""A frame as written: requested state, resulting state, table HTML, picture file, detached readouts."""


def jobs() -> int:
    """Processes to compute frames with: ``CLUSTERMATH_FRAMES_JOBS``, else the CPUs this process may use
    (at most 4), on Linux only (elsewhere a forked kernel is not safe); 1 means no extra process."""
    if "CLUSTERMATH_FRAMES_JOBS" in os.environ:
        return max(1, int(os.environ["CLUSTERMATH_FRAMES_JOBS"]))
    if not sys.platform.startswith("linux"):
        return 1
    return max(1, min(4, len(os.sched_getaffinity(0))))


def _in_parallel(work: Callable[[Sequence[tuple[int, ...]]], list[Row]], states: Sequence[tuple[int, ...]],
                 processes: int) -> list[Row]:
    """``work(states)``, split into contiguous runs over ``processes`` forked copies of this process.

    A child holds the same explorer (a copy) with every widget message held back (the caller is
    inside ``_quiet``), computes its run, writes its pictures, sends its rows back through a pipe
    and leaves with ``os._exit``, so it never speaks to the kernel's front end."""
    if processes <= 1 or len(states) < 64:
        return work(states)
    size = -(-len(states) // processes)
    runs = [states[i:i + size] for i in range(0, len(states), size)]
    children = []
    for run in runs[1:]:
        read, write = os.pipe()
        with warnings.catch_warnings():  # Python 3.12+ warns about forking a process with threads
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
        if pid == 0:  # the child: whatever happens, it ends here
            code = 1
            try:
                os.close(read)
                sys.stdout = sys.stderr = open(os.devnull, "w")
                try:
                    payload = pickle.dumps(("ok", work(run)))
                    code = 0
                except BaseException as exc:  # noqa: BLE001 - reported by the parent
                    payload = pickle.dumps(("error", f"{type(exc).__name__}: {exc}"))
                with os.fdopen(write, "wb") as pipe:
                    pipe.write(payload)
            finally:
                os._exit(code)
        os.close(write)
        children.append((pid, read))
    results = []
    try:
        rows = work(runs[0])
    finally:
        for pid, read in children:  # read every pipe to its end, so no child waits on a full one
            with os.fdopen(read, "rb") as pipe:
                data = pipe.read()
            os.waitpid(pid, 0)
            results.append(pickle.loads(data) if data else ("error", "the process computing frames died"))
    for status, found in results:
        if status != "ok":
            raise RuntimeError(f"computing frames in a second process failed: {found}")
        rows += found
    return rows


def _cpu(t: os.times_result) -> float:
    """CPU time of this process and of its children that have finished."""
    return t.user + t.system + t.children_user + t.children_system


def write_frames(explorer: W.Widget, folder: Path, key: str, grid_limit: int = GRID_LIMIT,
                 processes: int | None = None) -> dict[str, Any]:
    """Compute and write the explorer's frames into ``folder/key/``; return the index written."""
    start, clock = time.perf_counter(), os.times()
    controls, buttons = controls_of(explorer)
    by = _by(explorer, controls)
    if by is None:
        grid, states = frame_states(controls, grid_limit)
    else:
        grid, states = False, [tuple(c.default for c in controls)]
    out = folder / key
    out.mkdir(parents=True, exist_ok=True)
    pressed: list[tuple[str, Frame]] = []
    picture = _picture(explorer)
    with _quiet(explorer), _raw(explorer):
        try:
            _reset(controls)
            first = _snapshot(explorer, controls, states[0])
            default_png = picture.value if picture is not None else None
            pictures = _Pictures(out, default_png)

            runs: list[dict[str, Any]] = []
            if by is None:
                def work(run: Sequence[tuple[int, ...]]) -> list[Row]:
                    return [(f.requested, f.state, f.table, pictures.file(f.picture), f.readouts)
                            for f in _visit(explorer, controls, run)]
            else:
                per_run = _runs_of(explorer, controls, by)
                runs = [_describe_run(found, controls, by) for found in per_run]
                states = [states[0]] + [s for found in per_run for s in run_states(found, by, RUN_STEPS)
                                        if s != states[0]]

                def work(run: Sequence[tuple[int, ...]]) -> list[Row]:
                    return [(f.requested, f.state, f.table, pictures.file(f.picture), f.readouts)
                            for f in _visit_runs(explorer, controls, per_run, by, run)]

            rows: list[Row] = [(first.requested, first.state, first.table, pictures.file(first.picture), {})]
            rows += _in_parallel(work, states[1:], jobs() if processes is None else processes)
            for button in buttons:
                pressed.append((button.description, _press(explorer, controls, button)))
        finally:
            _reset(controls)
    tokens = _Tokens()
    frames: dict[str, list[Any]] = {}

    def entry(state: tuple[int, ...], table: str, picture: str | None, requested: tuple[int, ...],
              readouts: dict[int, str]) -> list[Any]:
        """[table, picture] and, where they differ from what was asked, the controls' state, then the
        readouts of detached controls."""
        found: list[Any] = [tokens.add(table), picture]
        if state != requested or readouts:
            found.append(key_of(state))
        if readouts:
            found.append({str(i): text for i, text in readouts.items()})
        return found

    for requested, state, table, picture, readouts in rows:
        frames[key_of(requested)] = entry(state, table, picture, requested, readouts)
    buttons_index = []
    for label, frame in pressed:
        name = key_of(frame.requested)
        frames.setdefault(name, entry(frame.state, frame.table, pictures.file(frame.picture), frame.requested,
                                      frame.readouts))
        buttons_index.append({"label": label, "frame": name})
    files = [p for p in out.iterdir() if p.suffix in (".webp", ".png")]
    index = {
        "version": FORMAT_VERSION,
        "key": key,
        "title": str(getattr(explorer, "title", "") or ""),
        "grid": grid,
        "controls": [c.describe() for c in controls],
        "buttons": buttons_index,
        **({"by": {"control": by, "runs": runs}} if by is not None else {}),
        "default": key_of(states[0]),
        "tokens": tokens.tokens,
        "tables": tokens.tables,
        "frames": frames,
        "check": {
            "table": table_text(explorer.table.value),
            "picture": hashlib.sha256(default_png).hexdigest() if default_png is not None else None,
        },
        "stats": {"frames": len(frames), "files": len(files), "bytes": sum(p.stat().st_size for p in files),
                  "png": sum(1 for p in files if p.suffix == ".png"),
                  "seconds": round(time.perf_counter() - start, 3),
                  "cpu_seconds": round(_cpu(os.times()) - _cpu(clock), 3)},
    }
    text = json.dumps(index, ensure_ascii=False, separators=(",", ":"))
    (out / "index.js").write_text(f"__cmFrames({json.dumps(key)},{text});\n", encoding="utf-8")
    return index


# -- the display hook -----------------------------------------------------------------------------------

_SHOWN: dict[int, str] = {}


def publish(explorer: W.Widget) -> str | None:
    """On a build for the static site (``ENV`` set), write the explorer's frames once and tag its widgets.

    The tags are DOM classes, stored with the notebook's widget state: ``cm-frames-<key>`` on the
    explorer, ``cm-frames-table`` and ``cm-frames-picture`` on its table and picture, and
    ``cm-control-<i>`` / ``cm-button-<j>`` on its controls, which the page's script finds them by. Returns the key, or None when nothing was written."""
    folder = os.environ.get(ENV)
    if not folder:
        return None
    if id(explorer) in _SHOWN:
        return _SHOWN[id(explorer)]
    title = str(getattr(explorer, "title", "") or type(explorer).__name__)
    key = f"{len(_SHOWN) + 1:02d}-{slug(title)}"
    _SHOWN[id(explorer)] = key
    try:
        controls, buttons = controls_of(explorer)
    except NotFramed:
        return None
    if not controls or not isinstance(getattr(explorer, "table", None), W.HTML):
        return None
    write_frames(explorer, Path(folder), key)
    explorer.add_class("cm-frames")
    explorer.add_class(f"cm-frames-{key}")
    explorer.table.add_class("cm-frames-table")
    picture = _picture(explorer)
    if picture is not None:
        picture.add_class("cm-frames-picture")
    for i, c in enumerate(controls):
        c.widget.add_class(f"cm-control-{i}")
    for j, b in enumerate(buttons):
        b.add_class(f"cm-button-{j}")
    return key
