"""Mutation tests of chapter 6's data helpers (``measurements``) and hold-out tables (``holdout``).

Written against the survivors of ``make mutants`` in those two modules (see
``tools/mutants/REPORT.md``): a row given as a mapping or as a pandas row that lacks
a column, the refusals of ``comparable`` in full, and the cross-checks on a copy of
the data where a row differs from the defaults of the sources' formulas (every one
of Narayanan et al.'s rows uses 2,048-token sequences, which is also the default of
``narayanan_params`` and ``narayanan_flops``). Nothing is computed at import time.
"""
from __future__ import annotations

import math

import pandas as pd
import pytest

from clustermath.validation import measurements as m
from validation_fresh import fresh

METRICS = "('mfu', 'hfu', 'pct_peak', 'tflops_per_gpu', 'iteration_s', 'tokens_per_s')"


@pytest.fixture(autouse=True)
def _fresh():
    fresh()


def _refusal(row) -> str:
    with pytest.raises(ValueError) as err:
        m.comparable(row)
    return str(err.value)


# -- a row as a mapping or as a pandas row that lacks a column ------------------------------------

def test_comparable_refuses_a_row_without_a_metric_or_a_figure_in_full():
    for row in ({"family": "throughput"}, pd.Series({"family": "throughput"}), {"family": "throughput", "metric": None},
                "llama3-int-unexpected"):
        assert _refusal(row) == f"row must be a throughput row with a metric of {METRICS}, got '' (flops basis '')"
    for value, shown in ((None, "None"), ("", "''"), (math.nan, "nan")):
        row = {"family": "throughput", "metric": "mfu", "flops_basis": "model", "unit": "%", "value": value}
        assert _refusal(row) == f"row must hold its measured figure in 'value', got {shown}"
    assert _refusal({"family": "throughput", "metric": "mfu"}) == "row must hold its measured figure in 'value', got None"
    assert _refusal(pd.Series({"family": "throughput", "metric": "mfu", "value": math.nan})) == \
        "row must hold its measured figure in 'value', got nan"


def test_a_pandas_row_reads_like_a_mapping_with_the_same_cells():
    cells = {"family": "throughput", "metric": "mfu", "value": 41.2, "unit": "%", "layers": 96, "recompute": "full"}
    for row in (cells, pd.Series(cells, dtype=object)):
        # absent columns (flops_basis, assumed, the other model inputs) read as empty in both
        assert m.comparable(row) == ("mfu", pytest.approx(0.412, rel=1e-15))
        assert m.assumed_columns(row) == ()
        assert m.run_config(row) == {"layers": 96, "recompute": "full"}
    assert m.comparable(pd.Series({"family": "throughput", "metric": "iteration_s", "value": "1.5"})) == ("step_s", 1.5)


def test_a_full_pandas_row_and_its_id_give_the_same_answers():
    frame = m.load_measurements()
    for rid in ("nar21-t1-01", "llama3-t4-1", "ms24-t2-12", "kor22-t5-1b"):
        assert m.comparable(frame.loc[rid]) == m.comparable(rid)
        assert m.assumed_columns(frame.loc[rid]) == m.assumed_columns(rid)
        assert m.run_config(frame.loc[rid]) == m.run_config(rid)


# -- the cross-checks on a copy of the data whose row differs from the formulas' defaults -------------

def _with_cells(monkeypatch, rid: str, **cells: str) -> None:
    """Make the module read a copy of the CSV's text with some cells of one row changed."""
    raw = m._raw().copy()
    for column, text in cells.items():
        raw.at[rid, column] = text
    monkeypatch.setattr(m, "_raw", lambda: raw)
    typed = m._typed.__wrapped__()  # the typed frame of the changed text
    monkeypatch.setattr(m, "_typed", lambda: typed)


def test_narayanans_checks_read_each_rows_own_sequence_and_vocabulary(monkeypatch):
    rid = "nar21-t2-01"  # a row with a stated parameter count and a stated training time
    r = m._raw().loc[rid]
    l, h, n, tf = int(r["layers"]), int(r["hidden"]), int(r["gpus"]), float(r["value"])
    s, v = 1024, 32_000  # not the formulas' defaults (2048 and 51,200)
    _with_cells(monkeypatch, rid, seq_len=str(s), vocab=str(v))
    checks = {c.name: c for c in m._checks() if c.id == rid}
    assert set(checks) >= {"params_eq2", "days_vs_eq3"}
    params = 12 * l * h**2 * (1 + 13 / (12 * h) + (v + s) / (12 * l * h)) / 1e9
    assert checks["params_eq2"].low == checks["params_eq2"].high == pytest.approx(params, rel=1e-12)
    assert checks["params_eq2"].computation == f"eq. (2) with l={l}, h={h}, V={v}, s={s}: {params:.2f}B"
    per_token = 96 * l * h**2 * (1 + s / (6 * h) + v / (16 * l * h))  # eq. (3) over B s tokens
    days = [300e9 * per_token / (n * x * 1e12) / 86400 for x in (tf + 0.5, tf - 0.5)]  # printed to a whole TFLOP/s
    assert (checks["days_vs_eq3"].low, checks["days_vs_eq3"].high) == pytest.approx(tuple(days), rel=1e-12)
