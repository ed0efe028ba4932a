"""Chapter 6's long sequences (``validation.long_sequences``): the file as the page prints it, the rule that
turns a run into ``predict_run``'s keywords, the B200 table refused by name, and what the three timings
of attention give."""
from __future__ import annotations

import pytest

from clustermath.validation import long_sequences as ls
from clustermath.validation import measurements as m
from clustermath.validation.predict import predict_run


def test_the_file_holds_both_tables_as_printed():
    frame = ls.load_long_sequences()
    h100, b200 = frame[frame["gpu_type"] == "H100-SXM5-80GB"], frame[frame["gpu_type"] == "B200-SXM-180GB"]
    assert (len(h100), len(b200)) == (9, 8)
    assert (h100["sizes"] == h100["gpus"]).all()
    assert list(h100["seq_len_k"]) == [2 ** k for k in range(2, 11)]
    # a fixed batch of 4M tokens: batch times sequence is constant on both tables
    assert set(frame["global_batch"] * frame["seq_len"]) == {4 * 1024 ** 3 // 1024}
    assert frame.at["nemo2403-h100-7b-1024k", "tflops_per_gpu"] == 536.0
    assert frame["where"].str.startswith("docs/source/performance/performance_long_sequence.md").all()


def test_every_b200_row_prints_a_quarter_of_its_gpus_in_its_sizes():
    mismatch = ls.b200_size_mismatch()
    assert len(mismatch) == 8 and (mismatch["ratio"] == 4.0).all()


def test_a_run_whose_sizes_do_not_make_its_gpus_is_refused_by_name():
    with pytest.raises(ValueError, match="^line must be a run whose TP·PP·DP·CP is its GPU count, got 2 for 8 GPUs"):
        ls.long_sequence_config("nemo2504-b200-8b-8k")


def test_a_run_takes_the_chapter_rows_shape_and_switches_and_its_printed_layout():
    config = ls.long_sequence_config("nemo2403-h100-7b-256k")
    base = m.run_config(ls.SHAPE_ROW, accepts=predict_run)
    for key in ("layers", "hidden", "heads", "kv_heads", "ffn_hidden", "vocab", "precision", "sharding", "gated_mlp"):
        assert config[key] == base[key], key
    assert (config["seq_len"], config["gpus"], config["tp"], config["pp"], config["cp"]) == (262_144, 256, 4, 1, 8)
    assert config["gpus"] // (config["tp"] * config["pp"] * config["cp"]) == 8  # the printed DP
    assert config["gpu"] == "H100-SXM5-80GB" and config["sequence_parallel"] and config["recompute"] == "none"


def test_without_the_rings_overhead_attention_at_the_gemms_rate_runs_further_ahead_as_sequences_grow():
    errors = ls.long_sequence_errors()
    no_ring = list(errors["error_no_ring"])
    assert no_ring == sorted(no_ring) and no_ring[0] > 0.0 and no_ring[-1] > 0.5


def test_the_rings_overhead_fitted_at_8k_holds_the_context_parallel_runs_to_1m():
    """The defaults: every run with ``cp > 1`` within +10%; the runs without a ring are unchanged by it."""
    errors = ls.long_sequence_errors()
    ring = errors[errors["cp"] > 1]
    assert len(ring) == 6 and ring["error_today"].between(0.0, 0.10).all()
    flat = errors[errors["cp"] == 1]
    assert (flat["error_today"] == flat["error_no_ring"]).all()


def test_flashattention_2s_rate_holds_every_length_and_3s_is_faster_than_2s():
    errors = ls.long_sequence_errors()
    assert errors["error_fa2"].abs().max() < 0.10
    assert (errors["predicted_fa3"] > errors["predicted_fa2"]).all()
    summary = ls.long_sequence_summary(errors)
    assert list(summary.index) == list(ls.ATTENTION_WAYS) and (summary["runs"] == 9).all()
    assert summary.at["fa2", "median_abs_error"] == pytest.approx(errors["error_fa2"].abs().median())
