"""Unit tests for clustermath's plumbing: ports (u16/flag/sat16), check, runner.

The ten models are tested in tests/test_ch1_*.py; this file pins the shared
contract they are built on.
"""
from __future__ import annotations

import copy
import dataclasses
import inspect
import re
from fractions import Fraction

import numpy as np
import pytest

import clustermath
from clustermath import MODELS, U16_MAX, CheckFailed, Tally, check, run, spec_of
from clustermath.check import fmt_value
from clustermath.peak.ports import WRAP_ERRATA, sat16
from clustermath.validate import flag, port16 as u16
from clustermath.runner import MAX_ROWS, ModelSpec

# ---------------------------------------------------------------- ports.u16


@pytest.mark.parametrize("value", [0, 1, 8, 65534, 65535])
def test_u16_accepts_the_16_bit_range(value):
    assert u16("nodes", value) == value


@pytest.mark.parametrize("value", [np.int64(6400), np.uint16(6400), np.int32(6400)])
def test_u16_accepts_numpy_integers_and_returns_a_python_int(value):
    out = u16("nodes", value)
    assert out == 6400 and type(out) is int


@pytest.mark.parametrize("value", [-1, 65536, 10**9, -(10**9)])
def test_u16_rejects_out_of_range_naming_port_and_range(value):
    with pytest.raises(ValueError, match=rf"^nodes must be in 0\.\.65535, got {value}$"):
        u16("nodes", value)


@pytest.mark.parametrize(
    "value", [True, False, 1.0, 8.5, float("nan"), "8", None, Fraction(8, 1), [8]],
    ids=repr,
)
def test_u16_rejects_non_integers_and_bools(value):
    with pytest.raises(ValueError, match=r"^nodes must be an integer in 0\.\.65535, got "):
        u16("nodes", value)


def test_u16_low_bound():
    assert u16("stages", 1, low=1) == 1
    with pytest.raises(ValueError, match=r"^stages must be in 1\.\.65535, got 0$"):
        u16("stages", 0, low=1)
    with pytest.raises(ValueError, match=r"^stages must be an integer in 1\.\.65535"):
        u16("stages", 1.0, low=1)


# ---------------------------------------------------------------- ports.flag


@pytest.mark.parametrize("value, expected", [(True, True), (False, False), (1, True), (0, False)])
def test_flag_accepts_bools_and_0_1(value, expected):
    out = flag("recompute", value)
    assert out is expected


@pytest.mark.parametrize("value", [2, -1, 1.0, 0.0, "True", "yes", None, [True]], ids=repr)
def test_flag_rejects_anything_else_naming_the_port(value):
    with pytest.raises(ValueError, match=r"^recompute must be True or False \(or 1 or 0\), got "):
        flag("recompute", value)


# ---------------------------------------------------------------- ports.sat16


@pytest.mark.parametrize(
    "value, expected",
    [(0, 0), (1, 1), (65534, 65534), (65535, 65535), (65536, 65535), (2**32, 65535), (10**30, 65535)],
)
def test_sat16_saturates_at_65535(value, expected):
    assert sat16(value) == expected


def test_u16_max_is_the_16_bit_ceiling():
    assert U16_MAX == 65535 == 2**16 - 1


def test_wrap_errata_name_existing_models():
    names = {m.__name__ for m in MODELS}
    assert set(WRAP_ERRATA) == {
        "cluster_scale.step_ms",
        "collective_cost.moved_gb",
        "pipeline_bubble.denom",
        "activation_memory.act_mb",
    }
    for key, text in WRAP_ERRATA.items():
        model, port = key.split(".")
        assert model in names
        assert "wrap" in text and ("saturat" in text or "exact" in text)
        # Each erratum is demonstrated case by case in tests/test_ch1_rtl_reference.py.


# ---------------------------------------------------------------- check


def test_check_passes_prints_one_line_and_returns_nothing(capsys):
    assert check("peak", 6400, 6400, unit="TFLOPS", kind="quoted", source="source 000") is None
    assert capsys.readouterr().out == "✓ peak: 6,400 TFLOPS  [quoted from source 000: 6,400 TFLOPS]\n"


def test_check_percent_unit_has_no_space(capsys):
    check("efficiency", 75, 75, unit="%", kind="derived")
    assert capsys.readouterr().out == "✓ efficiency: 75%  [derived by the book: 75%]\n"
    with pytest.raises(CheckFailed, match=r"^efficiency: computed 74%, but derived by the book gives 75%$"):
        check("efficiency", 74, 75, unit="%", kind="derived")


def test_check_failure_names_label_computed_and_stated():
    with pytest.raises(CheckFailed, match=r"^peak: computed 6,399 TFLOPS, but quoted from source 000 gives "
                                          r"6,400 TFLOPS$"):
        check("peak", 6399, 6400, unit="TFLOPS", kind="quoted", source="source 000")


def test_check_has_no_undeclared_kind():
    """Every check says where its expected value comes from: there is no default to fall back on."""
    with pytest.raises(TypeError, match="kind"):
        check("x", 1, 1, source="source 000")  # type: ignore[call-arg]


@pytest.mark.parametrize(
    "kind, source, bracket",
    [
        ("quoted", "source 002", "quoted from source 002"),
        ("rebuilt", "source 000's table", "rebuilt from source 000's table"),
        ("derived", "", "derived by the book"),
        ("derived", "24 h × 0.1 ÷ 10 min", "derived, 24 h × 0.1 ÷ 10 min"),
        ("algebra", "", "algebra"),
        ("algebra", "√(2δM)", "algebra, √(2δM)"),
    ],
)
def test_check_kind_sets_the_bracket(kind, source, bracket, capsys):
    check("x", 2, 2, kind=kind, source=source)
    assert capsys.readouterr().out == f"✓ x: 2  [{bracket}: 2]\n"
    with pytest.raises(CheckFailed, match=rf"^x: computed 3, but {re.escape(bracket)} gives 2$"):
        check("x", 3, 2, kind=kind, source=source)


@pytest.mark.parametrize("kind", ["quoted", "rebuilt"])
def test_check_quoted_and_rebuilt_name_their_source(kind):
    with pytest.raises(ValueError, match=r"^source must name where"):
        check("x", 1, 1, kind=kind)


def test_check_rejects_an_unknown_kind():
    with pytest.raises(ValueError, match=r"^kind must be one of quoted, rebuilt, derived, algebra, got 'source'$"):
        check("x", 1, 1, kind="source", source="source 000")


def test_check_failed_is_an_assertion_error():
    assert issubclass(CheckFailed, AssertionError)


@pytest.mark.parametrize(
    "value, expected, ok",
    [
        (True, True, True),
        (False, False, True),
        (1, True, False),  # a bool is only equal to a bool
        (True, 1, False),
        (0, False, False),
        ("ok", "ok", True),
        ("ok", "OK", False),
        (2.0, 2, True),  # exact comparison of numbers is by value
        (0.1 + 0.2, 0.3, False),  # ...and exact means exact
    ],
    ids=repr,
)
def test_check_exact_comparison(value, expected, ok, capsys):
    if ok:
        check("x", value, expected, kind="algebra")
    else:
        with pytest.raises(CheckFailed):
            check("x", value, expected, kind="algebra")


def test_check_tolerances(capsys):
    q = dict(kind="quoted", source="source 000")
    check("abs", 1.04, 1.0, tol=0.05, **q)
    assert capsys.readouterr().out == "✓ abs: 1.04  [quoted from source 000: about 1]\n"
    check("rel", 105, 100, rel=0.05, **q)
    assert capsys.readouterr().out == "✓ rel: 105  [quoted from source 000: about 100]\n"
    check("abs wins", 1.5, 1.0, tol=0.5, rel=0.01, **q)  # max(tol, rel*|expected|)
    with pytest.raises(CheckFailed, match=r"but quoted from source 000 gives about 100$"):
        check("rel", 106, 100, rel=0.05, **q)
    with pytest.raises(CheckFailed):
        check("abs", 1.06, 1.0, tol=0.05, **q)


@pytest.mark.parametrize("kw", [{"tol": -0.1}, {"rel": -1e-9}])
def test_check_rejects_negative_tolerances(kw):
    with pytest.raises(ValueError, match=r"^tol and rel must be >= 0"):
        check("x", 1, 1, kind="algebra", **kw)


def test_check_fmt(capsys):
    check("ratio", 0.5, 0.5, fmt=".1%", kind="algebra", source="1/2")
    assert capsys.readouterr().out == "✓ ratio: 50.0%  [algebra, 1/2: 50.0%]\n"


@pytest.mark.parametrize(
    "value, fmt, expected",
    [
        (True, None, "yes"),
        (False, None, "no"),
        (6400, None, "6,400"),
        (np.int64(10240), None, "10,240"),
        (0, None, "0"),
        (0.123456, None, "0.1235"),
        (12345.678, None, "1.235e+04"),
        (87.5, ".0f", "88"),
        ("n/a", None, "n/a"),
    ],
    ids=repr,
)
def test_fmt_value(value, fmt, expected):
    assert fmt_value(value, fmt) == expected


# ---------------------------------------------------------------- runner.spec_of

# The source's counter names and broken-build parameters, per module (sections 5-14).
SOURCE_SPECS = [
    ("cluster_scale", "ignore_comm", "n_measures", "n_poor", "5"),
    ("collective_cost", "ignore_topology", "n_collectives", "n_over_budget", "6"),
    ("pipeline_bubble", "ignore_bubble", "n_schedules", "n_stalled", "7"),
    ("checkpoint_cost", "ignore_checkpoint", "n_checkpoints", "n_costly", "8"),
    ("failure_recovery", "ignore_failures", "n_assessments", "n_lossy", "9"),
    ("straggler_step", "assume_uniform", "n_steps", "n_wasteful", "10"),
    ("activation_memory", "ignore_activations", "n_sizings", "n_unfit", "11"),
    ("fabric_bisection", "assume_full", "n_assessments", "n_short", "12"),
    ("cluster_economics", "ignore_efficiency", "n_pricings", "n_costly", "13"),
    ("training_cluster_model", "scale_only", "n_eval", "n_scales", "14"),
]


def test_models_are_in_source_order():
    assert [m.__name__ for m in MODELS] == [row[0] for row in SOURCE_SPECS]


@pytest.mark.parametrize("name, broken_flag, total, flagged, section", SOURCE_SPECS, ids=[r[0] for r in SOURCE_SPECS])
def test_spec_of_matches_the_source(name, broken_flag, total, flagged, section):
    model = getattr(clustermath, name)
    spec = spec_of(model)
    assert spec is spec_of(name)
    assert (spec.name, spec.broken_flag, spec.total, spec.flagged, spec.section) == (
        name, broken_flag, total, flagged, section,
    )
    params = list(inspect.signature(model).parameters)
    # Every port is keyword-only; the inputs are the ports other than the build flag,
    # and the build flag defaults to the correct build.
    assert all(p.kind is p.KEYWORD_ONLY for p in inspect.signature(model).parameters.values())
    assert params[-1] == broken_flag
    assert inspect.signature(model).parameters[broken_flag].default is False
    assert set(spec.inputs) == set(params) - {broken_flag}
    result_type = inspect.signature(model).return_annotation
    fields = tuple(f.name for f in dataclasses.fields(getattr(clustermath, result_type)))
    assert spec.outputs == fields


def test_spec_of_unknown_model():
    with pytest.raises(ValueError, match=r"^model must be one of \[.*'cluster_scale'.*\], got 'nope'$"):
        spec_of("nope")
    with pytest.raises(ValueError, match=r"got 'fmt_value'"):
        spec_of(fmt_value)


def test_model_spec_is_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec_of("cluster_scale").total = "x"  # type: ignore[misc]
    assert isinstance(spec_of("cluster_scale"), ModelSpec)


# ---------------------------------------------------------------- runner.run / Tally

SCALE_ROWS = [
    dict(nodes=64, node_tflops=100, compute_ms=100, comm_ms=100),  # 50%: poor
    dict(nodes=64, node_tflops=100, compute_ms=300, comm_ms=100),  # 75%: scales
    dict(nodes=64, node_tflops=100, compute_ms=0, comm_ms=100),  # 0%: poor in both builds
]


def test_run_counts_as_the_source_does():
    tally = run(clustermath.cluster_scale, SCALE_ROWS)
    assert isinstance(tally, Tally)
    assert tally.model == "cluster_scale"
    assert tally.counters == {"n_measures": 3, "n_poor": 2}
    assert tally.n_measures == tally["n_measures"] == 3
    assert tally.n_poor == tally["n_poor"] == 2
    assert [r.efficiency_pct for r in tally.results] == [50, 75, 0]
    assert tally.results == tuple(clustermath.cluster_scale(**r) for r in SCALE_ROWS)


def test_run_selects_the_broken_build_by_keyword():
    tally = run(clustermath.cluster_scale, SCALE_ROWS, ignore_comm=True)
    assert tally.counters == {"n_measures": 3, "n_poor": 1}
    assert [r.comm_ignored_err for r in tally.results] == [True, True, True]


def test_run_counts_passes_for_the_assembled_model():
    ok = dict(nodes_added=True, comm_costed=True, bubble_bounded=True, checkpoint_affordable=True,
              stragglers_bounded=True, bisection_sufficient=True)
    rows = [ok, {**ok, "comm_costed": False}]
    assert run(clustermath.training_cluster_model, rows).counters == {"n_eval": 2, "n_scales": 1}
    assert run(clustermath.training_cluster_model, rows, scale_only=True).n_scales == 2


def test_run_accepts_any_iterable_and_empty():
    assert run(clustermath.cluster_scale, (r for r in SCALE_ROWS)).n_measures == 3
    empty = run(clustermath.straggler_step, [])
    assert empty.results == () and empty.counters == {"n_steps": 0, "n_wasteful": 0}


def test_run_holds_at_most_255_rows():
    row = dict(mean_ms=200, slowest_ms=260)
    assert MAX_ROWS == 255
    assert run(clustermath.straggler_step, [row] * 255).counters == {"n_steps": 255, "n_wasteful": 255}
    with pytest.raises(ValueError, match=r"^rows must number 0\.\.255 \(the source's counters are 8 bits\), got 256$"):
        run(clustermath.straggler_step, [row] * 256)


def test_run_propagates_a_bad_row():
    with pytest.raises(ValueError, match=r"^slowest_ms must be in mean_ms\.\.65535"):
        run(clustermath.straggler_step, [dict(mean_ms=200, slowest_ms=260), dict(mean_ms=200, slowest_ms=100)])
    with pytest.raises(TypeError):
        run(clustermath.straggler_step, [dict(mean_ms=200)])  # a missing port


def test_run_rejects_an_unregistered_model():
    with pytest.raises(ValueError, match=r"^model must be one of"):
        run(lambda **kw: None, [])


def test_tally_unknown_counter():
    tally = run(clustermath.cluster_scale, SCALE_ROWS)
    with pytest.raises(AttributeError):
        tally.n_stalled  # noqa: B018
    with pytest.raises(KeyError):
        tally["n_stalled"]
    assert not hasattr(tally, "n_scales")


def test_tally_is_frozen_and_copyable():
    tally = run(clustermath.cluster_scale, SCALE_ROWS)
    with pytest.raises(dataclasses.FrozenInstanceError):
        tally.model = "x"  # type: ignore[misc]
    # __getattr__ must not recurse while copy builds an instance without fields.
    assert copy.copy(tally) == tally
    assert copy.deepcopy(tally) == tally
