"""Tables a code cell prints are numbered by chapter like the book's figures (Table 1.3).

A code cell whose output is a worked table says so in its metadata::

    "cm": {"table": {"name": "tbl-ch1-scaling", "caption": "Five cluster sizes, scaled"}}

While Sphinx reads a chapter (a transform, before the standard domain collects the chapter's labels),
that cell's output is wrapped in a ``worked_table`` node: enumerable as Sphinx's "table" (it shares
the counter of ``{table}`` directives, so numfig numbers it per chapter), with the caption above
the table and the name as its id, so ``{numref}`tbl-ch1-scaling``` reads "Table 1.3". The caption is
fixed words (numbers come from the code, in the table itself). The notebook is unchanged.

A table that prints a ``<caption>`` of its own (chapter 1's worked tables: the rows' setting and each
build's counters, computed) would show a second title under the book's; that caption's words move
into the numbered caption, after the fixed words, and leave the table, so the table is titled once and
every computed number stays. Like a figure's, the caption ends in a permalink (the theme's ``#``).
"""
from __future__ import annotations

import html
import re
from typing import Any

from docutils import nodes
from sphinx.locale import _
from sphinx.transforms import SphinxTransform
from sphinx.util import logging

logger = logging.getLogger(__name__)


class worked_table(nodes.General, nodes.Element):  # noqa: N801 (docutils' node naming)
    """A code cell's printed table, with a caption and a name; numbered as a table."""


class table_box(nodes.General, nodes.Element):  # noqa: N801 (docutils' node naming)
    """The box a worked table scrolls sideways in (myst-nb's ``output text_html``), reachable by
    keyboard: ``tabindex="0"``, ``role="region"`` and the caption as its name, so a reader without a
    mouse can scroll a table wider than the column (axe-core: scrollable-region-focusable)."""


def table_options(metadata: dict) -> dict | None:
    """The ``cm.table`` entry of a cell's metadata ({"name", "caption"}), or None if absent."""
    entry = (metadata.get("cm") or {}).get("table")
    if entry is None:
        return None
    if not isinstance(entry, dict) or not entry.get("name") or not entry.get("caption"):
        raise ValueError(f"cm.table must give a name and a caption, got {entry!r}")
    return entry


HTML_CAPTION = re.compile(r"<caption\b[^>]*>(.*?)</caption>\s*", re.S | re.I)


def take_caption(table_html: str) -> tuple[str, str]:
    """(the table's HTML without its first ``<caption>``, that caption as plain text); the text is
    empty where the table has no caption of its own."""
    found = HTML_CAPTION.search(table_html)
    if found is None:
        return table_html, ""
    text = html.unescape(re.sub(r"<[^>]+>", "", found.group(1)))
    return table_html[:found.start()] + table_html[found.end():], " ".join(text.split())


def caption_note(fixed: str, note: str) -> str:
    """The words a table's own caption adds after the book's fixed caption: one sentence on."""
    if not note:
        return ""
    return (" " if fixed.rstrip()[-1:] in ".:;?!" else ". ") + note


class WrapWorkedTables(SphinxTransform):
    """Wrap each marked code cell's output in a numbered, captioned, named table node."""

    # runs while the chapter is read, so the name is an explicit target when the standard domain
    # collects the chapter's labels (after reading) and numfig counts the node (env-get-updated)
    default_priority = 200

    def apply(self, **kwargs: Any) -> None:
        for cell in list(self.document.findall(nodes.container)):
            if cell.get("nb_element") != "cell_code":
                continue
            try:
                options = table_options(cell.get("cell_metadata") or {})
            except ValueError as error:
                logger.warning(str(error), location=cell)
                continue
            if options is None:
                continue
            outputs = [c for c in cell.children if isinstance(c, nodes.container)
                       and c.get("nb_element") == "cell_code_output"]
            if not outputs:
                logger.warning(f"cm.table {options['name']!r}: the cell has no output", location=cell)
                continue
            output = outputs[0]
            table = worked_table(classes=["cm-worked-table"])
            table.source, table.line = cell.source, cell.line
            caption = nodes.caption("", nodes.Text(str(options["caption"])))
            table += caption
            table.extend(output.children)
            note = ""
            for raw in list(table.findall(nodes.raw)):
                if raw.get("format") == "html" and not note:
                    text, note = take_caption(raw.astext())
                    if note:
                        raw.children = [nodes.Text(text)]
                        # plain words of the caption (a span of its own, wrapping from the caption
                        # number's line, overlapped it: axe could not judge its contrast)
                        caption += nodes.Text(caption_note(str(options["caption"]), note))
                if "text_html" in raw.get("classes", []):
                    # myst-nb's HTML output (inside its mime-bundle container): a raw node whose
                    # classes the writer turns into the div that scrolls; the box draws that div
                    box = table_box(classes=list(raw["classes"]), label=str(options["caption"]))
                    raw.parent.replace(raw, box)
                    raw["classes"] = []
                    box += raw
            output.children = []
            output += table
            table.parent = output
            name = nodes.fully_normalize_name(str(options["name"]))
            table["names"].append(name)
            self.document.note_explicit_target(table, table)


def visit_html(self: Any, node: worked_table) -> None:
    self.body.append(self.starttag(node, "div"))  # class cm-worked-table, id the name


def depart_html(self: Any, node: worked_table) -> None:
    self.body.append("</div>\n")


def visit_box_html(self: Any, node: table_box) -> None:
    self.body.append(self.starttag(node, "div", tabindex="0", role="region", **{"aria-label": node["label"]}))


def visit_skip(self: Any, node: nodes.Element) -> None:
    pass


def depart_caption_html(self: Any, node: nodes.caption) -> None:
    """Sphinx's own caption ending, plus a permalink after a worked table's caption (Sphinx gives one
    to a figure's, a code block's and a ``{table}``'s, not to a caption of another node)."""
    if isinstance(node.parent, worked_table):
        self.body.append("</span>")
        self.add_permalink_ref(node.parent, _("Link to this table"))
        self.body.append("</p>\n")
    else:
        type(self).depart_caption(self, node)


def visit_caption_html(self: Any, node: nodes.caption) -> None:
    type(self).visit_caption(self, node)


def setup(app: Any) -> dict:
    app.add_enumerable_node(worked_table, "table", html=(visit_html, depart_html),
                            latex=(visit_skip, visit_skip), text=(visit_skip, visit_skip))
    app.add_node(table_box, html=(visit_box_html, depart_html), latex=(visit_skip, visit_skip),
                 text=(visit_skip, visit_skip))
    # only the HTML ending of a caption changes; every other caption is written by Sphinx's own methods
    app.add_node(nodes.caption, override=True, html=(visit_caption_html, depart_caption_html))
    app.add_transform(WrapWorkedTables)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
