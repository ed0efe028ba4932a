"""Chapter 6's misconceptions, for the exercises' feedback (``clustermath.feedback``).

Importing this module adds the chapter's section labels to
``feedback.SECTION_TITLES`` and registers the mistakes the chapter-6 exercises
recognise (algorithm bandwidth taken for bus bandwidth, "percent of peak"
taken for MFU, the model-to-hardware FLOP ratio turned upside down, GPUs
counted where a rate is per node, ...), so that a test can name them::

    import clustermath.feedback.validation  # registers chapter 6's misconceptions
    from clustermath import feedback as fb
    fb.suspect("pct_peak_as_mfu", 47.4)

Registering twice is harmless (``register`` accepts an identical item again).
"""
from __future__ import annotations

from .core import Misconception, register, register_sections

__all__ = ["CH6_SECTIONS", "MISCONCEPTIONS"]

CH6_SECTIONS: dict[str, tuple[int, str]] = {
    "ch6-metrics": (6, "MFU, HFU and \"percent of peak\""),
    "ch6-predict": (6, "One step of a real run"),
    "ch6-validate": (6, "Calibrate, then validate"),
    "ch6-collectives": (6, "Collectives"),
    "ch6-bubble-drop": (6, "What the bubble explains of Megatron-LM's drop"),
    "ch6-llama": (6, "Llama 3's second row"),
    "ch6-failures": (6, "The series failure model against small jobs"),
    "ch6-ettr": (6, "The goodput side"),
}
"""MyST label -> (chapter, short title) for the sections chapter 6's feedback cites."""

register_sections(CH6_SECTIONS)

MISCONCEPTIONS = (
    Misconception(
        "algbw_as_busbw", "the algorithm bandwidth taken for the bus bandwidth",
        "nccl-tests prints two rates: the buffer over the time (algbw) and that times 2(n − 1)/n "
        "(busbw), the rate each link of a ring carries. Only busbw compares with a link's rate.",
        "ch6-collectives"),
    Misconception(
        "efficiency_on_wrong_link", "a bus efficiency carried to a link it was not measured on",
        "An efficiency measured inside a node (NVLink) describes NVLink; across nodes the ring is "
        "bound by the node's NICs, and the efficiency measured there applies.",
        "ch6-collectives"),
    Misconception(
        "pct_peak_as_mfu", "\"percent of peak\" counted with recomputation taken for MFU",
        "A throughput that counts the recomputed forward pass is a hardware-FLOP figure (an HFU); the "
        "MFU is that times model FLOPs over executed FLOPs, about three quarters with full recompute.",
        "ch6-metrics"),
    Misconception(
        "ratio_inverted", "the FLOP ratio applied upside down",
        "MFU = HFU × F_model / F_hw: the model's FLOPs are the smaller, so the MFU is the smaller "
        "share. Dividing by the ratio makes a recomputing run look better than its HFU.",
        "ch6-metrics"),
    Misconception(
        "recompute_mismatch", "the recomputation counted for the wrong policy",
        "Full recomputation repeats every layer's forward, 24 B s l h² (1 + s/6h) more FLOPs; selective "
        "recomputation repeats only the attention scores, 4 B s² h l; none repeats nothing.",
        "ch6-metrics"),
    Misconception(
        "error_inverted", "the error taken as measured ÷ predicted − 1",
        "The chapter's error is predicted ÷ measured − 1: negative when the model predicts too little.",
        "ch6-validate"),
    Misconception(
        "compute_as_loss", "compute named as a loss",
        "Compute is the work itself; the losses are what the step spends besides it: the bubble, the "
        "exposed transfers and the stragglers.",
        "ch6-predict"),
    Misconception(
        "bubble_dominates", "the pipeline bubble assumed to be the loss that grows, without computing it",
        "Compute the parts before naming one. Here six interleaved chunks keep the bubble to a few percent "
        "of the step. Which part then grows depends on the run and on what its stack hides: with none "
        "of the gradient all-reduce hidden (no overlap, which the data assumes for Megatron-LM as "
        "MegaScale ran it) it is the data-parallel wait, whose bytes per GPU do not shrink; a stack that "
        "hid a large enough share of it would rank it below the tensor-parallel wait.",
        "ch6-bubble-drop"),
    Misconception(
        "interleaving_ignored", "the schedule's interleaving left at its assumed value",
        "The bubble is (p − 1)/(v m): with v unpublished, the v that brings the prediction to the "
        "measurement says how much less the real schedule idled.",
        "ch6-llama"),
    Misconception(
        "gpus_as_nodes", "GPUs counted where the failure rate is per node",
        "Meta's rates are per node-day, and a node holds 8 GPUs: a job of N GPUs has N/8 nodes that can "
        "fail. Counting GPUs makes failures eight times as frequent.",
        "ch6-failures"),
    Misconception(
        "per_thousand_dropped", "a rate per 1,000 node-days used as a rate per node-day",
        "6.50 failures per 1,000 node-days is 0.0065 per node-day: a factor of 1,000.",
        "ch6-failures"),
    Misconception(
        "restart_ignored", "the restart left out of the effective training-time ratio",
        "Each failure costs the rework since the last checkpoint and the time to get back to training; "
        "at Llama 3's rate ten minutes of restart are more than five percent of the wall clock.",
        "ch6-ettr"),
)
"""Chapter 6's misconceptions, registered on import."""

register(*MISCONCEPTIONS)
