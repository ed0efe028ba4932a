"""Chapter 3's exercises: a planted wrong answer costs points on its own question and names its mistake.

The generic checks (solutions score full marks, blank copies zero, student
copies hold public tests only) already cover every master in
test_exercises_grading.py; this file adds chapter 3's planted mistakes, one or
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
    ("q1", "q1_racks = 192", "partial_domain_dropped", "ch3-llama-nvl72"),
    ("q1", "def domains_needed(tp, pp, dp, domain_size):\n"
           "    d = -(-tp * pp * dp // domain_size)\n"
           "    return d, d * domain_size - tp * pp * dp", "groups_split", "ch3-misfits"),
    ("q1", "q1_idle = 32", "stranded_ignored", "ch3-misfits"),
    ("q2", "q2_hops = 113", "hops_across_replicas", "ch3-rank-order"),
    ("q2", "def crossing_hops(tp, pp, dp, domain_size):\n"
           "    k = domain_size // tp\n"
           "    return sum((g // k) != ((g + 1) // k) for g in range(pp * dp - 1))",
     "hops_across_replicas", "ch3-rank-order"),
    ("q2", "q2_hops = 792", "links_vs_hops", "ch3-rank-order"),
    ("q3", "q3_inside = 192", "tp_innermost_assumed", "ch3-order"),
    ("q3", "q3_crossing = 11", "tp_innermost_assumed", "ch3-order"),
    ("q4", "q4_tokens = 63 / 64 * 70e9 * 2 / (4 * 8192 * 2)", "stage_average_dropped", "ch3-three-cuts"),
    ("q4", "q4_tokens = 63 / 64 * 70e9 * 2 / (3 * 8192 * 2) / 8", "no_scatter_gather", "ch3-three-cuts"),
    ("q4", "q4_pipeline_heavier = True", "per_step_not_per_replica", "ch3-three-cuts"),
]


@pytest.mark.parametrize("question, planted, key, section", PLANTED,
                         ids=[f"{q}-{k}-{i}" for i, (q, _, k, _) in enumerate(PLANTED)])
def test_a_planted_chapter_3_mistake_is_named(assigned, solved, question, planted, key, section):  # noqa: F811
    import clustermath.placement_feedback  # noqa: F401  (registers chapter 3's misconceptions)
    from clustermath.feedback import CATALOGUE

    autograder_nb, _ = assigned["ch03_exercises"]
    namespace = dict(solved["ch03_exercises"])
    exec(compile(planted, "<planted>", "exec"), namespace)
    results = grade_in_process(autograder_nb, namespace)
    score, possible, failures = results[question]
    assert score < possible, f"{question} still earns full marks with {planted!r}"
    name = CATALOGUE[key].name
    named = [m for m in failures if name in m and f"(#{section})" in m]
    assert named, f"no failing test of {question} names {name!r} and #{section}:\n" + "\n\n".join(failures)
    others = {q: s for q, (s, p, _) in results.items() if q != question and s != p}
    assert not others, f"the mistake in {question} also cost points elsewhere: {others}"
