"""Every check in the book says where its expected value comes from (issue 23).

``clustermath.check`` prints its expected value in a bracket. Left to itself it
labelled that value ``source``, so a line could credit a source with a number
the book derived (``[source: 8.76 h]`` where source 000 says "eight hours").
Now each check declares its ``kind``: ``quoted`` (the named source prints the
value), ``rebuilt`` (a lost table cell the book rebuilt; ``source`` names the
table), ``derived`` (the book's own number) or ``algebra`` (a second,
independent computation).

This file holds the rule to it in three places:

* every ``check(...)`` call in a chapter notebook passes ``kind=`` with one of
  the four words, and a ``quoted`` or ``rebuilt`` one passes a ``source`` that
  names a source: "source 000" to "source 004" (the texts in the seeds) or a
  work in ``book/references.bib`` by its first author and year ("Daly 2006");
* every ✓ line a chapter stores has the bracket such a call prints, so a check
  reached through a helper cannot slip through either;
* every ``check(...)`` call in the package passes ``kind=``.

Chapters 4 and 5 are revised by their own owners; until they declare their
kinds, their parametrized cases here fail with a message that says so.
"""
from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

import clustermath
from clustermath.check import CHECK_KINDS

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
PACKAGE = Path(clustermath.__file__).parent
NAMED = ("quoted", "rebuilt")
OWNERS = "chapters 4 and 5 are revised by their own owners (issue 23)"


def _references() -> list[tuple[str, str]]:
    """(first author's surname, year) of every work in book/references.bib."""
    text = (ROOT / "book" / "references.bib").read_text()
    works = []
    for entry in re.split(r"\n@", text):
        author = re.search(r"author\s*=\s*\{(.+?)\}\s*,\s*\n", entry, re.S)
        year = re.search(r"year\s*=\s*\{(\d{4})\}", entry)
        if author and year:
            first = author.group(1).split(" and ")[0].strip().strip("{}")
            surname = first.split(",")[0].strip() if "," in first else first.split()[-1]
            works.append((surname.strip("{}"), year.group(1)))
    return works


REFERENCES = _references()
SEEDS = re.compile(r"\bsource 00[0-4]\b")


def names_a_source(source: str) -> bool:
    """True when ``source`` names one of the five source texts or a cited work (surname and year)."""
    if SEEDS.search(source):
        return True
    return any(re.search(rf"\b{re.escape(s)}\b.*\b{y}\b", source) for s, y in REFERENCES)


def _code(cell: dict) -> str:
    """A code cell's source with IPython magics and shell lines blanked (kept as lines for numbering)."""
    lines = "".join(cell["source"]).splitlines()
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in lines)


def _is_check(call: ast.Call) -> bool:
    f = call.func
    return (isinstance(f, ast.Name) and f.id == "check") or (
        isinstance(f, ast.Attribute) and f.attr == "check" and isinstance(f.value, ast.Name)
        and f.value.id in ("clustermath", "cm"))


def _strings(tree: ast.AST) -> dict[str, str]:
    """Names bound once to a string literal in a cell (``SEARCH = "..."``), to read ``source=SEARCH``."""
    bound: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    bound[target.id] = node.value.value
    return bound


def call_problems(code: str, where: str, strings: dict[str, str] | None = None) -> list[str]:
    """What is wrong with each ``check(...)`` call in ``code``: a missing or unknown ``kind``, or a
    ``quoted``/``rebuilt`` check whose ``source`` names no source."""
    tree = ast.parse(code)
    known = {**(strings or {}), **_strings(tree)}
    problems = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and _is_check(node)):
            continue
        at = f"{where} line {node.lineno}"
        label = ast.get_source_segment(code, node.args[0]) if node.args else "?"
        words = {k.arg: k.value for k in node.keywords if k.arg}
        kind = words.get("kind")
        if kind is None:
            problems.append(f"{at}: check({label}, ...) has no kind= (one of {', '.join(CHECK_KINDS)})")
            continue
        if not (isinstance(kind, ast.Constant) and kind.value in CHECK_KINDS):
            problems.append(f"{at}: check({label}, ...) has kind={ast.unparse(kind)}, not one of "
                            f"{', '.join(CHECK_KINDS)}")
            continue
        if kind.value not in NAMED:
            continue
        source = words.get("source")
        text = (source.value if isinstance(source, ast.Constant) and isinstance(source.value, str)
                else known.get(source.id) if isinstance(source, ast.Name) else None)
        if text is None:
            problems.append(f"{at}: check({label}, ...) is {kind.value} but its source= is "
                            f"{'missing' if source is None else 'not a string this test can read'}")
        elif not names_a_source(text):
            problems.append(f"{at}: check({label}, ...) is {kind.value} from {text!r}, which names no "
                            f"source (source 000 to 004, or a cited work's author and year)")
    return problems


BRACKET = re.compile(r"^✓ .*?  \[(?P<origin>[^\[\]]*?): (?P<stated>.*)\]$")


def line_problems(line: str, where: str) -> list[str]:
    """What is wrong with one stored ✓ line: a bracket from an undeclared check, or a quoted/rebuilt
    bracket naming no source."""
    m = BRACKET.match(line)
    if not m:
        return [f"{where}: a check line without a bracket: {line!r}"]
    origin = m.group("origin")
    for kind in NAMED:
        if origin.startswith(f"{kind} from "):
            named = origin[len(kind) + 6:]
            return [] if names_a_source(named) else [f"{where}: {line!r} is {kind} from {named!r}, "
                                                     "which names no source"]
    if origin.split(",")[0] in ("derived by the book", "derived", "algebra"):
        return []
    return [f"{where}: {line!r} comes from an undeclared check (bracket {origin!r})"]


def notebook_problems(path: Path) -> list[str]:
    nb = json.loads(path.read_text())
    problems, strings = [], {}
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "code":
            continue
        code = _code(cell)
        try:
            strings.update(_strings(ast.parse(code)))
            problems += call_problems(code, f"cell {i}", strings)
        except SyntaxError as err:
            problems.append(f"cell {i}: cannot parse ({err})")
        for out in cell.get("outputs", []):
            text = "".join(out.get("text", "")) if out.get("output_type") == "stream" else ""
            for line in text.splitlines():
                if line.startswith("✓ "):
                    problems += line_problems(line, f"cell {i} output")
    return problems


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_check_in_a_chapter_declares_its_kind(path):
    problems = notebook_problems(path)
    later = path.name[:2] in ("04", "05")
    assert not problems, (
        f"{path.relative_to(ROOT)}: {len(problems)} check(s) do not say where their expected value "
        f"comes from{' (' + OWNERS + ')' if later else ''}:\n  " + "\n  ".join(problems))


def test_every_check_in_the_package_declares_its_kind():
    problems = []
    for module in sorted(PACKAGE.rglob("*.py")):
        if module.name == "check.py":
            continue
        tree = ast.parse(module.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and _is_check(node) and not any(k.arg == "kind" for k in node.keywords):
                problems.append(f"{module.relative_to(PACKAGE)} line {node.lineno}")
    assert not problems, "check(...) without kind= in the package: " + ", ".join(problems)


# -- the test's own parts, on planted cases ------------------------------------------------------

def test_a_planted_undeclared_check_is_named():
    code = 'check("peak", x, 6400, unit="TFLOPS")\ncheck("ok", x, 2, kind="derived")\n'
    problems = call_problems(code, "cell 4")
    assert len(problems) == 1 and problems[0].startswith('cell 4 line 1: check("peak", ...) has no kind=')


@pytest.mark.parametrize("source, ok", [
    ("source 000 §15", True), ("source 003", True), ("Daly 2006", True),
    ("Table 5 of Grattafiori et al. 2024", True), ("exact product", False), ("Table 5", False),
    ("source 009", False), ("Daly", False),
])
def test_what_counts_as_naming_a_source(source, ok):
    assert names_a_source(source) is ok
    code = f'check("x", 1, 1, kind="quoted", source={source!r})'
    assert (call_problems(code, "c") == []) is ok


def test_a_source_bound_to_a_name_is_read_and_other_kinds_need_none():
    code = 'S = "source 000 §21"\ncheck("a", 1, 1, kind="rebuilt", source=S)\ncheck("b", 1, 1, kind="algebra")\n'
    assert call_problems(code, "c") == []
    assert "not a string" in call_problems('check("a", 1, 1, kind="quoted", source=f())', "c")[0]
    assert "kind='guessed'" in call_problems('check("a", 1, 1, kind="guessed")', "c")[0]


@pytest.mark.parametrize("line, ok", [
    ("✓ peak: 6,400 TFLOPS  [quoted from source 000 §1: 6,400 TFLOPS]", True),
    ("✓ x: 15.75 GB  [derived, 8 GB × 2 × 63/64: 15.75 GB]", True),
    ("✓ x: 2  [derived by the book: 2]", True),
    ("✓ x: 1,643  [algebra, product of exact fractions: about 1,643]", True),
    ("✓ x: 80  [rebuilt from source 000 §6 table: 80]", True),
    ("✓ x: 2  [source: 2]", False),
    ("✓ x: 8.76 h  [source 002: 8.76 h]", False),
    ("✓ x: 14  [quoted from recount: 14]", False),
])
def test_a_stored_line_shows_a_declared_bracket(line, ok):
    assert (line_problems(line, "c") == []) is ok
