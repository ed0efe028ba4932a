"""Frames for the static site (clustermath.views.frames): what the published page swaps in equals
what the live explorer shows.

* Every explorer, on a sample of its states (the defaults; for each control its first and last
  value and one step from the default; every fifth state of a small grid): the frame written
  to disk, read back as the page reads it (the table's tokens joined, the overlay laid over the
  default picture), equals a fresh explorer moved to the same state: the table's HTML exactly,
  the picture with no pixel off by more than a rounding step.
* The states: every value of every control (a log slider's every stop), one control at a time
  from the defaults, or the whole grid where it is small.
* Flags (saturated, over 100%) reach the frames: they are the explorer's own table and picture.
* The display hook writes nothing outside the book's build, and tags the widgets inside it.

The full sweep of every explorer runs in the book's build (and its browser checks); here a
sample keeps the unit stage fast.
"""
from __future__ import annotations

import io
import json
from pathlib import Path

import ipywidgets as W
import numpy as np
import pytest
from PIL import Image

from clustermath.views import frames as F
from test_views_truth import FACTORIES

REPO = Path(__file__).resolve().parent.parent


def read_index(folder: Path) -> dict:
    text = (folder / "index.js").read_text(encoding="utf-8")
    assert text.startswith("__cmFrames(") and text.rstrip().endswith(");")
    return json.loads(text[text.index(",") + 1: text.rindex(")")])


def table_html(index: dict, number: int) -> str:
    """As static-frames.js joins it."""
    ids = index["tables"][number]
    if ids and ids[0] == -1:
        whole = list(index["tables"][0])
        for i in range(1, len(ids), 2):
            whole[ids[i]] = ids[i + 1]
        ids = whole
    return "".join(index["tokens"][i] for i in ids)


def rgba(data: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(data)).convert("RGBA")).astype(int)


def picture_of(folder: Path, index: dict, entry: list, default_png: bytes) -> np.ndarray:
    """As the page shows it: the default picture, the overlay laid over it (or a whole picture)."""
    base = rgba(default_png)
    if entry[1] is None:
        return base
    layer = np.asarray(Image.open(folder / entry[1]).convert("RGBA")).astype(int)
    if entry[1].startswith("full-"):
        return layer
    alpha = layer[..., 3:4] / 255.0
    return np.rint(layer * alpha + base * (1 - alpha)).astype(int)


def sample(controls: list[F.Control]) -> list[tuple[int, ...]]:
    """The defaults; for each control its first and last value and the step after the default (a
    grid: the defaults and every fifth combination)."""
    grid, states = F.frame_states(controls)
    if grid:
        return states[:1] + states[1::5]
    defaults = tuple(c.default for c in controls)
    chosen = [defaults]
    for i, c in enumerate(controls):
        n = len(c.values)
        for k in (0, n - 1, c.default + 1 if c.default + 1 < n else c.default - 1):
            s = defaults[:i] + (k,) + defaults[i + 1:]
            if s not in chosen:
                chosen.append(s)
    return chosen


def move(controls: list[F.Control], state: tuple[int, ...]) -> None:
    """Put every control back at its default, then move each to the state, one after another (a control
    another one retargeted, detached, stays as that one left it)."""
    for _ in range(3):
        for c in controls:
            if c.index() not in (-1, c.default):
                c.set(c.default)
    for c, k in zip(controls, state):
        if c.index() not in (-1, k):
            c.set(k)


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_frames_equal_the_live_explorer(name, tmp_path, monkeypatch):
    e = FACTORIES[name]()
    if getattr(e, "frames_by", None):
        pytest.skip("frames per run: test_frames_per_run_equal_the_live_explorer")
    controls, _ = F.controls_of(e)
    states = sample(controls)
    monkeypatch.setattr(F, "frame_states", lambda controls, limit=F.GRID_LIMIT: (False, states))
    index = F.write_frames(e, tmp_path, "x")
    folder = tmp_path / "x"
    assert read_index(folder) == index
    default_png = getattr(getattr(e, "picture", None), "value", None)
    asked = {F.key_of(s) for s in states}
    assert asked <= set(index["frames"]) and set(index["frames"]) - asked <= {b["frame"] for b in index["buttons"]}
    fresh = FACTORIES[name]()  # another explorer, visiting the states in the other order
    fresh_controls, _ = F.controls_of(fresh)
    for key, entry in reversed(index["frames"].items()):
        requested = tuple(int(k) for k in key.split(","))
        move(fresh_controls, requested)
        state = tuple(c.index() for c in fresh_controls)
        assert F.key_of(state) == (entry[2] if len(entry) > 2 else key), f"{name} {key}: state"
        readouts = {str(i): c.readout() for i, c in enumerate(fresh_controls) if c.index() == -1}
        assert readouts == (entry[3] if len(entry) > 3 else {}), f"{name} {key}: readouts"
        assert table_html(index, entry[0]) == fresh.table.value, f"{name} {key}: table"
        if default_png is None:
            continue
        shown = picture_of(folder, index, entry, default_png)
        truth = rgba(fresh.picture.value)
        assert shown.shape == truth.shape, f"{name} {key}: picture size"
        off = np.abs(shown - truth).max(axis=2)
        assert (off > 2).mean() <= 0.0005 and off.mean() < 0.05, f"{name} {key}: {(off > 2).mean():.4%} pixels differ"


def test_every_value_of_every_control_one_at_a_time():
    e = FACTORIES["reliability:young"]()
    controls, _ = F.controls_of(e)
    grid, states = F.frame_states(controls)
    assert not grid
    assert states[0] == tuple(c.default for c in controls)
    for i, c in enumerate(controls):
        reached = {s[i] for s in states if all(s[j] == c2.default for j, c2 in enumerate(controls) if j != i)}
        assert reached == set(range(len(c.values))), c.label
    assert len(states) == 1 + sum(len(c.values) - 1 for c in controls)
    # a log slider's every stop, not a sample
    gpus = next(c for c in controls if "GPUs" in c.label)
    assert len(gpus.values) == len(gpus.widget.options) > 30


def test_small_grids_are_carried_whole():
    e = FACTORIES["fabric_designs:failures"]()
    controls, _ = F.controls_of(e)
    grid, states = F.frame_states(controls)
    assert grid and len(states) == len(set(states)) == np.prod([len(c.values) for c in controls]) <= F.GRID_LIMIT


def test_the_explorer_toggle_and_buttons_are_controls():
    e = FACTORIES["peak:cluster_scale"]()
    controls, buttons = F.controls_of(e)
    assert [c.kind for c in controls][-1] == "toggle" and controls[-1].widget is e.broken
    ring = FACTORIES["scaleup:ring_builder"]()
    _, buttons = F.controls_of(ring)
    assert buttons and all(isinstance(b, W.Button) for b in buttons)


def test_linear_slider_values_are_its_steps():
    s = W.FloatSlider(value=0.9, min=0.5, max=1.0, step=0.01)
    c = F.Control(s, "slider", F._values(s, "slider"), 0)
    assert len(c.values) == 51 and c.values[0] == 0.5 and c.values[-1] == 1.0
    assert F._values(W.IntSlider(value=4, min=0, max=10, step=3), "slider") == [0, 3, 6, 9]


def test_presets_reach_their_frames(tmp_path, monkeypatch):
    ring = FACTORIES["scaleup:ring_builder"]()
    controls, buttons = F.controls_of(ring)
    defaults = tuple(c.default for c in controls)
    monkeypatch.setattr(F, "frame_states", lambda controls, limit=F.GRID_LIMIT: (False, [defaults]))
    index = F.write_frames(ring, tmp_path, "ring")
    assert [b["label"] for b in index["buttons"]] == [b.description for b in buttons]
    for b, spec in zip(buttons, index["buttons"]):
        fresh = FACTORIES["scaleup:ring_builder"]()
        next(x for x in F.controls_of(fresh)[1] if x.description == b.description).click()
        assert table_html(index, index["frames"][spec["frame"]][0]) == fresh.table.value


def test_flags_are_in_the_frames(tmp_path, monkeypatch):
    """A flagged state's frame carries the flag in its table and its picture (the explorer's own)."""
    e = FACTORIES["peak:failure_recovery"]()
    controls, _ = F.controls_of(e)
    nodes = next(i for i, c in enumerate(controls) if c.label.startswith("nodes") or "nodes" in c.label)
    defaults = tuple(c.default for c in controls)
    top = defaults[:nodes] + (len(controls[nodes].values) - 1,) + defaults[nodes + 1:]
    monkeypatch.setattr(F, "frame_states", lambda controls, limit=F.GRID_LIMIT: (False, [defaults, top]))
    index = F.write_frames(e, tmp_path, "f")
    flagged = index["frames"][F.key_of(top)]
    assert "⚠" in table_html(index, flagged[0]) and flagged[1] is not None
    assert "⚠" not in table_html(index, index["frames"][F.key_of(defaults)][0])


def test_frames_leave_the_explorer_at_its_defaults(tmp_path, monkeypatch):
    e = FACTORIES["placement:placement"]()  # a floor ties the domain slider to the TP slider

    def seen():
        return (e.table.value, e.picture.value, {k: (w.value, getattr(w, "min", None)) for k, w in e.controls.items()})

    before = seen()
    controls, _ = F.controls_of(e)
    tp = next(i for i, c in enumerate(controls) if c.widget is e.controls["tp"])
    domain = next(i for i, c in enumerate(controls) if c.widget is e.controls["domain_size"])
    defaults = tuple(c.default for c in controls)
    top_tp = defaults[:tp] + (len(controls[tp].values) - 1,) + defaults[tp + 1:]
    low_domain = defaults[:domain] + (0,) + defaults[domain + 1:]
    monkeypatch.setattr(F, "frame_states", lambda controls, limit=F.GRID_LIMIT:
                        (False, [defaults, top_tp, low_domain]))
    index = F.write_frames(e, tmp_path, "p")
    assert seen() == before
    # TP at 16 holds the domain slider at 16 or more: the frame says where the controls went
    entry = index["frames"][F.key_of(top_tp)]
    assert len(entry) == 3 and entry[2] != F.key_of(top_tp)


def test_publish_does_nothing_outside_the_build(monkeypatch):
    monkeypatch.delenv(F.ENV, raising=False)
    e = FACTORIES["peak:pipeline_bubble"]()
    assert F.publish(e) is None
    assert not [c for c in e._dom_classes if c.startswith("cm-frames")]
    bundle = e._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle


def test_publish_writes_and_tags_inside_the_build(tmp_path, monkeypatch):
    monkeypatch.setenv(F.ENV, str(tmp_path))
    monkeypatch.setattr(F, "_SHOWN", {})
    monkeypatch.setattr(F, "frame_states", lambda controls, limit=F.GRID_LIMIT:
                        (False, [tuple(c.default for c in controls)]))
    first, second = FACTORIES["peak:lab"](), FACTORIES["fabric_designs:failures"]()
    first._repr_mimebundle_()
    second._repr_mimebundle_()
    second._repr_mimebundle_()  # shown twice: written once
    keys = sorted(p.name for p in tmp_path.iterdir())
    assert keys == ["01-labexplorer", "02-one-failure-in-each-design-step-by-step"]
    assert f"cm-frames-{keys[1]}" in second._dom_classes and "cm-frames-table" in second.table._dom_classes
    assert "cm-frames-picture" in second.picture._dom_classes
    controls, _ = F.controls_of(second)
    assert [f"cm-control-{i}" in c.widget._dom_classes for i, c in enumerate(controls)] == [True] * len(controls)


def test_an_explorer_with_a_control_the_page_cannot_move_is_not_framed(tmp_path, monkeypatch):
    monkeypatch.setenv(F.ENV, str(tmp_path))
    monkeypatch.setattr(F, "_SHOWN", {})
    box = W.VBox([W.IntSlider(3, 0, 5), W.Text("free text")])
    box.table = W.HTML("<table class='cm-table'></table>")
    assert F.publish(box) is None and not list(tmp_path.iterdir())


def test_the_build_and_the_page_are_wired():
    config = (REPO / "_config.yml").read_text(encoding="utf-8")
    assert "static_frames: book/_ext" in config
    ext = (REPO / "book" / "_ext" / "static_frames.py").read_text(encoding="utf-8")
    assert f'ENV = "{F.ENV}"' in ext
    page = (REPO / "book" / "static" / "static-widgets.js").read_text(encoding="utf-8")
    engine = (REPO / "book" / "static" / "static-frames.js").read_text(encoding="utf-8")
    assert "static-frames.js" in page and "cm-frames" in page and "__cmFrames" in page
    for needed in ("cm-frames-table", "cm-frames-picture", "cm-control-", "cm-button-", "make lab", "role"):
        assert needed in engine, needed


def test_frames_split_over_processes_are_the_same(tmp_path):
    one = F.write_frames(FACTORIES["peak:pipeline_bubble"](), tmp_path / "one", "x", processes=1)
    two = F.write_frames(FACTORIES["peak:pipeline_bubble"](), tmp_path / "two", "x", processes=2)
    assert len(one["frames"]) >= 64  # enough to be split
    for index in (one, two):
        index.pop("stats")
    assert one == two
    assert sorted(p.name for p in (tmp_path / "one" / "x").iterdir()) == sorted(p.name for p in (tmp_path / "two" / "x").iterdir())


def test_a_failing_process_is_reported():
    states = [(k,) for k in range(100)]

    def work(run):
        if (80,) in run:
            raise ValueError("planted")
        return [(s, s, "", None) for s in run]

    with pytest.raises(RuntimeError, match="planted"):
        F._in_parallel(work, states, 2)

    def fails_here(run):
        if (0,) in run:
            raise KeyError("in the parent")
        return [(s, s, "", None) for s in run]

    with pytest.raises(KeyError):  # the parent's own error, after its children were collected
        F._in_parallel(fails_here, states, 2)
    assert len(F._in_parallel(lambda run: [(s, s, "", None) for s in run], states, 3)) == 100


def test_pictures_are_overlays_unless_they_cannot_be(tmp_path):
    """An opaque picture is stored as the pixels that differ from the default; one with transparency
    whole (a "full-" file); the default itself as no file."""
    def png(pixels):
        out = io.BytesIO()
        Image.fromarray(pixels, "RGBA").save(out, format="png")
        return out.getvalue()

    base = np.full((8, 8, 4), 255, dtype=np.uint8)
    moved = base.copy()
    moved[2, 3] = (10, 20, 30, 255)
    clear = base.copy()
    clear[0, 0, 3] = 0
    pictures = F._Pictures(tmp_path, png(base))
    assert pictures.file(png(base)) is None
    name = pictures.file(png(moved))
    layer = np.asarray(Image.open(tmp_path / name).convert("RGBA"))
    assert (layer[..., 3] > 0).sum() == 1 and tuple(layer[2, 3]) == (10, 20, 30, 255)
    assert pictures.file(png(clear)).startswith("full-")


def test_an_overlay_is_hashed_by_the_box_it_draws_in():
    """Two overlays share a file exactly when their pixels are equal: the digest reads the box that holds
    every drawn pixel, with the box and the picture's size."""
    base = np.full((6, 9, 4), 255, dtype=np.uint8)
    one, two, far = base.copy(), base.copy(), base.copy()
    one[1, 2] = one[4, 6] = (0, 0, 0, 255)
    two[1, 2] = two[4, 6] = (0, 0, 0, 255)
    far[1, 2] = far[4, 7] = (0, 0, 0, 255)  # the same pixels, one of them a column further
    (layer, box), again, moved = F._overlay_box(base, one), F._overlay_box(base, two), F._overlay_box(base, far)
    assert box == (1, 5, 2, 7) and np.array_equal(layer, F.overlay(base, one))
    assert (layer[..., 3] > 0).sum() == 2 and F._overlay_box(base, base) is None and F.overlay(base, base) is None
    assert F._digest(layer, box) == F._digest(*again) != F._digest(*moved)
    shifted = np.zeros((6, 10, 4), dtype=np.uint8)  # the same box of pixels in a wider picture
    shifted[:, :9] = layer
    assert F._digest(shifted, box) != F._digest(layer, box) and F._digest(layer) != F._digest(layer, box)


def test_reading_each_runs_options_draws_nothing(monkeypatch):
    """The run picker's options per run are read with the explorer still (it draws once, after)."""
    e = FACTORIES["validation:published_run"]()
    controls, _ = F.controls_of(e)
    by = F._by(e, controls)
    drawn = []
    real = e.compute
    monkeypatch.setattr(e, "compute", lambda: drawn.append(1) or real())
    before = e.picture.value
    per_run = F._runs_of(e, controls, by)
    assert len(per_run) == len(controls[by].values) and drawn == [1] and e.drawing is True
    assert e.picture.value == before


def test_a_control_another_retargets_is_detached(tmp_path, monkeypatch):
    """Chapter 6's run picker gives each run its own micro-batches: framed one control at a time from
    the page's defaults (not per run), moving it detaches that slider (its index means nothing on the
    page); the frame says what its readout shows instead."""
    e = FACTORIES["validation:published_run"]()
    e.frames_by = None
    controls, _ = F.controls_of(e)
    run = next(i for i, c in enumerate(controls) if c.kind == "select")
    defaults = tuple(c.default for c in controls)
    picked = [defaults[:run] + (k,) + defaults[run + 1:] for k in range(len(controls[run].values)) if k != defaults[run]]
    monkeypatch.setattr(F, "frame_states", lambda controls, limit=F.GRID_LIMIT: (False, [defaults] + picked))
    index = F.write_frames(e, tmp_path, "run")
    detached = [e for key, e in index["frames"].items() if len(e) > 3]
    assert detached, "no run retargets another control"
    for entry in detached:
        state = entry[2].split(",")
        assert {k for k, v in enumerate(state) if v == "-1"} == {int(i) for i in entry[3]}
    assert [c.index() for c in controls] == list(defaults)  # back at the defaults


def test_coarse_grids_hold_the_default_and_span_the_range():
    assert F.coarse(5, 2) == [0, 1, 2, 3, 4]  # few values: every one
    for count, default in ((651, 400), (335, 17), (61, 42), (21, 0), (101, 18), (61, 0), (61, 60)):
        grid = F.coarse(count, default)
        stride = grid[2] - grid[1]
        assert default in grid and grid == sorted(set(grid)), (count, default, grid)
        assert len(grid) <= F.RUN_STEPS + 2 and grid[0] <= stride // 2 and grid[-1] >= count - 1 - stride // 2


def test_frames_per_run_equal_the_live_explorer(tmp_path, monkeypatch):
    """Chapter 6's run explorer is framed per run (``frames_by``): each run's frames start from that run's
    defaults (its own micro-batch and interleaving) with the run held, and, on a sample of runs and
    values, equal a fresh explorer with the run picked and the one control moved."""
    e = FACTORIES["validation:published_run"]()
    controls, _ = F.controls_of(e)
    by = next(i for i, c in enumerate(controls) if c.kind == "select")
    default_run = controls[by].default
    chosen = {0, default_run, len(controls[by].values) - 1}
    real = F.run_states

    def sampled(these, at, steps=F.RUN_STEPS):
        if these[at].default not in chosen:
            return []
        states = real(these, at, steps)
        return states[:1] + states[1::7] + states[-1:]

    monkeypatch.setattr(F, "run_states", sampled)
    index = F.write_frames(e, tmp_path, "run")
    assert [c.index() for c in controls] == [c.default for c in controls]  # back at the defaults
    runs = index["by"]["runs"]
    assert index["by"]["control"] == by and len(runs) == len(controls[by].values)
    for r in chosen:
        assert index["frames"][runs[r]["default"]], f"run {r}: no default frame"
        assert all(int(k.split(",")[by]) == r for k in index["frames"] if k.split(",")[by] == str(r))
    assert any(runs[r]["labels"] for r in chosen), "no sampled run offers other micro-batches than the page's"
    default_png = e.picture.value
    for key, entry in index["frames"].items():
        requested = tuple(int(k) for k in key.split(","))
        fresh = FACTORIES["validation:published_run"]()
        page, _ = F.controls_of(fresh)
        page[by].set(requested[by])
        these, _ = F.controls_of(fresh)  # the run's own options
        assert F.key_of(tuple(c.default for c in these)) == runs[requested[by]]["default"]
        for c, k in zip(these, requested):
            if c.index() != k:
                c.set(k)
        assert F.key_of(tuple(c.index() for c in these)) == key
        assert table_html(index, entry[0]) == fresh.table.value, f"{key}: table"
        shown = picture_of(tmp_path / "run", index, entry, default_png)
        off = np.abs(shown - rgba(fresh.picture.value)).max(axis=2)
        assert (off > 2).mean() <= 0.0005, f"{key}: {(off > 2).mean():.4%} pixels differ"
