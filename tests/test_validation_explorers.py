"""Chapter 6's explorers flag degenerate plans and offer only valid interleavings (issue 27, item 5)."""
from __future__ import annotations

import pytest

from clustermath.views.validation import _runs, gpu_name, interleavings, plan_explorer, plan_flags, run_explorer

SOUND = dict(layers=96, pp=8, tp=8, microbatches=8, bubble_share=0.5, virtual_stages=6)


def test_a_sound_plan_at_every_threshold_is_not_flagged():
    assert plan_flags(**SOUND) == {}                       # pp = micro-batches, bubble exactly half, tp = domain
    assert plan_flags(**{**SOUND, "microbatches": 1})["microbatches"].startswith("8 stages but 1 micro-batch:")


@pytest.mark.parametrize("change, key", [
    ({"microbatches": 7}, "microbatches"),
    ({"bubble_share": 0.5000001}, "bubble"),
    ({"tp": 9}, "tp"),
    ({"layers": 100}, "layers"),                           # 100 layers over 8 stages
    ({"virtual_stages": 5}, "layers"),                     # 5 does not divide 12 layers per stage
])
def test_each_degenerate_plan_is_named(change, key):
    flags = plan_flags(**{**SOUND, **change})
    assert list(flags) == [key]


def test_a_single_stage_has_no_interleaving_to_check():
    assert plan_flags(**{**SOUND, "pp": 1, "virtual_stages": 7}) == {}
    assert interleavings(96, 1, own=1) == [1]


def test_interleavings_divide_the_layers_per_stage():
    assert interleavings(96, 8) == [1, 2, 3, 4, 6, 12]
    assert interleavings(126, 16, own=2) == [1, 2, 7]      # a published value is kept, and flagged
    assert interleavings(64, 1) == [1]


def test_the_run_explorer_offers_only_divisors_and_flags_uneven_stages():
    e = run_explorer()
    assert [v for _, v in e.controls["virtual_stages"].options] == [1, 2, 3, 4, 6, 12]
    e.controls["row"].value = "llama3-t4-2"
    result = e.compute()
    assert e.warnings(result) == ["stages of unequal depth"]
    assert "126 layers do not split evenly over 16 stages" in e.table_html(result)


def test_the_run_explorer_labels_a_derived_step_and_assumed_inputs():
    e = run_explorer()
    report = e.report()
    assert "measured step" not in report
    assert "step derived from the MFU" in report
    assert "inputs assumed, not published" in report and "scale-up link" in report


def test_the_plan_explorer_flags_a_degenerate_plan_on_screen():
    e = plan_explorer()
    assert e.warnings(e.compute()) == []
    for port, value in (("layers", 16), ("pp", 16), ("microbatches", 1), ("tp", 16)):
        e.controls[port].value = value
    result = e.compute()
    notes = e.warnings(result)
    assert notes == ["more stages than micro-batches", "bubble over half the step", "TP beyond the scale-up domain"]
    html = e.table_html(result)
    assert "most stages idle" in html and "more than half the step" in html and "scale-up domain" in html


def test_the_run_explorer_says_which_peak_an_mfu_is_on():
    # a 16-bit row: one basis, named with its peak
    rows = dict(run_explorer()._rows(run_explorer().compute()))
    assert "measured MFU (% of the 312 TFLOP/s 16-bit peak)" in rows
    assert "model FLOPs utilisation (% of the 312 TFLOP/s 16-bit peak)" in rows
    assert not any("FP8" in label for label in rows)
    # an FP8 row llm-foundry printed against the FP8 peak: both bases, the printed one as printed
    e = run_explorer("mosaic23-h100fp8-3b-s8192-g8")
    rows = dict(e._rows(e.compute()))
    sixteen = float(rows["measured MFU (% of the 989 TFLOP/s 16-bit peak)"])
    printed = float(rows["measured MFU (% of the 1,979 TFLOP/s FP8 peak, as printed)"])
    predicted16 = float(rows["predicted MFU (% of the 989 TFLOP/s 16-bit peak)"])
    predicted8 = float(rows["predicted MFU (% of the 1,979 TFLOP/s FP8 peak, as printed)"])
    assert printed == 23.28                                # llm-foundry's figure, as its README prints it
    assert sixteen == pytest.approx(printed * 1979 / 989, abs=0.005)
    # each printed to 0.1: half a step of predicted8's and half of predicted16's, scaled, apart at most
    assert predicted8 == pytest.approx(predicted16 * 989 / 1979, abs=0.05 + 0.05 * 989 / 1979)


def test_the_run_pickers_labels_name_row_and_gpus_and_stay_short():
    # issue 40: the labels once ran to 130 characters ("… NeMo 23.09 (Megatron-Core, Transformer Engine
    # FP8), MLPerf Training v3.1, …") and the box showed "ms24-t2-12: Mega". The browser test measures
    # the chosen one in its box (tests/browser/test_pages.py); this keeps every one of them short.
    labels = _runs()
    assert len(set(labels.values())) == len(labels)            # one label per row, none lost to a clash
    assert labels["ms24-t2-12: 12,288 A100-class"] == "ms24-t2-12"
    assert labels["mbridge25-h100-llama31-405b: 1,024 H100"] == "mbridge25-h100-llama31-405b"
    assert all(label.startswith(f"{rid}: ") for label, rid in labels.items())
    assert max(map(len, labels)) <= 42, max(labels, key=len)


@pytest.mark.parametrize("gpu_type, name", [("H100-SXM5-80GB", "H100"), ("A100-SXM4-40GB", "A100"),
                                            ("B200-SXM-180GB", "B200"), ("Ampere (A100-class)", "A100-class"),
                                            ("TPU v4", "TPU v4"), ("", "")])
def test_gpu_names_are_short(gpu_type, name):
    assert gpu_name(gpu_type) == name
