"""Tests added to kill the mutants that chapter 3's tests let live (see tools/mutants/REPORT.md)."""
from __future__ import annotations

import pytest

from clustermath.placement import hops_crossing_formula, placement, step_traffic, tp_group_layout

BAD = "§"  # not a number, not an allowed word: every check rejects it

VALID = [
    (placement, dict(tp=1, pp=1, dp=1, domain_size=1, order="tp,pp,dp", packing="groups", strict=False)),
    (hops_crossing_formula, dict(pp=1, dp=1, groups_per_domain=1)),
    (tp_group_layout, dict(tp=1, pp=1, dp=1, domain_size=1)),
    (step_traffic, dict(tp=1, pp=1, dp=1, layers=1, hidden=1, tokens_per_step=1, microbatch_tokens=1,
                        params=1.0, act_bytes=2, grad_bytes=2)),
]


@pytest.mark.parametrize("function, valid", VALID, ids=[f.__name__ for f, _ in VALID])
def test_every_chapter3_error_names_its_argument(function, valid):
    """A ValueError names the input that is wrong, not another (kills mutated argument names)."""
    function(**valid)
    for name in valid:
        with pytest.raises(ValueError) as err:
            function(**{**valid, name: BAD})
        assert str(err.value).startswith(f"{name} must"), (name, str(err.value))


@pytest.mark.xfail(strict=False, reason="step_traffic does not check scatter_gather (no validate.flag): "
                   "any truthy value, a string included, is taken as True")
def test_step_traffic_rejects_a_scatter_gather_that_is_not_a_flag():
    with pytest.raises(ValueError, match="^scatter_gather must"):
        step_traffic(tp=1, pp=1, dp=1, layers=1, hidden=1, tokens_per_step=1, microbatch_tokens=1,
                     params=1.0, scatter_gather=BAD)
