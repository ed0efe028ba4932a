"""Grade a folder of submitted exercise notebooks, without Docker.

Usage::

    python tools/grade.py SUBMISSIONS [--out grading-output] [--timeout 300] [--jobs 2]

Every file directly inside SUBMISSIONS is one submission. Each notebook is
graded by otter-grader (``otter.api.grade_submission``) against the autograder
of its chapter, built from the master notebooks by ``tools/exercises.py``
(the notebook's ``otter.assignment_name`` metadata says which). Every grading
runs in its own process with a time limit, on a private copy of the file, so
the originals are never touched and one bad submission cannot stop the batch.

Writes into ``--out``:

* ``grades.csv``: one row per submission: file, assignment, status, the points
  of every question, total, possible, and a note;
* ``feedback/<file>.md``: per question, the score and the message of every
  failing test, public and hidden (the messages name the misconception a
  wrong answer matches and the section of the book that explains it);
* ``autograder/``: the autograder zips, reused while the masters are unchanged.

Statuses: ``graded``; ``graded-with-errors`` (some cells raised; the questions
they did not affect still earn their points); and, with zero points,
``timeout``, ``crashed`` (the kernel or the grader died), ``not-a-notebook``,
``empty``, ``unknown-assignment`` and ``grader-error``.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import exercises  # noqa: E402  (tools/exercises.py)

ZERO_STATUSES = ("timeout", "crashed", "not-a-notebook", "empty", "unknown-assignment", "grader-error")


@dataclass
class Outcome:
    """What grading one submission produced."""

    file: str
    status: str
    assignment: str = ""
    scores: dict[str, float] = field(default_factory=dict)
    possible: float = 0.0
    note: str = ""
    feedback: list[str] = field(default_factory=list)

    @property
    def total(self) -> float:
        return sum(self.scores.values()) if self.status not in ZERO_STATUSES else 0.0


def _natural(name: str) -> list:
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def _descendants(pid: int) -> list[int]:
    """Process ids of every descendant of ``pid`` (Linux /proc), deepest first."""
    children: dict[int, list[int]] = {}
    for stat in pathlib.Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        fields = text[text.rfind(")") + 2:].split()
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, stack = [], [pid]
    while stack:
        for child in children.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found[::-1]


def _kill_tree(proc: subprocess.Popen) -> None:
    """End a worker we started and everything it started (its kernel runs in its own session)."""
    for pid in _descendants(proc.pid):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def inspect(path: pathlib.Path, graders: dict[str, exercises.Autograder]) -> tuple[str, str, str]:
    """Classify a submission before grading: (status or "", assignment, note)."""
    import nbformat

    if path.stat().st_size == 0:
        return "empty", "", "the file is empty"
    if path.suffix != ".ipynb":
        return "not-a-notebook", "", f"a {path.suffix or 'suffix-less'} file, not an .ipynb notebook"
    try:
        nb = nbformat.read(path, as_version=4)
        nbformat.validate(nb)
    except Exception as exc:  # anything that is not a valid notebook
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return "not-a-notebook", "", f"not a valid notebook ({type(exc).__name__}: {first[:120]})"
    if not any(c.cell_type == "code" and c.source.strip() for c in nb.cells):
        return "empty", "", "the notebook has no code"
    name = nb.metadata.get("otter", {}).get("assignment_name")
    if name is None and len(graders) == 1:
        name = next(iter(graders))
    if name not in graders:
        return "unknown-assignment", str(name or ""), (
            f"assignment {name!r} is not one of {sorted(graders)}" if name else
            "the notebook names no assignment (metadata otter.assignment_name)")
    return "", name, ""


def grade_one(path: pathlib.Path, grader: exercises.Autograder, work: pathlib.Path,
              timeout: float) -> Outcome:
    """Grade one notebook in a worker process with a time limit."""
    work.mkdir(parents=True, exist_ok=True)
    # Under the student notebook's own name: its grader.check cells read that file.
    copy = work / (grader.notebook or path.name)
    shutil.copyfile(path, copy)
    result_file = work / "result.json"
    cmd = [sys.executable, str(pathlib.Path(__file__).resolve()), "--worker",
           str(copy), str(grader.zip_path), str(result_file)]
    env = dict(os.environ, PYTHONHASHSEED="0", MPLBACKEND="Agg")
    with open(work / "worker.log", "w") as log:
        proc = subprocess.Popen(cmd, cwd=work, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True, env=env)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_tree(proc)
            return Outcome(path.name, "timeout", grader.assignment, possible=grader.possible,
                           note=f"stopped after {timeout:g} s (a cell or a test runs too long)")
        for pid in _descendants(proc.pid):  # a kernel left behind by a worker that died
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    if proc.returncode != 0 or not result_file.is_file():
        tail = (work / "worker.log").read_text(errors="replace").strip().splitlines()[-1:] or ["no output"]
        return Outcome(path.name, "grader-error", grader.assignment, possible=grader.possible,
                       note=f"the grader failed: {tail[0][:200]}")
    data = json.loads(result_file.read_text())
    outcome = Outcome(path.name, data["status"], grader.assignment, possible=grader.possible,
                      note=data.get("note", ""), feedback=data.get("feedback", []))
    if outcome.status not in ZERO_STATUSES:
        outcome.scores = {q: float(data["scores"].get(q, 0.0)) for q in grader.points}
    return outcome


def worker(submission: str, zip_path: str, result_path: str) -> int:
    """Grade one submission in this process and write a JSON result (run by ``grade_one``)."""
    import otter.api

    result: dict = {"status": "graded", "scores": {}, "note": "", "feedback": []}
    try:
        graded = otter.api.grade_submission(submission, zip_path, quiet=True)
    except Exception as exc:
        kind = type(exc).__name__
        result["status"] = "crashed" if "Dead" in kind or "Kernel" in kind else "grader-error"
        result["note"] = f"{kind}: {str(exc).strip().splitlines()[0][:200] if str(exc).strip() else ''}"
        pathlib.Path(result_path).write_text(json.dumps(result))
        return 0
    if graded.has_catastrophic_failure():
        result["status"] = "crashed"
        result["note"] = f"grading did not complete: {str(graded.catastrophic_error)[:200]}"
        pathlib.Path(result_path).write_text(json.dumps(result))
        return 0
    errors = []
    for index, cell in enumerate(getattr(graded, "notebook", None) and graded.notebook.cells or []):
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                errors.append(f"cell {index}: {out.get('ename')}: {str(out.get('evalue'))[:120]}")
    if errors:
        result["status"] = "graded-with-errors"
        result["note"] = f"{len(errors)} cell(s) raised; first: {errors[0]}"
    feedback = []
    for name in sorted(graded.results, key=_natural):
        tf = graded.results[name]
        result["scores"][name] = tf.score
        feedback.append(f"## {name}: {tf.score:g} of {tf.possible:g}")
        for tcr in tf.test_case_results:
            if tcr.passed:
                continue
            kind = "hidden test" if tcr.test_case.hidden else "public test"
            message = (tcr.message or "").replace("❌ Test case failed\n", "").strip()
            if "WrongAnswer: " in message:  # the feedback helper's message says it all
                message = message.split("WrongAnswer: ", 1)[1]
            feedback.append(f"\n{tcr.test_case.name} ({kind}):\n\n```\n{message}\n```")
        feedback.append("")
    if errors:
        feedback += ["## Cells that raised", ""] + [f"- {e}" for e in errors]
    result["feedback"] = feedback
    pathlib.Path(result_path).write_text(json.dumps(result))
    return 0


def write_reports(outcomes: list[Outcome], graders: dict[str, exercises.Autograder],
                  out: pathlib.Path) -> pathlib.Path:
    """Write grades.csv and one feedback file per submission; return the CSV's path."""
    questions = sorted({q for g in graders.values() for q in g.points}, key=_natural)
    csv_path = out / "grades.csv"
    with open(csv_path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["file", "assignment", "status", *questions, "total", "possible", "note"])
        for o in outcomes:
            possible = o.possible or (next(iter(graders.values())).possible if len(graders) == 1 else "")
            row = [o.file, o.assignment, o.status]
            own = graders[o.assignment].points if o.assignment in graders else {}
            row += [f"{o.scores.get(q, 0.0):g}" if q in own or o.status in ZERO_STATUSES else ""
                    for q in questions]
            row += [f"{o.total:g}", f"{possible:g}" if possible != "" else "", o.note]
            writer.writerow(row)
    feedback_dir = out / "feedback"
    if feedback_dir.exists():
        shutil.rmtree(feedback_dir)
    feedback_dir.mkdir()
    for o in outcomes:
        possible = f"{o.possible:g}" if o.possible else "?"
        lines = [f"# {o.file}", "", f"- assignment: {o.assignment or 'unknown'}",
                 f"- status: {o.status}", f"- score: {o.total:g} of {possible}"]
        if o.note:
            lines.append(f"- note: {o.note}")
        lines.append("")
        if o.status in ZERO_STATUSES:
            lines.append("This submission could not be graded and scores zero. " + (o.note or ""))
        else:
            lines += o.feedback
        (feedback_dir / f"{o.file}.md").write_text("\n".join(lines).rstrip() + "\n")
    return csv_path


def grade_folder(submissions: pathlib.Path, out: pathlib.Path, *, timeout: float = 300.0,
                 jobs: int = 2, solutions: pathlib.Path = exercises.SOLUTIONS) -> list[Outcome]:
    """Grade every file directly in ``submissions``; write the reports into ``out``."""
    if not submissions.is_dir():
        raise ValueError(f"submissions must be a folder, got {submissions}")
    submissions, out = submissions.resolve(), out.resolve()  # workers run in their own folders
    out.mkdir(parents=True, exist_ok=True)
    graders = exercises.autograders(out / "autograder", solutions)
    if not graders:
        raise ValueError(f"solutions must hold at least one master notebook, found none in {solutions}")
    files = sorted((p for p in submissions.iterdir() if p.is_file() and not p.name.startswith(".")),
                   key=lambda p: _natural(p.name))
    work_root = pathlib.Path(tempfile.mkdtemp(prefix="grading-"))

    def run(item: tuple[int, pathlib.Path]) -> Outcome:
        index, path = item
        status, assignment, note = inspect(path, graders)
        if status:
            grader = graders.get(assignment) or (next(iter(graders.values())) if len(graders) == 1 else None)
            return Outcome(path.name, status, assignment, possible=grader.possible if grader else 0.0, note=note)
        return grade_one(path, graders[assignment], work_root / f"{index:04d}", timeout)

    try:
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            outcomes = list(pool.map(run, enumerate(files)))
    finally:
        shutil.rmtree(work_root, ignore_errors=True)
    write_reports(outcomes, graders, out)
    return outcomes


def main(argv: list[str]) -> int:
    if argv[:1] == ["--worker"]:
        return worker(*argv[1:4])
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("submissions", type=pathlib.Path, help="folder of submitted files")
    parser.add_argument("--out", type=pathlib.Path, default=pathlib.Path("grading-output"))
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per submission")
    parser.add_argument("--jobs", type=int, default=2, help="submissions graded at once")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    try:
        outcomes = grade_folder(args.submissions, args.out, timeout=args.timeout, jobs=args.jobs)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    width = max([len(o.file) for o in outcomes] + [4])
    for o in outcomes:
        possible = f"{o.possible:g}" if o.possible else "?"
        print(f"{o.file:<{width}}  {o.status:<18}  {o.total:>5g} / {possible:<4}  {o.note}")
    print(f"\n{len(outcomes)} submission(s) in {time.perf_counter() - start:.0f} s: "
          f"{args.out / 'grades.csv'} and {args.out / 'feedback'}/")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
