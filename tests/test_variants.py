"""Exercise variants (issue 31): cases declared with allowed sets, drawn per student by a keyed hash."""
from __future__ import annotations

import json

import pytest

from clustermath.feedback.variants import (Case, course_key, draw, read_roster, render, roster_identities, steps,
                                           listed, tex, times, word)

KEY = bytes(range(32))


def example() -> Case:
    return Case("ch02", gpus=(8_192, steps(4_096, 16_384, 2_048)), speed=(0.8, [0.6, 0.7, 0.8, 0.9]),
                days=(30, [21, 28, 30, 35]))


def test_default_case_is_the_declared_values():
    case = example()
    assert (case.gpus, case.speed, case.days) == (8_192, 0.8, 30)
    assert case.default == case
    assert draw(KEY, "alice", case).default == case


def test_same_student_same_case_and_key_matters():
    case = example()
    assert draw(KEY, "alice", case) == draw(KEY, "alice", case)
    assert draw(KEY, "alice", case) == draw(KEY, "alice", draw(KEY, "bob", case))  # from any drawn case
    other_key = bytes(32)
    students = [f"s{i:02d}" for i in range(30)]
    assert sum(draw(KEY, s, case) != draw(other_key, s, case) for s in students) >= 20


def test_different_students_mostly_different():
    case = example()
    drawn = {draw(KEY, f"student{i}", case) for i in range(30)}
    assert len(drawn) >= 20


def test_every_drawn_case_is_in_the_allowed_sets():
    case = example()
    for i in range(200):
        got = draw(KEY, f"s{i}", case)
        for name, allowed in case.allowed.items():
            assert getattr(got, name) in allowed


def test_chosen_refuses_values_outside_the_set():
    case = example()
    with pytest.raises(ValueError, match="speed must be one of"):
        case.chosen(speed=0.5)
    with pytest.raises(ValueError, match="not a parameter"):
        case.chosen(nodes=3)
    assert case.chosen(speed=0.9).speed == 0.9


@pytest.mark.parametrize("bad", [dict(x=(3, [1, 2])), dict(x=(1, [])), dict(x=(1, [1, 1])), dict(x=5)])
def test_bad_declarations(bad):
    with pytest.raises(ValueError, match="x"):
        Case("ch02", **bad)


def test_spec_round_trip():
    case = draw(KEY, "carol", example())
    again = Case.from_spec(case.spec(), case.values)
    assert again == case and again.default == example()


def test_steps_and_words():
    assert steps(4, 10, 2) == [4, 6, 8, 10]
    assert steps(0.1, 0.3, 0.1) == [0.1, 0.2, 0.3]
    with pytest.raises(ValueError, match="step"):
        steps(1, 2, 0)
    assert (times(2), times(4), word(3), word(40_000)) == ("twice", "four times", "three", "40,000")
    assert (tex(12_288), tex(2_048.0), tex(232.54), tex(80)) == ("12{,}288", "2{,}048", "232.54", "80")
    assert (listed([2, 8, 9, 15]), listed([3, 1_024]), listed([7]), listed([])) == \
        ("2, 8, 9 and 15", "3 and 1,024", "7", "")


def test_render_fills_placeholders():
    case = example()
    text = "a run on {{gpus}} GPUs, {{times(4)}} as large: {{gpus * 4}} at {{speed:.0%}} over {{days}} days"
    assert render(text, case) == "a run on 8,192 GPUs, four times as large: 32,768 at 80% over 30 days"
    with pytest.raises(ValueError, match="nodes"):
        render("{{nodes}}", case)


def test_key_made_once_and_reused(tmp_path):
    path = tmp_path / "sub" / ".course-key"
    said = []
    first = course_key(path, announce=said.append)
    assert path.stat().st_mode & 0o777 == 0o600
    assert course_key(path, announce=said.append) == first and len(first) == 32
    assert str(path) in said[0] and str(path) in said[1]


def test_repository_ignores_the_default_key():
    import pathlib
    import subprocess

    from clustermath.feedback import variants

    root = pathlib.Path(__file__).resolve().parent.parent
    done = subprocess.run(["git", "check-ignore", "-q", str(variants.DEFAULT_KEY)], cwd=root)
    assert done.returncode == 0


@pytest.mark.parametrize("text, row, words", [
    ("student\nalice\n\n", None, None),
    ("student\nalice\n,x\n", 3, "empty"),
    ("student,email\nalice,a@x\nbob,b@x\nalice,c@x\n", 4, "duplicate of row 2"),
    ("student\nalice\n../etc\n", 3, "not a safe file name"),
    ("student\n.hidden\n", 2, "not a safe file name"),
    ("name\nalice\n", None, "'student' column"),
])
def test_roster_rows(text, row, words):
    if row is None and words is None:
        assert read_roster(text) == ["alice"]
        return
    with pytest.raises(ValueError, match=words) as info:
        read_roster(text)
    if row is not None:
        assert f"row {row}" in str(info.value)


def test_roster_with_emails_draws_for_the_address():
    text = "student,email\nann,Ann@Example.org \nbob,bob@example.org\n"
    assert roster_identities(text) == {"ann": "ann@example.org", "bob": "bob@example.org"}
    assert roster_identities("student\nann\n") == {"ann": "ann"}
    with pytest.raises(ValueError, match="row 3: 'bob' has no e-mail"):
        roster_identities("student,email\nann,a@x\nbob,\n")
    with pytest.raises(ValueError, match="row 3: the e-mail of 'bob' repeats row 2"):
        roster_identities("student,email\nann,a@x\nbob,A@x\n")


A100 = {"name": "a100-node", "busbw": 232.54, "link": 300, "ranks": 8}
H100 = {"name": "h100-node", "busbw": 370, "link": 450, "ranks": 8}


def test_a_parameter_drawn_from_named_rows_stays_coherent():
    case = Case("ch06", row=(A100, [A100, H100]), gpus=(8, [8, 16]))
    assert case.row["busbw"] == 232.54
    drawn = [draw(KEY, f"s{i}", case) for i in range(40)]
    assert {c.row["name"] for c in drawn} == {"a100-node", "h100-node"}
    for c in drawn:  # a row is drawn whole: its numbers never mix with another row's
        assert c.row in (A100, H100)
        again = Case.from_spec(json.loads(json.dumps(c.spec())), json.loads(json.dumps(c.values)))
        assert again == c and hash(again) == hash(c)
    assert len(set(drawn)) == 4
    assert case.render('{{row["name"]}}: {{row["busbw"]:.1f}} of {{row["link"]}} GB/s') == \
        "a100-node: 232.5 of 300 GB/s"
    namespace: dict = {}
    exec(case.chosen(row=H100).student_cell(), namespace)
    assert namespace["CASE"].row == H100


@pytest.mark.parametrize("allowed, words", [
    ([(1, 2), (3, 4)], "never a tuple"),                      # a tuple comes back from JSON as a list
    ([{"a": (1, 2)}], "never a tuple"),
    ([{1: "x"}], "round trip"),                              # an integer key comes back as a string
    ([{"a": float("nan")}], "plain JSON data"),
    ([{"a": {1, 2}}], "plain JSON data"),
    ([{"a": 1}, {"a": 1}], "distinct"),
])
def test_rows_that_would_not_survive_the_spec_are_refused(allowed, words):
    with pytest.raises(ValueError, match=words):
        Case("ch06", row=(allowed[0], allowed))
