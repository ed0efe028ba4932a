"""Pages leave out the plain-text report printed under an explorer; the notebooks keep it.

Each explorer is followed by a cell ``print(<explorer>.report())`` that prints the explorer's default
state as text. nbval skips widget output, so that text is how the stored notebook pins the explorer's
numbers, and a reader in JupyterLab sees it under the live widget. On the page it only repeated the
table the explorer already shows, in identifiers ("achieved_tflops"), as a raw dump. While Sphinx
reads a chapter (``doctree-read``), every code cell whose whole source is such a call is removed from
the page; nothing else is touched, and the executed notebook is unchanged.
"""
from __future__ import annotations

import re
from typing import Any

from docutils import nodes

REPORT_CELL = re.compile(r"^\s*print\(\s*[A-Za-z_][\w.]*\.report\(\)\s*\)\s*$")


def is_report_cell(source: str) -> bool:
    """Whether a code cell's whole source prints an explorer's report (and nothing else)."""
    return bool(REPORT_CELL.match(source))


def _source(cell: nodes.Element) -> str:
    for child in cell.findall(nodes.container):
        if child.get("nb_element") == "cell_code_source":
            return child.astext()
    return ""


def _drop_reports(app: Any, doctree: nodes.document) -> None:
    for cell in list(doctree.findall(nodes.container)):
        if cell.get("nb_element") == "cell_code" and is_report_cell(_source(cell)):
            cell.parent.remove(cell)


def setup(app: Any) -> dict:
    app.connect("doctree-read", _drop_reports)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
