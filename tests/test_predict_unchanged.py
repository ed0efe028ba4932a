"""``predict_run``'s outputs do not move when its code is reorganised (issue 43, item 7).

``predict_unchanged.json`` holds, for every case below, a digest of every field of the
``RunPrediction`` (each float by ``float.hex``, so equal digests mean bit-identical numbers) and
its ``step_s`` for a reader. The cases: every throughput row of ``measurements.csv`` as
``holdout`` predicts it; the same rows under each ``ablation`` variant's switches (GPU by name,
full attention, kernels; defaults, not refitted); a grid of the stack's switches, recomputation
and interleaving on three runs; and each calibrated constant moved off its default.

Written once from the code before the change (``python tests/test_predict_unchanged.py --write``);
a change that is meant to move a number rewrites it and says so in its commit.
"""
from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import sys
from pathlib import Path

import pytest

from clustermath.validation import ablation, measurements as m
from clustermath.validation.predict import RunPrediction, predict_run

STORE = Path(__file__).with_name("predict_unchanged.json")

BASES = {  # three runs: 1 T Megatron (pp, interleaving), Llama 3 405B (cp, GQA, FP8), an FSDP row
    "nar21": "nar21-t1-10",
    "llama": "mbridge25-h100-llama31-405b",
    "fsdp": None,
}
CONSTANTS = {"kernel_efficiency": 0.55, "hopper_kernel_efficiency": 0.5, "kernel_half_width": 900.0,
             "bus_efficiency_up": 0.6, "bus_efficiency_out": 0.5, "latency_s": 2e-5, "fp8_efficiency": 0.7,
             "overlap_slowdown": 0.3, "tp_overlap": 0.4, "pp_overlap": 0.3, "dp_overlap": 0.2,
             "straggler_cv": 0.01, "grad_bytes": 2.0, "cp_attention_overhead": 1.0}


def _digest(p: RunPrediction) -> str:
    parts = []
    for f in dataclasses.fields(p):
        x = getattr(p, f.name)
        parts.append(f"{f.name}={x.hex() if isinstance(x, float) else x!r}")
    return hashlib.sha256(";".join(parts).encode()).hexdigest()[:24]


def _rows() -> list[str]:
    data = m.load_measurements()
    return [rid for rid in data.index[data.family == "throughput"]]


def _base(name: str) -> dict:
    if BASES[name] is not None:
        return m.run_config(BASES[name], accepts=predict_run)
    data = m.load_measurements()
    rid = next(r for r in _rows() if data.loc[r, "sharding"] == "full")
    return m.run_config(rid, accepts=predict_run)


def cases() -> dict[str, dict]:
    """Every case's ``predict_run`` keywords, by name."""
    out: dict[str, dict] = {}
    for rid in _rows():
        out[f"row:{rid}"] = m.run_config(rid, accepts=predict_run)
        for variant in ("by_name", "full_attention", "kernels"):
            out[f"{variant}:{rid}"] = ablation.ablation_config(variant, rid)
    for name in BASES:
        base = _base(name)
        for overlap, sharding, recompute, precision, flash, sp in itertools.product(
                (False, True), ("none", "optimizer", "full"), ("none", "selective", "full"), ("bf16", "fp8"),
                (False, True), (None, True)):
            out[f"grid:{name}:{overlap}:{sharding}:{recompute}:{precision}:{flash}:{sp}"] = {
                **base, "overlap": overlap, "sharding": sharding, "recompute": recompute,
                "precision": precision, "flash_attention": flash, "sequence_parallel": sp}
        for constant, value in CONSTANTS.items():
            out[f"const:{name}:{constant}"] = {**base, constant: value, "overlap": True}
        out[f"full:{name}"] = {**base, "causal_attention": False}
    base = _base("llama")
    for key in [*base, *CONSTANTS, "virtual_stages", "cp", "heads", "kv_heads", "ffn_hidden", "scale_up_gpus",
                "memory_TBps", "gpu", "kernels", "causal_attention", "stack", "recompute"]:
        for bad in (0, -1, 0.5, float("nan"), float("inf"), True, "x", 10**6):
            out[f"error:{key}:{bad!r}"] = {**base, key: bad}
    return out


def _predict(config: dict) -> RunPrediction | str:
    try:
        return predict_run(**config)
    except ValueError as e:
        return f"ValueError: {e}"


def snapshot() -> dict[str, list]:
    result = {}
    for name, config in cases().items():
        p = _predict(config)
        result[name] = [p, None] if isinstance(p, str) else [_digest(p), p.step_s]
    return result


def test_every_prediction_is_bit_identical_to_the_stored_one():
    stored = json.loads(STORE.read_text())
    now = snapshot()
    assert now.keys() == stored.keys()
    moved = {k: (stored[k], now[k]) for k in stored if stored[k] != now[k]}
    assert not moved, f"{len(moved)} of {len(stored)} predictions moved, e.g. {list(moved.items())[:3]}"


def test_the_store_covers_errors_and_every_part():
    stored = json.loads(STORE.read_text())
    errors = sum(v[0].startswith("ValueError") for v in stored.values())
    assert len(stored) > 1_000 and 100 < errors < len(stored) / 3


if __name__ == "__main__":
    if "--write" not in sys.argv:
        sys.exit(__doc__)
    STORE.write_text(json.dumps(snapshot(), indent=0, sort_keys=True) + "\n")
    print(f"wrote {STORE}")
else:
    pytest.importorskip("pandas")
