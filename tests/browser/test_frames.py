"""Explorers move on the static site: every control of every explorer, moved once with the keyboard
on a page served with no kernel, swaps in its frame (clustermath/views/frames.py, written while the
book builds; book/static/static-frames.js shows them).

For each chapter page, each explorer whose frames were built, each control in turn: focus it, press
a key (an arrow on a slider, Space on a checkbox or toggle), and require

* the picture and the table to change, to what the frames' index says for the new state (so a
  frame that is missing, or frames that do not belong to the page, fail), and the picture on
  screen to be that frame's pixels (default picture plus overlay; at other pixel ratios than this
  test's 1, test_frames_pixel_ratio.py);
* every readout to equal its handle (the number to the readout's decimals, or the option label at the
  handle), detached controls included where the page's slider has the value their words give, after
  this move and, for a picker (a dropdown, which retargets other controls), after each of its options;
* the control moved before it to be back at its default, with the one-line note saying that
  combined settings need a live kernel (unless the explorer carries its whole grid).

The latency guard (median key press to picture under 150 ms) is judged apart, on a fixed sample of
moves made with nothing else running (test_frames_latency.py): `make browser-check` runs this module's
checks on two workers, one page's moves per group, and a second worker beside a move slows it.

On chapter 6, whose run explorer is framed per published run, the page's test then picks a run and
moves a constant and the run's micro-batch: the run stays chosen, the constant goes to a stop of the
run's grid, and the picture, the table and every readout are the frame's (chosen_run_problems).

A drill serves a chapter with an explorer's index missing, with a stale index (another default
table), and with a frame's picture missing, and requires each to be reported.
"""

from __future__ import annotations

import base64
import io
import json
from urllib.parse import unquote

import numpy as np
import pytest
from PIL import Image

import browsing
from test_pages import WIDGET_PAGES, console_problems, static_explorer_problems

# keydown time (capture phase, before the slider sees it), read back after the swap
KEY_CLOCK = """() => {
  if (window.__cmKeyClock) return;
  window.__cmKeyClock = true;
  document.addEventListener('keydown', () => { window.__cmKeyAt = performance.now(); }, true);
}"""

EXPLORERS_JS = """() => [...document.querySelectorAll('.jupyter-widgets.cm-frames')].map(root => {
  const key = [...root.classList].find(c => c.startsWith('cm-frames-') && c !== 'cm-frames-table'
                                            && c !== 'cm-frames-picture').slice('cm-frames-'.length);
  return {key, controls: root.querySelectorAll('[class*="cm-control-"]').length,
          title: (root.querySelector('.widget-html b') || root).textContent.trim().slice(0, 60)};
})"""

# what the explorer shows now, and what its index says it should show for that state
SHOWN_JS = """(key) => {
  const root = document.querySelector('.cm-frames-' + key);
  const data = (window.__cmFramesData || {})[key];
  const engine = root.__cmEngine;
  const img = root.querySelector('img.cm-frames-picture');
  const table = root.querySelector('.cm-frames-table');
  const out = {status: root.getAttribute('data-cm-frames'), frame: root.getAttribute('data-cm-frame'),
               shownAt: Number(root.getAttribute('data-cm-shown-at') || 0), keyAt: window.__cmKeyAt || 0,
               src: img ? img.src : null, background: img ? img.style.backgroundImage : null,
               picture: img ? img.getAttribute('data-cm-picture') : null,
               table: null,
               note: ((root.querySelector('.cm-frames-status') || {}).textContent || '').trim(),
               noteShown: !!root.querySelector('.cm-frames-status:not([hidden])'),
               natural: img ? [img.naturalWidth, img.clientWidth] : null};
  if (engine && data) {
    out.state = engine.state();
    out.defaults = engine.defaults;
    out.grid = data.grid;
    const entry = data.frames[out.frame];
    if (entry) {
      // the table as the page's parser writes it back
      const t = document.createElement('div');
      t.innerHTML = engine.tableHTML(entry[0]);
      const content = table.querySelector('.widget-html-content');
      out.table = content ? content.innerHTML : table.innerHTML;
      out.expectTable = t.innerHTML;
      out.defaultTable = data.frames[data['default']][0];
      out.tableId = entry[0];
      out.expectFile = entry[1];
      out.expectState = (entry[2] || out.frame);
      out.readouts = entry[3] || {};
      out.detached = {};
      root.querySelectorAll('.cm-detached').forEach(el => {
        const i = [...el.classList].find(c => /^cm-control-\\d+$/.test(c)).slice('cm-control-'.length);
        out.detached[i] = (el.querySelector('.widget-readout') || el).textContent.trim();
      });
    }
    out.original = engine.original;
    out.base = engine.base;
  }
  return out;
}"""

FOCUS_JS = """([key, i]) => {
  const root = document.querySelector('.cm-frames-' + key);
  const el = root.querySelector('.cm-control-' + i);
  const target = el.querySelector('.noUi-handle') || el.querySelector('input, select') || el;
  target.scrollIntoView({block: 'center'});
  target.focus();
  const data = (window.__cmFramesData || {})[key];
  return document.activeElement === target;
}"""

BLOB_JS = """async (url) => {
  const buf = await (await fetch(url)).arrayBuffer();
  let s = '';
  new Uint8Array(buf).forEach(b => { s += String.fromCharCode(b); });
  return btoa(s);
}"""


# a control as the page offers it now: its spec, with the count and switch of the chosen run (frames per run)
SPEC_JS = """([key, i]) => {
  const root = document.querySelector('.cm-frames-' + key), engine = root.__cmEngine;
  const spec = Object.assign({}, window.__cmFramesData[key].controls[i]);
  if (engine && engine.by >= 0) {
    spec.count = engine.count(i);
    const t = engine.controls[i].el.querySelector('.noUi-target');
    if (t && t.hasAttribute('disabled')) spec.disabled = true;
  }
  return spec;
}"""

# every control's readout beside its handle, and (a selection slider) the option labels the page's widget
# state gives it, found under the explorer's own model
READOUTS_JS = """(key) => {
  const root = document.querySelector('.cm-frames-' + key);
  const engine = root.__cmEngine;
  const state = JSON.parse(document.querySelector(
    'script[type="application/vnd.jupyter.widget-state+json"]').textContent).state;
  const cls = id => (state[id].state._dom_classes || []);
  const top = Object.keys(state).find(id => cls(id).includes('cm-frames-' + key));
  const under = [], walk = id => { under.push(id); (state[id].state.children || [])
    .forEach(c => walk(c.replace('IPY_MODEL_', ''))); };
  if (top) walk(top);
  return engine.controls.map((c, i) => {
    const t = c.el.querySelector('.noUi-target'), r = c.el.querySelector('.widget-readout');
    const model = under.find(id => cls(id).includes('cm-control-' + i));
    return {label: c.spec.label, kind: c.spec.kind, detached: !!c.detached, values: c.spec.values || null,
            handle: t && t.noUiSlider ? Number(t.noUiSlider.get()) : null,
            readout: r ? r.textContent.trim() : null,
            labels: c.labels || (model ? (state[model].state._options_labels || null) : null)};
  });
}"""


def readout_problems(controls: list[dict]) -> list[str]:
    """Each slider's readout against its handle: the number it shows (to its own decimals), or the option
    label at the handle; a detached control's words, where the page's slider has that value, too."""
    bad = []
    for c in controls:
        if c["handle"] is None or c["readout"] is None:
            continue
        text = c["readout"].replace(",", "").replace("\u202f", "").replace(" ", "")
        if c["kind"] == "selection" and c["labels"]:
            want = c["labels"][int(round(c["handle"]))].strip()
            if c["readout"] != want and (not c["detached"] or c["readout"] in c["labels"]):
                bad.append(f"{c['label']!r} reads {c['readout']!r}, its handle is at {want!r}")
            continue
        try:
            shown = float(text)
        except ValueError:
            if not c["detached"]:
                bad.append(f"{c['label']!r} reads {c['readout']!r}, not a number (handle at {c['handle']:g})")
            continue
        decimals = len(text.split(".", 1)[1]) if "." in text else 0
        if c["detached"] and not any(abs(v - shown) <= 1e-9 * max(1, abs(shown)) for v in c["values"] or []):
            continue  # the page's slider has no such value: its handle stays, dimmed
        if abs(shown - c["handle"]) > 0.5 * 10 ** -decimals + 1e-9 * max(1, abs(shown)):
            bad.append(f"{c['label']!r} reads {c['readout']!r}, its handle is at {c['handle']:g}")
    return bad


SUB_PIXEL_UP = {("Ring builder", "hops K")}
"""(explorer title's start, control) whose step up from the default moves only what is thinner than a pixel
(tests/test_views_truth.py's SUB_PIXEL_UP: the ring builder's K from 3 to 4 takes the paper's bound from
0.009% to 0.0001% of a 25% scale); these move down instead."""


def key_for(kind: str, index: int, count: int) -> str:
    if kind in ("checkbox", "toggle"):
        return "Space"
    if kind == "select":
        return "ArrowDown" if index + 1 < count else "ArrowUp"
    return "ArrowRight" if index + 1 < count else "ArrowLeft"


def press_and_wait(page, key: str, i: int, spec: dict, before: dict, where: str, bad: list[str],
                   read_js: str = SHOWN_JS) -> tuple[str, dict | None]:
    """Press control ``i``'s key once and wait up to 5 s for the explorer to show a new frame.

    The key is ``key_for``'s for the control's kind and its index in ``before["state"]`` (an arrow
    right that moves only what is thinner than a pixel, SUB_PIXEL_UP, goes left instead); a new frame
    is a ``data-cm-shown-at`` later than ``before["shownAt"]``. Return the key and the explorer as
    ``read_js`` reads it after the frame, or None after adding the failure to ``bad``.
    test_frames_latency.py times its moves with this helper too, so its sample is pressed as here."""
    press = key_for(spec["kind"], before["state"][i], spec["count"])
    if press == "ArrowRight" and any(t in where and spec["label"] == c for t, c in SUB_PIXEL_UP):
        press = "ArrowLeft"
    page.keyboard.press(press)
    try:
        page.wait_for_function(
            "([key, t]) => Number(document.querySelector('.cm-frames-' + key)"
            ".getAttribute('data-cm-shown-at') || 0) > t", arg=[key, before["shownAt"]], timeout=5000)
    except Exception:
        bad.append(f"{where}: {spec['label']!r}: {press} showed no new frame within 5 s")
        return press, None
    return press, page.evaluate(read_js, key)


def wait_ready(page, key: str) -> None:
    page.wait_for_function(
        "(key) => { const r = document.querySelector('.cm-frames-' + key);"
        " return r && ['ready', 'failed'].includes(r.getAttribute('data-cm-frames')); }",
        arg=key, timeout=browsing.TIMEOUT_MS)


# Put another picture in the explorer's image (same box, same place on the page, so the browser scales
# and places it exactly as it does the frame), or put the frame back.
SWAP_JS = """async ([key, url]) => {
  const img = document.querySelector('.cm-frames-' + key + ' img.cm-frames-picture');
  if (url) {
    img.__kept = [img.src, img.style.backgroundImage];
    img.style.backgroundImage = '';
    img.src = url;
  } else {
    [img.src, img.style.backgroundImage] = img.__kept;
  }
  await img.decode();
}"""


def shot(page, key: str) -> np.ndarray:
    data = page.locator(f".cm-frames-{key} img.cm-frames-picture").screenshot()
    return np.asarray(Image.open(io.BytesIO(data)).convert("RGB")).astype(int)


def picture_is_frame(page, key: str, truth: np.ndarray) -> float:
    """Share of the picture's pixels on screen that differ from the frame's (drawn in the same place)."""
    page.locator(f".cm-frames-{key} img.cm-frames-picture").scroll_into_view_if_needed()
    shown = shot(page, key)
    out = io.BytesIO()
    Image.fromarray(truth.astype(np.uint8)).save(out, format="png")
    page.evaluate(SWAP_JS, [key, "data:image/png;base64," + base64.b64encode(out.getvalue()).decode()])
    try:
        reference = shot(page, key)
    finally:
        page.evaluate(SWAP_JS, [key, None])
    if shown.shape != reference.shape:
        return 1.0
    return float((np.abs(shown - reference).max(axis=2) > 8).mean())


def frame_pixels(page, key: str, shown: dict) -> np.ndarray:
    """The frame as the build wrote it: the page's default picture, the overlay laid over it."""
    base = np.asarray(Image.open(io.BytesIO(base64.b64decode(page.evaluate(BLOB_JS, shown["original"]))))
                      .convert("RGBA")).astype(float)
    if not shown["expectFile"]:
        return base[..., :3].astype(int)
    folder = browsing.HTML_DIR / "_frames" / unquote(shown["base"].split("/_frames/", 1)[1])
    layer = np.asarray(Image.open(io.BytesIO(browsing.frame_picture(folder, shown["expectFile"])))
                       .convert("RGBA")).astype(float)
    alpha = layer[..., 3:4] / 255
    return np.rint(layer[..., :3] * alpha + base[..., :3] * (1 - alpha)).astype(int)


def move_every_control(page) -> list[str]:
    """Move each control of each framed explorer once; return what went wrong."""
    bad = []
    page.evaluate(KEY_CLOCK)
    for explorer in page.evaluate(EXPLORERS_JS):
        key, where = explorer["key"], explorer["title"]
        if not explorer["controls"]:
            bad.append(f"{where}: no control carries its cm-control class")
            continue
        for i in range(explorer["controls"]):
            if not page.evaluate(FOCUS_JS, [key, i]):
                bad.append(f"{where}: control {i} cannot take the keyboard's focus")
                continue
            wait_ready(page, key)
            before = page.evaluate(SHOWN_JS, key)
            if before["status"] != "ready":
                bad.append(f"{where}: frames not ready ({before['status']})")
                break
            spec = page.evaluate(SPEC_JS, [key, i])
            if spec.get("disabled") or spec["count"] < 2:
                continue  # switched off in the explorer itself (or nothing to move to), live as here
            press, after = press_and_wait(page, key, i, spec, before, where, bad)
            if after is None:
                continue
            what = f"{where}: {spec['label']!r} ({press})"
            if after["state"][i] == before["state"][i]:
                bad.append(f"{what}: the control did not move")
            if "expectTable" not in after:
                bad.append(f"{what}: no frame {after['frame']} in the index")
                continue
            want = after["expectFile"]
            if after["src"] is not None and not want:
                bad.append(f"{what}: the frame's picture is the default picture")
            if after["src"] is not None and (after["src"], after["background"]) == (before["src"], before["background"]) \
                    and (before.get("expectFile") or "") != (want or ""):
                bad.append(f"{what}: the picture did not change")
            if after["table"] != after["expectTable"]:
                bad.append(f"{what}: the table is not the frame's: {after['table'][:60]!r}")
            elif after["table"] == before["table"] and after["tableId"] != before["tableId"]:
                bad.append(f"{what}: the table did not change")
            if (after["picture"] or None) != (want or None) or (not want and after["src"] != after["original"]):
                bad.append(f"{what}: the picture is not the frame's ({after['picture']!r}, {after['src'][-40:]})")
            if ",".join(map(str, after["state"])) != after["expectState"]:
                bad.append(f"{what}: the controls read {after['state']}, the frame is {after['expectState']}")
            bad += [f"{what}: {b}" for b in readout_problems(page.evaluate(READOUTS_JS, key))]
            for j, words in after["readouts"].items():  # controls this one retargeted show the frame's words
                if after["detached"].get(j) != words:
                    bad.append(f"{what}: control {j} reads {after['detached'].get(j)!r}, the frame {words!r}")
            if not after["grid"] and i > 0:
                others = [j for j in range(len(after["state"])) if j != i and after["state"][j] != after["defaults"][j]]
                expected_others = [j for j, k in enumerate(after["expectState"].split(","))
                                   if j != i and int(k) != after["defaults"][j]]
                if others != expected_others:
                    bad.append(f"{what}: other controls not back at their defaults: {others}")
                if before["state"][i - 1] != after["defaults"][i - 1] and not (
                        after["noteShown"] and "live kernel" in after["note"]):
                    bad.append(f"{what}: the previous control went back to its default without the note")
            if want:
                off = picture_is_frame(page, key, frame_pixels(page, key, after))
                if off > 0.001:
                    bad.append(f"{what}: {off:.1%} of the picture's pixels on screen are not the frame's")
            if spec["kind"] == "select":  # a picker retargets other controls: every option's readouts
                # (framed per run, each option fetches its run's pack: every tenth, and the last)
                per_run = page.evaluate(f"(k) => document.querySelector('.cm-frames-' + k).__cmEngine.by === {i}", key)
                options = range(after["state"][i] + 1, spec["count"])
                if per_run:
                    options = sorted({*options[9::10], spec["count"] - 1} - {after["state"][i]})
                select = page.locator(f".cm-frames-{key} .cm-control-{i} select")
                for option in options:
                    shown_at = page.evaluate(SHOWN_JS, key)["shownAt"]
                    if per_run:
                        select.select_option(index=option)
                    else:
                        page.keyboard.press("ArrowDown")
                    try:
                        page.wait_for_function(
                            "([key, t]) => Number(document.querySelector('.cm-frames-' + key)"
                            ".getAttribute('data-cm-shown-at') || 0) > t", arg=[key, shown_at], timeout=5000)
                    except Exception:
                        bad.append(f"{what}: ArrowDown to the next option showed no new frame within 5 s")
                        break
                    option = page.evaluate(SHOWN_JS, key)["state"][i]
                    bad += [f"{what}, option {option}: {b}" for b in readout_problems(page.evaluate(READOUTS_JS, key))]
    return bad


@pytest.fixture(scope="module")
def browser_and_base():
    if not (browsing.HTML_DIR / "index.html").is_file():
        pytest.skip(f"the book is not built ({browsing.HTML_DIR} has no index.html)")
    with browsing.serve() as base, browsing.chromium() as browser:
        yield browser, base


@pytest.mark.parametrize("page_rel", WIDGET_PAGES)
def test_every_control_moves_its_explorer(browser_and_base, page_rel):
    browser, base = browser_and_base
    context = browsing.new_context(browser)
    try:
        page, visit = browsing.open_page(context, base, page_rel)
        bad = move_every_control(page)
        if page_rel == RUN_PAGE or page.evaluate(RUN_JS):  # framed per run (chapter 6): a chosen run stays chosen
            bad += chosen_run_problems(page)
        framed = page.evaluate("() => document.querySelectorAll('.jupyter-widgets.cm-frames').length")
        explorers = page.evaluate("() => document.querySelectorAll('.cm-explorer').length")
        page.close()
    finally:
        context.close()
    bad += console_problems(visit)
    assert framed and framed >= explorers, f"{page_rel}: {framed} of {explorers} explorers have frames"
    assert not bad, f"{page_rel}:" + "".join(f"\n  {b}" for b in bad[:12])


# -- the drill: a missing or stale set of frames is reported -------------------------------------------

DRILL_PAGE = "notebooks/03_where_the_traffic_lands.html"


def drill(browser, base, route) -> tuple[list[str], dict]:
    context = browsing.new_context(browser)
    try:
        page = context.new_page()
        console: list[str] = []
        page.on("console", lambda m: console.append(m.text) if m.type == "error" else None)
        page.route("**/_frames/**", route)
        page.goto(base + DRILL_PAGE, wait_until="load")
        visit = browsing.Visit(DRILL_PAGE, "desktop")
        browsing.settle(page, visit)
        key = page.evaluate(EXPLORERS_JS)[0]["key"]
        page.evaluate(FOCUS_JS, [key, 0])
        wait_ready(page, key)
        page.keyboard.press("ArrowRight")
        page.wait_for_timeout(500)
        visit.dom = page.evaluate(browsing.MEASURE_JS)
        visit.console = console
        page.close()
    finally:
        context.close()
    return console, visit


def test_drill_missing_index(browser_and_base):
    browser, base = browser_and_base

    def route(r):
        if r.request.url.endswith("/index.js"):
            r.fulfill(status=404, body="")
        else:
            r.continue_()

    console, visit = drill(browser, base, route)
    assert any("could not load" in c for c in console), console
    assert any("did not load" in p for p in static_explorer_problems(visit)), static_explorer_problems(visit)


def test_drill_stale_index(browser_and_base):
    browser, base = browser_and_base

    def route(r):
        if r.request.url.endswith("/index.js"):
            text = r.fetch().text()
            head, body = text.split(",", 1)
            data = json.loads(body[: body.rindex(")")])
            data["check"]["table"] = "another explorer's default"
            r.fulfill(status=200, content_type="text/javascript", body=f"{head},{json.dumps(data)});")
        else:
            r.continue_()

    console, visit = drill(browser, base, route)
    assert any("stale frames" in c for c in console), console
    assert any("did not load" in p for p in static_explorer_problems(visit))


def test_drill_missing_picture(browser_and_base):
    browser, base = browser_and_base

    def route(r):
        if "/pack-" in r.request.url or r.request.url.endswith((".webp", ".png")):
            r.fulfill(status=404, body="")
        else:
            r.continue_()

    console, _ = drill(browser, base, route)
    assert any("no picture at" in c for c in console), console


def test_the_readout_check_catches_a_readout_off_its_handle():
    """readout_problems on made-up controls: chapter 6's old defect (a detached readout saying 1 while
    its handle sat at 6) and a number off its handle are reported; matching ones, and detached words
    the page's slider cannot show, are not."""
    slider = {"label": "n", "kind": "slider", "detached": False, "values": [1.0, 2.0, 6.0], "labels": None}
    choice = {"label": "interleaving", "kind": "selection", "detached": True, "values": None, "labels": ["1", "2", "6"]}
    assert readout_problems([dict(slider, handle=2.0, readout="2.00"), dict(choice, handle=0, readout="1")]) == []
    assert readout_problems([dict(slider, handle=6.0, readout="2")])
    assert readout_problems([dict(choice, handle=2, readout="1")])  # says 1, handle at 6
    assert readout_problems([dict(slider, detached=True, handle=6.0, readout="1")])
    assert readout_problems([dict(slider, detached=True, handle=6.0, readout="7")]) == []  # not on the page's slider
    assert readout_problems([dict(slider, handle=2880.0, readout="2,880", values=[2880.0])]) == []


# -- chapter 6: a chosen run stays chosen -----------------------------------------------------------

RUN_PAGE = "notebooks/06_do_the_models_hold.html"

RUN_JS = """() => {
  const root = [...document.querySelectorAll('.jupyter-widgets.cm-frames')].find(r => {
    const k = [...r.classList].find(c => c.startsWith('cm-frames-') && c !== 'cm-frames-table'
                                          && c !== 'cm-frames-picture');
    return ((window.__cmFramesData || {})[k.slice('cm-frames-'.length)] || {}).by;
  });
  if (!root) return null;
  const key = [...root.classList].find(c => c.startsWith('cm-frames-') && c !== 'cm-frames-table'
                                            && c !== 'cm-frames-picture').slice('cm-frames-'.length);
  const data = window.__cmFramesData[key], by = data.by.control;
  // a run other than the default whose micro-batches differ from the page's and whose every control is on
  const def = Number(data['default'].split(',')[by]);
  const run = data.by.runs.findIndex((r, i) => i !== def && Object.keys(r.labels).length
                                           && !Object.values(r.disabled || {}).some(Boolean));
  return {key, by, run, runs: data.by.runs.length, controls: data.controls.map(c => c.label)};
}"""

GRID_JS = """([key, i]) => {
  const engine = document.querySelector('.cm-frames-' + key).__cmEngine;
  return engine.grid(i) || [...Array(engine.count(i)).keys()];
}"""

PICKED_JS = """(key) => {
  const root = document.querySelector('.cm-frames-' + key), engine = root.__cmEngine;
  return {picked: root.querySelector('.cm-control-' + engine.by + ' select').selectedIndex,
          run: engine.run, frame: root.getAttribute('data-cm-frame'), state: engine.state(),
          defaults: engine.defaults};
}"""


def shown_after(page, key: str, act) -> dict:
    """Do ``act`` (a move), wait for the explorer to show a new frame, and return what it shows."""
    before = page.evaluate(SHOWN_JS, key)["shownAt"]
    act()
    page.wait_for_function(
        "([key, t]) => Number(document.querySelector('.cm-frames-' + key).getAttribute('data-cm-shown-at') || 0) > t",
        arg=[key, before], timeout=10_000)
    return page.evaluate(SHOWN_JS, key)


def frame_problems(page, key: str, what: str) -> list[str]:
    """The table, the picture and every readout against the frame the explorer says it shows."""
    shown, bad = page.evaluate(SHOWN_JS, key), []
    if shown["table"] != shown.get("expectTable"):
        bad.append(f"{what}: the table is not the frame's")
    if ",".join(map(str, shown["state"])) != shown["expectState"]:
        bad.append(f"{what}: the controls read {shown['state']}, the frame is {shown['expectState']}")
    if shown["expectFile"]:
        off = picture_is_frame(page, key, frame_pixels(page, key, shown))
        if off > 0.001:
            bad.append(f"{what}: {off:.1%} of the picture's pixels on screen are not the frame's")
    bad += [f"{what}: {b}" for b in readout_problems(page.evaluate(READOUTS_JS, key))]
    return bad


def chosen_run_problems(page) -> list[str]:
    """Chapter 6's run explorer, framed per run (after every control was moved once): pick a published
    run, then move a constant (a key press goes to the next stop of the run's grid), then the run's own
    micro-batch: the run stays chosen, the picture and the table are the frame for (run, value), and
    every readout equals its handle (the micro-batch's in the run's own options)."""
    found, bad = page.evaluate(RUN_JS), []
    if found is None or found["run"] < 0:
        return [f"no explorer framed per run, or no run to pick: {found}"]
    key, by, run = found["key"], found["by"], found["run"]
    page.evaluate(FOCUS_JS, [key, by])
    wait_ready(page, key)
    select = page.locator(f".cm-frames-{key} .cm-control-{by} select")
    shown_after(page, key, lambda: select.select_option(index=run))
    picked = page.evaluate(PICKED_JS, key)
    if picked["picked"] != run or picked["run"] != run or picked["frame"] != ",".join(map(str, picked["state"])):
        bad.append(f"run {run} picked: {picked}")
    bad += frame_problems(page, key, f"run {run} picked")
    constant = next(i for i, label in enumerate(found["controls"]) if label == "kernel efficiency")
    page.evaluate(FOCUS_JS, [key, constant])
    press = "ArrowRight" if picked["state"][constant] < max(page.evaluate(GRID_JS, [key, constant])) else "ArrowLeft"
    shown_after(page, key, lambda: page.keyboard.press(press))
    moved = page.evaluate(PICKED_JS, key)
    if moved["picked"] != run or moved["state"][by] != run:
        bad.append(f"kernel efficiency moved: the run went from {run} to {moved['picked']}")
    if moved["state"][constant] == picked["state"][constant]:
        bad.append(f"kernel efficiency did not move: {moved['state'][constant]}")
    if moved["state"][constant] not in page.evaluate(GRID_JS, [key, constant]):
        bad.append(f"kernel efficiency at {moved['state'][constant]}, not a stop of the run's grid")
    bad += frame_problems(page, key, f"run {run}, kernel efficiency {press}")
    micro = next(i for i, label in enumerate(found["controls"]) if label.startswith("micro-batch"))
    page.evaluate(FOCUS_JS, [key, micro])
    count = page.evaluate(SPEC_JS, [key, micro])["count"]
    shown_after(page, key, lambda: page.keyboard.press(key_for("selection", moved["state"][micro], count)))
    after = page.evaluate(PICKED_JS, key)
    if after["picked"] != run or after["state"][by] != run:
        bad.append(f"micro-batch moved: the run went from {run} to {after['picked']}")
    if after["state"][micro] == moved["state"][micro]:
        bad.append("the micro-batch did not move")
    if after["state"][constant] != after["defaults"][constant]:
        bad.append("the micro-batch moved: kernel efficiency did not go back to its default")
    bad += frame_problems(page, key, f"run {run}, micro-batch moved")
    return bad

