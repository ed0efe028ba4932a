"""Every page names the book's icon, and the icon is in the site (no 404 for /favicon.ico in the console)."""
from __future__ import annotations

import re

import pytest

from built_site import HTML_DIR

PAGES = sorted([*HTML_DIR.glob("book/*.html"), *HTML_DIR.glob("notebooks/*.html"), *HTML_DIR.glob("exercises/*.html")])


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(HTML_DIR).as_posix())
def test_every_page_names_the_icon_and_it_exists(page):
    found = re.search(r'<link rel="(?:shortcut )?icon" href="([^"]+)"', page.read_text(encoding="utf-8"))
    assert found, f"{page.name}: no <link rel=icon>"
    assert (page.parent / found.group(1)).resolve().is_file(), f"{page.name}: the icon {found.group(1)} is missing"
