"""Feedback that teaches: match a wrong answer to the mistake that produces it.

The exercises' tests (otter-grader, exception-based) compare a student's
number with the right one. A bare "expected X, got Y" tells the student that
something is wrong but not what. Most wrong answers in this book are not
random, though: they are the output of one of the chapter's broken builds
(the flat collective, the pipeline without a bubble, the peak price ...) or of
a handful of slips (bytes for bits, both directions of a link for one, N for
N - 1). A test that knows those values can say which mistake the answer
reproduces and where the book explains it.

Usage inside an otter test case::

    from clustermath import feedback as fb

    fb.expect(q2_nodes, 4, what="q2_nodes", tol=0,
              suspects=[fb.suspect("both_directions", 8),
                        fb.suspect("off_by_one", 5, "5 is the first node count at which the flat ring wins.")])

* ``expect`` passes when the answer is right and otherwise raises ``WrongAnswer``
  (an ``AssertionError``) whose message names every known mistake the answer
  matches, with the section of the book that explains it.
* ``expect_call`` does the same for a student's function on one set of inputs,
  and turns an exception raised by that function into a readable message.
* ``reject`` fails only when an answer matches a known mistake (or is still a
  placeholder). Public tests use it so the right value stays out of the
  student's copy; hidden tests use ``expect``.
* ``slips=("units", "both_directions", "off_by_one")`` adds the generic slips
  relative to the expected value: a factor of 8, a factor of 2, plus or minus one.

Misconceptions live in ``CATALOGUE``, keyed by a short name; the ten broken
builds of chapter 1 use their flag names (``ignore_topology``, ...). Later
chapters add theirs with ``register``.
"""
from __future__ import annotations

import contextlib
import contextvars
import math
from dataclasses import dataclass, replace
from numbers import Integral, Real
from typing import Any, Callable, Iterable, Mapping, Sequence

__all__ = [
    "CATALOGUE",
    "SECTION_TITLES",
    "register_sections",
    "Misconception",
    "Suspect",
    "WrongAnswer",
    "concealed",
    "expect",
    "expect_call",
    "matches",
    "misconception",
    "register",
    "reject",
    "require",
    "suspect",
]


class WrongAnswer(AssertionError):
    """An answer is not right; the message says why, as far as the test can tell."""


_CONCEALED: contextvars.ContextVar[bool] = contextvars.ContextVar("concealed", default=False)


@contextlib.contextmanager
def concealed():
    """Within this block, messages never state the right answer, whatever ``reveal`` says.

    The grader runs hidden test cases inside it: their feedback names the
    mistake and the section of the book, never the expected value.
    """
    token = _CONCEALED.set(True)
    try:
        yield
    finally:
        _CONCEALED.reset(token)


SECTION_TITLES: dict[str, tuple[int, str]] = {}
"""MyST label -> (chapter number, short section title) for every label a misconception cites."""


@dataclass(frozen=True)
class Misconception:
    """A known mistake: what it is called, what is true instead, and where the book says so."""

    key: str
    """Short identifier, e.g. ``ignore_topology``."""
    name: str
    """What the mistake is, as a noun phrase: "the flat collective"."""
    explanation: str
    """What is true instead, in a sentence or two."""
    section: str
    """MyST label of the section that explains it, e.g. ``ch1-collective``."""

    def where(self) -> str:
        """A pointer a student can follow: "see 'The collective' in chapter 1 (#ch1-collective)"."""
        chapter, title = SECTION_TITLES.get(self.section, (None, self.section))
        if chapter is None:
            return f"see #{self.section}"
        return f"see '{title}' in chapter {chapter} (#{self.section})"


CATALOGUE: dict[str, Misconception] = {}
"""Every registered misconception, by key."""


def register_sections(sections: dict[str, tuple[int, str]]) -> None:
    """Add a chapter's section labels to ``SECTION_TITLES``; a label already present keeps its title."""
    for label, title in sections.items():
        if SECTION_TITLES.get(label, title) != title:
            raise ValueError(f"section {label!r} must keep its title {title!r}, got {SECTION_TITLES[label]!r}")
        SECTION_TITLES[label] = title


def register(*items: Misconception) -> None:
    """Add misconceptions to ``CATALOGUE``; a key already present must not be redefined."""
    for item in items:
        if item.key in CATALOGUE and CATALOGUE[item.key] != item:
            raise ValueError(f"key must be new or identical, got a second definition of {item.key!r}")
        if item.section not in SECTION_TITLES:
            raise ValueError(
                f"section must be one of the labels in SECTION_TITLES, got {item.section!r}"
            )
        CATALOGUE[item.key] = item


def misconception(key: str | Misconception, *, section: str | None = None) -> Misconception:
    """Look a misconception up by key (or pass one through), optionally pointing at another section."""
    if isinstance(key, Misconception):
        found = key
    else:
        try:
            found = CATALOGUE[key]
        except KeyError:
            raise ValueError(f"key must be one of {sorted(CATALOGUE)}, got {key!r}") from None
    if section is not None and section != found.section:
        if section not in SECTION_TITLES:
            raise ValueError(f"section must be one of {sorted(SECTION_TITLES)}, got {section!r}")
        found = replace(found, section=section)
    return found




@dataclass(frozen=True)
class Suspect:
    """A wrong value a test knows how to explain."""

    value: Any
    """The wrong value, or a predicate ``value(answer) -> bool`` for a whole range of them."""
    misconception: Misconception
    detail: str = ""
    """A sentence specific to this exercise, appended to the general explanation."""


def suspect(key: str | Misconception, value: Any, detail: str = "", *, section: str | None = None) -> Suspect:
    """Pair a wrong value with the misconception (by key) that produces it."""
    return Suspect(value, misconception(key, section=section), detail)


def _is_number(value: Any) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool)


def _fmt(value: Any) -> str:
    if value is Ellipsis:
        return "..."
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, Integral):
        return f"{int(value):,}"
    if _is_number(value):
        value = float(value)
        if math.isfinite(value) and value == int(value) and abs(value) < 1e15:
            return f"{int(value):,}"
        return f"{value:.6g}"
    if isinstance(value, str):
        return repr(value)
    return repr(value)


def _close(got: Any, want: Any, tol: float, rel: float) -> bool:
    if callable(want) and not isinstance(want, type):
        try:
            return bool(want(got))
        except Exception:
            return False
    if _is_number(want):
        if not _is_number(got):
            return False
        got, want = float(got), float(want)
        if math.isnan(got) or math.isnan(want):
            return False
        if math.isinf(got) or math.isinf(want):
            return got == want
        return abs(got - want) <= max(tol, rel * abs(want), 1e-12 * max(1.0, abs(want)))
    if isinstance(want, str):
        return isinstance(got, str) and got.strip().lower() == want.strip().lower()
    if isinstance(want, bool):
        return isinstance(got, bool) and got is want
    if isinstance(want, Mapping):
        return (isinstance(got, Mapping) and set(got) == set(want)
                and all(_close(got[k], want[k], tol, rel) for k in want))
    if isinstance(want, (tuple, list)):
        return (isinstance(got, (tuple, list)) and len(got) == len(want)
                and all(_close(g, w, tol, rel) for g, w in zip(got, want)))
    return got == want


_SLIPS: dict[str, Callable[[Any], list[tuple[Any, str]]]] = {
    "units": lambda v: [(v * 8, "units"), (v / 8, "units")],
    "both_directions": lambda v: [(v * 2, "both_directions"), (v / 2, "both_directions")],
    "off_by_one": lambda v: [(v + 1, "off_by_one"), (v - 1, "off_by_one")],
}


def _slip_suspects(expected: Any, slips: Iterable[str], section: str | None) -> list[Suspect]:
    found: list[Suspect] = []
    for slip in slips:
        if slip not in _SLIPS:
            raise ValueError(f"slips must be among {sorted(_SLIPS)}, got {slip!r}")
        if _is_number(expected):
            for value, key in _SLIPS[slip](expected):
                found.append(suspect(key, value, section=section))
    return found


def matches(got: Any, suspects: Iterable[Suspect], *, tol: float = 0.0, rel: float = 0.0) -> list[Suspect]:
    """The suspects whose value ``got`` equals (within the tolerances), without duplicates."""
    out: list[Suspect] = []
    for s in suspects:
        if _close(got, s.value, tol, rel) and all(s.misconception.key != o.misconception.key for o in out):
            out.append(s)
    return out


def _explain(found: Sequence[Suspect]) -> str:
    def body(s: Suspect) -> str:
        text = f"{s.misconception.name}. {s.misconception.explanation}"
        if s.detail:
            text += f" {s.detail}"
        return f"{text} ({s.misconception.where()})"

    if len(found) == 1:
        return "That is the answer you get with " + body(found[0])
    lines = ["That matches more than one known mistake:"]
    lines += [f"  - {body(s)}" for s in found]
    return "\n".join(lines)


def require(value: Any, what: str, *, kind: str = "number") -> None:
    """Fail with a plain message when ``value`` is still a placeholder or has the wrong kind.

    ``kind`` is ``"number"``, ``"integer"``, ``"string"``, ``"bool"``, ``"mapping"`` or ``"any"``.
    """
    if value is Ellipsis:
        raise WrongAnswer(f"{what} is still `...`: replace the placeholder with your answer.")
    if value is None:
        raise WrongAnswer(
            f"{what} is None. If it comes from your function, the function's body is probably "
            f"still `...` or it forgets to `return` its result.")
    checks = {
        "number": (_is_number, "a number"),
        "integer": (lambda v: _is_number(v) and float(v) == int(v), "a whole number"),
        "string": (lambda v: isinstance(v, str), "a string"),
        "bool": (lambda v: isinstance(v, bool), "True or False"),
        "mapping": (lambda v: isinstance(v, Mapping), "a dict"),
        "any": (lambda v: True, "anything"),
    }
    if kind not in checks:
        raise ValueError(f"kind must be one of {sorted(checks)}, got {kind!r}")
    ok, noun = checks[kind]
    if not ok(value):
        raise WrongAnswer(f"{what} should be {noun}, got {_fmt(value)} ({type(value).__name__}).")
    if _is_number(value) and isinstance(value, Real) and math.isnan(float(value)):
        raise WrongAnswer(f"{what} is NaN: something divided zero by zero or used a missing value.")


def _kind_of(expected: Any) -> str:
    if isinstance(expected, bool):
        return "bool"
    if isinstance(expected, Integral):
        return "number"
    if _is_number(expected):
        return "number"
    if isinstance(expected, str):
        return "string"
    if isinstance(expected, Mapping):
        return "mapping"
    return "any"


def expect(
    got: Any,
    expected: Any,
    *,
    what: str,
    tol: float = 0.0,
    rel: float = 0.0,
    suspects: Iterable[Suspect] = (),
    slips: Iterable[str] = (),
    slip_section: str | None = None,
    hint: str = "",
    reveal: bool = True,
    verb: str = "your answer is",
) -> None:
    """Pass if ``got`` equals ``expected`` within ``max(tol, rel * |expected|)``; explain otherwise.

    ``suspects`` are known wrong values with their misconceptions; ``slips``
    adds generic ones relative to ``expected`` ("units": x8 and /8,
    "both_directions": x2 and /2, "off_by_one": +1 and -1), pointing at
    ``slip_section`` if given. ``hint`` is added when no known mistake
    matches. ``reveal=False`` (or running inside ``concealed()``, as the
    grader does for hidden tests) keeps the expected value out of the message.
    Strings compare case-insensitively; mappings, lists and tuples element-wise.
    Raises ``WrongAnswer`` (an ``AssertionError``).
    """
    if tol < 0 or rel < 0:
        raise ValueError(f"tol and rel must be >= 0, got tol={tol}, rel={rel}")
    require(got, what, kind=_kind_of(expected))
    if _close(got, expected, tol, rel):
        return
    candidates = list(suspects) + _slip_suspects(expected, slips, slip_section)
    found = matches(got, candidates, tol=tol, rel=rel)
    head = f"{what}: {verb} {_fmt(got)}" if verb.startswith("your") else f"{what} {verb} {_fmt(got)}"
    if reveal and not _CONCEALED.get():
        head += f", but the right answer is {_fmt(expected)}"
        if tol or rel:
            head += f" (within {_fmt(max(tol, rel * abs(float(expected))))})" if _is_number(expected) else ""
    head += "."
    if found:
        raise WrongAnswer(head + "\n" + _explain(found))
    tail = " It matches none of the mistakes this test knows."
    if hint:
        tail += " " + hint
    raise WrongAnswer(head + tail)


def reject(
    got: Any,
    *,
    what: str,
    suspects: Iterable[Suspect] = (),
    kind: str = "number",
    tol: float = 0.0,
    rel: float = 0.0,
) -> None:
    """Fail only if ``got`` is a placeholder, has the wrong kind, or equals a known mistake.

    Public tests use this for the headline answer, so that the student's copy
    (which holds the public tests) never contains the right value.
    """
    require(got, what, kind=kind)
    found = matches(got, list(suspects), tol=tol, rel=rel)
    if found:
        raise WrongAnswer(f"{what}: your answer is {_fmt(got)}.\n" + _explain(found))


def _call_text(name: str, kwargs: Mapping[str, Any]) -> str:
    def code(v: Any) -> str:
        if _is_number(v) and not isinstance(v, Integral):
            return f"{float(v):.6g}"
        return repr(v)

    args = ", ".join(f"{k}={code(v)}" for k, v in kwargs.items())
    return f"{name}({args})"


def expect_call(
    function: Any,
    kwargs: Mapping[str, Any],
    expected: Any,
    *,
    name: str | None = None,
    tol: float = 0.0,
    rel: float = 0.0,
    suspects: Iterable[Suspect] = (),
    slips: Iterable[str] = (),
    slip_section: str | None = None,
    hint: str = "",
    reveal: bool = True,
    result: Callable[[Any], Any] | None = None,
) -> Any:
    """Call ``function(**kwargs)`` and ``expect`` its result; return the result.

    ``name`` is how the message refers to the function (default: its
    ``__name__``). ``result`` extracts the compared value from what the
    function returns (e.g. one field of a tuple). An exception raised by the
    student's function becomes a ``WrongAnswer`` naming the call.
    """
    label = name or getattr(function, "__name__", "the function")
    if function is Ellipsis or function is None:
        raise WrongAnswer(f"{label} is not defined yet: run the cell that defines it.")
    if not callable(function):
        raise WrongAnswer(f"{label} should be a function, got {_fmt(function)} ({type(function).__name__}).")
    call = _call_text(label, kwargs)
    try:
        value = function(**kwargs)
    except WrongAnswer:
        raise
    except Exception as exc:  # the student's code failed: say where and how
        raise WrongAnswer(f"{call} raised {type(exc).__name__}: {exc}") from None
    if value is None or value is Ellipsis:
        raise WrongAnswer(f"{call} returned {_fmt(value)}: the function's body is probably still "
                          f"`...`, or it forgets to `return` its result.")
    if result is not None:
        try:
            value = result(value)
        except Exception as exc:
            raise WrongAnswer(
                f"{call} returned {_fmt(value)}, which does not have the expected shape "
                f"({type(exc).__name__}: {exc}).") from None
    expect(value, expected, what=call, tol=tol, rel=rel, suspects=suspects, slips=slips,
           slip_section=slip_section, hint=hint, reveal=reveal, verb="returns")
    return value
