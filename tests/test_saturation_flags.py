"""A value computed from a saturated one is flagged, like the saturated value itself.

Chapter 1's models keep source 000's 16-bit outputs, which stop at 65,535. An
explorer flagged an output sitting at the ceiling but not what was computed
from it: 1,024 nodes of 1,000 TFLOPS peak at 65,535 (truly 1,024,000), and at
50% efficiency showed 32,767 achieved TFLOPS with no mark (truly 512,000).

The oracle here is independent of the dependency lists the models declare
(``COMPUTED_FROM``): each model is run twice, once as shipped and once with
its ``sat16`` replaced by the identity (exact arithmetic). Every output whose
two values differ was changed by the ceiling, and must be flagged by the
model layer (``clustermath.runner.saturated``) and on screen
(``clustermath.views.base.flags``), whatever the input.
"""
from __future__ import annotations

import sys
from dataclasses import fields

import numpy as np
import pytest

from clustermath import MODELS, cluster_scale, spec_of
from clustermath.runner import saturated
from clustermath.views.base import flags
from clustermath.views.peak import explorer

SATURATING = [m for m in MODELS if hasattr(sys.modules[m.__module__], "sat16")]
EXTREMES = (0, 1, 2, 3, 99, 100, 255, 256, 1000, 1024, 4096, 32_767, 32_768, 65_534, 65_535)


def _port(rng: np.random.Generator) -> int:
    if rng.random() < 0.4:
        return int(rng.choice(EXTREMES))
    return int(np.exp(rng.uniform(0.0, np.log(65_535.0))))


def _inputs(model, rng: np.random.Generator) -> dict:
    spec = spec_of(model)
    inputs = {}
    for port in spec.inputs:
        inputs[port] = bool(rng.integers(2)) if port == "recompute" else _port(rng)
    if "efficiency_pct" in inputs:  # no cluster beats its peak
        inputs["efficiency_pct"] = int(rng.choice((0, 1, 41, 50, 70, 99, 100)))
    if model.__name__ == "straggler_step" and inputs["slowest_ms"] < inputs["mean_ms"]:
        inputs["mean_ms"], inputs["slowest_ms"] = inputs["slowest_ms"], inputs["mean_ms"]
    return inputs


def _exact(model, monkeypatch, **kwargs):
    """The model with its outputs left unsaturated (Python integers never wrap)."""
    with monkeypatch.context() as patch:
        patch.setattr(sys.modules[model.__module__], "sat16", lambda value: value)
        return model(**kwargs)


def test_every_saturating_model_declares_what_is_computed_from_what():
    # all but the pipeline (a share of 100% at most) and the assembled model (flags and a mask)
    assert len(SATURATING) == 8
    for model in SATURATING:
        result = model(**_inputs(model, np.random.default_rng(0)))
        declared = type(result).COMPUTED_FROM
        names = {f.name for f in fields(result)}
        assert set(declared) <= names and all(set(up) <= names for up in declared.values()), model.__name__


@pytest.mark.parametrize("model", SATURATING, ids=lambda m: m.__name__)
def test_an_output_the_ceiling_changed_is_flagged(model, monkeypatch):
    rng = np.random.default_rng(sum(map(ord, model.__name__)))
    changed_seen = 0
    for _ in range(600):
        inputs = _inputs(model, rng)
        for broken in (False, True):
            kwargs = {**inputs, spec_of(model).broken_flag: broken}
            shipped, exact = model(**kwargs), _exact(model, monkeypatch, **kwargs)
            changed = [f.name for f in fields(shipped) if getattr(shipped, f.name) != getattr(exact, f.name)]
            changed_seen += bool(changed)
            on_screen, ceiling = flags(shipped), saturated(shipped)
            for name in changed:
                assert name in ceiling, (model.__name__, kwargs, name)
                assert name in on_screen, (model.__name__, kwargs, name)
    assert changed_seen > 20, "the sweep should reach the ceiling often"


def test_the_reviewed_case_1024_nodes_of_1000_tflops():
    r = cluster_scale(nodes=1024, node_tflops=1000, compute_ms=100, comm_ms=100)
    assert (r.ideal_tflops, r.achieved_tflops) == (65_535, 32_767)  # truly 1,024,000 and 512,000
    assert saturated(r) == {"ideal_tflops": (), "achieved_tflops": ("ideal_tflops",)}
    note = flags(r)["achieved_tflops"]
    assert note.startswith("computed from peak") and "saturated" in note


def test_the_explorer_shows_the_flag_in_its_table_and_its_picture():
    view = explorer("cluster_scale")
    view.controls["nodes"].value = 1024
    view.controls["node_tflops"].value = 1000
    assert "32,767" in view.table.value
    assert "computed from peak" in view.table.value  # the note under the row
    assert "values computed from it are off too" in view.alt  # and over the picture, in short


def test_a_chain_names_the_value_that_saturated():
    from clustermath import checkpoint_cost, failure_recovery
    r = checkpoint_cost(footprint_gb=560, tier_gbps=0, interval_s=65_535)  # no tier: the write never ends
    assert r.overhead_pct == 100
    assert saturated(r) == {"write_s": (), "overhead_pct": ("write_s",), "affordable": ("write_s",),
                            "free_write_err": ("write_s",)}
    assert flags(r)["affordable"].startswith("decided on write time")
    r = failure_recovery(nodes=10_000, node_mtbf_h=8760, interval_min=1)  # unbounded failures a day
    assert r.lost_min_per_day == 32_767 and "lost_min_per_day" in flags(r)


@pytest.mark.parametrize("model", SATURATING, ids=lambda m: m.__name__)
def test_nothing_is_flagged_below_the_ceiling(model):
    from clustermath.peak.worked_tables import table
    t = table(model.__name__)
    for row in t.rows[:2]:  # the source's own stated rows are far from 65,535
        assert saturated(model(**t.inputs(row))) == {}
