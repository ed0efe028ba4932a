"""Every page of the table of contents, read in Debian's Chromium at a laptop's
1366x900 and a phone's 390x844 (see browsing.py for how a page is visited).

Each check guards a defect the reader review (issue 8) found and fixed: it
failed on the site that had the defect (inert drawers below 960 px, 0-px
controls at phone width, dead controls on static pages, 1-px table padding,
unnamed sliders and pictures, the doubled THEBE_JS_URL declaration).
"""

from __future__ import annotations


import pytest

import browsing

PAGES = browsing.toc_pages()
WIDGET_PAGES = [p for p in PAGES if p.startswith("notebooks/")]
WIDTHS = list(browsing.WIDTHS)


def per_width():
    """Parametrize over the laptop and phone widths."""
    return pytest.mark.parametrize("width", WIDTHS)


def pages(known_pages: dict[str, object] | None = None, only=None):
    known_pages = known_pages or {}
    chosen = only if only is not None else PAGES
    return pytest.mark.parametrize(
        "page", [pytest.param(p, marks=known_pages[p]) if p in known_pages else p for p in chosen]
    )


def describe(items, n=8) -> str:
    items = list(items)
    more = f"\n  ... and {len(items) - n} more" if len(items) > n else ""
    return "\n  " + "\n  ".join(str(i) for i in items[:n]) + more


@pages()
def test_loads_with_no_console_error(site, page):
    v = site(page)["desktop"]
    # Any message fails: issue 8 found the doubled "Identifier 'THEBE_JS_URL' has already been
    # declared" and the theme's "Got invalid theme mode" on first visit in every console.
    assert not v.render, f"{page}: {v.render}"
    assert not v.failed, f"{page}: local requests failed:{describe(v.failed)}"
    assert not v.console, f"{page}: console errors:{describe(v.console)}"


@pages()
def test_no_request_leaves_localhost(site, page):
    v = site(page)["desktop"]
    assert not v.offsite, f"{page}: requests to the internet (blocked):{describe(v.offsite)}"


@per_width()
@pages(only=WIDGET_PAGES)
def test_explorers_show_picture_and_controls(site, page, width):
    v = site(page)[width]
    bad = []
    for e in v.dom["explorers"]:
        where = f"{e['section']} ({e['title'][:30]})"
        if e["arrangement"] == "overlapping":
            bad.append(f"{where}: picture and controls overlap")
        if e["zero"]:
            bad.append(f"{where}: zero width: {', '.join(e['zero'][:4])}")
        if e["offscreen"]:
            bad.append(f"{where}: controls off the screen: {', '.join(e['offscreen'][:4])}")
    assert not bad, f"{page} at {width}:{describe(bad)}"


def test_chapters_have_explorers(site):
    found = {p: len(site(p)["desktop"].dom["explorers"]) for p in WIDGET_PAGES}
    assert all(found.values()), f"a chapter shows no explorer: {found}"


@per_width()
@pages()
def test_navigation_and_contents_drawers_open(site, page, width):
    d = site(page)[width].drawers
    bad = []
    for which, name in (("primary", "navigation"), ("secondary", "page contents")):
        got = d[which]
        if width == "desktop":
            # A laptop shows the navigation; its button may hide and show it again.
            if which == "primary" and not (got["before"] or got["after"]):
                bad.append(f"{name}: not shown, and its button does not open it")
        else:
            if not got["button"]:
                if which == "primary":
                    bad.append(f"{name}: no visible button")
                continue
            if got["before"]:
                bad.append(f"{name}: drawer open before its button was pressed")
            elif not got["after"]:
                why = f" ({got['error']})" if got.get("error") else ""
                bad.append(f"{name}: the button does not open its drawer{why}")
    assert not bad, f"{page} at {width}:{describe(bad)}"


@pages()
@pytest.mark.parametrize("width", WIDTHS)
def test_nothing_clipped_without_scrollbar(site, page, width):
    clipped = site(page)[width].dom["clipped"]
    shown = [f"{c['section']}: {c['verdict']}: {c['text']}" for c in clipped]
    assert not shown, f"{page} at {width}, {len(shown)} clipped:{describe(shown)}"


@pages()
def test_no_raw_markup_in_text(site, page):
    raw = site(page)["desktop"].dom["raw"]
    shown = [f"{r['kind']} in {r['section']}: ...{r['text']}..." for r in raw]
    assert not shown, f"{page}:{describe(shown)}"


MIN_PADDING_PX = 4  # per side, horizontally: "0.00034,624" is what 1 px gives


@pages()
def test_tables_have_readable_padding(site, page):
    tables = site(page)["desktop"].dom["tables"]
    tight = [
        f"{t['section']}: {t['minPadding']:g} px ({t['cells']} cells; {t['head'][:40]})"
        for t in tables
        if t["minPadding"] < MIN_PADDING_PX
    ]
    assert not tight, f"{page}: tables with under {MIN_PADDING_PX} px padding:{describe(tight)}"


@pages(only=WIDGET_PAGES)
def test_static_explorers_say_how_to_go_live(site, page):
    bad = []
    for e in site(page)["desktop"].dom["explorers"]:
        where = e["section"]
        if not e["note"]:
            bad.append(f"{where}: no line saying how to make it live (launch button or `make lab`)")
        if e["live"]:
            bad.append(f"{where}: {len(e['live'])} controls move with no kernel: {', '.join(e['live'][:3])}")
    assert not bad, f"{page}:{describe(bad)}"


BLOCKING = ("critical", "serious")


# book/references.html passes since book/_ext/citation_list.py writes each bibliography entry as
# role="listitem": docutils' role="doc-biblioentry" (deprecated in DPUB-ARIA 1.1) failed axe's
# aria-required-children (critical) there.
@pages()
def test_accessibility_no_serious_violation(site, page):
    found = site(page)["desktop"].axe or {}
    bad = [f"{rule} ({impact}): {n} elements" for rule, (impact, n) in found.items() if impact in BLOCKING]
    assert not bad, f"{page}: axe-core:{describe(bad)}"


@pages()
def test_accessibility_text_contrast_in_light_and_dark_mode(site, page):
    """axe-core's color-contrast (serious) on every text a reader can see, hidden cells and
    dropdowns opened, in the theme's light and dark mode (browsing.run_contrast)."""
    found = site(page)["desktop"].contrast
    assert found, f"{page}: the contrast check did not run"
    light, dark = found["light"], found["dark"]
    assert light["background"] != dark["background"], f"{page}: dark mode did not change the page"
    bad = [
        f"{mode}: {v['target']} ({v['group']} texts alike): {v['summary']}"
        for mode, r in found.items()
        for v in r["violations"]
    ]
    assert not bad, f"{page}: axe-core color-contrast:{describe(bad)}"
    # AXE_CONTRAST=1: axe's rule as is, on every text, found nothing the groups missed.
    missed = [f"{mode}: {m}" for mode, r in found.items() for m in r.get("cross_check", {}).get("missed", [])]
    assert not missed, f"{page}: failing texts outside every failing group:{describe(missed)}"
