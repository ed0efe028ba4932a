"""Chapter 6's calibrate-then-validate tables (``clustermath.validation.holdout``).

The Done-when bound of issue 17 as a test: at least 20 throughput or MFU rows the
calibration never saw, with a median absolute error of at most 10%, and the worst
of them named with its explanation. Also: at most a fifth of each family is used
for calibration, no calibration row is counted as a validation row, every
residual is a row of the data in the row's own unit, and the metric conversions
(MFU, HFU, "percent of peak", TFLOP/s on either FLOP basis, iteration time).
"""
from __future__ import annotations

import math

import pytest

from clustermath import CALIBRATION, KERNEL_EFFICIENCY, kernel_share, predict_run, run_ettr, slowest_of
from clustermath.validation import holdout, load_measurements, run_config
from clustermath.validation.holdout import (
    CHECKPOINT_BYTES_PER_PARAMETER, ROLES, SOFTWARE_ABLATIONS, Residual, llama3_ettr_inputs, predicted_value,
    residuals, straggler_share, summary, throughput_prediction,
)
from clustermath.validation.measurements import comparable
from validation_fresh import fresh


# Nothing is computed from the models at import time, and each test computes the tables it reads
# (see validation_fresh.py: otherwise mutation testing would compare the original's tables).
@pytest.fixture(autouse=True)
def _fresh():
    fresh()


@pytest.fixture
def data():
    return load_measurements()


@pytest.fixture
def every():
    """Every residual, computed in the test that reads it."""
    return residuals()


@pytest.fixture
def per_family():
    """``summary()``, computed in the test that reads it."""
    return summary()


def test_throughput_validation_meets_the_bound(every, per_family):
    val = every[(every["family"] == "throughput") & (every["role"] == "validation")]
    assert len(val) >= 20
    assert val["error"].abs().median() <= 0.10
    assert per_family.at["throughput", "median_abs_error"] == pytest.approx(val["error"].abs().median())
    worst = per_family.at["throughput", "worst"]
    assert worst == val["error"].abs().idxmax()
    assert every.at[worst, "note"], "the worst row carries its explanation"


def test_calibration_uses_at_most_a_fifth_of_each_family(data, per_family):
    for family, row in per_family.iterrows():
        assert row["fitted"] <= row["rows"] // 5, family
    by_family = {}
    for c in CALIBRATION:
        by_family.setdefault(data.at[c.row, "family"], []).append(c.row)
    for family, rows in by_family.items():
        assert len(rows) <= (data["family"] == family).sum() // 5, family


def test_calibration_rows_are_never_validation_rows(every):
    for c in CALIBRATION:
        assert every.at[c.row, "role"] == "calibration", c.row
    assert set(every["role"]) <= set(ROLES)
    assert every.index.is_unique
    for rid in SOFTWARE_ABLATIONS:
        assert every.at[rid, "role"] == "outside"


def test_every_residual_is_a_row_of_the_data_in_its_unit(data, every):
    for rid, r in every.iterrows():
        assert rid in data.index
        assert r["family"] == data.at[rid, "family"] and r["key"] == data.at[rid, "key"]
        if r["unit"] != "× the time without recompute":
            assert r["unit"] == data.at[rid, "unit"], rid
            assert r["measured"] == data.at[rid, "value"], rid


def test_every_family_has_validation_rows_and_a_summary(per_family):
    assert list(per_family.index) == ["collectives", "throughput", "memory", "failures", "stragglers", "fabric"]
    assert (per_family["validated"] >= 3).all()
    assert residuals("memory")["family"].eq("memory").all()
    with pytest.raises(ValueError, match="^family must be one of"):
        residuals("optics")


def test_residual_error():
    r = Residual("x", "memory", "validation", "m", 2.0, 3.0, "s", "k")
    assert r.error == 0.5
    assert math.isnan(Residual("x", "memory", "outside", "m", 2.0, math.nan, "s", "k").error)


# -- metric conversions ---------------------------------------------------------------------------

@pytest.mark.parametrize("metric, basis, unit, value, field, expected", [
    ("mfu", "model", "%", 41.2, "mfu", 0.412),
    ("pct_peak", "hardware", "%", 52.0, "hfu", 0.52),
    ("pct_peak", "model", "%", 39.2, "mfu", 0.392),
    ("tflops_per_gpu", "hardware", "TFLOP/s", 163.0, "tflops_per_gpu", 163.0),
    ("tflops_per_gpu", "model", "TFLOP/s", 400.0, "model_tflops_per_gpu", 400.0),
    ("iteration_s", "", "s", 1.42, "step_s", 1.42),
])
def test_comparable_names_the_field_and_converts_shares(metric, basis, unit, value, field, expected):
    row = {"family": "throughput", "metric": metric, "flops_basis": basis, "unit": unit, "value": value}
    assert comparable(row) == (field, pytest.approx(expected))


def test_comparable_refuses_rows_it_cannot_compare():
    with pytest.raises(ValueError, match="^row must be a throughput row"):
        comparable("llama3-int-unexpected")
    with pytest.raises(ValueError, match="^row must be a throughput row"):
        comparable({"family": "throughput", "metric": "bubble", "flops_basis": "", "unit": "%", "value": 1})


def test_percent_of_peak_with_recompute_is_the_hfu():
    """Narayanan's TFLOP/s count the recompute pass: predicted against them is the executed rate."""
    p = throughput_prediction("nar21-t1-10")
    assert predicted_value(p, "nar21-t1-10") == pytest.approx(p.tflops_per_gpu)
    assert p.tflops_per_gpu == pytest.approx(p.hfu * 312)
    assert p.model_tflops_per_gpu == pytest.approx(p.mfu * 312)
    assert p.mfu / p.hfu == pytest.approx(p.model_flops / p.hardware_flops)
    q = throughput_prediction("kor22-t5-2a")
    assert predicted_value(q, "kor22-t5-2a") == pytest.approx(100 * q.mfu)
    r = throughput_prediction("kor22-t5-2b")
    assert predicted_value(r, "kor22-t5-2b") == r.step_s


def test_every_published_run_stays_under_its_kernel_share(data):
    for rid in data[data["family"] == "throughput"].index:
        p = throughput_prediction(rid)
        h = run_config(rid)["hidden"]
        assert p.mfu <= p.hfu <= kernel_share(h) * (1 + 1e-12) <= KERNEL_EFFICIENCY
        assert p == predict_run(**run_config(rid, accepts=predict_run))


# -- the other families' models ----------------------------------------------------------------------

def test_checkpoint_size_is_fourteen_bytes_per_parameter(every):
    r = every.loc["nar21-ckpt-size"]
    assert CHECKPOINT_BYTES_PER_PARAMETER == 2 + 4 + 4 + 4
    assert r["predicted"] == pytest.approx(1.008e12 * 14 / 1e12, rel=1e-3)


def test_recompute_times_follow_the_flops(data, every):
    base = data.at["kor22-t4-1", "value"]
    assert every.at["kor22-t4-3", "predicted"] == pytest.approx(base * 4 / 3)       # one more forward of 3
    assert every.at["kor22-t4-2", "predicted"] == base                               # sequence parallel: same FLOPs
    assert every.at["kor22-ovh-full-large", "predicted"] == pytest.approx(4 / 3)
    s, h = 2048, 20480
    assert every.at["kor22-ovh-present-large", "predicted"] == pytest.approx(1 + (s / (18 * h)) / (1 + s / (6 * h)))


def test_series_failure_model_rows(every):
    rate = 6.5 / 1000
    assert every.at["kok25-mttf-1024", "predicted"] == pytest.approx(24 / (128 * rate))
    assert every.at["kok25-mttf-8", "predicted"] == pytest.approx(1 / rate)            # days
    assert every.at["llama3-int-unexpected", "predicted"] == pytest.approx(2048 * 54 * rate)
    assert every.at["kok25-mttf-16k", "role"] == "outside"


def test_llama3_ettr_from_its_own_figures(every):
    inputs = llama3_ettr_inputs()
    assert inputs == {"gpus": 16_384, "failures_per_node_day": pytest.approx(419 / 110_592),
                      "save_s": pytest.approx(16_384 * 4 / 2_000), "restart_s": 600.0}
    assert every.at["llama3-ett", "predicted"] == pytest.approx(100 * run_ettr(**inputs).ettr)


def test_straggler_share(every):
    assert straggler_share(1) == 0.0
    x = 0.0018 * slowest_of(12_288)
    assert straggler_share(12_288) == pytest.approx(x / (1 + x))
    assert every.at["lin25-fleet", "predicted"] == pytest.approx(100 * straggler_share(12_288))


def test_fabric_rows_reproduce_chapter_4(every):
    for rid in ("hpn-segment", "hpn-pod", "llama3-pod", "ms24-tor-servers"):
        assert every.at[rid, "error"] == 0, rid
    assert every.at["hpn-dp-traffic", "predicted"] == pytest.approx(174.6e9 * 2 / 64 / 1e9, rel=1e-3)


def test_collectives_outside_the_ring_model(every):
    assert every.at["nccl1455-nvls-8", "role"] == "outside"
    assert math.isnan(every.at["nccl1222-4node-8g", "predicted"])
    assert every.at["ncclt175-a100-1node", "predicted"] == pytest.approx(0.82 * 300)
    assert every.at["ncclt175-a100-2node", "predicted"] == pytest.approx(0.80 * 100)
