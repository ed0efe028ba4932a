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
import pandas as pd

import pytest

from clustermath import CALIBRATION, KERNEL_EFFICIENCY, kernel_share, predict_run, run_ettr, slowest_of
from clustermath.validation import holdout, load_measurements, run_config
from clustermath.validation import measurements as m
from clustermath.validation.holdout import (
    CHECKPOINT_BYTES_PER_PARAMETER, DESIGN_IDENTITIES, OUTSIDE_RING, ROLES, SOFTWARE_ABLATIONS, Residual,
    input_sets, leave_one_source_out, llama3_ettr_inputs, loso_constants, loso_summary, predicted_value,
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
    sets = input_sets(every)
    fitted = set(sets[every["role"] == "calibration"])
    counted = val[~sets.loc[val.index].isin(fitted)]
    per_set = counted["error"].abs().groupby(sets.loc[counted.index]).mean()
    assert per_family.at["throughput", "validated"] == len(per_set) >= 20
    assert per_family.at["throughput", "validated_rows"] == len(counted)
    assert per_set.median() <= 0.10
    assert per_family.at["throughput", "median_abs_error"] == pytest.approx(per_set.median())
    worst = per_family.at["throughput", "worst"]
    assert worst == counted["error"].abs().idxmax()
    assert every.at[worst, "note"], "the worst row carries its explanation"


def test_rows_sharing_every_input_count_once(every):
    sets = input_sets(every)
    # MegaScale's stack differs from Megatron-LM's by its switches; Korthikanti's appendix restates Table 5
    assert sets["ms24-t2-05"] == "ms24-t2-05" != sets["ms24-t2-01"]
    assert sets["kor22-appc-530"] == "kor22-t5-3a"
    assert sets["ms24-t2-16"] == "ms24-t2-16"
    assert sets["nar21-t1-02"] == "nar21-t1-02" and sets["llama3-ett"] == "llama3-ett"
    for rid, first in sets.items():
        if every.at[rid, "family"] == "throughput":
            assert run_config(rid, accepts=predict_run) == run_config(first, accepts=predict_run)
        elif rid != first:   # the same model, unit and prediction: the same inputs
            assert tuple(every.loc[rid, ["family", "model", "unit", "predicted"]]) == \
                tuple(every.loc[first, ["family", "model", "unit", "predicted"]]), rid
    # ByteDance's three straggler figures are one set; a row predicted with its calibration row's own
    # value shares that row's set, and the summary counts no such set as validation
    assert sets["lin25-waste-p90"] == sets["lin25-fleet"] == "lin25-waste-median"
    assert sets["kok25-rsc2-rate"] == "kok25-rsc1-rate" and sets["kor22-t4-2"] == "kor22-t4-1"
    assert sets["nccl1031-4node"] == "nccl1221-4node"
    summary_ = summary()
    assert summary_.at["stragglers", "validated"] == 1 and summary_.at["stragglers", "validated_rows"] == 3
    assert summary_.at["failures", "validated"] == 4 and summary_.at["memory", "validated"] == 5


def test_single_split_counts_against_the_issue(per_family):
    t = per_family.loc["throughput"]
    assert (t["validated"], t["validated_rows"]) == (117, 120)


def test_identity_checks_and_algorithms_outside_the_ring(every, per_family):
    for rid in DESIGN_IDENTITIES:
        assert every.at[rid, "role"] == "identity"
    assert per_family.at["fabric", "identity"] == len(DESIGN_IDENTITIES)
    assert per_family.at["fabric", "validated"] == 1
    for rid in OUTSIDE_RING:
        assert every.at[rid, "role"] == "outside" and "tree" in every.at[rid, "note"]


# -- leave one source out ----------------------------------------------------------------------------

def test_leave_one_source_out_never_fits_on_the_source_it_predicts(data):
    frame = leave_one_source_out()
    publication = dict(zip(data["key"], data["publication"]))
    for source in dict.fromkeys(frame["publication"]):
        fit = loso_constants(source)
        for constant, row in fit["row"].items():
            assert row == "" or data.at[row, "publication"] != source, (source, constant)
            assert row not in SOFTWARE_ABLATIONS
        assert fit["row"][fit["row"] != ""].is_unique
        unmoved = fit[~fit["moved"]]
        for constant, c in unmoved.iterrows():
            assert publication[next(k for k in CALIBRATION if k.constant == constant).source] != source
    # one publication, two bibliography keys: llm-foundry's README is left out whole, so the Hopper
    # efficiency fitted on its 70B row is refitted on another source's row, never on its own twin
    llmf = loso_constants("mosaicml-llmfoundry-benchmarks")
    assert llmf.at["hopper_kernel_efficiency", "moved"]
    assert data.at[llmf.at["hopper_kernel_efficiency", "row"], "publication"] != "mosaicml-llmfoundry-benchmarks"
    with pytest.raises(ValueError, match="^source must be one of"):
        loso_constants("mosaicml2023llmfoundry")
    # MegaScale pins the straggler spread alone: without it the term is off; nothing else moves
    mega = loso_constants("jiang2024megascale")
    assert mega.at["straggler_cv", "row"] == "" and mega.at["straggler_cv", "value"] == 0.0
    assert mega["moved"].sum() == 1
    assert not loso_constants("korthikanti2023")["moved"].any()
    with pytest.raises(ValueError, match="^source must be one of"):
        loso_constants("nccl1455")


def test_leave_one_source_out_predicts_with_the_refit(data):
    frame = leave_one_source_out()
    assert set(frame.index) == set(residuals("throughput").query("role != 'outside'").index)
    rid = "ms24-t2-12"
    constants = dict(zip(loso_constants("jiang2024megascale")["constant"],
                         loso_constants("jiang2024megascale")["value"]))
    p = predict_run(**run_config(rid, accepts=predict_run), **constants)
    assert frame.at[rid, "predicted"] == pytest.approx(100 * p.mfu)
    assert frame.at[rid, "error"] == frame.at[rid, "predicted"] / frame.at[rid, "measured"] - 1


def test_loso_summary_per_source_and_pooled():
    table = loso_summary()
    frame = leave_one_source_out()
    assert table.index[-1] == "all" and table.at["all", "rows"] == len(frame)
    assert table.at["all", "sets"] == frame["inputs"].nunique()
    for source, row in table.iterrows():
        part = frame if source == "all" else frame[frame["publication"] == source]
        per_set = part["error"].abs().groupby(part["inputs"]).mean()
        assert row["median_abs_error"] == pytest.approx(per_set.median())
        assert row["worst"] == part["error"].abs().idxmax()
    assert table.at["all", "median_abs_error"] <= 0.10
    assert table["median_abs_error"].max() >= table.at["all", "single_split_median"]


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
    assert (per_family["validated"] >= 1).all()
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
        config = run_config(rid)
        if config.get("precision") == "fp8" or config["peak_tflops"] > 400:   # the 8-bit peak; Hopper's η
            continue
        h = config["hidden"]
        full = predict_run(**run_config(rid, accepts=predict_run), causal_attention=False)  # HFU's full count
        assert full.mfu <= full.hfu <= kernel_share(h) * (1 + 1e-12) <= KERNEL_EFFICIENCY * (1 + 1e-12)
        assert p.compute_s <= full.compute_s
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


def test_a_refit_never_calibrates_on_a_row_whose_peak_is_assumed():
    """An efficiency is a share of the peak: a row with an assumed peak cannot pin it (torchtitan's
    power-capped H100s once pulled the Hopper efficiency from 0.60 to 0.33)."""
    frame = m.family("throughput")
    assumed_peak = {rid for rid, r in frame.iterrows() if holdout.peak_assumed(r)}
    assert {rid for rid in assumed_peak if rid.startswith("titan24-")} and len(assumed_peak) >= 16
    for source in dict.fromkeys(frame["publication"]):
        fitted_on = set(loso_constants(source)["row"])
        assert not fitted_on & assumed_peak, (source, fitted_on & assumed_peak)
    assert not holdout.peak_assumed(pd.Series({"assumed": "overlap;scale_up_GBps"}))
    assert not holdout.peak_assumed(pd.Series({"assumed": None}))
    assert holdout.peak_assumed(pd.Series({"assumed": "peak_tflops"}))
