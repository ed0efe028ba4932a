"""Chapter 5's misconceptions, for the exercises' feedback (``clustermath.feedback``).

Importing this module adds the chapter's section labels to
``feedback.SECTION_TITLES`` and registers the mistakes the chapter-5
exercises recognise, so that a test can name them::

    import clustermath.feedback.scaleup  # registers chapter 5's misconceptions
    from clustermath import feedback as fb
    fb.suspect("pk_as_kp", 0.1)

Registering twice is harmless (``register`` accepts an identical item again).
"""
from __future__ import annotations

from .core import Misconception, register, register_sections

__all__ = ["CH5_SECTIONS", "MISCONCEPTIONS"]

CH5_SECTIONS: dict[str, tuple[int, str]] = {
    "ch5-where": (5, "Where this design sits"),
    "ch5-fragmentation": (5, "Fragmentation: the remainder nobody can use"),
    "ch5-trace": (5, "How often nodes are down"),
    "ch5-design": (5, "The design: a switch in every transceiver, a ring of any length"),
    "ch5-bound": (5, "The waste bound"),
    "ch5-bound-slack": (5, "How loose the bound is"),
    "ch5-readings": (5, "Two readings of the 4-GPU rate"),
    "ch5-ring-builder": (5, "The ring builder"),
    "ch5-question": (5, "The source's question"),
    "ch5-tor": (5, "Keeping the datacenter network quiet"),
    "ch5-measured": (5, "What was built and measured"),
}
"""MyST label -> (chapter, short title) for the sections chapter 5's feedback cites."""

register_sections(CH5_SECTIONS)

MISCONCEPTIONS = (
    Misconception(
        "mod_of_failed", "the remainder taken of the failed GPUs instead of the healthy ones",
        "What cannot form a group is the remainder of the *healthy* GPUs: (H - F) mod T. The failed "
        "GPUs are lost to the fault, not to fragmentation.",
        "ch5-fragmentation"),
    Misconception(
        "failures_ignored", "the domain's remainder computed as if nothing had failed",
        "A failure changes the number of healthy GPUs and so the remainder: (H - F) mod T, not H mod T.",
        "ch5-fragmentation"),
    Misconception(
        "failed_counted_as_idle", "the failed GPUs added to the idle ones",
        "Fragmentation waste counts healthy GPUs that no group can use; the failed GPUs are a separate loss.",
        "ch5-fragmentation"),
    Misconception(
        "gpu_rate_per_node", "the failure probability of one GPU used as the rate of a whole node",
        "A node is down when any of its R GPUs is: P_node = 1 - (1 - p)^R, about R times p for small p.",
        "ch5-trace"),
    Misconception(
        "rate_scaled_linearly", "a node's fault rate scaled in proportion to its GPUs",
        "Halving the GPUs of a node does not halve its fault rate exactly: the healthy probability is a "
        "power, 1 - P_4 = (1 - P_8)^(1/2).",
        "ch5-trace"),
    Misconception(
        "eight_gpu_rate_for_four", "the 8-GPU node rate used for 4-GPU nodes",
        "The trace counts 8-GPU nodes. If GPUs fail independently, as the exercise assumes, a 4-GPU "
        "node fails less often: P_4 = 1 - sqrt(1 - P_8), 3.68% at the p99 rate instead of 7.22%. "
        "(Only if whole-host faults dominated would the two rates be equal.)",
        "ch5-trace"),
    Misconception(
        "pk_as_kp", "P_s^K read as K × P_s",
        "A cut needs K failed nodes in a row, each with probability P_s: the chance is P_s to the power K, "
        "so every extra hop multiplies the bound by P_s, a few percent.",
        "ch5-bound"),
    Misconception(
        "bound_factor_dropped", "the factor 2 (a run has two ends) or N_t - R left out of the bound",
        "The bound is 2 (N_t - R) P_s^K: a middle node can start or end a run of K failures, and a cut "
        "wastes at most N_t - R GPUs per GPU of the node.",
        "ch5-bound"),
    Misconception(
        "remainder_per_ring", "one remainder taken for the whole ring instead of one per piece between cuts",
        "Each cut splits the line into pieces, and every piece is cut into TP groups on its own: the idle "
        "GPUs are the sum of the pieces' remainders, which is at least the remainder of the whole line.",
        "ch5-ring-builder"),
    Misconception(
        "bound_for_simulation", "the paper's bound taken for the simulated waste",
        "The bound is a loose ceiling: it counts each cut at both ends of its run and charges it "
        "R (N_t - R) GPUs, while one cut adds no idle GPUs or exactly one group of N_t. The simulated "
        "and the exact waste lie far below it, so they reach a target at a smaller K.",
        "ch5-bound-slack"),
    Misconception(
        "static_uses_backups", "static TP rings credited with the K-hop ring's backups",
        "A static ring is cabled once; a failed node kills its whole ring whatever K the wiring could "
        "offer, so its waste does not depend on K.",
        "ch5-question"),
    Misconception(
        "static_tail_ignored", "the nodes past the last whole static ring left out",
        "Static rings are cabled from the first node in blocks of N_t / R; nodes left over after the "
        "last whole block form no ring, so their healthy GPUs are idle too.",
        "ch5-ring-builder"),
    Misconception(
        "db_linear", "decibels read as a linear fraction",
        "A loss of L dB leaves 10^(-L/10) of the light: 3 dB is about half, 10 dB a tenth.",
        "ch5-measured"),
    Misconception(
        "db_amplitude", "the loss converted with 20 log10 (amplitude) instead of 10 log10 (power)",
        "Optical insertion loss is a ratio of powers: fraction left = 10^(-L/10).",
        "ch5-measured"),
    Misconception(
        "pj_units", "watts divided by Gbps left in W per Gbps instead of pJ per bit",
        "1 W at 1 Gbps is 1 nJ per bit, 1,000 pJ; so pJ/bit = watts / Gbps × 1,000.",
        "ch5-measured"),
    Misconception(
        "tor_in_order", "the ring assumed to follow deployment order",
        "With sub-line wiring a node's ring neighbours sit under the next ToR, so a TP group runs "
        "across the ToRs on the HBD instead of filling one of them.",
        "ch5-tor"),
    Misconception(
        "subline_any_length", "DP peers assumed to share a ToR whatever the TP group's length",
        "Sub-line wiring keeps a GPU's DP peers under one ToR only when each TP group covers whole "
        "rows (a multiple of the number of ToRs); a group of half a row spreads them over two ToRs.",
        "ch5-tor"),
    Misconception(
        "dp_inside_tp_group", "DP peers taken for members of the same TP group",
        "A GPU's DP peers hold the same position in every *other* TP group; its own group's members "
        "are its TP peers.",
        "ch5-tor"),
)
"""Chapter 5's misconceptions, registered on import."""

register(*MISCONCEPTIONS)
