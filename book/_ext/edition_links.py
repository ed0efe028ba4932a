"""The book's editions: the full book, and the student edition without what is for instructors.

``book_edition`` (a Sphinx setting, "full" unless ``tools/edition.py`` writes
another build's config) names the edition; ``book_edition_leaves_out`` lists the
documents it leaves out, as glob patterns of document names (for the student
edition: the Solutions part and the page for instructors). The table of
contents of such a build does not list them, so Sphinx never reads them; this
extension removes every *paragraph* that links to one of them, so that no page
of the edition points at a page it does not have.

The rule for authors: a link to a solution page gets a paragraph of its own
("Worked solutions: {doc}`...`."), and that paragraph links to nothing else.
A paragraph that would be removed but also links elsewhere, or a link to a
left-out document outside any paragraph (a heading, a table cell), is reported
as a warning, which fails the build under ``-W``; so does a ``{ref}`` to a label
on a left-out page, which Sphinx cannot resolve there.

It also sets the Sphinx tag ``edition_<name>`` (``edition_full``, ``edition_student``),
so a page can say what an edition lacks with ``{only} edition_student`` and
``{only} not edition_student`` blocks (the launch buttons, which the student
edition does not draw).
"""
from __future__ import annotations

import fnmatch
import posixpath
from typing import Any

from docutils import nodes
from sphinx import addnodes
from sphinx.util import logging
from sphinx.util.osutil import SEP

logger = logging.getLogger(__name__)

SUFFIXES = (".md", ".ipynb", ".html", ".rst")


def target_docname(refdoc: str, target: str) -> str:
    """The document a link from ``refdoc`` names: ``/book/x``, ``../book/x.ipynb`` or ``x#part``."""
    target = target.split("#", 1)[0]
    for suffix in SUFFIXES:
        if target.endswith(suffix):
            target = target[: -len(suffix)]
            break
    if target.startswith(SEP):
        return posixpath.normpath(target)[1:]
    return posixpath.normpath(posixpath.join(posixpath.dirname(refdoc), target))


def left_out(docname: str, patterns: list[str]) -> bool:
    return any(fnmatch.fnmatchcase(docname, p) for p in patterns)


def _links(node: nodes.Node, refdoc: str) -> list[str]:
    """Documents linked from inside ``node`` (cross-references and relative links)."""
    found = []
    for ref in node.findall(addnodes.pending_xref):
        if ref.get("reftype") in ("doc", "myst") and ref.get("reftarget"):
            found.append(target_docname(refdoc, ref["reftarget"]))
        else:
            found.append(f"{ref.get('reftype')}:{ref.get('reftarget')}")
    for ref in node.findall(nodes.reference):
        uri = ref.get("refuri", "")
        if uri and "://" not in uri and not uri.startswith(("mailto:", "#")):
            found.append(target_docname(refdoc, uri))
        elif uri:
            found.append(uri)
    return found


def _remove_upwards(node: nodes.Element) -> None:
    """Remove ``node``, then each parent it leaves holding nothing but a title."""
    parent = node.parent
    parent.remove(node)
    while (parent is not None and not isinstance(parent, (nodes.section, nodes.document))
           and all(isinstance(c, nodes.title) for c in parent.children)):
        grand = parent.parent
        if grand is None:
            break
        grand.remove(parent)
        parent = grand


def leave_out_links(app: Any, doctree: nodes.document) -> None:
    """Drop every paragraph of this page that links to a document the edition leaves out."""
    patterns = app.config.book_edition_leaves_out
    if app.config.book_edition == "full" or not patterns:
        return
    docname = app.env.docname
    doomed: list[nodes.paragraph] = []
    for ref in list(doctree.findall(addnodes.pending_xref)):
        if ref.get("reftype") not in ("doc", "myst") or not ref.get("reftarget"):
            continue
        target = target_docname(docname, ref["reftarget"])
        if not left_out(target, patterns):
            continue
        paragraph = ref.parent
        while paragraph is not None and not isinstance(paragraph, nodes.paragraph):
            paragraph = paragraph.parent
        if paragraph is None:
            logger.warning(f"{app.config.book_edition} edition: a link to {target} outside a paragraph "
                           "cannot be left out; put it in a paragraph of its own", location=ref)
            continue
        if paragraph not in doomed:
            doomed.append(paragraph)
    for paragraph in doomed:
        others = [d for d in _links(paragraph, docname) if not left_out(d, patterns)]
        if others:
            logger.warning(f"{app.config.book_edition} edition: this paragraph links to a page the edition "
                           f"leaves out and also to {', '.join(sorted(set(others)))}; give the link to the "
                           "left-out page a paragraph of its own", location=paragraph)
            continue
        _remove_upwards(paragraph)
    if doomed:
        logger.info(f"{app.config.book_edition} edition: {docname}: {len(doomed)} paragraph(s) left out")


def tag_edition(app: Any, config: Any) -> None:
    """Set the tag ``edition_<name>`` so a page can say what differs with ``{only} edition_student``."""
    app.tags.add(f"edition_{config.book_edition}")


def setup(app: Any) -> dict:
    app.add_config_value("book_edition", "full", "env", types=[str])
    app.add_config_value("book_edition_leaves_out", [], "env", types=[list])
    app.connect("config-inited", tag_edition)
    app.connect("doctree-read", leave_out_links)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
