"""Chapter 2's goodput models: one straggler, ejecting it, the goodput budget, the blast radius."""
from __future__ import annotations

import math

import pytest

from clustermath.reliability.goodput import blast_radius, eject_or_keep, goodput_budget, straggler_tax
from clustermath.reliability.interruptions import daly_lost, young_interval

GPU_MTBF_H = 16_384 * 54 * 24 / 419


def test_straggler_at_90_percent_at_any_scale():
    small, large = straggler_tax(speed=0.9, gpus=100), straggler_tax(speed=0.9, gpus=16_384)
    for t in (small, large):
        assert t.step_time_factor == pytest.approx(1 / 0.9)
        assert t.step_longer_pct == pytest.approx(11.111, abs=1e-3)
        assert t.throughput_lost_pct == pytest.approx(10.0)
    assert large.gpu_hours_lost_per_day == pytest.approx(16_384 * 24 * 0.1)
    healthy = straggler_tax(speed=1.0, gpus=8)
    assert healthy.step_longer_pct == 0 and healthy.gpu_hours_lost_per_day == 0


def test_eject_or_keep_break_even_is_independent_of_scale():
    for gpus in (64, 16_384):
        d = eject_or_keep(gpus=gpus, speed=0.9, diagnose_h=24, eject_min=10)
        assert d.break_even_h == pytest.approx(10 / 60 / 0.1)
        assert d.eject_wins and d.keep_gpu_h / d.eject_gpu_h == pytest.approx(14.4)
        even = eject_or_keep(gpus=gpus, speed=0.9, diagnose_h=d.break_even_h, eject_min=10)
        assert even.keep_gpu_h == pytest.approx(even.eject_gpu_h)
    short = eject_or_keep(gpus=16_384, speed=0.9, diagnose_h=1, eject_min=10)
    assert not short.eject_wins
    healthy = eject_or_keep(gpus=8, speed=1.0, diagnose_h=100, eject_min=0)
    assert healthy.break_even_h == math.inf and not healthy.eject_wins and healthy.keep_gpu_h == 0


def test_goodput_budget_shares():
    b = goodput_budget(gpus=16_384, gpu_mtbf_h=GPU_MTBF_H, save_s=60, restart_s=600, straggler_speed=0.9)
    parts = (b.useful_pct, b.straggler_pct, b.checkpoint_pct, b.rework_pct, b.restart_pct)
    assert sum(parts) == pytest.approx(100.0)
    assert b.checkpoint_pct == pytest.approx(b.rework_pct)  # at Young's interval the two terms are equal
    assert b.checkpoint_pct == pytest.approx(100 * math.sqrt(60 / (2 * b.mtbf_s)))
    assert b.restart_pct == pytest.approx(100 * 600 / b.mtbf_s)
    assert b.availability_pct == pytest.approx(100 - b.restart_pct)
    assert b.useful_pct / (b.useful_pct + b.straggler_pct) == pytest.approx(0.9)
    assert b.useful_pct < b.availability_pct and b.first_order_valid
    tau = young_interval(60, b.mtbf_s)
    assert b.interval_s == pytest.approx(tau)
    assert b.daly_goodput_pct == pytest.approx(100 * 0.9 * (1 - daly_lost(tau, 60, b.mtbf_s, 600)))
    assert abs(b.daly_goodput_pct - b.useful_pct) < 2.0


def test_goodput_budget_out_of_range_and_no_failures():
    worst = goodput_budget(gpus=200_000, gpu_mtbf_h=5_000, save_s=60, restart_s=60)
    assert not worst.first_order_valid and worst.useful_pct == 0
    assert worst.checkpoint_pct + worst.rework_pct + worst.restart_pct == pytest.approx(100)
    assert 0 < worst.daly_goodput_pct < 100
    perfect = goodput_budget(gpus=8, gpu_mtbf_h=math.inf, save_s=60, restart_s=600, straggler_speed=0.8)
    assert perfect.mtbf_s == math.inf and perfect.useful_pct == pytest.approx(80) and perfect.availability_pct == 100


def test_blast_radius_tray_against_server():
    tray = blast_radius(job_gpus=16_384, domain_gpus=72, failed_gpus=4, replica_gpus=128)
    server = blast_radius(job_gpus=16_384, domain_gpus=8, failed_gpus=8, replica_gpus=128)
    assert (tray.domain_gpus, tray.healthy_idled_gpus) == (72, 68)
    assert tray.domain_share_pct == pytest.approx(100 * 72 / 16_384)
    assert (server.domain_gpus, server.healthy_idled_gpus, server.replicas_max) == (8, 0, 1)
    assert server.domain_share_pct == pytest.approx(100 * 8 / 16_384)
    assert server.replica_share_pct == pytest.approx(100 * 128 / 16_384)
    assert tray.replicas_max == 2 and 1 < tray.replicas_mean < 2
    period = blast_radius(job_gpus=1152, domain_gpus=72, failed_gpus=4, replica_gpus=128)
    assert period.replicas_mean == pytest.approx(1.5)  # 8 of 16 racks straddle a replica boundary
    small = blast_radius(job_gpus=8, domain_gpus=72, failed_gpus=4, replica_gpus=8)
    assert small.domain_gpus == 8 and small.domain_share_pct == 100


@pytest.mark.parametrize("call, name, rng", [
    (lambda: straggler_tax(speed=0, gpus=8), "speed", "(0, 1]"),
    (lambda: straggler_tax(speed=1.1, gpus=8), "speed", "(0, 1]"),
    (lambda: straggler_tax(speed=0.9, gpus=0), "gpus", "1..inf"),
    (lambda: eject_or_keep(gpus=8, speed=0.9, diagnose_h=-1, eject_min=10), "diagnose_h", "[0, inf)"),
    (lambda: eject_or_keep(gpus=-8, speed=0.9, diagnose_h=1, eject_min=10), "gpus", "1..inf"),
    (lambda: goodput_budget(gpus=0, gpu_mtbf_h=1e4, save_s=60, restart_s=0), "gpus", "1..inf"),
    (lambda: goodput_budget(gpus=8, gpu_mtbf_h=1e4, save_s=0, restart_s=0), "save_s", "(0, inf)"),
    (lambda: goodput_budget(gpus=8, gpu_mtbf_h=1e4, save_s=60, restart_s=0, interval_x=0), "interval_x", "(0, inf)"),
    (lambda: goodput_budget(gpus=8, gpu_mtbf_h=0, save_s=60, restart_s=0), "gpu_mtbf_h", "(0, inf]"),
    (lambda: blast_radius(job_gpus=0, domain_gpus=8, failed_gpus=8, replica_gpus=1), "job_gpus", "1..inf"),
    (lambda: blast_radius(job_gpus=64, domain_gpus=8, failed_gpus=9, replica_gpus=8), "failed_gpus", "1..8"),
    (lambda: blast_radius(job_gpus=64, domain_gpus=8, failed_gpus=0, replica_gpus=8), "failed_gpus", "1..inf"),
    (lambda: blast_radius(job_gpus=64, domain_gpus=8, failed_gpus=8, replica_gpus=128), "replica_gpus", "1..64"),
])
def test_impossible_input_names_the_argument_and_range(call, name, rng):
    with pytest.raises(ValueError) as err:
        call()
    assert name in str(err.value) and rng in str(err.value)
