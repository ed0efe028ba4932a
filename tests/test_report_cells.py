"""book/_ext/report_cells.py: which code cells the pages leave out (an explorer's report, nothing else)."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("report_cells", REPO / "book" / "_ext" / "report_cells.py")
cells = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cells)


def test_only_a_bare_report_call_is_left_out():
    assert cells.is_report_cell("print(scaling_explorer.report())")
    assert cells.is_report_cell("print( views.goodput.report() )\n")
    assert not cells.is_report_cell('print("GB each GPU sends per step:")\nprint(traffic.report())')
    assert not cells.is_report_cell("print(decide.report())\nprint(views.rules_text())")
    assert not cells.is_report_cell("report = explorer.report()")
    assert not cells.is_report_cell("print(check(x.report()))")


def test_every_left_out_cell_prints_a_report_that_nbval_still_compares():
    """The pages lose only text the notebook keeps: each such cell has a stored text output."""
    found = 0
    for nb in sorted((REPO / "notebooks").glob("*.ipynb")):
        for cell in json.loads(nb.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] == "code" and cells.is_report_cell("".join(cell["source"])):
                found += 1
                assert any(o.get("output_type") == "stream" for o in cell["outputs"]), nb.name
                assert "nbval-ignore-output" not in cell["metadata"].get("tags", []), nb.name
    assert found >= 20, f"only {found} report cells"


def test_no_chapter_prints_a_report_beside_anything_else():
    """Issue 40: chapter 4 once printed a heading with its traffic report, and its decision report with
    the rules, so the pages kept those raw dumps. A report now sits in a cell of its own, left out of
    the page; what else was printed (the rules and risks) has its own cell and stays."""
    mixed = []
    for nb in sorted((REPO / "notebooks").glob("*.ipynb")):
        for cell in json.loads(nb.read_text(encoding="utf-8"))["cells"]:
            source = "".join(cell["source"])
            if cell["cell_type"] == "code" and ".report()" in source and not cells.is_report_cell(source):
                mixed.append(f"{nb.name}: {source[:60]!r}")
    assert not mixed, mixed
