"""Chapter 2's reliability models: the Llama 3 record, λ and M, Young, Daly, the interruption table.

* The record: its own totals, which Table 5 rows agree with their counts, what
  the stated shares are sums of.
* Young's optimum against a brute-force grid and a golden-section search.
* Daly's estimate against its formula, its limits and the paper's three worked
  intervals; the exact minimiser of his wall-time model against a search.
* Source 003's interruption table, cell by cell, within its rounding.
* Degenerate input (no GPUs, a free save, a zero rate) and ValueError naming
  the argument and its range on impossible input.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from clustermath.reliability.interruptions import (
    HARDWARE_EXCLUDED, LLAMA3_405B, SOURCE_003_TABLE, async_checkpoint, checkpoint_plan,
    daly_exact_interval, daly_interval, daly_lost, daly_wall_ratio, first_order_lost, gpu_failure_rate,
    interruption_row, interruption_table, job_mtbf_s, rounding_tol, root_cause_checks, share_pct,
    young_interval, young_lost,
)

LAM = 419 / (16_384 * 54 * 24)
M_LLAMA = 3600 / (LAM * 16_384)
CASES = [(60.0, M_LLAMA), (300.0, M_LLAMA), (5.0, 1e6), (60.0, 1824.37), (1.0, 50.0), (600.0, 2000.0)]


def golden_min(f, lo: float, hi: float, tol: float = 1e-10) -> float:
    """Minimiser of a unimodal f on [lo, hi] by golden-section search (in log space)."""
    a, b = math.log(lo), math.log(hi)
    g = (math.sqrt(5) - 1) / 2
    c, d = b - g * (b - a), a + g * (b - a)
    while b - a > tol:
        if f(math.exp(c)) < f(math.exp(d)):
            b, d = d, c
            c = b - g * (b - a)
        else:
            a, c = c, d
            d = a + g * (b - a)
    return math.exp((a + b) / 2)


# -- the record --------------------------------------------------------------------------

def test_record_totals_and_derived_mtbf():
    r = LLAMA3_405B
    assert r.planned + r.unexpected == r.total == 466
    assert sum(rc.count for rc in r.root_causes) == r.unexpected == 419
    assert r.mtbf_h == pytest.approx(54 * 24 / 419)
    assert round(r.mtbf_h, 1) == 3.1
    assert "Table 5" in r.citation and r.bibkey == "grattafiori2024llama3"


def test_only_the_faulty_gpu_row_disagrees_with_its_count():
    bad = [c for c in root_cause_checks() if not c.agrees]
    assert [c.component for c in bad] == ["Faulty GPU"]
    assert bad[0].count_pct == pytest.approx(35.322, abs=1e-3)
    assert bad[0].published_times_total == pytest.approx(126.119)
    # each printed percentage times 419 lies within rounding of a whole number
    for c in root_cause_checks():
        assert abs(c.published_times_total - round(c.published_times_total)) <= 0.05 * 419 / 100 + 1e-9


def test_stated_shares_are_sums_of_printed_rows():
    assert share_pct(printed=True) == pytest.approx(94.9)
    assert share_pct() == pytest.approx(100.0)
    assert share_pct(categories=["GPU"], printed=True) == pytest.approx(58.7)  # the stated GPU share
    assert share_pct(categories=["GPU"]) == pytest.approx(100 * 268 / 419)
    assert share_pct(exclude=HARDWARE_EXCLUDED, printed=True) == pytest.approx(79.8)
    assert share_pct(exclude=HARDWARE_EXCLUDED) == pytest.approx(100 * 356 / 419)


# -- rates and mean times -------------------------------------------------------------------

def test_rate_and_mtbf():
    assert gpu_failure_rate(419, 16_384, 54) == pytest.approx(LAM, rel=1e-15)
    assert job_mtbf_s(LAM, 16_384) == pytest.approx(11_135.08, abs=0.01)
    assert job_mtbf_s(LAM, 0) == math.inf
    assert job_mtbf_s(0.0, 16_384) == math.inf
    assert gpu_failure_rate(0, 8, 1) == 0.0


@pytest.mark.parametrize("call, name, rng", [
    (lambda: gpu_failure_rate(-1, 8, 1), "interruptions", "0..inf"),
    (lambda: gpu_failure_rate(1, 0, 1), "gpus", "1..inf"),
    (lambda: gpu_failure_rate(1, 8, 0), "days", "(0, inf)"),
    (lambda: gpu_failure_rate(1, 2.5, 1), "gpus", "1..inf"),
    (lambda: gpu_failure_rate(1, True, 1), "gpus", "1..inf"),
    (lambda: job_mtbf_s(-1e-5, 8), "rate_per_gpu_h", "[0, inf)"),
    (lambda: job_mtbf_s(LAM, -8), "gpus", "0..inf"),
    (lambda: job_mtbf_s(float("nan"), 8), "rate_per_gpu_h", "[0, inf)"),
    (lambda: young_interval(-1, 100), "save_s", "[0, inf)"),
    (lambda: young_interval(60, 0), "mtbf_s", "(0, inf]"),
    (lambda: young_lost(60, -5), "mtbf_s", "(0, inf]"),
    (lambda: first_order_lost(0, 60, 100), "interval_s", "(0, inf]"),
    (lambda: daly_interval(60, 0), "mtbf_s", "(0, inf]"),
    (lambda: daly_wall_ratio(100, 60, 1000, -1), "restart_s", "[0, inf)"),
    (lambda: daly_exact_interval("60", 100), "save_s", "[0, inf)"),
    (lambda: interruption_row(-1), "gpus", "0..inf"),
    (lambda: interruption_row(8, 60, 0), "gpu_mtbf_h", "(0, inf]"),
    (lambda: async_checkpoint(persist_s=300, copy_s=0, mtbf_s=1e4), "copy_s", "(0, 300]"),
    (lambda: async_checkpoint(persist_s=300, copy_s=301, mtbf_s=1e4), "copy_s", "(0, 300]"),
    (lambda: rounding_tol(0), "stated", "(0, inf)"),
])
def test_impossible_input_names_the_argument_and_range(call, name, rng):
    with pytest.raises(ValueError) as err:
        call()
    assert name in str(err.value) and rng in str(err.value)


# -- Young ---------------------------------------------------------------------------------

@pytest.mark.parametrize("delta, m", CASES)
def test_young_is_the_minimum_of_the_first_order_loss(delta, m):
    tau = young_interval(delta, m)
    grid = np.geomspace(tau / 100, tau * 100, 20_001)
    brute = grid[np.argmin(delta / grid + grid / (2 * m))]
    assert brute == pytest.approx(tau, rel=5e-4)
    assert golden_min(lambda t: first_order_lost(t, delta, m), tau / 100, tau * 100) == pytest.approx(tau, rel=1e-5)
    assert first_order_lost(tau, delta, m) == pytest.approx(young_lost(delta, m), rel=1e-12)
    assert young_lost(delta, m) == pytest.approx(math.sqrt(2 * delta / m))


def test_flatness_factor_two_and_ten():
    delta, m = 60.0, M_LLAMA
    tau, best = young_interval(delta, m), young_lost(delta, m)
    for k in (2, 0.5):
        assert first_order_lost(k * tau, delta, m) / best == pytest.approx(1.25)
    for k in (10, 0.1):
        assert first_order_lost(k * tau, delta, m) / best == pytest.approx(5.05)
    # four times the failure rate, half the interval
    assert young_interval(delta, m / 4) / young_interval(delta, m) == pytest.approx(0.5)


def test_young_degenerate_inputs():
    assert young_interval(0, 1000) == 0.0 and young_lost(0, 1000) == 0.0
    assert young_interval(60, math.inf) == math.inf and young_lost(60, math.inf) == 0.0
    assert young_interval(0, math.inf) == math.inf  # nothing fails: never checkpoint
    assert first_order_lost(100, 0, math.inf) == 0.0
    assert first_order_lost(math.inf, 60, math.inf) == 0.0
    assert first_order_lost(math.inf, 60, 1000) == math.inf


def test_llama3_five_minute_save():
    tau = young_interval(300, M_LLAMA)
    assert tau / 60 == pytest.approx(43.08, abs=0.01)
    assert young_lost(300, M_LLAMA) == pytest.approx(0.2321, abs=1e-4)
    assert 0.005 * M_LLAMA == pytest.approx(55.68, abs=0.01)  # the save that gives 10%
    assert young_lost(0.005 * M_LLAMA, M_LLAMA) == pytest.approx(0.10)


# -- Daly ----------------------------------------------------------------------------------

def daly_by_hand(delta, m):
    if delta >= 2 * m:
        return m
    x = delta / (2 * m)
    return math.sqrt(2 * delta * m) * (1 + (1 / 3) * math.sqrt(x) + (1 / 9) * x) - delta


@pytest.mark.parametrize("delta, m", CASES + [(100.0, 50.0), (100.0, 50.0001), (99.9, 50.0)])
def test_daly_matches_its_formula(delta, m):
    assert daly_interval(delta, m) == pytest.approx(daly_by_hand(delta, m), rel=1e-14)


def test_daly_limits():
    m = 1e4
    for delta in (1e-2, 1e-4, 1e-6):
        assert daly_interval(delta, m) / young_interval(delta, m) == pytest.approx(1.0, abs=2 * math.sqrt(delta / m))
    assert daly_interval(delta, m) / young_interval(delta, m) < 1.0
    assert daly_interval(0, m) == 0.0
    assert daly_interval(2 * m, m) == m and daly_interval(5 * m, m) == m
    assert daly_interval(60, math.inf) == math.inf


@pytest.mark.parametrize("m_min, stated_min, sig", [(24 * 60, 117, 3), (6 * 60, 57, 2), (15, 9.1, 2)])
def test_daly_reproduces_his_worked_intervals(m_min, stated_min, sig):
    """Daly (2006), Figs. 3-5: δ = 5 min, R = 10 min; predicted τ_opt 117, 57 and 9.1 min."""
    tau = daly_interval(5 * 60, m_min * 60) / 60
    assert tau == pytest.approx(stated_min, abs=rounding_tol(stated_min, sig))


@pytest.mark.parametrize("delta, m", CASES + [(900.0, 1000.0)])
def test_exact_interval_minimises_daly_wall_time_for_any_restart(delta, m):
    exact = daly_exact_interval(delta, m)
    for restart in (0.0, 600.0):
        found = golden_min(lambda t: daly_wall_ratio(t, delta, m, restart), exact / 50, min(exact * 50, 50 * m))
        assert found == pytest.approx(exact, rel=1e-5)
    # the condition u + ln(1 - u) = -δ/M
    u = exact / m
    assert u + math.log1p(-u) == pytest.approx(-delta / m, rel=1e-9, abs=1e-15)
    if delta / m <= 0.5:
        assert daly_interval(delta, m) == pytest.approx(exact, rel=0.01)


def test_daly_wall_time_reduces_to_first_order():
    delta, m, restart = 10.0, 1e6, 100.0
    tau = young_interval(delta, m)
    assert daly_wall_ratio(tau, delta, m, restart) - 1 == pytest.approx(
        first_order_lost(tau, delta, m) + restart / m, rel=1e-2)
    assert daly_wall_ratio(100, 10, math.inf) == pytest.approx(1.1)
    assert 0 < daly_lost(2e3, 60, 100) < 1  # far past the first order's range, still a share
    assert daly_wall_ratio(1e6, 60, 100) == math.inf and daly_lost(1e6, 60, 100) == 1.0


# -- the interruption table ------------------------------------------------------------------

def test_interruption_table_reproduces_source_003():
    rows = interruption_table()
    for row, (gpus, per_day, mtbf, every, lost) in zip(rows, SOURCE_003_TABLE):
        assert row.gpus == gpus
        assert abs(row.per_day - per_day) <= rounding_tol(per_day)
        assert abs(row.mtbf_s - mtbf) <= rounding_tol(mtbf)
        assert abs(row.young_interval_s - every) <= rounding_tol(every)
        assert abs(row.young_lost_pct - lost) <= 0.05


def test_rounded_rate_misses_cells_of_source_003():
    rows = interruption_table(gpu_mtbf_h=1 / 0.00002)
    misses = sum(abs(r.per_day - s[1]) > rounding_tol(s[1]) for r, s in zip(rows, SOURCE_003_TABLE))
    assert misses == 4


def test_interruption_row_degenerate_inputs():
    none = interruption_row(0)
    assert (none.per_day, none.mtbf_s, none.young_interval_s, none.young_lost_pct) == (0.0, math.inf, math.inf, 0.0)
    assert none.daly_interval_s == math.inf and none.daly_lost_pct == 0.0
    free = interruption_row(16_384, save_s=0)
    assert (free.young_interval_s, free.young_lost_pct, free.daly_lost_pct) == (0.0, 0.0, 0.0)
    never = interruption_row(16_384, gpu_mtbf_h=math.inf)
    assert never.per_day == 0.0 and never.young_lost_pct == 0.0


def test_rounding_tol():
    assert rounding_tol(178_000) == pytest.approx(500)
    assert rounding_tol(0.485) == pytest.approx(0.0005)
    assert rounding_tol(2.6, 2) == pytest.approx(0.05)
    assert rounding_tol(468) == pytest.approx(0.5)


# -- plan and asynchronous checkpointing -------------------------------------------------------

def test_checkpoint_plan_and_degenerate_cases():
    plan = checkpoint_plan(save_s=60, gpus=16_384, gpu_mtbf_h=1 / LAM)
    assert plan.young_lost_pct == pytest.approx(10.381, abs=1e-3)
    assert plan.daly_interval_s < plan.young_interval_s
    assert plan.exact_interval_s == pytest.approx(plan.daly_interval_s, rel=1e-3)
    assert plan.young_in_daly_pct >= plan.daly_lost_pct - 1e-9
    free = checkpoint_plan(save_s=0, gpus=8, gpu_mtbf_h=1000)
    assert free.young_lost_pct == 0 and free.exact_interval_s == 0 and free.young_in_daly_pct == 0
    idle = checkpoint_plan(save_s=60, gpus=0, gpu_mtbf_h=1000)
    assert idle.mtbf_s == math.inf and idle.young_interval_s == math.inf


def test_async_checkpoint_square_root():
    a = async_checkpoint(persist_s=300, copy_s=60, mtbf_s=M_LLAMA)
    assert a.cost_ratio == 5 and a.overhead_ratio == pytest.approx(math.sqrt(5))
    assert a.sync_lost_pct / a.async_lost_pct == pytest.approx(math.sqrt(5))
    assert a.flush_fits
    assert not async_checkpoint(persist_s=3000, copy_s=1, mtbf_s=M_LLAMA).flush_fits
    same = async_checkpoint(persist_s=60, copy_s=60, mtbf_s=math.inf)
    assert same.overhead_ratio == 1 and same.async_lost_pct == 0 and same.flush_fits
