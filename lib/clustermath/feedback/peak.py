"""Chapter 1's misconceptions: the ten broken builds and the slips its exercises recognise.

Importing ``clustermath.feedback`` registers this catalogue (and every other
chapter's), so a test can name any of them::

    from clustermath import feedback as fb
    fb.suspect("ignore_comm", 40)
"""
from __future__ import annotations

from .core import Misconception, register, register_sections

__all__ = ["CH1_SECTIONS"]

CH1_SECTIONS: dict[str, tuple[int, str]] = {
    "ch1-scaling": (1, "Scaling"),
    "ch1-collective": (1, "The collective"),
    "ch1-pipeline": (1, "The pipeline"),
    "ch1-checkpoint": (1, "The checkpoint"),
    "ch1-failures": (1, "Failures"),
    "ch1-stragglers": (1, "Stragglers"),
    "ch1-activations": (1, "Activations"),
    "ch1-fabric": (1, "The fabric"),
    "ch1-economics": (1, "Economics"),
    "ch1-assembled": (1, "The assembled cluster"),
    "ch1-debug-lab": (1, "Debug lab"),
    "ch1-cxl": (1, "Where CXL fits"),
}
"""MyST label -> (chapter, short title) for the sections chapter 1's feedback cites."""

register_sections(CH1_SECTIONS)
register(
    # The ten broken builds of chapter 1, under their flag names.
    Misconception(
        "ignore_comm", "the peak-FLOPs step, with the communication left out",
        "A synchronous step lasts its compute plus whatever part of the collective is not hidden; "
        "a step timed without the collective reports every node busy all the time.",
        "ch1-scaling"),
    Misconception(
        "ignore_topology", "the flat collective (the gradient crosses the fabric once)",
        "A ring all-reduce over N ranks puts 2(N-1)/N of the gradient on every rank's link: "
        "almost twice the gradient, and exactly once only at two ranks.",
        "ch1-collective"),
    Misconception(
        "ignore_bubble", "a pipeline with no bubble",
        "S stages working through M microbatches stand idle for a fraction (S-1)/(M+S-1) of each step "
        "while the pipeline fills and drains.",
        "ch1-pipeline"),
    Misconception(
        "ignore_checkpoint", "a checkpoint that costs nothing",
        "Writing F GB to a tier of R Gbps takes 8F/R seconds, paid once per interval.",
        "ch1-checkpoint"),
    Misconception(
        "ignore_failures", "one node's MTBF used for the whole cluster",
        "N nodes that fail independently fail N times as often as one: the cluster's mean time "
        "between failures is the node's divided by N.",
        "ch1-failures"),
    Misconception(
        "assume_uniform", "the mean rank taken as the step time",
        "A synchronous step ends when its slowest rank reaches the collective, so the step time is "
        "a maximum over ranks, not an average.",
        "ch1-stragglers"),
    Misconception(
        "ignore_activations", "activations that take no memory",
        "Unless they are recomputed, the activations of every layer, for every sample in flight, "
        "stay in memory until the backward pass uses them.",
        "ch1-activations"),
    Misconception(
        "assume_full", "the full-bisection figure",
        "Oversubscription divides what can cross a tier: an N-to-one tier carries 1/N of the "
        "full-bisection figure, and the collective's traffic sees that fraction.",
        "ch1-fabric"),
    Misconception(
        "ignore_efficiency", "the peak price",
        "Useful teraflops are peak teraflops times the measured efficiency; pricing at peak "
        "understates the cost per useful teraflop by exactly that factor.",
        "ch1-economics"),
    Misconception(
        "scale_only", "scaling counted by nodes alone",
        "More nodes is one property among several; the others decide whether the new nodes add "
        "throughput or only capability on paper.",
        "ch1-assembled"),
    # Slips that show up in every chapter.
    Misconception(
        "units", "a slip between gigabytes and gigabits (a factor of 8)",
        "Sizes are in gigabytes and link rates in gigabits per second; a byte is eight bits, so "
        "converting one way and not the other moves the answer by a factor of 8.",
        "ch1-checkpoint"),
    Misconception(
        "both_directions", "a bidirectional figure used as a one-way rate (a factor of 2)",
        "Spec sheets often add up both directions of a link. A phase that sends and receives at "
        "the same time still moves each byte at the one-way rate.",
        "ch1-collective"),
    Misconception(
        "off_by_one", "an off-by-one",
        "Check where N - 1 belongs (a ring has N - 1 steps per phase, a pipeline S - 1 idle slots) "
        "and whether the boundary case itself is included.",
        "ch1-collective"),
    Misconception(
        "speed_vs_time", "a speed-up read as a time saving",
        "A run with k times the throughput takes 1/k of the time: 1.17 times the throughput is "
        "14.6% less time, and 11% less time needs 1/0.89 = 1.124 times the throughput.",
        "ch1-debug-lab"),
    Misconception(
        "truncation", "whole-number arithmetic where the question asks for exact values (or the reverse)",
        "The chapter's models truncate to whole units, as the source's hardware does; exact "
        "arithmetic gives slightly different numbers. Use the arithmetic the question names.",
        "ch1-failures"),
    Misconception(
        "binary_units", "binary units (1 GB = 1024 MB)",
        "This book uses decimal units for sizes and rates, as link rates are quoted: "
        "1 GB = 1000 MB and 64 GB/s = 64 MB per millisecond.",
        "ch1-cxl"),
    # Mistakes specific to the exercise models of chapter 1, reusable later.
    Misconception(
        "hidden_share_of_step", "the overlap taken as a share of the step rather than of the collective",
        "Overlap hides part of the collective behind the backward pass; only the collective's "
        "exposed remainder, (1 - f) times its time, stays in the step.",
        "ch1-scaling"),
    Misconception(
        "throughput_not_target", "a comparison of raw throughput when the question asks for the doubling's target",
        "Without any overlap 64 nodes at 41% already deliver 1.17 times what 32 nodes at 70% do; "
        "the team doubled the cluster to deliver twice as much.",
        "ch1-debug-lab"),
    Misconception(
        "overlap_cap_as_answer", "the most the backward pass can hide, given as the overlap needed",
        "The overlap a target needs and the overlap the backward pass allows are different "
        "numbers; comparing them is the point.",
        "ch1-scaling"),
    Misconception(
        "nic_per_gpu", "a fabric port per GPU where the node has one",
        "In this model the node's G GPUs share one fabric port, so after the intra-node phase all "
        "G shards still leave through it.",
        "ch1-collective"),
    Misconception(
        "whole_model_per_stage", "every stage holding the whole model's activations",
        "A pipeline stage holds only the activations of its own layers: L/S of them.",
        "ch1-pipeline"),
    Misconception(
        "whole_interval_lost", "a failure losing the whole interval",
        "A failure strikes, on average, halfway between checkpoints, so it loses half an "
        "interval of work.",
        "ch1-failures"),
    Misconception(
        "asymptotic_max", "the large-N approximation sigma * sqrt(2 ln N)",
        "The approximation overshoots the expected maximum at any practical rank count; "
        "integrate, or simulate enough draws.",
        "ch1-stragglers"),
    Misconception(
        "sd_as_variance", "the variance used where the standard deviation belongs",
        "A spread of sigma means a variance of sigma squared; normal draws take the standard deviation.",
        "ch1-stragglers"),
    Misconception(
        "capacity_only", "the tier's capacity without its write bandwidth",
        "Offload is bounded by what the tier can absorb while the forward pass runs, not only by "
        "how much it can hold.",
        "ch1-cxl"),
    Misconception(
        "no_offload", "the batch without the tier",
        "The question asks how far the tier moves the limit; HBM alone is the starting point.",
        "ch1-activations"),
    Misconception(
        "one_level_fabric", "one tier's ratio taken for the whole fabric",
        "Traffic that leaves a pod crosses both tiers and is divided by both ratios; traffic that "
        "stays in the pod sees only the first.",
        "ch1-fabric"),
    Misconception(
        "ratios_for_all_traffic", "both ratios applied to all the traffic",
        "Only the share of traffic that leaves the pod crosses the upper tier.",
        "ch1-fabric"),
    Misconception(
        "mean_as_every_day", "the average day taken for every day",
        "The mean-rate model gives the average loss; single days vary a lot: many lose little, "
        "some lose hours, and a fraction of days above a threshold comes from that spread.",
        "ch1-failures"),
    Misconception(
        "mean_plus_sd", "the slowest rank taken as the mean plus one standard deviation",
        "The expected maximum of N draws grows with N (slowly, about as the square root of log N); "
        "one standard deviation is roughly right only for a handful of ranks.",
        "ch1-stragglers"),
    Misconception(
        "ratios_added", "the two oversubscription ratios added",
        "Tiers in series divide: traffic through a 2:1 tier and then a 4:1 tier sees 1/8 of the "
        "link rate, not 1/6.",
        "ch1-fabric"),
    Misconception(
        "source_share", "the source's 41% taken at face value",
        "The source's 41% compute share at 64 nodes gives 1.17 times the throughput and a 14.6% "
        "shorter run; the 11% it reports needs a lower share.",
        "ch1-debug-lab"),
    Misconception(
        "term_not_applied", "a term of the model left out",
        "Every term the question lists moves the step time; check that each one is applied, and "
        "at both cluster sizes.",
        "ch1-debug-lab"),
    Misconception(
        "percent", "a percentage where the question asks for a fraction (a factor of 100)",
        "Shares and efficiencies in the exercises are fractions between 0 and 1 unless the name "
        "ends in _pct.",
        "ch1-scaling"),
    Misconception(
        "swapped", "the other deliverable's value",
        "This is the number another part of the same exercise asks for; check which name holds which.",
        "ch1-scaling"),
    Misconception(
        "implied_property", "a property that sounds related but does not imply this one",
        "A cheap checkpoint bounds the write overhead; it says nothing about how often the cluster "
        "fails or how much work each failure destroys.",
        "ch1-assembled"),
)
