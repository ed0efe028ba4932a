"""Read a submitted file as a notebook: in the verdict worker, under the judge's time limit.

Everything here touches bytes a student made, so it runs in the worker process
(``judge.py``), never in the batch: a file that is slow to parse costs the
grader at most the judge's time limit. Each step is linear in the file's size:
``json`` and ``nbformat`` parse once; the check cells are found line by line
with a pattern anchored at the line's start that cannot backtrack (the old
``^\\s*grader\\.check`` with ``re.MULTILINE`` rescanned every run of blank lines
from each line start: a 5 MB notebook of newlines kept the batch 269 s);
the names a cell assigns come from one ``ast`` parse, capped: a cell over
``MAX_PARSE_CHARS`` characters (or past ``MAX_PARSE_TOTAL`` for the notebook)
is not parsed, and the report says so. The worker itself runs under an
address-space limit (``judge.WORKER_MEMORY``).
"""
from __future__ import annotations

import ast
import json
import re

MAX_CELLS = 5000
"""Code cells looked at for check calls and assigned names."""
MAX_CELL_CHARS = 100_000
"""Characters of one cell looked at for check calls."""
MAX_NAMES = 200
"""Names kept per cell."""
MAX_PARSE_CHARS = 50_000
"""Largest cell whose code is parsed for the names it assigns (the book's largest cell has 4,315
characters). A larger cell is not parsed: it is flagged in the report, and its model calls are charged to
the question whose check follows it only. Parsing is the one step here that is not small and linear: a
5.24 MB cell of ``a,a,a,...`` took the worker to 3.2 GB and about 33 s (issue 44)."""
MAX_PARSE_TOTAL = 500_000
"""Characters parsed per notebook, all cells together (cells past it are flagged like large ones)."""
_CHECK = re.compile(r"""grader\.check\([ \t]*["']([A-Za-z0-9_]{1,40})["']""")


def check_of(line: str) -> str | None:
    """The question of a ``grader.check("qN")`` line (leading blanks allowed), else None."""
    body = line.lstrip(" \t")
    if not body.startswith("grader.check("):
        return None
    match = _CHECK.match(body[:80])
    return match.group(1) if match else None


def cell_questions(cells: list) -> dict[int, str]:
    """Cell index -> the question of the first ``grader.check("qN")`` at or after it (the student copies
    put each question's check cell under its answers). ``cells``: (index, cell_type, source)."""
    found: dict[int, str] = {}
    pending: list[int] = []
    for index, kind, source in cells[:MAX_CELLS]:
        if kind != "code":
            continue
        pending.append(index)
        question = None
        for line in source[:MAX_CELL_CHARS].splitlines():
            question = check_of(line)
            if question:
                break
        if question:
            for i in pending:
                found[i] = question
            pending = []
    return found


def assigned_names(source: str) -> list[str]:
    """The top-level names a cell assigns or defines (``q3_racks = ...``, ``def f``, ``import x as y``),
    from one parse; [] when the cell does not parse (IPython magics, a syntax error)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    names: list[str] = []
    for node in ast.walk(tree):
        if len(names) >= MAX_NAMES:
            break
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.append(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, ast.alias):
            names.append((node.asname or node.name).split(".")[0])
    return sorted(set(names))


def inspect(data: bytes, is_notebook: bool, suffix: str, assignments: list[str]) -> dict:
    """Classify a read file: {"status", "note"} for a zero status, else {"assignment", "notebook",
    "cells", "names"}: the notebook's bytes for the sandbox, its cell -> question map, its cell ->
    assigned names map."""
    import nbformat

    if not data.strip():
        return {"status": "empty", "note": "the file is empty"}
    if not is_notebook:
        return {"status": "not-a-notebook", "note": f"a {suffix or 'suffix-less'} file, not an .ipynb notebook"}
    try:
        text = data.decode("utf-8")
        json.loads(text)
    except UnicodeDecodeError as exc:
        return {"status": "not-a-notebook", "note": f"not UTF-8 text (byte {exc.start})"}
    except (ValueError, RecursionError) as exc:
        where = f" (line {exc.lineno}, column {exc.colno})" if hasattr(exc, "lineno") else ""
        return {"status": "not-a-notebook", "note": f"not valid JSON{where}"}
    try:
        nb = nbformat.reads(text, as_version=4)
        nbformat.validate(nb)
    except Exception as exc:  # noqa: BLE001  (anything that is not a valid notebook)
        return {"status": "not-a-notebook", "note": f"not a valid notebook ({type(exc).__name__})"}
    if not any(c.cell_type == "code" and c.source.strip() for c in nb.cells):
        return {"status": "empty", "note": "the notebook has no code"}
    otter = nb.metadata.get("otter")
    name = otter.get("assignment_name") if isinstance(otter, dict) else None
    if name is None and len(assignments) == 1:
        name = assignments[0]
    if not isinstance(name, str) or name not in assignments:
        shown_name = str(name)[:40] if name is not None else ""
        return {"status": "unknown-assignment", "note": (
            f"assignment {shown_name!r} is not one of {sorted(assignments)}" if shown_name else
            "the notebook names no assignment (metadata otter.assignment_name)")}
    cells = [(i, c.cell_type, c.source) for i, c in enumerate(nb.cells)]
    names, unparsed = parsed_names(cells)
    return {"status": "", "assignment": name, "notebook": nbformat.writes(nb).encode(),
            "cells": cell_questions(cells), "names": {i: n for i, n in names.items() if n},
            "unparsed": unparsed}


def parsed_names(cells: list) -> tuple[dict[int, list[str]], list[tuple[int, int]]]:
    """Cell index -> assigned names, for the code cells within ``MAX_PARSE_CHARS`` each and
    ``MAX_PARSE_TOTAL`` together; and (index, characters) of the code cells not parsed (at most 20)."""
    names: dict[int, list[str]] = {}
    unparsed: list[tuple[int, int]] = []
    total = 0
    for index, kind, source in cells[:MAX_CELLS]:
        if kind != "code":
            continue
        if len(source) > MAX_PARSE_CHARS or total + len(source) > MAX_PARSE_TOTAL:
            if len(unparsed) < 20:
                unparsed.append((index, len(source)))
            continue
        total += len(source)
        names[index] = assigned_names(source)
    return names, unparsed
