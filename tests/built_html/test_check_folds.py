"""Issue 40: each output's check lines are one folded line that opens (book/_ext/check_fold.py).

A fresh execution handed Sphinx a cell's printed output in pieces (one per flush), and a cell that
printed other lines between its checks folded each run apart: 5 outputs of the chapters showed two
folds, 8 showed two or more check lines unfolded. Every output block of every chapter now shows at most
one piece of checks: one folded line, or a lone check line.
"""
from __future__ import annotations

import re

import pytest
from bs4 import BeautifulSoup

from built_site import HTML_DIR

CHAPTERS = sorted(HTML_DIR.glob("notebooks/0*.html"))
CHECK_LINE = re.compile(r"^✓ .*  \[.*\]\s*$", re.M)


def check_pieces(output) -> list[str]:
    """The folded lines and the unfolded check lines of one cell's output block."""
    folds = [d.summary.get_text(" ", strip=True)[:60] for d in output.select("details.cm-checks")]
    loose = [line[:60] for pre in output.find_all("pre") if not pre.find_parent("details")
             for line in CHECK_LINE.findall(pre.get_text())]
    return folds + loose


@pytest.mark.parametrize("page", CHAPTERS, ids=lambda p: p.stem)
def test_each_outputs_check_lines_are_one_folded_line(page):
    soup = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
    outputs = soup.select("div.cell_output")
    assert outputs, f"{page.name}: no output"
    folded = [d for d in soup.select("details.cm-checks")]
    assert folded, f"{page.name}: no folded check lines"
    bad = {i: pieces for i, o in enumerate(outputs) if len(pieces := check_pieces(o)) > 1}
    assert not bad, f"{page.name}: outputs whose checks are not one line: {bad}"
    for d in folded:
        listed = CHECK_LINE.findall(d.select_one("pre.cm-checks-list").get_text())
        assert f"✓ {len(listed)} numbers agree" in d.summary.get_text(), f"{page.name}: {d.summary.get_text()[:60]}"
