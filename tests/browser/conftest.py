"""Fixtures of the browser checks: the built site served on 127.0.0.1, Debian's
Chromium, and each page of the table of contents visited once (read at both
widths) and kept for every test that asks about it.

Run after the book is built (`make build-check` or `make book`); set
BOOK_HTML_DIR to check a build elsewhere. See browsing.py.

`make browser-check` runs the pages' checks on two pytest-xdist workers (`-n 2 --dist loadgroup`):
the tests that share a visit or a module's state are one group, run by one worker (the scheduler
below), and each worker hands what the terminal summary reports to the controller (workeroutput).
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import browsing  # noqa: E402

collect_ignore = ["measure.js"]


def _built() -> bool:
    return (browsing.HTML_DIR / "index.html").is_file()


@pytest.fixture(scope="session")
def site():
    """Yield visit(page) -> {width: Visit}; each page is loaded once per session (per worker)."""
    if not _built():
        pytest.skip(f"the book is not built ({browsing.HTML_DIR} has no index.html)")
    if not Path(browsing.CHROMIUM).exists():
        pytest.fail(f"no Chromium at {browsing.CHROMIUM}: `apt-get install chromium` (or set CHROMIUM)")
    cache: dict[str, dict] = {}
    with browsing.serve() as base, browsing.chromium() as browser:
        context = browsing.new_context(browser)

        def visit(rel: str) -> dict:
            if rel not in cache:
                cache[rel] = browsing.visit_page(context, base, rel, axe=True)
            return cache[rel]

        visit.cache = cache
        yield visit
        context.close()
        _AXE.update({rel: v["desktop"].axe for rel, v in cache.items() if v["desktop"].axe is not None})
        _CONTRAST.update({rel: v["desktop"].contrast for rel, v in cache.items() if v["desktop"].contrast})
        for v in cache.values():
            for what, seconds in v["desktop"].seconds.items():
                _SECONDS[what] += seconds


_AXE: dict[str, dict] = {}
_CONTRAST: dict[str, dict] = {}
_SECONDS: Counter = Counter()
# test_frames_latency.py's key-press-to-picture times and test_frames_pixel_ratio.py's results, gathered from
# this process's modules at the session's end and, under xdist, from every worker's
_LATENCY: dict[str, list[float]] = {"first": [], "later": []}
_RATIOS: dict[float, list[dict]] = {}
_RATIO_SECONDS: dict[float, float] = {}


# -- pytest-xdist ------------------------------------------------------------------------------------
# Under `--dist loadgroup` the controller hands each worker whole groups of tests: every test of
# test_pages.py on one page (they share its one visit through `site`, so each page is visited once
# overall, by the worker that runs its group), test_frames.py's moves of one page's explorers (a group
# per page: chapter 1's take about 35 s, so they start first, in collection order), and
# test_checks_catch_defects.py whole (one planted visit). Every other test goes to whichever worker is
# free. The latency of moves is timed apart, alone (test_frames_latency.py, its own pytest call). xdist 3.8 groups by xdist_group marks through the item's
# `_nodeid`, which pytest 9.2 no longer reads, so the grouping is this scheduler's, from the node ids
# (browsing.xdist_group_of).
@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    pages = browsing.toc_pages()

    class PageGroups(LoadScopeScheduling):
        """xdist's scope scheduling (whole groups to a worker, in collection order with
        --no-loadscope-reorder), its scopes this file's groups."""

        def _split_scope(self, nodeid: str) -> str:
            return browsing.xdist_group_of(nodeid, pages) or nodeid

    return PageGroups(config, log)


def _gather_modules() -> None:
    """This process's module state into the summary's (once, at the session's end)."""
    frames = sys.modules.get("test_frames_latency")
    if frames is not None:
        for k in _LATENCY:
            _LATENCY[k] += frames.LATENCY[k]
    ratios = sys.modules.get("test_frames_pixel_ratio")
    if ratios is not None:
        _RATIOS.update(ratios.RESULTS)
        _RATIO_SECONDS.update(ratios.SECONDS)


def _summary_state() -> dict:
    return {"axe": _AXE, "contrast": _CONTRAST, "seconds": dict(_SECONDS), "latency": _LATENCY,
            "ratios": [[r, _RATIOS[r], _RATIO_SECONDS.get(r, 0.0)] for r in _RATIOS]}


def _merge_summary_state(state: dict) -> None:
    _AXE.update(state["axe"])
    _CONTRAST.update(state["contrast"])
    _SECONDS.update(state["seconds"])
    for k in _LATENCY:
        _LATENCY[k] += state["latency"][k]
    for ratio, results, seconds in state["ratios"]:
        _RATIOS[ratio] = results
        _RATIO_SECONDS[ratio] = seconds


def pytest_sessionfinish(session):
    _gather_modules()
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker: the controller prints the summary
        workeroutput["browser_summary"] = json.dumps(_summary_state())


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """xdist's controller: a worker finished; take its part of the summary."""
    state = getattr(node, "workeroutput", {}).get("browser_summary")
    if state:
        _merge_summary_state(json.loads(state))


def pytest_terminal_summary(terminalreporter):
    if _LATENCY["later"]:
        import test_frames_latency

        terminalreporter.section("explorers moved on the static pages (tests/browser/test_frames_latency.py)")
        terminalreporter.write_line(test_frames_latency.latency_report(_LATENCY))
    if _RATIOS:
        import test_frames_pixel_ratio

        terminalreporter.section("explorer pictures at pixel ratios (tests/browser/test_frames_pixel_ratio.py)")
        for ratio in sorted(_RATIOS):
            terminalreporter.write_line(test_frames_pixel_ratio.report(ratio, _RATIOS, _RATIO_SECONDS))
    if not _AXE:
        return
    rules: Counter = Counter()
    pages: Counter = Counter()
    impact = {}
    for found in _AXE.values():
        for rule, (imp, nodes) in found.items():
            rules[rule] += nodes
            pages[rule] += 1
            impact[rule] = imp
    tr = terminalreporter
    tr.section(f"axe-core violations on {len(_AXE)} pages (color-contrast: below)")
    if not rules:
        tr.write_line("none")
    for rule, n in sorted(rules.items(), key=lambda kv: (-kv[1], kv[0])):
        tr.write_line(f"{rule:32} {impact[rule]:9} {n:5} elements on {pages[rule]:2} pages")
    for mode in browsing.COLOUR_MODES:
        found = [c[mode] for c in _CONTRAST.values() if mode in c]
        if not found:
            continue
        total = lambda k: sum(f[k] if isinstance(f[k], int) else len(f[k]) for f in found)  # noqa: E731
        tr.write_line(
            f"color-contrast, {mode} mode: {total('texts')} texts in {total('groups')} groups, "
            f"{total('judged')} judged by axe: {total('violations')} failing, "
            f"{total('incomplete')} undecided, {total('passes')} passing"
        )
        checked = [f["cross_check"] for f in found if "cross_check" in f]
        if checked:
            tr.write_line(
                f"  cross-check, the rule on every text: {sum(c['failing'] for c in checked)} failing, "
                f"{sum(len(c['missed']) for c in checked)} outside a failing group"
            )
    if _SECONDS:
        tr.write_line("time in axe: " + ", ".join(f"{k} {v:.0f} s" for k, v in sorted(_SECONDS.items())))
