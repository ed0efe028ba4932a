"""No graded answer of chapter 6's exercises can be copied from the chapter or its own prompt
(issues 27 and 39).

Every value a hidden test grades (a number, or a tuple of numbers, handed in under a
``qN_`` name) is compared with every number the chapter's stored outputs print (text,
check lines and HTML tables), as printed, as a share (a printed percentage over 100) and
as a percentage, at the tolerance its test grades it with. A value a student could read
off the chapter's page teaches nothing; the exercise must ask for something the chapter
does not print. Integers, flags and names are left out: a count or a choice cannot be
told apart from the many small whole numbers a page prints for other reasons.
"""
from __future__ import annotations

import html
import json
import math
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
PAIRS = {"ch06_exercises": "06_do_the_models_hold"}
"""Exercise master -> the chapter whose printed numbers it must not repeat."""

NUMBER = re.compile(r"(?<![\w.])[-−+]?\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?")
GRADED = re.compile(r"fb\.expect\(\s*(q\d+_\w+)\s*,(?P<rest>[^\n]*)")
REL = re.compile(r"\brel=([0-9.e-]+)")


def _source(cell: dict) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


UNITS_NOT_PERCENT = {"q4_mtbf_min": "minutes between interruptions"}
"""Graded answers in a unit a percentage cannot be: a number the chapter prints with a percent sign is
not compared with them (chapter 6 prints a case's error as +23.2%; q4's answer is 23.2 minutes)."""


def printed_numbers(notebook: pathlib.Path, *, percent: bool | None = None) -> list[float]:
    """Every number in a notebook's stored outputs: stream text, plain text and HTML (tags dropped);
    ``percent=False`` leaves out those printed with a percent sign, ``True`` keeps only them."""
    nb = json.loads(notebook.read_text())
    texts = []
    for cell in nb["cells"]:
        for out in cell.get("outputs", []):
            if "text" in out:
                texts.append("".join(out["text"]))
            data = out.get("data", {})
            for kind in ("text/plain", "text/html", "text/markdown"):
                if kind in data:
                    part = "".join(data[kind])
                    texts.append(html.unescape(re.sub(r"<[^>]+>", " ", part)) if kind == "text/html" else part)
    if percent is not None:
        texts = [" ".join(t for t in text.split() if t.rstrip(")],.;:").endswith("%") == percent)
                 for text in texts]
    return numbers_in(texts)


def numbers_in(texts: list[str]) -> list[float]:
    """Every non-zero number the texts print (thousands separators and the minus sign read)."""
    numbers = []
    for text in texts:
        for token in NUMBER.findall(text):
            token = token.replace(",", "").replace("−", "-")
            try:
                numbers.append(float(token))
            except ValueError:
                continue
    return [x for x in numbers if x != 0.0]


def graded_values(master: pathlib.Path) -> dict[str, tuple[float, list[float]]]:
    """name -> (the tolerance its hidden test grades it at, its numbers), from the master's solutions."""
    nb = json.loads(master.read_text())
    tolerance: dict[str, float] = {}
    namespace: dict = {"__name__": "__exercise__"}
    in_tests = False
    for cell in nb["cells"]:
        text = _source(cell)
        if cell["cell_type"] == "raw":
            in_tests = text.startswith("# BEGIN TESTS") or (in_tests and not text.startswith("# END TESTS"))
            continue
        if cell["cell_type"] != "code":
            continue
        if in_tests:
            for match in GRADED.finditer(text):
                rel = REL.search(match.group("rest"))
                if rel:
                    tolerance[match.group(1)] = max(tolerance.get(match.group(1), 0.0), float(rel.group(1)))
            continue
        exec(compile(text, "<master>", "exec"), namespace)
    out = {}
    for name, rel in tolerance.items():
        value = namespace[name]
        items = value if isinstance(value, (tuple, list)) else (value,)
        numbers = [float(v) for v in items
                   if isinstance(v, float) and not isinstance(v, bool) and math.isfinite(v)]
        if numbers:
            out[name] = (rel, numbers)
    return out


def hits(values: dict[str, tuple[float, list[float]]], printed: list[float]) -> list[str]:
    found = []
    for name, (rel, numbers) in values.items():
        for v in numbers:
            for x in printed:
                for shown in (x, x / 100.0, 100.0 * x):
                    if abs(abs(v) - abs(shown)) <= rel * abs(shown):
                        found.append(f"{name} = {v:.6g} is printed by the chapter as {x:g}")
    return sorted(set(found))


def test_a_percentage_is_told_from_a_plain_number(tmp_path):
    texts = ["error +23.2%, and 23.2 min", "(12.5%) of 7"]
    path = tmp_path / "probe.ipynb"
    path.write_text(json.dumps({"cells": [{"outputs": [{"text": t}]} for t in texts]}))
    assert printed_numbers(path, percent=False) == [23.2, 7.0]
    assert printed_numbers(path, percent=True) == [23.2, 12.5]


def test_the_comparison_finds_a_copied_number():
    printed = [32.69, 14.24, 1.5, 2048.0]
    assert hits({"q3_x": (1e-3, [32.6874])}, printed) == ["q3_x = 32.6874 is printed by the chapter as 32.69"]
    assert hits({"q6_x": (1e-3, [0.1424])}, printed)            # a share printed as a percentage
    assert hits({"q5_x": (1e-3, [-14.24])}, printed)            # a sign does not hide it
    assert not hits({"q5_x": (1e-3, [14.27])}, printed)          # outside the tolerance
    assert printed_numbers.__doc__ and NUMBER.findall("✓ x: −20.3%  [a: 1,234.5 s] 8.57e-3") == \
        ["−20.3", "1,234.5", "8.57e-3"]


@pytest.mark.parametrize("master, chapter", sorted(PAIRS.items()))
def test_no_graded_answer_is_a_number_the_chapter_prints(master, chapter):
    values = graded_values(ROOT / "solutions" / f"{master}.ipynb")
    assert len(values) >= 8, "every graded number of the master is compared"
    printed = printed_numbers(ROOT / "notebooks" / f"{chapter}.ipynb")
    assert len(printed) > 500
    plain = printed_numbers(ROOT / "notebooks" / f"{chapter}.ipynb", percent=False)
    assert len(plain) < len(printed)
    assert hits({k: v for k, v in values.items() if k not in UNITS_NOT_PERCENT}, printed) == []
    assert hits({k: v for k, v in values.items() if k in UNITS_NOT_PERCENT}, plain) == []


def prompt_numbers(master: pathlib.Path) -> list[float]:
    """Every number in a master's prompts: its markdown cells that the student copy keeps."""
    nb = json.loads(master.read_text())
    return numbers_in([_source(cell) for cell in nb["cells"] if cell["cell_type"] == "markdown"
                       and "solutions-only" not in cell.get("metadata", {}).get("tags", [])])


@pytest.mark.parametrize("master", sorted(PAIRS))
def test_no_graded_answer_is_a_number_its_prompt_prints(master):
    path = ROOT / "solutions" / f"{master}.ipynb"
    printed = prompt_numbers(path)
    assert len(printed) > 100
    assert hits(graded_values(path), printed) == []
