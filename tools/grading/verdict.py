"""Pass 3 (in the grader): run the tests on the plain values a sandbox reported.

The tests are otter's, from the master; the environment they see is built
here from decoded JSON: the student's variables as built-in values, and for
each function a replay stub that returns what the student's function returned
in the sandbox for exactly those arguments (or raises what it raised, or a
``TookTooLong``). Nothing the notebook did to otter, ``clustermath``,
builtins or NumPy exists in this process, so it cannot change a verdict.

Scores: a question's points are shared equally by its hidden test cases;
public test cases (the checks students run themselves, including the "answers
ready" shape checks) are worth nothing when the question has hidden ones.
Messages of hidden cases are produced inside ``clustermath.feedback.concealed()``
(no expected value) and never quote the test's source.
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


class TookTooLong(Exception):
    """A student's function did not return within its time limit in the sandbox."""


class NotEvaluated(Exception):
    """A call the sandbox was not asked for, or did not report (it stopped first)."""


_EXC_TYPES: dict[str, type] = {}


def _exception(etype: str) -> type:
    """An exception class carrying the name of the one the student's code raised."""
    name = etype if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,60}", etype or "") and not keyword.iskeyword(etype) \
        else "Error"
    if name not in _EXC_TYPES:
        _EXC_TYPES[name] = type(name, (Exception,), {})
    return _EXC_TYPES[name]


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

    def scores(self, plan) -> dict[str, float]:
        out = {q: 0.0 for q in plan.points}
        for case in self.cases:
            out[case.question] = out.get(case.question, 0.0) + case.score
        return {q: round(v, 6) for q, v in out.items()}


class _Stub:
    """Replays one student function from the sandbox's reports."""

    def __init__(self, name: str, results: dict[str, dict], note: str) -> None:
        self.__name__ = name
        self._results, self._note = results, note

    def __call__(self, *args, **kwargs):
        record = self._results.get(plain.call_key(self.__name__, list(args), kwargs))
        if record is None:
            raise NotEvaluated(self._note or "this call was not evaluated")
        if "value" in record:
            try:
                return plain.decode(record["value"])
            except plain.Invalid:
                return plain.Opaque("unreadable", "")
        if "timeout" in record:
            if record["timeout"]:
                raise TookTooLong(f"no result within {record['timeout']:g} s, the time limit for one call")
            raise TookTooLong("not run: the function had already run out of time twice, "
                              "or the time for all calls was used up")
        raise _exception(str(record.get("etype", "")))(str(record.get("error", ""))[:300])


def environment(plan, answers) -> dict:
    """The names the tests read, built from what the sandbox reported."""
    results: dict[str, dict] = {}
    for index, (name, args, kwargs) in enumerate(plan.calls):
        record = answers.calls.get(index)
        if isinstance(record, dict):
            results[json.dumps([name, args, kwargs], sort_keys=True, separators=(",", ":"))] = record
    note = "" if answers.finished else "not evaluated: the notebook stopped before this call"
    env = {}
    for name in plan.names:
        record = answers.names.get(name)
        if not isinstance(record, dict) or not record.get("defined"):
            env[name] = None  # as otter does for a missing name
        elif record.get("callable") is True:
            env[name] = _Stub(name, results, note)
        else:
            try:
                env[name] = plain.decode(record.get("value"))
            except plain.Invalid:
                env[name] = plain.Opaque("unreadable", "")
    return env


def _cases(plan):
    """(question, otter test file) pairs, compiled once per plan."""
    cached = getattr(plan, "_compiled", None)
    if cached is None:
        from plan import test_files

        cached = sorted(test_files(plan.tests).items())
        object.__setattr__(plan, "_compiled", cached)
    return cached


def grade(plan, answers) -> Graded:
    """Run every test case of the plan on the reported answers."""
    from clustermath import feedback as fb

    env = environment(plan, answers)
    graded = Graded()
    for question, tf in _cases(plan):
        hidden = [c for c in tf.test_cases if c.hidden]
        weighted = hidden or list(tf.test_cases)
        share = float(plan.points.get(question, 0.0)) / len(weighted) if weighted else 0.0
        for case in tf.test_cases:
            points = share if case in weighted else 0.0
            kwargs = {p: env.get(p) for p in case.body._get_func_params()}
            try:
                if case.hidden:
                    with fb.concealed():
                        case.body.test_func(**kwargs)
                else:
                    case.body.test_func(**kwargs)
            except fb.WrongAnswer as exc:
                graded.cases.append(CaseResult(question, case.name, case.hidden, points, False, str(exc)))
            except Exception as exc:  # noqa: BLE001
                if case.hidden:
                    message = ("A hidden check did not pass, in a way the test cannot name "
                               f"({type(exc).__name__}). Re-read the exercise's Deliver list.")
                else:
                    message = f"{type(exc).__name__}: {str(exc)[:300]}"
                graded.cases.append(CaseResult(question, case.name, case.hidden, points, False, message))
            else:
                graded.cases.append(CaseResult(question, case.name, case.hidden, points, True))
    return graded


def answers_from_namespace(plan, namespace: dict):
    """What a sandbox would report for a notebook whose namespace is ``namespace`` (run in this process).

    For the grader's own tests and the plan's self-check only: it calls the
    namespace's functions here, without any isolation.
    """
    from sandbox import Answers

    answers = Answers(cells={"event": "cells", "errors": [], "stopped": "", "seconds": 0.0}, finished=True)
    for name in plan.names:
        value = namespace.get(name)
        record = {"event": "name", "name": name, "defined": name in namespace, "callable": callable(value)}
        if name in namespace and not callable(value):
            record["value"] = plain.encode(value)
        answers.names[name] = record
    for index, (name, args, kwargs) in enumerate(plan.calls):
        try:
            value = namespace[name](*plain.decode(args), **plain.decode(kwargs))
            answers.calls[index] = {"event": "call", "index": index, "value": plain.encode(value)}
        except Exception as exc:  # noqa: BLE001
            answers.calls[index] = {"event": "call", "index": index, "etype": type(exc).__name__,
                                    "error": str(exc)[:300]}
    return answers


def answers_from_master(plan):
    """The master's own answers, as a finished sandbox run would report them."""
    from sandbox import Answers

    return Answers(cells={"event": "cells", "errors": [], "stopped": "", "seconds": 0.0},
                   names=dict(plan.master_answers["names"]),
                   calls={int(k): v for k, v in plan.master_answers["calls"].items()},
                   finished=True)
