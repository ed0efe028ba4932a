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

BUDGET_MS is a guard against a gross regression (a move twice as slow as today's), not the reader's
budget: that one, a key press to picture within 50 ms at p95 (issue 41), is `make bench`'s report
(tools/bench_static.py), measured, not asserted, as the developers' guide asks of speed. The machine's own
pace drifts between runs: on the same quiet two-core machine and the same pages, clean-clone runs measured
medians of 63.9, 71.6 and 106.8 ms, and runs of this test alone 73.8 to 95.7 ms (everything, first moves
included, up to 1.6 times slower): one of those six went over a 100 ms budget with nothing changed.
Today's median is about 65 to 105 ms; the guard is 150 ms. A sample over it is taken once more, afresh,
and the faster of the two is judged (both are printed): a slower page slows both samples, a slow moment of
the machine seldom lasts through two. At most SAMPLES samples.
"""

from __future__ import annotations

import statistics

import pytest

import browsing
from test_frames import EXPLORERS_JS, FOCUS_JS, KEY_CLOCK, SPEC_JS, press_and_wait, wait_ready
from test_pages import WIDGET_PAGES

BUDGET_MS = 150.0
SAMPLES = 2
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


def sample(base: str, browser) -> tuple[dict[str, list[float]], list[str]]:
    """One sample: the moves on every chapter page, one page after another, each in a fresh context."""
    latency: dict[str, list[float]] = {"first": [], "later": []}
    bad = []
    for rel in WIDGET_PAGES:
        context = browsing.new_context(browser)
        try:
            page, _ = browsing.open_page(context, base, rel)
            bad += [f"{rel}: {b}" for b in time_moves(page, latency)]
            page.close()
        finally:
            context.close()
    return latency, bad


def test_moves_are_quick():
    """The sample's moves on every chapter page; the median of the moves after each explorer's first under
    BUDGET_MS, in the first sample or, if it is over, the faster of two (the module's docstring says why)."""
    if not (browsing.HTML_DIR / "index.html").is_file():
        pytest.skip(f"the book is not built ({browsing.HTML_DIR} has no index.html)")
    taken = []
    with browsing.serve() as base, browsing.chromium() as browser:
        while len(taken) < SAMPLES:
            latency, bad = sample(base, browser)
            assert not bad, "".join(f"\n  {b}" for b in bad[:12])
            assert latency["later"], "no explorer was moved"
            taken.append(latency)
            print(f"\nsample {len(taken)}: " + latency_report(latency))
            if statistics.median(latency["later"]) < BUDGET_MS:
                break
    judged = min(taken, key=lambda x: statistics.median(x["later"]))
    LATENCY.update(judged)   # the terminal summary (conftest.py) reports the sample judged
    assert statistics.median(judged["later"]) < BUDGET_MS, " / ".join(latency_report(x) for x in taken)
