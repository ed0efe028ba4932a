"""book/_ext/check_fold.py: runs of check lines fold into one line; every other line stays put."""
from __future__ import annotations

import importlib.util
from pathlib import Path

EXT = Path(__file__).resolve().parent.parent / "book" / "_ext" / "check_fold.py"
_spec = importlib.util.spec_from_file_location("check_fold", EXT)
fold = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fold)

Q = "✓ GPUs in the job: 16,384  [quoted from source 002: 16,384]"
D = "✓ GPU category: 64.0%  [derived, 268 ÷ 419: about 64.0%]"
A = "✓ bubble, closed form: 0.2  [algebra: 0.2]"
R = "✓ row 3: 1,170  [rebuilt from source 000 §5 (Table 2): 1,170]"


def test_a_check_line_and_its_origin():
    assert fold.origin_of(Q) == ("quoted", "source 002")
    assert fold.origin_of(D) == ("derived", "")
    assert fold.origin_of(A) == ("algebra", "")
    assert fold.origin_of(R) == ("rebuilt", "source 000")
    assert fold.origin_of("54 days × 24 h / 419 = 3.093 h") is None
    assert fold.origin_of("✓ no bracket here") is None
    # an expected value that is a list: chapter 1's microbatch search (it stayed unfolded)
    assert fold.origin_of("✓ counts giving 9% then 17%: []  [derived, every count from 1 to 4,096: []]") == ("derived", "")


def test_an_outputs_check_lines_fold_into_one_line_after_its_other_lines():
    # issue 40: one folded line per output, even where the cell prints other lines between its checks
    text = "\n".join(["a heading", Q, D, "a sum: 3", Q, "last", A, R, Q]) + "\n"
    assert fold.segments(text) == [(False, ["a heading", "a sum: 3", "last"]), (True, [Q, D, Q, A, R, Q])]
    assert fold.segments("\n".join([Q, D]) + "\n") == [(True, [Q, D])]


def test_a_lone_check_line_stays_in_its_place():
    assert fold.segments("\n".join(["x", Q, "y"]) + "\n") == [(False, ["x", Q, "y"])]


def test_every_line_survives_the_fold():
    text = "\n".join([Q, D, "x", A]) + "\n"
    assert sorted(line for _, lines in fold.segments(text) for line in lines) == sorted([Q, D, "x", A])


def test_pieces_of_one_printed_stream_are_joined_before_folding():
    # a fresh execution hands Sphinx a cell's stdout in as many pieces as the kernel flushed
    from docutils import nodes

    def piece(text, *extra):
        return nodes.literal_block(text, text, classes=["output", "stream", *extra])

    output = nodes.container()
    output += [piece(Q + "\n"), piece(D + "\n"), nodes.paragraph("", "a table"), piece(A + "\n"),
               piece("warning\n", "stderr"), piece(R + "\n")]
    document = nodes.document(None, None)
    document += output
    fold.join_streams(document)
    assert [c.astext() for c in output.children] == [Q + "\n" + D + "\n", "a table", A + "\n", "warning\n", R + "\n"]


def test_no_check_line_no_fold():
    assert fold.segments("one\ntwo\n") == [(False, ["one", "two"])]
    assert fold.segments("") == []


def test_the_summary_counts_kinds_and_sources():
    assert fold.summary([Q, Q, D, R]) == "✓ 4 numbers agree: 2 quoted from source 002, 1 derived, 1 rebuilt from source 000"


def test_the_fold_escapes_and_keeps_every_line():
    out = fold.fold_html([Q, "✓ a <b> tag: 1  [algebra: 1]"])
    assert "&lt;b&gt;" in out and "<b>" not in out
    assert out.startswith('<details class="cm-checks">') and "show the 2 checks" in out
    assert "16,384  [quoted from source 002: 16,384]" in out
