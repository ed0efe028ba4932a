"""Issue 40: figures, tables and display equations are numbered by chapter (Figure 4.3, Table 5.1,
(2.4)) by Sphinx (numfig, _config.yml), and a chapter shows no other book's numbers.

Chapter 4 once labelled its items "Panel/Figure 13.x" (its source's chapter) and every other chapter
restarted at "Figure 1", so "Figure 4" existed twice. A source's own numbers stay where the prose says
whose they are ("the paper's Table 5"); the chapter's own are Sphinx's.
"""
from __future__ import annotations

import html as html_lib
import json
import re
from pathlib import Path

import pytest

from built_site import HTML_DIR, REPO

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


# -- Tables a code cell prints (book/_ext/worked_tables.py) ------------------------------------------
# A code cell whose stored output is an HTML table carries `cm: table: {name, caption}` in its
# metadata; the page shows it as "Table 1.3: caption", above the table, and {numref} cites it.

NOTEBOOKS = REPO / "notebooks"


def printed_tables(notebook: Path) -> list[tuple[int, dict | None]]:
    """(cell index, its cm.table metadata) for every code cell whose stored output holds an HTML table."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    found = []
    for index, cell in enumerate(cells):
        if cell["cell_type"] != "code":
            continue
        html = "".join("".join(out.get("data", {}).get("text/html", "")) for out in cell.get("outputs", []))
        if "<table" in html:
            found.append((index, (cell["metadata"].get("cm") or {}).get("table")))
    return found


@pytest.mark.parametrize("page", CHAPTERS, ids=lambda p: p.stem)
def test_every_printed_table_is_numbered_with_its_caption(page):
    notebook = NOTEBOOKS / f"{page.stem}.ipynb"
    tables = printed_tables(notebook)
    assert tables, f"{notebook.name}: no printed table"
    unlabelled = [index for index, meta in tables if not meta]
    assert not unlabelled, f"{notebook.name}: cells {unlabelled} print a table without cm.table metadata"
    html = page.read_text(encoding="utf-8")
    n = chapter_number(page)
    for index, meta in tables:
        assert meta["name"].startswith(f"tbl-ch{n}-"), f"{notebook.name} cell {index}: name {meta['name']}"
        caption = re.escape(meta["caption"].replace("'", "’"))
        shown = re.search(rf'<div class="cm-worked-table" id="{re.escape(meta["name"])}">\s*<p>'
                          rf'<span class="caption-number">Table {n}\.\d+ </span>'
                          rf'<span class="caption-text">{caption}[^<]*</span>'
                          rf'<a class="headerlink" href="#{re.escape(meta["name"])}" title="Link to this table">',
                          html)
        assert shown, f"{page.name}: {meta['name']} is not shown as a numbered table captioned {meta['caption']!r}, " \
                      "with a permalink"


def own_caption(cell_html: str) -> str:
    """The words of the <caption> a printed table carries itself (chapter 1's worked tables: the setting
    and each build's counters), spaces collapsed; empty if it has none."""
    found = re.search(r"<caption\b[^>]*>(.*?)</caption>", cell_html, re.S)
    return " ".join(html_lib.unescape(re.sub(r"<[^>]+>", "", found.group(1))).split()) if found else ""


@pytest.mark.parametrize("page", CHAPTERS, ids=lambda p: p.stem)
def test_every_printed_table_is_titled_once(page):
    # Chapter 1's worked tables printed their own bold caption under the book's: two titles. Its words
    # (computed numbers included) now end the numbered caption, and the table keeps no caption of its own.
    cells = json.loads((NOTEBOOKS / f"{page.stem}.ipynb").read_text(encoding="utf-8"))["cells"]
    html = page.read_text(encoding="utf-8")
    for index, meta in printed_tables(NOTEBOOKS / f"{page.stem}.ipynb"):
        stored = "".join("".join(o.get("data", {}).get("text/html", "")) for o in cells[index].get("outputs", []))
        start = html.index(f'<div class="cm-worked-table" id="{meta["name"]}">')
        block = html[start:html.index("</table>", start)]
        assert "<caption" not in block, f"{page.name}: {meta['name']} shows a caption of its own under the book's"
        words = own_caption(stored)
        if words:
            text = re.search(r'<span class="caption-text">([^<]*)</span>', block)
            shown = " ".join(html_lib.unescape(text.group(1)).split()) if text else ""
            # smart quotes aside, every word and number of the table's own caption is in the book's
            assert shown.replace("’", "'").endswith(words.replace("’", "'")), \
                f"{page.name}: {meta['name']}'s own caption {words!r} is not in the numbered caption ({shown!r})"


@pytest.mark.parametrize("page", sorted(HTML_DIR.glob("notebooks/0*.html")), ids=lambda p: p.stem)
def test_every_numbered_table_caption_has_a_permalink(page):
    # as every figure's caption has (Sphinx gives a {table}'s one; worked_tables.py a printed table's)
    html = page.read_text(encoding="utf-8")
    captions = re.findall(r'<span class="caption-number">Table [0-9.]+ </span>.*?</(?:p|caption)>', html, re.S)
    assert captions, f"{page.name}: no numbered table"
    bare = [c[:80] for c in captions if 'class="headerlink"' not in c]
    assert not bare, f"{page.name}: table captions without a permalink: {bare}"


@pytest.mark.parametrize("page", CHAPTERS, ids=lambda p: p.stem)
def test_every_printed_table_scrolls_in_a_box_the_keyboard_reaches(page):
    # A table wider than the column scrolls sideways in its output box; without a tab stop a reader
    # without a mouse cannot scroll it (axe-core: scrollable-region-focusable, serious). Each worked
    # table's box is a named region with tabindex 0, named by the table's caption.
    html = page.read_text(encoding="utf-8")
    wrappers = re.findall(r'<div class="cm-worked-table" id="([^"]+)">\s*<p>.*?</p>(.*?)<table', html, re.S)
    assert wrappers, f"{page.name}: no worked table"
    for name, between in wrappers:
        box = re.search(r'<div aria-label="([^"]+)" class="output text_html" role="region" tabindex="0">', between)
        assert box, f"{page.name}: {name}'s table does not scroll in a box the keyboard reaches"


@pytest.mark.parametrize("page", CHAPTERS, ids=lambda p: p.stem)
def test_every_numbered_reference_resolves_to_its_number(page):
    html = page.read_text(encoding="utf-8")
    assert 'class="xref std std-numref' not in html, f"{page.name}: a {{numref}} that did not resolve"
    # each labelled item's number: the first caption number after its id (a table's caption opens it,
    # a figure's follows its picture)
    numbers = {}
    for item in re.finditer(r'id="((?:tbl|fig)-[^"]+)"', html):
        shown = re.compile(r'<span class="caption-number">((?:Table|Figure) [0-9.]+) </span>').search(html, item.end())
        if shown:
            numbers[item.group(1)] = shown.group(1)
    for target, text in re.findall(r'<a class="reference internal" href="#([^"]+)"><span class="std std-numref">'
                                   r'([^<]+)</span></a>', html):
        if target.startswith(("tbl-", "fig-")):
            assert target in numbers, f"{page.name}: #{target} cited as {text} but not a numbered item of the page"
            assert text.replace("\xa0", " ") == numbers[target], f"{page.name}: #{target} cited as {text}"
