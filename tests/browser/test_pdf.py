"""The PDF edition (`make pdf`): it opens, has a plausible page count, and every
chapter's title is in it, each starting a page. Skipped until `make pdf` has run
(PDF_PATH overrides _build/pdf/book.pdf)."""

from __future__ import annotations

import os
import re
import unicodedata
from pathlib import Path

import pytest

import browsing

PDF = Path(os.environ.get("PDF_PATH", browsing.REPO / "_build" / "pdf" / "book.pdf"))


def squash(text: str) -> str:
    """Text without spacing, hyphenation or ligature differences (PDF text extraction varies;
    the printed "efficiency" comes back with the single ligature character "ﬃ")."""
    return re.sub(r"[^0-9a-z]+", "", unicodedata.normalize("NFKC", text).lower())


@pytest.fixture(scope="module")
def pages() -> list[str]:
    if not PDF.is_file():
        pytest.skip(f"no PDF at {PDF}: run `make pdf`")
    from pypdf import PdfReader

    return [p.extract_text() or "" for p in PdfReader(str(PDF)).pages]


def test_page_count(pages):
    chapters = browsing.chapter_titles()
    # At least a page per document of the table of contents; a runaway print is far longer.
    assert len(browsing.toc_files()) <= len(pages) <= 600, f"{len(pages)} pages"
    assert len(pages) >= 4 * len(chapters), f"{len(pages)} pages for {len(chapters)} chapters"


def test_every_chapter_title_starts_a_page(pages):
    # The numbered title ("3. Where the traffic lands") at the top of a page: the chapter starts
    # there, not where the exercises' title ("Exercises: where the traffic lands") happens to.
    tops = [squash(p)[:120] for p in pages]
    whole = squash(" ".join(pages))
    for number, (doc, title) in enumerate(browsing.chapter_titles().items(), start=1):
        assert squash(title) in whole, f"{doc}: title {title!r} is not in the PDF"
        assert any(t.startswith(squash(f"{number}. {title}")) for t in tops), (
            f"{doc}: {number}. {title!r} does not start a page")
