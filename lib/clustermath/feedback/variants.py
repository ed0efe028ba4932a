"""Exercise variants: every student their own numbers (issue 31).

A chapter's master declares its exercises' case once, as named parameters,
each with today's value (the default case, which the book shows) and the set
a student's value is drawn from::

    CASE = Case("ch02", record_gpus=(8_192, steps(4_096, 16_384, 2_048)), speed=(0.8, [0.7, 0.8, 0.9]))
    CASE.record_gpus            # 8192: the default case
    draw(key, "alice", CASE)    # alice's case: the same for every call with this key

A parameter's values may also be named rows: dicts of plain data (a published
run's inputs, say), so that an exercise varies over rows that hold together
rather than over numbers drawn one by one::

    q1_row=(A100_NODE, [A100_NODE, H100_NODE])   # each a dict: {"name": "a100-node", "busbw": 232.54, ...}
    CASE.q1_row["busbw"]                         # in a prompt: {{q1_row["busbw"]}}

Every allowed value must come back unchanged from a JSON round trip (the case
travels to the grader and to Gradescope as ``Case.spec()``): numbers, strings,
booleans, None, lists and dicts with string keys; never a tuple.

The sets are chosen in the master so that no drawn case makes the trap of an
exercise disappear or gives a degenerate input. A student's case is picked by
a keyed hash, ``hmac-sha256(course key, chapter, student, parameter)``: the
same student always gets the same case, and without the course key nobody
can compute another student's. ``course_key`` makes the key on first use in
a file the repository ignores.

Prompts name their numbers as ``{{expression}}`` or ``{{expression:format}}``
placeholders over the case's parameters; ``Case.render`` fills them (integers
with thousands separators unless a format says otherwise), with ``times(k)``
("twice", "four times") and ``word(n)`` ("four") for numbers written as words,
``tex(n)`` ("12{,}288") for a number inside ``$...$`` math and ``listed(values)``
("2, 8, 9 and 15") for a list.

This module imports the standard library only (it runs in the grader, in the
sandbox and in a student's kernel).
"""
from __future__ import annotations

import csv
import hashlib
import hmac
import io
import json
import os
import pathlib
import re
import secrets
from numbers import Real
from typing import Any, Iterable, Mapping

__all__ = ["Case", "steps", "draw", "course_key", "read_roster", "roster_identities", "identity", "render", "times",
           "word", "tex", "listed", "SAFE_NAME"]

KEY_BYTES = 32
SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
"""A student's name as a file and folder name: letters, digits, dot, underscore, hyphen; not hidden."""
PLACEHOLDER = re.compile(r"\{\{\s*(.+?)\s*\}\}")
_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
          "twelve")


def steps(start: Real, stop: Real, step: Real) -> list:
    """``start, start + step, ..., stop`` (both ends included); integers stay integers, other values are
    rounded to 10 decimals so that 0.1 steps give 0.3, not 0.30000000000000004."""
    if not (isinstance(step, Real) and step > 0):
        raise ValueError(f"step must be a number > 0, got {step!r}")
    if not (isinstance(start, Real) and isinstance(stop, Real) and stop >= start):
        raise ValueError(f"start and stop must be numbers with stop >= start, got {start!r}, {stop!r}")
    count = int(round((stop - start) / step)) + 1
    whole = all(isinstance(v, int) for v in (start, stop, step))
    return [start + i * step if whole else round(start + i * step, 10) for i in range(count)]


def _canonical(value: Any) -> str:
    """A value as canonical JSON (sorted keys): how allowed values are told apart and hashed."""
    return json.dumps(value, sort_keys=True, allow_nan=False)


def _shape(value: Any) -> Any:
    """The types of a value, nested (a tuple and a list of the same items differ here)."""
    if isinstance(value, dict):
        return {k: _shape(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [type(value).__name__] + [_shape(v) for v in value]
    return type(value).__name__


def _json_safe(name: str, value: Any) -> None:
    """ValueError unless ``value`` comes back equal, with the same types, from a JSON round trip."""
    try:
        again = json.loads(json.dumps(value, allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name}: every allowed value must be plain JSON data (numbers, strings, booleans, None, "
                         f"lists, dicts with string keys), got {value!r} ({exc})") from None
    if again != value or _shape(again) != _shape(value):
        raise ValueError(f"{name}: every allowed value must survive Case.spec()'s JSON round trip unchanged "
                         f"(a list or a dict with string keys, never a tuple), got {value!r}")


def word(n: int) -> str:
    """A small whole number in words (``4`` -> "four"); larger ones with thousands separators."""
    return _WORDS[n] if isinstance(n, int) and 0 <= n < len(_WORDS) else f"{n:,}"


def tex(n: Real) -> str:
    """A number for LaTeX math, thousands separated by ``{,}`` (``12288`` -> "12{,}288"), as the
    book's prompts write them (a bare comma in math is punctuation and gets a space after it)."""
    return _fmt(n, None).replace(",", "{,}")


def listed(values: Iterable) -> str:
    """Values as a list in words: ``[2, 8, 9, 15]`` -> "2, 8, 9 and 15" (numbers formatted as in prompts)."""
    shown = [_fmt(v, None) for v in values]
    return " and ".join([", ".join(shown[:-1]), shown[-1]]) if len(shown) > 1 else "".join(shown)


def times(k: int) -> str:
    """A factor in words: ``2`` -> "twice", ``4`` -> "four times"."""
    return "twice" if k == 2 else f"{word(k)} times"


class Case:
    """One chapter's exercise case: named parameters, each with a value and the set it is drawn from.

    ``Case(chapter, name=(default, allowed), ...)``; the default must be one of the allowed values and
    every allowed set holds at least one value. Parameters read as attributes (``CASE.speed``).
    """

    def __init__(self, chapter: str, /, **params: tuple[Any, Iterable]) -> None:
        if not (isinstance(chapter, str) and re.fullmatch(r"ch\d\d", chapter)):
            raise ValueError(f"chapter must be a name like 'ch02', got {chapter!r}")
        if not params:
            raise ValueError("a case needs at least one parameter")
        allowed: dict[str, tuple] = {}
        values: dict[str, Any] = {}
        for name, spec in params.items():
            if not (isinstance(spec, tuple) and len(spec) == 2):
                raise ValueError(f"{name} must be (default, allowed values), got {spec!r}")
            default, choices = spec
            choices = tuple(choices)
            for choice in choices:
                _json_safe(name, choice)
            if not choices or len({_canonical(c) for c in choices}) != len(choices):
                raise ValueError(f"{name} must have a non-empty set of distinct allowed values, got {choices!r}")
            if default not in choices:
                raise ValueError(f"{name}'s default {default!r} must be one of its allowed values {choices!r}")
            allowed[name], values[name] = choices, default
        object.__setattr__(self, "chapter", chapter)
        object.__setattr__(self, "allowed", allowed)
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "_defaults", dict(values))

    def __getattr__(self, name: str) -> Any:
        try:
            return object.__getattribute__(self, "values")[name]
        except KeyError:
            raise AttributeError(f"the case of {self.chapter} has no parameter {name!r}") from None

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("a case is read-only; make another with chosen(...)")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Case) and (self.chapter, self.values, self.allowed) == \
            (other.chapter, other.values, other.allowed)

    def __hash__(self) -> int:
        return hash((self.chapter, _canonical(self.values)))

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v!r}" for k, v in self.values.items())
        return f"Case({self.chapter!r}: {shown})"

    @property
    def default(self) -> "Case":
        """The case as declared (each parameter at its first, default value)."""
        return self._with(self._defaults)

    def chosen(self, **values: Any) -> "Case":
        """This case with some parameters set to other allowed values (ValueError for any other)."""
        for name, value in values.items():
            if name not in self.allowed:
                raise ValueError(f"{name} is not a parameter of the case of {self.chapter}; "
                                 f"its parameters are {', '.join(self.allowed)}")
            if value not in self.allowed[name]:
                raise ValueError(f"{name} must be one of {list(self.allowed[name])}, got {value!r}")
        return self._with({**self.values, **values})

    def _with(self, values: Mapping[str, Any]) -> "Case":
        new = object.__new__(Case)
        object.__setattr__(new, "chapter", self.chapter)
        object.__setattr__(new, "allowed", self.allowed)
        object.__setattr__(new, "values", dict(values))
        object.__setattr__(new, "_defaults", self._defaults)
        return new

    def spec(self) -> dict:
        """The declaration as plain data: chapter, allowed sets and default values (JSON-serialisable)."""
        return {"chapter": self.chapter, "allowed": {k: list(v) for k, v in self.allowed.items()},
                "defaults": dict(self._defaults)}

    @classmethod
    def from_spec(cls, spec: Mapping, values: Mapping | None = None) -> "Case":
        """The case a ``spec()`` describes, at its default or at ``values``."""
        case = cls(spec["chapter"], **{k: (spec["defaults"][k], v) for k, v in spec["allowed"].items()})
        return case.chosen(**dict(values)) if values else case

    def render(self, text: str) -> str:
        """``text`` with every ``{{expression[:format]}}`` filled from this case (see the module)."""
        return render(text, self)

    def student_cell(self) -> str:
        """The case cell of a student's copy: this case's values as plain data, with nothing imported
        but the standard library (the grader's sandbox runs it; importing ``clustermath`` there would
        cost every submission a third of a second)."""
        lines = ["# The numbers of this notebook's exercises (the prompts show them): your case.",
                 "from types import SimpleNamespace", "", "CASE = SimpleNamespace("]
        lines += [f"    {k}={_literal(v)}," for k, v in self.values.items()]
        return "\n".join(lines + [")"])


def _literal(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int):
        return repr(value)
    return f"{value:_}" if abs(value) >= 1_000 else str(value)


def _fmt(value: Any, spec: str | None) -> str:
    if spec is not None:
        return format(value, spec)
    if isinstance(value, bool) or not isinstance(value, Real):
        return str(value)
    if isinstance(value, int) or float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:,}"


def render(text: str, case: Case) -> str:
    """Fill ``{{expression}}`` / ``{{expression:format}}`` placeholders from a case's parameters.

    Expressions are Python over the parameter names, ``times``, ``word``, ``tex`` and ``listed`` (masters are trusted
    text, never a student's). ValueError names a placeholder that does not evaluate.
    """
    namespace = {"__builtins__": {"round": round, "int": int, "abs": abs, "min": min, "max": max},
                 "times": times, "word": word, "tex": tex, "listed": listed, **case.values}

    def fill(match: re.Match) -> str:
        body = match.group(1)
        expression, spec = body, None
        head, sep, tail = body.rpartition(":")
        if sep and re.fullmatch(r"[<>^=+\- #0-9_,.%a-zA-Z]*", tail) and head and "[" not in tail:
            expression, spec = head, tail
        try:
            return _fmt(eval(expression, namespace), spec)  # noqa: S307  (the master's own text)
        except Exception as exc:  # noqa: BLE001
            raise ValueError(f"placeholder {{{{{body}}}}} does not evaluate on the case of {case.chapter}: "
                             f"{type(exc).__name__}: {exc}") from None

    return PLACEHOLDER.sub(fill, text)


def _index(key: bytes, chapter: str, student: str, name: str, size: int) -> int:
    message = "\x00".join(("clustermath-variant-1", chapter, student, name)).encode()
    return int.from_bytes(hmac.new(key, message, hashlib.sha256).digest(), "big") % size


def draw(key: bytes, student: str, case: Case) -> Case:
    """The case of ``student``: each parameter picked from its allowed set by
    ``hmac-sha256(key, chapter, student, parameter)``; deterministic, and unknowable without ``key``."""
    if not (isinstance(key, bytes) and len(key) >= 16):
        raise ValueError(f"key must be at least 16 bytes, got {type(key).__name__} of length "
                         f"{len(key) if isinstance(key, (bytes, str)) else '?'}")
    if not (isinstance(student, str) and student):
        raise ValueError(f"student must be a non-empty name, got {student!r}")
    base = case.default
    picked = {name: choices[_index(key, case.chapter, student, name, len(choices))]
              for name, choices in case.allowed.items()}
    return base.chosen(**picked)


DEFAULT_KEY = pathlib.Path(__file__).resolve().parents[3] / ".course-key"
"""Where the course key is kept by default: the repository's root, in a file .gitignore names."""


def course_key(path: str | os.PathLike | None = None, *, create: bool = True, announce=print) -> bytes:
    """The course key from ``path`` (default ``DEFAULT_KEY``, or ``$COURSE_KEY_FILE``); made there on
    first use (32 random bytes, hex, mode 0600) unless ``create`` is false (grading: a new key would
    grade every student on a case they were never given), and its path announced either way."""
    path = pathlib.Path(path or os.environ.get("COURSE_KEY_FILE") or DEFAULT_KEY)
    if not path.exists() and not create:
        raise ValueError(f"the course key file {path} does not exist: grade with the key the variants were "
                         "made with (KEY_FILE=<path>)")
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(secrets.token_hex(KEY_BYTES) + "\n")
        if announce:
            announce(f"made a new course key: {path} (keep it, and keep it private: it decides every "
                     "student's case)")
    elif announce:
        announce(f"course key: {path}")
    text = path.read_text().strip()
    if not re.fullmatch(r"[0-9a-f]{32,}", text):
        raise ValueError(f"the course key file {path} must hold at least 16 bytes as hex, got something else")
    return bytes.fromhex(text)


def read_roster(text: str, source: str = "roster") -> list[str]:
    """The students of a roster CSV (a ``student`` column; further columns ignored), in order.

    ValueError names the first bad row: an empty name, a duplicate, or a name that is not a safe file
    name (``SAFE_NAME``). Row numbers count the header as row 1.
    """
    return list(roster_identities(text, source))


def identity(email: str) -> str:
    """The name a case is drawn for when a course identifies students by e-mail (as Gradescope does):
    the address without surrounding blanks, in lower case."""
    return email.strip().lower()


def roster_identities(text: str, source: str = "roster") -> dict[str, str]:
    """Student -> the name their case is drawn for: their ``email`` (``identity``) when the roster has
    an ``email`` column, so that a Gradescope autograder, which knows the submitter's e-mail, draws the
    same case; else the student's name. Bad rows as in ``read_roster``; with an ``email`` column, an
    empty or repeated address is a bad row too."""
    reader = csv.DictReader(io.StringIO(text))
    if not reader.fieldnames or "student" not in [f.strip() for f in reader.fieldnames]:
        raise ValueError(f"{source} must be a CSV with a 'student' column, got columns {reader.fieldnames}")
    column = next(f for f in reader.fieldnames if f.strip() == "student")
    email = next((f for f in reader.fieldnames if f.strip() == "email"), None)
    students: dict[str, str] = {}
    seen: dict[str, int] = {}
    emails: dict[str, int] = {}
    for row_number, row in enumerate(reader, start=2):
        name = (row.get(column) or "").strip()
        if not name:
            raise ValueError(f"{source} row {row_number}: the student name is empty")
        if not SAFE_NAME.fullmatch(name) or name in (".", ".."):
            raise ValueError(f"{source} row {row_number}: {name!r} is not a safe file name (letters, digits, "
                             "'.', '_' and '-', not starting with '.' or '-', at most 100 characters)")
        if name in seen:
            raise ValueError(f"{source} row {row_number}: {name!r} is a duplicate of row {seen[name]}")
        seen[name] = row_number
        students[name] = name
        if email is not None:
            address = identity(row.get(email) or "")
            if "@" not in address:
                raise ValueError(f"{source} row {row_number}: {name!r} has no e-mail address in the 'email' column")
            if address in emails:
                raise ValueError(f"{source} row {row_number}: the e-mail of {name!r} repeats row {emails[address]}")
            emails[address] = row_number
            students[name] = address
    if not students:
        raise ValueError(f"{source} lists no student")
    return students
