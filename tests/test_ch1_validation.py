"""Bad input to every port of every chapter-1 model raises ValueError naming the port.

Count ports are 16-bit unsigned (0..65535; ``stages`` 1..65535); flag ports
(``recompute``, every build flag and the assembled model's six properties) take
True/False or 1/0. Plus the model-specific impossibilities: stages = 0,
slowest_ms < mean_ms, efficiency_pct > 100.
"""
from __future__ import annotations

import pytest

from clustermath import MODELS, spec_of

# A valid call of each model (the source's running example where it has one).
VALID = {
    "cluster_scale": dict(nodes=64, node_tflops=100, compute_ms=300, comm_ms=100),
    "collective_cost": dict(bytes_gb=8, nodes=8, fabric_gbps=800, budget_ms=100),
    "pipeline_bubble": dict(stages=8, microbatches=32),
    "checkpoint_cost": dict(footprint_gb=560, tier_gbps=80, interval_s=300),
    "failure_recovery": dict(nodes=1000, node_mtbf_h=8760, interval_min=60),
    "straggler_step": dict(mean_ms=200, slowest_ms=260),
    "activation_memory": dict(layers=80, batch=8, act_per_layer_mb=16, hbm_mb=8192, recompute=False),
    "fabric_bisection": dict(nodes=16, link_gbps=800, oversub_x=4, demand_gbps=1600),
    "cluster_economics": dict(nodes=64, node_cost=100, node_tflops=100, efficiency_pct=50),
    "training_cluster_model": dict(nodes_added=True, comm_costed=True, bubble_bounded=True,
                                   checkpoint_affordable=True, stragglers_bounded=True,
                                   bisection_sufficient=True),
}
LOW = {"stages": 1}
HIGH = {"efficiency_pct": 100}
FLAG_PORTS = {"recompute"} | {spec_of(m).broken_flag for m in MODELS} | set(VALID["training_cluster_model"])

BAD_COUNTS = [-1, 65536, 1.5, 8.0, "8", None, True, False]
BAD_FLAGS = [2, -1, 0.5, 1.0, "yes", "True", None]


def ports():
    for model in MODELS:
        spec = spec_of(model)
        for port in (*spec.inputs, spec.broken_flag):
            yield model, port


def test_valid_calls_cover_every_input_port():
    for model in MODELS:
        assert set(VALID[model.__name__]) == set(spec_of(model).inputs)
        for broken in (False, True, 0, 1):
            model(**VALID[model.__name__], **{spec_of(model).broken_flag: broken})


COUNT_CASES = [
    pytest.param(model, port, bad, id=f"{model.__name__}.{port}={bad!r}")
    for model, port in ports() if port not in FLAG_PORTS
    for bad in BAD_COUNTS
]
FLAG_CASES = [
    pytest.param(model, port, bad, id=f"{model.__name__}.{port}={bad!r}")
    for model, port in ports() if port in FLAG_PORTS
    for bad in BAD_FLAGS
]


@pytest.mark.parametrize("model, port, bad", COUNT_CASES)
def test_a_count_port_rejects_bad_values(model, port, bad):
    low, high = LOW.get(port, 0), HIGH.get(port, 65535)
    with pytest.raises(ValueError, match=rf"^{port} must be (an integer )?in {low}\.\.{high}, got "):
        model(**{**VALID[model.__name__], port: bad})


@pytest.mark.parametrize("model, port, bad", FLAG_CASES)
def test_a_flag_port_rejects_bad_values(model, port, bad):
    with pytest.raises(ValueError, match=rf"^{port} must be True or False \(or 1 or 0\), got "):
        model(**{**VALID[model.__name__], port: bad})


def test_every_port_is_covered():
    n_ports = sum(1 for _ in ports())
    assert n_ports == 47  # 30 count ports, 17 flag ports
    assert len(COUNT_CASES) + len(FLAG_CASES) == (n_ports - len(FLAG_PORTS)) * len(BAD_COUNTS) + len(FLAG_PORTS) * len(BAD_FLAGS)


EXTREMES = [
    pytest.param(model, port, value, id=f"{model.__name__}.{port}={value}")
    for model, port in ports() if port not in FLAG_PORTS
    for value in (LOW.get(port, 0), 65535)
    # These three combinations are impossible inputs, tested below.
    if (model.__name__, port, value) not in {
        ("straggler_step", "mean_ms", 65535),
        ("straggler_step", "slowest_ms", 0),
        ("cluster_economics", "efficiency_pct", 65535),
    }
]


@pytest.mark.parametrize("model, port, value", EXTREMES)
@pytest.mark.parametrize("broken", [False, True], ids=["correct", "broken"])
def test_a_count_port_accepts_its_extremes_and_outputs_stay_16_bit(model, port, value, broken):
    result = model(**{**VALID[model.__name__], port: value}, **{spec_of(model).broken_flag: broken})
    for name in spec_of(model).outputs:
        out = getattr(result, name)
        assert type(out) is bool or (type(out) is int and 0 <= out <= 65535)


# ---------------------------------------------------------------- impossible inputs


def test_zero_stages_is_not_a_pipeline():
    from clustermath import pipeline_bubble

    for broken in (False, True):
        with pytest.raises(ValueError, match=r"^stages must be in 1\.\.65535, got 0$"):
            pipeline_bubble(stages=0, microbatches=8, ignore_bubble=broken)


@pytest.mark.parametrize("mean_ms, slowest_ms", [(200, 199), (200, 0), (1, 0), (65535, 65534)])
@pytest.mark.parametrize("broken", [False, True], ids=["correct", "broken"])
def test_the_slowest_rank_cannot_beat_the_mean(mean_ms, slowest_ms, broken):
    from clustermath import straggler_step

    with pytest.raises(ValueError, match=rf"^slowest_ms must be in mean_ms\.\.65535 = {mean_ms}\.\.65535 .*got {slowest_ms}$"):
        straggler_step(mean_ms=mean_ms, slowest_ms=slowest_ms, assume_uniform=broken)


@pytest.mark.parametrize("efficiency_pct", [101, 200, 65535])
@pytest.mark.parametrize("broken", [False, True], ids=["correct", "broken"])
def test_no_cluster_beats_its_peak(efficiency_pct, broken):
    from clustermath import cluster_economics

    with pytest.raises(ValueError, match=rf"^efficiency_pct must be in 0\.\.100, got {efficiency_pct}$"):
        cluster_economics(nodes=64, node_cost=100, node_tflops=100, efficiency_pct=efficiency_pct,
                          ignore_efficiency=broken)
    # 100 itself is allowed.
    cluster_economics(nodes=64, node_cost=100, node_tflops=100, efficiency_pct=100, ignore_efficiency=broken)


def test_missing_and_unknown_ports_are_type_errors():
    from clustermath import cluster_scale

    with pytest.raises(TypeError):
        cluster_scale(nodes=64, node_tflops=100, compute_ms=300)
    with pytest.raises(TypeError):
        cluster_scale(64, 100, 300, 100)  # keyword-only
    with pytest.raises(TypeError):
        cluster_scale(**VALID["cluster_scale"], measure=True)
