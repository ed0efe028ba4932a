"""The cell metadata that marks a printed table (book/_ext/worked_tables.py): name and caption, or a
clear error."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "book" / "_ext"))
from worked_tables import caption_note, table_options, take_caption  # noqa: E402


def test_a_marked_cell_gives_its_name_and_caption():
    meta = {"cm": {"table": {"name": "tbl-ch1-x", "caption": "Words"}}, "tags": ["hide-input"]}
    assert table_options(meta) == {"name": "tbl-ch1-x", "caption": "Words"}


@pytest.mark.parametrize("meta", [{}, {"tags": ["hide-input"]}, {"cm": {}}, {"cm": None}])
def test_an_unmarked_cell_is_left_alone(meta):
    assert table_options(meta) is None


@pytest.mark.parametrize("entry", [{"name": "tbl-ch1-x"}, {"caption": "Words"}, {"name": "", "caption": "W"}, "tbl"])
def test_a_table_without_name_or_caption_is_refused(entry):
    with pytest.raises(ValueError, match="cm.table must give a name and a caption"):
        table_options({"cm": {"table": entry}})


# -- a printed table's own <caption> moves into the numbered caption (titled once, numbers kept) -----

def test_a_tables_own_caption_is_taken_out_with_its_words():
    table = '<table id="T"><caption>Five rows: 64 nodes &amp; <b>1,024</b> GPUs.</caption>\n  <thead></thead></table>'
    rest, words = take_caption(table)
    assert words == "Five rows: 64 nodes & 1,024 GPUs."
    assert rest == '<table id="T"><thead></thead></table>'


def test_a_table_without_a_caption_is_left_as_it_is():
    table = "<table><thead><tr><th>caption</th></tr></thead></table>"
    assert take_caption(table) == (table, "")


@pytest.mark.parametrize("fixed, joined", [("Cluster scale", ". Five rows."), ("Does it hold?", " Five rows."),
                                           ("Ends with a stop.", " Five rows.")])
def test_the_tables_words_follow_the_fixed_caption_as_a_sentence(fixed, joined):
    assert caption_note(fixed, "Five rows.") == joined
    assert caption_note(fixed, "") == ""
