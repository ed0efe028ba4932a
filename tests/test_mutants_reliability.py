"""Tests added to kill the mutants that chapter 2's tests let live (see tools/mutants/REPORT.md)."""
from __future__ import annotations

import math

import pytest

from clustermath import (
    async_checkpoint,
    blast_radius,
    checkpoint_plan,
    daly_exact_interval,
    daly_interval,
    daly_lost,
    daly_wall_ratio,
    eject_or_keep,
    first_order_lost,
    goodput_budget,
    gpu_failure_rate,
    interruption_row,
    job_mtbf_s,
    straggler_tax,
    young_interval,
    young_lost,
)

from argument_errors import BAD, assert_errors_name_their_argument


VALID = [
    (gpu_failure_rate, dict(interruptions=1, gpus=1, days=1.0)),
    (job_mtbf_s, dict(rate_per_gpu_h=1.0, gpus=1)),
    (first_order_lost, dict(interval_s=1.0, save_s=1.0, mtbf_s=1.0)),
    (young_interval, dict(save_s=1.0, mtbf_s=1.0)),
    (young_lost, dict(save_s=1.0, mtbf_s=1.0)),
    (daly_interval, dict(save_s=1.0, mtbf_s=1.0)),
    (daly_wall_ratio, dict(interval_s=1.0, save_s=1.0, mtbf_s=1.0, restart_s=1.0)),
    (daly_lost, dict(interval_s=1.0, save_s=1.0, mtbf_s=1.0, restart_s=1.0)),
    (daly_exact_interval, dict(save_s=1.0, mtbf_s=1.0)),
    (interruption_row, dict(gpus=1, save_s=1.0, gpu_mtbf_h=1.0)),
    (checkpoint_plan, dict(save_s=1.0, gpus=1, gpu_mtbf_h=1.0)),
    (async_checkpoint, dict(persist_s=1.0, copy_s=1.0, mtbf_s=10.0)),
    (straggler_tax, dict(speed=1.0, gpus=1)),
    (eject_or_keep, dict(gpus=1, speed=1.0, diagnose_h=1.0, eject_min=1.0)),
    (goodput_budget, dict(gpus=1, gpu_mtbf_h=1.0, save_s=1.0, restart_s=1.0, interval_x=1.0,
                          straggler_speed=1.0)),
    (blast_radius, dict(job_gpus=1, domain_gpus=1, failed_gpus=1, replica_gpus=1)),
]


@pytest.mark.parametrize("function, valid", VALID, ids=[f.__name__ for f, _ in VALID])
def test_every_chapter2_error_names_its_argument(function, valid):
    """A ValueError names the input that is wrong, not another (kills mutated argument names)."""
    assert_errors_name_their_argument(function, valid)


# -- survivors of the first mutation run (tools/mutants/REPORT.md) ----------------------------

def test_root_cause_checks_keep_each_row_as_printed():
    from clustermath import LLAMA3_405B, root_cause_checks
    rows = root_cause_checks()
    assert [(r.component, r.category, r.count, r.published_pct) for r in rows] == \
        [(rc.component, rc.category, rc.count, rc.published_pct) for rc in LLAMA3_405B.root_causes]


def test_checkpoint_plan_uses_the_mtbf_it_is_given():
    plan = checkpoint_plan(save_s=60, gpus=1_000, gpu_mtbf_h=10_000)
    assert plan.mtbf_s == 3600 * 10_000 / 1_000
    assert plan.young_interval_s == young_interval(60, 36_000)


@pytest.mark.parametrize("name", ["persist_s", "mtbf_s"])
def test_async_checkpoint_rejects_zero(name):
    valid = dict(persist_s=300.0, copy_s=60.0, mtbf_s=1e4)
    with pytest.raises(ValueError, match=rf"^{name} must be a number in \(0, "):
        async_checkpoint(**{**valid, name: 0.0})


def test_async_checkpoint_intervals_and_the_flush_at_equality():
    a = async_checkpoint(persist_s=300, copy_s=60, mtbf_s=1e4)
    assert a.sync_interval_s == young_interval(300, 1e4)
    assert a.async_interval_s == young_interval(60, 1e4)
    # the flush of 2 s exactly fills the asynchronous interval √(2 × 1 × 2) = 2 s: it fits
    assert async_checkpoint(persist_s=2.0, copy_s=1.0, mtbf_s=2.0).flush_fits
    assert not async_checkpoint(persist_s=2.0000001, copy_s=1.0, mtbf_s=2.0).flush_fits


# -- every argument's range, at its ends ------------------------------------------------------

VALID_BY_NAME = {f.__name__: v for f, v in VALID}
FUNCTIONS = {f.__name__: f for f, _ in VALID}
# (function, argument, its least value, whether that value itself is excluded)
LOW_ENDS = [
    ("gpu_failure_rate", "interruptions", 0, False), ("gpu_failure_rate", "gpus", 1, False),
    ("gpu_failure_rate", "days", 0.0, True),
    ("job_mtbf_s", "rate_per_gpu_h", 0.0, False), ("job_mtbf_s", "gpus", 0, False),
    ("first_order_lost", "interval_s", 0.0, True), ("first_order_lost", "save_s", 0.0, False),
    ("first_order_lost", "mtbf_s", 0.0, True),
    *[(f, "save_s", 0.0, False) for f in ("young_interval", "young_lost", "daly_interval", "daly_exact_interval")],
    *[(f, "mtbf_s", 0.0, True) for f in ("young_interval", "young_lost", "daly_interval", "daly_exact_interval")],
    *[(f, a, 0.0, o) for f in ("daly_wall_ratio", "daly_lost")
      for a, o in (("interval_s", True), ("save_s", False), ("mtbf_s", True), ("restart_s", False))],
    ("interruption_row", "gpus", 0, False), ("interruption_row", "save_s", 0.0, False),
    ("interruption_row", "gpu_mtbf_h", 0.0, True),
    ("checkpoint_plan", "gpus", 0, False), ("checkpoint_plan", "save_s", 0.0, False),
    ("checkpoint_plan", "gpu_mtbf_h", 0.0, True),
    ("async_checkpoint", "persist_s", 0.0, True), ("async_checkpoint", "copy_s", 0.0, True),
    ("async_checkpoint", "mtbf_s", 0.0, True),
    ("straggler_tax", "speed", 0.0, True), ("straggler_tax", "gpus", 1, False),
    ("eject_or_keep", "gpus", 1, False), ("eject_or_keep", "speed", 0.0, True),
    ("eject_or_keep", "diagnose_h", 0.0, False), ("eject_or_keep", "eject_min", 0.0, False),
    ("goodput_budget", "gpus", 1, False), ("goodput_budget", "gpu_mtbf_h", 0.0, True),
    ("goodput_budget", "save_s", 0.0, True), ("goodput_budget", "restart_s", 0.0, False),
    ("goodput_budget", "interval_x", 0.0, True), ("goodput_budget", "straggler_speed", 0.0, True),
    *[("blast_radius", a, 1, False) for a in ("job_gpus", "domain_gpus", "failed_gpus", "replica_gpus")],
]


@pytest.mark.parametrize("function, name, low, excluded", LOW_ENDS, ids=[f"{f}-{a}" for f, a, _, _ in LOW_ENDS])
def test_every_argument_at_its_least_value(function, name, low, excluded):
    """The least value is accepted or refused as documented; anything below is refused."""
    call, valid = FUNCTIONS[function], VALID_BY_NAME[function]
    below = low - 1 if isinstance(low, int) else -1e-9
    for bad in ([low, below] if excluded else [below]):
        with pytest.raises(ValueError) as err:
            call(**{**valid, name: bad})
        assert str(err.value).startswith(f"{name} must"), (name, bad, str(err.value))
    if not excluded:
        call(**{**valid, name: low})


WHOLE = [(f, a) for f, a, low, _ in LOW_ENDS if isinstance(low, int)]


@pytest.mark.parametrize("function, name", WHOLE, ids=[f"{f}-{a}" for f, a in WHOLE])
def test_whole_numbers_may_come_as_floats(function, name):
    """Counts accept a float holding a whole number (a slider's 4096.0) and refuse a fraction."""
    call, valid = FUNCTIONS[function], VALID_BY_NAME[function]
    assert call(**{**valid, name: 1.0}) == call(**{**valid, name: 1})
    with pytest.raises(ValueError, match=f"^{name} must be a whole number"):
        call(**{**valid, name: 1.5})


@pytest.mark.parametrize("function, name", [("straggler_tax", "speed"), ("eject_or_keep", "speed"),
                                            ("goodput_budget", "straggler_speed")])
def test_a_speed_is_at_most_one(function, name):
    call, valid = FUNCTIONS[function], VALID_BY_NAME[function]
    call(**{**valid, name: 1.0})
    with pytest.raises(ValueError, match=rf"^{name} must be a number in \(0, 1\]"):
        call(**{**valid, name: 1.0 + 1e-9})


def test_checkpoint_plan_prices_young_in_daly_for_a_short_save():
    plan = checkpoint_plan(save_s=0.5, gpus=16_384, gpu_mtbf_h=50_000)
    m = 3600 * 50_000 / 16_384
    assert plan.young_in_daly_pct == pytest.approx(100.0 * daly_lost(young_interval(0.5, m), 0.5, m), rel=1e-12)
    assert plan.young_in_daly_pct > 0.0
    assert checkpoint_plan(save_s=0.0, gpus=16_384, gpu_mtbf_h=50_000).young_in_daly_pct == 0.0


def test_the_record_counts_gpu_hours():
    from clustermath import LLAMA3_405B
    assert LLAMA3_405B.hours == 54 * 24
    assert LLAMA3_405B.gpu_hours == 16_384 * 54 * 24
    assert LLAMA3_405B.mtbf_h == pytest.approx(54 * 24 / 419)


def _newton_interval(delta, m):
    """Daly's exact optimum by Newton's method on u + ln(1 - u) + δ/M = 0 (an independent solver)."""
    eps, u = delta / m, math.sqrt(2 * delta / m)
    for _ in range(60):
        u -= (u + math.log1p(-u) + eps) / (1 - 1 / (1 - u))
    return m * u


@pytest.mark.parametrize("delta, m, rel", [(60, 11_100, 1e-12), (60, 1_820, 1e-12), (1, 1e9, 1e-10),
                                           (0.001, 1e9, 1e-9)])
def test_daly_exact_interval_to_full_precision(delta, m, rel):
    """Bisection to the last bit, even where δ/M is 1e-12 (kills a loose stopping rule)."""
    assert daly_exact_interval(delta, m) == pytest.approx(_newton_interval(delta, m), rel=rel)


def test_interruption_row_defaults_to_source_003s_save():
    assert interruption_row(1_024) == interruption_row(1_024, 60.0)


def test_blast_radius_reports_the_failed_unit():
    r = blast_radius(job_gpus=16_384, domain_gpus=72, failed_gpus=4, replica_gpus=128)
    assert (r.failed_gpus, r.domain_gpus, r.healthy_idled_gpus) == (4, 72, 68)


def test_rounding_tol_arguments():
    from clustermath import rounding_tol
    assert rounding_tol(4620) == 5.0 and rounding_tol(4620, 2.0) == 50.0 and rounding_tol(2.6, 1) == 0.5
    for bad, name in ((dict(stated=0), "stated"), (dict(stated=1, sig=0), "sig"), (dict(stated=1, sig=BAD), "sig")):
        with pytest.raises(ValueError) as err:
            rounding_tol(**bad)
        assert str(err.value).startswith(f"{name} must"), str(err.value)
    with pytest.raises(ValueError, match=r"^sig must be a whole number in 1\.\.inf"):
        rounding_tol(1, 0)


def test_daly_wall_ratio_overflows_past_700_only():
    finite = daly_wall_ratio(700.0, 0.0, 1.0)  # exponent (τ + δ)/M = 700: e^700 is still a double
    assert math.isfinite(finite) and finite == pytest.approx(math.expm1(700.0) / 700.0)
    assert daly_wall_ratio(700.5, 0.0, 1.0) == math.inf
    assert daly_lost(700.5, 0.0, 1.0) == 1.0
    assert daly_wall_ratio(100.0, 60.0, 1e4) == daly_wall_ratio(100.0, 60.0, 1e4, 0.0)


def test_goodput_when_nothing_fails_and_at_exactly_full_waste():
    calm = goodput_budget(gpus=8, gpu_mtbf_h=math.inf, save_s=60, restart_s=600, straggler_speed=0.9)
    assert calm.interval_s == math.inf and calm.mtbf_s == math.inf
    assert calm.daly_goodput_pct == pytest.approx(90.0) and calm.useful_pct == pytest.approx(90.0)
    assert calm.first_order_valid
    # M = 3600 s, δ = 1800 s: τ = 3600 s, checkpoint 1/2 + rework 1/2 = exactly 100%: no longer first order
    full = goodput_budget(gpus=1, gpu_mtbf_h=1.0, save_s=1800.0, restart_s=0.0)
    assert full.checkpoint_pct + full.rework_pct == 100.0 and not full.first_order_valid


def test_rounding_tol_refuses_a_string_with_a_value_error():
    from clustermath import rounding_tol
    with pytest.raises(ValueError, match="^stated must"):
        rounding_tol(BAD)


# -- survivors of the rerun after the Daly clamp and rounding_tol's check (tools/mutants/REPORT.md) ---

def test_daly_lost_default_restart_is_zero():
    assert daly_lost(3_600.0, 60.0, 36_000.0) == daly_lost(3_600.0, 60.0, 36_000.0, 0.0)
    assert daly_lost(3_600.0, 60.0, 36_000.0, 1.0) > daly_lost(3_600.0, 60.0, 36_000.0)


def test_interruption_row_reports_daly_loss_at_daly_interval():
    row = interruption_row(16_384)
    assert row.daly_lost_pct > 0
    assert row.daly_lost_pct == pytest.approx(100 * daly_lost(daly_interval(60.0, row.mtbf_s), 60.0, row.mtbf_s))


def test_rounding_tol_of_a_negative_figure():
    from clustermath.reliability.interruptions import rounding_tol
    assert rounding_tol(-0.485) == rounding_tol(0.485) == pytest.approx(0.0005)
