"""Chapter 1's peak-to-delivered budget: one rule (exact factors) for every term."""
from fractions import Fraction

import pytest

from clustermath.peak.budget import peak_to_delivered


def test_worked_budget_is_the_exact_product():
    terms = peak_to_delivered()
    assert [t.name for t in terms][0] == "peak (the purchase order)"
    exact = Fraction(6400) * Fraction(1, 2) * Fraction(32, 39) * Fraction(10, 13) * Fraction(61, 75)
    assert terms[-1].remaining_tflops == pytest.approx(float(exact), rel=1e-12)
    assert round(terms[-1].remaining_tflops) == 1643          # not 1,675 (truncated 0.83 and 0.82)
    assert [round(t.keeps, 4) for t in terms] == [1.0, 0.5, 0.8205, 0.7692, 0.8133]


def test_naive_model_is_right_when_nothing_is_lost():
    terms = peak_to_delivered(comm_ms=0, stages=1, slowest_ms=200, footprint_gb=0)
    assert [t.keeps for t in terms] == [1.0, 1.0, 1.0, 1.0, 1.0]
    assert terms[-1].remaining_tflops == 6400


def test_degenerate_inputs():
    assert peak_to_delivered(nodes=0)[-1].remaining_tflops == 0
    assert peak_to_delivered(compute_ms=0, comm_ms=0)[1].keeps == 0.0
    assert peak_to_delivered(microbatches=0, stages=1)[2].keeps == 1.0
    # a checkpoint that takes exactly the whole interval keeps nothing (inclusive bound)
    whole = peak_to_delivered(footprint_gb=3000, tier_gbps=80, interval_s=300)
    assert whole[-1].keeps == 0.0


def test_impossible_inputs_raise():
    with pytest.raises(ValueError, match="checkpoint overhead"):
        peak_to_delivered(footprint_gb=3010, tier_gbps=80, interval_s=300)
    with pytest.raises(ValueError, match="checkpoint overhead"):
        peak_to_delivered(tier_gbps=0)
    with pytest.raises(ValueError):
        peak_to_delivered(stages=0)
    with pytest.raises(ValueError):
        peak_to_delivered(mean_ms=300, slowest_ms=200)
