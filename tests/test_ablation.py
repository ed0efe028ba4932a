"""What issue 43's switches move on the validated rows (``validation.ablation``)."""
from __future__ import annotations

import pandas as pd
import pytest

from clustermath.validation import ablation, holdout, measurements
from clustermath.validation.predict import predict_run


@pytest.fixture(scope="module")
def errors():
    return ablation.ablation_errors(("today", "by_name"))  # the refitted variants cost seconds: not in CI


def test_today_is_holdouts_own_errors(errors):
    rows = holdout.residuals("throughput")
    rows = rows[rows.role == "validation"]
    assert (errors["today"] - rows["error"]).abs().max() < 1e-12


def test_variants_switch_what_they_say():
    assert ablation.ablation_config("by_name", "nemo24-llama2-70b-64")["gpu"] == "H100-SXM5-80GB"
    assert "peak_tflops" not in ablation.ablation_config("by_name", "nemo24-llama2-70b-64")
    assert ablation.ablation_config("kernels", "nemo24-llama2-70b-64")["kernels"] is True
    assert ablation.ablation_config("kernels", "nar21-t1-02") == ablation.ablation_config(
        "today", "nar21-t1-02")  # A100: no GEMM table, attention causal as today
    assert ablation.ablation_config("full_attention", "nar21-t1-02") == {
        **ablation.ablation_config("today", "nar21-t1-02"), "causal_attention": False}  # the old default
    assert "causal_attention" not in ablation.ablation_config("today", "nar21-t1-02")  # causal is the default
    # FlashAttention's rates by the stack: Transformer Engine's fused attention as FA3, others FA2, Blackwell none
    assert ablation.ablation_config("kernels_fa", "nemo24-llama2-70b-64")["attention_kernel"] == "fa3"
    assert ablation.ablation_config("kernels_fa", "titan24-t1-8b-compile")["attention_kernel"] == "fa2"
    assert ablation.ablation_config("kernels_fa", "mbridge25-b200-llama3-8b") == ablation.ablation_config(
        "kernels", "mbridge25-b200-llama3-8b")
    assert ablation.ablation_config("kernels_fa", "nar21-t1-02") == ablation.ablation_config("kernels", "nar21-t1-02")
    # FP8 casts by the stack: torchtitan's float8 scales dynamically, every other FP8 stack runs Transformer Engine
    assert ablation.ablation_config("kernels_fp8", "titan24-t1-8b-float8")["fp8_casts"] == "dynamic"
    assert ablation.ablation_config("kernels_fp8", "nemo24-llama2-70b-64")["fp8_casts"] == "te"
    assert "fp8_casts" not in ablation.ablation_config("kernels_fp8", "titan24-t1-8b-compile")   # BF16
    assert ablation.ablation_config("no_loss", "nar21-t1-02") == {
        **ablation.ablation_config("today", "nar21-t1-02"), "loss_bytes": 0.0}  # the model before loss_time
    assert ablation.ablation_config("dp_rings", "nar21-t1-02") == {
        **ablation.ablation_config("today", "nar21-t1-02"), "dp_latency": "rings_trees"}
    assert dict(ablation.refit_for("today")) == {}
    with pytest.raises(ValueError, match="^variant must be one of"):
        ablation.ablation_config("fp8", "nar21-t1-02")


def test_the_summary_has_every_source_and_the_pool(errors):
    table = ablation.ablation_summary(errors)
    assert list(table.columns) == ["rows", "today", "by_name"]
    assert table.loc["pooled", "rows"] == len(errors) == table["rows"].iloc[:-1].sum()
    assert table.loc["pooled", "today"] == pytest.approx(100 * errors["today"].abs().median())


def test_a_row_on_a_part_without_a_record_is_unchanged_by_name(errors):
    bare = errors[~errors.gpu_type.isin(ablation.GPUS)]
    assert len(bare) and (bare["by_name"] == bare["today"]).all()


def test_the_kernel_gap_is_a_rate_not_missing_flops():
    rows = ablation.kernel_gap_rows()
    assert "nemo24-llama2-70b-64" in rows and "mlperf31-eos-gpt3-512" in rows
    assert not any(r.startswith(("mosaic", "titan", "llama3")) for r in rows)  # not Megatron-Core
    today, kernel, flops = ablation.gemm_rates("nemo24-llama2-70b-64")
    assert flops == pytest.approx(1.0, abs=1e-12)
    assert today == pytest.approx(989 * 0.605 * 8192 / (8192 + 167) * 1.6, rel=1e-9)  # η(h)·peak·2·0.8
    assert 1.3 < kernel / today < 1.6
    assert ablation.efficiency_ratio() == pytest.approx(0.605 / 0.8544)


@pytest.mark.parametrize("gpu_type, precision, family", [
    ("A100-SXM4-80GB", "fp16", "Ampere 16-bit"), ("Ampere (A100-class)", "bf16", "Ampere 16-bit"),
    ("H100-SXM5-80GB", "bf16", "Hopper 16-bit"), ("H200-SXM-141GB", "fp8", "Hopper FP8"),
    ("B200-SXM-180GB", "fp8", "Blackwell FP8"), ("GB200-NVL72", "bf16", "Blackwell 16-bit")])
def test_a_row_family_is_its_generation_and_precision(gpu_type, precision, family):
    assert ablation.row_family(gpu_type, precision) == family


@pytest.mark.parametrize("gpu_type, precision, name",
                         [("MI300X", "bf16", "gpu_type"), ("H100-SXM5-80GB", "fp4", "precision")])
def test_a_row_outside_the_families_is_refused_by_name(gpu_type, precision, name):
    with pytest.raises(ValueError, match=f"^{name} must"):
        ablation.row_family(gpu_type, precision)


def test_the_families_partition_the_rows_and_pool_as_the_summary(errors):
    table = ablation.ablation_by_family(errors)
    assert table.index[-1] == "pooled" and set(table.index[:-1]) <= set(ablation.FAMILIES)
    assert table["rows"].iloc[:-1].sum() == table.at["pooled", "rows"] == len(errors)
    assert table.at["pooled", "today"] == pytest.approx(ablation.ablation_summary(errors).at["pooled", "today"])
    hopper8 = errors[errors.gpu_type.str.startswith("H1") & (errors.precision == "fp8")]
    assert table.at["Hopper FP8", "rows"] == len(hopper8)
    speed = [ablation.speed_error(e, rid) for rid, e in hopper8["today"].items()]
    assert table.at["Hopper FP8", "today_signed"] == pytest.approx(100 * pd.Series(speed).median())
    assert table.at["Hopper FP8", "today"] == pytest.approx(100 * hopper8["today"].abs().median())
    assert list(table.columns) == ["rows", "today", "today_signed", "by_name", "by_name_signed"]


def test_a_step_time_error_reads_as_speed():
    assert ablation.speed_error(0.25, "mlperf31-eos-gpt3-512") == pytest.approx(-0.2)  # 25% longer: 20% slower
    assert ablation.speed_error(0.25, "nemo24-llama2-70b-64") == 0.25  # a TFLOP/s figure as it is


def test_loso_today_is_holdouts_own_and_a_switch_refits_only_the_solved_constants():
    source = "bigscience2022tr11"  # one row: the cheapest refit
    mine = ablation.loso_errors("today", sources=(source,))
    assert list(mine.index) == ["bloom22-176b"]
    # as holdout.leave_one_source_out predicts it (not called: it refits every source, seconds)
    run = {**measurements.run_config("bloom22-176b", accepts=predict_run), **dict(holdout._loso_fit(source)[1])}
    measured = holdout.residuals("throughput").at["bloom22-176b", "measured"]
    theirs = holdout.predicted_value(predict_run(**run), "bloom22-176b") / measured - 1
    assert mine.at["bloom22-176b", "error"] == pytest.approx(theirs, abs=1e-12)
    assert abs(theirs) == pytest.approx(0.09547, abs=5e-5)  # chapter 6: BLOOM left out, 9.547%
    today, full = (dict(ablation._loso_constants(v, source)) for v in ("today", "full_attention"))
    assert today.keys() == full.keys()
    moved = {k for k in today if abs(full[k] - today[k]) > 1e-9}
    assert moved and moved <= {c.constant for c in ablation.CALIBRATION if c.run}
    table = ablation.loso_by_variant(("today", "full_attention"), sources=(source,))
    assert table.at["today", "worst_source"] == source
    assert table.at["today", "pooled"] == pytest.approx(100 * abs(mine.at["bloom22-176b", "error"]))
    with pytest.raises(ValueError, match="^variant must be one of"):
        ablation.loso_errors("fp8")
