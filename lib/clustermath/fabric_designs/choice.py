"""Chapter 4, section 13.7: the decision procedure as explicit rules that score four patterns.

Each rule is one line of the source's procedure with its threshold from a
paper; it adds or removes points for a pattern and says why. The score shows
which input reorders the patterns; it is not a recommendation.

Ties are kept. Several patterns often share the top (or bottom) score, and
nothing in the procedure orders them: ``Choice.leaders`` and
``Choice.trailers`` hold every pattern with the top or bottom score,
``Choice.first`` and ``Choice.last`` are ``None`` when that place is shared,
and ranks are competition ranks (two patterns tied for first are both 1).

Patterns: ``meta`` (any-to-any Clos with a deep-buffer spine), ``hpn``
(any-to-any single-chip, dual-plane, thin core), ``torus`` (TPU-style torus
behind optical circuit switches), ``rail_only`` (spine deleted).

Source: source 001, section 13.7 ("A decision procedure").
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass

from .designs import BUILDING_KW_PER_GPU, hpn_scale, meta_zone, tpu_v4_machine
from ..validate import flag, one_of, real, whole

__all__ = ["CHOICES", "DEFAULTS", "PATTERNS", "PATTERN_NAMES", "RISKS", "Choice", "LeadCount", "MOE_MEANINGFUL_PCT",
           "RAIL_ONLY_BIG", "choose_fabric", "leaders_of", "rank_after_each_change", "rail_only_leads"]

PATTERNS = ("meta", "hpn", "torus", "rail_only")
PATTERN_NAMES = {"meta": "Meta-style Clos, deep spine", "hpn": "HPN-style dual-plane",
                 "torus": "torus + OCS", "rail_only": "rail-only"}
MOE_MEANINGFUL_PCT = 10.0
"""A share of mixture-of-experts work above which the procedure keeps an any-to-any tier (this book's reading
of "any meaningful share")."""
RAIL_ONLY_BIG = 32_768
"""Above this many GPUs rail-only's savings are largest and the 2024 designs end."""

RISKS = {
    "meta": "a failed rack switch stops its rack; deep chassis cost more and fail more often; needs QP scaling "
            "in both switch and library",
    "hpn": "one tier holds 1,024 GPUs; DCQCN must stay on with ~1 MB per port; dual-ToR needs host bonding "
           "and no stacking",
    "torus": "one organisation must own chip, compiler and scheduler; all-to-all crosses the mesh; a dead "
             "host breaks every fixed slice through it",
    "rail_only": "the experts' all-to-all takes 8.2-11.2% longer; no relay across tenants; a failed GPU's "
                 "replacement must be on the same rail",
}
"""The risk line printed for each pattern, taken from the matrix's redundancy and failure rows."""

DEFAULTS = dict(gpus_now=1_024, gpus_3y=1_024, power_mw=80.0, moe_pct=0.0, shared_hosts=False,
                own_stack=True, can_fork=False, cost_sensitive=False, chip_tbps=51.2)
"""The panel's starting inputs: a 1,024-GPU dense-model cluster whose owner builds the whole stack, with
room in the building and no team to fork the collective library. Rail-only ranks last here, alone."""

CHOICES = dict(gpus_now=(1_024, 4_096, 8_192, 16_384), gpus_3y=(1_024, 4_096, 16_384, 24_576, 65_536, 131_072),
               power_mw=(10.0, 20.0, 40.0, 80.0, 200.0), moe_pct=(0.0, 5.0, 20.0, 50.0),
               shared_hosts=(False, True), own_stack=(False, True), can_fork=(False, True),
               cost_sensitive=(False, True), chip_tbps=(51.2, 102.4))
"""The values each input takes in the panel (and in the exhaustive searches below)."""


def leaders_of(scores: dict) -> tuple[str, ...]:
    """Every pattern that shares the top score, in the order of ``PATTERNS`` (more than one means a tie)."""
    top = max(scores[p] for p in PATTERNS)
    return tuple(p for p in PATTERNS if scores[p] == top)


@dataclass(frozen=True)
class Choice:
    """Outputs of ``choose_fabric``."""

    target_gpus: int
    building_gpus: int
    scores: dict
    """Pattern → points."""
    ranking: tuple
    """Patterns from best to worst. Tied patterns appear in the order of ``PATTERNS``, which decides
    nothing: read ``leaders`` and ``trailers`` (or ``rank``) for what the scores say."""
    rules: tuple
    """(pattern, points, reason) for every rule that fired, in the procedure's order."""

    @property
    def leaders(self) -> tuple[str, ...]:
        """Every pattern with the top score."""
        return leaders_of(self.scores)

    @property
    def trailers(self) -> tuple[str, ...]:
        """Every pattern with the bottom score."""
        low = min(self.scores.values())
        return tuple(p for p in PATTERNS if self.scores[p] == low)

    @property
    def first(self) -> str | None:
        """The pattern ranked first, or ``None`` when two or more share the top score."""
        return self.leaders[0] if len(self.leaders) == 1 else None

    @property
    def last(self) -> str | None:
        """The pattern ranked last, or ``None`` when two or more share the bottom score."""
        return self.trailers[0] if len(self.trailers) == 1 else None

    def rank(self, pattern: str) -> int:
        """Competition rank: 1 + the number of patterns with a strictly higher score."""
        return 1 + sum(score > self.scores[pattern] for score in self.scores.values())


def choose_fabric(gpus_now: int = DEFAULTS["gpus_now"], gpus_3y: int = DEFAULTS["gpus_3y"],
                  power_mw: float = DEFAULTS["power_mw"], moe_pct: float = DEFAULTS["moe_pct"],
                  shared_hosts: bool = DEFAULTS["shared_hosts"], own_stack: bool = DEFAULTS["own_stack"],
                  can_fork: bool = DEFAULTS["can_fork"], cost_sensitive: bool = DEFAULTS["cost_sensitive"],
                  chip_tbps: float = DEFAULTS["chip_tbps"]) -> Choice:
    """Score the four patterns with the procedure's rules; every rule that fires is returned with its reason.

    Rules (points in brackets), target = the larger of now and three years:

    1. scale: target ≤ one segment → hpn [+2]; ≤ one Meta pod (3,072) → meta [+2];
       ≤ one torus machine (4,096) with the whole stack owned → torus [+2]; ≤ one HPN pod → hpn [+1];
       ≤ 8 Meta pods (24,576) → meta [+1]; above 32,768 → rail_only [+2]; torus without owning
       the stack [−3], torus beyond one machine [−1].
    2. building: target above power / 1.2 kW → the top tier crosses buildings: hpn [+1] (the source:
       HPN sizes its pod to one building and lets only pipeline traffic, 6 MB a step, cross its
       15:1 core), rail_only [−1] (its one tier spans the cluster, so every rail crosses buildings,
       and fibres beyond 100 m give up the 70% saving of multi-mode optics).
    3. workload and tenancy: MoE share ≥ 10% → rail_only [−4], torus [−2]; shared hosts → rail_only [−4].
    4. switch class and cost: cost-sensitive → rail_only [+2], torus [+1], meta [−1] (deep chassis).
    5. the hash: team can change switch hash and library → meta [+1]; cannot → meta [−1].
    """
    gpus_now = whole("gpus_now", gpus_now, low=1, unit="GPUs")
    gpus_3y = whole("gpus_3y", gpus_3y, low=1, unit="GPUs")
    power_mw = real("power_mw", power_mw, low=0.0, low_open=True, unit="MW")
    moe_pct = real("moe_pct", moe_pct, high=100.0, unit="%")
    shared_hosts, own_stack = flag("shared_hosts", shared_hosts), flag("own_stack", own_stack)
    can_fork, cost_sensitive = flag("can_fork", can_fork), flag("cost_sensitive", cost_sensitive)
    chip_tbps = one_of("chip_tbps", chip_tbps, (51.2, 102.4))
    target = max(gpus_now, gpus_3y)
    hpn = hpn_scale(chip_tbps, 400)
    meta_pod, meta_cluster = meta_zone()
    _, torus_chips, _ = tpu_v4_machine()
    building = int(power_mw * 1000 / BUILDING_KW_PER_GPU + 1e-9)
    rules: list[tuple[str, int, str]] = []

    def rule(pattern: str, points: int, reason: str) -> None:
        rules.append((pattern, points, reason))

    if target <= hpn.gpus_per_segment:
        rule("hpn", 2, f"fits one {chip_tbps}T segment ({hpn.gpus_per_segment:,} GPUs): one hop per rail")
    elif target <= hpn.gpus_per_pod:
        rule("hpn", 1, f"fits one HPN pod ({hpn.gpus_per_pod:,} GPUs)")
    if target <= meta_pod:
        rule("meta", 2, f"fits one full-bisection Meta pod ({meta_pod:,} GPUs)")
    elif target <= meta_cluster:
        rule("meta", 1, f"fits eight Meta pods at 1:7 ({meta_cluster:,} GPUs)")
    if not own_stack:
        rule("torus", -3, "a torus needs one organisation to own chip, compiler, scheduler and switches")
    elif target <= torus_chips:
        rule("torus", 2, f"fits one torus machine ({torus_chips:,} chips) and you own the stack")
    if target > torus_chips:
        rule("torus", -1, f"more than one torus machine ({torus_chips:,} chips)")
    if target > RAIL_ONLY_BIG:
        rule("rail_only", 2, f"above {RAIL_ONLY_BIG:,} GPUs rail-only saves the most")
    if target > building:
        rule("hpn", 1, f"target exceeds one building ({building:,} GPUs at 1.2 kW): HPN's pod is one "
                       "building, and only pipeline traffic crosses its 15:1 core")
        rule("rail_only", -1, "every rail would span buildings (fibres beyond 100 m rule out multi-mode optics)")
    if moe_pct >= MOE_MEANINGFUL_PCT:
        rule("rail_only", -4, f"MoE share {moe_pct:g}% ≥ {MOE_MEANINGFUL_PCT:g}%: all-to-all needs paths between rails")
        rule("torus", -2, "MoE all-to-all must cross the mesh")
    if shared_hosts:
        rule("rail_only", -4, "shared hosts: one tenant cannot relay over another's NVLink")
    if cost_sensitive:
        rule("rail_only", 2, "network cost matters: rail-only removes the spine (38-77% of network cost)")
        rule("torus", 1, "network cost matters: optics are under 5% of system cost")
        rule("meta", -1, "network cost matters: deep-buffer chassis cost more")
    if can_fork:
        rule("meta", 1, "team can change hash and library: QP scaling on the destination QP")
    else:
        rule("meta", -1, "no team to change hash and library: QP scaling is out of reach")
    scores = {p: sum(points for q, points, _ in rules if q == p) for p in PATTERNS}
    ranking = tuple(sorted(PATTERNS, key=lambda p: (-scores[p], PATTERNS.index(p))))
    return Choice(target_gpus=target, building_gpus=building, scores=scores, ranking=ranking, rules=tuple(rules))


def rank_after_each_change(pattern: str, **base) -> list[tuple[str, object, int, int]]:
    """For every single input changed to each of its other ``CHOICES``, where ``pattern`` then ranks.

    Starts from ``DEFAULTS`` updated with ``base``. Returns (input, value, rank, tied) rows: the
    competition rank (1 = first) and how many other patterns share that score (0 = alone).
    """
    one_of("pattern", pattern, PATTERNS)
    start = {**DEFAULTS, **base}
    rows = []
    for name, values in CHOICES.items():
        for value in values:
            if value == start[name]:
                continue
            c = choose_fabric(**{**start, name: value})
            tied = sum(c.scores[q] == c.scores[pattern] for q in PATTERNS) - 1
            rows.append((name, value, c.rank(pattern), tied))
    return rows


@dataclass(frozen=True)
class LeadCount:
    """Outputs of ``rail_only_leads``: over every combination of the other inputs, how often rail-only leads."""

    combinations: int
    alone: int
    """Combinations where rail-only has the top score by itself."""
    shared: int
    """Combinations where rail-only shares the top score with at least one other pattern."""


def rail_only_leads(moe_pct: float) -> LeadCount:
    """Every combination of the other inputs in ``CHOICES`` at this MoE share: where does rail-only lead?"""
    names = [n for n in CHOICES if n != "moe_pct"]
    total = alone = shared = 0
    for values in itertools.product(*(CHOICES[n] for n in names)):
        leaders = choose_fabric(**dict(zip(names, values)), moe_pct=moe_pct).leaders
        total += 1
        if "rail_only" in leaders:
            alone += len(leaders) == 1
            shared += len(leaders) > 1
    return LeadCount(combinations=total, alone=alone, shared=shared)


@dataclass(frozen=True)
class DecisionSummary:
    """Outputs of ``decision_summary``: the target and what one building powers, the four scores, the first
    and last place (a tie names every pattern in it), and the risk of each pattern in first place."""

    target_gpus: int
    """The larger of today's GPUs and the three-year count."""
    building_gpus: int
    """GPUs one building powers at 1.2 kW each (rule 2 fires when the target is larger)."""
    meta: int
    hpn: int
    torus: int
    rail_only: int
    first: str
    """The pattern ranked first, or "tie: A = B" when the top score is shared."""
    last: str
    """The pattern ranked last, or "tie: A = B" when the bottom score is shared."""
    risk_of_first: str


def _place(patterns: tuple[str, ...]) -> str:
    names = " = ".join(PATTERN_NAMES[p] for p in patterns)
    return names if len(patterns) == 1 else f"tie: {names}"


def decision_summary(**inputs) -> DecisionSummary:
    """``choose_fabric(**inputs)`` flattened to plain fields (for Panel 13.7's table); ties are named as ties."""
    c = choose_fabric(**inputs)
    return DecisionSummary(target_gpus=c.target_gpus, building_gpus=c.building_gpus, **c.scores,
                           first=_place(c.leaders), last=_place(c.trailers),
                           risk_of_first=" | ".join(RISKS[p] for p in c.leaders))


__all__ += ["DecisionSummary", "decision_summary"]
