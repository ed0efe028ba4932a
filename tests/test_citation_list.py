"""book/_ext/citation_list.py: a bibliography is a list of list items in the HTML.

The browser check (tests/browser, axe-core's aria-required-children on book/references.html)
needs the built book; this builds a two-citation page with Sphinx in a few seconds.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

EXT = Path(__file__).resolve().parent.parent / "book" / "_ext"

PAGE = """Title
=====

See [Alpha]_ and [Beta]_.

.. [Alpha] A first reference.
.. [Beta] A second reference.
"""


def build(tmp_path: Path, extensions: list[str]) -> str:
    from sphinx.application import Sphinx

    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text(f"extensions = {extensions!r}\n", encoding="utf-8")
    (src / "index.rst").write_text(PAGE, encoding="utf-8")
    out = tmp_path / "out"
    sys.path.insert(0, str(EXT))
    try:
        app = Sphinx(str(src), str(src), str(out), str(tmp_path / "doctrees"), "html",
                     status=None, warning=None, freshenv=True)
        app.build()
    finally:
        sys.path.remove(str(EXT))
    return (out / "index.html").read_text(encoding="utf-8")


def entries(html: str) -> list[str]:
    """The role of every element directly inside the citation list."""
    block = html.split('<div role="list" class="citation-list">', 1)[1]
    return re.findall(r'<div class="citation" id="[^"]+" role="([^"]+)"', block)


@pytest.mark.parametrize("with_extension", [True, False])
def test_citation_list_holds_list_items(tmp_path, with_extension):
    html = build(tmp_path, ["citation_list"] if with_extension else [])
    roles = entries(html)
    assert len(roles) == 2
    if with_extension:
        assert roles == ["listitem", "listitem"]
        assert "doc-biblioentry" not in html
    else:  # docutils 0.21's own output, the defect the extension removes (if a newer docutils
        # writes list items itself, this fails: the extension can then go)
        assert roles == ["doc-biblioentry", "doc-biblioentry"]
