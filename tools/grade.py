"""Grade a folder of submitted exercise notebooks: each in a sandbox, verdicts in the grader.

Usage::

    python tools/grade.py SUBMISSIONS [--out grading-output] [--resume | --overwrite]
                          [--timeout 60] [--call-timeout 10] [--total-timeout 120] [--jobs 2]
                          [--no-sandbox] [--roster ROSTER.csv [--key-file PATH] [--default-case]]

With ``--roster`` (issue 31), each file is graded on the case of the student it belongs to (its top
folder, or its file name, never the notebook's content), drawn with the course key as
``tools/variants.py`` drew it; the tests' ``CASE`` parameter is the grader's, never the notebook's. A file
that lost points is also tried on every other student's case, and flagged when its answers fit one of
them better than its own ("fits another student's case", naming the student). A file of a name not on
the roster gets the status ``not-on-roster`` (with ``--default-case``: graded on the book's case, and
flagged). Without ``--roster`` every file is graded on the default case, as before.

Every file under SUBMISSIONS (subfolders and dotfiles included) gets a row:
graded, or skipped with the reason. Grading a notebook takes three passes
(see ``tools/grading/``):

1. **plan** (once per master, cached): the hidden and public tests of the
   chapter's otter master run against the master's own solutions with
   recording stand-ins, to learn which names they read and which calls
   (function and plain-data arguments) they make;
2. **sandbox**: the notebook runs under bubblewrap (no network, its own PID
   namespace, read-only Python environment, a private tmpfs holding only the
   submission, a seccomp filter refusing the kernel state sandboxes would
   share, ``/proc/sys`` hidden, a fresh uid; for a chapter whose every
   question asks for the student's own code, a package without the model
   they must not call, see ``grading/boundary.py``) inside a cgroup of its own
   (one CPU quota, one memory ceiling counting in-memory files, one task
   ceiling) with the grader's own interpreter, whatever kernel the notebook
   names; then the recorded names are read and the recorded calls made, each
   under its own time limit, all of it within one total per submission; the
   answers come back as JSON lines. No test and no expected value ever enters
   the sandbox (the hidden inputs do: the student's function is called with
   them);
3. **verdict**: in a worker process with a time limit (``grading/judge.py``),
   the lines are decoded with item caps and the tests run on those plain
   values. Hidden test cases share a question's points; public checks are
   worth nothing. Hidden feedback names the misconception and the section,
   never the right answer or the test's code.

Writes into ``--out`` (refusing an existing results folder unless
``--resume`` continues it or ``--overwrite`` replaces it):

* ``results.jsonl``: one line per file, appended as each one finishes (a
  crash loses nothing already graded; ``--resume`` skips files whose content
  already has a line);
* ``grades-<assignment>.csv``: one per assignment: file, student, status, the
  points of each question, total, possible, flags, note;
* ``files.csv``: every file, graded or skipped, with its status, reason and
  feedback file;
* ``feedback/<name>-<hash>.md``: per question, the score and the message of
  every failing check. The file name is made of safe characters of the
  submission's name and a hash of its path (any name, of any length or
  encoding, gets one); the submission's name is written inside, with bytes
  that are not UTF-8 shown as ``\\xNN``.

Statuses with points: ``graded``; ``graded-with-errors`` (cells raised, or the
sandbox stopped while evaluating: the questions unaffected keep their
points); ``timeout`` (the notebook ran out of time: what it had defined by
then is graded). Without points: ``crashed``, ``output-too-large``,
``not-a-notebook``, ``empty``, ``too-large``, ``not-a-regular-file``,
``unknown-assignment``, ``grader-error``, ``left-out`` (past a student's caps,
``MAX_FILES_PER_STUDENT`` files and ``MAX_BYTES_PER_STUDENT`` bytes, counted
after grouping the files by student; in an overfull group the files named as
the student's own and those that look like notebooks are kept first, and the
kept files are flagged ``overfull``),
``too-deep`` (a folder more than ``MAX_DEPTH`` levels down, one row for it),
``unreadable-folder``, ``not-on-roster``.

Everything the grader does with a submission's bytes outside the sandbox is
linear and bounded: the folder is walked without recursion (a stack of open
folders, ``MAX_DEPTH`` deep at most); each file is read when it is graded and
dropped after (the batch holds its paths and sizes, not its bytes); parsing
the notebook happens in the verdict worker under the judge's time limit
(``grading/inspection.py``, no backtracking pattern); every student-made text
goes through ``clean`` (lone surrogates, control characters, length) before
any report, and each report is written row by row, so that no row can stop
the others; duplicate flags name ``MAX_OTHERS`` other files and the count.

Without bubblewrap the grader refuses to run: a notebook would execute with
the grader's own permissions, able to read the solutions and tests and to
change other files. ``--no-sandbox`` runs it anyway (the verdicts are still
decided outside the notebook's process, but nothing else is protected).
Without a writable cgroup the grader runs, judges time limits on CPU time,
and says that isolation between submissions is weaker.
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
from dataclasses import asdict, dataclass, field, fields

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE / "grading"))
import exercises  # noqa: E402  (tools/exercises.py)
import confine  # noqa: E402  (tools/grading/confine.py)
import boundary  # noqa: E402  (tools/grading/boundary.py)
import judge as judges  # noqa: E402
import plan as plans_mod  # noqa: E402
import sandbox  # noqa: E402
import verdict as verdict_mod  # noqa: E402
from verdict import CaseResult  # noqa: E402  (the judge's own record of a case)

MAX_BYTES = 5 << 20
"""Largest submission read (bytes); larger files are skipped without being read."""
JUDGE_SECONDS = 20.0
"""Time the grader may spend on one submission's data (decoding and verdict; honest work: about 0.1 s)."""
MAX_NAME = 255
"""Characters of a file name that name parsing looks at."""
MAX_DEPTH = 32
"""Folders deep the walk goes below the submissions folder; deeper folders get one row each, unread."""
MAX_FILES_PER_STUDENT = 100
"""Files graded per student folder (top folder); the rest get a row each, unread."""
MAX_BYTES_PER_STUDENT = 50 << 20
"""Bytes (by size) graded per student folder; files past it get a row each, unread."""
MAX_QUOTE = 1000
"""Characters of one failing check's message quoted in feedback (a student's value can be any size)."""
MAX_NOTE = 2000
"""Characters of a note or flags kept in a report."""
MAX_OTHERS = 3
"""Other files a duplicate flag names (then the count)."""
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
    feedback_file: str = ""
    grader_seconds: float = 0.0
    """CPU time the grader itself spent on this file's data (reading, decoding, verdict)."""
    memory_mb: float | None = None
    """The most memory the file's sandbox held at once, where its cgroup reports it."""
    own_flags: str = ""
    """Flags found while grading: the file was kept from its student's overfull group (``_cap_students``),
    or cells too large to parse were not parsed (``inspection.MAX_PARSE_CHARS``)."""

    @property
    def total(self) -> float:
        return round(sum(self.scores.values()), 6) if self.status in POINT_STATUSES else 0.0

    @classmethod
    def from_json(cls, text: str) -> "Outcome":
        data = json.loads(text)
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


@dataclass
class Entry:
    """One file (or one folder left out) found under the submissions folder; read only when graded."""

    relpath: str
    """The path as the file system gave it (bytes that are not UTF-8 kept as surrogate escapes)."""
    size: int = 0
    skip: tuple[str, str] | None = None
    """(status, reason) when the file is not read."""
    flag: str = ""
    """A flag for the reports (a file kept from a student's overfull group)."""

    @property
    def shown(self) -> str:
        return shown(self.relpath)


# ---------------------------------------------------------------- names

_INVISIBLE = re.compile("[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]")


def shown(relpath: str) -> str:
    """A path as text any report can hold: bytes that are not UTF-8 as ``\\xNN``, a backslash as ``\\\\``,
    control and direction-changing characters as ``\\uNNNN`` (one path, one text: no two paths share it)."""
    raw = os.fsencode(relpath).replace(b"\\", b"\\\\")
    text = raw.decode("utf-8", "backslashreplace")
    return _INVISIBLE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def clean(text, limit: int | None = None) -> str:
    """Any student-made text as text every report can hold: lone surrogates (``"\\ud800"``, which strict
    UTF-8 refuses) and bytes that are not UTF-8 as ``\\uNNNN``/``\\xNN``, control and direction-changing
    characters as ``\\uNNNN`` (newlines and tabs kept), cut to ``limit`` characters with the count of
    the rest. Linear in the text's length. Every report row and feedback line goes through it."""
    text = text if isinstance(text, str) else str(text)
    if limit is not None and len(text) > limit:
        text = f"{text[:limit]}... ({len(text) - limit:,} more characters)"
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return _CONTROL.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def feedback_name(relpath: str) -> str:
    """The feedback file of a submission: safe characters of its name (at most 60) and a hash of its path.

    Any path gets one, at most 77 bytes long, in one flat folder: no name is too long, no name needs an
    encoding, and no folder of the submission (``hw.ipynb.md/``) can be in the way.
    """
    slug = _UNSAFE.sub("_", shown(relpath).replace("/", "__"))[:60].strip("._") or "file"
    digest = hashlib.sha256(os.fsencode(relpath)).hexdigest()[:12]
    return f"{slug}-{digest}.md"


def _natural(name: str) -> list:
    """Sort key: digit runs compare as numbers (by length, then digits: no int() of a long run)."""
    parts = re.split(r"(\d+)", name)
    key: list = []
    for i, part in enumerate(parts):
        if i % 2:
            digits = part.lstrip("0")
            key.append((len(digits), digits, len(part)))
        else:
            key.append(part.lower())
    return key


_MARK = re.compile(r"copy|v\d+|\d+|\(\d+\)", re.IGNORECASE)
_SEPARATED = re.compile(r"([\s_-]+)")
_ATTACHED = re.compile(r"(?:\(\d+\)|\d+)$")


def student_of(relpath: str) -> str:
    """Who a file belongs to: its top folder, else its name without copy marks (" (1)", "-2", "_copy", "v3").

    Linear in the name's length (a mark is matched on one separated word at a time, never by a pattern
    that could backtrack), and only the first ``MAX_NAME`` characters are looked at.
    """
    parts = pathlib.PurePosixPath(relpath).parts
    if len(parts) > 1:
        return shown(parts[0])[:MAX_NAME]
    name = shown(parts[0])[:MAX_NAME]
    stem = name.split(".")[0] or name
    words = _SEPARATED.split(stem)  # word, separator, word, ...
    while words:
        last = words[-1]
        if _MARK.fullmatch(last) and len(words) > 1:
            words = words[:-2]  # the mark and the separator before it
            continue
        trimmed = _ATTACHED.sub("", last) if not last.isdigit() else last
        if trimmed != last and trimmed:
            words[-1] = trimmed  # "bob2", "bob(1)"
            continue
        break
    student = "".join(words).strip(" _-").lower()
    return student or name.lower()


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _open_beneath(root: str, relpath: str) -> int:
    """Open ``root/relpath`` one component at a time, following no link (a folder swapped for a link
    after the walk is refused, not followed)."""
    parts = pathlib.PurePosixPath(relpath).parts
    fd = os.open(root, _DIR_FLAGS)
    try:
        for part in parts[:-1]:
            next_fd = os.open(part, _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = next_fd
        return os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=fd)
    finally:
        os.close(fd)


def read_entry(root: str | os.PathLike, entry: Entry, max_bytes: int = MAX_BYTES) -> tuple[bytes | None, tuple[str, str] | None]:
    """The bytes of one file (read when it is graded, dropped after), or (None, (status, reason))."""
    try:
        fd = _open_beneath(os.fspath(root), entry.relpath)
    except OSError as exc:
        if exc.errno == 40:  # ELOOP: a link
            return None, ("not-a-regular-file", "a symbolic link: not followed, not read")
        return None, ("not-a-regular-file", f"cannot be opened ({exc.strerror})")
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None, ("not-a-regular-file", f"{_kind(info.st_mode)}, not read")
        if info.st_size > max_bytes:
            return None, _too_large(info.st_size, max_bytes)
        chunks, size = [], 0
        while size <= max_bytes:
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > max_bytes:
            return None, ("too-large", f"more than the {_mb(max_bytes)} a notebook may have")
        return b"".join(chunks), None
    finally:
        os.close(fd)


def _kind(mode: int) -> str:
    """What a file that is not a regular file is, in words."""
    return "a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) \
        else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a file"


def _too_large(size: int, max_bytes: int) -> tuple[str, str]:
    return "too-large", f"{_mb(size)}, more than the {_mb(max_bytes)} a notebook may have; not read"


def _mb(n: int) -> str:
    return f"{n / (1 << 20):.1f} MB"


def _classify(rel: str, name: str, dirfd: int, max_bytes: int) -> Entry:
    """A file found by the walk, by its ``lstat`` alone (nothing is read here)."""
    try:
        info = os.stat(name, dir_fd=dirfd, follow_symlinks=False)
    except OSError as exc:
        return Entry(rel, skip=("not-a-regular-file", f"cannot be opened ({exc.strerror})"))
    if stat.S_ISLNK(info.st_mode):
        return Entry(rel, skip=("not-a-regular-file", "a symbolic link: not followed, not read"))
    if not stat.S_ISREG(info.st_mode):
        return Entry(rel, skip=("not-a-regular-file", f"{_kind(info.st_mode)}, not read"))
    if info.st_size > max_bytes:
        return Entry(rel, info.st_size, _too_large(info.st_size, max_bytes))
    return Entry(rel, info.st_size)


def walk(submissions: pathlib.Path, exclude: pathlib.Path | None = None, max_bytes: int = MAX_BYTES,
         max_depth: int = MAX_DEPTH) -> list[Entry]:
    """Every file under ``submissions``, found without recursion and without following links.

    Depth-first with a stack of open folders (at most ``max_depth`` + 1 open at once); a folder deeper
    than ``max_depth`` gets one ``too-deep`` row and is not entered; a folder that cannot be listed
    gets one ``unreadable-folder`` row (its error is that subtree's row, never the batch's).
    """
    root = os.fspath(submissions)
    excluded = os.path.realpath(exclude) if exclude is not None else None
    entries: list[Entry] = []
    top = os.open(root, _DIR_FLAGS)
    stack: list[tuple[int, str, list[tuple[str, bool]]]] = []

    def listing(fd: int, rel: str) -> list[tuple[str, bool]] | None:
        try:
            with os.scandir(fd) as it:
                return [(e.name, e.is_dir(follow_symlinks=False)) for e in it]
        except OSError as exc:
            entries.append(Entry(rel or ".", skip=("unreadable-folder",
                                                   f"a folder that could not be listed ({exc.strerror})")))
            return None

    found = listing(top, "")
    if found is None:
        os.close(top)
        return entries
    stack.append((top, "", found))
    try:
        while stack:
            fd, rel_dir, pending = stack[-1]
            if not pending:
                os.close(fd)
                stack.pop()
                continue
            name, is_dir = pending.pop()
            rel = os.path.join(rel_dir, name) if rel_dir else name
            if not is_dir:
                entries.append(_classify(rel, name, fd, max_bytes))
                continue
            if len(stack) > max_depth:
                entries.append(Entry(rel, skip=("too-deep", f"a folder more than {max_depth} levels down: "
                                                            "not searched (nothing in it is graded)")))
                continue
            try:
                child = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                entries.append(Entry(rel, skip=("unreadable-folder",
                                                f"a folder that could not be opened ({exc.strerror})")))
                continue
            if excluded is not None and os.path.realpath(f"/proc/self/fd/{child}") == excluded:
                os.close(child)
                continue
            found = listing(child, rel)
            if found is None:
                os.close(child)
                continue
            stack.append((child, rel, found))
    finally:
        for fd, _, _ in stack:
            os.close(fd)
    return entries


def own_name(relpath: str) -> bool:
    """A file named as its owner's own. At the top (a flat folder, where anyone may choose any name): its
    name is exactly the student's, with no mark at all (``bob_hw.ipynb`` for ``bob_hw``; not
    ``bob_hw (1).ipynb`` or ``bob_hw2.ipynb``). In a student's folder: its name carries no separated copy
    mark (``ch01.ipynb``, not ``ch01 (1).ipynb`` or ``ch01_copy.ipynb``)."""
    parts = pathlib.PurePosixPath(relpath).parts
    name = shown(parts[-1])[:MAX_NAME]
    stem = name.split(".")[0] or name
    if len(parts) == 1:
        return student_of(relpath) == stem.lower()
    words = _SEPARATED.split(stem)
    return not (len(words) > 1 and _MARK.fullmatch(words[-1]))


SNIFF_BYTES = 4096
"""Bytes of a file looked at to tell whether it looks like a notebook (only in a group over its caps)."""


def looks_like_notebook(root: str | os.PathLike | None, entry: Entry) -> bool:
    """Whether a file's first ``SNIFF_BYTES`` look like a notebook's JSON: an object that names
    ``nbformat`` or ``cells``. One short read, no parse (parsing happens in the verdict worker)."""
    if root is None or not entry.relpath.endswith(".ipynb"):
        return False
    try:
        fd = _open_beneath(os.fspath(root), entry.relpath)
    except OSError:
        return False
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        head = os.read(fd, SNIFF_BYTES)
    except OSError:
        return False
    finally:
        os.close(fd)
    head = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    return head.startswith(b"{") and (b'"nbformat"' in head or b'"cells"' in head)


def _cap_students(entries: list[Entry], max_files: int, max_bytes: int, root=None) -> None:
    """Leave out what passes a student's caps (files, then bytes), grouped by student first. In a group
    over its caps the files named as the student's own (``own_name``) are kept first, then those that
    look like notebooks (``looks_like_notebook``), then the rest, each in natural order: another's
    files named like a student's copies cannot push the student's own notebook out. Each file left out
    keeps its row, with the reason; every file kept in an overfull group carries ``Entry.flag``."""
    groups: dict[str, list[Entry]] = {}
    for entry in entries:
        if not entry.skip:
            groups.setdefault(student_of(entry.relpath), []).append(entry)
    for owner, group in groups.items():
        if len(group) <= max_files and sum(e.size for e in group) <= max_bytes:
            continue
        group.sort(key=lambda e: (0 if own_name(e.relpath) else 1 if looks_like_notebook(root, e) else 2))
        files = size = 0
        for entry in group:
            if files >= max_files:
                entry.skip = ("left-out", f"more than {max_files} files for {owner!r}: not read")
            elif size + entry.size > max_bytes:
                entry.skip = ("left-out", f"more than {_mb(max_bytes)} of files for {owner!r}: not read")
            else:
                files += 1
                size += entry.size
        left = len(group) - files
        for entry in group:
            if not entry.skip:
                entry.flag = (f"overfull: {len(group):,} files for {owner!r} (caps {max_files} files, "
                              f"{_mb(max_bytes)}); {left:,} left out, the student's own names and "
                              "notebooks kept first")


def collect(submissions: pathlib.Path, exclude: pathlib.Path | None = None, max_bytes: int = MAX_BYTES,
            max_depth: int = MAX_DEPTH, max_files: int = MAX_FILES_PER_STUDENT,
            max_student_bytes: int = MAX_BYTES_PER_STUDENT) -> list[Entry]:
    """Every file under ``submissions`` in natural order, classified without being read, with the caps
    per student folder applied."""
    entries = sorted(walk(submissions, exclude, max_bytes, max_depth), key=lambda e: _natural(e.shown))
    _cap_students(entries, max_files, max_student_bytes, submissions)
    return entries


# ---------------------------------------------------------------- one file

@dataclass
class Inspected:
    status: str = ""
    assignment: str = ""
    note: str = ""
    notebook: bytes = b""
    cells: dict[int, str] = field(default_factory=dict)
    names: dict[int, list[str]] = field(default_factory=dict)
    unparsed: list = field(default_factory=list)
    """(cell index, characters) of code cells too large to parse for their names."""


def inspect(relpath: str, data: bytes, graders: dict[str, plans_mod.Plan], workers: "Workers | None" = None,
            seconds: float = JUDGE_SECONDS) -> Inspected:
    """Classify a read file: a zero status with its note, or the assignment, the notebook's bytes for the
    sandbox and its cell maps. Done by a verdict worker under ``seconds`` (``grading/inspection.py``);
    in this process only when no worker is given (tests)."""
    is_notebook = relpath.endswith(".ipynb")
    suffix = pathlib.PurePosixPath(shown(relpath)).suffix[:20]
    if workers is None:
        import inspection

        found = inspection.inspect(data, is_notebook, suffix, sorted(graders))
    else:
        found = workers.inspect(data, is_notebook, suffix, sorted(graders), seconds)
    if "error" in found:
        raise RuntimeError(f"reading the notebook failed: {found['error']}")
    return Inspected(found.get("status", ""), found.get("assignment", ""), found.get("note", ""),
                     found.get("notebook", b""), found.get("cells", {}), found.get("names", {}),
                     found.get("unparsed", []))


class Workers:
    """The batch's verdict workers (``grading/judge.py``), which also read each notebook before its
    sandbox: two started at once when the batch has two jobs or more (their imports overlap the
    reading of the plans, and a file never waits for a worker to start), another (up to one per job)
    only when a request keeps every worker busy for a second (a verdict takes about 0.1 s and a
    sandbox about a second, so one or two workers usually serve every job)."""

    def __init__(self, jobs: int = 1) -> None:
        self._idle: "queue.Queue[judges.Judge]" = queue.Queue()
        self._all: list[judges.Judge] = [judges.Judge() for _ in range(min(2, max(1, jobs)))]
        for worker in self._all:
            worker.start()
            self._idle.put(worker)
        self._jobs, self._plans, self._lock = max(1, jobs), (), threading.Lock()

    def warm(self, plans) -> None:
        self._plans = tuple(plans)
        for worker in self._all:
            worker.warm(self._plans)

    def inspect(self, data, is_notebook, suffix, assignments, seconds) -> dict:
        worker = self._borrow()
        try:
            return worker.inspect(data, is_notebook, suffix, assignments, seconds)
        finally:
            self._idle.put(worker)

    def judge(self, plan, lines, cells, seconds, names=None, case=None, others=None) -> dict:
        worker = self._borrow()
        try:
            return worker.judge(plan, lines, cells, seconds, names, case, others)
        finally:
            self._idle.put(worker)

    def _borrow(self) -> judges.Judge:
        try:
            return self._idle.get(timeout=1.0)  # the usual wait for the other job's verdict: 0.1 s
        except queue.Empty:  # a verdict that takes long (a forged answer): another worker for the rest
            with self._lock:
                if len(self._all) < self._jobs:
                    worker = judges.Judge()
                    worker.warm(self._plans)
                    self._all.append(worker)
                    return worker
            return self._idle.get()

    def close(self) -> None:
        for worker in self._all:
            worker.close()


@dataclass
class Roster:
    """The course's students and, per assignment with a case, each one's drawn case (issue 31)."""

    students: set[str]
    cases: dict[str, dict[str, dict]]
    """Assignment -> student -> the values of that student's case."""
    default_case: bool = False
    """Grade a file of a student not on the roster on the default case (else it is not graded)."""

    @classmethod
    def load(cls, path: pathlib.Path, graders: dict[str, plans_mod.Plan], key_file: pathlib.Path | None = None,
             default_case: bool = False) -> "Roster":
        from clustermath.feedback.variants import course_key, draw, roster_identities

        students = roster_identities(path.read_text(encoding="utf-8"), str(path))
        cases: dict[str, dict[str, dict]] = {}
        key = None
        for assignment, plan in graders.items():
            if plan.case:
                if key is None:
                    key = course_key(key_file, create=False, announce=lambda m: print(m, file=sys.stderr))
                declared = verdict_mod.case_for(plan)
                cases[assignment] = {s: draw(key, who, declared).values for s, who in students.items()}
        return cls(set(students), cases, default_case)

    def others(self, assignment: str, student: str) -> list:
        return [[s, v] for s, v in self.cases.get(assignment, {}).items() if s != student]


@dataclass
class Batch:
    """What every file of one batch is graded with."""

    graders: dict[str, plans_mod.Plan]
    limits: sandbox.Limits
    package: pathlib.Path
    use_sandbox: bool
    cgroups: confine.Cgroups
    workers: Workers
    out: pathlib.Path | None = None
    root: pathlib.Path | None = None
    """The submissions folder (files are read from it when graded)."""
    done: dict = field(default_factory=dict)
    """(shown path, sha256) -> an outcome already in results.jsonl (``--resume``)."""
    scratch: pathlib.Path | None = None
    """Where the chapters' bounded packages are made (``grading/boundary.py``)."""
    roster: Roster | None = None
    """The students and their drawn cases (``--roster``); None: every file is graded on the default case."""
    _packages: dict = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def package_for(self, plan: plans_mod.Plan) -> pathlib.Path:
        """The package the chapter's sandbox holds: without the modules every question forbids."""
        absent = boundary.absent_modules(plan)
        if not absent or self.scratch is None:
            return self.package
        with self._lock:
            key = tuple(absent)
            if key not in self._packages:
                dest = self.scratch / f"lib-{len(self._packages)}"
                dest.mkdir(parents=True)
                self._packages[key] = boundary.bounded_package(self.package, absent, dest)
            return self._packages[key]


def grade_entry(entry: Entry, batch: Batch) -> Outcome:
    """Grade one file: read it, inspect it, run it in a sandbox, have its verdict decided by a worker, and
    write its feedback. Nothing here may stop the batch: any failure becomes this file's row. The file's
    bytes live only while it is graded."""
    start, cpu = time.monotonic(), time.thread_time()
    outcome = Outcome(entry.shown, "", feedback_file=feedback_name(entry.relpath), own_flags=entry.flag)
    try:
        outcome.student = student_of(entry.relpath)
        data, skip = (None, entry.skip) if entry.skip else read_entry(batch.root, entry)
        if data is not None:
            outcome.sha256 = hashlib.sha256(data).hexdigest()
            if (entry.shown, outcome.sha256) in batch.done:  # --resume: graded before, unchanged
                return batch.done[(entry.shown, outcome.sha256)]
        if skip:
            outcome.status, outcome.note = skip
        else:
            _grade(entry, data, batch, outcome)
        del data
    except Exception as exc:  # a bug of ours must not stop the batch
        outcome.status = "grader-error"
        outcome.note = f"the grader failed: {type(exc).__name__}: {str(exc)[:200]}"
        outcome.scores = {}
    outcome.seconds = round(time.monotonic() - start, 2)
    outcome.grader_seconds = round(outcome.grader_seconds + time.thread_time() - cpu, 3)
    sanitise(outcome)
    if batch.out is not None:
        try:
            write_feedback(outcome, batch.out)
        except Exception as exc:  # noqa: BLE001
            outcome.note = (outcome.note + "; " if outcome.note else "") + \
                f"its feedback file could not be written ({type(exc).__name__})"
    return outcome


def sanitise(o: Outcome) -> None:
    """Every student-made text of an outcome through ``clean``: notes and flags capped, feedback lines
    (failing checks quote the student's values) capped one by one."""
    o.note, o.flags, o.own_flags = clean(o.note, MAX_NOTE), clean(o.flags, MAX_NOTE), clean(o.own_flags, MAX_NOTE)
    o.assignment, o.student = clean(o.assignment, 100), clean(o.student, MAX_NAME)
    o.feedback = [clean(line, 4 * MAX_QUOTE) for line in o.feedback[:400]]


def _grade(entry: Entry, data: bytes, batch: Batch, outcome: Outcome) -> None:
    try:
        found = inspect(entry.relpath, data, batch.graders, batch.workers)
    except judges.JudgeTimeout as exc:
        outcome.status = "grader-error"
        outcome.note = (f"the grader stopped reading this file after {JUDGE_SECONDS:g} s ({exc}); "
                        "nothing could be graded")
        outcome.grader_seconds += JUDGE_SECONDS
        return
    outcome.assignment = found.assignment
    if found.status:
        outcome.status, outcome.note = found.status, found.note
        return
    plan = batch.graders[found.assignment]
    outcome.possible = plan.possible
    if found.unparsed:
        import inspection

        cells = ", ".join(f"cell {i} ({n:,} characters)" for i, n in found.unparsed[:5])
        more = f" and {len(found.unparsed) - 5} more" if len(found.unparsed) > 5 else ""
        flag = (f"not parsed: {cells}{more}, over the {inspection.MAX_PARSE_CHARS:,} characters per cell "
                f"({inspection.MAX_PARSE_TOTAL:,} per notebook) the grader parses for assigned names")
        outcome.own_flags = f"{outcome.own_flags}; {flag}" if outcome.own_flags else flag
    case = others = None
    if batch.roster is not None:
        if outcome.student not in batch.roster.students:
            if not batch.roster.default_case:
                outcome.status = "not-on-roster"
                outcome.note = (f"{outcome.student!r} is not on the roster: not graded (DEFAULT_CASE=1 grades "
                                "such files on the book's default case)")
                return
            outcome.own_flags = _joined(outcome.own_flags, "not on the roster: graded on the default case")
        elif found.assignment in batch.roster.cases:
            case = batch.roster.cases[found.assignment][outcome.student]
            others = batch.roster.others(found.assignment, outcome.student)
    watch = sorted({m for modules in plan.own_code.values() for m in modules})
    run = sandbox.run(found.notebook, plan.notebook, plan.names, plan.calls, batch.limits, batch.package_for(plan),
                      sandbox=batch.use_sandbox, watch=watch, cgroups=batch.cgroups)
    if run.peak_memory is not None:
        outcome.memory_mb = round(run.peak_memory / (1 << 20), 1)
    try:
        verdict = batch.workers.judge(plan, run.lines, found.cells, JUDGE_SECONDS, found.names, case, others)
    except judges.JudgeTimeout as exc:
        outcome.status = "grader-error"
        outcome.scores = {q: 0.0 for q in plan.points}
        outcome.note = (f"the grader stopped reading this notebook's answers after {JUDGE_SECONDS:g} s "
                        f"({exc}); nothing could be graded")
        outcome.grader_seconds += JUDGE_SECONDS
        return
    outcome.grader_seconds += float(verdict.get("cpu", 0.0))
    if "error" in verdict:
        raise RuntimeError(f"the verdict failed: {verdict['error']}")
    _judge(outcome, plan, run, verdict, batch.limits)
    fits = verdict.get("fits")
    if fits:
        student, there, here, total = fits
        outcome.own_flags = _joined(outcome.own_flags, (
            f"fits another student's case: its answers pass {there} of the {total} checks that depend on the "
            f"case on {student}'s case, {here} on its own"))


def _joined(flags: str, flag: str) -> str:
    return f"{flags}; {flag}" if flags else flag


def _judge(outcome: Outcome, plan: plans_mod.Plan, run: sandbox.Run, verdict: dict,
           limits: sandbox.Limits) -> None:
    cells = verdict.get("cells")
    if cells is None:
        outcome.status = {"timeout": "timeout", "output-too-large": "output-too-large"}.get(run.problem, "crashed")
        outcome.scores = {q: 0.0 for q in plan.points}
        outcome.note = {
            "timeout": f"stopped after {run.seconds:.0f} s: the notebook did not finish and did not "
                       "give its time back",
            "output-too-large": "the notebook wrote more than the grader reads",
        }.get(run.problem, "the notebook ended the Python process (os._exit, a crash or a memory "
                           "limit) before it finished; nothing could be graded")
        return
    cases = [CaseResult(*c) for c in verdict["cases"]]
    outcome.scores = _scores(plan, cases)
    errors, stopped = cells["errors"], cells["stopped"]
    finished = run.finished and verdict.get("finished", False)
    notes = []
    if stopped:
        outcome.status = "timeout"
        notes.append(f"{stopped}; graded on what it had defined by then")
    elif errors or not finished:
        outcome.status = "graded-with-errors"
    else:
        outcome.status = "graded"
    if errors:
        notes.append(f"{len(errors)} cell(s) raised; first: {errors[0]}")
    missing = _missing_modules(errors)
    if missing:
        notes.append(f"the notebook imports {', '.join(missing)}, which is neither in the notebook nor "
                     "installed: each notebook is graded alone (files handed in beside it are not used), "
                     "so that code belongs in the notebook")
    if not finished:
        notes.append({"timeout": f"the sandbox ran out of its time ({limits.total_seconds:g} s for one "
                                 "submission, or one call's) while the hidden checks ran; what was "
                                 "not evaluated scores zero",
                      "output-too-large": "the notebook wrote more than the grader reads",
                      }.get(run.problem, "the sandbox ended while the hidden checks ran"))
    timed_out = sorted({c.question for c in cases if "TookTooLong" in c.message}, key=_natural)
    if timed_out:
        notes.append(f"too slow on a hidden input: {', '.join(timed_out)}")
    absent = sorted({m.group(1) for e in errors for m in [_ABSENT.search(e)] if m})
    if absent:
        notes.append(f"the notebook uses the book's own model ({', '.join(absent[:5])}), which this "
                     "exercise's sandbox does not hold: the exercises ask for the student's own code")
    borrowed = verdict.get("borrowed") or {}
    for question in sorted(borrowed, key=_natural):
        named = ", ".join(borrowed[question][:5]) or "its functions"
        notes.append(f"{question} uses the book's own model ({named}) where the exercise asks for "
                     "the student's code: its checks do not count")
    outcome.note = "; ".join(notes)
    outcome.feedback = _feedback(plan, cases, outcome.scores, errors)


_ABSENT = re.compile(r"OwnCodeRequired: (clustermath[A-Za-z0-9_.]{0,80})")
_NO_MODULE = re.compile(r"ModuleNotFoundError: No module named '([A-Za-z0-9_.]{1,80})'")


def _missing_modules(errors: list[str]) -> list[str]:
    return sorted({m.group(1) for e in errors for m in [_NO_MODULE.search(e)] if m})


def _scores(plan: plans_mod.Plan, cases: list[CaseResult]) -> dict[str, float]:
    out = {q: 0.0 for q in plan.points}
    for case in cases:
        if case.passed and case.question in out:
            out[case.question] += case.points
    return {q: round(v, 6) for q, v in out.items()}


def _feedback(plan: plans_mod.Plan, cases: list[CaseResult], scores: dict[str, float], errors: list[str]) -> list[str]:
    lines: list[str] = []
    for question in sorted(plan.points, key=_natural):
        lines.append(f"## {question}: {scores[question]:g} of {float(plan.points[question]):g}")
        for case in (c for c in cases if c.question == question and not c.passed):
            kind = "hidden check" if case.hidden else "public check (no points: you can run it yourself)"
            lines.append(f"\n{case.name} ({kind}):\n\n```\n{clean(case.message, MAX_QUOTE)}\n```")
        lines.append("")
    if errors:
        lines += ["## Cells that raised", ""] + [f"- {clean(e, 300)}" for e in errors[:20]]
    return lines


# ---------------------------------------------------------------- reports

_FORMULA = ("=", "+", "-", "@", "\t", "\r", "\n")


def cell(text: str) -> str:
    """A CSV text cell a spreadsheet will not run as a formula (and any text cleaned: see ``clean``)."""
    text = clean(text).replace("\r", " ").replace("\n", " ")
    return "'" + text if text.startswith(_FORMULA) else text


def _num(value: float) -> str:
    return f"{value:g}"


def flag_duplicates(outcomes: list[Outcome]) -> None:
    """Flag files with identical content, and students with more than one file for an assignment."""
    by_sha: dict[str, list[Outcome]] = {}
    by_student: dict[tuple[str, str], list[Outcome]] = {}
    for o in outcomes:
        o.flags = f"{o.own_flags}; " if o.own_flags else ""
        if o.sha256 and o.status not in ("empty",):
            by_sha.setdefault(o.sha256, []).append(o)
        if o.assignment:
            by_student.setdefault((o.assignment, o.student), []).append(o)
    for group in by_sha.values():
        if len(group) > 1:
            for o in group:
                o.flags += f"same content as {_others(group, o)}; "
    for (assignment, student), group in by_student.items():
        if len(group) > 1:
            for o in group:
                o.flags += f"duplicate: {student!r} also submitted {_others(group, o)} for {assignment}; "
    for o in outcomes:
        o.flags = o.flags.strip().rstrip(";")


def _others(group: list[Outcome], o: Outcome) -> str:
    """A few other files of a group and the count of the rest (a flag never lists thousands of names)."""
    named = [x.file for x in group[:MAX_OTHERS + 1] if x is not o][:MAX_OTHERS]
    rest = len(group) - 1 - len(named)
    return ", ".join(named) + (f" and {rest:,} more" if rest else "")


def _rows(path: pathlib.Path, header: list[str], rows) -> None:
    """Write one CSV file row by row: a row that cannot be written is replaced by one saying so, and
    the rows after it are written (no text a student made can stop a report)."""
    with open(path, "w", newline="", encoding="utf-8", errors="backslashreplace") as handle:
        w = csv.writer(handle)
        w.writerow(header)
        for key, make in rows:
            try:
                w.writerow(make())
            except Exception as exc:  # noqa: BLE001
                w.writerow([cell(key), "", "grader-error", f"this row could not be written ({type(exc).__name__})"])


def write_reports(outcomes: list[Outcome], graders: dict[str, plans_mod.Plan], out: pathlib.Path) -> list[pathlib.Path]:
    """files.csv, one grades-<assignment>.csv per assignment, and every feedback file."""
    flag_duplicates(outcomes)
    written = []
    _rows(out / "files.csv", ["file", "student", "assignment", "status", "total", "possible", "flags", "note",
                              "feedback"],
          ((o.file, lambda o=o: [cell(o.file), cell(o.student), cell(o.assignment), cell(o.status), _num(o.total),
                                 _num(o.possible) if o.possible else "", cell(o.flags), cell(o.note),
                                 f"feedback/{o.feedback_file}" if o.feedback_file else ""])
           for o in outcomes))
    written.append(out / "files.csv")
    for assignment, plan in sorted(graders.items()):
        mine = [o for o in outcomes if o.assignment == assignment]
        if not mine:
            continue
        questions = sorted(plan.points, key=_natural)
        path = out / f"grades-{assignment}.csv"
        _rows(path, ["file", "student", "status", *questions, "total", "possible", "flags", "note"],
              ((o.file, lambda o=o: [cell(o.file), cell(o.student), cell(o.status),
                                     *[_num(o.scores.get(q, 0.0) if o.status in POINT_STATUSES else 0.0)
                                       for q in questions],
                                     _num(o.total), _num(plan.possible), cell(o.flags), cell(o.note)])
               for o in mine))
        written.append(path)
    for o in outcomes:
        try:
            write_feedback(o, out)
        except Exception as exc:  # noqa: BLE001  (one file's feedback never costs the others theirs)
            print(f"warning: feedback for {o.file} not written: {type(exc).__name__}: {exc}", file=sys.stderr)
    return written


def write_feedback(o: Outcome, out: pathlib.Path) -> None:
    name = o.feedback_file or feedback_name(o.file)
    folder = out / "feedback"
    folder.mkdir(parents=True, exist_ok=True)
    possible = _num(o.possible) if o.possible else "?"
    lines = [f"# {clean(o.file)}", "", f"- assignment: {clean(o.assignment) or 'unknown'}",
             f"- status: {clean(o.status)}", f"- score: {_num(o.total)} of {possible}"]
    if o.note:
        lines.append(f"- note: {clean(o.note, MAX_NOTE)}")
    if o.flags:
        lines.append(f"- flags: {clean(o.flags, MAX_NOTE)}")
    lines.append("")
    if o.status in POINT_STATUSES:
        lines += [clean(line, 4 * MAX_QUOTE) for line in o.feedback]
    else:
        lines.append("This file could not be graded and scores zero. " + clean(o.note or "", MAX_NOTE))
    text = "\n".join(lines).rstrip() + "\n"
    tmp = folder / f".{name}.tmp"
    tmp.write_text(text, encoding="utf-8", errors="backslashreplace")
    tmp.replace(folder / name)


# ---------------------------------------------------------------- the batch

class Journal:
    """results.jsonl: one line per finished file, appended and flushed at once."""

    def __init__(self, path: pathlib.Path) -> None:
        self.path, self.lock = path, threading.Lock()

    def load(self) -> dict[tuple[str, str], Outcome]:
        done: dict[tuple[str, str], Outcome] = {}
        if self.path.is_file():
            for line in self.path.read_text(encoding="utf-8", errors="replace").splitlines():
                try:
                    o = Outcome.from_json(line)
                except (ValueError, TypeError):
                    continue  # a line cut short by a crash
                done[(o.file, o.sha256)] = o
        return done

    def append(self, o: Outcome) -> None:
        line = json.dumps(asdict(o)) + "\n"  # ASCII: a lone surrogate is written as \\ud800
        with self.lock, open(self.path, "a", encoding="utf-8") as handle:
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


def isolation_warning(cgroups: confine.Cgroups) -> str:
    """"" when every sandbox has a cgroup of its own, else what is weaker and why."""
    if cgroups.version:
        return ""
    return ("warning: isolation between submissions is weaker here: no cgroup could be made for the "
            f"sandboxes ({cgroups.reason}). A submission's CPU, memory and processes are limited per "
            "process only, so one can slow its neighbour down or hold more memory than its limit, and the "
            "pages a notebook reads stay in the page cache after it ends, where a notebook graded later "
            "(even at JOBS=1) can time them; time "
            "limits are judged on CPU time (the clock allows 3 times as much) so that honest work does "
            "not fail for it. Run as root, or in a delegated cgroup (systemd-run --user --scope -p "
            "Delegate=yes make grade ...), to confine each sandbox as a whole.")


def grade_folder(submissions: pathlib.Path, out: pathlib.Path, *, timeout: float = 60.0,
                 call_timeout: float = 10.0, total_timeout: float | None = None, jobs: int = 2,
                 resume: bool = False, overwrite: bool = False, use_sandbox: bool = True,
                 cache: pathlib.Path = DEFAULT_CACHE, solutions: pathlib.Path = exercises.SOLUTIONS,
                 quiet: bool = True, limits: sandbox.Limits | None = None, roster: pathlib.Path | None = None,
                 key_file: pathlib.Path | None = None, default_case: bool = False) -> list[Outcome]:
    """Grade every file under ``submissions``; write the reports into ``out``."""
    import clustermath

    if not submissions.is_dir():
        raise ValueError(f"submissions must be a folder, got {submissions}")
    if use_sandbox and (reason := sandbox.unavailable_reason()):
        raise ValueError(f"{reason}\nWithout a sandbox a notebook runs with your permissions: it can read "
                         "the solutions and the hidden tests, rewrite other submissions and the results, and "
                         "leave processes behind. Fix the sandbox, or pass --no-sandbox (NO_SANDBOX=1) to "
                         "grade anyway.")
    submissions, out = submissions.resolve(), out.resolve()
    prepare_out(out, resume=resume, overwrite=overwrite)
    workers = Workers(jobs)
    try:
        graders = plans_mod.plans(cache, solutions)
        if not graders:
            raise ValueError(f"solutions must hold at least one master notebook, found none in {solutions}")
        students = Roster.load(roster, graders, key_file, default_case) if roster is not None else None
    except BaseException:
        workers.close()
        raise
    workers.warm(graders.values())
    jobs = max(1, jobs)
    cpus = min(1.0, (os.cpu_count() or 1) / jobs)
    limits = limits or sandbox.Limits(notebook_seconds=timeout, call_seconds=call_timeout,
                                      total_seconds=total_timeout or 2 * timeout, cpus=cpus)
    cgroups = confine.detect()
    warning = isolation_warning(cgroups)
    if warning and not quiet:
        print(warning, file=sys.stderr, flush=True)
    journal = Journal(out / "results.jsonl")
    import tempfile

    scratch = pathlib.Path(tempfile.mkdtemp(prefix="grading-packages-"))
    batch = Batch(graders, limits, pathlib.Path(clustermath.__file__).resolve().parent, use_sandbox,
                  cgroups, workers, out, submissions, journal.load() if resume else {}, scratch, students)
    entries = collect(submissions, exclude=out if out.is_relative_to(submissions) else None)
    outcomes: dict[str, Outcome] = {}
    try:
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            futures = {pool.submit(grade_entry, e, batch): e for e in entries}
            for future in as_completed(futures):
                entry = futures.pop(future)
                try:
                    o = future.result()
                except Exception as exc:  # noqa: BLE001  (grade_entry already catches; belt and braces)
                    o = Outcome(entry.shown, "grader-error", note=f"the grader failed: {type(exc).__name__}",
                                feedback_file=feedback_name(entry.relpath))
                if (o.file, o.sha256) not in batch.done:
                    try:
                        journal.append(o)
                    except Exception as exc:  # noqa: BLE001
                        print(f"warning: results.jsonl not written for {o.file}: {exc}", file=sys.stderr)
                outcomes[entry.shown] = o
                if not quiet:
                    possible = _num(o.possible) if o.possible else "?"
                    print(f"{o.file}  {o.status}  {_num(o.total)} / {possible}  ({o.seconds:.1f} s)", flush=True)
    finally:
        batch.workers.close()
        shutil.rmtree(scratch, ignore_errors=True)
        for group in confine.sweep_own():
            print(f"warning: the sandbox group {group} could not be removed", file=sys.stderr)
    ordered = [outcomes[e.shown] for e in entries]
    write_reports(ordered, graders, out)
    if warning and not quiet:
        print(warning, file=sys.stderr)
    return ordered


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("submissions", type=pathlib.Path, help="folder of submitted files (searched recursively)")
    parser.add_argument("--out", type=pathlib.Path, default=pathlib.Path("grading-output"))
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds for one notebook's cells")
    parser.add_argument("--call-timeout", type=float, default=10.0,
                        help="seconds for one call of a student's function on a hidden input")
    parser.add_argument("--total-timeout", type=float, default=None,
                        help="seconds for everything one submission does (default: twice --timeout)")
    parser.add_argument("--jobs", type=int, default=2, help="submissions graded at once")
    parser.add_argument("--resume", action="store_true", help="continue the batch in --out, skipping files done")
    parser.add_argument("--overwrite", action="store_true", help="replace the results already in --out")
    parser.add_argument("--cache", type=pathlib.Path, default=DEFAULT_CACHE,
                        help="where the per-assignment grading plans are kept")
    parser.add_argument("--no-sandbox", action="store_true",
                        help="grade without bubblewrap (unsafe: the notebooks run with your permissions)")
    parser.add_argument("--roster", type=pathlib.Path, default=None,
                        help="CSV with a 'student' column: grade each file on its student's own case")
    parser.add_argument("--key-file", type=pathlib.Path, default=None,
                        help="the course key the variants were drawn with (default: the repository's .course-key)")
    parser.add_argument("--default-case", action="store_true",
                        help="with --roster: grade files of students not on it on the default case")
    args = parser.parse_args(argv)
    for stream in (sys.stdout, sys.stderr):  # names are shown escaped, but never let printing stop a batch
        stream.reconfigure(errors="backslashreplace")
    if args.no_sandbox:
        print("warning: grading WITHOUT a sandbox (--no-sandbox): the notebooks run with your permissions",
              file=sys.stderr)
    start = time.perf_counter()
    try:
        outcomes = grade_folder(args.submissions, args.out, timeout=args.timeout, call_timeout=args.call_timeout,
                                total_timeout=args.total_timeout, jobs=args.jobs, resume=args.resume,
                                overwrite=args.overwrite, use_sandbox=not args.no_sandbox, cache=args.cache,
                                quiet=False, roster=args.roster, key_file=args.key_file,
                                default_case=args.default_case)
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
