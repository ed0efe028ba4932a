"""Check lines folded into one line each run, so the prose reads first.

Every verified number a chapter prints is a check line (``clustermath.check``)::

    ✓ <label>: <value>  [<kind> from <source>: <expected>]

A worked table prints dozens of them, and at 1366 px their brackets ran off the
right of the output box. In the built pages, the check lines of a cell's printed
output, two or more, become one line that opens to the list::

    ✓ 7 numbers agree: 6 quoted from source 002, 1 derived   (show the 7 checks)

One per output, even where the cell prints other lines between its checks: the
other lines stay in their order and the folded line follows them (the prose of the
output first; each check line names what it checks, so none needs its neighbour).
The stream a cell prints reaches Sphinx in as many pieces as the kernel flushed
(a fresh execution splits what ``make refresh`` stores as one); consecutive pieces
are joined first, so a split never makes two folds. The list inside wraps instead
of running off the page; an output that keeps a lone check line wraps too (class
``cm-wrap``), so no bracket is cut off at the right. The notebooks are untouched:
their stored outputs keep every line, and nbval compares them as before; only the
HTML changes (and the single-page build the PDF prints, which shows the folded line).
"""
from __future__ import annotations

import html
import re
from collections import Counter
from typing import Any

from docutils import nodes

# the bracket after two spaces ends the line; it may hold brackets itself ("[derived, every count: []]")
CHECK_LINE = re.compile(r"^✓ .*?  \[(?P<origin>.*)\]\s*$")
SOURCE = re.compile(r"\bsource \d{3}\b")
KINDS = ("quoted", "rebuilt", "derived", "algebra")
MIN_RUN = 2


def origin_of(line: str) -> tuple[str, str] | None:
    """(kind, source) of a check line (source "" where none is named), or None for another line."""
    found = CHECK_LINE.match(line)
    if not found:
        return None
    origin = found.group("origin")
    kind = next((k for k in KINDS if origin.startswith(k)), "checked")
    source = SOURCE.search(origin)
    return kind, source.group(0) if source else ""


def summary(lines: list[str]) -> str:
    """The one line a run of check lines folds into: how many, of which kind, from which source."""
    counts = Counter(origin_of(line) for line in lines)
    parts = []
    for (kind, source), n in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        parts.append(f"{n} {kind}" + (f" from {source}" if kind in ("quoted", "rebuilt") and source else ""))
    return f"✓ {len(lines)} numbers agree: " + ", ".join(parts)


def segments(text: str) -> list[tuple[bool, list[str]]]:
    """The text as (is a fold, lines) pieces, in order: with ``MIN_RUN`` or more check lines, the other
    lines (in their order) and then one fold of every check line; otherwise the text as it is."""
    lines = text.rstrip("\n").split("\n") if text.strip() else []
    checks = [line for line in lines if origin_of(line)]
    if len(checks) < MIN_RUN:
        return [(False, lines)] if lines else []
    others = [line for line in lines if not origin_of(line)]
    return ([(False, others)] if others else []) + [(True, checks)]


def fold_html(lines: list[str]) -> str:
    body = html.escape("\n".join(lines))
    return (f'<details class="cm-checks"><summary>{html.escape(summary(lines))}'
            f'<span class="cm-checks-open"> (show the {len(lines)} checks)</span></summary>'
            f'<pre class="cm-checks-list">{body}</pre></details>')


def is_stream(node: nodes.Node) -> bool:
    """Whether a node is a piece of a cell's printed standard output (myst-nb: classes output, stream)."""
    return isinstance(node, nodes.literal_block) and {"output", "stream"} <= set(node.get("classes", []))


def join_streams(doctree: nodes.document) -> None:
    """Join each run of consecutive stdout pieces of one output into the first (nothing else between)."""
    for parent in {id(b.parent): b.parent for b in doctree.findall(is_stream)}.values():
        kept: list[nodes.Node] = []
        for child in list(parent.children):
            before = kept[-1] if kept else None
            if before is not None and is_stream(child) and is_stream(before) and child["classes"] == before["classes"]:
                text = before.astext().rstrip("\n") + "\n" + child.astext()
                before.children = []
                before += nodes.Text(text)
                before.rawsource = text
                continue
            kept.append(child)
        if len(kept) < len(parent.children):
            parent.children = []
            parent.extend(kept)


def _fold(app: Any, doctree: nodes.document, docname: str) -> None:
    if app.builder.format != "html":
        return
    join_streams(doctree)
    for block in list(doctree.findall(is_stream)):
        pieces = segments(block.astext())
        if not any(is_fold or any(map(origin_of, lines)) for is_fold, lines in pieces):
            continue
        replacement: list[nodes.Node] = []
        for is_fold, lines in pieces:
            if is_fold:
                replacement.append(nodes.raw("", fold_html(lines), format="html"))
            else:
                text = "\n".join(lines)
                # a lone check line keeps its bracket on screen: the piece wraps instead of running off
                wrap = ["cm-wrap"] if any(map(origin_of, lines)) else []
                piece = nodes.literal_block(text, text, classes=list(block["classes"]) + wrap)
                piece["language"] = block.get("language", "none")
                replacement.append(piece)
        block.replace_self(replacement)


def setup(app: Any) -> dict:
    app.connect("doctree-resolved", _fold)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
