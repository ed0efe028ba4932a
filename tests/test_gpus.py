"""The GPUs as data (issue 43, item 4): records checked where they are made, looked up by name,
and the same numbers the measured rows carry."""
from __future__ import annotations

import csv
import dataclasses

import pytest

from argument_errors import BAD
from clustermath import GPU_ALIASES, GPUS, Gpu, gpu
from clustermath.validation import measurements

H100 = GPUS["H100-SXM5-80GB"]


def test_every_record_is_filed_under_its_own_name_and_cites_a_source():
    for name, record in GPUS.items():
        assert record.name == name
        assert "data sheet" in record.source or "technical brief" in record.source
        assert set(record.second_hand) <= {f.name for f in dataclasses.fields(Gpu)}


def test_the_parts_the_issue_names_are_all_there():
    assert {"A100-SXM4-40GB", "A100-SXM4-80GB", "H100-SXM5-80GB", "H200-SXM-141GB", "B200-SXM-180GB",
            "GB200-NVL72"} <= set(GPUS)


def test_lookup_by_name_and_by_alias_give_the_same_record():
    for alias, name in GPU_ALIASES.items():
        assert gpu(alias) is gpu(name) is GPUS[name]


@pytest.mark.parametrize(("spelling", "name"), [
    ("h100", "H100-SXM5-80GB"), ("H100 SXM", "H100-SXM5-80GB"), ("h100_sxm5_80gb", "H100-SXM5-80GB"),
    ("H100-80GB", "H100-SXM5-80GB"), ("h200", "H200-SXM-141GB"), ("H200 SXM 141GB", "H200-SXM-141GB"),
    ("B200-SXM", "B200-SXM-180GB"), ("gb200 nvl72", "GB200-NVL72"), ("GB200", "GB200-NVL72"),
    ("A100", "A100-SXM4-80GB"), ("a100-sxm4", "A100-SXM4-80GB"), ("A100 40GB", "A100-SXM4-40GB"),
    ("A100-SXM4-40GB", "A100-SXM4-40GB"), (" H100 ", "H100-SXM5-80GB"),
    ("DGX-H100", "H100-SXM5-80GB"), ("HGX H100", "H100-SXM5-80GB"), ("NVIDIA H100 80GB HBM3", "H100-SXM5-80GB"),
    ("H100-80GB-HBM3", "H100-SXM5-80GB"), ("DGX-H200", "H200-SXM-141GB"), ("NVIDIA H200", "H200-SXM-141GB"),
    ("DGX-B200", "B200-SXM-180GB"), ("NVIDIA B200", "B200-SXM-180GB"), ("DGX-GB200", "GB200-NVL72"),
    ("NVIDIA A100-SXM4-80GB", "A100-SXM4-80GB"), ("A100-SXM-40GB", "A100-SXM4-40GB"),
])
def test_a_name_is_found_in_any_case_and_spelling(spelling, name):
    assert gpu(spelling) is GPUS[name]


def test_a_bare_a100_is_the_80_gb_part_and_differs_from_the_40_gb_one_in_memory_only():
    big, small = gpu("A100"), gpu("A100-40GB")
    assert big.name == "A100-SXM4-80GB"
    differ = {f.name for f in dataclasses.fields(Gpu) if getattr(big, f.name) != getattr(small, f.name)}
    assert differ == {"name", "memory_TBps", "memory_GB", "source"}


@pytest.mark.parametrize("name", ["H100 PCIe", "H100-NVL", "MI300X", "A10", "H1000", "", None, 989.0, "H800", "GB300",
                                  "B300", "NVIDIA", "DGX", "HBM3"])
def test_an_unknown_name_is_refused_with_the_list(name):
    with pytest.raises(ValueError, match=r"^name must name one of the parts \[.*'H100-SXM5-80GB'.*got"):
        gpu(name)


def test_dense_peaks_are_half_the_sparse_data_sheet_values():
    """H100 SXM: 1,979 / 3,958 / 989 with sparsity (the sheet), 989 (rounded) / 1,979 / 494.5 dense."""
    assert (H100.peak_tflops("bf16"), H100.peak_tflops("fp16"), H100.peak_tflops("fp8"),
            H100.peak_tflops("tf32")) == (989.0, 989.0, 1979.0, 494.5)
    assert gpu("B200").peak_tflops("fp8") == 2 * gpu("B200").peak_tflops()
    assert gpu("H200").peak_tflops() == H100.peak_tflops() and gpu("H200").memory_TBps > H100.memory_TBps


def test_fp8_on_a_part_without_it_is_refused():
    with pytest.raises(ValueError, match="^precision must not be 'fp8' on A100-SXM4-80GB"):
        gpu("A100-80GB").peak_tflops("fp8")
    with pytest.raises(ValueError, match=r"^precision must be one of \['bf16', 'fp16', 'fp8', 'tf32'\]"):
        H100.peak_tflops("int8")


def test_records_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        H100.bf16_tflops = 1.0  # type: ignore[misc]


@pytest.mark.parametrize("field", ["name", "bf16_tflops", "fp8_tflops", "tf32_tflops", "memory_TBps", "memory_GB",
                                   "scale_up_GBps", "scale_up_gpus", "sms", "source", "second_hand"])
def test_a_bad_field_is_refused_by_its_name(field):
    with pytest.raises(ValueError) as err:
        dataclasses.replace(H100, **{field: 7 if field in ("name", "source") else BAD})  # "§" is a fine name
    assert str(err.value).startswith(f"{field} must"), str(err.value)


@pytest.mark.parametrize("change, field", [
    (dict(bf16_tflops=0.0), "bf16_tflops"), (dict(tf32_tflops=990.0), "tf32_tflops"),
    (dict(fp8_tflops=500.0), "fp8_tflops"), (dict(memory_TBps=0.0), "memory_TBps"),
    (dict(scale_up_gpus=0), "scale_up_gpus"), (dict(sms=0), "sms"), (dict(second_hand=("clock",)), "second_hand"),
    (dict(source=" "), "source"), (dict(name=""), "name"),
])
def test_impossible_values_are_refused_at_the_edge(change, field):
    with pytest.raises(ValueError, match=f"^{field} must"):
        dataclasses.replace(H100, **change)


def test_edges_that_are_allowed():
    """TF32 equal to the 16-bit rate and FP8 equal to it are possible parts; no FP8 is 0."""
    assert dataclasses.replace(H100, tf32_tflops=989.0, fp8_tflops=989.0).fp8_tflops == 989.0
    assert dataclasses.replace(H100, fp8_tflops=0.0).fp8_tflops == 0.0


def test_the_measured_rows_carry_the_records_numbers():
    """Where a row of measurements.csv names a part in GPUS and types its numbers, they are the record's."""
    with open(measurements.csv_path(), newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["gpu_type"] in GPUS]
    checked = 0
    for r in rows:
        record = GPUS[r["gpu_type"]]
        if r["peak_tflops"]:
            assert float(r["peak_tflops"]) == record.bf16_tflops, r["id"]
            checked += 1
        if r["scale_up_GBps"]:
            assert float(r["scale_up_GBps"]) == record.scale_up_GBps, r["id"]
        if r["memory_TBps"] and record.name != "H100-SXM5-80GB":  # torchtitan prints its H100s at 2.4 TB/s, 500 W
            assert float(r["memory_TBps"]) == record.memory_TBps, r["id"]
    assert checked > 100


def test_run_inputs_fill_predict_runs_hardware_keywords():
    """A GB200 is timed at its die's (the B200's) 16-bit peak; its data sheet's stays in the record."""
    assert gpu("GB200").run_inputs == {"peak_tflops": 2250.0, "scale_up_GBps": 900.0, "scale_up_gpus": 72,
                                       "memory_TBps": 8.0, "scale_out_GBps": 50.0}
    assert gpu("GB200").bf16_tflops == 2500.0 and gpu("GB200").peak_tflops("fp8") == 5000.0
    assert gpu("GB200").run_inputs["peak_tflops"] == gpu("B200").run_inputs["peak_tflops"]
    assert gpu("GB200").timed_share == pytest.approx(0.9, rel=1e-12)
    for name, record in GPUS.items():
        if name != "GB200-NVL72":
            assert record.run_inputs["peak_tflops"] == record.bf16_tflops and record.timed_share == 1.0, name


@pytest.mark.parametrize("value", [-1.0, 2500.1, "fast"])
def test_a_timed_peak_must_be_positive_and_at_most_the_data_sheets(value):
    with pytest.raises(ValueError, match="^timed_bf16_tflops must be a"):
        dataclasses.replace(gpu("GB200"), timed_bf16_tflops=value)


def test_every_part_names_its_reference_systems_nic_and_a_record_may_name_none():
    """One 400 Gb/s port per GPU (50 GB/s) on Hopper and Blackwell systems, one 200 Gb/s port on a DGX A100;
    a record built without one fills no ``scale_out_GBps``; a negative rate is refused by name."""
    assert {name: record.scale_out_GBps for name, record in GPUS.items()} == {
        "A100-SXM4-40GB": 25.0, "A100-SXM4-80GB": 25.0, "H100-SXM5-80GB": 50.0, "H200-SXM-141GB": 50.0,
        "B200-SXM-180GB": 50.0, "GB200-NVL72": 50.0}
    for record in GPUS.values():
        assert "scale-out" in record.source and record.run_inputs["scale_out_GBps"] == record.scale_out_GBps
    assert "scale_out_GBps" not in dataclasses.replace(gpu("H100"), scale_out_GBps=0.0).run_inputs
    with pytest.raises(ValueError, match="^scale_out_GBps must be a"):
        dataclasses.replace(gpu("H100"), scale_out_GBps=-1.0)
