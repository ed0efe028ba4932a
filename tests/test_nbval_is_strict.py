"""The notebook suite really asserts: a changed stored number makes nbval fail.

A copy of chapter 1's opening cells is run under nbval twice: unchanged (it
must pass, so the comparison is sound) and with one stored number altered in
an output (it must fail, naming the cell). Only the first few cells are kept
so the test takes seconds. Both runs use the worker flags `make nbval` uses
(pytest-xdist, each notebook in one worker), and a memory address in a stored
output still passes there: the sanitize file reaches the workers.
"""
from __future__ import annotations

import pathlib
import subprocess
import sys

import nbformat
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
CHAPTER = ROOT / "notebooks" / "01_peak_is_bought.ipynb"
SANITIZE = ROOT / "tests" / "nbval_sanitize.cfg"
STORED = "delivered when half the step is communication: 3,200 TFLOPS"
WORKERS = ["-n", "2", "--dist", "loadfile"]
"""pytest-xdist as `make nbval` runs it (PYTEST_JOBS=2): a notebook's cells stay in one worker."""


def opening_cells(path: pathlib.Path) -> nbformat.NotebookNode:
    """The notebook up to and including the first cell whose stored output holds ``STORED``."""
    nb = nbformat.read(path, as_version=4)
    for i, cell in enumerate(nb.cells):
        text = "".join(o.get("text", "") for o in cell.get("outputs", []))
        if STORED in text:
            nb.cells = nb.cells[: i + 1]
            return nb
    raise AssertionError(f"no stored output in {path.name} contains {STORED!r}")


def run_nbval(path: pathlib.Path, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", *flags, "--nbval", str(path), "--nbval-sanitize-with", str(SANITIZE),
         "-p", "no:cacheprovider", "--rootdir", str(path.parent)],
        capture_output=True, text=True, timeout=300, cwd=path.parent,
    )


@pytest.fixture(scope="module")
def opening() -> nbformat.NotebookNode:
    return opening_cells(CHAPTER)


def test_unchanged_copy_passes(opening, tmp_path):
    copy = tmp_path / "unchanged.ipynb"
    nbformat.write(opening, copy)
    result = run_nbval(copy, *WORKERS)
    assert result.returncode == 0, result.stdout + result.stderr


def test_changed_stored_number_fails(opening, tmp_path):
    changed = 0
    for cell in opening.cells:
        for out in cell.get("outputs", []):
            if STORED in out.get("text", ""):
                out["text"] = out["text"].replace("3,200 TFLOPS  [", "3,201 TFLOPS  [")
                changed += 1
    assert changed == 1
    copy = tmp_path / "tampered.ipynb"
    nbformat.write(opening, copy)
    result = run_nbval(copy, *WORKERS)
    assert result.returncode != 0, "nbval accepted a notebook whose stored number was changed"
    assert "3,201" in result.stdout and "3,200" in result.stdout, result.stdout[-2000:]


def test_changed_number_in_rendered_prose_fails(tmp_path):
    """Chapter 6's prose is markdown a code cell renders (``views.base.prose``): nbval compares
    that ``text/markdown`` output, so a stale number in a paragraph fails like one in a table."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    source = ('from clustermath.views.base import prose\n'
              'prose("""The bubble is {{share}} of the step.""", share=f"{0.313:.1%}")')
    cell = nbformat.v4.new_code_cell(source)
    nb.cells = [cell]
    stored = "The bubble is 31.3% of the step."
    cell.execution_count = 1
    cell.outputs = [nbformat.v4.new_output("execute_result", execution_count=1,
                                           data={"text/markdown": stored,
                                                 "text/plain": "<IPython.core.display.Markdown object>"})]
    good = tmp_path / "prose.ipynb"
    nbformat.write(nb, good)
    result = run_nbval(good)
    assert result.returncode == 0, result.stdout + result.stderr
    cell.outputs[0]["data"]["text/markdown"] = stored.replace("31.3%", "29%")
    stale = tmp_path / "stale.ipynb"
    nbformat.write(nb, stale)
    result = run_nbval(stale)
    assert result.returncode != 0 and "text/markdown" in result.stdout, result.stdout


def test_make_nbval_runs_with_these_workers():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = makefile.split("\nnbval:", 1)[1].split("\n\n", 1)[0]
    assert "$(XDIST) --dist loadfile --nbval notebooks" in recipe, recipe
    assert "\nXDIST := -n $(PYTEST_JOBS)\n" in makefile and "\nPYTEST_JOBS ?= 2\n" in makefile


def test_a_memory_address_is_sanitized_in_the_workers(tmp_path):
    """The address in a repr differs on every run; nbval_sanitize.cfg replaces it, under xdist too."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    cell = nbformat.v4.new_code_cell("object()")
    cell.execution_count = 1
    cell.outputs = [nbformat.v4.new_output("execute_result", execution_count=1,
                                           data={"text/plain": "<object at 0x7f00deadbeef>"})]
    nb.cells = [cell]
    path = tmp_path / "address.ipynb"
    nbformat.write(nb, path)
    result = run_nbval(path, *WORKERS)
    assert result.returncode == 0, result.stdout + result.stderr
