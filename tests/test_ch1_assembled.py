"""RTL 10 (source 000, section 14): the assembled training-cluster model, in both builds.

As in the source's section 16: each property is switched off on its own, and
every mask is compared as a whole six-bit number.
"""
from __future__ import annotations

import pytest

from clustermath import PROPERTIES, failed_properties, training_cluster_model

NAMES = tuple(name for name, _ in PROPERTIES)
ALL = dict.fromkeys(NAMES, True)


def test_property_order_is_the_source_bit_order():
    assert NAMES == (
        "nodes_added", "comm_costed", "bubble_bounded",
        "checkpoint_affordable", "stragglers_bounded", "bisection_sufficient",
    )
    assert all(isinstance(meaning, str) and meaning for _, meaning in PROPERTIES)


def test_everything_holds():
    for scale_only in (False, True):
        r = training_cluster_model(**ALL, scale_only=scale_only)
        assert (r.scales, r.fail_mask, r.false_scale_err) == (True, 0b000000, False)


# (property driven false alone, exact mask, correct scales, scale-only scales, scale-only false claim)
ALONE = [
    ("nodes_added", 0b000001, False, False, False),
    ("comm_costed", 0b000010, False, True, True),
    ("bubble_bounded", 0b000100, False, True, True),
    ("checkpoint_affordable", 0b001000, False, True, True),
    ("stragglers_bounded", 0b010000, False, True, True),
    ("bisection_sufficient", 0b100000, False, True, True),
]


@pytest.mark.parametrize("prop, mask, scales, scales_broken, err_broken", ALONE, ids=[a[0] for a in ALONE])
def test_each_property_false_alone(prop, mask, scales, scales_broken, err_broken):
    inputs = {**ALL, prop: False}
    correct = training_cluster_model(**inputs)
    broken = training_cluster_model(**inputs, scale_only=True)
    assert (correct.fail_mask, correct.scales, correct.false_scale_err) == (mask, scales, False)
    assert (broken.fail_mask, broken.scales, broken.false_scale_err) == (mask, scales_broken, err_broken)
    assert failed_properties(mask) == (prop,)


@pytest.mark.parametrize("bits", range(64), ids=lambda b: f"{b:06b}")
def test_every_mask_both_builds(bits):
    """All 64 combinations: the mask is exact and each build's rule holds."""
    inputs = {name: not (bits >> i & 1) for i, name in enumerate(NAMES)}
    correct = training_cluster_model(**inputs)
    broken = training_cluster_model(**inputs, scale_only=True)
    assert correct.fail_mask == broken.fail_mask == bits
    assert correct.scales is (bits == 0)
    assert correct.false_scale_err is False  # the correct build never claims falsely
    assert broken.scales is inputs["nodes_added"]
    assert broken.false_scale_err is (inputs["nodes_added"] and bits != 0)
    assert failed_properties(bits) == tuple(n for i, n in enumerate(NAMES) if bits >> i & 1)


def test_flags_accept_0_and_1():
    as_ints = {name: 1 for name in NAMES}
    assert training_cluster_model(**as_ints, scale_only=0) == training_cluster_model(**ALL)
    r = training_cluster_model(**{**as_ints, "comm_costed": 0}, scale_only=1)
    assert (r.scales, r.fail_mask, r.false_scale_err) == (True, 0b10, True)


def test_failed_properties_examples():
    assert failed_properties(0) == ()
    assert failed_properties(0b111111) == NAMES
    assert failed_properties(0b110100) == ("bubble_bounded", "stragglers_bounded", "bisection_sufficient")


@pytest.mark.parametrize("bad", [-1, 64, 255, True, False, 1.0, "1", None], ids=repr)
def test_failed_properties_rejects_non_masks(bad):
    with pytest.raises(ValueError, match=r"^fail_mask must be a whole number in 0\.\.63, got "):
        failed_properties(bad)

