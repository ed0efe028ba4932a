"""Pass 3 (in the grader): run the tests on the plain values a sandbox reported.

The tests are otter's, from the master; the environment they see is built
here from decoded JSON: the student's variables as built-in values, and for
each function a replay stub that returns what the student's function returned
in the sandbox for exactly those arguments (or raises what it raised, or a
``TookTooLong``). Nothing the notebook did to otter, ``clustermath``,
builtins or NumPy exists in this process, so it cannot change a verdict.

Each test case sees its own stubs: the n-th call a case makes with given
arguments replays the n-th call the sandbox made with them, so a check that
calls a function twice with one seed compares two real runs (a simulation
that ignores its seed fails it), exactly as it would in Jupyter.

Scores: a question's points are shared equally by its hidden test cases;
public test cases (the checks students run themselves, including the "answers
ready" shape checks) are worth nothing when the question has hidden ones.
Messages of hidden cases are produced inside ``clustermath.feedback.concealed()``
(no expected value) and never quote the test's source.

Where the master says an exercise asks for the student's own code
(``Plan.own_code``), a question whose function called the book's model, or
whose cells did, fails its checks with a message that says so.

This module imports only ``plain`` among its siblings; ``plan.py`` imports it
(never the other way round), and the batch runs it in a worker process
(``judge.py``) under a time limit.
"""
from __future__ import annotations

import json
import keyword
import re
import sys
import pathlib
from dataclasses import dataclass, field

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import plain  # noqa: E402

MAX_CELL_ERRORS = 20
SUBMISSION_ITEMS = 2_000_000
"""Items all the decoded values of one submission may hold together."""


class TookTooLong(Exception):
    """A student's function did not return within its time limit in the sandbox."""


class NotEvaluated(Exception):
    """A call the sandbox was not asked for, or did not report (it stopped first)."""


class OwnCodeRequired(Exception):
    """The student's function called the book's own model where the exercise asks for the student's code."""

    def __init__(self, models: list[str]) -> None:
        super().__init__(_own_code_message(models))
        self.models = models


_EXC_TYPES: dict[str, type] = {}


def _exception(etype: str) -> type:
    """An exception class carrying the name of the one the student's code raised."""
    name = etype if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,60}", etype or "") and not keyword.iskeyword(etype) \
        else "Error"
    if name not in _EXC_TYPES:
        _EXC_TYPES[name] = type(name, (Exception,), {})
    return _EXC_TYPES[name]


@dataclass
class Answers:
    """What one sandbox reported, as parsed JSON records (every value still encoded)."""

    cells: dict | None = None
    names: dict[str, dict] = field(default_factory=dict)
    calls: dict[int, dict] = field(default_factory=dict)
    finished: bool = False
    cell_questions: dict[int, str] = field(default_factory=dict)
    """Cell index -> the question whose check cell follows it (from the notebook, read by the grader)."""
    cell_names: dict[int, list[str]] = field(default_factory=dict)
    """Cell index -> the names the cell assigns or defines (from the notebook, read by the grader)."""


def answers_from_lines(plan, lines: list[bytes], cell_questions: dict[int, str] | None = None,
                       cell_names: dict[int, list[str]] | None = None) -> Answers:
    """Parse the runner's JSON lines: the first record of each kind wins, anything malformed is skipped.

    Only the records the plan asked for are kept (one per name, one per call
    index), so the work is bounded by the plan, not by what the notebook wrote.
    """
    answers = Answers(cell_questions=dict(cell_questions or {}), cell_names=dict(cell_names or {}))
    wanted = set(plan.names)
    for line in lines:
        if line.count(b",") + line.count(b"[") + line.count(b"{") > 4 * plain.MAX_ITEMS:
            continue  # more items than one value may hold: never parsed (a flood of [] would fill memory)
        try:
            record = json.loads(line)
        except (ValueError, RecursionError, MemoryError):
            continue
        if type(record) is not dict:
            continue
        event = record.get("event")
        if event == "cells" and answers.cells is None:
            answers.cells = record
        elif event == "name" and type(record.get("name")) is str and record["name"] in wanted:
            answers.names.setdefault(record["name"], record)
        elif event == "call" and type(record.get("index")) is int and 0 <= record["index"] < len(plan.calls):
            answers.calls.setdefault(record["index"], record)
        elif event == "done":
            answers.finished = True
    return answers


@dataclass
class CaseResult:
    question: str
    name: str
    hidden: bool
    points: float
    passed: bool
    message: str = ""

    @property
    def score(self) -> float:
        return self.points if self.passed else 0.0


@dataclass
class Graded:
    cases: list[CaseResult] = field(default_factory=list)
    borrowed: dict[str, list[str]] = field(default_factory=dict)
    """Question -> the book's model functions its code called where the exercise asks for the student's own."""

    def scores(self, plan) -> dict[str, float]:
        out = {q: 0.0 for q in plan.points}
        for case in self.cases:
            out[case.question] = out.get(case.question, 0.0) + case.score
        return {q: round(v, 6) for q, v in out.items()}


def _models(record) -> list[str]:
    """The book's model functions a record says the student's code called (strings only, capped)."""
    found = record.get("models") if isinstance(record, dict) else None
    if type(found) is not list:
        return []
    return [m[:120] for m in found[:50] if type(m) is str]


def _forbidden(models: list[str], prefixes: list[str]) -> list[str]:
    return sorted({m for m in models if any(m == p or m.startswith(p + ".") for p in prefixes)})


class _Stub:
    """Replays one student function from the sandbox's reports, the n-th call with given arguments
    from the n-th run the sandbox made with them."""

    def __init__(self, name: str, results: dict[tuple[str, int], dict], note: str, budget: plain.Budget,
                 own_code: list[str]) -> None:
        self.__name__ = name
        self._results, self._note, self._budget, self._own_code = results, note, budget, own_code
        self._seen: dict[str, int] = {}

    def __call__(self, *args, **kwargs):
        key = plain.call_key(self.__name__, list(args), kwargs)
        nth = self._seen.get(key, 0)
        self._seen[key] = nth + 1
        record = self._results.get((key, nth))
        if record is None:
            raise NotEvaluated(self._note or "this call was not evaluated")
        borrowed = _forbidden(_models(record), self._own_code)
        if borrowed:
            raise OwnCodeRequired(borrowed)
        if "value" in record:
            try:
                return plain.decode(record["value"], budget=self._budget)
            except plain.Invalid:
                return plain.Opaque("unreadable", "")
        if "timeout" in record:
            if record["timeout"]:
                raise TookTooLong(f"no result within {record['timeout']:g} s, the time limit for one call")
            raise TookTooLong("not run: the function had already run out of time twice, "
                              "or the time for all calls was used up")
        raise _exception(str(record.get("etype", ""))[:80])(str(record.get("error", ""))[:300])


def _own_code_message(borrowed: list[str]) -> str:
    return (f"Your code calls the book's own model ({', '.join(borrowed)}), and this exercise asks you to "
            "write it yourself (the notebook's introduction says which exercises may use clustermath).")


def _values(plan, answers: Answers, budget: plain.Budget) -> dict:
    """The student's plain values by name (functions are marked, not built)."""
    values = {}
    for name in plan.names:
        record = answers.names.get(name)
        if not isinstance(record, dict) or not record.get("defined"):
            values[name] = None  # as otter does for a missing name
        elif record.get("callable") is True:
            values[name] = _Stub
        else:
            try:
                values[name] = plain.decode(record.get("value"), budget=budget)
            except plain.Invalid:
                values[name] = plain.Opaque("unreadable", "")
    return values


def _results(plan, answers: Answers) -> dict[tuple[str, int], dict]:
    results: dict[tuple[str, int], dict] = {}
    for index, call in enumerate(plan.calls):
        record = answers.calls.get(index)
        if isinstance(record, dict):
            name, args, kwargs = call[:3]
            nth = call[3] if len(call) > 3 else 0
            results[(json.dumps([name, args, kwargs], sort_keys=True, separators=(",", ":")), nth)] = record
    return results


def question_names(plan) -> dict[str, set[str]]:
    """Question -> the names of the notebook its test cases read."""
    cached = getattr(plan, "_question_names", None)
    if cached is None:
        cached = {q: {p for case in tf.test_cases for p in case_params(case) if p != CASE_NAME}
                  for q, tf in compiled(plan)}
        object.__setattr__(plan, "_question_names", cached)
    return cached


def charged(plan, answers: Answers, index: int) -> set[str]:
    """The questions a cell's model calls are charged to: the one whose check follows the cell, and
    every question whose names the cell assigns (one cell may answer several questions)."""
    questions = {answers.cell_questions[index]} if index in answers.cell_questions else set()
    assigned = set(answers.cell_names.get(index) or ())
    if assigned:
        questions |= {q for q, names in question_names(plan).items() if names & assigned}
    return questions


def borrowed_in_cells(plan, answers: Answers) -> dict[str, list[str]]:
    """Question -> model functions its cells called where the master asks for the student's own code."""
    cells = answers.cells if isinstance(answers.cells, dict) else {}
    used = cells.get("models")
    found: dict[str, set[str]] = {}
    if type(used) is not dict:
        return {}
    own_code = getattr(plan, "own_code", None) or {}
    for index, models in list(used.items())[:500]:
        try:
            questions = charged(plan, answers, int(index))
        except (TypeError, ValueError):
            continue
        for question in questions:
            bad = _forbidden(_models({"models": models}), own_code.get(question, []))
            if bad:
                found.setdefault(question, set()).update(bad)
    return {q: sorted(v) for q, v in found.items()}


def test_files(tests: dict) -> dict:
    """Question -> otter ``ExceptionTestFile`` (compiles the trusted test sources)."""
    from otter.test_files.exception_test import ExceptionTestFile

    return {q: ExceptionTestFile.from_string(src, path=f"{q}.py") for q, src in tests.items()}


def case_params(case) -> list[str]:
    """The names of the student's notebook one test case reads (its function's parameters)."""
    return case.body._get_func_params()


def compiled(plan):
    """(question, otter test file) pairs, compiled once per plan."""
    cached = getattr(plan, "_compiled", None)
    if cached is None:
        cached = sorted(test_files(plan.tests).items())
        object.__setattr__(plan, "_compiled", cached)
    return cached


CASE_NAME = "CASE"
"""The test parameter that reads the exercise's case: never the notebook's value, always the grader's own
(the default case, or the case drawn for the student the file belongs to, ``case_for``)."""


def case_for(plan, values: dict | None = None):
    """The case the tests see: the plan's declared case at ``values`` (the student's drawn values), or at
    its defaults; None for a chapter without a case."""
    spec = getattr(plan, "case", None)
    if not spec:
        return None
    from clustermath.feedback.variants import Case

    return Case.from_spec(spec, values)


def _run_case(case, kwargs: dict, fb) -> tuple[bool, str, BaseException | None]:
    """Run one test case: (passed, message, the exception)."""
    try:
        if case.hidden:
            with fb.concealed():
                case.body.test_func(**kwargs)
        else:
            case.body.test_func(**kwargs)
    except fb.WrongAnswer as exc:
        return False, str(exc), exc
    except OwnCodeRequired as exc:
        return False, str(exc), exc
    except Exception as exc:  # noqa: BLE001
        if case.hidden:
            message = ("A hidden check did not pass, in a way the test cannot name "
                       f"({type(exc).__name__}). Re-read the exercise's Deliver list.")
        else:
            message = f"{type(exc).__name__}: {str(exc)[:300]}"
        return False, message, exc
    return True, "", None


def _kwargs(case, values: dict, results, note, budget, own: list, exercise_case) -> dict:
    kwargs = {}
    for p in case_params(case):  # fresh stubs per case: the n-th call replays the n-th run
        if p == CASE_NAME and exercise_case is not None:
            kwargs[p] = exercise_case
            continue
        value = values.get(p)
        kwargs[p] = _Stub(p, results, note, budget, own) if value is _Stub else value
    return kwargs


def grade(plan, answers: Answers, *, budget: plain.Budget | None = None, case: dict | None = None) -> Graded:
    """Run every test case of the plan on the reported answers; ``case``: the values of the student's
    drawn case (None: the default case)."""
    from clustermath import feedback as fb

    budget = budget or plain.Budget(SUBMISSION_ITEMS)
    values = _values(plan, answers, budget)
    results = _results(plan, answers)
    note = "" if answers.finished else "not evaluated: the notebook stopped before this call"
    own_code = getattr(plan, "own_code", None) or {}
    exercise_case = case_for(plan, case)
    in_cells = borrowed_in_cells(plan, answers)
    graded = Graded(borrowed={q: list(v) for q, v in in_cells.items()})
    for question, tf in compiled(plan):
        hidden = [c for c in tf.test_cases if c.hidden]
        weighted = hidden or list(tf.test_cases)
        share = float(plan.points.get(question, 0.0)) / len(weighted) if weighted else 0.0
        for case_ in tf.test_cases:
            points = share if case_ in weighted else 0.0
            if question in in_cells:  # the answers of this question came from the book's model
                graded.cases.append(CaseResult(question, case_.name, case_.hidden, points, False,
                                               _own_code_message(in_cells[question])))
                continue
            kwargs = _kwargs(case_, values, results, note, budget, own_code.get(question, []), exercise_case)
            passed, message, exc = _run_case(case_, kwargs, fb)
            if isinstance(exc, OwnCodeRequired):
                graded.borrowed[question] = sorted(set(graded.borrowed.get(question, [])) | set(exc.models))
            graded.cases.append(CaseResult(question, case_.name, case_.hidden, points, passed, message))
    return graded


def case_dependent(plan) -> list[tuple[str, object]]:
    """(question, test case) of every test case that reads the exercise's case."""
    return [(q, c) for q, tf in compiled(plan) for c in tf.test_cases if CASE_NAME in case_params(c)]


def fits_better(plan, answers: Answers, graded: Graded, others: list, *,
                budget: plain.Budget | None = None) -> tuple[str, int, int, int] | None:
    """Whose case the answers fit best, when that is not their own: (student, checks passed on that
    case, checks passed on their own, case-dependent checks), or None.

    Run only when a submission lost points (``graded``); only the test cases that read the case are
    replayed, on each other student's case (``others``: [student, values] pairs).
    """
    dependent = case_dependent(plan)
    if not dependent or not others or all(c.passed for c in graded.cases):
        return None
    from clustermath import feedback as fb

    names = {(q, c.name) for q, c in dependent}
    own = sum(1 for r in graded.cases if (r.question, r.name) in names and r.passed)
    budget = budget or plain.Budget(SUBMISSION_ITEMS)
    values = _values(plan, answers, budget)
    results = _results(plan, answers)
    own_code = getattr(plan, "own_code", None) or {}
    best: tuple[str, int] | None = None
    for student, case_values in others:
        try:
            exercise_case = case_for(plan, case_values)
        except ValueError:
            continue
        passed = 0
        for question, case_ in dependent:
            kwargs = _kwargs(case_, values, results, "", budget, own_code.get(question, []), exercise_case)
            passed += _run_case(case_, kwargs, fb)[0]
        if passed > own and (best is None or passed > best[1]):
            best = (student, passed)
    return (best[0], best[1], own, len(dependent)) if best else None


def answers_from_namespace(plan, namespace: dict) -> Answers:
    """What a sandbox would report for a notebook whose namespace is ``namespace`` (run in this process).

    For the grader's own tests and the plan's self-check only: it calls the
    namespace's functions here, without any isolation.
    """
    answers = Answers(cells={"event": "cells", "errors": [], "stopped": "", "seconds": 0.0}, finished=True)
    for name in plan.names:
        value = namespace.get(name)
        record = {"event": "name", "name": name, "defined": name in namespace, "callable": callable(value)}
        if name in namespace and not callable(value):
            record["value"] = plain.encode(value)
        answers.names[name] = record
    for index, (name, args, kwargs, *_) in enumerate(plan.calls):
        try:
            value = namespace[name](*plain.decode(args), **plain.decode(kwargs))
            answers.calls[index] = {"event": "call", "index": index, "value": plain.encode(value)}
        except Exception as exc:  # noqa: BLE001
            answers.calls[index] = {"event": "call", "index": index, "etype": type(exc).__name__,
                                    "error": str(exc)[:300]}
    return answers


def answers_from_master(plan) -> Answers:
    """The master's own answers, as a finished sandbox run would report them."""
    return Answers(cells={"event": "cells", "errors": [], "stopped": "", "seconds": 0.0},
                   names=dict(plan.master_answers["names"]),
                   calls={int(k): v for k, v in plan.master_answers["calls"].items()},
                   finished=True)
