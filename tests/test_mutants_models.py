"""Tests added to kill the mutants that chapter 1's tests let live (see tools/mutants/REPORT.md).

Mutation testing (``make mutants``) changes one thing in a model at a time
(an operator, a constant, a string) and reruns the tests; a change no test
notices is a wrong model the suite would let through. Each test here kills
such survivors in chapter 1's models, its compositions and the shared
plumbing (``validate``, ``check``, ``runner``, ``ports``).
"""
from __future__ import annotations

import inspect

import pytest

from clustermath import MODELS, bubble_fraction, ring_factor, spec_of

BAD = "§"  # not a number, not a flag, not an allowed word: every check rejects it


def _valid(model):
    """Inputs every chapter-1 model accepts: 1 for each port (a flag takes 1 as True)."""
    spec = spec_of(model)
    return {name: 1 for name in spec.inputs}


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_every_chapter1_error_names_its_argument(model):
    """A ValueError names the input that is wrong, not another (kills mutated argument names)."""
    spec = spec_of(model)
    for name in [*spec.inputs, spec.broken_flag]:
        kwargs = {**_valid(model), name: BAD}
        with pytest.raises(ValueError) as err:
            model(**kwargs)
        assert str(err.value).startswith(f"{name} must"), (name, str(err.value))


@pytest.mark.parametrize("function, arguments", [
    (bubble_fraction, ("stages", "microbatches")),
    (ring_factor, ("nodes",)),
])
def test_exact_helpers_name_their_arguments(function, arguments):
    for name in arguments:
        kwargs = {a: 1 for a in arguments} | {name: BAD}
        with pytest.raises(ValueError) as err:
            function(**kwargs)
        assert str(err.value).startswith(f"{name} must"), (name, str(err.value))
    assert list(inspect.signature(function).parameters) == list(arguments)


# -- every port's range, at both ends and just outside ---------------------------------------

RANGES = {("pipeline_bubble", "stages"): (1, 65535), ("cluster_economics", "efficiency_pct"): (0, 100),
          ("straggler_step", "slowest_ms"): (1, 65535)}  # the slowest rank is never faster than mean_ms = 1


def _ports(model):
    spec = spec_of(model)
    flags = {"recompute"} | {n for n in spec.inputs if model.__name__ == "training_cluster_model"}
    return [n for n in spec.inputs if n not in flags]


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_every_port_accepts_its_ends_and_rejects_one_past(model):
    """Each 16-bit port takes low and high and refuses low-1 and high+1 (kills mutated bounds)."""
    for name in _ports(model):
        low, high = RANGES.get((model.__name__, name), (0, 65535))
        base = {**_valid(model), "slowest_ms": 65535} if model.__name__ == "straggler_step" else _valid(model)
        base = {k: v for k, v in base.items() if k in spec_of(model).inputs}
        for ok in (low, high):
            model(**{**base, name: ok})
        for bad in (low - 1, high + 1):
            with pytest.raises(ValueError) as err:
                model(**{**base, name: bad})
            assert str(err.value).startswith(f"{name} must"), (name, bad, str(err.value))


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_every_flag_takes_true_false_one_and_zero_only(model):
    spec = spec_of(model)
    flags = [spec.broken_flag] + [n for n in spec.inputs if n not in _ports(model)]
    for name in flags:
        for ok in (True, False, 1, 0):
            model(**{**_valid(model), name: ok})
        for bad in (2, -1, 1.0):
            with pytest.raises(ValueError, match=f"^{name} must be True or False"):
                model(**{**_valid(model), name: bad})


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_the_correct_build_is_the_default(model):
    """Leaving out the broken-build flag gives the correct build (kills a mutated default)."""
    spec = spec_of(model)
    inputs = {k: (8 if k in _ports(model) else v) for k, v in _valid(model).items()}
    if model.__name__ == "straggler_step":
        inputs["slowest_ms"] = 16
    if model.__name__ == "training_cluster_model":
        inputs = {k: k == "nodes_added" for k in inputs}
    assert model(**inputs) == model(**inputs, **{spec.broken_flag: False})
    assert model(**inputs) != model(**inputs, **{spec.broken_flag: True}), "pick inputs where the builds differ"
    assert inspect.signature(model).parameters[spec.broken_flag].default is False


# -- the plumbing: check, runner, ports, validate ----------------------------------------------

def test_a_tolerance_is_absolute_not_relative_to_a_large_value():
    from clustermath import CheckFailed, check
    with pytest.raises(CheckFailed):
        check("a big number", 1e12 + 10, 1e12, tol=1, kind="algebra")  # math.isclose's default rel_tol would pass it


def test_a_missing_counter_names_itself():
    from clustermath import run
    from clustermath import cluster_scale
    tally = run(cluster_scale, [dict(nodes=1, node_tflops=1, compute_ms=1, comm_ms=1)])
    with pytest.raises(AttributeError, match="^n_nothing$"):
        tally.n_nothing


def test_a_port_error_names_the_type_received():
    from clustermath.validate import port16
    with pytest.raises(ValueError, match=r"^nodes must be an integer in 0\.\.65535, got '8' \(str\)$"):
        port16("nodes", "8")


def test_numpy_booleans_are_flags():
    import numpy as np

    from clustermath.validate import flag
    assert flag("f", np.True_) is True and flag("f", np.False_) is False


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_every_model_is_registered_with_its_whole_spec(model):
    """The ``@counted`` registry holds every field (a mutant here runs at import, see REPORT.md)."""
    from dataclasses import fields
    spec = spec_of(model)
    assert spec.name == model.__name__
    assert all(getattr(spec, f.name) is not None for f in fields(spec))
    assert spec.section.isdigit() and spec.total.startswith("n_") and spec.flagged.startswith("n_")
    assert spec.broken_flag in inspect.signature(model).parameters
    assert set(spec.inputs) <= set(inspect.signature(model).parameters)
    result = model(**{**_valid(model), **({"slowest_ms": 1} if model.__name__ == "straggler_step" else {})})
    assert spec.outputs == tuple(f.name for f in fields(result))
    assert spec.counts(result) in (True, False)


def test_validate_real_messages_carry_range_unit_and_type():
    import math as _math

    from clustermath.validate import real
    with pytest.raises(ValueError, match=r"^x must be a number in \[0, 1e\+06\] s, got -1$"):
        real("x", -1, high=1e6, unit="s")
    with pytest.raises(ValueError, match=r"^x must be a number in \[0, inf\), got -1$"):
        real("x", -1)
    with pytest.raises(ValueError, match=r"^x must be a number in \[0, inf\], got -1$"):
        real("x", -1, allow_inf=True)
    with pytest.raises(ValueError, match=r"^x must be a number in \[0, inf\), got True \(bool\)$"):
        real("x", True)
    with pytest.raises(ValueError, match=r"^x must be a number in \[0, inf\), got '1' \(str\)$"):
        real("x", "1")
    with pytest.raises(ValueError, match=r"^x must be a number in \[0, inf\), got -1$"):
        real("x", -1, unit="")
    assert real("x", 2) == 2.0 and real("x", _math.inf, allow_inf=True) == _math.inf


def test_validate_probability():
    from clustermath.validate import probability
    assert probability("p", 0) == 0.0 and probability("p", 1) == 1.0 and probability("p", 0.25) == 0.25
    for bad in (-0.01, 1.01, None, "0.5"):
        with pytest.raises(ValueError, match=r"^p must be a number in \[0, 1\]"):
            probability("p", bad)
    with pytest.raises(ValueError, match=r"^p must be a number in \(0, 1\]"):
        probability("p", 0, low_open=True)
    with pytest.raises(ValueError, match=r"^p must be a number in \[0, 1\)"):
        probability("p", 1, high_open=True)
    assert probability("p", 1, low_open=True) == 1.0 and probability("p", 0, high_open=True) == 0.0


def test_validate_one_of():
    from clustermath.validate import one_of
    assert one_of("order", "a", ("a", "b")) == "a"
    with pytest.raises(ValueError, match=r"^order must be one of \['a', 'b'\], got 'c'$"):
        one_of("order", "c", ("a", "b"))


def test_validate_whole_message_carries_the_unit():
    from clustermath.validate import whole
    with pytest.raises(ValueError, match=r"^n must be a whole number in 1\.\.8 GPUs, got 9$"):
        whole("n", 9, low=1, high=8, unit="GPUs")
