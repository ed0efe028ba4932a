"""Grade a folder of submitted exercise notebooks: each in a sandbox, verdicts in the grader.

Usage::

    python tools/grade.py SUBMISSIONS [--out grading-output] [--resume | --overwrite]
                          [--timeout 120] [--call-timeout 10] [--jobs 2] [--no-sandbox]

Every file under SUBMISSIONS (subfolders and dotfiles included) gets a row:
graded, or skipped with the reason. Grading a notebook takes three passes
(see ``tools/grading/``):

1. **plan** (once per master, cached): the hidden and public tests of the
   chapter's otter master run against the master's own solutions with
   recording stand-ins, to learn which names they read and which calls
   (function and plain-data arguments) they make;
2. **sandbox**: the notebook runs under bubblewrap (no network, its own PID
   namespace, read-only Python environment, a private tmpfs holding only the
   submission, limits on memory, processes, file size and time) with the
   grader's own interpreter, whatever kernel the notebook names; then the
   recorded names are read and the recorded calls made, each under its own
   time limit; the answers come back as plain JSON. No test and no expected
   value ever enters the sandbox;
3. **verdict**: the tests run in the grader on those plain values. Hidden test
   cases share a question's points; public checks are worth nothing. Hidden
   feedback names the misconception and the section, never the right answer
   or the test's code.

Writes into ``--out`` (refusing an existing results folder unless
``--resume`` continues it or ``--overwrite`` replaces it):

* ``results.jsonl``: one line per file, appended as each one finishes (a
  crash loses nothing already graded; ``--resume`` skips files whose content
  already has a line);
* ``grades-<assignment>.csv``: one per assignment: file, student, status, the
  points of each question, total, possible, flags, note;
* ``files.csv``: every file, graded or skipped, with its status and reason;
* ``feedback/<file>.md``: per question, the score and the message of every
  failing check.

Statuses with points: ``graded``; ``graded-with-errors`` (cells raised, or the
sandbox stopped while evaluating: the questions unaffected keep their
points); ``timeout`` (the notebook ran out of time: what it had defined by
then is graded). Without points: ``crashed``, ``output-too-large``,
``not-a-notebook``, ``empty``, ``too-large``, ``not-a-regular-file``,
``unknown-assignment``, ``grader-error``.

Without bubblewrap the grader refuses to run: a notebook would execute with
the grader's own permissions, able to read the solutions and tests and to
change other files. ``--no-sandbox`` runs it anyway (the verdicts are still
decided outside the notebook's process, but nothing else is protected).
"""
from __future__ import annotations

import argparse
import csv
import hashlib
import json
import os
import pathlib
import queue
import re
import shutil
import stat
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE / "grading"))
import exercises  # noqa: E402  (tools/exercises.py)
import plan as plans_mod  # noqa: E402  (tools/grading/plan.py)
import sandbox  # noqa: E402
import verdict  # noqa: E402

MAX_BYTES = 5 << 20
"""Largest submission read (bytes); larger files are skipped without being read."""
POINT_STATUSES = ("graded", "graded-with-errors", "timeout")
RESULT_FILES = ("results.jsonl", "files.csv")
DEFAULT_CACHE = pathlib.Path(os.environ.get("XDG_CACHE_HOME") or pathlib.Path.home() / ".cache") \
    / "ai-training-clusters-grading"


@dataclass
class Outcome:
    """What grading one file produced (one line of results.jsonl)."""

    file: str
    status: str
    sha256: str = ""
    assignment: str = ""
    student: str = ""
    scores: dict[str, float] = field(default_factory=dict)
    possible: float = 0.0
    note: str = ""
    flags: str = ""
    feedback: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def total(self) -> float:
        return round(sum(self.scores.values()), 6) if self.status in POINT_STATUSES else 0.0


@dataclass
class Entry:
    """One file found under the submissions folder, read (or not) without following links."""

    relpath: str
    data: bytes | None = None
    skip: tuple[str, str] | None = None
    """(status, reason) when the file is not read."""


def _natural(name: str) -> list:
    return [int(part) if part.isdigit() else part.lower() for part in re.split(r"(\d+)", name)]


def _mb(n: int) -> str:
    return f"{n / (1 << 20):.1f} MB"


def collect(submissions: pathlib.Path, exclude: pathlib.Path | None = None,
            max_bytes: int = MAX_BYTES) -> list[Entry]:
    """Every file under ``submissions``, opened with O_NOFOLLOW and read only up to ``max_bytes``."""
    entries: list[Entry] = []
    root = os.fspath(submissions)
    for dirpath, dirnames, filenames, dirfd in os.fwalk(root, follow_symlinks=False):
        rel_dir = os.path.relpath(dirpath, root)
        if exclude is not None and os.path.realpath(dirpath) == os.fspath(exclude):
            dirnames[:] = []
            continue
        for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            rel = name if rel_dir == "." else os.path.join(rel_dir, name)
            entries.append(_read(rel, name, dirfd, max_bytes))
    return sorted(entries, key=lambda e: _natural(e.relpath))


def _read(rel: str, name: str, dirfd: int, max_bytes: int) -> Entry:
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dirfd)
    except OSError as exc:
        if os.path.islink(os.path.join("/proc/self/fd", str(dirfd), name)) or exc.errno == 40:
            return Entry(rel, skip=("not-a-regular-file", "a symbolic link: not followed, not read"))
        return Entry(rel, skip=("not-a-regular-file", f"cannot be opened ({exc.strerror})"))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = "a FIFO" if stat.S_ISFIFO(info.st_mode) else "a socket" if stat.S_ISSOCK(info.st_mode) \
                else "a device" if stat.S_ISCHR(info.st_mode) or stat.S_ISBLK(info.st_mode) else "not a file"
            return Entry(rel, skip=("not-a-regular-file", f"{kind}, not read"))
        if info.st_size > max_bytes:
            return Entry(rel, skip=("too-large", f"{_mb(info.st_size)}, more than the {_mb(max_bytes)} "
                                                 "a notebook may have; not read"))
        chunks, size = [], 0
        while size <= max_bytes:
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > max_bytes:
            return Entry(rel, skip=("too-large", f"more than the {_mb(max_bytes)} a notebook may have"))
        return Entry(rel, data=b"".join(chunks))
    finally:
        os.close(fd)


def student_of(relpath: str) -> str:
    """Who a file belongs to: its top folder, else its name without copy marks (" (1)", "-2", "_copy")."""
    parts = pathlib.PurePosixPath(relpath).parts
    if len(parts) > 1:
        return parts[0]
    stem = parts[0].split(".")[0] or parts[0]
    stem = re.sub(r"(\s*\(\d+\)|[\s_-]*(copy|v\d+|\d+))+$", "", stem, flags=re.IGNORECASE)
    return stem.strip().lower() or parts[0]


def inspect(entry: Entry, graders: dict[str, plans_mod.Plan]) -> tuple[str, str, str, bytes]:
    """Classify a read file: (zero status or "", assignment, note, notebook bytes for the sandbox)."""
    import nbformat

    data = entry.data or b""
    if not data.strip():
        return "empty", "", "the file is empty", b""
    if not entry.relpath.endswith(".ipynb"):
        suffix = pathlib.PurePosixPath(entry.relpath).suffix
        return "not-a-notebook", "", f"a {suffix or 'suffix-less'} file, not an .ipynb notebook", b""
    try:
        text = data.decode("utf-8")
        raw = json.loads(text)
    except UnicodeDecodeError as exc:
        return "not-a-notebook", "", f"not UTF-8 text (byte {exc.start})", b""
    except (ValueError, RecursionError) as exc:
        where = f" (line {exc.lineno}, column {exc.colno})" if hasattr(exc, "lineno") else ""
        return "not-a-notebook", "", f"not valid JSON{where}", b""
    try:
        nb = nbformat.reads(text, as_version=4)
        nbformat.validate(nb)
    except Exception as exc:  # anything that is not a valid notebook
        return "not-a-notebook", "", f"not a valid notebook ({type(exc).__name__})", b""
    del raw
    if not any(c.cell_type == "code" and c.source.strip() for c in nb.cells):
        return "empty", "", "the notebook has no code", b""
    name = nb.metadata.get("otter", {}).get("assignment_name") if isinstance(nb.metadata.get("otter"), dict) else None
    if name is None and len(graders) == 1:
        name = next(iter(graders))
    if not isinstance(name, str) or name not in graders:
        shown = str(name)[:40] if name is not None else ""
        return "unknown-assignment", "", (
            f"assignment {shown!r} is not one of {sorted(graders)}" if shown else
            "the notebook names no assignment (metadata otter.assignment_name)"), b""
    return "", name, "", nbformat.writes(nb).encode()


_SLOTS: "queue.Queue[int]" = queue.Queue()
_SLOTS_MADE = [0]
_SLOTS_LOCK = threading.Lock()


def _slot() -> int:
    try:
        return _SLOTS.get_nowait()
    except queue.Empty:
        with _SLOTS_LOCK:
            _SLOTS_MADE[0] += 1
            return _SLOTS_MADE[0] - 1


def grade_entry(entry: Entry, graders: dict[str, plans_mod.Plan], limits: sandbox.Limits,
                package: pathlib.Path, use_sandbox: bool) -> Outcome:
    """Grade one file: inspect it, run it in a sandbox, decide its verdict here."""
    start = time.monotonic()
    digest = hashlib.sha256(entry.data).hexdigest() if entry.data is not None else ""
    outcome = Outcome(entry.relpath, "", digest, student=student_of(entry.relpath))
    if entry.skip:
        outcome.status, outcome.note = entry.skip
        return outcome
    try:
        status, assignment, note, notebook = inspect(entry, graders)
        outcome.assignment = assignment
        if status:
            outcome.status, outcome.note = status, note
            return outcome
        plan = graders[assignment]
        outcome.possible = plan.possible
        slot = _slot()
        try:
            answers = sandbox.run(notebook, plan.notebook, plan.names, plan.calls, limits, package,
                                  sandbox=use_sandbox, slot=slot)
        finally:
            _SLOTS.put(slot)
        _judge(outcome, plan, answers, limits)
    except Exception as exc:  # a bug of ours must not stop the batch
        outcome.status = "grader-error"
        outcome.note = f"the grader failed: {type(exc).__name__}: {str(exc)[:200]}"
        outcome.scores = {}
    outcome.seconds = round(time.monotonic() - start, 2)
    return outcome


def _judge(outcome: Outcome, plan: plans_mod.Plan, answers: sandbox.Answers, limits: sandbox.Limits) -> None:
    cells = answers.cells if isinstance(answers.cells, dict) else None
    if cells is None:
        outcome.status = {"timeout": "timeout", "output-too-large": "output-too-large"}.get(answers.problem, "crashed")
        outcome.scores = {q: 0.0 for q in plan.points}
        outcome.note = {
            "timeout": f"stopped after {answers.seconds:.0f} s: the notebook did not finish and did not "
                       "give its time back",
            "output-too-large": "the notebook wrote more than the grader reads",
        }.get(answers.problem, "the notebook ended the Python process (os._exit, a crash or a memory "
                               "limit) before it finished; nothing could be graded")
        return
    graded = verdict.grade(plan, answers)
    outcome.scores = graded.scores(plan)
    errors = [str(e)[:200] for e in cells.get("errors", []) if isinstance(e, str)][:20]
    stopped = str(cells.get("stopped") or "")[:200]
    notes = []
    if stopped:
        outcome.status = "timeout"
        notes.append(f"{stopped}; graded on what it had defined by then")
    elif errors or not answers.finished:
        outcome.status = "graded-with-errors"
    else:
        outcome.status = "graded"
    if errors:
        notes.append(f"{len(errors)} cell(s) raised; first: {errors[0]}")
    if not answers.finished:
        notes.append({"timeout": "the sandbox stopped answering while the hidden checks ran",
                      "output-too-large": "the notebook wrote more than the grader reads",
                      }.get(answers.problem, "the sandbox ended while the hidden checks ran"))
    timed_out = sorted({c.question for c in graded.cases if "TookTooLong" in c.message}, key=_natural)
    if timed_out:
        notes.append(f"too slow on a hidden input: {', '.join(timed_out)}")
    outcome.note = "; ".join(notes)
    outcome.feedback = _feedback(plan, graded, errors)


def _feedback(plan: plans_mod.Plan, graded: verdict.Graded, errors: list[str]) -> list[str]:
    lines: list[str] = []
    scores = graded.scores(plan)
    for question in sorted(plan.points, key=_natural):
        lines.append(f"## {question}: {scores[question]:g} of {float(plan.points[question]):g}")
        for case in (c for c in graded.cases if c.question == question and not c.passed):
            kind = "hidden check" if case.hidden else "public check (no points: you can run it yourself)"
            lines.append(f"\n{case.name} ({kind}):\n\n```\n{case.message}\n```")
        lines.append("")
    if errors:
        lines += ["## Cells that raised", ""] + [f"- {e}" for e in errors]
    return lines


# ---------------------------------------------------------------- reports

_FORMULA = ("=", "+", "-", "@", "\t", "\r", "\n")


def cell(text: str) -> str:
    """A CSV text cell a spreadsheet will not run as a formula."""
    text = str(text).replace("\r", " ").replace("\n", " ")
    return "'" + text if text.startswith(_FORMULA) else text


def _num(value: float) -> str:
    return f"{value:g}"


def flag_duplicates(outcomes: list[Outcome]) -> None:
    """Flag files with identical content, and students with more than one file for an assignment."""
    by_sha: dict[str, list[Outcome]] = {}
    by_student: dict[tuple[str, str], list[Outcome]] = {}
    for o in outcomes:
        o.flags = ""
        if o.sha256 and o.status not in ("empty",):
            by_sha.setdefault(o.sha256, []).append(o)
        if o.assignment:
            by_student.setdefault((o.assignment, o.student), []).append(o)
    for group in by_sha.values():
        if len(group) > 1:
            for o in group:
                others = ", ".join(x.file for x in group if x is not o)
                o.flags += f"same content as {others}; "
    for (assignment, student), group in by_student.items():
        if len(group) > 1:
            for o in group:
                others = ", ".join(x.file for x in group if x is not o)
                o.flags += f"duplicate: {student!r} also submitted {others} for {assignment}; "
    for o in outcomes:
        o.flags = o.flags.strip().rstrip(";")


def write_reports(outcomes: list[Outcome], graders: dict[str, plans_mod.Plan], out: pathlib.Path) -> list[pathlib.Path]:
    """files.csv, one grades-<assignment>.csv per assignment, and every feedback file."""
    flag_duplicates(outcomes)
    written = []
    with open(out / "files.csv", "w", newline="") as handle:
        w = csv.writer(handle)
        w.writerow(["file", "student", "assignment", "status", "total", "possible", "flags", "note"])
        for o in outcomes:
            w.writerow([cell(o.file), cell(o.student), cell(o.assignment), o.status, _num(o.total),
                        _num(o.possible) if o.possible else "", cell(o.flags), cell(o.note)])
    written.append(out / "files.csv")
    for assignment, plan in sorted(graders.items()):
        mine = [o for o in outcomes if o.assignment == assignment]
        if not mine:
            continue
        questions = sorted(plan.points, key=_natural)
        path = out / f"grades-{assignment}.csv"
        with open(path, "w", newline="") as handle:
            w = csv.writer(handle)
            w.writerow(["file", "student", "status", *questions, "total", "possible", "flags", "note"])
            for o in mine:
                w.writerow([cell(o.file), cell(o.student), o.status,
                            *[_num(o.scores.get(q, 0.0) if o.status in POINT_STATUSES else 0.0)
                              for q in questions],
                            _num(o.total), _num(plan.possible), cell(o.flags), cell(o.note)])
        written.append(path)
    for o in outcomes:
        write_feedback(o, out)
    return written


def write_feedback(o: Outcome, out: pathlib.Path) -> None:
    path = out / "feedback" / f"{o.file}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    possible = _num(o.possible) if o.possible else "?"
    lines = [f"# {o.file}", "", f"- assignment: {o.assignment or 'unknown'}", f"- status: {o.status}",
             f"- score: {_num(o.total)} of {possible}"]
    if o.note:
        lines.append(f"- note: {o.note}")
    if o.flags:
        lines.append(f"- flags: {o.flags}")
    lines.append("")
    if o.status in POINT_STATUSES:
        lines += o.feedback
    else:
        lines.append("This file could not be graded and scores zero. " + (o.note or ""))
    path.write_text("\n".join(lines).rstrip() + "\n")


# ---------------------------------------------------------------- the batch

class Journal:
    """results.jsonl: one line per finished file, appended and flushed at once."""

    def __init__(self, path: pathlib.Path) -> None:
        self.path, self.lock = path, threading.Lock()

    def load(self) -> dict[tuple[str, str], Outcome]:
        done: dict[tuple[str, str], Outcome] = {}
        if self.path.is_file():
            for line in self.path.read_text().splitlines():
                try:
                    o = Outcome(**json.loads(line))
                except (ValueError, TypeError):
                    continue  # a line cut short by a crash
                done[(o.file, o.sha256)] = o
        return done

    def append(self, o: Outcome) -> None:
        line = json.dumps(asdict(o)) + "\n"
        with self.lock, open(self.path, "a") as handle:
            handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())


def prepare_out(out: pathlib.Path, *, resume: bool, overwrite: bool) -> None:
    """Create ``out``; refuse one that already holds results unless told to resume or overwrite."""
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out must be a folder, got a file: {out}")
    existing = out.is_dir() and any(out.iterdir())
    if existing and not (resume or overwrite):
        raise ValueError(f"{out} already holds results: pass --resume to continue that batch or "
                         "--overwrite to replace it (with make: RESUME=1 or OVERWRITE=1)")
    if existing and overwrite:
        for name in RESULT_FILES:
            (out / name).unlink(missing_ok=True)
        for stale in out.glob("grades-*.csv"):
            stale.unlink()
        shutil.rmtree(out / "feedback", ignore_errors=True)
    out.mkdir(parents=True, exist_ok=True)


def grade_folder(submissions: pathlib.Path, out: pathlib.Path, *, timeout: float = 120.0,
                 call_timeout: float = 10.0, jobs: int = 2, resume: bool = False, overwrite: bool = False,
                 use_sandbox: bool = True, cache: pathlib.Path = DEFAULT_CACHE,
                 solutions: pathlib.Path = exercises.SOLUTIONS, quiet: bool = True,
                 limits: sandbox.Limits | None = None) -> list[Outcome]:
    """Grade every file under ``submissions``; write the reports into ``out``."""
    import clustermath

    if not submissions.is_dir():
        raise ValueError(f"submissions must be a folder, got {submissions}")
    if use_sandbox and (reason := sandbox.unavailable_reason()):
        raise ValueError(f"{reason}.\nWithout a sandbox a notebook runs with your permissions: it can read "
                         "the solutions and the hidden tests, rewrite other submissions and the results, and "
                         "leave processes behind. Install bubblewrap, or pass --no-sandbox to grade anyway.")
    submissions, out = submissions.resolve(), out.resolve()
    prepare_out(out, resume=resume, overwrite=overwrite)
    graders = plans_mod.plans(cache, solutions)
    if not graders:
        raise ValueError(f"solutions must hold at least one master notebook, found none in {solutions}")
    limits = limits or sandbox.Limits(notebook_seconds=timeout, call_seconds=call_timeout,
                                      calls_seconds=max(60.0, 6 * call_timeout))
    package = pathlib.Path(clustermath.__file__).resolve().parent
    journal = Journal(out / "results.jsonl")
    done = journal.load() if resume else {}
    entries = collect(submissions, exclude=out if out.is_relative_to(submissions) else None)
    outcomes: dict[str, Outcome] = {}
    todo = []
    for entry in entries:
        digest = hashlib.sha256(entry.data).hexdigest() if entry.data is not None else ""
        if (entry.relpath, digest) in done:
            outcomes[entry.relpath] = done[(entry.relpath, digest)]
        else:
            todo.append(entry)
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = {pool.submit(grade_entry, e, graders, limits, package, use_sandbox): e for e in todo}
        for future in as_completed(futures):
            o = future.result()
            journal.append(o)
            write_feedback(o, out)
            outcomes[o.file] = o
            if not quiet:
                possible = _num(o.possible) if o.possible else "?"
                print(f"{o.file}  {o.status}  {_num(o.total)} / {possible}  ({o.seconds:.1f} s)", flush=True)
    ordered = [outcomes[e.relpath] for e in entries]
    write_reports(ordered, graders, out)
    return ordered


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("submissions", type=pathlib.Path, help="folder of submitted files (searched recursively)")
    parser.add_argument("--out", type=pathlib.Path, default=pathlib.Path("grading-output"))
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds for one notebook's cells")
    parser.add_argument("--call-timeout", type=float, default=10.0,
                        help="seconds for one call of a student's function on a hidden input")
    parser.add_argument("--jobs", type=int, default=2, help="submissions graded at once")
    parser.add_argument("--resume", action="store_true", help="continue the batch in --out, skipping files done")
    parser.add_argument("--overwrite", action="store_true", help="replace the results already in --out")
    parser.add_argument("--cache", type=pathlib.Path, default=DEFAULT_CACHE,
                        help="where the per-assignment grading plans are kept")
    parser.add_argument("--no-sandbox", action="store_true",
                        help="grade without bubblewrap (unsafe: the notebooks run with your permissions)")
    args = parser.parse_args(argv)
    if args.no_sandbox:
        print("warning: grading WITHOUT a sandbox (--no-sandbox): the notebooks run with your permissions",
              file=sys.stderr)
    start = time.perf_counter()
    try:
        outcomes = grade_folder(args.submissions, args.out, timeout=args.timeout, call_timeout=args.call_timeout,
                                jobs=args.jobs, resume=args.resume, overwrite=args.overwrite,
                                use_sandbox=not args.no_sandbox, cache=args.cache, quiet=False)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.no_sandbox:
        print("warning: graded WITHOUT a sandbox (--no-sandbox)", file=sys.stderr)
    print(f"\n{len(outcomes)} file(s) in {time.perf_counter() - start:.0f} s: see {args.out}/files.csv, "
          f"{args.out}/grades-<assignment>.csv and {args.out}/feedback/")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
