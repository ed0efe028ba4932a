"""Chapter 6: the goodput side of a run, its effective training-time ratio and the days it takes.

Chapter 2's failure and checkpoint models (the series failure model, Young's
interval, Daly's expected wall time) turned into one ratio for a run of a given
size: the **effective training-time ratio** (ETTR), the share of wall time
that moves training forward, and from it the days a token budget takes at
``predict_run``'s tokens per second.

Failure rates are per node-day, as Meta's fleets report them (Kokolis et al.
2025: 6.50 and 2.34 failures per 1,000 node-days on RSC-1 and RSC-2; Llama 3's
419 unexpected interruptions of 2,048 nodes in 54 days are 3.79). Times in
seconds unless a name says ``_h`` or ``_days``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..reliability import daly_wall_ratio, job_mtbf_s, young_interval
from ..validate import real, whole

__all__ = ["RunEttr", "TrainingDays", "days_to_train", "run_ettr"]

SECONDS_PER_DAY = 86_400.0


@dataclass(frozen=True)
class RunEttr:
    """The effective training-time ratio of a synchronous run, and where the rest goes."""

    nodes: int
    mtbf_h: float
    """The job's mean time between interruptions, ``M = 1/(nodes × rate)``, h (series model)."""
    interval_s: float
    """Checkpoint interval used: the one given, else Young's ``√(2δM)``."""
    ettr: float
    """Daly's expected ratio ``T_s/T_w = 1 / daly_wall_ratio(τ, δ, M, R)``: never below 0."""
    ettr_first_order: float
    """``(1 − (R + τ/2)/M) / (1 + δ/τ)``, floored at 0: Kokolis et al.'s E[ETTR]."""
    checkpoint_only: float
    """``τ/(τ + δ)``: the ratio if nothing failed (1 when the interval is infinite)."""
    checkpoint_share: float
    """``δ/(τ + δ)``: wall time spent saving, first order."""
    rework_share: float
    """``τ/(2M)``: work redone after failures, first order."""
    restart_share: float
    """``R/M``: time from a failure back to training, first order."""
    interruptions_per_day: float
    """``24 h / M``."""
    interruptions: float | None
    """Expected interruptions over ``days`` of wall time (None without ``days``)."""
    lost_days: float | None
    """``days × (1 − ettr)``: wall days that did not move training forward (None without ``days``)."""
    short_run: bool
    """Fewer than ten interruptions expected in ``days``: the ratio is an average over
    many such runs, and one run can land far from it (False without ``days``)."""


def run_ettr(*, failures_per_node_day: float, save_s: float, restart_s: float,
             gpus: int | None = None, nodes: int | None = None, gpus_per_node: int = 8,
             interval_s: float | None = None, days: float | None = None) -> RunEttr:
    """Effective training-time ratio of a synchronous run that checkpoints and restarts.

    Give the run's size as ``gpus`` (rounded up to whole nodes of
    ``gpus_per_node``) or as ``nodes``. With ``r = failures_per_node_day``,
    ``δ = save_s`` (the time training stops to save), ``R = restart_s``
    (detection, restart and reload, until training resumes)::

        M    = 1 / (nodes · r)                       series model: any node's failure stops the job
        τ    = interval_s, or Young's √(2 δ M)
        ETTR = 1 / [(M/τ) · e^{R/M} · (e^{(τ+δ)/M} − 1)]          Daly (2006), exponential failures
        ETTR ≈ (1 − (R + τ/2)/M) / (1 + δ/τ)                    first order (Kokolis et al. 2025)

    The first-order form is Kokolis et al.'s expected ETTR, ``(1 − N r_f (u_0
    + Δt_cp/2)) / (1 + w_cp/Δt_cp)`` in their symbols, read second-hand (two
    summaries quote it the same way). It can reach 0 where Daly's cannot. A
    run that never fails keeps the checkpoint-only ratio ``τ/(τ + δ)``
    (1 at Young's interval, which is then infinite). ``days`` (wall time)
    adds the expected interruptions and the days lost.

    Raises ``ValueError`` unless exactly one of ``gpus`` and ``nodes`` is
    given (at least 1), ``failures_per_node_day >= 0``, ``save_s > 0``,
    ``restart_s >= 0``, ``interval_s > 0`` (may be ``inf``) and ``days > 0``.

    Sources: chapter 2 (``job_mtbf_s``, ``young_interval``, ``daly_wall_ratio``);
    Young (1974); Daly (2006); Kokolis et al. (2025); Grattafiori et al. (2024).
    """
    rate = real("failures_per_node_day", failures_per_node_day, unit="per node-day")
    delta = real("save_s", save_s, low_open=True, unit="s")
    r = real("restart_s", restart_s, unit="s")
    per_node = whole("gpus_per_node", gpus_per_node, low=1, integral_only=False)
    if (gpus is None) == (nodes is None):
        raise ValueError(f"gpus must be given, or nodes, but not both: got gpus={gpus!r}, nodes={nodes!r}")
    if nodes is None:
        count = math.ceil(whole("gpus", gpus, low=1, integral_only=False) / per_node)
    else:
        count = whole("nodes", nodes, low=1, integral_only=False)
    # chapter 2's series model, with nodes as the failing units: M = 3600 / (λ N), λ per node-hour
    m = job_mtbf_s(rate / 24.0, count)
    if interval_s is None:
        tau = young_interval(delta, m)
    else:
        tau = real("interval_s", interval_s, low_open=True, allow_inf=True, unit="s")
    span = None if days is None else real("days", days, low_open=True, unit="days")

    ckpt_only = 1.0 if math.isinf(tau) else tau / (tau + delta)
    if math.isinf(m):
        ettr = ckpt_only
        rework = restart = 0.0
    elif math.isinf(tau):  # never checkpoints while failing: every failure loses everything
        ettr, rework, restart = 0.0, math.inf, r / m
    else:
        ettr = 1.0 / daly_wall_ratio(tau, delta, m, r)
        rework, restart = tau / (2.0 * m), r / m
    first = max(0.0, (1.0 - restart - rework) * ckpt_only)  # rework inf: -inf (or nan), and max keeps 0.0
    per_day = SECONDS_PER_DAY / m  # 0.0 when m is inf
    return RunEttr(
        nodes=count,
        mtbf_h=m / 3600.0,
        interval_s=tau,
        ettr=ettr,
        ettr_first_order=first,
        checkpoint_only=ckpt_only,
        checkpoint_share=1.0 - ckpt_only,
        rework_share=rework,
        restart_share=restart,
        interruptions_per_day=per_day,
        interruptions=None if span is None else per_day * span,
        lost_days=None if span is None else span * (1.0 - ettr),
        short_run=False if span is None else per_day * span < 10.0,
    )


@dataclass(frozen=True)
class TrainingDays:
    """How long a token budget takes."""

    compute_days: float
    """``tokens / tokens_per_s``, in days: every second spent training."""
    wall_days: float
    """``compute_days / ettr``: with failures, checkpoints and restarts."""
    lost_days: float
    """``wall_days − compute_days``."""


def days_to_train(*, tokens: float, tokens_per_s: float, ettr: float = 1.0) -> TrainingDays:
    """Days to train on ``tokens`` at ``tokens_per_s`` (e.g. ``predict_run(...).tokens_per_s``).

    ``wall = tokens / (tokens_per_s · 86,400 · ETTR)``. An ETTR of 0 never
    finishes (``math.inf``). Narayanan et al. (2021) eq. 4 is the same
    estimate written with FLOPs, ``8TP/(nX)``, at an ETTR of 1.

    Raises ``ValueError`` unless ``tokens >= 0``, ``tokens_per_s > 0`` and
    ``0 <= ettr <= 1``.
    """
    n = real("tokens", tokens, unit="tokens")
    speed = real("tokens_per_s", tokens_per_s, low_open=True, unit="tokens/s")
    e = real("ettr", ettr, high=1.0)
    compute = n / speed / SECONDS_PER_DAY
    wall = compute / e if e > 0 else (0.0 if compute == 0 else math.inf)
    return TrainingDays(compute_days=compute, wall_days=wall, lost_days=wall - compute)
