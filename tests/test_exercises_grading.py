"""The exercises grade as they should: solutions full marks, blank copies zero, mistakes named.

These tests run otter-grader and take about a minute, so `make unit` skips them
and `make exercises-check` (part of `make test`) runs them with
EXERCISE_GRADING_TESTS=1.

* In process (fast): every master's solutions pass every test, public and
  hidden; every unmodified student copy fails every test; and a planted wrong
  answer for each exercise costs points on its own question only, with a
  message that names the right misconception and its section.
* End to end (slow): the bulk grader (sandboxed, see tests/test_grading_sandbox.py
  for the attacks), on one folder holding the solutions, a blank copy, a wrong,
  a crashing and an endless notebook, a text file, an empty file and broken
  JSON, grades what can be graded, gives the rest zero with a clear status,
  and leaves the originals untouched.
"""
from __future__ import annotations

import copy
import csv
import hashlib
import os
import pathlib
import sys

import nbformat
import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "tools" / "grading"))

import exercises  # noqa: E402  (tools/exercises.py)
import sandbox  # noqa: E402  (tools/grading/sandbox.py)

pytestmark = [
    pytest.mark.skipif(
        os.environ.get("EXERCISE_GRADING_TESTS") != "1",
        reason="runs otter-grader (about a minute): `make exercises-check` runs it",
    ),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),  # traitlets, inside otter
    pytest.mark.usefixtures("otter_assign_once"),  # tests/conftest.py: each master assigned once
]

MASTERS = exercises.masters()


@pytest.fixture(scope="module")
def assigned(tmp_path_factory):
    """For every master: otter's autograder notebook (all tests in its metadata) and the committed student copy."""
    out = {}
    for master in MASTERS:
        dest = tmp_path_factory.mktemp(master.stem)
        exercises.otter_assign(master, dest / "dist")
        autograder_nb = nbformat.read(dest / "dist" / "autograder" / master.name, as_version=4)
        student_nb = nbformat.read(exercises.EXERCISES / master.name, as_version=4)
        out[master.stem] = (autograder_nb, student_nb)
    return out


def run_notebook(nb: nbformat.NotebookNode, extra: str = "") -> dict:
    """Execute a notebook's code in this process, without otter's plumbing cells, then ``extra``."""
    namespace: dict = {"__name__": "__exercise__"}
    for cell in nb.cells:
        if cell.cell_type == "code" and not exercises._is_plumbing(cell):
            try:
                exec(compile(cell.source, "<cell>", "exec"), namespace)
            except Exception:  # a blank copy's cells may fail; the tests then fail too
                pass
    if extra:
        exec(compile(extra, "<planted>", "exec"), namespace)
    return namespace


def grade_in_process(autograder_nb: nbformat.NotebookNode, namespace: dict) -> dict:
    """Run every test file of the notebook's metadata: {question: (score, possible, failure messages)}."""
    from otter.test_files.exception_test import ExceptionTestFile

    results = {}
    for name, source in autograder_nb.metadata["otter"]["tests"].items():
        test_file = ExceptionTestFile.from_string(source, path=f"{name}.py")
        test_file.run(namespace)
        failures = [r.message for r in test_file.test_case_results if not r.passed]
        results[name] = (test_file.score, test_file.possible, failures)
    return results


@pytest.fixture(scope="module")
def solved(assigned):
    return {stem: run_notebook(ag) for stem, (ag, _) in assigned.items()}


@pytest.mark.parametrize("stem", [m.stem for m in MASTERS])
def test_every_master_scores_full_marks(assigned, solved, stem):
    autograder_nb, _ = assigned[stem]
    results = grade_in_process(autograder_nb, solved[stem])
    lost = {q: failures for q, (score, possible, failures) in results.items() if score != possible}
    assert not lost, f"the solutions of {stem} fail their own tests: {lost}"
    assert len(results) >= 1


@pytest.mark.parametrize("stem", [m.stem for m in MASTERS])
def test_every_blank_student_copy_scores_zero_on_every_question(assigned, stem):
    autograder_nb, student_nb = assigned[stem]
    results = grade_in_process(autograder_nb, run_notebook(student_nb))
    scored = {q: score for q, (score, _, _) in results.items() if score != 0}
    assert not scored, f"an unmodified copy of {stem} earns points: {scored}"


@pytest.mark.parametrize("stem", [m.stem for m in MASTERS])
def test_student_copies_hold_public_tests_only(assigned, stem):
    autograder_nb, student_nb = assigned[stem]
    public = student_nb.metadata["otter"]["tests"]
    assert set(public) == set(autograder_nb.metadata["otter"]["tests"])
    assert all("hidden=True" not in source for source in public.values())
    assert any("hidden=True" in source for source in autograder_nb.metadata["otter"]["tests"].values())
    text = "".join(cell.source for cell in student_nb.cells)
    assert "BEGIN SOLUTION" not in text and "# HIDDEN" not in text


# Planted mistakes: (question, code run after the solutions, the misconception the
# message must name, the section it must cite). At least one per exercise.
PLANTED_CH1 = [
    ("q1", "q1_overlap = 1 - 410 / 700", "hidden_share_of_step", "ch1-scaling"),
    ("q2", "def flat_ring_ms(bytes_gb, nodes, gpus_per_node, fabric_gbps):\n"
           "    return bytes_gb * 8 / fabric_gbps * 1000", "ignore_topology", "ch1-collective"),
    ("q2", "q2_largest_nodes = 8", "both_directions", "ch1-collective"),
    ("q3", "q3_microbatches = 6", "whole_model_per_stage", "ch1-pipeline"),
    ("q4", "q4_interval_min = 11", "units", "ch1-checkpoint"),
    ("q5", "q5_mean_rate = 90", "truncation", "ch1-failures"),
    ("q6", "q6_step_64 = 200.0", "assume_uniform", "ch1-stragglers"),
    ("q7", "q7_batch = 406", "both_directions", "ch1-cxl"),
    ("q8", "q8_max_demand_gbps = 800", "assume_full", "ch1-fabric"),
    ("q9", "def step_ms(compute_ms, slowest_ms, stages, microbatches, comm_ms, fabric_slowdown=1.0):\n"
           "    return slowest_ms + comm_ms * fabric_slowdown", "ignore_bubble", "ch1-pipeline"),
    ("q9", "q9_saving_at_41 = 64 * 0.41 / (32 * 0.70) - 1", "speed_vs_time", "ch1-debug-lab"),
    ("q10", "q10_min_nodes = 973", "off_by_one", "ch1-failures"),
]

PLANTED_CH2 = [
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

PLANTED_CH3 = [
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

PLANTED_CH4 = [
    ("q1", "q1_queued_mb = 31 * 800 * 60 * 1e-3", "bits_for_bytes", "ch4-incast"),
    ("q1", "def incast_mb(senders, port_gbps, rtt_us, notify_us):\n"
           "    return senders * port_gbps / 8 * (rtt_us + notify_us) * 1e-3", "all_senders_excess", "ch4-incast"),
    ("q1", "q1_queued_mb = 31 * 100 * 10 * 1e-3", "window_rtt_only", "ch4-incast"),
    ("q2", "q2_saving_pct = 31.03", "radix_not_ports", "ch4-spine-cost"),
    ("q2", "q2_removed_musd = 58.523648", "link_ends_once", "ch4-spine-cost"),
    ("q3", "q3_idle = 48 * (1 - 1 / 48) ** 32", "n_k_swapped", "ch4-hashing"),
    ("q4", "q4_availability = 0.5", "all_up_as_per_host", "ch4-redundancy"),
    ("q4", "q4_availability = 1 - 0.5 / 1024", "linear_availability", "ch4-redundancy"),
    ("q5", "q5_uplinks, q5_tolerated = 22, 2", "floor_uplinks", "ch4-redundancy"),
    ("q3", "def simulated_idle(links, flows, trials, seed=0):\n"
           "    return links * (1 - 1 / links) ** flows", "formula_not_simulation", "ch4-hashing"),
    ("q3", "def simulated_idle(links, flows, trials, seed=0):\n"
           "    picks = np.random.default_rng(0).integers(0, links, size=(trials, flows))\n"
           "    return float(np.mean([links - len(set(row)) for row in picks]))", "seed_ignored", "ch4-hashing"),
    ("q6", "q6_leaders_moe = ('rail_only',)", "moe_ignored", "ch4-choose"),
    ("q6", "q6_leaders_moe = ('hpn',)", "tie_broken_by_order", "ch4-choose"),
    ("q6", "q6_rail_only_at_50 = (0, 0)", "tie_broken_by_order", "ch4-choose"),
    ("q6", "def leaders(scores):\n    return (max(scores, key=scores.get),)", "tie_broken_by_order", "ch4-choose"),
    ("q6", "def tally(rules):\n    out = {}\n    for pattern, points, _ in rules:\n"
           "        out[pattern] = out.get(pattern, 0) + points\n    return out", "untouched_pattern_missing",
     "ch4-choose"),
]

PLANTED_CH5 = [
    ("q1", "q1_rack = 5", "mod_of_failed", "ch5-fragmentation"),
    ("q1", "def idle_gpus(domain_gpus, failed_gpus, tp):\n    return failed_gpus % tp", "mod_of_failed",
     "ch5-fragmentation"),
    ("q1", "q1_servers = 0", "failures_ignored", "ch5-fragmentation"),
    ("q2", "q2_four = 0.0722", "eight_gpu_rate_for_four", "ch5-trace"),
    ("q2", "q2_per_gpu = 0.0722 / 8", "rate_scaled_linearly", "ch5-trace"),
    ("q3", "def waste_bound(tp, gpus_per_node, node_rate, hops):\n"
           "    return 2 * (tp - gpus_per_node) * hops * node_rate", "pk_as_kp", "ch5-bound"),
    ("q3", "q3_k4 = 4", "eight_gpu_rate_for_four", "ch5-trace"),
    ("q3", "q3_k4 = 2", "gpu_rate_per_node", "ch5-trace"),
    ("q4", "q4_k2 = 0", "remainder_per_ring", "ch5-ring-builder"),
    ("q4", "def ring_idle_gpus(failed, group_nodes, hops, gpus_per_node):\n"
           "    return (len(failed) - sum(failed)) % group_nodes * gpus_per_node",
     "remainder_per_ring", "ch5-ring-builder"),
    ("q4", "q4_static = 16", "static_uses_backups", "ch5-question"),
    ("q4", "def static_idle_gpus(failed, group_nodes, gpus_per_node):\n"
           "    whole = len(failed) // group_nodes * group_nodes\n"
           "    rings = [failed[i:i + group_nodes] for i in range(0, whole, group_nodes)]\n"
           "    return sum(len(r) - sum(r) for r in rings if any(r)) * gpus_per_node",
     "static_tail_ignored", "ch5-ring-builder"),
    ("q5", "q5_k_sim = 3", "bound_for_simulation", "ch5-bound-slack"),
    ("q5", "q5_static_same = False", "static_uses_backups", "ch5-question"),
    ("q6", "q6_light = 0.48", "db_linear", "ch5-measured"),
    ("q6", "def pj_per_bit(watts, gbps):\n    return watts / gbps", "pj_units", "ch5-measured"),
    ("q7", "quiz_1 = 'b'", "failures_ignored", "ch5-fragmentation"),
    ("q7", "quiz_1 = 'd'", "failed_counted_as_idle", "ch5-fragmentation"),
    ("q8", "quiz_2 = 'b'", "eight_gpu_rate_for_four", "ch5-trace"),
    ("q8", "quiz_2 = 'd'", "pk_as_kp", "ch5-bound"),
    ("q9", "quiz_3 = 'a'", "static_uses_backups", "ch5-question"),
    ("q10", "quiz_4 = 'd'", "bound_for_simulation", "ch5-bound-slack"),
    ("q11", "quiz_5 = 'a'", "subline_any_length", "ch5-tor"),
    ("q11", "quiz_5 = 'd'", "dp_inside_tp_group", "ch5-tor"),
]

PLANTED_CH6 = [
    ("q1", "q1_efficiency = 232.54 / 600", "both_directions", "ch1-collective"),
    ("q1", "def bus_bandwidth(algbw_GBps, ranks):\n    return algbw_GBps", "algbw_as_busbw", "ch6-collectives"),
    ("q1", "q1_predicted_GBps = 0.80 * 450", "efficiency_on_wrong_link", "ch6-collectives"),
    ("q1", "q1_error = 370 / q1_predicted_GBps - 1", "error_inverted", "ch6-validate"),
    ("q2", "q2_mfu = 148 / 312", "pct_peak_as_mfu", "ch6-metrics"),
    ("q2", "def flop_ratio(layers, hidden, seq_len, vocab, recompute):\n"
           "    l, h, s, v = layers, hidden, seq_len, vocab\n"
           "    model = 72 * (1 + s / (6 * h) + v / (12 * h * l))\n"
           "    full = model + 24 * (1 + s / (6 * h))\n"
           "    return full / model if recompute != 'none' else 1.0", "ratio_inverted", "ch6-metrics"),
    ("q3", "q3_culprit = 'compute'", "compute_as_loss", "ch6-predict"),
    ("q3", "q3_best_v = 2", "interleaving_ignored", "ch6-llama"),
    ("q4", "q4_per_node_year = 365 * 1000 * 419 / (2_048 * 54)", "per_thousand_dropped", "ch6-failures"),
    ("q4", "def job_mtbf_h(rate_per_1000, gpus, gpus_per_node=8):\n    return 24 / (gpus * rate_per_1000 / 1000)",
     "gpus_as_nodes", "ch6-failures"),
    ("q5", "q5_ettr = ettr_first_order(tau, save_s, mtbf_s, 0)", "restart_ignored", "ch6-ettr"),
    ("q5", "def young_interval_s(save_s, mtbf_s):\n    return math.sqrt(save_s * mtbf_s)", "young_without_two",
     "ch2-young"),
    ("q6", "q6_large = 'bubble'", "bubble_dominates", "ch6-bubble-drop"),
    ("q6", "def largest_loss(parts):\n    return max(parts, key=parts.get)", "compute_as_loss", "ch6-predict"),
]

PLANTED = (
    [("ch01_exercises", *row) for row in PLANTED_CH1]
    + [("ch02_exercises", *row) for row in PLANTED_CH2]
    + [("ch03_exercises", *row) for row in PLANTED_CH3]
    + [("ch04_exercises", *row) for row in PLANTED_CH4]
    + [("ch05_exercises", *row) for row in PLANTED_CH5]
    + [("ch06_exercises", *row) for row in PLANTED_CH6]
)


@pytest.mark.parametrize("stem, question, planted, key, section", PLANTED,
                         ids=[f"{s[:4]}-{q}-{k}-{i}" for i, (s, q, _, k, _) in enumerate(PLANTED)])
def test_a_planted_mistake_fails_its_question_and_names_the_misconception(
        assigned, solved, stem, question, planted, key, section):
    import clustermath.feedback.placement  # noqa: F401  (registers chapter 3's misconceptions)
    import clustermath.feedback.reliability  # noqa: F401  (registers chapter 2's misconceptions)
    import clustermath.feedback.fabric_designs  # noqa: F401  (registers chapter 4's misconceptions)
    import clustermath.feedback.validation  # noqa: F401  (registers chapter 6's misconceptions)
    from clustermath.feedback import CATALOGUE

    autograder_nb, _ = assigned[stem]
    namespace = dict(solved[stem])
    exec(compile(planted, "<planted>", "exec"), namespace)
    results = grade_in_process(autograder_nb, namespace)
    score, possible, failures = results[question]
    assert score < possible, f"{question} still earns full marks with {planted!r}"
    name = CATALOGUE[key].name
    named = [m for m in failures if name in m and f"(#{section})" in m]
    assert named, f"no failing test of {question} names {name!r} and #{section}:\n" + "\n\n".join(failures)
    others = {q: s for q, (s, p, _) in results.items() if q != question and s != p}
    assert not others, f"the mistake in {question} also cost points elsewhere: {others}"


@pytest.mark.parametrize("stem, question, planted, key, section", PLANTED,
                         ids=[f"{s[:4]}-{q}-{k}-{i}" for i, (s, q, _, k, _) in enumerate(PLANTED)])
def test_the_grader_replays_a_planted_mistake_and_names_it_without_the_answer(
        solved, plan_cache, stem, question, planted, key, section):
    """The same mistakes through make grade's pass 3: plain values in, concealed feedback out."""
    import plan as plans_mod
    import verdict
    from clustermath.feedback import CATALOGUE

    plan = next(p for p in plans_mod.plans(plan_cache).values() if p.notebook == f"{stem}.ipynb")
    namespace = dict(solved[stem])
    exec(compile(planted, "<planted>", "exec"), namespace)
    graded = verdict.grade(plan, verdict.answers_from_namespace(plan, namespace))
    scores = graded.scores(plan)
    assert scores[question] < plan.points[question], f"{question} still earns full marks with {planted!r}"
    assert all(v == plan.points[q] for q, v in scores.items() if q != question), scores
    hidden = [c.message for c in graded.cases if c.question == question and c.hidden and not c.passed]
    assert hidden, f"no hidden check of {question} fails"
    name = CATALOGUE[key].name
    assert any(name in m and f"(#{section})" in m for m in hidden + [
        c.message for c in graded.cases if c.question == question and not c.passed]), hidden
    assert not any("right answer" in m for m in hidden), hidden


def _sha(path: pathlib.Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.skipif(bool(sandbox.unavailable_reason()),
                    reason="SKIPPED LOUDLY: the bulk grader needs bubblewrap (apt-get install bubblewrap)")
@pytest.mark.timing
def test_the_bulk_grader_survives_a_difficult_folder(assigned, tmp_path, plan_cache):
    import grade  # tools/grade.py

    autograder_nb, student_nb = assigned["ch01_exercises"]
    folder = tmp_path / "submissions"
    folder.mkdir()

    def setup_cell(nb):
        return next(c for c in nb.cells if c.cell_type == "code" and "from clustermath import" in c.source)

    endless = copy.deepcopy(autograder_nb)
    setup_cell(endless).source += "\nwhile True:\n    pass\n"
    nbformat.write(endless, folder / "a_endless.ipynb")  # first, so it overlaps the others
    nbformat.write(autograder_nb, folder / "good.ipynb")
    nbformat.write(student_nb, folder / "blank.ipynb")
    wrong = copy.deepcopy(autograder_nb)
    for cell in wrong.cells:
        if cell.cell_type == "code" and "q2_largest_nodes = " in cell.source:
            cell.source += "\nq2_largest_nodes = 8\n"
    wrong.cells.append(nbformat.v4.new_code_cell("raise RuntimeError('a cell that raises')"))
    wrong.cells.append(nbformat.v4.new_code_cell("q8_max_demand_gbps = 800  # after the raising cell"))
    nbformat.write(wrong, folder / "wrong.ipynb")
    crashing = copy.deepcopy(autograder_nb)
    setup_cell(crashing).source = "import os\nos._exit(3)\n"
    nbformat.write(crashing, folder / "crashing.ipynb")
    (folder / "notes.txt").write_text("my answers are 4 and 200\n")
    (folder / "empty.ipynb").write_bytes(b"")
    (folder / "broken.ipynb").write_text('{"cells": [')
    before = {p.name: (_sha(p), p.stat().st_mtime_ns) for p in folder.iterdir()}

    out = tmp_path / "out"
    outcomes = grade.grade_folder(folder, out, timeout=8, call_timeout=2, jobs=2, cache=plan_cache)

    assert {p.name: (_sha(p), p.stat().st_mtime_ns) for p in folder.iterdir()} == before
    rows = {row["file"]: row for row in csv.DictReader(open(out / "files.csv"))}
    assert set(rows) == set(before) and len(outcomes) == len(before)
    grades = {row["file"]: row for row in csv.DictReader(open(out / "grades-ch01.csv"))}
    questions = [f"q{i}" for i in range(1, 11)]
    assert list(grades["good.ipynb"].keys())[:3] == ["file", "student", "status"]

    expected_status = {
        "good.ipynb": "graded", "blank.ipynb": "graded", "wrong.ipynb": "graded-with-errors",
        "crashing.ipynb": "crashed", "a_endless.ipynb": "timeout", "notes.txt": "not-a-notebook",
        "empty.ipynb": "empty", "broken.ipynb": "not-a-notebook",
    }
    assert {f: r["status"] for f, r in rows.items()} == expected_status
    assert grades["good.ipynb"]["total"] == grades["good.ipynb"]["possible"] == "10"
    assert all(grades["good.ipynb"][q] == "1" for q in questions)
    assert all(grades["blank.ipynb"][q] == "0" for q in questions) and grades["blank.ipynb"]["total"] == "0"
    for name in ("crashing.ipynb", "a_endless.ipynb"):
        assert grades[name]["total"] == "0" and all(grades[name][q] == "0" for q in questions), name
        assert grades[name]["possible"] == "10"
    for name in ("crashing.ipynb", "a_endless.ipynb", "notes.txt", "empty.ipynb", "broken.ipynb"):
        assert rows[name]["total"] == "0" and rows[name]["note"], f"{name} has no explanation in the CSV"
    assert set(grades) == {"good.ipynb", "blank.ipynb", "wrong.ipynb", "crashing.ipynb", "a_endless.ipynb"}
    wrong_row = grades["wrong.ipynb"]
    assert float(wrong_row["q2"]) < 1 and float(wrong_row["q8"]) < 1
    assert all(wrong_row[q] == "1" for q in questions if q not in ("q2", "q8"))
    assert "RuntimeError" in wrong_row["note"]

    feedback = (out / "feedback" / grade.feedback_name("wrong.ipynb")).read_text()
    assert "a bidirectional figure used as a one-way rate" in feedback and "#ch1-collective" in feedback
    assert "the full-bisection figure" in feedback and "#ch1-fabric" in feedback
    assert "hidden check" in feedback and "right answer" not in feedback
    assert "ran out of" in (out / "feedback" / grade.feedback_name("a_endless.ipynb")).read_text()
    assert sorted(p.name for p in (out / "feedback").iterdir()) == sorted(grade.feedback_name(f) for f in before)
    assert {r["feedback"] for r in rows.values()} == {f"feedback/{grade.feedback_name(f)}" for f in before}
