"""The PDF edition (`make pdf`): it opens, has a plausible page count, and every
chapter's title is in it, each starting a page; its bookmarks hold every chapter
with its sections, every page is numbered, the solutions' code is printed (not
folded away), and nothing is wider than the printed column (tools/pdf.py's
layout.json). Skipped until `make pdf` has run (PDF_PATH overrides
_build/pdf/book.pdf)."""

from __future__ import annotations

import json
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
def reader():
    if not PDF.is_file():
        pytest.skip(f"no PDF at {PDF}: run `make pdf`")
    from pypdf import PdfReader

    return PdfReader(str(PDF))


@pytest.fixture(scope="module")
def pages(reader) -> list[str]:
    return [p.extract_text() or "" for p in reader.pages]


def bookmarks(reader) -> list[tuple[int, str]]:
    """(depth, title) of every bookmark, in order."""
    found: list[tuple[int, str]] = []

    def walk(items, depth: int) -> None:
        for item in items:
            if isinstance(item, list):
                walk(item, depth + 1)
            else:
                found.append((depth, item.title))

    walk(reader.outline, 0)
    return found


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


def test_bookmarks_hold_every_chapter_and_its_sections(reader):
    marks = bookmarks(reader)
    assert marks, "the PDF has no bookmarks"
    titles = [t for _, t in marks]
    for number, (doc, title) in enumerate(browsing.chapter_titles().items(), start=1):
        at = next((i for i, t in enumerate(titles) if t == f"{number}. {title}"), None)
        assert at is not None, f"{doc}: no bookmark reads {number}. {title!r}"
        depth = marks[at][0]
        sections = [d for d, _ in marks[at + 1:at + 40]]
        assert sections and sections[0] > depth, f"{doc}: the bookmark {title!r} has no sections under it"
    # a heading's text as written: not run together at a line break, not cut, not doubled
    doubled = [t for t in titles if len(t) > 3 and len(t) % 2 == 0 and t[:len(t) // 2] == t[len(t) // 2:]]
    assert not doubled, f"bookmarks with their text twice: {doubled[:5]}"


def test_every_page_is_numbered(reader, pages):
    total = len(pages)
    unnumbered = [i + 1 for i, text in enumerate(pages)
                  if not re.search(rf"(^|\s){i + 1}\s*/\s*{total}(\s|$)", text)]
    assert not unnumbered, f"pages without 'n / {total}' in their footer: {unnumbered[:10]}"


def test_the_solutions_code_is_printed(pages):
    whole = squash(" ".join(pages))
    master = json.loads((browsing.REPO / "book" / "solutions" / "ch02_exercises.ipynb").read_text(encoding="utf-8"))
    code = next("".join(c["source"]) for c in master["cells"]
                if c["cell_type"] == "code" and "hide-cell" in c["metadata"].get("tags", []))
    student = (browsing.REPO / "exercises" / "ch02_exercises.ipynb").read_text(encoding="utf-8")
    # lines only the solution has (the exercise page prints the starter code, which shares the rest)
    answer = [line for line in code.splitlines() if len(squash(line)) > 12 and line.strip() not in student][:4]
    assert answer, "chapter 2's first solution has no line of its own to look for"
    for line in answer:
        assert squash(line) in whole, f"chapter 2's first solution is not printed: {line!r}"


def test_nothing_is_wider_than_the_printed_column():
    layout = PDF.parent / "layout.json"
    if not layout.is_file():
        pytest.skip("no layout.json beside the PDF (tools/pdf.py writes it)")
    wide = json.loads(layout.read_text(encoding="utf-8"))
    assert not wide, f"{len(wide)} elements cut at the right edge of the page, e.g. " + "; ".join(
        f"{w['what']} in #{w['section']} by {w['cut_px']} px ({w['text'][:40]!r})" for w in wide[:6])
