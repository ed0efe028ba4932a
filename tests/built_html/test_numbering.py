"""Issue 40: figures, tables and display equations are numbered by chapter (Figure 4.3, Table 5.1,
(2.4)) by Sphinx (numfig, _config.yml), and a chapter shows no other book's numbers.

Chapter 4 once labelled its items "Panel/Figure 13.x" (its source's chapter) and every other chapter
restarted at "Figure 1", so "Figure 4" existed twice. A source's own numbers stay where the prose says
whose they are ("the paper's Table 5"); the chapter's own are Sphinx's.
"""
from __future__ import annotations

import re

import pytest

from built_site import HTML_DIR

CHAPTERS = sorted(HTML_DIR.glob("notebooks/0*.html"))


def chapter_number(page) -> int:
    return int(page.name[:2])


def caption_numbers(html: str, kind: str) -> list[str]:
    return re.findall(rf'<span class="caption-number">{kind} ([0-9.]+) </span>', html)


def equation_numbers(html: str) -> list[str]:
    return re.findall(r'<span class="eqno">\(([0-9.]+)\)', html)


@pytest.mark.parametrize("page", CHAPTERS, ids=lambda p: p.stem)
def test_numbers_carry_the_chapter_and_run_in_order(page):
    html = page.read_text(encoding="utf-8")
    n = chapter_number(page)
    for kind, found in (("Figure", caption_numbers(html, "Figure")), ("Table", caption_numbers(html, "Table")),
                        ("equation", equation_numbers(html))):
        assert found == [f"{n}.{k}" for k in range(1, len(found) + 1)], f"{page.name}: {kind} numbers {found}"


@pytest.mark.parametrize("page", CHAPTERS, ids=lambda p: p.stem)
def test_every_figure_and_display_equation_is_numbered(page):
    html = page.read_text(encoding="utf-8")
    pictures = len(re.findall(r'<div class="cell_output[^"]*"[^>]*>\s*<figure|<img[^>]+src="[^"]*_images/[^"]+\.png"', html))
    figures = caption_numbers(html, "Figure")
    assert figures, f"{page.name}: no numbered figure"
    # every picture a cell draws sits in a numbered figure
    unnumbered = re.findall(r'<div class="cell_output docutils container">\s*<img ', html)
    assert not unnumbered, f"{page.name}: {len(unnumbered)} pictures without a figure number"
    display = len(re.findall(r'<div class="math notranslate nohighlight"', html))
    assert len(equation_numbers(html)) == display, f"{page.name}: {display} display equations, " \
        f"{len(equation_numbers(html))} numbered"
    assert pictures >= len(figures)


@pytest.mark.parametrize("page", CHAPTERS, ids=lambda p: p.stem)
def test_no_source_chapter_numbers_as_the_books_own(page):
    text = re.sub(r"<[^>]+>", " ", page.read_text(encoding="utf-8"))
    stray = re.findall(r"\b(?:Panel|Figure|Table) 13\.\d+", text)
    assert not stray, f"{page.name}: the source's chapter-13 numbering shown as the book's: {sorted(set(stray))}"
