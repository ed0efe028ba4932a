"""Every student their own numbers (issue 31): each chapter that declares a case grades right on it.

For every master with a ``case`` cell: its tests pass on the default case and on 50 drawn cases (the
master's solutions run on each case and replayed through the grader's pass 3); a blank student copy
scores zero on drawn cases; and planted mistakes of chapters 1 to 5, written on the student's own case,
are named on drawn cases as on the default one. Gated like tests/test_exercises_grading.py (it runs
``otter assign``): `make exercises-check` runs it.
"""
from __future__ import annotations

import os
import pathlib
import sys

import nbformat
import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "tools" / "grading"))

import exercises  # noqa: E402

pytestmark = [
    pytest.mark.skipif(os.environ.get("EXERCISE_GRADING_TESTS") != "1",
                       reason="runs otter assign: `make exercises-check` runs it"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.usefixtures("otter_assign_once"),  # tests/conftest.py: each master assigned once
]

KEY = b"a test key, not a course's key!!"
DRAWN = [f"student-{i:02d}" for i in range(50)]
WITH_CASE = [m.stem for m in exercises.masters()
             if exercises.case_of(nbformat.read(m, as_version=4)) is not None]


_ENVIRONMENTS: dict = {}
"""(stem, case) -> the master's namespace on that case, for the cases both the drawn-case test and the
planted mistakes run (the default and DRAWN[:12]): executing a master costs up to a second."""


def master_environment(stem: str, autograder_nb, case) -> dict:
    """The master's namespace on ``case``; a fresh shallow copy each time (a planted mistake rebinds
    names in it), executed once per case of the default and DRAWN[:12]."""
    import plan as plans_mod

    key = (stem, case)
    if key not in _ENVIRONMENTS:
        return plans_mod.master_environment(autograder_nb, case)
    if _ENVIRONMENTS[key] is None:
        _ENVIRONMENTS[key] = plans_mod.master_environment(autograder_nb, case)
    return dict(_ENVIRONMENTS[key])


@pytest.fixture(scope="module")
def graders(plan_cache):
    """Each chapter's plan (tests/conftest.py builds them once) and its autograder notebook."""
    import plan as plans_mod

    built = {p.notebook: p for p in plans_mod.plans(plan_cache).values()}
    out = {}
    for stem in WITH_CASE:
        master = exercises.SOLUTIONS / f"{stem}.ipynb"
        out[stem] = (built[master.name], plans_mod.autograder_notebook(master))
        import verdict
        from clustermath.feedback.variants import draw

        declared = verdict.case_for(out[stem][0])
        for case in [declared] + [draw(KEY, s, declared) for s in DRAWN[:12]]:
            _ENVIRONMENTS.setdefault((stem, case), None)
    return out


def test_chapter_2_declares_a_case():
    assert "ch02_exercises" in WITH_CASE


@pytest.mark.parametrize("stem", WITH_CASE)
def test_solutions_pass_on_the_default_and_50_drawn_cases(graders, stem):
    import verdict
    from clustermath.feedback.variants import draw

    plan, autograder_nb = graders[stem]
    declared = verdict.case_for(plan)
    cases = [declared] + [draw(KEY, s, declared) for s in DRAWN]
    assert len(set(cases)) >= 20
    for case in cases:
        env = master_environment(stem, autograder_nb, case)
        graded = verdict.grade(plan, verdict.answers_from_namespace(plan, env), case=case.values)
        failed = [(c.question, c.name, c.message[:200]) for c in graded.cases if not c.passed]
        assert not failed, f"{case}: {failed}"


@pytest.mark.parametrize("stem", WITH_CASE)
def test_a_blank_copy_scores_zero_on_drawn_cases(graders, stem):
    import verdict
    from clustermath.feedback.variants import draw

    plan, _ = graders[stem]
    blank = nbformat.read(exercises.EXERCISES / f"{stem}.ipynb", as_version=4)
    env: dict = {"__name__": "__blank__"}
    for cell in blank.cells:
        if cell.cell_type == "code" and not exercises._is_plumbing(cell):
            try:
                exec(compile(cell.source, "<blank>", "exec"), env)
            except Exception:  # noqa: BLE001
                pass
    answers = verdict.answers_from_namespace(plan, env)
    for student in DRAWN[:10]:
        case = draw(KEY, student, verdict.case_for(plan))
        assert sum(verdict.grade(plan, answers, case=case.values).scores(plan).values()) == 0, case


PLANTED_CH2 = [  # (question, code run after the solutions, on the student's own CASE, misconception, section)
    ("q1", "q1_rate = CASE.interruptions / (CASE.record_gpus * CASE.days * 24)", "planned_counted", "ch2-divides"),
    ("q1", "def gpu_failure_rate(unexpected, gpus, days):\n    return unexpected / (gpus * days)",
     "days_not_hours", "ch2-divides"),
    ("q1", "q1_mtbf_h = q1_mtbf_h * 3600", "hours_vs_seconds", "ch2-divides"),
    ("q1", "q1_mtbf_h = 1 / q1_rate", "ignore_failures", "ch2-divides"),
    ("q2", "q2_interval_s = math.sqrt(CASE.save_s * CASE.mtbf_h * 3600)", "young_without_two", "ch2-young"),
    ("q2", "q2_interval_s = math.sqrt(2 * CASE.save_s * CASE.mtbf_h)", "hours_vs_seconds", "ch2-divides"),
    ("q2", "q2_loss = q2_loss / 2", "one_term_only", "ch2-young"),
    ("q3", "q3_save_s = CASE.budget_pct / 100 * CASE.budget_mtbf_h * 3600 / 2", "loss_not_squared", "ch2-young"),
    ("q3", "q3_penalty = CASE.multiple", "flat_as_linear", "ch2-young"),
    ("q4", "q4_step_longer_pct = 100 * (1 - CASE.speed)", "speed_vs_time", "ch2-stragglers"),
    ("q4", "q4_throughput_lost_pct = 100 * (1 - CASE.speed) / CASE.ranks", "straggler_averaged", "ch2-stragglers"),
    ("q4", "q4_break_even_min = CASE.eject_min", "break_even_without_tax", "ch2-eject"),
]


PLANTED_CH1 = [
    ("q3", "q3_microbatches = CASE.hbm_mb // (CASE.layers * CASE.act_mb)", "whole_model_per_stage", "ch1-pipeline"),
    ("q3", "q3_microbatches = q3_microbatches + 1", "off_by_one", "ch1-activations"),
    ("q6", "q6_step_64 = float(CASE.step_mean_ms)", "assume_uniform", "ch1-stragglers"),
    ("q1", "q1_hideable = compute_64 / comm_64", "term_not_applied", "ch1-scaling"),
    ("q1", "q1_overlap = 2 / 3 * compute_64 / comm_64", "overlap_cap_as_answer", "ch1-scaling"),
    ("q7", "q7_batch = max_batch_with_offload(CASE.q7['layers'], CASE.q7['act_mb'], CASE.q7['hbm_mb'], "
           "CASE.q7['link_gbs'], CASE.q7['forward_ms'], CASE.q7['tier_gb'])", "both_directions", "ch1-cxl"),
    ("q7", "q7_batch = q7_batch + 1", "off_by_one", "ch1-cxl"),
    ("q7", "q7_batch = CASE.q7['hbm_mb'] // (CASE.q7['layers'] * CASE.q7['act_mb'])", "no_offload",
     "ch1-activations"),
    ("q4", "q4_interval_min = min(range(1, 1001), key=lambda t: 1440 / t * write_min "
           "+ 24 * CASE.q4['nodes'] / CASE.q4['node_mtbf_h'] * t / 2)", "truncation", "ch1-failures"),
    ("q4", "q4_interval_min = min(range(1, 1001), key=lambda t: 1440 / t * write_min / 8 + 24 // mtbf_h * t / 2)",
     "units", "ch1-checkpoint"),
    ("q4", "q4_interval_min = min(range(1, 1001), key=lambda t: 1440 / t * write_min + 24 // mtbf_h * t)",
     "whole_interval_lost", "ch1-failures"),
    ("q4", "q4_young_min = math.sqrt(2 * write_min * CASE.q4['node_mtbf_h'] / CASE.q4['nodes'] * 60)", "truncation",
     "ch1-failures"),
    ("q5", "q5_mean_rate = failure_recovery(nodes=CASE.q5['nodes'], node_mtbf_h=CASE.q5['node_mtbf_h'], "
           "interval_min=60).lost_min_per_day", "truncation", "ch1-failures"),
    ("q5", "q5_mean_rate = 2 * q5_mean_rate", "whole_interval_lost", "ch1-failures"),
    ("q5", "q5_share_over_60 = 1.0", "mean_as_every_day", "ch1-failures"),
    ("q8", "q8_binding = 'leaf'", "one_level_fabric", "ch1-fabric"),
    ("q8", "q8_max_demand_gbps = 800 / (2 * CASE.q8_spine)", "ratios_for_all_traffic", "ch1-fabric"),
    ("q10", "q10_min_nodes = next(k for k in range(1, 10 ** 6) if 24 * k / CASE.q10_mtbf_h * 30 > 60)", "truncation",
     "ch1-failures"),
    ("q10", "q10_min_nodes = q10_min_nodes - 1", "off_by_one", "ch1-failures"),
]

PLANTED_CH3 = [
    ("q1", "q1_racks = CASE.q1_pp * CASE.q1_dp // 4", "partial_domain_dropped", "ch3-llama-nvl72"),
    ("q1", "q1_idle = 32", "stranded_ignored", "ch3-misfits"),
    ("q2", "q2_hops = (16 * 128 - 1) // (CASE.q2_domain // 8)", "hops_across_replicas", "ch3-rank-order"),
    ("q2", "q2_hops = 8 * q2_hops", "links_vs_hops", "ch3-rank-order"),
    ("q3", "q3_inside = counts_by_order(8, CASE.q3_pp, CASE.q3_dp, 72, 'tp,pp,dp')[0]", "tp_innermost_assumed",
     "ch3-order"),
    ("q3", "q3_crossing = counts_by_order(8, CASE.q3_pp, CASE.q3_dp, 72, 'tp,pp,dp')[1]", "tp_innermost_assumed",
     "ch3-order"),
    ("q4", "q4_tokens = q4_tokens * (CASE.q4_pp - 1) / CASE.q4_pp", "stage_average_dropped", "ch3-three-cuts"),
    ("q4", "q4_pipeline_heavier = True", "per_step_not_per_replica", "ch3-three-cuts"),
]

PLANTED_CH4 = [
    ("q1", "q1_queued_mb = (CASE.senders - 1) * 800 * (CASE.rtt_us + CASE.notify_us) * 1e-3", "bits_for_bytes",
     "ch4-incast"),
    ("q1", "q1_queued_mb = (CASE.senders - 1) * 100 * CASE.rtt_us * 1e-3", "window_rtt_only", "ch4-incast"),
    ("q2", "q2_removed_musd = q2_removed_musd / 2", "link_ends_once", "ch4-spine-cost"),
    ("q3", "q3_idle = CASE.q3_flows * (1 - 1 / CASE.q3_flows) ** CASE.q3_links", "n_k_swapped", "ch4-hashing"),
    ("q4", "q4_availability = CASE.target", "all_up_as_per_host", "ch4-redundancy"),
    ("q4", "q4_availability = 1 - (1 - CASE.target) / 1024", "linear_availability", "ch4-redundancy"),
    ("q5", "q5_uplinks = math.floor(CASE.q5_downlinks * 1.125)", "floor_uplinks", "ch4-redundancy"),
    ("q6", "q6_building_gpus = q6_building_gpus + 1", "off_by_one", "ch4-choose"),
]

PLANTED_CH5 = [
    ("q2", "q2_four = CASE.q2_stat['pct'] / 100 / 2", "rate_scaled_linearly", "ch5-trace"),
    ("q2", "q2_per_gpu = CASE.q2_stat['pct'] / 100", "gpu_rate_per_node", "ch5-trace"),
    ("q4", "q4_k2 = q4_k3", "remainder_per_ring", "ch5-ring-builder"),
    ("q4", "q4_static = q4_k2", "static_uses_backups", "ch5-question"),
    ("q1", "q1_rack = CASE.q1_failed % 16", "mod_of_failed", "ch5-fragmentation"),
    ("q1", "q1_servers = 8 * CASE.q1_failed", "failed_counted_as_idle", "ch5-fragmentation"),
    ("q3", "q3_k4 = smallest_hops(CASE.q3_tp, 4, CASE.q3_rate, 0.005)", "eight_gpu_rate_for_four", "ch5-trace"),
    ("q3", "q3_k4 = smallest_hops(CASE.q3_tp, 4, 1 - (1 - CASE.q3_rate) ** 0.125, 0.005)", "gpu_rate_per_node",
     "ch5-trace"),
    ("q6", "q6_light = 1 - CASE.loss_db / 10", "db_linear", "ch5-measured"),
    ("q6", "q6_pj = CASE.watts / 1600", "pj_units", "ch5-measured"),
]

PLANTED_CH6 = [
    ("q1", "q1_efficiency = CASE.q1_pair['fit_busbw'] / (2 * CASE.q1_pair['fit_link'])", "both_directions",
     "ch1-collective"),
    ("q1", "q1_error = CASE.q1_pair['to_busbw'] / q1_predicted_GBps - 1", "error_inverted", "ch6-validate"),
    ("q2", "q2_mfu = q2_hfu", "pct_peak_as_mfu", "ch6-metrics"),
    ("q3", "q3_derived_step_s = run.hardware_flops / (llama['gpus'] * 989e12 * CASE.q3_run['mfu_pct'] / 100)",
     "pct_peak_as_mfu", "ch6-metrics"),
    ("q3", "q3_best_error = 100 * run.mfu / CASE.q3_run['mfu_pct'] - 1", "interleaving_ignored", "ch6-llama"),
    ("q5", "q5_ettr = ettr_first_order(tau, save_s, mtbf_s, 0)", "restart_ignored", "ch6-ettr"),
    ("q4", "def job_mtbf_h(rate_per_1000, gpus, gpus_per_node=8):\n    return 24 / (gpus * rate_per_1000 / 1000)\n"
           "q4_mtbf_min = tuple(60 * job_mtbf_h(r, CASE.q4_gpus) for r in (2.34, llama3_rate, 6.50))",
     "gpus_as_nodes", "ch6-failures"),
    ("q4", "q4_mtbf_min = tuple(m / 60 for m in q4_mtbf_min)", "hours_vs_seconds", "ch2-divides"),
    ("q6", "q6_dp_share = middle.dp_exposed_s / middle.compute_s", "compute_as_loss", "ch6-predict"),
    ("q6", "q6_overlap_at_par = 1 - q6_overlap_at_par", "swapped", "ch1-scaling"),
]

PLANTED = ([("ch01_exercises", *row) for row in PLANTED_CH1] + [("ch02_exercises", *row) for row in PLANTED_CH2]
           + [("ch03_exercises", *row) for row in PLANTED_CH3] + [("ch04_exercises", *row) for row in PLANTED_CH4]
           + [("ch05_exercises", *row) for row in PLANTED_CH5] + [("ch06_exercises", *row) for row in PLANTED_CH6])


@pytest.mark.parametrize("stem, question, planted, key, section", PLANTED,
                         ids=[f"{s[:4]}-{q}-{k}-{i}" for i, (s, q, _, k, _) in enumerate(PLANTED)])
def test_planted_mistakes_are_named_on_drawn_cases(graders, stem, question, planted, key, section):
    import clustermath.feedback.peak  # noqa: F401  (registers the chapters' misconceptions)
    import clustermath.feedback.placement  # noqa: F401
    import clustermath.feedback.fabric_designs  # noqa: F401
    import clustermath.feedback.scaleup  # noqa: F401
    import clustermath.feedback.validation  # noqa: F401
    import verdict
    from clustermath.feedback import CATALOGUE
    from clustermath.feedback.variants import draw

    if stem not in graders:
        pytest.skip(f"{stem} declares no case")
    plan, autograder_nb = graders[stem]
    declared = verdict.case_for(plan)
    name = CATALOGUE[key].name
    for case in [declared] + [draw(KEY, s, declared) for s in DRAWN[:12]]:
        env = master_environment(stem, autograder_nb, case)
        exec(compile(planted, "<planted>", "exec"), env)
        graded = verdict.grade(plan, verdict.answers_from_namespace(plan, env), case=case.values)
        scores = graded.scores(plan)
        assert scores[question] < plan.points[question], (case, planted)
        assert all(v == plan.points[q] for q, v in scores.items() if q != question), (case, scores)
        failing = [c.message for c in graded.cases if c.question == question and not c.passed]
        assert any(name in m and f"(#{section})" in m for m in failing), (case, failing)


# ---------------------------------------------------------------- make variants and make grade ROSTER=

ROSTER = "student,email\n" + "".join(f"s{i:02d},s{i:02d}@example.org\n" for i in range(1, 31))
USES = {  # question -> the parameters of chapter 2's case its answers depend on
    "q1": {"record_gpus", "interruptions", "planned", "days", "scale"},
    "q2": {"save_s", "mtbf_h"},
    "q3": {"budget_mtbf_h", "budget_pct", "multiple"},
    "q4": {"speed", "eject_min"},
}


def test_a_bad_roster_row_is_named_and_nothing_is_written(tmp_path):
    import variants

    roster = tmp_path / "roster.csv"
    roster.write_text("student\nann\nbob\nann\n")
    with pytest.raises(ValueError, match=r"row 4: 'ann' is a duplicate of row 2"):
        variants.write_variants(roster, tmp_path / "out", key_file=tmp_path / "key")
    assert not (tmp_path / "out").exists() and not (tmp_path / "key").exists()


@pytest.fixture(scope="module")
def variants_out(tmp_path_factory):
    import variants

    folder = tmp_path_factory.mktemp("variants")
    (folder / "roster.csv").write_text(ROSTER)
    said: list[str] = []
    written = variants.write_variants(folder / "roster.csv", folder / "out", keys=True, key_file=folder / "key",
                                      run=False, announce=said.append)
    return folder, written, said


def test_make_variants_writes_30_notebooks_and_keys_with_20_distinct_cases(variants_out):
    folder, written, said = variants_out
    assert str(folder / "key") in said[0]
    for stem in WITH_CASE:
        notebooks = sorted((folder / "out").glob(f"s*/{stem}.ipynb"))
        keys = sorted((folder / "out" / "_keys").glob(f"s*/{stem}.ipynb"))
        assert len(notebooks) == 30 and len(keys) == 30
        cases = set()
        for path in notebooks:
            nb = nbformat.read(path, as_version=4)
            (cell,) = [c for c in nb.cells if exercises.CASE_TAG in c.metadata.get("tags", [])]
            assert "import clustermath" not in cell.source and "from clustermath" not in cell.source
            cases.add(cell.source)
            assert "{{" not in "".join(c.source for c in nb.cells if c.cell_type == "markdown")
        assert len(cases) >= 20, (stem, len(cases))


def test_an_answer_key_runs_and_its_prompts_show_its_case(variants_out):
    import variants

    folder, _, _ = variants_out
    path = folder / "out" / "_keys" / "s07" / "ch02_exercises.ipynb"
    variants.execute(path)
    nb = nbformat.read(path, as_version=4)
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors and not (path.parent / ".OTTER_LOG").exists()
    mine = exercises.case_of(nb)  # the student's case, as plain data
    text = "".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert f"on {mine.record_gpus:,} GPUs logged {mine.interruptions} interruptions" in text


@pytest.mark.skipif(not os.path.exists("/usr/bin/bwrap"), reason="SKIPPED LOUDLY: grading needs bubblewrap")
def test_grading_with_the_roster(variants_out, tmp_path, plan_cache):
    import shutil

    import grade
    import plan as plans_mod
    import verdict
    from clustermath.feedback.variants import course_key, draw

    folder, _, _ = variants_out
    out = folder / "out"
    subs = tmp_path / "subs"
    name = "ch02_exercises.ipynb"  # chapter 2 end to end (one plan to build: the others are tested above)

    def put(source: pathlib.Path, dest: pathlib.Path) -> None:
        dest.mkdir(parents=True)
        shutil.copy(source / name, dest / name)

    for student in ("s01", "s02", "s03"):  # keys, each under its own name
        put(out / "_keys" / student, subs / "keys" / student)
    for student in ("s04", "s05"):  # blank copies
        put(out / student, subs / "blank" / student)
    put(out / "_keys" / "s01", subs / "swapped" / "s02")  # s01's key handed in as s02's
    put(out / "_keys" / "s06", subs / "stranger" / "mallory")
    roster = folder / "roster.csv"
    masters = tmp_path / "masters"
    masters.mkdir()
    shutil.copy(exercises.SOLUTIONS / name, masters)
    results = {}
    for part in ("keys", "blank", "swapped", "stranger"):
        outcomes = grade.grade_folder(subs / part, tmp_path / f"graded-{part}", roster=roster, solutions=masters,
                                      key_file=folder / "key", cache=plan_cache, jobs=2)
        results[part] = [o for o in outcomes if o.file.endswith(".ipynb")]
    assert len(results["keys"]) == 3
    assert all(o.total == o.possible == 4 for o in results["keys"]), [(o.file, o.scores) for o in results["keys"]]
    assert all(o.status == "graded" and o.total == 0 for o in results["blank"])
    assert {o.status for o in results["stranger"]} == {"not-on-roster"}
    assert all("mallory" in o.note and o.total == 0 for o in results["stranger"])

    (swapped,) = [o for o in results["swapped"] if o.assignment == "ch02"]
    key = course_key(folder / "key", create=False, announce=None)
    plan = plans_mod.plans(plan_cache, masters)["ch02"]
    declared = verdict.case_for(plan)
    mine, theirs = draw(key, "s01@example.org", declared), draw(key, "s02@example.org", declared)  # drawn for e-mails
    differ = {name for name in mine.values if mine.values[name] != theirs.values[name]}
    for question, uses in USES.items():
        if uses & differ:
            assert swapped.scores[question] < 1, (question, differ, swapped.scores)
        else:
            assert swapped.scores[question] == 1, (question, differ, swapped.scores)
    assert "fits another student's case" in swapped.own_flags and "s01's case" in swapped.own_flags
    report = (tmp_path / "graded-swapped" / "grades-ch02.csv").read_text()
    assert "s01's case" in report


@pytest.mark.skipif(not os.path.exists("/usr/bin/bwrap"), reason="SKIPPED LOUDLY: grading needs bubblewrap")
def test_the_documented_make_commands(tmp_path, plan_cache):
    """README's two commands as typed: `make variants` writes each roster row its notebooks and prints
    where the new key is; `make grade ... ROSTER=` grades a blank copy on its student's case (0 marks)
    and gives a name the roster lacks a row of its own."""
    import csv
    import shutil
    import subprocess

    roster, out, key = tmp_path / "roster.csv", tmp_path / "out", tmp_path / "course.key"
    roster.write_text("student\nann\nbob\n")
    usage = subprocess.run(["make", "-s", "-C", str(ROOT), "variants"], capture_output=True, text=True, timeout=60)
    assert usage.returncode != 0 and "usage: make variants ROSTER=" in usage.stdout + usage.stderr
    made = subprocess.run(["make", "-s", "-C", str(ROOT), "variants", f"ROSTER={roster}", f"OUT={out}",
                           f"KEY_FILE={key}"], capture_output=True, text=True, timeout=600)
    assert made.returncode == 0, made.stderr[-2000:]
    assert str(key) in made.stdout and key.is_file()
    for stem in WITH_CASE:
        assert sorted(p.parent.name for p in out.glob(f"*/{stem}.ipynb")) == ["ann", "bob"], stem
    subs = tmp_path / "subs"
    for student in ("ann", "zed"):  # zed is not on the roster
        (subs / student).mkdir(parents=True)
        shutil.copy(out / "ann" / "ch02_exercises.ipynb", subs / student)
    graded = subprocess.run(["make", "-s", "-C", str(ROOT), "grade", f"SUBMISSIONS={subs}",
                             f"GRADE_OUT={tmp_path / 'graded'}", f"ROSTER={roster}", f"KEY_FILE={key}"],
                            capture_output=True, text=True, timeout=900,  # the session's plans, not ~/.cache's
                            env=dict(os.environ, XDG_CACHE_HOME=str(plan_cache.parent)))
    assert graded.returncode == 0, graded.stderr[-2000:]
    with open(tmp_path / "graded" / "grades-ch02.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    by_student = {r["student"]: r for r in rows}
    assert set(by_student) == {"ann", "zed"}, rows
    assert by_student["ann"]["status"] == "graded" and by_student["ann"]["total"] == "0", rows
    assert by_student["zed"]["status"] == "not-on-roster" and "not on the roster" in by_student["zed"]["note"], rows


def test_the_gradescope_plugin_draws_the_case_make_variants_drew(variants_out, tmp_path):
    """Both paths grade the same case: the zip's plugin draws for the submitter's e-mail what make
    variants drew for the roster row with that e-mail, and otter's tests then grade on it."""
    import json
    import zipfile

    from otter.test_files.exception_test import ExceptionTestFile

    from clustermath.feedback.gradescope import DrawCase
    from clustermath.feedback.variants import course_key

    folder, _, _ = variants_out
    key = course_key(folder / "key", create=False, announce=None)
    (ag,) = exercises.autograders(tmp_path / "zips", only=["ch02_exercises"], key=key).values()
    with zipfile.ZipFile(ag.zip_path) as z:
        config = json.loads(z.read("otter_config.json"))
        tests = {name[len("tests/"):-3]: z.read(name).decode() for name in z.namelist()
                 if name.startswith("tests/") and name.endswith(".py")}
    (plugin,) = [p for p in config["plugins"] if exercises.PLUGIN in p]
    settings = plugin[exercises.PLUGIN]
    assert settings["key"] == key.hex() and settings["spec"]["chapter"] == "ch02"

    def graded(notebook: str, email: str | None) -> float:
        nb = nbformat.read(folder / "out" / "_keys" / notebook / "ch02_exercises.ipynb", as_version=4)
        metadata = {"users": [{"email": email, "name": "x"}]} if email else {}
        nb = DrawCase("sub.ipynb", metadata, settings).before_execution(nb)
        env: dict = {"__name__": "__otter__"}
        for cell in nb.cells:
            if cell.cell_type == "code" and not exercises._is_plumbing(cell):
                exec(compile(cell.source, "<cell>", "exec"), env)
        total = 0.0
        for name, source in tests.items():
            test_file = ExceptionTestFile.from_string(source, path=f"{name}.py")
            test_file.run(env)
            total += test_file.score
        return total

    variant = nbformat.read(folder / "out" / "s05" / "ch02_exercises.ipynb", as_version=4)
    mine = exercises.case_of(variant)
    appended = DrawCase("sub.ipynb", {"users": [{"email": "S05@example.org"}]}, settings).before_execution(variant)
    env: dict = {}
    exec(appended.cells[-1].source, env)
    assert env["CASE"] == mine and mine != exercises.case_of(nbformat.read(exercises.EXERCISES / "ch02_exercises.ipynb",
                                                                            as_version=4))
    assert graded("s05", "s05@example.org") == ag.possible
    assert graded("s05", "s06@example.org") < ag.possible  # s05's key handed in by s06
