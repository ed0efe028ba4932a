"""Chapter 4, axis (c): hashing few large flows onto equal uplinks.

``expected_idle`` is the balls-in-bins count ``n (1 − 1/n)^k`` of uplinks
that receive no flow when ``k`` flows are hashed independently onto ``n``
uplinks; ``hash_flows`` checks it by simulation (vectorised, seeded), and
reports the busiest link's load against the average; ``polarized_loads``
shows what a second hash of the same header does one tier up (Figure 13.5).

Sources: source 001, section 13.4; Gangidi et al. (2024) for QP scaling and
enhanced ECMP; Qian et al. (2024) for hash polarization and dual-plane.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..validate import flag, whole

__all__ = ["HashingResult", "MAX_TRIALS", "expected_idle", "hash_flows", "polarized_loads", "queue_reduction_pct"]

MAX_TRIALS = 100_000
MAX_FLOWS = 65_536
MAX_LINKS = 4_096


def expected_idle(links: int, flows: int) -> float:
    """Expected uplinks that receive no flow: ``n (1 − 1/n)^k`` for ``n = links``, ``k = flows``.

    Each of ``k`` flows picks one of ``n`` uplinks uniformly and independently;
    a given uplink is missed by all of them with probability ``(1 − 1/n)^k``.
    16 flows on 16 links: 5.7 idle; 64 flows: 0.26; 256 flows: about 0.
    Raises ``ValueError`` for zero links or negative flows.

    Source: source 001, "A formula for idle uplinks".
    """
    links = whole("links", links, low=1, high=MAX_LINKS, unit="uplinks")
    flows = whole("flows", flows, low=0, high=MAX_FLOWS, unit="flows")
    return links * (1.0 - 1.0 / links) ** flows


@dataclass(frozen=True)
class HashingResult:
    """Outputs of ``hash_flows``: many seeded trials of hashing ``flows`` flows onto ``links`` uplinks."""

    links: int
    flows: int
    trials: int
    formula_idle: float
    """``n (1 − 1/n)^k``."""
    simulated_idle: float
    """Mean idle uplinks over the trials."""
    busiest_over_mean: float
    """Mean over trials of (flows on the busiest link) ÷ (flows / links); 1.0 is perfect balance."""
    worst_busiest_over_mean: float
    """The largest such ratio seen in any trial."""
    all_busy_pct: float
    """Share of trials with no idle uplink, %."""


def hash_flows(links: int = 16, flows: int = 16, trials: int = 2_000, seed: int = 0) -> HashingResult:
    """Hash ``flows`` equal flows onto ``links`` uplinks, uniformly at random, in ``trials`` seeded trials.

    All trials are drawn in one ``numpy`` call and counted with one
    ``bincount`` (a trial's links are offset by ``trial × links``), so 2,000
    trials of 256 flows take about a millisecond. Deterministic for a given
    ``seed``. With zero flows every link is idle and the busiest ratio is 0.
    """
    links = whole("links", links, low=1, high=MAX_LINKS, unit="uplinks")
    flows = whole("flows", flows, low=0, high=MAX_FLOWS, unit="flows")
    trials = whole("trials", trials, low=1, high=MAX_TRIALS)
    seed = whole("seed", seed, low=0)
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, links, size=(trials, flows), dtype=np.int32)
    picks += (np.arange(trials, dtype=np.int32) * links)[:, None]
    counts = np.bincount(picks.ravel(), minlength=trials * links).reshape(trials, links)
    idle = (counts == 0).sum(axis=1)
    ratio = counts.max(axis=1) / (flows / links) if flows else np.zeros(trials)
    return HashingResult(
        links=links, flows=flows, trials=trials, formula_idle=expected_idle(links, flows),
        simulated_idle=float(idle.mean()), busiest_over_mean=float(ratio.mean()),
        worst_busiest_over_mean=float(ratio.max()), all_busy_pct=float(100 * (idle == 0).mean()))


def _hash(headers: np.ndarray, salt: int) -> np.ndarray:
    """A deterministic 32-bit mixing hash of integer headers (xorshift-multiply), with an optional salt."""
    x = (headers.astype(np.uint64) ^ np.uint64(salt)) * np.uint64(0x9E3779B1)
    x ^= x >> np.uint64(15)
    x = (x * np.uint64(0x85EBCA77)) & np.uint64(0xFFFFFFFF)
    x ^= x >> np.uint64(13)
    return x


def polarized_loads(links: int = 8, flows: int = 64, seed: int = 0, *, salted: bool = False) -> np.ndarray:
    """Flows on each of the ``links × links`` second-tier uplinks after two tiers of hashing.

    Tier 1 sends a flow to aggregation switch ``h(header) mod n``; that switch
    hashes the same header again to pick one of its ``n`` uplinks. With the
    same hash (``salted=False``) every flow at switch ``j`` has
    ``h mod n = j``, so each switch uses one uplink and ``n − 1`` sit idle:
    hash polarization. A per-switch salt makes the second choice independent.
    Returns an ``(n, n)`` array: row = aggregation switch, column = its uplink.
    """
    links = whole("links", links, low=1, high=256, unit="uplinks")
    flows = whole("flows", flows, low=0, high=MAX_FLOWS, unit="flows")
    seed = whole("seed", seed, low=0)
    salted = flag("salted", salted)
    headers = np.random.default_rng(seed).integers(0, 2**31, size=flows)
    first = (_hash(headers, 0) % np.uint64(links)).astype(np.int64)
    second = np.empty_like(first)
    for j in range(links):
        mine = first == j
        salt = 0x5BD1E995 * (j + 1) if salted else 0
        second[mine] = (_hash(headers[mine], salt) % np.uint64(links)).astype(np.int64)
    return np.bincount(first * links + second, minlength=links * links).reshape(links, links)


def queue_reduction_pct(before_kb: float, after_kb: float) -> float:
    """``100 (1 − after / before)``: how much shorter a queue became, %."""
    from ..validate import real
    before_kb = real("before_kb", before_kb, low=0.0, low_open=True, unit="KB")
    after_kb = real("after_kb", after_kb, unit="KB")
    return 100.0 * (1.0 - after_kb / before_kb)


def link_loads(links: int = 16, flows: int = 16, seed: int = 0, *, spray: bool = False) -> np.ndarray:
    """Share of one link's capacity each of ``links`` uplinks carries when ``flows`` equal flows fill them.

    Per-flow hashing (ECMP) puts each whole flow on one random link; packet
    spraying splits every flow evenly over all links, so each carries
    ``flows / links`` flows' worth. Returned in flows per link (one trial, seeded).
    Source: source 001, section 13.8 (Figure 13.9, Ultra Ethernet's packet spraying).
    """
    links = whole("links", links, low=1, high=MAX_LINKS, unit="uplinks")
    flows = whole("flows", flows, low=0, high=MAX_FLOWS, unit="flows")
    seed = whole("seed", seed, low=0)
    if flag("spray", spray):
        return np.full(links, flows / links)
    picks = np.random.default_rng(seed).integers(0, links, size=flows)
    return np.bincount(picks, minlength=links).astype(float)


__all__.append("link_loads")
