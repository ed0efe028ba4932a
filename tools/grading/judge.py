"""Decode a sandbox's report and run the verdict in a worker process, under a time limit.

Everything the grader does with a submission's data happens here, away from
the batch: parsing the JSON lines, decoding the values (``plain.decode``,
with per-value and per-submission item caps and a deadline) and running the
tests on them (``verdict.grade``). The batch process only waits, at most
``seconds``; a worker that does not answer in time is killed (and a new one
started for the next submission), so a forged answer costs the grader at
most that much, never the batch.

Protocol (``multiprocessing.connection`` over the worker's stdin/stdout):
the batch may first send ``("plans", {plan_key: plan_json})`` (no answer: the
worker compiles them while the first sandboxes run), then, per submission,
``("judge", plan_key, plan_json | None, lines, cell_questions, seconds, cell_names)``;
the worker answers ``{"cases": [...], "cells": {...}, "borrowed": {...},
"cpu": s}`` or ``{"error": "..."}``. Plans travel once per worker. Before the
sandbox, ``("inspect", data, is_notebook, suffix, assignments)`` has the
worker read the submitted bytes as a notebook (``inspection.py``) under the
same kind of time limit; it answers what ``inspection.inspect`` returns.

Run as ``python judge.py`` (the batch does that); the module also offers
``Judge``, the batch's side.
"""
from __future__ import annotations

import hashlib
import os
import pathlib
import pickle
import subprocess
import sys
import threading
import time
from multiprocessing.connection import Connection

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

MAX_ERRORS = 20
WORKER_MEMORY = 1 << 30
"""Address space of one verdict worker (RLIMIT_AS, set by the worker before it reads anything): a
warmed worker holds about 0.4 GB; past the limit an allocation fails with MemoryError, which the
worker answers as an error for that file (issue 44: two workers parsing a huge expression took
3.2 GB each from the host)."""


def _cells_summary(cells) -> dict:
    """The parts of the cells record the report uses, as short strings."""
    cells = cells if isinstance(cells, dict) else {}
    errors = cells.get("errors")
    errors = [str(e)[:200] for e in errors[:MAX_ERRORS] if type(e) is str] if type(errors) is list else []
    stopped = cells.get("stopped")
    return {"errors": errors, "stopped": stopped[:200] if type(stopped) is str else ""}


def limit_memory(limit: int = WORKER_MEMORY) -> None:
    """Cap this process's address space at ``limit`` bytes (never raised above an existing cap)."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    capped = limit if hard == resource.RLIM_INFINITY else min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (capped, capped if hard == resource.RLIM_INFINITY else hard))


def serve() -> int:
    """The worker: answer requests until the batch closes the pipe."""
    limit_memory(int(os.environ.get("GRADING_WORKER_MEMORY", WORKER_MEMORY)))
    out_fd = os.dup(1)
    os.dup2(2, 1)  # anything printed by a test goes to stderr, never into the protocol
    incoming, outgoing = Connection(0, writable=False), Connection(out_fd, readable=False)
    import json
    import types

    import plain
    import verdict

    def read(plan_json: str):  # the plan's fields, without importing plan.py (and its nbformat) here
        return types.SimpleNamespace(**json.loads(plan_json))

    plans: dict[str, types.SimpleNamespace] = {}
    while True:
        try:
            message = incoming.recv()
        except EOFError:
            return 0
        if message[0] == "plans":  # warm-up, no answer: read and compile every plan of the batch
            import inspection  # noqa: F401  (and nbformat, which reading a notebook needs)
            import nbformat  # noqa: F401

            for key, plan_json in message[1].items():
                plans[key] = read(plan_json)
                verdict.compiled(plans[key])
            continue
        if message[0] == "inspect":
            cpu = time.process_time()
            try:
                import inspection

                reply = inspection.inspect(*message[1:5])
            except Exception as exc:  # noqa: BLE001
                reply = {"error": f"{type(exc).__name__}: {str(exc)[:200]}"}
            reply["cpu"] = round(time.process_time() - cpu, 3)
            outgoing.send(reply)
            continue
        key, plan_json, lines, cell_questions, seconds, cell_names = message[1:7]
        case, others = (message[7], message[8]) if len(message) > 8 else (None, None)
        start, cpu = time.monotonic(), time.process_time()
        try:
            if plan_json is not None:
                plans[key] = read(plan_json)
            plan = plans[key]
            answers = verdict.answers_from_lines(plan, lines, cell_questions, cell_names)
            budget = plain.Budget(verdict.SUBMISSION_ITEMS, deadline=start + seconds)
            graded = verdict.grade(plan, answers, budget=budget, case=case)
            fits = verdict.fits_better(plan, answers, graded, others, budget=budget) if others else None
            reply = {"cases": [(c.question, c.name, c.hidden, c.points, c.passed, c.message)
                               for c in graded.cases],
                     "cells": _cells_summary(answers.cells) if answers.cells is not None else None,
                     "finished": answers.finished, "borrowed": graded.borrowed, "fits": fits}
        except Exception as exc:  # noqa: BLE001  (reported, the worker lives on)
            reply = {"error": f"{type(exc).__name__}: {str(exc)[:200]}"}
        reply["cpu"] = round(time.process_time() - cpu, 3)
        outgoing.send(reply)


def _key(plan) -> tuple[str, str]:
    """The plan's JSON and a hash of it, made once per plan (a plan holds the master's answers: MBs)."""
    cached = getattr(plan, "_judge_key", None)
    if cached is None:
        plan_json = plan.to_json()
        cached = (hashlib.sha256(plan_json.encode()).hexdigest(), plan_json)
        object.__setattr__(plan, "_judge_key", cached)
    return cached


def _cpu_of(pid: int | None) -> float | None:
    """CPU seconds (user and system) a process has used so far, from /proc; None where unknown."""
    if pid is None:
        return None
    try:
        fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


class JudgeTimeout(Exception):
    """The verdict did not come within its time limit; the worker was killed."""


class Judge:
    """The batch's side: one worker process, started on first use, replaced after a timeout."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen | None = None
        self._send: Connection | None = None
        self._recv: Connection | None = None
        self._known: set[str] = set()
        self._fresh = False
        self._lock = threading.Lock()

    def _start(self) -> None:
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", PYTHONDONTWRITEBYTECODE="1")
        self._proc = subprocess.Popen([sys.executable, "-B", str(HERE / "judge.py")], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, env=env, close_fds=True)
        self._send = Connection(os.dup(self._proc.stdin.fileno()), readable=False)
        self._recv = Connection(os.dup(self._proc.stdout.fileno()), writable=False)
        self._proc.stdin.close()
        self._proc.stdout.close()
        self._known = set()

    def start(self) -> None:
        """Start the worker process now (its imports take about a second)."""
        with self._lock:
            if self._proc is None or self._proc.poll() is not None:
                self.close()
                self._start()
                self._fresh = True

    def warm(self, plans) -> None:
        """Have the worker compile ``plans`` while the batch's first sandboxes run."""
        self.start()
        with self._lock:
            batch = {}
            for plan in plans:
                key, plan_json = _key(plan)
                if key not in self._known:
                    batch[key] = plan_json
            self._send.send(("plans", batch))
            self._known |= set(batch)
            self._fresh = True

    def inspect(self, data: bytes, is_notebook: bool, suffix: str, assignments: list[str],
                seconds: float) -> dict:
        """``inspection.inspect`` in the worker, or ``JudgeTimeout`` after ``seconds`` (plus start-up)."""
        with self._lock:
            allowance = self._ready()
            before = _cpu_of(self._proc.pid) if not allowance else None  # not the worker's imports
            self._send.send(("inspect", data, is_notebook, suffix, list(assignments)))
            return self._counted(self._answer(seconds + allowance), before)

    def _counted(self, reply: dict, before: float | None) -> dict:
        """``reply`` with its "cpu" at least the worker's CPU time for it as /proc counts it (receiving
        the request and sending the answer included, which the worker's own count leaves out)."""
        after = _cpu_of(self._proc.pid if self._proc is not None else None)
        if before is not None and after is not None and isinstance(reply, dict):
            reply["cpu"] = round(max(float(reply.get("cpu") or 0.0), after - before), 3)
        return reply

    def _ready(self) -> float:
        """Start the worker if needed; the extra seconds the next answer may take (its imports)."""
        allowance = 0.0
        if self._proc is None or self._proc.poll() is not None:
            self.close()
            self._start()
            self._fresh = True
        if self._fresh:  # the first request waits for the worker's imports too
            allowance, self._fresh = 30.0, False
        return allowance

    def _answer(self, seconds: float) -> dict:
        if not self._recv.poll(seconds):
            self.close()
            raise JudgeTimeout(f"no answer within {seconds:g} s")
        try:
            return self._recv.recv()
        except (EOFError, OSError, pickle.UnpicklingError) as exc:
            self.close()
            raise JudgeTimeout(f"the verdict worker ended ({type(exc).__name__})") from None

    def judge(self, plan, lines: list[bytes], cell_questions: dict[int, str], seconds: float,
              cell_names: dict[int, list[str]] | None = None, case: dict | None = None,
              others: list | None = None) -> dict:
        """The verdict for one submission, or ``JudgeTimeout`` after ``seconds`` (plus start-up);
        ``case``: the values of the student's own case (None: the default); ``others``: [student, values]
        of the other students on the roster, whose cases a submission that lost points is tried on."""
        with self._lock:
            allowance = self._ready()
            key, plan_json = _key(plan)
            before = _cpu_of(self._proc.pid) if not allowance else None
            self._send.send(("judge", key, None if key in self._known else plan_json, lines, cell_questions,
                             seconds, cell_names or {}, case, others or []))
            self._known.add(key)
            if not self._recv.poll(seconds + allowance):
                self.close()
                raise JudgeTimeout(f"no verdict within {seconds:g} s")
            try:
                return self._counted(self._recv.recv(), before)
            except (EOFError, OSError, pickle.UnpicklingError) as exc:
                self.close()
                raise JudgeTimeout(f"the verdict worker ended ({type(exc).__name__})") from None

    def close(self) -> None:
        for conn in (self._send, self._recv):
            if conn is not None:
                try:
                    conn.close()
                except OSError:
                    pass
        self._send = self._recv = None
        if self._proc is not None:
            self._proc.kill()
            self._proc.wait()
            self._proc = None


if __name__ == "__main__":
    sys.exit(serve())
