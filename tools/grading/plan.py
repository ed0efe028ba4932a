"""Pass 1 (in the grader, trusted): learn from the master what the tests read and call.

The otter master (``solutions/chNN_*.ipynb``) stays the single source of truth.
``otter assign`` turns it into the autograder notebook, whose metadata holds
every test file (public and hidden, otter's exception-based format). Each test
case is a function whose parameters are names of the student's notebook.

Here every test case runs once against the master's own solutions, with each
of the master's functions wrapped in a recorder. The recording says which
names the tests read and which calls they make (function name and plain-data
arguments). That, and nothing about the expected values, is what the sandbox
is asked for (pass 2); the tests themselves then run again in the grader on
the plain values that come back (pass 3, ``verdict.py``).

The plan checks itself: replaying the master's own answers through pass 3
must pass every test case, or building the plan fails and says which case
cannot be replayed (for example one that calls a student's function with an
argument that is not plain data).

Calls are recorded per test case and per occurrence: a case that calls a
function twice with the same arguments (a "same seed, same result" check)
asks the sandbox for two real runs, and the verdict replays the n-th call of a
case from the n-th run. Calls with equal arguments in different cases share
their runs.

The master's notebook metadata may say which exercises want the student's own
code (``metadata.grading.own_code``: question -> the ``clustermath`` modules
its code must not call); the plan carries that rule to the sandbox (which
watches those modules) and to the verdict.

Plans are cached per master (keyed by the master's content, otter's version,
the ``clustermath`` sources, this module's ``PLAN_VERSION`` and the sources of
the modules that record and replay calls).

Imports: this module uses ``verdict`` (to compile the tests and check the
replay); ``verdict`` never imports this one.
"""
from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import pathlib
import sys
import tempfile
from dataclasses import asdict, dataclass, field

import nbformat

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
import exercises  # noqa: E402  (tools/exercises.py)
import plain  # noqa: E402
import verdict  # noqa: E402
from verdict import case_params, test_files  # noqa: E402

PLAN_VERSION = 3


class PlanError(RuntimeError):
    """A master whose tests cannot be graded outside the sandbox as they stand."""


@dataclass(frozen=True)
class Plan:
    """Everything the grader needs for one assignment; JSON-serialisable."""

    assignment: str
    notebook: str
    """The student notebook's file name (its ``grader.check`` cells read it)."""
    points: dict
    """Question -> points."""
    tests: dict
    """Question -> otter test file source (never leaves the grader)."""
    names: list
    """Every name a test case reads, in order."""
    calls: list
    """Every recorded call: [function name, encoded args list, encoded kwargs dict, occurrence], where
    occurrence n is the (n+1)-th call with those arguments inside one test case."""
    master_answers: dict
    """The master's own answers as a sandbox would report them (for the self-check and the tests)."""
    own_code: dict = field(default_factory=dict)
    """Question -> ``clustermath`` modules its code must not call (the master's metadata)."""
    case: dict | None = None
    """The master's case declaration (``Case.spec()``: allowed sets and defaults), or None: the tests'
    ``CASE`` parameter is filled by the grader, never read from the notebook (issue 31)."""

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> "Plan":
        return cls(**json.loads(text))

    @property
    def possible(self) -> float:
        return float(sum(self.points.values()))


class _Recorder:
    """Stands for one of the master's functions in one test case: records each call, then makes it."""

    def __init__(self, name: str, real, calls: dict, problems: list, seen: dict) -> None:
        self.__name__ = name
        self._real, self._calls, self._problems, self._seen = real, calls, problems, seen

    def __call__(self, *args, **kwargs):
        key = plain.call_key(self.__name__, list(args), kwargs)
        if '"opaque"' in key:
            self._problems.append(f"{self.__name__} is called with an argument that is not plain data: {key[:200]}")
        nth = self._seen.get(key, 0)
        self._seen[key] = nth + 1
        self._calls.setdefault((key, nth), [self.__name__, plain.encode(list(args)),
                                            plain.encode(dict(sorted(kwargs.items()))), nth])
        return self._real(*args, **kwargs)


def master_environment(autograder_nb: nbformat.NotebookNode, case=None) -> dict:
    """Execute the master's code cells (solutions included) in this process; return the namespace.
    ``case``: a drawn case that replaces the one the master's case cell declares."""
    namespace: dict = {"__name__": "__master__"}
    with contextlib.redirect_stdout(io.StringIO()), tempfile.TemporaryDirectory(prefix="grading-master-") as tmp:
        cwd = os.getcwd()
        os.chdir(tmp)
        try:
            for cell in autograder_nb.cells:
                if cell.cell_type == "code" and not exercises._is_plumbing(cell):
                    exec(compile(cell.source, "<master>", "exec"), namespace)
                    if case is not None and exercises.CASE_TAG in cell.metadata.get("tags", []):
                        namespace[verdict.CASE_NAME] = case
        finally:
            os.chdir(cwd)
    return namespace


def own_code_rules(master: pathlib.Path, questions) -> dict:
    """``metadata.grading.own_code`` of a master: question -> module prefixes, checked."""
    nb = nbformat.read(master, as_version=4)
    rules = nb.metadata.get("grading", {}).get("own_code", {})
    if not isinstance(rules, dict):
        raise PlanError(f"{master.name}: metadata.grading.own_code must map questions to module lists")
    for question, modules in rules.items():
        if question not in questions:
            raise PlanError(f"{master.name}: metadata.grading.own_code names {question!r}, not a question")
        if not (isinstance(modules, list) and all(isinstance(m, str) and m.startswith("clustermath.")
                                                  for m in modules)):
            raise PlanError(f"{master.name}: metadata.grading.own_code[{question!r}] must list "
                            "clustermath modules")
    return {q: list(m) for q, m in rules.items()}


def autograder_notebook(master: pathlib.Path) -> nbformat.NotebookNode:
    """otter assign's autograder notebook for a master: solutions, and every test in its metadata."""
    with tempfile.TemporaryDirectory(prefix="otter-assign-") as tmp:
        exercises.otter_assign(master, pathlib.Path(tmp) / "dist")
        return nbformat.read(pathlib.Path(tmp) / "dist" / "autograder" / master.name, as_version=4)


def build(master: pathlib.Path, autograder_nb: nbformat.NotebookNode | None = None) -> Plan:
    """Record what the master's tests read and call, and check that the replay passes them all."""
    if autograder_nb is None:
        autograder_nb = autograder_notebook(master)
    tests = dict(autograder_nb.metadata["otter"]["tests"])
    assignment, points = exercises._question_points(master)
    env = master_environment(autograder_nb)

    names: list[str] = []
    calls: dict[tuple[str, int], list] = {}
    problems: list[str] = []
    declared = env.get(verdict.CASE_NAME)
    spec = declared.spec() if hasattr(declared, "spec") and hasattr(declared, "allowed") else None
    _record(tests, env, names, calls, problems)
    if spec is not None:  # the calls must not depend on the case: every student's are the same
        from clustermath.feedback.variants import draw

        for student in CASE_CHECKS:
            drawn = draw(b"plan-self-check-" * 2, student, declared)
            other_calls: dict = {}
            other_problems: list[str] = []
            _record(tests, master_environment(autograder_nb, drawn), [], other_calls, other_problems)
            problems += [f"on the drawn case {drawn}: {p}" for p in other_problems]
            extra = sorted(k[0] for k in set(other_calls) - set(calls))
            if extra:
                problems.append(f"on the drawn case {drawn}, the tests call the student's functions with inputs "
                                f"the default case does not (function inputs must not depend on CASE): {extra[:3]}")
    # what a sandbox running the master would report
    answers = {"names": {}, "calls": {}}
    for name in names:
        value = env.get(name)
        record = {"event": "name", "name": name, "defined": name in env, "callable": callable(value)}
        if name in env and not callable(value):
            record["value"] = plain.encode(value)
        answers["names"][name] = record
    ordered = list(calls.values())
    for index, (name, args, kwargs, _) in enumerate(ordered):
        try:
            answers["calls"][str(index)] = {"event": "call", "index": index, "value": plain.encode(
                env[name](*plain.decode(args), **plain.decode(kwargs)))}
        except Exception as exc:
            answers["calls"][str(index)] = {"event": "call", "index": index, "etype": type(exc).__name__,
                                            "error": str(exc)}
    plan = Plan(assignment, master.name, points, tests, names, ordered, answers, own_code_rules(master, points),
                spec)
    graded = verdict.grade(plan, verdict.answers_from_master(plan))
    for result in graded.cases:
        if not result.passed:
            problems.append(f"{result.question}: {result.name} fails when the master's answers are "
                            f"replayed as plain data: {result.message[:300]}")
    if problems:
        raise PlanError(f"{master.name} cannot be graded from plain data:\n  " + "\n  ".join(problems))
    return plan


CASE_CHECKS = ("drawn-1", "drawn-2", "drawn-3")
"""Students whose cases (drawn with a fixed key) the plan's self-check runs the master's tests on."""


def _record(tests: dict, env: dict, names: list, calls: dict, problems: list) -> None:
    """Run every test case on ``env`` with recorders: the names read (into ``names``), the calls made."""
    for question, tf in sorted(test_files(tests).items()):
        for case in tf.test_cases:
            kwargs = {}
            seen: dict[str, int] = {}  # occurrences are counted per test case
            for param in case_params(case):
                if param == "env":
                    problems.append(f"{question}: {case.name} takes the whole environment (env)")
                    continue
                value = env.get(param)
                if param == verdict.CASE_NAME and hasattr(value, "allowed"):
                    kwargs[param] = value  # the grader's own, never asked of the sandbox
                    continue
                if param not in names:
                    names.append(param)
                kwargs[param] = _Recorder(param, value, calls, problems, seen) if callable(value) else value
            try:
                case.body.test_func(**kwargs)
            except Exception as exc:
                problems.append(f"{question}: {case.name} fails on the master's solutions: {exc}")


def _digest(master: pathlib.Path) -> str:
    import importlib.metadata

    import clustermath

    h = hashlib.sha256()  # otter's version from its metadata: importing otter takes a second
    h.update(f"{PLAN_VERSION} {importlib.metadata.version('otter-grader')}".encode())
    h.update(master.read_bytes())
    for name in ("plan.py", "verdict.py", "plain.py"):  # how calls are recorded and keyed
        h.update((HERE / name).read_bytes())
    for path in sorted(pathlib.Path(clustermath.__file__).parent.rglob("*.py")):
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def plans(cache: pathlib.Path, solutions: pathlib.Path = exercises.SOLUTIONS) -> dict[str, Plan]:
    """One plan per master in ``solutions`` (assignment -> plan), built or read from ``cache``."""
    from concurrent.futures import ThreadPoolExecutor

    cache.mkdir(mode=0o700, parents=True, exist_ok=True)
    found: dict[str, Plan] = {}
    paths = {master: cache / f"{master.stem}-{_digest(master)}.plan.json" for master in exercises.masters(solutions)}
    missing = [m for m, path in paths.items() if not path.is_file()]
    with ThreadPoolExecutor(max_workers=2) as pool:  # otter assign runs in a subprocess: overlap them
        assigned = dict(zip(missing, pool.map(autograder_notebook, missing)))
    for master, path in paths.items():
        if path.is_file():
            plan = Plan.from_json(path.read_text())
        else:
            plan = build(master, assigned[master])
            for stale in cache.glob(f"{master.stem}-*.plan.json"):
                stale.unlink()
            tmp = path.with_suffix(".tmp")
            tmp.write_text(plan.to_json())
            tmp.replace(path)
        found[plan.assignment] = plan
    return found
