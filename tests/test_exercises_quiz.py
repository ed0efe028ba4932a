"""The multiple-choice quizzes of the exercise masters: answers spread over the options, and every
wrong option named.

A quiz whose answers are all the same letter is passed by answering that letter everywhere, and a
distractor that matches no misconception gives a student no feedback. For every master in
``solutions/`` that has quiz questions ("## Quiz N" with options "* **a**: ..."), these tests read
the options, the solution (``quiz_N = "x"  # SOLUTION``) and the hidden test of each question, and
check that

* each question offers the options a, b, c and d, and its answer is one of them;
* no single letter answers every question, nor more than half of them (rounded up);
* every wrong option is a suspect of the question's hidden test, the right one never is, and each
  suspect names a misconception of the feedback catalogue.
"""
from __future__ import annotations

import collections
import json
import math
import pathlib
import re

import pytest

from clustermath import feedback as fb

ROOT = pathlib.Path(__file__).resolve().parent.parent
QUESTION = re.compile(r"^## Quiz (\d+)", re.M)
OPTION = re.compile(r"^\* \*\*([a-z])\*\*:", re.M)
ANSWER = re.compile(r'^quiz_(\d+) = "([a-z])"  # SOLUTION', re.M)
SUSPECT = re.compile(r'fb\.suspect\("([\w]+)", "([a-z])"')


def quizzes(path: pathlib.Path) -> dict[int, dict]:
    """Question number -> {"options": [...], "answer": letter, "suspects": [(key, letter), ...]}."""
    cells = ["".join(c["source"]) for c in json.loads(path.read_text())["cells"]]
    found: dict[int, dict] = {}
    for text in cells:
        if (m := QUESTION.search(text)):
            found.setdefault(int(m.group(1)), {})["options"] = OPTION.findall(text)
        for n, letter in ANSWER.findall(text):
            found.setdefault(int(n), {})["answer"] = letter
        if (m := re.search(r"def test_quiz_(\d+)\(", text)) and "# HIDDEN" in text:
            found.setdefault(int(m.group(1)), {})["suspects"] = SUSPECT.findall(text)
    return found


MASTERS = [p for p in sorted((ROOT / "solutions").glob("*.ipynb")) if quizzes(p)]


def test_some_master_has_a_quiz():
    assert MASTERS, "no exercise master has quiz questions: the tests below would check nothing"


@pytest.mark.parametrize("path", MASTERS, ids=[p.stem for p in MASTERS])
def test_every_question_is_complete(path):
    for n, q in quizzes(path).items():
        assert q.get("options") == ["a", "b", "c", "d"], (path.name, n, q.get("options"))
        assert q.get("answer") in q["options"], (path.name, n, q.get("answer"))
        assert q.get("suspects"), f"{path.name}: quiz {n} has no hidden test with suspects"


@pytest.mark.parametrize("path", MASTERS, ids=[p.stem for p in MASTERS])
def test_answers_are_spread_over_the_options(path):
    answers = [q["answer"] for q in quizzes(path).values()]
    letter, most = collections.Counter(answers).most_common(1)[0]
    assert most < len(answers), f"{path.name}: answering {letter!r} everywhere passes every question"
    assert most <= math.ceil(len(answers) / 2), f"{path.name}: {letter!r} answers {most} of {len(answers)}"


@pytest.mark.parametrize("path", MASTERS, ids=[p.stem for p in MASTERS])
def test_every_distractor_names_a_misconception(path):
    import clustermath.feedback.fabric_designs  # noqa: F401  (each import registers a chapter's catalogue)
    import clustermath.feedback.placement  # noqa: F401
    import clustermath.feedback.reliability  # noqa: F401
    import clustermath.feedback.scaleup  # noqa: F401

    for n, q in quizzes(path).items():
        named = {letter for _, letter in q["suspects"]}
        wrong = set(q["options"]) - {q["answer"]}
        assert named == wrong, f"{path.name}: quiz {n} names {sorted(named)}, its wrong options are {sorted(wrong)}"
        unknown = [key for key, _ in q["suspects"] if key not in fb.CATALOGUE]
        assert not unknown, f"{path.name}: quiz {n} cites misconceptions missing from the catalogue: {unknown}"
