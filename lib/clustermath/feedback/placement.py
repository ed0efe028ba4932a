"""Chapter 3's misconceptions, for the exercises' feedback (``clustermath.feedback``).

Importing this module adds the chapter's section labels to
``feedback.SECTION_TITLES`` and registers the mistakes the chapter-3
exercises recognise, so that a test can name them::

    import clustermath.feedback.placement  # registers chapter 3's misconceptions
    from clustermath import feedback as fb
    fb.suspect("hops_across_replicas", 227)

Registering twice is harmless (``register`` accepts an identical item again).
"""
from __future__ import annotations

from .core import Misconception, register, register_sections

__all__ = ["CH3_SECTIONS", "MISCONCEPTIONS"]

CH3_SECTIONS: dict[str, tuple[int, str]] = {
    "ch3-three-cuts": (3, "Three cuts, three kinds of traffic"),
    "ch3-rank-order": (3, "Numbering ranks and filling domains"),
    "ch3-llama-servers": (3, "Llama 3 405B on eight-GPU servers"),
    "ch3-llama-nvl72": (3, "The same job on NVL72 racks"),
    "ch3-misfits": (3, "Jobs that do not fit their domains"),
    "ch3-order": (3, "Getting the order wrong"),
}
"""MyST label -> (chapter, short title) for the sections chapter 3's feedback cites."""

register_sections(CH3_SECTIONS)

MISCONCEPTIONS = (
    Misconception(
        "partial_domain_dropped", "the partly filled last domain left out (floor where ceil belongs)",
        "A job whose groups do not fill its last domain still occupies that domain: count "
        "ceil(groups / groups per domain), and count the empty part of it as idle.",
        "ch3-llama-nvl72"),
    Misconception(
        "groups_split", "GPUs divided by the domain size, as if a tensor-parallel group could straddle two domains",
        "With whole groups per domain a domain of D GPUs takes floor(D / tp) groups; when tp does "
        "not divide D the rest of each domain stays idle, so the job needs more domains than "
        "GPUs / D.",
        "ch3-misfits"),
    Misconception(
        "stranded_ignored", "the idle GPUs of the partial domain only",
        "When tp does not divide the domain size, every occupied domain strands D - tp * floor(D / tp) "
        "GPUs, not just the last one.",
        "ch3-misfits"),
    Misconception(
        "hops_across_replicas", "a hop counted from one replica's last stage to the next replica's first",
        "Neighbours in rank order are not always pipeline neighbours: a pipeline hop joins stage s "
        "and stage s + 1 of the same replica, so a replica of pp stages has pp - 1 hops and the "
        "boundary between two replicas carries none.",
        "ch3-rank-order"),
    Misconception(
        "links_vs_hops", "links counted where hops are asked for (or the reverse: a factor of tp)",
        "A pipeline hop between two tensor-parallel groups is tp point-to-point links, tensor rank i "
        "to tensor rank i; the chapter counts hops.",
        "ch3-rank-order"),
    Misconception(
        "tp_innermost_assumed", "the tensor-innermost layout's counts given for another rank order",
        "Which ranks share a domain depends on the order: with stages innermost, consecutive ranks "
        "are stages of one pipeline, and a tensor-parallel group's ranks lie pp apart.",
        "ch3-order"),
    Misconception(
        "stage_average_dropped", "a middle stage's pipeline traffic taken for every GPU",
        "The last stage sends nothing forward and the first nothing back, so averaged over the pp "
        "stages a GPU sends (pp - 1) / pp of what a middle stage sends.",
        "ch3-three-cuts"),
    Misconception(
        "no_scatter_gather", "every tensor rank sending the whole activation to the next stage",
        "With the scatter/gather optimisation each of the tp links between two stages carries 1/tp "
        "of the activation.",
        "ch3-three-cuts"),
    Misconception(
        "per_step_not_per_replica", "tokens per step where tokens per replica are asked for (a factor of dp)",
        "Each of the dp replicas processes its own share of the step's tokens; the pipeline's bytes "
        "follow a replica's tokens.",
        "ch3-three-cuts"),
)
"""Chapter 3's misconceptions, registered on import."""

register(*MISCONCEPTIONS)
