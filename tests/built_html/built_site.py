"""What the tests of the built site share: where it is, and a parser for its pages.

The site is `_build/html` at the repository root, or BOOK_HTML_DIR to check a
build elsewhere (`--path-output /tmp/x` writes /tmp/x/_build/html). Importing
this module skips the calling test module when the book has not been built.
Standard library only.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

REPO = Path(__file__).resolve().parent.parent.parent
HTML_DIR = Path(os.environ.get("BOOK_HTML_DIR", REPO / "_build" / "html")).resolve()

if not (HTML_DIR / "index.html").is_file():
    pytest.skip(
        f"the book is not built ({HTML_DIR} has no index.html): run `jupyter-book build . --all` first",
        allow_module_level=True,
    )


@dataclass
class PageRefs:
    """A page's <script> elements (attributes and inline text) and stylesheet links, in order."""

    scripts: list[tuple[dict[str, str | None], str]] = field(default_factory=list)
    styles: list[str] = field(default_factory=list)

    @property
    def srcs(self) -> list[str]:
        """The ``src`` of every script that has one, in order."""
        return [attrs["src"] for attrs, _ in self.scripts if attrs.get("src")]


class _Parser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.refs = PageRefs()
        self._current: dict[str, str | None] | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "script":
            self._current, self._text = a, []
        elif tag == "link" and (a.get("rel") or "") == "stylesheet" and a.get("href"):
            self.refs.styles.append(a["href"])

    def handle_data(self, data):
        if self._current is not None:
            self._text.append(data)

    def handle_endtag(self, tag):
        if tag == "script" and self._current is not None:
            self.refs.scripts.append((self._current, "".join(self._text)))
            self._current = None


def page_refs(page: Path) -> PageRefs:
    """Parse one built page."""
    parser = _Parser()
    parser.feed(page.read_text(encoding="utf-8"))
    parser.close()
    return parser.refs


def local_target(page: Path, url: str) -> Path:
    """The file a relative URL on ``page`` points at."""
    return (page.parent / unquote(urlsplit(url).path)).resolve()
