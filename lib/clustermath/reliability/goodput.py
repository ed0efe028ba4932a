"""Chapter 2: stragglers, goodput against availability, and the blast radius of a failure.

Small pure functions; times in seconds unless a name says ``_h`` (hours) or
``_min`` (minutes), shares in percent where a name ends in ``_pct``.
Impossible input raises ``ValueError`` naming the argument and its range.

Sources: source 002 (stragglers, goodput, ejecting a straggler, blast radius);
source 003 and Grattafiori et al. (2024) for the failure rate; Young (1974)
and Daly (2006) for the checkpoint terms.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..validate import real, whole
from .interruptions import (
    HOURS_PER_DAY, daly_lost, job_mtbf_s, young_interval,
)

__all__ = [
    "BlastRadius", "EjectOrKeep", "GoodputBudget", "StragglerTax", "blast_radius", "eject_or_keep",
    "goodput_budget", "straggler_tax",
]


# -- one slow rank ---------------------------------------------------------------------

@dataclass(frozen=True)
class StragglerTax:
    """What one slow rank costs a synchronous job."""

    step_time_factor: float
    """Step time relative to a job without the straggler: ``1 / speed``."""
    step_longer_pct: float
    """``100 (1/speed − 1)``: how much longer every step takes."""
    throughput_lost_pct: float
    """``100 (1 − speed)``: how much less work the job does per hour."""
    gpu_hours_lost_per_day: float
    """``gpus × 24 × (1 − speed)``: GPU-hours of work the whole job forgoes each day."""


def straggler_tax(*, speed: float, gpus: int) -> StragglerTax:
    """The tax of one rank running at ``speed`` (a fraction of normal) in a synchronous job.

    Every collective waits for the slowest participant, so the step lasts
    ``1/speed`` times as long whatever the number of GPUs: the step gets
    ``100(1/speed − 1)``% longer and throughput falls by ``100(1 − speed)``%.
    Only the GPU-hours lost grow with the job. Raises ``ValueError`` unless
    ``0 < speed <= 1`` and ``gpus >= 1``.

    Source: source 002 ("one GPU running at 90% ...").
    """
    s = real("speed", speed, low=0.0, high=1.0, low_open=True)
    n = whole("gpus", gpus, low=1, integral_only=False)
    return StragglerTax(
        step_time_factor=1.0 / s,
        step_longer_pct=100.0 * (1.0 / s - 1.0),
        throughput_lost_pct=100.0 * (1.0 - s),
        gpu_hours_lost_per_day=n * HOURS_PER_DAY * (1.0 - s),
    )


@dataclass(frozen=True)
class EjectOrKeep:
    """Keeping a suspected straggler while it is diagnosed, against ejecting it at once."""

    keep_gpu_h: float
    """``gpus × diagnose_h × (1 − speed)``: work the job forgoes while the straggler stays."""
    eject_gpu_h: float
    """``gpus × eject_min / 60``: the whole job pauses once to rebalance or restart without it."""
    break_even_h: float
    """Diagnosis time at which both cost the same: ``(eject_min / 60) / (1 − speed)``."""
    eject_wins: bool
    """Ejecting costs less than keeping (``eject_gpu_h < keep_gpu_h``)."""


def eject_or_keep(*, gpus: int, speed: float, diagnose_h: float, eject_min: float) -> EjectOrKeep:
    """Cost of diagnosing a straggler in place for ``diagnose_h`` against a one-off ejection.

    Keeping it taxes every GPU of the job by ``1 − speed`` for as long as it
    stays; ejecting it stops every GPU once for ``eject_min`` (a rebalance
    onto a spare, or a restart from the last checkpoint). The job size
    cancels from the break-even time, so the answer is the same at any scale.
    A healthy rank (speed 1) never costs anything to keep: break-even is
    ``math.inf``.

    Source: source 002 (ejecting a suspected straggler instead of diagnosing it in place).
    """
    n = whole("gpus", gpus, low=1, integral_only=False)
    s = real("speed", speed, low=0.0, high=1.0, low_open=True)
    d = real("diagnose_h", diagnose_h)
    e = real("eject_min", eject_min)
    keep = n * d * (1.0 - s)
    eject = n * e / 60.0
    return EjectOrKeep(
        keep_gpu_h=keep,
        eject_gpu_h=eject,
        break_even_h=math.inf if s == 1.0 else (e / 60.0) / (1.0 - s),
        eject_wins=eject < keep,
    )


# -- where the time goes ---------------------------------------------------------------

@dataclass(frozen=True)
class GoodputBudget:
    """Shares of elapsed time, first order; they sum to 100 while the model is valid."""

    mtbf_s: float
    interval_s: float
    """The checkpoint interval used: ``interval_x`` × Young's √(2δM)."""
    useful_pct: float
    """Goodput: elapsed time that advanced the run and will not be redone."""
    straggler_pct: float
    """Time the job waited for its slowest rank."""
    checkpoint_pct: float
    """``100 δ/τ``: time spent saving."""
    rework_pct: float
    """``100 τ/(2M)``: work redone after failures."""
    restart_pct: float
    """``100 R/M``: time from a failure until training resumes."""
    availability_pct: float
    """``100 − restart_pct``: the job was up and holding its GPUs."""
    daly_goodput_pct: float
    """Goodput from Daly's exact wall-time model (same inputs), for comparison."""
    first_order_valid: bool
    """checkpoint + rework + restart < 100%; otherwise the first-order shares are capped."""


def goodput_budget(*, gpus: int, gpu_mtbf_h: float, save_s: float, restart_s: float,
                   interval_x: float = 1.0, straggler_speed: float = 1.0) -> GoodputBudget:
    """Where a synchronous job's elapsed time goes: failures, checkpoints and one straggler.

    Formula (shares of elapsed time, first order in δ/M, τ/M and R/M)::

        M          = 3600 gpu_mtbf_h / gpus                  [s]
        τ          = interval_x · √(2 δ M)                   [s]
        checkpoint = δ/τ,  rework = τ/(2M),  restart = R/M
        running    = 1 − checkpoint − rework − restart     (floored at 0)
        useful     = running × speed,  straggler = running × (1 − speed)
        availability = 1 − restart

    Availability counts every second the job holds its GPUs; goodput counts
    only the seconds that moved training forward. When the first three terms
    reach 100% (a job that fails faster than it can save), they are scaled
    to fill the bar and ``first_order_valid`` is False; ``daly_goodput_pct``
    (Daly's exact model times the straggler's speed) stays meaningful there.

    Source: source 002 (goodput, availability); Young (1974); Daly (2006).
    """
    n = whole("gpus", gpus, low=1, integral_only=False)
    per_gpu = real("gpu_mtbf_h", gpu_mtbf_h, low_open=True, allow_inf=True)
    delta = real("save_s", save_s, low_open=True)
    r = real("restart_s", restart_s)
    x = real("interval_x", interval_x, low_open=True)
    s = real("straggler_speed", straggler_speed, low=0.0, high=1.0, low_open=True)
    m = job_mtbf_s(1.0 / per_gpu, n)
    if math.isinf(m):
        tau = math.inf
        ckpt = rework = restart = 0.0
        daly_useful = 1.0
    else:
        tau = x * young_interval(delta, m)
        ckpt, rework, restart = delta / tau, tau / (2.0 * m), r / m
        daly_useful = 1.0 - daly_lost(tau, delta, m, r)
    waste = ckpt + rework + restart
    valid = waste < 1.0
    if not valid:
        ckpt, rework, restart = (v / waste for v in (ckpt, rework, restart))
    running = max(0.0, 1.0 - ckpt - rework - restart)
    return GoodputBudget(
        mtbf_s=m,
        interval_s=tau,
        useful_pct=100.0 * running * s,
        straggler_pct=100.0 * running * (1.0 - s),
        checkpoint_pct=100.0 * ckpt,
        rework_pct=100.0 * rework,
        restart_pct=100.0 * restart,
        availability_pct=100.0 * (1.0 - restart),
        daly_goodput_pct=100.0 * daly_useful * s,
        first_order_valid=valid,
    )


# -- blast radius ----------------------------------------------------------------------

@dataclass(frozen=True)
class BlastRadius:
    """What one failed unit takes out of a job, by failure domain."""

    failed_gpus: int
    """GPUs in the unit that actually failed (a tray, a server)."""
    domain_gpus: int
    """GPUs idled until the domain is whole again (the failure domain, capped at the job)."""
    healthy_idled_gpus: int
    """``domain_gpus − failed_gpus``: healthy GPUs idled by their neighbour's fault."""
    domain_share_pct: float
    """``100 domain_gpus / job_gpus``."""
    replicas_mean: float
    """Data-parallel replicas a failure in one domain touches, averaged over the job's GPUs."""
    replicas_max: int
    """The most replicas any one domain touches."""
    replica_share_pct: float
    """``100 replicas_mean × replica_gpus / job_gpus``: the job's share lost if it sheds whole replicas."""


def blast_radius(*, job_gpus: int, domain_gpus: int, failed_gpus: int, replica_gpus: int) -> BlastRadius:
    """GPUs idled by one failed unit, for domains laid out back to back across a job.

    The job's GPUs are numbered 0..job−1; domain k holds GPUs
    [k·domain, (k+1)·domain) and replica j holds [j·replica, (j+1)·replica)
    (tensor and pipeline ranks inside, data parallelism outermost). A failure
    idles its whole domain; a job that carries on by dropping data-parallel
    replicas loses every replica the domain touches. The mean weights each
    domain by its GPUs in the job, since every GPU is equally likely to fail.

    In synchronous training without elastic recovery every failure stops all
    ``job_gpus`` for the restart regardless; the blast radius is what stays
    out of service (or must be covered by spares) until the repair.

    Raises ``ValueError`` unless ``1 <= failed_gpus <= domain_gpus``,
    ``job_gpus >= 1`` and ``1 <= replica_gpus <= job_gpus``.

    Source: source 002 (a tray is 4 GPUs of a 72-GPU NVLink domain; an 8-GPU
    server loses 8 GPUs and one replica).
    """
    job = whole("job_gpus", job_gpus, low=1, integral_only=False)
    domain = whole("domain_gpus", domain_gpus, low=1, integral_only=False)
    failed = whole("failed_gpus", failed_gpus, low=1, integral_only=False)
    if failed > domain:
        raise ValueError(f"failed_gpus must be in 1..domain_gpus = 1..{domain}, got {failed_gpus!r}")
    replica = whole("replica_gpus", replica_gpus, low=1, integral_only=False)
    if replica > job:
        raise ValueError(f"replica_gpus must be in 1..job_gpus = 1..{job}, got {replica_gpus!r}")
    idled = min(domain, job)
    weighted, most = 0, 0
    for first in range(0, job, domain):
        last = min(first + domain, job) - 1
        touched = last // replica - first // replica + 1
        weighted += touched * (last - first + 1)
        most = max(most, touched)
    mean = weighted / job
    return BlastRadius(
        failed_gpus=failed,
        domain_gpus=idled,
        healthy_idled_gpus=idled - min(failed, idled),
        domain_share_pct=100.0 * idled / job,
        replicas_mean=mean,
        replicas_max=most,
        replica_share_pct=100.0 * min(mean * replica, job) / job,
    )
