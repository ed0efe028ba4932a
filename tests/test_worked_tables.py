"""The cell metadata that marks a printed table (book/_ext/worked_tables.py): name and caption, or a
clear error."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "book" / "_ext"))
from worked_tables import table_options  # noqa: E402


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
