"""Issue 40: each output's check lines are one folded line that opens (book/_ext/check_fold.py).

A fresh execution handed Sphinx a cell's printed output in pieces (one per flush), and a cell that
printed other lines between its checks folded each run apart: 5 outputs of the chapters showed two
folds, 8 showed two or more check lines unfolded. Every output block of every chapter now shows at most
one piece of checks: one folded line, or a lone check line.
"""
from __future__ import annotations

import html as html_lib
import re

import pytest

from built_site import HTML_DIR

CHAPTERS = sorted(HTML_DIR.glob("notebooks/0*.html"))
CHECK_LINE = re.compile(r"^✓ .*  \[.*\]\s*$", re.M)
# an output block runs to the next cell or section (a cell's outputs hold no cell and no section)
OUTPUT = re.compile(r'<div class="cell_output[^"]*"')
AFTER = re.compile(r'<div class="cell[ "]|<section\b|</section>')
FOLD = re.compile(r'<details class="cm-checks"><summary>(.*?)</summary><pre class="cm-checks-list">(.*?)</pre>', re.S)
PRE = re.compile(r"<pre>(.*?)</pre>", re.S)


def text(fragment: str) -> str:
    return html_lib.unescape(re.sub(r"<[^>]+>", "", fragment))


def output_blocks(page_html: str) -> list[str]:
    blocks = []
    for start in OUTPUT.finditer(page_html):
        end = AFTER.search(page_html, start.end())
        blocks.append(page_html[start.start(): end.start() if end else len(page_html)])
    return blocks


def check_pieces(block: str) -> list[str]:
    """The folded lines and the unfolded check lines of one cell's output block."""
    folds = [text(summary)[:60] for summary, _ in FOLD.findall(block)]
    loose = [line[:60] for pre in PRE.findall(FOLD.sub("", block)) for line in CHECK_LINE.findall(text(pre))]
    return folds + loose


@pytest.mark.parametrize("page", CHAPTERS, ids=lambda p: p.stem)
def test_each_outputs_check_lines_are_one_folded_line(page):
    page_html = page.read_text(encoding="utf-8")
    blocks = output_blocks(page_html)
    assert blocks, f"{page.name}: no output"
    folded = FOLD.findall(page_html)
    assert folded, f"{page.name}: no folded check lines"
    bad = {i: pieces for i, b in enumerate(blocks) if len(pieces := check_pieces(b)) > 1}
    assert not bad, f"{page.name}: outputs whose checks are not one line: {bad}"
    for summary, listed in folded:
        n = len(CHECK_LINE.findall(text(listed)))
        assert f"✓ {n} numbers agree" in text(summary), f"{page.name}: {text(summary)[:60]} lists {n}"
