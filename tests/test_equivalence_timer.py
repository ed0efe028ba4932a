"""The equivalence check's per-call timer (tools/mutants/equivalence.py): a call that runs out of time
is skipped, and an alarm that comes due as a call returns is never raised outside the call.

A full `make mutants` once crashed with `_Timeout` raised from the line that disarms the timer: the
call had finished just as its half second ran out. These tests drive both ends.
"""
from __future__ import annotations

import importlib.util
import signal
import time
from pathlib import Path

import pytest

PATH = Path(__file__).resolve().parents[1] / "tools" / "mutants" / "equivalence.py"


@pytest.fixture
def equivalence(monkeypatch):
    spec = importlib.util.spec_from_file_location("mutants_equivalence", PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    previous = signal.signal(signal.SIGALRM, module._alarm)
    monkeypatch.setattr(module, "CALL_SECONDS", 0.05)
    yield module
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGALRM, previous)


def test_a_call_past_its_time_is_skipped(equivalence):
    assert equivalence.outcome(time.sleep, (1.0,), {}) == ("skip", "time")


def test_a_value_and_an_error_are_outcomes(equivalence):
    assert equivalence.outcome(abs, (-2,), {}) == ("value", ("int", 2))
    assert equivalence.outcome(int, ("x",), {})[:2] == ("raise", "ValueError")


def test_an_alarm_after_the_call_was_disarmed_is_ignored(equivalence):
    assert equivalence.outcome(abs, (-2,), {}) == ("value", ("int", 2))
    signal.raise_signal(signal.SIGALRM)  # as if the timer came due while it was being disarmed
    time.sleep(0.01)


def test_an_alarm_due_as_the_call_returns_counts_as_time(equivalence):
    def returns_at_the_deadline() -> int:
        deadline = time.monotonic() + 0.05
        while time.monotonic() < deadline:  # busy until the alarm is due, then return at once
            pass
        return 1

    for _ in range(20):  # whichever side of the deadline the return lands, no _Timeout escapes
        assert equivalence.outcome(returns_at_the_deadline, (), {}) in (("value", ("int", 1)), ("skip", "time"))
