"""The built chapters render their widgets without internet.

Runs after `jupyter-book build . --all -W` (`make build-check`); set
BOOK_HTML_DIR to check a build elsewhere. For every
chapter page under _build/html/notebooks/ that shows a widget view, require.js
and @jupyter-widgets/html-manager (embed-amd.js) must come from the book's own
_static/ folder (vendored in book/widgets-js/, wired up by `nb_ipywidgets_js`
in _config.yml), not from a CDN; the files must exist in the build; and the
page must embed the widget state they render from. Standard library only; the
real in-browser check is tools/check_widgets_offline.py (needs Chromium).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from built_site import HTML_DIR, local_target, page_refs

STATE_MIME = "application/vnd.jupyter.widget-state+json"
VIEW_MIME = "application/vnd.jupyter.widget-view+json"
# The scripts the widget pages need, in the order they must load.
WIDGET_JS = ("require.js", "widgets-paths.js", "embed-amd.js")
REMOTE = re.compile(r"^(https?:)?//", re.I)
WIDGET_SCRIPT = re.compile(r"require(\.min)?\.js|html-manager|embed-amd|widgets-paths", re.I)


def widget_pages() -> list[Path]:
    notebooks = HTML_DIR / "notebooks"
    if not notebooks.is_dir():
        return []
    return sorted(
        p for p in notebooks.rglob("*.html") if VIEW_MIME in p.read_text(encoding="utf-8")
    )


PAGES = widget_pages()


def test_some_chapter_shows_widgets():
    if not PAGES:
        pytest.skip(f"no chapter page under {HTML_DIR / 'notebooks'} contains a widget view")


@pytest.mark.parametrize("page", PAGES, ids=[p.relative_to(HTML_DIR).as_posix() for p in PAGES])
def test_widgets_load_locally(page: Path):
    refs = page_refs(page)
    scripts, srcs = refs.scripts, refs.srcs

    remote = [s for s in srcs if REMOTE.match(s) and WIDGET_SCRIPT.search(s)]
    assert not remote, f"widget JavaScript loaded from the internet: {remote}"

    # Each vendored script appears once, in order, and exists in the build.
    found = []
    for name in WIDGET_JS:
        hits = [s for s in srcs if Path(urlsplit(s).path).name == name]
        assert len(hits) == 1, f"expected one <script src=.../{name}>, found {hits}"
        found.append(srcs.index(hits[0]))
        target = local_target(page, hits[0])
        assert target.is_file(), f"{hits[0]} -> {target} does not exist in the build"
        assert HTML_DIR.resolve() in target.parents, f"{hits[0]} points outside {HTML_DIR}"
    assert found == sorted(found), f"scripts out of order, expected {WIDGET_JS}: {srcs}"

    # crossorigin on a local script makes Chrome refuse it under file://.
    with_cors = [
        attrs["src"]
        for attrs, _ in scripts
        if attrs.get("src") and WIDGET_SCRIPT.search(attrs["src"]) and "crossorigin" in attrs
    ]
    assert not with_cors, f"crossorigin breaks file:// pages: {with_cors}"


@pytest.mark.parametrize("page", PAGES, ids=[p.relative_to(HTML_DIR).as_posix() for p in PAGES])
def test_widget_state_is_embedded(page: Path):
    scripts = page_refs(page).scripts
    states = [text for attrs, text in scripts if attrs.get("type") == STATE_MIME]
    assert len(states) == 1, f"expected one <script type={STATE_MIME!r}>, found {len(states)}"
    state = json.loads(states[0])["state"]
    assert state, "the embedded widget state is empty"
    views = [json.loads(text) for attrs, text in scripts if attrs.get("type") == VIEW_MIME]
    missing = [v["model_id"] for v in views if v["model_id"] not in state]
    assert not missing, f"widget views without a model in the embedded state: {missing}"
