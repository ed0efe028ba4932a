"""Unit tests for clustermath.validate: the one place argument checks are written.

Every model raises its ValueErrors through these functions, so the messages
read the same everywhere: the argument's name, the allowed range (with its
unit), the value received.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from clustermath import validate as v


# ---------------------------------------------------------------- real
@pytest.mark.parametrize("value", [0, 0.0, 1e-12, 5, np.float64(2.5), np.int64(3)])
def test_real_accepts_numbers_in_range_and_returns_float(value):
    out = v.real("save_s", value)
    assert out == float(value) and type(out) is float


def test_real_bounds_are_inclusive_by_default_and_exclusive_on_request():
    assert v.real("x", 0.0, low=0.0) == 0.0
    assert v.real("x", 1.0, high=1.0) == 1.0
    with pytest.raises(ValueError, match=r"^x must be a number in \(0, inf\), got 0"):
        v.real("x", 0.0, low_open=True)
    with pytest.raises(ValueError, match=r"^x must be a number in \[0, 1\), got 1"):
        v.real("x", 1.0, high=1.0, high_open=True)


def test_real_message_names_argument_range_unit_and_value():
    with pytest.raises(ValueError) as err:
        v.real("save_s", -5, unit="s")
    assert str(err.value) == "save_s must be a number in [0, inf) s, got -5"


@pytest.mark.parametrize("value", [math.nan, True, np.bool_(False), "3", None, 1 + 0j])
def test_real_rejects_nan_bools_and_non_numbers(value):
    with pytest.raises(ValueError, match=r"^x must be a number in "):
        v.real("x", value)


def test_real_infinity_only_when_allowed():
    with pytest.raises(ValueError, match=r"\[0, inf\)"):
        v.real("mtbf_s", math.inf)
    assert v.real("mtbf_s", math.inf, allow_inf=True) == math.inf


# ---------------------------------------------------------------- whole
def test_whole_accepts_integers_at_both_ends():
    assert v.whole("gpus", 1, low=1, high=8) == 1
    assert v.whole("gpus", 8, low=1, high=8) == 8
    assert type(v.whole("gpus", np.int32(4), low=1)) is int


@pytest.mark.parametrize("value", [0, 9, -1, 2.0, True, "4", None])
def test_whole_rejects_outside_range_floats_bools(value):
    with pytest.raises(ValueError, match=r"^gpus must be a whole number in 1\.\.8 GPUs, got "):
        v.whole("gpus", value, low=1, high=8, unit="GPUs")


def test_whole_thousands_separators_and_open_top():
    with pytest.raises(ValueError, match=r"^tp must be a whole number in 1\.\.1,048,576, got 0$"):
        v.whole("tp", 0, low=1, high=1 << 20)
    with pytest.raises(ValueError, match=r"^n must be a whole number in 0\.\.inf, got -1$"):
        v.whole("n", -1)


def test_whole_accepts_whole_floats_only_when_asked():
    assert v.whole("gpus", 4096.0, integral_only=False) == 4096
    for bad in (4096.5, math.inf, math.nan):
        with pytest.raises(ValueError):
            v.whole("gpus", bad, integral_only=False)


# ---------------------------------------------------------------- probability, ports, flags, choices
def test_probability_is_the_closed_unit_interval():
    assert v.probability("p", 0) == 0.0 and v.probability("p", 1) == 1.0
    for bad in (-1e-9, 1.0000001, math.nan):
        with pytest.raises(ValueError, match=r"^p must be a number in \[0, 1\], got "):
            v.probability("p", bad)


def test_port16_range_and_type():
    assert v.port16("nodes", 65535) == 65535
    with pytest.raises(ValueError, match=r"^nodes must be in 0\.\.65535, got 65536$"):
        v.port16("nodes", 65536)
    with pytest.raises(ValueError, match=r"^nodes must be an integer in 0\.\.65535, got 1\.0 \(float\)$"):
        v.port16("nodes", 1.0)


@pytest.mark.parametrize("value, want", [(True, True), (False, False), (1, True), (0, False), (np.bool_(True), True)])
def test_flag_accepts_bits(value, want):
    assert v.flag("broken", value) is want


@pytest.mark.parametrize("value", [2, -1, "yes", None, 0.0])
def test_flag_rejects_anything_else(value):
    with pytest.raises(ValueError, match=r"^broken must be True or False \(or 1 or 0\), got "):
        v.flag("broken", value)


def test_one_of_lists_the_choices():
    assert v.one_of("packing", "groups", ("groups", "ranks")) == "groups"
    with pytest.raises(ValueError, match=r"^packing must be one of \['groups', 'ranks'\], got 'x'$"):
        v.one_of("packing", "x", ("groups", "ranks"))
