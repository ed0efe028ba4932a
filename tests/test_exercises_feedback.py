"""The feedback helper that the exercises' tests use (clustermath.feedback)."""
from __future__ import annotations

import json
import pathlib
import re

import pytest

from clustermath import feedback as fb

ROOT = pathlib.Path(__file__).resolve().parent.parent


def message(call) -> str:
    with pytest.raises(fb.WrongAnswer) as info:
        call()
    return str(info.value)


def test_right_answers_pass_within_the_tolerance():
    fb.expect(4, 4, what="n")
    fb.expect(0.7022, 0.70218, what="f", rel=1e-3)
    fb.expect(51.0, 51, what="m")  # a whole float is a whole number
    fb.expect(" Spine", "spine", what="tier")
    fb.expect((0.5, 0.2), (0.5, 0.2000001), what="pair", rel=1e-5)
    fb.expect({"a": 1}, {"a": 1}, what="d")


def test_a_wrong_answer_is_an_assertion_error_with_the_values():
    text = message(lambda: fb.expect(3, 4, what="q2_nodes"))
    assert isinstance(fb.WrongAnswer("x"), AssertionError)
    assert text.startswith("q2_nodes: your answer is 3, but the right answer is 4.")
    assert "none of the mistakes this test knows" in text


def test_reveal_false_keeps_the_right_answer_out():
    text = message(lambda: fb.expect(3, 4, what="q", reveal=False))
    assert "4" not in text


def test_placeholders_and_kinds_get_plain_messages():
    assert "still `...`" in message(lambda: fb.expect(..., 4, what="q1_overlap"))
    assert "forgets to `return`" in message(lambda: fb.expect(None, 4, what="q"))
    assert "should be a number" in message(lambda: fb.expect("4", 4, what="q"))
    assert "should be a number" in message(lambda: fb.expect(True, 4, what="q"))
    assert "NaN" in message(lambda: fb.expect(float("nan"), 4.0, what="q"))
    assert "should be a string" in message(lambda: fb.expect(4, "spine", what="q"))


def test_a_known_mistake_is_named_with_its_section():
    text = message(lambda: fb.expect(80, 140, what="flat", suspects=[fb.suspect("ignore_topology", 80)]))
    flat = fb.CATALOGUE["ignore_topology"]
    assert "That is the answer you get with " + flat.name in text
    assert flat.explanation in text
    assert "see 'The collective' in chapter 1 (#ch1-collective)" in text


def test_detail_and_section_override():
    text = message(lambda: fb.expect(
        52, 51, what="m", suspects=[fb.suspect("off_by_one", 52, "The 52nd does not fit.", section="ch1-activations")]))
    assert "The 52nd does not fit." in text
    assert "#ch1-activations" in text and "#ch1-collective" not in text


def test_several_matching_mistakes_are_all_listed():
    text = message(lambda: fb.expect(0, 4, what="q", suspects=[
        fb.suspect("units", 0), fb.suspect("ignore_topology", 0), fb.suspect("units", 0)]))
    assert "more than one known mistake" in text
    assert text.count("  - ") == 2  # the duplicate key is listed once


def test_generic_slips_relative_to_the_right_value():
    assert "a factor of 8" in message(lambda: fb.expect(7.0, 56.0, what="w", slips=("units",)))
    assert "a factor of 8" in message(lambda: fb.expect(448, 56, what="w", slips=("units",)))
    assert "a factor of 2" in message(lambda: fb.expect(9, 4.5, what="r", slips=("both_directions",)))
    assert "off-by-one" in message(lambda: fb.expect(5, 4, what="n", slips=("off_by_one",)))
    text = message(lambda: fb.expect(7.0, 56.0, what="w", slips=("units",), slip_section="ch1-cxl"))
    assert "#ch1-cxl" in text
    with pytest.raises(ValueError, match="slips must be among"):
        fb.expect(1, 2, what="x", slips=("sideways",))


def test_a_predicate_suspect_covers_a_range():
    text = message(lambda: fb.expect(2000, 4, what="n", suspects=[fb.suspect("nic_per_gpu", lambda v: v >= 100)]))
    assert fb.CATALOGUE["nic_per_gpu"].name in text
    # a predicate that raises is simply no match
    fb.reject(5, what="n", suspects=[fb.suspect("nic_per_gpu", lambda v: v.missing)])


def test_reject_passes_unknown_answers_and_names_known_ones():
    fb.reject(4, what="q2", suspects=[fb.suspect("both_directions", 8)])
    text = message(lambda: fb.reject(8, what="q2", suspects=[fb.suspect("both_directions", 8)]))
    assert text.startswith("q2: your answer is 8.")
    assert "right answer" not in text
    assert "still `...`" in message(lambda: fb.reject(..., what="q2"))
    assert "a whole number" in message(lambda: fb.reject(4.5, what="q2", kind="integer"))


def test_expect_call_reports_the_call_its_result_and_its_exceptions():
    def twice(x):
        return 2 * x

    fb.expect_call(twice, {"x": 2.5}, 5.0)
    text = message(lambda: fb.expect_call(twice, {"x": 2.5}, 20.0, slips=("units",)))
    assert text.startswith("twice(x=2.5) returns 5, but the right answer is 20.")
    assert "returned None" not in text
    assert "ZeroDivisionError" in message(lambda: fb.expect_call(lambda x: 1 / 0, {"x": 1}, 1, name="f"))
    assert "not defined yet" in message(lambda: fb.expect_call(None, {}, 1, name="overlap_efficiency"))
    assert "should be a function" in message(lambda: fb.expect_call(3, {}, 1, name="f"))
    assert "f() returned None" in message(lambda: fb.expect_call(lambda: None, {}, 1, name="f"))
    fb.expect_call(lambda: [0.5, 0.2], {}, (0.5, 0.2), name="pair", result=tuple)
    assert "expected shape" in message(lambda: fb.expect_call(lambda: 3, {}, (1, 2), name="pair", result=tuple))


def test_bad_arguments_are_value_errors():
    with pytest.raises(ValueError, match="key must be one of"):
        fb.suspect("no_such_mistake", 1)
    with pytest.raises(ValueError, match="section must be one of"):
        fb.suspect("units", 1, section="ch9-nowhere")
    with pytest.raises(ValueError, match="tol and rel must be >= 0"):
        fb.expect(1, 1, what="x", tol=-1)
    with pytest.raises(ValueError, match="kind must be one of"):
        fb.require(1, "x", kind="matrix")
    with pytest.raises(ValueError, match="key must be new or identical"):
        fb.register(fb.Misconception("units", "something else", "text", "ch1-scaling"))


def test_register_adds_a_misconception_for_a_later_chapter():
    item = fb.Misconception("test_only_mistake", "a test mistake", "Text.", "ch1-fabric")
    try:
        fb.register(item)
        fb.register(item)  # registering the identical item again is fine
        assert fb.misconception("test_only_mistake") is item
    finally:
        fb.CATALOGUE.pop("test_only_mistake", None)


def test_every_broken_build_of_chapter_1_has_a_misconception():
    import clustermath
    from clustermath import spec_of

    for model in clustermath.MODELS:
        assert spec_of(model).broken_flag in fb.CATALOGUE


def test_every_cited_section_is_a_target_in_the_book():
    """The labels the messages cite must exist, so a renamed section fails here first."""
    texts = []
    for path in list(ROOT.glob("notebooks/*.ipynb")) + list(ROOT.glob("book/*.md")):
        if path.suffix == ".ipynb":
            texts += ["".join(c["source"]) for c in json.loads(path.read_text())["cells"]]
        else:
            texts.append(path.read_text())
    targets = set(re.findall(r"^\(([\w-]+)\)=\s*$", "\n".join(texts), flags=re.M))
    missing = sorted(set(fb.SECTION_TITLES) - targets)
    assert not missing, f"sections cited by clustermath.feedback but not defined in the book: {missing}"
    for item in fb.CATALOGUE.values():
        assert item.section in fb.SECTION_TITLES


def test_committed_derived_notebooks_carry_no_otter_markers_or_hidden_tests():
    """Cheap guards on the committed files; `make exercises-check` regenerates and compares them."""
    students = sorted((ROOT / "exercises").glob("*.ipynb"))
    pages = sorted((ROOT / "book" / "solutions").glob("*.ipynb"))
    assert [p.name for p in students] == [p.name for p in pages] != []
    for path in students + pages:
        nb = json.loads(path.read_text())
        code = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
        assert "# BEGIN SOLUTION" not in code and "# SOLUTION" not in code, path
        assert not any(c.get("outputs") for c in nb["cells"] if c["cell_type"] == "code"), path
        assert all(c["cell_type"] != "raw" for c in nb["cells"]), path
    for path in students:
        tests = json.loads(path.read_text())["metadata"]["otter"]["tests"]
        assert tests and all("hidden=True" not in t for t in tests.values()), path
