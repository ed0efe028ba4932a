"""Chapter 6's data: the published measurements in ``clustermath/validation/measurements.csv``.

Integrity (ids, keys, units, statuses, complete throughput configurations), the package
shipping the CSV, the loader's helpers, every cross-check the sources allow (holds within
the printed digits, or is explained by an entry of ``DISAGREEMENTS``), and each
disagreement recomputed to the number the chapter will print.
"""
from __future__ import annotations

import math
import os
import shutil
import subprocess
import sys
import zipfile
from importlib import resources
from pathlib import Path

import pandas as pd
import pybtex.database
import pytest

import clustermath.validation
from clustermath.validation import (
    DISAGREEMENT_KINDS, FAMILIES, KNOWN_UNITS, LLAMA3_TABLE5, MODEL_INPUTS, PREDICT_RUN_INPUTS,
    assumed_columns, cross_checks, csv_path, disagreements, family, load_measurements, printed, run_config,
)
from clustermath.validation import measurements as m
from validation_fresh import fresh

ROOT = Path(__file__).resolve().parent.parent
BIB_KEYS = set(pybtex.database.parse_file(ROOT / "book" / "references.bib").entries)


# Nothing is computed from the models at import time, and each test computes the tables it reads
# (see validation_fresh.py: otherwise mutation testing would compare the original's tables).
@pytest.fixture(autouse=True)
def _fresh():
    fresh()


@pytest.fixture
def data():
    return load_measurements()


@pytest.fixture
def throughput(data):
    return data[data["family"] == "throughput"]


@pytest.fixture
def checks():
    return cross_checks()


# --------------------------------------------------------------------------- shipping
def test_importlib_resources_finds_the_csv():
    found = resources.files("clustermath.validation").joinpath("measurements.csv")
    assert found.is_file()
    assert found.read_text(encoding="utf-8").startswith("id,family,system,")
    assert csv_path().read_text(encoding="utf-8") == found.read_text(encoding="utf-8")


def test_a_wheel_built_from_the_repository_ships_the_csv(tmp_path):
    """``[tool.setuptools.package-data]`` puts the CSV in the wheel (pip install from the repo, Colab)."""
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, tmp_path)
    shutil.copytree(ROOT / "lib", tmp_path / "lib", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    script = "import setuptools.build_meta as b, sys; print(b.build_wheel(sys.argv[1]))"
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path / "dist")], cwd=tmp_path,
                          capture_output=True, text=True, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    assert done.returncode == 0, done.stderr[-2000:]
    wheel = tmp_path / "dist" / done.stdout.strip().splitlines()[-1]
    assert "clustermath/validation/measurements.csv" in zipfile.ZipFile(wheel).namelist()


# --------------------------------------------------------------------------- integrity
def test_size_and_spread_of_the_data(data, throughput):
    assert len(data) >= 40
    assert data["key"].nunique() >= 8
    assert len(throughput) >= 20
    assert set(data["family"]) == set(FAMILIES)


def test_ids_are_unique_and_index_the_frame(data):
    assert data["id"].is_unique
    assert list(data.index) == list(data["id"])
    assert all(rid and rid == rid.strip() and " " not in rid for rid in data["id"])


def test_every_key_is_in_the_bibliography(data):
    keys = set(data["key"]) | {k for d in disagreements() for k in d.sources}
    assert keys - BIB_KEYS == set()


@pytest.mark.parametrize("column, allowed", [
    ("family", set(FAMILIES)), ("unit", KNOWN_UNITS), ("status", {"primary", "secondary"}),
    ("kind", set(m.KINDS)),
])
def test_categorical_columns_hold_known_values(column, allowed, data):
    assert set(data[column]) - set(allowed) == set()


def test_every_row_says_where_in_its_source(data):
    assert (data["where"] != "").all() and (data["quantity"] != "").all() and data["value"].notna().all()


def test_throughput_rows_say_what_they_measure(data, throughput):
    assert set(throughput["metric"]) <= set(m.METRICS)
    needs_basis = throughput["metric"].isin(["mfu", "hfu", "pct_peak", "tflops_per_gpu"])
    assert set(throughput.loc[needs_basis, "flops_basis"]) <= {"model", "hardware"}
    assert (throughput.loc[throughput["metric"] == "mfu", "flops_basis"] == "model").all()
    assert (data.loc[data["family"] != "throughput", "metric"] == "").all()


def test_no_throughput_row_lacks_a_model_input(throughput):
    missing = {rid: [c for c in PREDICT_RUN_INPUTS if not m._present(r[c])] for rid, r in throughput.iterrows()}
    assert {rid: cols for rid, cols in missing.items() if cols} == {}
    assert set(throughput["recompute"]) <= set(m.RECOMPUTE)


def test_throughput_configurations_are_consistent(throughput):
    for rid, r in throughput.iterrows():
        tp, pp, cp, dp = (int(r[c]) for c in ("tp", "pp", "cp", "dp"))
        assert tp * pp * cp * dp == r["gpus"], rid
        assert r["global_batch"] % (dp * r["microbatch"]) == 0, rid
        assert pp * r["virtual_stages"] <= r["layers"], rid
        assert r["peak_tflops"] > 0 and r["scale_up_GBps"] > 0 and r["scale_out_GBps"] > 0, rid


def test_assumed_values_are_named_columns(data):
    for rid in data.index:
        assert set(assumed_columns(rid)) <= set(data.columns), rid
    # values the sources do not publish are marked, never passed off as read
    assert "microbatch" in assumed_columns("llama3-t4-1") and "virtual_stages" in assumed_columns("llama3-t4-1")
    assert "microbatch" in assumed_columns("nar21-t1-10") and "microbatch" not in assumed_columns("nar21-t2-01")


def test_statuses_are_honest_where_only_a_summary_was_read(data):
    assert set(data.loc[data["key"].isin(["kokolis2025", "lin2025stragglers"]), "status"]) == {"secondary"}
    assert (data.loc[data["status"] == "secondary", "note"].str.contains("only")).all()


# --------------------------------------------------------------------------- helpers
def test_family_filters_and_rejects_unknown_names(data, throughput):
    assert set(family("collectives")["family"]) == {"collectives"}
    assert len(family("throughput", data)) == len(throughput)
    with pytest.raises(ValueError, match="family must be one of"):
        family("throughputs")


def test_run_config_returns_plain_model_inputs(data):
    config = run_config("llama3-t4-1")
    assert set(PREDICT_RUN_INPUTS) <= set(config) <= set(MODEL_INPUTS)
    assert config["layers"] == 126 and type(config["layers"]) is int
    assert config["peak_tflops"] == 989.0 and type(config["peak_tflops"]) is float
    assert config["recompute"] == "none" and config["kv_heads"] == 8
    assert run_config(data.loc["llama3-t4-1"]) == config
    assert run_config("nar21-t1-01") == run_config(data.loc["nar21-t1-01"].to_dict())
    assert "kv_heads" not in run_config("nar21-t1-01")  # empty cells are left out


def test_run_config_keeps_only_what_a_model_accepts():
    def model(*, layers, hidden, recompute="none"):
        return layers, hidden, recompute

    def anything(**kwargs):
        return kwargs

    assert run_config("kor22-t5-1a", accepts=model) == {"layers": 48, "hidden": 6144, "recompute": "selective"}
    assert run_config("kor22-t5-1a", accepts=anything) == run_config("kor22-t5-1a")
    assert model(**run_config("kor22-t5-1a", accepts=model)) == (48, 6144, "selective")


def test_helpers_reject_unknown_rows_and_columns():
    with pytest.raises(ValueError, match="row must be an id"):
        run_config("no-such-row")
    with pytest.raises(ValueError, match="row_id must be an id"):
        printed("no-such-row")
    with pytest.raises(ValueError, match="column must be a column"):
        printed("nar21-t1-01", "no_such_column")
    with pytest.raises(ValueError, match="has no stated_iteration_s"):
        printed("nar21-t1-01", "stated_iteration_s")


@pytest.mark.parametrize("rid, column, expected", [
    ("ms24-t2-09", "stated_iteration_s", (29.015, 29.025)),
    ("ms24-t2-09", "stated_tokens_per_s", (433550.0, 433650.0)),
    ("nar21-t1-10", "value", (162.5, 163.5)),
    ("kor22-t5-1a", "stated_iteration_s", (1.095, 1.105)),  # "1.10": the trailing zero counts
    ("ms24-f9-1", "value", (49.195, 49.205)),
])
def test_printed_reads_the_precision_of_the_source(rid, column, expected):
    assert printed(rid, column) == pytest.approx(expected)


def test_the_sources_formulas():
    # Narayanan eq. (2) gives the 1T model's printed 1008.0B; eq. (3) per token = 96 l h^2 (...)
    assert m.narayanan_params(128, 25600) / 1e9 == pytest.approx(1008.04, abs=0.005)
    assert m.narayanan_flops(1, 1, 6, vocab=0, seq_len=1) == pytest.approx(96 * 36 * (1 + 1 / 36))
    # Korthikanti eqs (7)-(8): hardware/model ~ 1 + s/6h for the selective-recompute FLOPs
    mf = m.korthikanti_model_flops(1, 96, 12288, 51200, 2048)
    hf = m.korthikanti_hardware_flops(1, 96, 12288, 51200, 2048)
    assert hf / mf == pytest.approx(1 + 2048 / (6 * 12288), rel=2e-3)


def test_llama3_table5_in_full(data):
    assert sum(count for _, count, _ in LLAMA3_TABLE5.values()) == data.at["llama3-int-unexpected", "value"] == 419
    rows = data[data["id"].str.startswith("llama3-t5-")].sort_index()
    assert len(rows) == 7
    for (category, count, pct), (rid, r) in zip(list(LLAMA3_TABLE5.values())[:7], rows.iterrows()):
        assert (count, pct) == (r["value"], r["stated_share_pct"]), rid


# --------------------------------------------------------------------------- cross-checks
def test_every_cross_check_holds_or_is_flagged(checks):
    assert checks[~checks["holds"] & (checks["flagged"] == "")].empty


def test_no_check_is_flagged_that_holds(checks):
    assert checks[checks["holds"] & (checks["flagged"] != "")].empty


def test_the_cross_checks_the_issue_asks_for_exist(checks):
    counts = checks["check"].value_counts()
    for name, at_least in [("mfu_vs_tflops", 3), ("pct_peak_vs_tflops", 10), ("mfu_from_iteration", 5),
                           ("tokens_vs_iteration", 16), ("aggregate_vs_tflops", 10), ("mfu_vs_aggregate", 16),
                           ("params_eq2", 16), ("busbw_vs_algbw", 4), ("algbw_vs_time", 1)]:
        assert counts.get(name, 0) >= at_least, name


def test_disagreements_name_real_checks(data, checks):
    keys = set(zip(checks["check"], checks["id"]))
    for d in disagreements():
        assert set(d.checks) <= keys, d.id
        assert set(d.rows) <= set(data.index), d.id


# --------------------------------------------------------------------------- disagreements
EXPECTED = {  # id: (stated, recomputed) as the chapter prints them
    "korthikanti-eq8-selective": (43.7, 42.22),
    "megascale-aggregate-16": (55.2, 56.50),
    "megascale-aggregate-01": (53.0, 54.21),
    "megascale-aggregate-02": (49.9, 48.58),
    "megascale-aggregate-04": (44.7, 41.28),
    "megascale-aggregate-15": (54.9, 54.80),
    "megascale-tokens-12": (1466.8e3, 1468.25e3),
    "megascale-tokens-05": (49.0e3, 49.152e3),
    "megascale-speedup-10": (1.19, 1.199),
    "megascale-speedup-11": (1.26, 1.268),
    "megascale-fig9-drop": (1.6, 1.0),
    "megascale-lamb-bubbles": (87.5, 75.0),
    "llama3-t5-faulty-gpu": (30.1, 35.32),
    "llama3-t5-sum": (94.9, 100.0),
    "llama3-gpu-share": (58.7, 63.96),
    "llama3-t4-dp": (4, 8),
    "llama3-t4-mfu": (41.0, 40.44),
    "narayanan-pct-peak-is-hfu": (52.0, 39.20),
    "korthikanti-appc-175": (0.7, 0.9),
    "korthikanti-sbhp-gib": (2.73, 2.936),
    "hpn-checkpoint-overhead": (5.0, 1.39),
    "tpuv4-ocs-power": (3.0, 5.0),
    "kokolis-series-1024": (7.9, 28.85),
    "kokolis-vs-llama3-16k": (1.8, 3.09),
    "nccl1455-nvls-5gpu": (420.0, 412.8),
    "nccl1455-nvls-8gpu": (480.0, 477.75),
    "nccltests175-theoretical": (100.0, 96.0),
}


def test_every_disagreement_is_pinned():
    found = disagreements()
    assert {d.id for d in found} == set(EXPECTED)
    assert len({d.id for d in found}) == len(found)
    assert clustermath.validation.DISAGREEMENTS is found and m.DISAGREEMENTS is found


@pytest.mark.parametrize("did", EXPECTED)
def test_each_disagreement(did):
    (d,) = [d for d in disagreements() if d.id == did]
    stated, recomputed = EXPECTED[d.id]
    assert d.stated == pytest.approx(stated)
    assert d.recomputed == pytest.approx(recomputed, abs=0.006 * max(1.0, abs(recomputed) / 100))
    assert d.kind in DISAGREEMENT_KINDS
    assert set(d.sources) <= BIB_KEYS
    assert d.claim and d.where and d.computation and d.unit
    # a real disagreement: beyond half a unit of the last digit the source printed
    digits = str(stated).rstrip("0").partition(".")[2]
    assert abs(d.difference) > 0.5 * 10 ** -len(digits) or d.kind == "rounding" and abs(d.difference) > 0.004


def test_the_disagreement_list_is_printable():
    table = pd.DataFrame([{"id": d.id, "kind": d.kind, "stated": d.stated, "recomputed": d.recomputed,
                           "unit": d.unit, "computation": d.computation} for d in disagreements()])
    assert table["computation"].str.len().min() > 20
    assert not any(math.isnan(x) for x in table["recomputed"])


def test_a_gradient_width_no_source_states_is_marked_assumed(data):
    tput = data[data["family"] == "throughput"]
    for rid, r in tput.iterrows():
        if "grad_bytes" in assumed_columns(rid):
            assert r["grad_bytes"] == 4, rid                      # FP32, Megatron-LM's default
        else:                                                     # stated: a config cited in the note
            assert r["grad_bytes"] == 2 and "grad_sync_dtype bf16" in r["note"], rid
            assert "NeMo-Framework-Launcher" in r["note"] and "tag 24.07" in r["note"], rid
    assert (tput["assumed"].str.contains("grad_bytes")).sum() >= 100


def test_nemo_rows_cite_their_launcher_config():
    data = load_measurements()
    nemo = data[data["key"] == "nemo2024perf"]
    assert len(nemo) == 10
    for rid, r in nemo.iterrows():
        assert "NVIDIA/NeMo-Framework-Launcher launcher_scripts/conf/training/" in r["note"], rid
        assert "commit 8325688d8345" in r["note"], rid
        for switch in ("recompute", "sequence_parallel", "sharding"):     # every recipe states these
            assert switch not in assumed_columns(rid), (rid, switch)
    # what the configs say that the earlier rows assumed otherwise
    assert data.at["nemo24-nemotron-340b-128", "recompute"] == "selective"
    assert "ub_tp_comm_overlap false" in data.at["nemo24-gpt3-175b-128", "note"]
    assert "overlap" in assumed_columns("nemo24-gpt3-175b-128")            # TP overlap off: no one switch says it
    assert "overlap" not in assumed_columns("nemo24-llama3-70b-64")        # every overlap on, as stated
    assert "no FP8 example script" in data.at["nemo24-nemotron-340b-128", "note"]
