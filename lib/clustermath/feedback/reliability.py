"""Chapter 2's misconceptions, for the exercises' feedback (``clustermath.feedback``).

Importing this module adds the chapter's section labels to
``feedback.SECTION_TITLES`` and registers the mistakes the chapter-2
exercises recognise, so that a test can name them::

    import clustermath.feedback.reliability  # registers chapter 2's misconceptions
    from clustermath import feedback as fb
    fb.suspect("young_without_two", 1138.4)

Registering twice is harmless (``register`` accepts an identical item again).
"""
from __future__ import annotations

from .core import Misconception, register, register_sections

__all__ = ["CH2_SECTIONS", "MISCONCEPTIONS"]

CH2_SECTIONS: dict[str, tuple[int, str]] = {
    "ch2-record": (2, "The record"),
    "ch2-divides": (2, "Reliability divides"),
    "ch2-young": (2, "Young's interval"),
    "ch2-stragglers": (2, "Stragglers"),
    "ch2-eject": (2, "Eject first, diagnose later"),
}
"""MyST label -> (chapter, short title) for the sections chapter 2's feedback cites."""

register_sections(CH2_SECTIONS)

MISCONCEPTIONS = (
    Misconception(
        "planned_counted", "planned interruptions counted as failures",
        "Scheduled stops (maintenance, upgrades, changes to the run) are not random failures; the "
        "failure rate counts the unexpected interruptions only, 419 of Llama 3's 466.",
        "ch2-divides"),
    Misconception(
        "hours_vs_seconds", "hours and seconds mixed (a factor of 60 or 3,600)",
        "A rate per GPU-hour gives a mean time in hours; Young's formula needs the save time and the "
        "mean time between failures in the same unit. Convert before taking the square root.",
        "ch2-divides"),
    Misconception(
        "days_not_hours", "the snapshot's days used where hours belong (a factor of 24)",
        "A rate per GPU-hour divides the failures by GPUs × days × 24.",
        "ch2-divides"),
    Misconception(
        "young_without_two", "√(δM) for Young's interval, without the factor 2",
        "A failure loses half an interval on average, so the rework share is τ/2M and the optimum "
        "is √(2δM); dropping the 2 is the same as assuming every failure loses a whole interval.",
        "ch2-young"),
    Misconception(
        "one_term_only", "one of the loss's two terms taken for the whole loss",
        "At Young's interval saving and rework cost the same, √(δ/2M) each; the loss is their sum, "
        "√(2δ/M), twice either term.",
        "ch2-young"),
    Misconception(
        "loss_not_squared", "the save time taken as proportional to the loss",
        "The loss at the optimum is √(2δ/M), so the save that allows a loss L is δ = L²M/2: halving "
        "the loss needs a save four times cheaper.",
        "ch2-young"),
    Misconception(
        "flat_as_linear", "an interval k times off taken to cost k times the loss",
        "Off by a factor k in either direction the first-order loss is (k + 1/k)/2 times its "
        "minimum: 1.25 times at k = 2 and 5.05 times at k = 10.",
        "ch2-young"),
    Misconception(
        "straggler_averaged", "the slow rank averaged over all the ranks",
        "A synchronous step waits for its slowest rank, so one rank at speed s slows the whole job "
        "to s, whatever the number of ranks: a maximum, not a mean.",
        "ch2-stragglers"),
    Misconception(
        "break_even_without_tax", "the ejection time given as the break-even diagnosis time",
        "Keeping a rank at speed s costs the job a share 1 − s of every hour it stays; ejecting it "
        "costs the whole job once, for E. They cost the same after E / (1 − s).",
        "ch2-eject"),
)
"""Chapter 2's misconceptions, registered on import."""

register(*MISCONCEPTIONS)
