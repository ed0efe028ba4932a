"""The committed notebooks store each cell's printed output as ``make refresh`` leaves it: one stream per run.

A kernel flushes a cell's printed lines in as many pieces as it likes, and the count changes from run to
run; ``tools/refresh.py`` joins consecutive pieces (nbconvert's ``CoalesceStreamsPreprocessor``), so a
refresh changes only what changed. A notebook stored with split pieces was executed some other way."""
from __future__ import annotations

import json
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted(p.relative_to(ROOT).as_posix() for folder in ("notebooks", "solutions", "exercises", "book")
                   for p in (ROOT / folder).rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)


def split_streams(path: pathlib.Path) -> list[int]:
    """The cells (by index) whose outputs hold two consecutive streams of one name."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    found = []
    for number, cell in enumerate(cells):
        outputs = cell.get("outputs", [])
        if any(a["output_type"] == b["output_type"] == "stream" and a["name"] == b["name"]
               for a, b in zip(outputs, outputs[1:])):
            found.append(number)
    return found


def test_every_notebook_is_found():
    assert len([n for n in NOTEBOOKS if n.startswith("notebooks/")]) >= 6


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_printed_output_is_one_stream_per_run(name):
    assert split_streams(ROOT / name) == [], f"{name}: re-run it with tools/refresh.py (make refresh)"


def test_split_streams_are_found(tmp_path):
    """The check finds a split, and not two streams of different names."""
    stream = lambda name, text: {"output_type": "stream", "name": name, "text": text}  # noqa: E731
    cells = [{"cell_type": "code", "outputs": [stream("stdout", "a\n"), stream("stderr", "b\n")]},
             {"cell_type": "code", "outputs": [stream("stdout", "a\n"), stream("stdout", "b\n")]}]
    path = tmp_path / "split.ipynb"
    path.write_text(json.dumps({"cells": cells}), encoding="utf-8")
    assert split_streams(path) == [1]
