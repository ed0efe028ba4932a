"""The grader an instructor can trust: sandboxed submissions, verdicts from plain data.

Fast tests (always run): the plain-data codec, the CSV escaping, reading a
folder without following links, refusing to overwrite results, duplicate
flags, and hidden feedback that never states the right answer.

The attack folder (``tools/grading/attacks.py``, built from the current
student copies) needs bubblewrap and otter-grader and takes about a minute:
``make exercises-check`` runs it (EXERCISE_GRADING_TESTS=1). Every cheat must
score 0, the honest variants what they deserve, the canary and the
submissions stay unchanged, every file gets a row, and no process of the
sandbox and no temporary folder survives the batch. Without bubblewrap these
tests are skipped with a loud reason.
"""
from __future__ import annotations

import csv
import hashlib
import json
import math
import os
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "tools" / "grading"))

import grade  # noqa: E402  (tools/grade.py)
import plain  # noqa: E402  (tools/grading/plain.py)
import sandbox  # noqa: E402

SLOW = pytest.mark.skipif(os.environ.get("EXERCISE_GRADING_TESTS") != "1",
                          reason="grades a folder in sandboxes (about a minute): `make exercises-check` runs it")


# ---------------------------------------------------------------- plain data


@pytest.mark.parametrize("value", [
    None, True, False, 0, -3, 2 ** 70, 1.5, -0.0, "text", "", Ellipsis, (1, 2.5), [1, [2, (3,)]],
    {"a": 1, 2: (True, None)}, (), [], {},
])
def test_plain_values_round_trip(value):
    assert plain.decode(json.loads(json.dumps(plain.encode(value)))) == value


def test_non_finite_floats_and_numpy_become_python_values():
    import numpy as np

    back = plain.decode(json.loads(json.dumps(plain.encode([math.inf, -math.inf, math.nan]))))
    assert back[:2] == [math.inf, -math.inf] and math.isnan(back[2])
    got = plain.decode(plain.encode((np.True_, np.int64(4), np.float64(0.5), np.arange(3))))
    assert got == (True, 4, 0.5, [0, 1, 2])
    assert [type(v) for v in got[:3]] == [bool, int, float]


def test_a_float_subclass_is_sent_as_its_plain_value():
    class Sneaky(float):
        def __float__(self):
            return 42.0

        def __eq__(self, other):
            return True

    assert plain.encode(Sneaky(1.0)) == 1.0 and type(plain.encode(Sneaky(1.0))) is float


def test_anything_else_is_opaque_and_equals_nothing():
    back = plain.decode(plain.encode({1, 2}))
    assert isinstance(back, plain.Opaque) and back != back and "set" in repr(back)


@pytest.mark.parametrize("data", [
    {"$": "code", "v": "import os"}, {"a": 1}, {"$": "float", "v": "1e999"}, {"$": "tuple"},
    {"$": "dict", "v": [[[1], 2]]}, math.inf, {"$": "opaque", "type": 1, "repr": ""},
])
def test_decoding_rejects_every_other_shape(data):
    with pytest.raises(plain.Invalid):
        plain.decode(data)


def test_deep_nesting_is_cut_not_crashed():
    deep: list = []
    for _ in range(100):
        deep = [deep]
    encoded = plain.encode(deep)
    assert "too-large" in json.dumps(encoded)


# ---------------------------------------------------------------- the batch


def test_csv_cells_that_look_like_formulas_are_escaped():
    assert [grade.cell(t) for t in ("=1+2", "+1", "-1", "@SUM(A1)", "\t=x", "plain", "a=b")] == [
        "'=1+2", "'+1", "'-1", "'@SUM(A1)", "'\t=x", "plain", "a=b"]


def test_collect_reads_every_file_without_following_links(tmp_path):
    (tmp_path / "sub" / "deeper").mkdir(parents=True)
    (tmp_path / "a.ipynb").write_text("{}")
    (tmp_path / ".dot.ipynb").write_text("{}")
    (tmp_path / "sub" / "deeper" / "b.ipynb").write_text("{}")
    (tmp_path / "link.ipynb").symlink_to("/etc/passwd")
    (tmp_path / "dirlink").symlink_to("/etc")
    os.mkfifo(tmp_path / "fifo.ipynb")
    with open(tmp_path / "huge.ipynb", "wb") as handle:
        handle.truncate(200 << 20)
    entries = {e.relpath: e for e in grade.collect(tmp_path)}
    assert set(entries) == {"a.ipynb", ".dot.ipynb", "sub/deeper/b.ipynb", "link.ipynb", "dirlink",
                            "fifo.ipynb", "huge.ipynb"}
    assert entries["a.ipynb"].data == b"{}" and entries["sub/deeper/b.ipynb"].data == b"{}"
    for name in ("link.ipynb", "dirlink", "fifo.ipynb"):
        assert entries[name].data is None and entries[name].skip[0] == "not-a-regular-file", name
    assert entries["huge.ipynb"].skip[0] == "too-large" and entries["huge.ipynb"].data is None
    assert "root:" not in json.dumps([e.skip for e in entries.values()])


def test_an_existing_results_folder_is_not_overwritten_silently(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "results.jsonl").write_text("{}\n")
    with pytest.raises(ValueError, match="--resume"):
        grade.prepare_out(out, resume=False, overwrite=False)
    grade.prepare_out(out, resume=True, overwrite=False)
    assert (out / "results.jsonl").exists()
    grade.prepare_out(out, resume=False, overwrite=True)
    assert not (out / "results.jsonl").exists()


def test_students_and_duplicates():
    assert grade.student_of("alice/ch01.ipynb") == "alice"
    assert grade.student_of("bob (1).ipynb") == grade.student_of("Bob.ipynb") == "bob"
    assert grade.student_of("carol_copy.ipynb") == "carol"
    a = grade.Outcome("alice/x.ipynb", "graded", "s1", "ch01", "alice")
    b = grade.Outcome("alice/y.ipynb", "graded", "s2", "ch01", "alice")
    c = grade.Outcome("c.ipynb", "graded", "s1", "ch01", "c")
    d = grade.Outcome("alice/z.ipynb", "graded", "s3", "ch02", "alice")
    grade.flag_duplicates([a, b, c, d])
    assert "duplicate" in a.flags and "alice/y.ipynb" in a.flags and "same content as c.ipynb" in a.flags
    assert "duplicate" not in c.flags and d.flags == ""


def test_hidden_feedback_never_states_the_right_answer():
    from clustermath import feedback as fb

    with pytest.raises(fb.WrongAnswer) as shown:
        fb.expect(8, 4, what="q2_nodes", suspects=[fb.suspect("both_directions", 8)])
    assert "the right answer is 4" in str(shown.value)
    with fb.concealed(), pytest.raises(fb.WrongAnswer) as hidden:
        fb.expect(8, 4, what="q2_nodes", suspects=[fb.suspect("both_directions", 8)])
    assert "right answer" not in str(hidden.value) and " 4" not in str(hidden.value)
    assert "#ch1-collective" in str(hidden.value)
    with fb.concealed(), pytest.raises(fb.WrongAnswer) as call:
        fb.expect_call(lambda x: x + 1, {"x": 1}, 3, name="f", rel=0.1)
    assert "right answer" not in str(call.value) and "within" not in str(call.value)


def test_without_bubblewrap_the_grader_refuses(tmp_path, monkeypatch):
    monkeypatch.setattr(sandbox, "bwrap_path", lambda: None)
    monkeypatch.setattr(sandbox, "_PROBE", {})
    (tmp_path / "in").mkdir()
    with pytest.raises(ValueError, match="--no-sandbox"):
        grade.grade_folder(tmp_path / "in", tmp_path / "out")
    assert not (tmp_path / "out").exists()


# ---------------------------------------------------------------- the attack folder

NO_SANDBOX = sandbox.unavailable_reason()
NEEDS_BWRAP = pytest.mark.skipif(bool(NO_SANDBOX), reason=(
    f"SKIPPED LOUDLY: the sandbox tests need bubblewrap: {NO_SANDBOX}" if NO_SANDBOX else ""))
if NO_SANDBOX and os.environ.get("EXERCISE_GRADING_TESTS") == "1":
    print(f"\n*** grading sandbox tests SKIPPED: {NO_SANDBOX} ***\n", file=sys.stderr)


def _sha(path: pathlib.Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() and not path.is_symlink() else "link"


def _tree(folder: pathlib.Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): _sha(p) for p in sorted(folder.rglob("*"))
            if p.is_symlink() or p.is_file()}


def _sandbox_processes() -> list[str]:
    """Processes left by sandboxes: a cheat's marker, a slot uid, or a bwrap of ours."""
    import attacks

    found = []
    for entry in pathlib.Path("/proc").glob("[0-9]*"):
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            uid = int((entry / "status").read_text().split("Uid:")[1].split()[0])
        except (OSError, IndexError, ValueError):
            continue
        if attacks.MARKER in cmdline or uid >= sandbox.SLOT_UID or "/grading/runner.py" in cmdline:
            found.append(f"{entry.name} uid={uid}: {cmdline[:120]}")
    return found


def _temp_files(folder: pathlib.Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


@pytest.fixture(scope="session")
def plan_cache(tmp_path_factory):
    """The grading plans, shared by every test of the session that grades in sandboxes."""
    return tmp_path_factory.getbasetemp() / "grading-plans"


@pytest.fixture(scope="module")
def attacked(tmp_path_factory, plan_cache):
    import attacks
    import plan as plans_mod

    plans_mod.plans(plan_cache)  # built once, before the clock and the temp-file census start
    base = tmp_path_factory.mktemp("attack")
    folder, out, canary = base / "submissions", base / "out", base / "canary.txt"
    canary.write_text("nobody may change this\n")
    manifest = attacks.build(folder, {"repo": str(ROOT), "submissions": str(folder), "out": str(out),
                                      "cache": str(plan_cache), "canary": str(canary)})
    before = {"tree": _tree(folder), "canary": _sha(canary), "cache": _tree(plan_cache)}
    import tempfile
    import time

    temp = base / "grader-tmp"  # the grader's own temporary folder, watched
    temp.mkdir()
    saved, tempfile.tempdir = tempfile.tempdir, str(temp)
    try:
        outcomes = grade.grade_folder(folder, out, timeout=60, call_timeout=2, jobs=2, cache=plan_cache)
    finally:
        tempfile.tempdir = saved
    time.sleep(5)  # the detached rewriter waits 4 s for the batch to end: give it its chance
    return {"temp": temp, "manifest": manifest, "outcomes": {o.file: o for o in outcomes}, "folder": folder, "out": out,
            "canary": canary, "before": before, "cache": plan_cache}


@SLOW
@NEEDS_BWRAP
def test_every_file_gets_a_row(attacked):
    rows = {r["file"].lstrip("'"): r for r in csv.DictReader(open(attacked["out"] / "files.csv"))}
    assert set(rows) == set(attacked["manifest"])
    assert {o.file for o in attacked["outcomes"].values()} == set(attacked["manifest"])
    journal = [json.loads(line) for line in (attacked["out"] / "results.jsonl").read_text().splitlines()]
    assert {line["file"] for line in journal} == set(attacked["manifest"])
    for name in attacked["manifest"]:
        assert (attacked["out"] / "feedback" / f"{name}.md").is_file(), name


@SLOW
@NEEDS_BWRAP
def test_cheats_score_zero_and_honest_work_scores_what_it_deserves(attacked):
    problems = []
    for name, (statuses, expect) in attacked["manifest"].items():
        o = attacked["outcomes"][name]
        if o.status not in statuses:
            problems.append(f"{name}: status {o.status} not in {statuses} ({o.note})")
        want = {"zero": 0.0, "full": o.possible}.get(expect)
        if expect == "slow":  # everything but one hidden case of q9
            ok = o.scores.get("q9", 0) < 1 and all(v == 1 for q, v in o.scores.items() if q != "q9") \
                and "q9" in o.note
        else:
            ok = o.total == want
        if not ok:
            problems.append(f"{name}: {o.total:g} of {o.possible:g} ({expect}); {o.scores} {o.note}")
    assert not problems, "\n".join(problems)


@SLOW
@NEEDS_BWRAP
def test_nothing_outside_the_sandbox_changed(attacked):
    before = attacked["before"]
    assert _sha(attacked["canary"]) == before["canary"]
    assert _tree(attacked["folder"]) == before["tree"]
    assert _tree(attacked["cache"]) == before["cache"]
    out_files = {p.name for p in attacked["out"].iterdir()}
    assert out_files == {"results.jsonl", "files.csv", "grades-ch01.csv", "grades-ch02.csv",
                         "grades-ch03.csv", "feedback"}
    text = (attacked["out"] / "results.jsonl").read_text() + (attacked["out"] / "files.csv").read_text()
    assert "forged" not in text and "planted" not in text
    for home in ("/tmp", str(pathlib.Path.home())):
        assert not (pathlib.Path(home) / "planted-by-a-student").exists()


@SLOW
@NEEDS_BWRAP
def test_no_process_and_no_temporary_file_survives(attacked):
    assert _sandbox_processes() == []
    assert _temp_files(attacked["temp"]) == set()


@SLOW
@NEEDS_BWRAP
def test_reports_leak_neither_answers_nor_tests_nor_files(attacked):
    out = attacked["out"]
    feedback = "".join(p.read_text() for p in (out / "feedback").rglob("*.md"))
    assert "right answer" not in feedback
    assert "def test_" not in feedback and "fb.expect" not in feedback and "BEGIN SOLUTION" not in feedback
    assert "root:x:0:0" not in feedback + (out / "files.csv").read_text()
    stolen = (out / "feedback" / "cheat_read_tests.ipynb.md").read_text()
    assert "hidden=True" not in stolen and "plan.json" not in stolen
    rows = list(csv.reader(open(out / "grades-ch01.csv")))
    for row in rows[1:]:
        assert not row[0].startswith(("=", "+", "-", "@")), row[0]
    flags = {r["file"]: r["flags"] for r in csv.DictReader(open(out / "files.csv"))}
    assert "duplicate" in flags["alice/ch01.ipynb"] and "duplicate" in flags["alice/ch01 (1).ipynb"]
    slow = (out / "feedback" / "honest_slow_hidden_case.ipynb.md").read_text()
    assert "TookTooLong" in slow and "## q9: 0.666667 of 1" in slow


@SLOW
@NEEDS_BWRAP
def test_a_rerun_resumes_and_grades_only_what_changed(attacked, tmp_path):
    import nbformat
    import attacks

    folder = tmp_path / "subs"
    folder.mkdir()
    nbformat.write(attacks.solved(), folder / "one.ipynb")
    nbformat.write(attacks.solved("ch02_exercises"), folder / "two.ipynb")
    out = tmp_path / "out"
    first = grade.grade_folder(folder, out, cache=attacked["cache"], call_timeout=2)
    assert [o.total for o in first] == [10, 4]
    with pytest.raises(ValueError, match="already holds results"):
        grade.grade_folder(folder, out, cache=attacked["cache"])
    (folder / "three.txt").write_text("late")
    again = grade.grade_folder(folder, out, cache=attacked["cache"], resume=True)
    lines = (out / "results.jsonl").read_text().splitlines()
    assert len(lines) == 3 and [o.file for o in again] == ["one.ipynb", "three.txt", "two.ipynb"]


# ---------------------------------------------------------------- a checkout under /tmp

def test_python_and_package_are_bound_after_the_private_tmp(monkeypatch):
    """A CI clone in /tmp (venv and package under /tmp/...) must stay visible in the sandbox: the
    private tmpfs on /tmp is mounted first and the read-only binds land on top of it."""
    monkeypatch.setattr(sandbox, "python_roots", lambda: ["/tmp/ci/.venv", "/root/.pyenv/versions/3.11.7"])
    fds = {"runner": 3, "plain": 4, "request": 5, "notebook": 6}
    cmd = sandbox._bwrap_command(pathlib.Path("/tmp/ci/lib/clustermath"), "sub.ipynb", sandbox.Limits(), fds, 0)

    def at(*pair):
        return next(i for i in range(len(cmd) - 1) if tuple(cmd[i:i + len(pair)]) == pair)

    tmp = at("--tmpfs", "/tmp")
    assert tmp < at("--ro-bind", "/tmp/ci/.venv", "/tmp/ci/.venv")
    assert tmp < at("--ro-bind", "/tmp/ci/lib/clustermath", "/grading/lib/clustermath")
    assert ("--dir", "/tmp") not in zip(cmd, cmd[1:])  # the tmpfs is the folder; not made again
