"""The MegaScale table of chapter 6: its errors are what ``predict_run`` gives, read two ways.

The table once divided a fraction (``mfu``) by a percent and printed −99% on every row. Here
every error is recomputed from ``predict_run`` on the row's configuration, once with the
switches MegaScale states (the data file's) and once with Megatron-LM's, and every error the
chapter's tables print must lie in −100%…+1000% or carry the flag ``error_text`` adds.
"""
from __future__ import annotations

import math

import pytest

from clustermath import predict_run
from clustermath.validation import holdout, load_measurements, run_config
from clustermath.validation.holdout import ERROR_RANGE, MEGATRON_SWITCHES, error_text


@pytest.fixture(scope="module")
def two():
    return holdout.megascale_two_readings()


def test_every_error_is_recomputed_from_predict_run(two):
    data = load_measurements()
    assert len(two) == 11
    for rid, r in two.iterrows():
        measured = float(data.at[rid, "value"])            # a percent
        cfg = run_config(rid, accepts=predict_run)
        as_megatron = predict_run(**{**cfg, **MEGATRON_SWITCHES}).mfu    # a fraction
        stated = predict_run(**cfg).mfu
        assert r["error_megatron"] == pytest.approx(100 * as_megatron / measured - 1, rel=1e-12)
        assert r["error_megascale"] == pytest.approx(100 * stated / measured - 1, rel=1e-12)
        assert r["error_megascale"] == pytest.approx(holdout.residuals().at[rid, "error"], rel=1e-12)


def test_the_errors_are_real_errors_not_a_unit_slip(two):
    low, high = ERROR_RANGE
    for column in ("error_megatron", "error_megascale"):
        assert two[column].between(low, high).all()
    # Megatron-LM's switches: every row slow, from about −21% to about −3%
    assert -0.21 < two["error_megatron"].min() < -0.20
    assert -0.03 < two["error_megatron"].max() < -0.02
    # the 530B rows of Figure 9: about 3% slow as Megatron-LM, 10% to 11% fast as MegaScale
    f9 = two[two["layers"] > 100]
    assert sorted(f9.index) == ["ms24-f9-4", "ms24-f9-5", "ms24-f9-6"]
    assert f9["error_megatron"].abs().max() < 0.035
    assert 0.10 < f9["error_megascale"].min() and f9["error_megascale"].max() < 0.11


def test_error_text_flags_what_cannot_be_an_error():
    assert error_text(-0.159) == "\u221215.9%"           # a true minus, as the tables print it
    assert error_text(-0.00004) == error_text(0.00004) == "+0.0%"   # no "−0.0%"
    assert error_text(0.0) == "+0.0%"
    assert error_text(-1.0) == "\u2212100.0%"           # a prediction of zero: the edge, unflagged
    assert error_text(10.0) == "+1,000.0%"
    assert "⚠" in error_text(-1.0001)
    assert "⚠" in error_text(99.0)                  # a percent divided by a fraction
    assert error_text(float("nan")) == "–"
    with pytest.raises(ValueError, match="places"):
        error_text(0.1, places=-1)


def test_the_old_slip_would_have_been_flagged(two):
    data = load_measurements()
    rid = two.index[0]
    slip = predict_run(**{**run_config(rid, accepts=predict_run), **MEGATRON_SWITCHES}).mfu \
        / float(data.at[rid, "value"]) - 1
    assert -1.0 < slip < -0.99                       # the −99% the table printed
    slip_other_way = float(data.at[rid, "value"]) / predict_run(**run_config(rid, accepts=predict_run)).mfu - 1
    assert "⚠" in error_text(slip_other_way)
    assert not math.isnan(slip)
