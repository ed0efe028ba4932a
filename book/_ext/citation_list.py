"""Write the bibliography as a valid ARIA list.

docutils 0.21's HTML5 writer wraps consecutive citations in ``<div role="list"
class="citation-list">`` and gives each citation ``role="doc-biblioentry"``.
DPUB-ARIA 1.1 deprecated that role (use ``listitem``), and axe-core 4.12 no
longer counts it as a list item: the list then "owns" the links inside the
entries, and axe reports aria-required-children (critical) on the references
page, plus aria-deprecated-role and aria-allowed-role on every entry.

This extension gives each citation ``role="listitem"`` instead, in whatever
HTML translator the builder ends up with (pydata-sphinx-theme swaps in its own
subclass at builder-inited; this runs after it and subclasses that).
"""
from __future__ import annotations

from typing import Any

CITATION_ROLE = "listitem"


class CitationListItemMixin:
    """visit_citation as docutils writes it, with each entry a list item."""

    def visit_citation(self, node: Any) -> None:
        if not isinstance(node.previous_sibling(), type(node)):
            self.body.append('<div role="list" class="citation-list">\n')
        self.body.append(self.starttag(node, "div", classes=[node.tagname], role=CITATION_ROLE))


def _use_listitem_citations(app: Any) -> None:
    builder = app.builder
    if builder.format != "html" or builder.default_translator_class is None:
        return
    base = app.registry.translators.get(builder.name) or builder.default_translator_class
    if issubclass(base, CitationListItemMixin):
        return
    translator = type(base.__name__, (CitationListItemMixin, base), {})
    app.set_translator(builder.name, translator, override=True)


def setup(app: Any) -> dict:
    # After pydata-sphinx-theme's own builder-inited translator swap (default priority 500).
    app.connect("builder-inited", _use_listitem_citations, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
