"""The built site offers no dead controls and writes each script once.

A static page runs no kernel: every page that embeds a widget view must load
book/static/static-widgets.js (which switches the controls off and says how
to go live), and its embedded state must come from explorers that carry the
book's class names (so the stylesheet can stack their controls on a phone).
Every page loads the book's stylesheet and declares THEBE_JS_URL at most once.
Standard library only.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from built_site import HTML_DIR, local_target, page_refs

VIEW_MIME = "application/vnd.jupyter.widget-view+json"
STATE_MIME = "application/vnd.jupyter.widget-state+json"
ALL_PAGES = sorted(p for p in HTML_DIR.rglob("*.html") if "_static" not in p.parts
                   and 'http-equiv="Refresh"' not in p.read_text(encoding="utf-8"))  # not the root redirect
WIDGET_PAGES = [p for p in ALL_PAGES if VIEW_MIME in p.read_text(encoding="utf-8")]


def _ids(pages):
    return [p.relative_to(HTML_DIR).as_posix() for p in pages]


@pytest.mark.parametrize("page", WIDGET_PAGES, ids=_ids(WIDGET_PAGES))
def test_widget_pages_switch_their_controls_off(page: Path):
    refs = page_refs(page)
    scripts = [s for s in refs.srcs if s.split("?")[0].endswith("static-widgets.js")]
    assert scripts, f"{page.name} shows widgets but does not load static-widgets.js: its sliders would be dead"
    target = local_target(page, scripts[0])
    assert target.is_file(), target
    text = target.read_text(encoding="utf-8")
    assert "disabled" in text and "make lab" in text


@pytest.mark.parametrize("page", WIDGET_PAGES, ids=_ids(WIDGET_PAGES))
def test_explorers_carry_the_book_classes(page: Path):
    refs = page_refs(page)
    states = [json.loads(body) for attrs, body in refs.scripts if attrs.get("type") == STATE_MIME]
    classes = {c for s in states for m in s["state"].values() for c in m["state"].get("_dom_classes", [])}
    assert "cm-explorer" in classes and "cm-picture" in classes


@pytest.mark.parametrize("page", ALL_PAGES, ids=_ids(ALL_PAGES))
def test_each_inline_script_once(page: Path):
    refs = page_refs(page)
    inline = [body.strip() for attrs, body in refs.scripts if not attrs.get("src") and body.strip()
              and attrs.get("type") not in (STATE_MIME, VIEW_MIME)]
    repeated = {b[:80] for b in inline if inline.count(b) > 1}
    assert not repeated, f"{page.name} writes these scripts twice: {sorted(repeated)}"
    # book.css itself, or the bundle of small stylesheets that holds it (book/_ext/light_pages.py)
    assert any(s.split("?")[0].endswith("book.css") or (
        "cm-styles-" in s and "/* book.css */" in (page.parent / s.split("?")[0]).read_text(encoding="utf-8"))
        for s in refs.styles), f"{page.name} lacks book.css"
