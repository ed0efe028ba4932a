"""Chapter 4's misconceptions, for the exercises' feedback (``clustermath.feedback``).

Importing this module adds the chapter's section labels to
``feedback.SECTION_TITLES`` and registers the mistakes the chapter-4
exercises recognise::

    import clustermath.feedback.fabric_designs  # registers chapter 4's misconceptions
    from clustermath import feedback as fb
    fb.suspect("bits_for_bytes", 432.0)

Registering twice is harmless (``register`` accepts an identical item again).
"""
from __future__ import annotations

from .core import Misconception, register, register_sections

__all__ = ["CH4_SECTIONS", "MISCONCEPTIONS"]

CH4_SECTIONS: dict[str, tuple[int, str]] = {
    "ch4-matrix": (4, "The comparison matrix"),
    "ch4-spine-cost": (4, "What the spine costs"),
    "ch4-incast": (4, "An incast at 400G"),
    "ch4-hashing": (4, "Axis (c): spreading load by software, by wiring, or by circuits"),
    "ch4-redundancy": (4, "Axis (d): where the spare capacity sits"),
    "ch4-choose": (4, "A decision procedure"),
}
"""MyST label -> (chapter, short title) for the sections chapter 4's feedback cites."""

register_sections(CH4_SECTIONS)

MISCONCEPTIONS = (
    Misconception(
        "bits_for_bytes", "port speeds in Gbps used as if they were GB/s (a factor of 8)",
        "Link rates are quoted in bits per second and buffers in bytes: divide Gbps by 8 to get "
        "GB/s before multiplying by a time.",
        "ch4-incast"),
    Misconception(
        "all_senders_excess", "all N senders counted as excess, though the receiver's port drains one",
        "The receiver's port keeps sending at line rate, so it absorbs one sender's worth; only the "
        "other N - 1 senders pile up in the buffer.",
        "ch4-incast"),
    Misconception(
        "window_rtt_only", "only the round trip counted before the first rate cut",
        "DCQCN cannot slow a sender until a congestion notification has been generated (up to 50 µs) "
        "and has travelled back: the window is the round trip plus the notification interval.",
        "ch4-incast"),
    Misconception(
        "radix_not_ports", "every port of every switch counted, where only ports in use cost money",
        "A rail of 256 GPUs on one radix-512 switch uses 256 of its ports; the cost model counts the "
        "ports in use, N (2t - 1) for a t-tier full-bisection Clos.",
        "ch4-spine-cost"),
    Misconception(
        "link_ends_once", "a link counted once, though it occupies a port and a transceiver at both ends",
        "Every switch-to-switch link uses a switch port and a transceiver at each end; removing a link "
        "removes both.",
        "ch4-spine-cost"),
    Misconception(
        "n_k_swapped", "n and k swapped in n (1 - 1/n)^k",
        "n is the number of uplinks and k the number of flows: each uplink is missed by every one of "
        "the k flows with probability (1 - 1/n)^k.",
        "ch4-hashing"),
    Misconception(
        "all_up_as_per_host", "the probability that the whole slice is up read as a per-host availability",
        "p^hosts is the chance that every host is up at once; to reach a slice-level target T a host "
        "needs availability T^(1/hosts), far closer to 1 than T.",
        "ch4-redundancy"),
    Misconception(
        "linear_availability", "1 - (1 - T)/hosts used where T^(1/hosts) is exact",
        "Dividing the allowed failure probability among the hosts is the first-order (union-bound) "
        "approximation; it is close only when T is near 1.",
        "ch4-redundancy"),
    Misconception(
        "floor_uplinks", "the uplink count rounded down",
        "A ratio of 1:1.125 asks for at least 1.125 uplinks per downlink; a fraction of a port must be "
        "rounded up, or the headroom falls short.",
        "ch4-redundancy"),
    Misconception(
        "moe_ignored", "rail-only put ahead although a sizeable part of the work is mixture-of-experts",
        "Step 3 of the procedure keeps an any-to-any tier whenever MoE all-to-all or shared hosts need "
        "paths between rails; rail-only slows that all-to-all by 8.2–11.2%.",
        "ch4-choose"),
    Misconception(
        "formula_not_simulation", "the simulation returns the formula's value instead of counting draws",
        "A simulation draws each flow's uplink with the seeded generator, counts the uplinks no flow "
        "picked in each trial, and averages over the trials: one trial gives a whole number, and "
        "different seeds give different answers that scatter around the formula.",
        "ch4-hashing"),
    Misconception(
        "seed_ignored", "the seed argument not passed to the generator, so every seed draws the same flows",
        "Build the generator from the seed you are given, np.random.default_rng(seed): the same seed must "
        "repeat its answer and a different seed must draw different flows.",
        "ch4-hashing"),
    Misconception(
        "tie_broken_by_order", "a tie settled by picking one pattern, though the scores cannot tell them apart",
        "When two patterns share the top score the rules have not chosen between them: report every "
        "pattern with the top score, and let the constraints the scores leave out decide.",
        "ch4-choose"),
    Misconception(
        "untouched_pattern_missing", "a pattern no rule mentions left out of the tally, though it scores 0",
        "Every pattern starts at 0 points; one that no rule adds to or takes from still scores 0 and can "
        "share the top when the others are negative.",
        "ch4-choose"),
)
"""Chapter 4's misconceptions, registered on import."""

register(*MISCONCEPTIONS)
