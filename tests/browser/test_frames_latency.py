"""Explorers answer quickly on the static site: key press to picture, timed with nothing beside it.

test_frames.py checks that every move of every control shows the right frame, on two pytest-xdist
workers; a second worker beside a move slows it (median 121 ms with one, 65 ms alone on a quiet
two-core machine), so `make browser-check` times moves here, in its own pytest call after the parallel
one (the defect drill runs in the same call, before or after, never at the same time).

The sample is fixed and is the one test_frames.py moved when it timed its own moves: on every chapter
page, in every explorer whose frames were built, every control that can move (not one switched off or
with one value) pressed once from the defaults by test_frames.py's own press_and_wait (a slider one step,
a checkbox toggled, a picker one option on). A control's first press may wait for its pack of pictures,
so a second press of the same control would time the cache and lower the median (PRESSES stays 1). The
time is keydown to decoded picture (``data-cm-shown-at``, set by book/static/static-frames.js). An
explorer's first move (it loads its frames) is reported apart; the budget: the median of the other
moves under BUDGET_MS. The terminal summary prints the median, p95 and largest (conftest.py).
"""

from __future__ import annotations

import statistics

import pytest

import browsing
from test_frames import EXPLORERS_JS, FOCUS_JS, KEY_CLOCK, SPEC_JS, press_and_wait, wait_ready
from test_pages import WIDGET_PAGES

BUDGET_MS = 100.0
CONTROLS: int | None = None  # all
PRESSES = 1
LATENCY: dict[str, list[float]] = {"first": [], "later": []}

CLOCK_JS = """(key) => {
  const root = document.querySelector('.cm-frames-' + key);
  return {shownAt: Number(root.getAttribute('data-cm-shown-at') || 0), keyAt: window.__cmKeyAt || 0,
          status: root.getAttribute('data-cm-frames'), state: root.__cmEngine ? root.__cmEngine.state() : null};
}"""


def time_moves(page, latency: dict[str, list[float]]) -> list[str]:
    """Make the sample's moves on an open page, add each one's milliseconds to ``latency``; return what
    went wrong (a control that takes no focus, frames that never load, a move that shows no frame)."""
    bad = []
    page.evaluate(KEY_CLOCK)
    for explorer in page.evaluate(EXPLORERS_JS):
        key, where = explorer["key"], explorer["title"]
        first, moved = True, 0
        for i in range(explorer["controls"]):
            if CONTROLS is not None and moved == CONTROLS:
                break
            if not page.evaluate(FOCUS_JS, [key, i]):
                bad.append(f"{where}: control {i} cannot take the keyboard's focus")
                continue
            wait_ready(page, key)
            spec = page.evaluate(SPEC_JS, [key, i])
            if spec.get("disabled") or spec["count"] < 2:
                continue
            moved += 1
            for _ in range(PRESSES):
                page.evaluate(FOCUS_JS, [key, i])
                before = page.evaluate(CLOCK_JS, key)
                if before["status"] != "ready":
                    bad.append(f"{where}: frames not ready ({before['status']})")
                    break
                _, after = press_and_wait(page, key, i, spec, before, where, bad, read_js=CLOCK_JS)
                if after is None:
                    break
                latency["first" if first else "later"].append(after["shownAt"] - after["keyAt"])
                first = False
    return bad


def latency_report(latency: dict[str, list[float]] = LATENCY) -> str:
    """The median, p95 and largest key-press-to-picture time (ms) of the moves in ``latency``."""
    later, first = latency["later"], latency["first"] or [0.0]
    p95 = sorted(later)[int(0.95 * (len(later) - 1))]
    return (f"frame shown after a key press: median {statistics.median(later):.1f} ms, p95 {p95:.1f} ms, "
            f"max {max(later):.1f} ms over {len(later)} moves; an explorer's first move (loading its frames): "
            f"median {statistics.median(first):.1f} ms, max {max(first):.1f} ms over {len(first)} explorers")


def test_moves_are_quick():
    """The sample's moves on every chapter page, one page after another in one browser; the median of
    the moves after each explorer's first under BUDGET_MS."""
    if not (browsing.HTML_DIR / "index.html").is_file():
        pytest.skip(f"the book is not built ({browsing.HTML_DIR} has no index.html)")
    bad = []
    with browsing.serve() as base, browsing.chromium() as browser:
        for rel in WIDGET_PAGES:
            context = browsing.new_context(browser)
            try:
                page, _ = browsing.open_page(context, base, rel)
                bad += [f"{rel}: {b}" for b in time_moves(page, LATENCY)]
                page.close()
            finally:
                context.close()
    assert not bad, "".join(f"\n  {b}" for b in bad[:12])
    assert LATENCY["later"], "no explorer was moved"
    print("\n" + latency_report())
    assert statistics.median(LATENCY["later"]) < BUDGET_MS, latency_report()
