"""Tests added to kill the mutants that chapter 2's tests let live (see tools/mutants/REPORT.md)."""
from __future__ import annotations

import pytest

from clustermath import (
    async_checkpoint,
    blast_radius,
    checkpoint_plan,
    daly_exact_interval,
    daly_interval,
    daly_lost,
    daly_wall_ratio,
    eject_or_keep,
    first_order_lost,
    goodput_budget,
    gpu_failure_rate,
    interruption_row,
    job_mtbf_s,
    straggler_tax,
    young_interval,
    young_lost,
)

BAD = "§"  # not a number: every check rejects it

VALID = [
    (gpu_failure_rate, dict(interruptions=1, gpus=1, days=1.0)),
    (job_mtbf_s, dict(rate_per_gpu_h=1.0, gpus=1)),
    (first_order_lost, dict(interval_s=1.0, save_s=1.0, mtbf_s=1.0)),
    (young_interval, dict(save_s=1.0, mtbf_s=1.0)),
    (young_lost, dict(save_s=1.0, mtbf_s=1.0)),
    (daly_interval, dict(save_s=1.0, mtbf_s=1.0)),
    (daly_wall_ratio, dict(interval_s=1.0, save_s=1.0, mtbf_s=1.0, restart_s=1.0)),
    (daly_lost, dict(interval_s=1.0, save_s=1.0, mtbf_s=1.0, restart_s=1.0)),
    (daly_exact_interval, dict(save_s=1.0, mtbf_s=1.0)),
    (interruption_row, dict(gpus=1, save_s=1.0, gpu_mtbf_h=1.0)),
    (checkpoint_plan, dict(save_s=1.0, gpus=1, gpu_mtbf_h=1.0)),
    (async_checkpoint, dict(persist_s=1.0, copy_s=1.0, mtbf_s=10.0)),
    (straggler_tax, dict(speed=1.0, gpus=1)),
    (eject_or_keep, dict(gpus=1, speed=1.0, diagnose_h=1.0, eject_min=1.0)),
    (goodput_budget, dict(gpus=1, gpu_mtbf_h=1.0, save_s=1.0, restart_s=1.0, interval_x=1.0,
                          straggler_speed=1.0)),
    (blast_radius, dict(job_gpus=1, domain_gpus=1, failed_gpus=1, replica_gpus=1)),
]


@pytest.mark.parametrize("function, valid", VALID, ids=[f.__name__ for f, _ in VALID])
def test_every_chapter2_error_names_its_argument(function, valid):
    """A ValueError names the input that is wrong, not another (kills mutated argument names)."""
    function(**valid)
    for name in valid:
        with pytest.raises(ValueError) as err:
            function(**{**valid, name: BAD})
        assert str(err.value).startswith(f"{name} must"), (name, str(err.value))
