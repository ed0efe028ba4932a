"""Every student their own numbers: one exercise notebook per student and chapter (issue 31).

Usage::

    python tools/variants.py ROSTER.csv OUT [--keys] [--key-file PATH] [--no-execute]

For every chapter whose master declares a case (``CASE = Case(...)`` in a cell tagged ``case``, see
``clustermath.feedback.variants``), each student of the roster gets
``OUT/<student>/chNN_exercises.ipynb``: the student copy with the prompts rendered from the student's
case and one line in the case cell that sets it. The case is drawn by ``hmac-sha256`` of the course key,
the student and the chapter; the key is made on first use in ``.course-key`` (which git ignores) and its
path printed. ``--keys`` also writes each student's answer key, their case solved and executed, as
``OUT/_keys/<student>/chNN_exercises.ipynb`` (``--no-execute``: solved, not executed).

The roster is a CSV with a ``student`` column and, optionally, an ``email`` column: with it, each case is
drawn for the student's e-mail address, as the Gradescope autograder draws it from the submission's
metadata (``tools/exercises.py autograder DIR --key-file``). Other columns are ignored. A bad row (an empty name, a
duplicate, a name that is not a safe file name) stops the tool with an error naming the row, before
anything is written. ``make grade SUBMISSIONS=OUT ROSTER=...`` grades each notebook on its student's case.
"""
from __future__ import annotations

import argparse
import copy
import pathlib
import sys
import tempfile
import time

import nbformat

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import exercises  # noqa: E402  (tools/exercises.py)

KEYS_FOLDER = "_keys"


def chapters_with_cases(solutions: pathlib.Path = exercises.SOLUTIONS) -> list[pathlib.Path]:
    """The masters that declare a case, in chapter order."""
    return [m for m in exercises.masters(solutions)
            if exercises.case_of(nbformat.read(m, as_version=4)) is not None]


def answer_key(variant: nbformat.NotebookNode, master: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A student's notebook with every answer cell holding the master's solution; its case cell (the
    student's case) is kept."""
    nb = copy.deepcopy(variant)
    solutions = [c for c in master.cells if c.cell_type == "code" and exercises.SOLUTIONS_ONLY not in
                 exercises._tags(c) and not _is_test(c.source)]
    answers = [c for c in nb.cells if c.cell_type == "code" and not exercises._is_plumbing(c)]
    if len(solutions) != len(answers):
        raise RuntimeError(f"the master has {len(solutions)} solution cells and the student copy "
                           f"{len(answers)} answer cells: they must pair up")
    for cell, solution in zip(answers, solutions):
        if exercises.CASE_TAG not in exercises._tags(cell):
            cell.source = exercises._without_markers(solution.source)
    return nb


def _is_test(source: str) -> bool:
    body = source.lstrip()
    return body.startswith("def test_") or (body.startswith("# HIDDEN") and "def test_" in body)


def execute(path: pathlib.Path, timeout: int = 120) -> None:
    """Run a notebook top to bottom in a fresh kernel in its own folder and store its outputs."""
    import nbclient

    nb = nbformat.read(path, as_version=4)
    nbclient.NotebookClient(nb, timeout=timeout, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}}).execute()
    nbformat.write(nb, path)
    (path.parent / ".OTTER_LOG").unlink(missing_ok=True)  # the check cells' log: not part of the key


def write_variants(roster: pathlib.Path, out: pathlib.Path, *, keys: bool = False, key_file=None,
                   run: bool = True, solutions: pathlib.Path = exercises.SOLUTIONS,
                   announce=print) -> dict[str, list[pathlib.Path]]:
    """Write every student's notebooks (and answer keys); returns {"notebooks": [...], "keys": [...]}."""
    from clustermath.feedback.variants import course_key, draw, roster_identities

    students = roster_identities(roster.read_text(encoding="utf-8"), str(roster))  # before anything is written
    if KEYS_FOLDER in students:
        raise ValueError(f"{roster}: a student may not be named {KEYS_FOLDER!r} (the answer keys' folder)")
    masters = chapters_with_cases(solutions)
    if not masters:
        raise ValueError(f"no master in {solutions} declares a case: there are no variants to write")
    key = course_key(key_file, announce=announce)
    written: dict[str, list[pathlib.Path]] = {"notebooks": [], "keys": []}
    for master in masters:
        master_nb = nbformat.read(master, as_version=4)
        declared = exercises.case_of(master_nb)
        with tempfile.TemporaryDirectory(prefix="otter-assign-") as tmp:
            student, _ = exercises.otter_assign(master, pathlib.Path(tmp) / "dist")
            assigned = nbformat.read(student, as_version=4)
        cases = set()
        for name, drawn_for in students.items():
            case = draw(key, drawn_for, declared)
            cases.add(case)
            nb = exercises.student_copy(assigned, master.stem, case)
            folder = out / name
            folder.mkdir(parents=True, exist_ok=True)
            nbformat.write(nb, folder / master.name)
            written["notebooks"].append(folder / master.name)
            if keys:
                folder = out / KEYS_FOLDER / name
                folder.mkdir(parents=True, exist_ok=True)
                nbformat.write(answer_key(nb, master_nb), folder / master.name)
                written["keys"].append(folder / master.name)
        announce(f"{master.stem}: {len(students)} notebooks, {len(cases)} distinct cases")
    if keys and run:
        start = time.perf_counter()
        for path in written["keys"]:
            execute(path)
        announce(f"{len(written['keys'])} answer keys executed in {time.perf_counter() - start:.0f} s")
    return written


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("roster", type=pathlib.Path, help="CSV with a 'student' column")
    parser.add_argument("out", type=pathlib.Path, help="folder for OUT/<student>/chNN_exercises.ipynb")
    parser.add_argument("--keys", action="store_true", help="also write the answer keys, OUT/_keys/<student>/")
    parser.add_argument("--key-file", type=pathlib.Path, default=None, help="the course key (default .course-key)")
    parser.add_argument("--no-execute", action="store_true", help="write the answer keys without running them")
    args = parser.parse_args(argv)
    try:
        written = write_variants(args.roster, args.out, keys=args.keys, key_file=args.key_file,
                                 run=not args.no_execute)
    except (ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {len(written['notebooks'])} notebooks and {len(written['keys'])} answer keys under {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
