"""Chapter 2's exercises: a planted wrong answer costs points on its own question and names its mistake.

The generic checks (solutions score full marks, blank copies zero, student
copies hold public tests only) already cover every master in
test_exercises_grading.py; this file adds chapter 2's planted mistakes, one or
more per exercise. Like that file it runs otter-grader, so it is skipped
unless EXERCISE_GRADING_TESTS=1 (`make exercises-check`).
"""
from __future__ import annotations

import os

import pytest

from test_exercises_grading import assigned, grade_in_process, solved  # noqa: F401  (fixtures)

pytestmark = [
    pytest.mark.skipif(
        os.environ.get("EXERCISE_GRADING_TESTS") != "1",
        reason="runs otter-grader: `make exercises-check` runs it",
    ),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]

# (question, code run after the solutions, the misconception the message must name, the section it must cite)
PLANTED = [
    ("q1", "q1_rate = 160 / (8_192 * 30 * 24)", "planned_counted", "ch2-divides"),
    ("q1", "def gpu_failure_rate(unexpected, gpus, days):\n"
           "    return unexpected / (gpus * days)", "days_not_hours", "ch2-divides"),
    ("q1", "q1_mtbf_h = 8_192 * 30 * 24 / 136 / 32_768 * 3600", "hours_vs_seconds", "ch2-divides"),
    ("q1", "q1_mtbf_h = 8_192 * 30 * 24 / 136", "ignore_failures", "ch2-divides"),
    ("q2", "q2_interval_s = math.sqrt(90 * 14_400)", "young_without_two", "ch2-young"),
    ("q2", "def young_interval_s(save_s, mtbf_s):\n"
           "    return math.sqrt(save_s * mtbf_s)", "young_without_two", "ch2-young"),
    ("q2", "q2_interval_s = math.sqrt(2 * 90 * 4)", "hours_vs_seconds", "ch2-divides"),
    ("q2", "q2_loss = math.sqrt(90 / 28_800)", "one_term_only", "ch2-young"),
    ("q3", "q3_save_s = 0.05 * 7_200 / 2", "loss_not_squared", "ch2-young"),
    ("q3", "q3_penalty = 4", "flat_as_linear", "ch2-young"),
    ("q4", "q4_step_longer_pct = 20.0", "speed_vs_time", "ch2-stragglers"),
    ("q4", "q4_throughput_lost_pct = 20 / 4_096", "straggler_averaged", "ch2-stragglers"),
    ("q4", "q4_break_even_min = 12", "break_even_without_tax", "ch2-eject"),
]


@pytest.mark.parametrize("question, planted, key, section", PLANTED,
                         ids=[f"{q}-{k}-{i}" for i, (q, _, k, _) in enumerate(PLANTED)])
def test_a_planted_chapter_2_mistake_is_named(assigned, solved, question, planted, key, section):  # noqa: F811
    import clustermath.reliability_feedback  # noqa: F401  (registers chapter 2's misconceptions)
    from clustermath.feedback import CATALOGUE

    autograder_nb, _ = assigned["ch02_exercises"]
    namespace = dict(solved["ch02_exercises"])
    exec(compile(planted, "<planted>", "exec"), namespace)
    results = grade_in_process(autograder_nb, namespace)
    score, possible, failures = results[question]
    assert score < possible, f"{question} still earns full marks with {planted!r}"
    name = CATALOGUE[key].name
    named = [m for m in failures if name in m and f"(#{section})" in m]
    assert named, f"no failing test of {question} names {name!r} and #{section}:\n" + "\n\n".join(failures)
    others = {q: s for q, (s, p, _) in results.items() if q != question and s != p}
    assert not others, f"the mistake in {question} also cost points elsewhere: {others}"
