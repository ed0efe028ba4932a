"""Fixtures of the browser checks: the built site served on 127.0.0.1, Debian's
Chromium, and each page of the table of contents visited once (read at both
widths) and kept for every test that asks about it.

Run after the book is built (`make build-check` or `make book`); set
BOOK_HTML_DIR to check a build elsewhere. See browsing.py.
"""

from __future__ import annotations

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
    """Yield visit(page) -> {width: Visit}; each page is loaded once per session."""
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


def pytest_terminal_summary(terminalreporter):
    frames = sys.modules.get("test_frames")
    if frames is not None and frames.LATENCY["later"]:
        terminalreporter.section("explorers moved on the static pages (tests/browser/test_frames.py)")
        terminalreporter.write_line(frames.latency_report())
    ratios = sys.modules.get("test_frames_pixel_ratio")
    if ratios is not None and ratios.RESULTS:
        terminalreporter.section("explorer pictures at pixel ratios (tests/browser/test_frames_pixel_ratio.py)")
        for ratio in sorted(ratios.RESULTS):
            terminalreporter.write_line(ratios.report(ratio))
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
