"""Chapter 6's later releases (``validation.later``): Megatron-Bridge runs the model never saw, read
and predicted by one rule; lines with the same inputs are one case; the chapter's own lines agree."""
from __future__ import annotations

import math

import pandas as pd
import pytest

from clustermath.validation import later, measurements
from clustermath.validation.predict import predict_run


def test_every_line_is_read_once_and_predicted():
    frame = later.load_later()
    assert len(frame) == 49 and frame.index.is_unique
    assert set(frame["system"]) == {"DGX-H100", "DGX-B200", "DGX-GB200"}
    for line, r in frame.iterrows():
        step = predict_run(**later.later_config(line)).step_s
        assert math.isfinite(step) and step > 0, line


def test_the_five_lines_the_chapter_holds_match_its_rows():
    """25.11's H100 and B200 lines in current scaling are the chapter's ``megatronbridge2025perf`` rows:
    the same runs (tokens/s/GPU as printed, the CSV's value being that times the GPUs)."""
    frame = later.load_later()
    held = frame[frame["in_chapter"]]
    assert len(held) == 5 and set(held["release"]) == {"25.11"} and set(held["precision"]) == {"FP8-CS"}
    data = measurements.load_measurements()
    rows = data[data["key"] == "megatronbridge2025perf"]
    assert sorted(held["tokens_per_s_per_gpu"]) == sorted(int(r["value"]) // int(r["gpus"]) for _, r in rows.iterrows())


@pytest.mark.parametrize(("line", "expected"), [
    ("mb2511-h100-8b-fp8cs", {"sharding": "full", "virtual_stages": 1, "sequence_parallel": False, "tp": 1}),
    ("mb2606-h100-405b-fp8", {"sharding": "optimizer", "virtual_stages": 8, "sequence_parallel": True, "cp": 2}),
    ("mb2606-gb200-405b-mxfp8", {"precision": "fp8", "gpu": "GB200-NVL72", "pp": 16, "virtual_stages": 8}),
])
def test_the_rule_reads_a_line_as_its_layout_and_switches(line, expected):
    config = later.later_config(line)
    assert {k: config[k] for k in expected} == expected
    assert config["layers"] == measurements.run_config(later.SHAPE_ROWS[later.load_later().at[line, "model"]])["layers"]
    assert "peak_tflops" not in config and later.later_config(line, data_sheet_peak=True)["peak_tflops"] > 0


def test_a_case_lists_its_releases_oldest_first_and_its_layout_as_printed():
    cases = later.later_cases()
    h100_405b = cases[cases["ids"].str.contains("mb2606-h100-405b-fp8")].iloc[0]
    assert h100_405b["releases"] == "26.02, 26.04.01, 26.06"
    assert h100_405b["layout"] == "TP 8 · PP 8, CP 2 · VP 8, MBS 1 · GBS 1,536"
    h100_8b = cases[cases["ids"].str.contains("mb2511-h100-8b-fp8cs")].iloc[0]
    assert h100_8b["releases"] == "25.09, 25.11" and h100_8b["layout"].endswith(", FSDP 8")


def test_lines_with_the_same_inputs_are_one_case():
    cases = later.later_cases()
    assert cases["lines"].sum() == len(later.load_later())
    both = cases[cases["ids"].str.contains("mb2511-gb200-8b-fp8cs")].iloc[0]
    assert "mb2511-gb200-8b-fp8mx" in both["ids"]  # FP8-CS and MX blocks: one FP8 rate, one prediction
    frame = later.load_later()
    assert both["measured"] == pytest.approx(frame.loc[both["ids"].split(", "), "tokens_per_s_per_gpu"].mean())
    summary = later.later_summary(cases)
    assert summary.at["all", "cases"] == int((~cases["in_chapter"]).sum())
    assert summary.at["all", "cases"] == summary.drop(index="all")["cases"].sum()


def test_a_gb200_is_timed_at_its_dies_peak_and_its_runs_say_why():
    ratios = later.gb200_over_b200()
    assert len(ratios) == 5
    assert ratios["ratio"].max() < 1.06 < 1.11 == pytest.approx(ratios["peak_ratio"].iloc[0], abs=0.002)
    timed = later.later_cases()
    sheet = later.later_cases(data_sheet_peak=True)
    gb = timed["system"] == "DGX-GB200"
    assert (sheet.loc[gb, "error"] > timed.loc[gb, "error"]).all()
    assert (sheet.loc[~gb, "error"] == timed.loc[~gb, "error"]).all()
    assert isinstance(timed, pd.DataFrame)
