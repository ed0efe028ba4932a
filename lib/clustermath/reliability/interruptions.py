"""Chapter 2: the interruption record, reliability at scale and the checkpoint interval.

One place for the published figures (``LLAMA3_405B``, Grattafiori et al. 2024,
Table 5) and small pure functions over them:

* the per-GPU failure rate of a record and a job's mean time between
  interruptions, ``M = 1 / (λ N)``;
* Young's first-order checkpoint interval ``τ* = √(2 δ M)`` and the time it
  loses, ``δ/τ + τ/(2M)``, which is ``√(2δ/M)`` at the optimum (Young 1974);
* Daly's higher-order estimate of the interval, his expected wall-time model
  and the exact minimiser of that model (Daly 2006);
* the interruption table of source 003, for any GPU count;
* asynchronous checkpointing, where the save cost that matters is the copy.

Units: times in seconds unless a name says ``_h`` (hours); rates per
GPU-hour; shares either as fractions or, where a name ends in ``_pct``, in
percent. Impossible input raises ``ValueError`` naming the argument and its
allowed range; degenerate input (no GPUs, a free save, a zero rate) gives
the limit the formula tends to, often ``math.inf`` for "never".
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Sequence

from ..validate import real, whole

__all__ = [
    "AsyncCheckpoint", "CheckpointPlan", "HARDWARE_EXCLUDED", "InterruptionRecord", "InterruptionRow", "LLAMA3_405B",
    "RootCause", "RootCauseCheck", "SOURCE_003_TABLE", "async_checkpoint", "checkpoint_plan",
    "daly_exact_interval", "daly_interval", "daly_lost", "daly_wall_ratio", "first_order_lost",
    "gpu_failure_rate", "interruption_row", "interruption_table", "job_mtbf_s", "rounding_tol",
    "root_cause_checks", "share_pct", "young_interval", "young_lost",
]

SECONDS_PER_HOUR = 3600.0
HOURS_PER_DAY = 24.0


# -- the published record ------------------------------------------------------------

@dataclass(frozen=True)
class RootCause:
    """One row of the paper's root-cause table."""

    component: str
    category: str
    """The paper's category column (GPU, Host, Network, Dependency, ...)."""
    count: int
    """Unexpected interruptions attributed to this component."""
    published_pct: float
    """The percentage the paper prints for the row."""


@dataclass(frozen=True)
class InterruptionRecord:
    """A published interruption record of one training run, with its citation."""

    run: str
    gpus: int
    days: float
    total: int
    """All job interruptions in the period."""
    planned: int
    unexpected: int
    hardware_share_pct: float
    """Share of unexpected interruptions stated as confirmed or suspected hardware ("approximately")."""
    gpu_share_pct: float
    """Share of unexpected interruptions stated as GPU issues."""
    effective_training_pct: float
    """Effective training time stated for the run (a lower bound: "more than")."""
    root_causes: tuple[RootCause, ...]
    citation: str
    bibkey: str

    @property
    def hours(self) -> float:
        """Length of the period, h."""
        return self.days * HOURS_PER_DAY

    @property
    def gpu_hours(self) -> float:
        """GPU-hours in the period: ``gpus × days × 24``."""
        return self.gpus * self.hours

    @property
    def mtbf_h(self) -> float:
        """Mean time between unexpected interruptions, h: ``days × 24 / unexpected`` (derived, not published)."""
        return self.hours / self.unexpected


LLAMA3_405B = InterruptionRecord(
    run="Llama 3 405B pre-training (a 54-day snapshot)",
    gpus=16_384,
    days=54,
    total=466,
    planned=47,
    unexpected=419,
    hardware_share_pct=78.0,
    gpu_share_pct=58.7,
    effective_training_pct=90.0,
    root_causes=(
        RootCause("Faulty GPU", "GPU", 148, 30.1),
        RootCause("GPU HBM3 memory", "GPU", 72, 17.2),
        RootCause("Software bug", "Dependency", 54, 12.9),
        RootCause("Network switch/cable", "Network", 35, 8.4),
        RootCause("Host maintenance", "Unplanned maintenance", 32, 7.6),
        RootCause("GPU SRAM memory", "GPU", 19, 4.5),
        RootCause("GPU system processor", "GPU", 17, 4.1),
        RootCause("NIC", "Host", 7, 1.7),
        RootCause("NCCL watchdog timeouts", "Unknown", 7, 1.7),
        RootCause("Silent data corruption", "GPU", 6, 1.4),
        RootCause("GPU thermal interface + sensor", "GPU", 6, 1.4),
        RootCause("SSD", "Host", 3, 0.7),
        RootCause("Power supply", "Host", 3, 0.7),
        RootCause("Server chassis", "Host", 2, 0.5),
        RootCause("IO expansion board", "Host", 2, 0.5),
        RootCause("Dependency", "Dependency", 2, 0.5),
        RootCause("CPU", "Host", 2, 0.5),
        RootCause("System memory", "Host", 2, 0.5),
    ),
    citation=('Grattafiori et al. (2024), "The Llama 3 Herd of Models", arXiv:2407.21783, '
              "section 3.3.4 and Table 5 (root causes of the 419 unexpected interruptions)"),
    bibkey="grattafiori2024llama3",
)
"""The Llama 3 405B interruption record as published: counts, stated shares and Table 5's rows.

Numbers as printed by Grattafiori et al. (2024): 16,384 H100 GPUs, 54 days,
466 interruptions of which 47 planned and 419 unexpected; "approximately 78%"
of the unexpected ones confirmed or suspected hardware; GPU issues 58.7%;
more than 90% effective training time. The rows keep the paper's counts and
printed percentages side by side, including the one pair that disagrees
(see ``root_cause_checks``). Sources 002 and 003 quote from this record."""

HARDWARE_EXCLUDED = ("Dependency", "Unknown")
"""Categories outside "confirmed or suspected hardware" (software bugs, dependencies, timeouts of unknown cause)."""


@dataclass(frozen=True)
class RootCauseCheck:
    """A Table 5 row recomputed from its count."""

    component: str
    category: str
    count: int
    published_pct: float
    count_pct: float
    """``100 × count / unexpected``."""
    published_times_total: float
    """``published_pct × unexpected / 100``: the count the printed percentage implies."""
    agrees: bool
    """The count's share rounds (to 0.1) to the printed percentage."""


def root_cause_checks(record: InterruptionRecord = LLAMA3_405B) -> list[RootCauseCheck]:
    """Every root-cause row with its count recomputed as a share of the unexpected interruptions.

    ``agrees`` is ``round(100 × count / unexpected, 1) == published_pct``.
    """
    n = record.unexpected
    rows = []
    for rc in record.root_causes:
        pct = 100.0 * rc.count / n
        rows.append(RootCauseCheck(rc.component, rc.category, rc.count, rc.published_pct, pct,
                                   rc.published_pct * n / 100.0, round(pct, 1) == rc.published_pct))
    return rows


def share_pct(record: InterruptionRecord = LLAMA3_405B, *, categories: Iterable[str] | None = None,
              exclude: Iterable[str] = (), printed: bool = False) -> float:
    """Share of unexpected interruptions in the given categories, percent.

    ``categories=None`` means every category not in ``exclude``. With
    ``printed=True`` the rows' printed percentages are summed; otherwise the
    counts are summed and divided by ``unexpected``.
    """
    chosen = set(categories) if categories is not None else None
    skip = set(exclude)
    rows = [rc for rc in record.root_causes
            if (chosen is None or rc.category in chosen) and rc.category not in skip]
    if printed:
        return round(sum(rc.published_pct for rc in rows), 10)
    return 100.0 * sum(rc.count for rc in rows) / record.unexpected


# -- rates and mean times -----------------------------------------------------------------

def gpu_failure_rate(interruptions: int, gpus: int, days: float) -> float:
    """Failures per GPU-hour from a record: ``λ = interruptions / (gpus × days × 24)``.

    Assumes every interruption is charged to the GPU population as a whole
    (a job of N GPUs fails at N λ). Raises ``ValueError`` for negative
    counts and for zero GPUs or zero days (the rate would divide by zero).

    Source: source 003, "Maths"; the record is Grattafiori et al. (2024).
    """
    interruptions = whole("interruptions", interruptions, integral_only=False)
    gpus = whole("gpus", gpus, low=1, integral_only=False)
    days = real("days", days, low=0.0, low_open=True)
    return interruptions / (gpus * days * HOURS_PER_DAY)


def job_mtbf_s(rate_per_gpu_h: float, gpus: int) -> float:
    """Mean time between interruptions of a job of ``gpus`` GPUs, s: ``M = 3600 / (λ N)``.

    Independent failures add their rates, so reliability divides by the GPU
    count. ``math.inf`` when ``λ N = 0`` (no GPUs or a zero rate).

    Source: source 003, "Maths" (``M = 1/(λN)``, λ per GPU-hour).
    """
    lam = real("rate_per_gpu_h", rate_per_gpu_h)
    gpus = whole("gpus", gpus, integral_only=False)
    rate = lam * gpus
    return math.inf if rate == 0 else SECONDS_PER_HOUR / rate


# -- Young (1974) -----------------------------------------------------------------------

def first_order_lost(interval_s: float, save_s: float, mtbf_s: float) -> float:
    """Share of time lost to checkpoints and rework, first order: ``δ/τ + τ/(2M)``.

    Saving for δ every τ costs δ/τ of the run; a failure throws away on
    average half an interval, τ/2, and failures come every M. Valid while both
    terms are small; it can exceed 1, which the exact model (``daly_lost``)
    never does. Raises ``ValueError`` for τ <= 0, δ < 0 or M <= 0.

    Source: Young (1974); source 002; source 003, "Maths".
    """
    tau = real("interval_s", interval_s, low_open=True, allow_inf=True)
    delta = real("save_s", save_s)
    m = real("mtbf_s", mtbf_s, low_open=True, allow_inf=True)
    if math.isinf(tau):
        return 0.0 if math.isinf(m) else math.inf
    return delta / tau + (0.0 if math.isinf(m) else tau / (2.0 * m))


def young_interval(save_s: float, mtbf_s: float) -> float:
    """Young's optimum checkpoint interval, s: ``τ* = √(2 δ M)``.

    The minimum of ``δ/τ + τ/(2M)``: its derivative ``-δ/τ² + 1/(2M)`` is
    zero there. ``0`` for a free save (checkpoint continuously); ``math.inf``
    when nothing fails (M infinite), which wins over a free save.

    Source: Young (1974); source 002; source 003 (``tau = sqrt(2 * saveS * mtbf)``).
    """
    delta = real("save_s", save_s)
    m = real("mtbf_s", mtbf_s, low_open=True, allow_inf=True)
    if math.isinf(m):
        return math.inf
    return math.sqrt(2.0 * delta * m)


def young_lost(save_s: float, mtbf_s: float) -> float:
    """Share of time lost at Young's interval: ``√(2δ/M)`` (fraction).

    At τ* the two terms of ``δ/τ + τ/(2M)`` are equal, each ``√(δ/(2M))``.
    This is source 003's "time lost" column. ``0`` for a free save or when
    nothing fails.

    Source: Young (1974); source 002 ("minimum overhead is √(2C/M)").
    """
    delta = real("save_s", save_s)
    m = real("mtbf_s", mtbf_s, low_open=True, allow_inf=True)
    return 0.0 if math.isinf(m) else math.sqrt(2.0 * delta / m)


# -- Daly (2006) ------------------------------------------------------------------------

def daly_interval(save_s: float, mtbf_s: float) -> float:
    """Daly's higher-order estimate of the optimum interval, s.

    ::

        τ = √(2δM) · [1 + (1/3)√(δ/(2M)) + (1/9)(δ/(2M))] − δ     for δ < 2M
        τ = M                                                     for δ >= 2M

    It approximates the minimiser of Daly's expected wall time
    (``daly_wall_ratio``) and tends to Young's √(2δM) as δ/M → 0. ``math.inf``
    when nothing fails; ``0`` for a free save.

    Source: Daly (2006), Future Generation Computer Systems 22(3), 303-312.
    """
    delta = real("save_s", save_s)
    m = real("mtbf_s", mtbf_s, low_open=True, allow_inf=True)
    if math.isinf(m):
        return math.inf
    if delta >= 2.0 * m:
        return m
    x = delta / (2.0 * m)
    # never negative: where 2·δ·M underflows to 0 (a save of ~1e-320 s) the formula would give -δ
    return max(0.0, math.sqrt(2.0 * delta * m) * (1.0 + math.sqrt(x) / 3.0 + x / 9.0) - delta)


def daly_wall_ratio(interval_s: float, save_s: float, mtbf_s: float, restart_s: float = 0.0) -> float:
    """Expected wall time per unit of useful time in Daly's model: ``T_w / T_s``.

    ::

        T_w / T_s = (M / τ) · e^{R/M} · (e^{(τ+δ)/M} − 1)

    for exponentially distributed failures (mean M), a save of δ after every
    τ of work and a restart of R after each failure. ``(τ + δ)/τ`` when
    nothing fails. The restart enters only as the factor ``e^{R/M}``, so it
    raises the wall time but does not move the best interval.

    Source: Daly (2006), the complete cost function.
    """
    tau = real("interval_s", interval_s, low_open=True)
    delta = real("save_s", save_s)
    m = real("mtbf_s", mtbf_s, low_open=True, allow_inf=True)
    r = real("restart_s", restart_s)
    if math.isinf(m):
        return (tau + delta) / tau
    exponent = (tau + delta) / m
    if exponent + r / m > 700.0:  # beyond a double; the run never finishes
        return math.inf
    return (m / tau) * math.exp(r / m) * math.expm1(exponent)


def daly_lost(interval_s: float, save_s: float, mtbf_s: float, restart_s: float = 0.0) -> float:
    """Share of wall time that does not advance the run in Daly's model: ``1 − T_s/T_w``.

    Never above 1, unlike ``first_order_lost``, to which it reduces (plus
    R/M) when every term is small; 1 when the expected wall time overflows.
    Never below 0 either: the ratio is at least 1, and where rounding puts it
    a hair under 1 (a save under about 1e-22 s) the share is 0, not -2e-16.
    """
    return max(0.0, 1.0 - 1.0 / daly_wall_ratio(interval_s, save_s, mtbf_s, restart_s))


def _u_plus_log1m(u: float) -> float:
    """``u + ln(1 − u)`` for 0 <= u < 1, to the last bits near 0 (where the two terms cancel).

    Up to u = 0.1 (inclusive) it sums the series ``−(u²/2 + u³/3 + … + u³⁹/39)``: the next term
    is below 1e-40 of the first, far under a double's precision. Above, the direct form loses
    nothing.
    """
    if not 0.0 <= u < 1.0:
        raise ValueError(f"u must be a number in [0, 1), got {u!r}")
    if u > 0.1:
        return u + math.log1p(-u)
    total, power = 0.0, u
    for k in range(2, 40):
        power *= u
        total += power / k
    return -total


def daly_exact_interval(save_s: float, mtbf_s: float) -> float:
    """The interval that minimises ``daly_wall_ratio``, s (solved numerically).

    Setting the derivative to zero gives, with u = τ/M,
    ``u + ln(1 − u) = −δ/M``, i.e. ``τ = M (1 + W₀(−e^{−1−δ/M}))`` with W₀ the
    principal Lambert W. Solved here by bisection on u in (0, 1), halving until
    the bracket stops shrinking in floating point (or the equation holds
    exactly). Where δ/M underflows to 0 (δ under about 5e-324 M) the interval
    is Young's √(2δM), exact to the last bit there; where δ is more than about
    37 M the root lies within one ulp of u = 1 and the interval is M.
    Independent of the restart time. ``0`` for a free save, ``math.inf`` when
    nothing fails.
    """
    delta = real("save_s", save_s)
    m = real("mtbf_s", mtbf_s, low_open=True, allow_inf=True)
    if math.isinf(m):
        return math.inf
    if delta == 0.0:
        return 0.0
    eps = delta / m
    if eps == 0.0:  # δ/M underflowed: u = √(2ε)(1 − √(2ε)/3 + …) is √(2ε) to the last bit
        return math.sqrt(2.0 * delta) * math.sqrt(m)
    lo, hi = 0.0, 1.0
    while True:
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):  # the bracket is two neighbouring doubles
            return m * mid
        g = _u_plus_log1m(mid) + eps  # decreases from eps at u = 0 to -inf at u = 1
        if g == 0.0:
            return m * mid
        if g > 0.0:
            lo = mid
        else:
            hi = mid


# -- the interruption table (source 003) --------------------------------------------------

@dataclass(frozen=True)
class InterruptionRow:
    """One row of the interruption table, plus Daly's interval beside Young's."""

    gpus: int
    per_day: float
    """Interruptions a day: ``24 λ N``."""
    mtbf_s: float
    """Mean time between interruptions, s: ``3600 / (λ N)``."""
    young_interval_s: float
    """Young's interval ``√(2 δ M)``, s ("checkpoint every")."""
    young_lost_pct: float
    """``100 √(2δ/M)``, percent ("time lost")."""
    daly_interval_s: float
    """Daly's higher-order interval, s."""
    daly_lost_pct: float
    """Time lost in Daly's model at Daly's interval (no restart cost), percent."""


def interruption_row(gpus: int, save_s: float = 60.0,
                     gpu_mtbf_h: float = LLAMA3_405B.gpu_hours / LLAMA3_405B.unexpected) -> InterruptionRow:
    """Interruptions a day, mean time between, Young's interval and time lost for ``gpus`` GPUs.

    ``gpu_mtbf_h`` is one GPU's mean time between failures, ``1/λ`` (default:
    the Llama 3 record, 16,384 × 54 × 24 / 419 = 50,677 GPU-hours).
    Zero GPUs give no interruptions, an infinite mean time and no loss.

    Source: source 003, the interruption table (60 s save).
    """
    gpus = whole("gpus", gpus, integral_only=False)
    delta = real("save_s", save_s)
    per_gpu = real("gpu_mtbf_h", gpu_mtbf_h, low_open=True, allow_inf=True)
    lam = 1.0 / per_gpu
    m = job_mtbf_s(lam, gpus)
    daly = daly_interval(delta, m)
    daly_lost_pct = 0.0 if (math.isinf(m) or daly == 0.0) else 100.0 * daly_lost(daly, delta, m)
    return InterruptionRow(
        gpus=gpus,
        per_day=lam * gpus * HOURS_PER_DAY,
        mtbf_s=m,
        young_interval_s=young_interval(delta, m),
        young_lost_pct=100.0 * young_lost(delta, m),
        daly_interval_s=daly,
        daly_lost_pct=daly_lost_pct,
    )


def interruption_table(gpu_counts: Sequence[int] = (1_024, 4_096, 16_384, 100_000), save_s: float = 60.0,
                       gpu_mtbf_h: float = LLAMA3_405B.gpu_hours / LLAMA3_405B.unexpected) -> list[InterruptionRow]:
    """``interruption_row`` for each GPU count (default: source 003's four)."""
    return [interruption_row(n, save_s, gpu_mtbf_h) for n in gpu_counts]


SOURCE_003_TABLE: tuple[tuple[int, float, float, float, float], ...] = (
    (1_024, 0.485, 178_000, 4_620, 2.6),
    (4_096, 1.94, 44_500, 2_310, 5.2),
    (16_384, 7.76, 11_100, 1_160, 10.4),
    (100_000, 47.4, 1_820, 468, 25.6),
)
"""Source 003's table as printed: GPUs, interruptions a day, mean time between (s),
checkpoint every (s), time lost (%). Every value has three significant figures
except 2.6% (two); the percentages carry one decimal."""


def rounding_tol(stated: float, sig: int = 3) -> float:
    """Half a unit in the last place of ``stated`` printed to ``sig`` significant figures.

    A computed value matches a rounded figure when it lies within this of it,
    e.g. ``rounding_tol(178_000) == 500`` and ``rounding_tol(0.485) == 0.0005``.
    """
    x = abs(real("stated", stated, low=-math.inf))
    if x == 0:
        raise ValueError(f"stated must be a number whose size is in (0, inf), got {stated!r}")
    sig = whole("sig", sig, low=1, integral_only=False)
    return 0.5 * 10.0 ** (math.floor(math.log10(x)) - sig + 1)


# -- a widget-ready summary -----------------------------------------------------------------

@dataclass(frozen=True)
class CheckpointPlan:
    """Young's and Daly's intervals for one job, and what each loses."""

    mtbf_s: float
    young_interval_s: float
    young_lost_pct: float
    """First-order loss at Young's interval, ``100 √(2δ/M)``."""
    daly_interval_s: float
    daly_lost_pct: float
    """Daly's model at Daly's interval (no restart), percent."""
    exact_interval_s: float
    """The minimiser of Daly's model."""
    young_in_daly_pct: float
    """Daly's model evaluated at Young's interval, percent: the price of using the simpler rule."""


def checkpoint_plan(*, save_s: float, gpus: int, gpu_mtbf_h: float) -> CheckpointPlan:
    """Young's and Daly's checkpoint intervals for a job of ``gpus`` GPUs saving in ``save_s``.

    Formula: ``M = 3600 gpu_mtbf_h / gpus``; ``τ_Y = √(2δM)``; ``τ_D`` as in
    ``daly_interval``; losses as in ``young_lost`` and ``daly_lost``.
    """
    row = interruption_row(gpus, save_s, gpu_mtbf_h)
    m, delta = row.mtbf_s, float(save_s)
    finite = not math.isinf(m) and delta > 0.0
    return CheckpointPlan(
        mtbf_s=m,
        young_interval_s=row.young_interval_s,
        young_lost_pct=row.young_lost_pct,
        daly_interval_s=row.daly_interval_s,
        daly_lost_pct=row.daly_lost_pct,
        exact_interval_s=daly_exact_interval(delta, m),
        young_in_daly_pct=100.0 * daly_lost(row.young_interval_s, delta, m) if finite else 0.0,
    )


# -- asynchronous checkpointing ---------------------------------------------------------------

@dataclass(frozen=True)
class AsyncCheckpoint:
    """A blocking save against one staged in host memory and flushed in the background."""

    sync_interval_s: float
    sync_lost_pct: float
    """``100 √(2 δ_persist / M)``."""
    async_interval_s: float
    async_lost_pct: float
    """``100 √(2 δ_copy / M)``: the training pauses only for the copy."""
    cost_ratio: float
    """``δ_persist / δ_copy``: how much cheaper the blocking part became."""
    overhead_ratio: float
    """``sync_lost / async_lost = √(cost_ratio)``."""
    flush_fits: bool
    """The background flush finishes within one asynchronous interval (``persist_s <= async_interval_s``)."""


def async_checkpoint(*, persist_s: float, copy_s: float, mtbf_s: float) -> AsyncCheckpoint:
    """Young's rule with the blocking save cost replaced by the copy to host memory.

    The loss at the optimum is ``√(2C/M)``, so cutting C by a factor k cuts
    the loss by only √k. The flush to storage must finish before the next
    copy, hence ``flush_fits``. Raises ``ValueError`` when the copy is not
    positive or takes longer than the persist it replaces.

    Source: source 002 (asynchronous checkpointing); Young (1974).
    """
    persist = real("persist_s", persist_s, low_open=True)
    copy = real("copy_s", copy_s, low=0.0, high=persist, low_open=True)
    m = real("mtbf_s", mtbf_s, low_open=True, allow_inf=True)
    sync_lost, async_lost = young_lost(persist, m), young_lost(copy, m)
    tau_async = young_interval(copy, m)
    return AsyncCheckpoint(
        sync_interval_s=young_interval(persist, m),
        sync_lost_pct=100.0 * sync_lost,
        async_interval_s=tau_async,
        async_lost_pct=100.0 * async_lost,
        cost_ratio=persist / copy,
        overhead_ratio=math.sqrt(persist / copy),
        flush_fits=persist <= tau_async,
    )
