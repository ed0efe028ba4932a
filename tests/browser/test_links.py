"""Every internal link and anchor of the built site resolves (standard library only).

For every page under _build/html (not _static/ or _sources/), every <a href>
that is not external (http:, mailto:, ...) must point at a file of the build,
and a #fragment must name an id (or <a name>) on the target page.
"""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

import browsing

HTML_DIR = browsing.HTML_DIR
SKIP_DIRS = {"_static", "_sources", "_images"}


class _Links(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.hrefs: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"])
        if tag == "a":
            if a.get("name"):
                self.ids.add(a["name"])
            if a.get("href") is not None:
                self.hrefs.append(a["href"])


_PARSED: dict[Path, _Links] = {}


def parsed(path: Path) -> _Links:
    if path not in _PARSED:
        p = _Links()
        p.feed(path.read_text(encoding="utf-8", errors="replace"))
        _PARSED[path] = p
    return _PARSED[path]


def site_pages() -> list[Path]:
    if not HTML_DIR.is_dir():
        return []
    return sorted(
        p for p in HTML_DIR.rglob("*.html") if not SKIP_DIRS & set(p.relative_to(HTML_DIR).parts)
    )


def broken_links(pages: list[Path], root: Path = HTML_DIR) -> tuple[list[str], int]:
    """(every internal link or anchor of these pages that does not resolve, links checked)."""
    broken, checked = [], 0
    for page in pages:
        for href in parsed(page).hrefs:
            parts = urlsplit(href)
            if parts.scheme or parts.netloc or href.startswith(("javascript:", "mailto:")):
                continue
            checked += 1
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            if target.is_dir():
                target = target / "index.html"
            where = f"{page.relative_to(root)}: {href}"
            if not target.is_file():
                broken.append(f"{where} (no file {target})")
                continue
            if parts.fragment and target.suffix == ".html":
                if unquote(parts.fragment) not in parsed(target).ids:
                    broken.append(f"{where} (no anchor #{parts.fragment})")
    return broken, checked


def test_every_internal_link_and_anchor_resolves():
    pages = site_pages()
    if not pages:
        pytest.skip(f"the book is not built ({HTML_DIR})")
    broken, checked = broken_links(pages)
    print(f"{checked} internal links on {len(pages)} pages")
    assert checked > 100, f"only {checked} internal links found: is the build complete?"
    assert not broken, f"{len(broken)} of {checked} internal links broken:\n  " + "\n  ".join(broken[:20])


def test_xdist_groups_keep_a_page_and_a_module_together():
    """browsing.xdist_group_of: every check of one page in one group (one visit under xdist), the moves of
    one page's explorers in another, the drill whole, anything else free; a page whose name holds a hyphen
    is still told apart."""
    pages = ["book/intro.html", "notebooks/01_peak.html", "book/a-b.html", "book/a.html"]
    group = lambda nodeid: browsing.xdist_group_of(nodeid, pages)  # noqa: E731
    assert group("tests/browser/test_pages.py::test_no_raw_markup_in_text[book/intro.html]") == "page:book/intro.html"
    assert group("tests/browser/test_pages.py::test_page_fits_the_screen[notebooks/01_peak.html-phone]") \
        == group("tests/browser/test_pages.py::test_nothing_clipped_without_scrollbar[desktop-notebooks/01_peak.html]") \
        == "page:notebooks/01_peak.html"
    assert group("tests/browser/test_pages.py::test_page_fits_the_screen[book/a-b.html-phone]") == "page:book/a-b.html"
    assert group("tests/browser/test_pages.py::test_page_fits_the_screen[book/a.html-phone]") == "page:book/a.html"
    assert group("tests/browser/test_frames.py::test_every_control_moves_its_explorer[notebooks/01_peak.html]") \
        == "frames:notebooks/01_peak.html"
    assert group("tests/browser/test_frames.py::test_drill_missing_index") is None
    assert group("tests/browser/test_checks_catch_defects.py::test_padding_check_catches_a_tight_table") \
        == "test_checks_catch_defects.py"
    assert group("tests/browser/test_frames_pixel_ratio.py::test_picture_on_screen_is_the_frame[2.0]") is None
    assert group("tests/browser/test_links.py::test_every_internal_link_and_anchor_resolves") is None
