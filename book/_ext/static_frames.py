"""Frames for the static site's explorers, computed while the book builds.

myst-nb executes each chapter in a fresh kernel while Sphinx reads it. Just
before (``source-read``), this extension points ``CLUSTERMATH_FRAMES_DIR`` at
``<html>/_frames/<docname>/``; the kernel inherits the variable, and every
explorer displayed there writes its frames into that folder
(``clustermath.views.frames``). When the page is written, a
``<meta name="cm-frames">`` tag tells ``static-widgets.js`` where the page's
frames are; pages with none get no tag. At the end of the build the frames'
size and the time spent computing them are logged, per chapter.

A build that reuses an earlier build's executions (``make test``'s student edition,
through ``tools/edition.py --reuse``) sets ``static_frames_from`` to that build's
frames folder: each chapter's frames are then copied from there, since no kernel
runs to compute them, and the kernel is not asked to write any.

Only the ``html`` builder gets frames (the PDF's single-page build does not:
paper shows the default picture), and a chapter's old frames are removed
before it runs again, so frames never outlive the explorer that wrote them.
"""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from sphinx.util import logging

ENV = "CLUSTERMATH_FRAMES_DIR"  # clustermath.views.frames.ENV (kept import-free: the layer rules)
FOLDER = "_frames"

log = logging.getLogger(__name__)


def _enabled(app: Any) -> bool:
    return getattr(app.builder, "name", "") == "html"


def _root(app: Any) -> Path:
    return Path(app.outdir) / FOLDER


def _source_read(app: Any, docname: str, source: list[str]) -> None:
    if not _enabled(app):
        os.environ.pop(ENV, None)
        return
    folder = _root(app) / docname
    shutil.rmtree(folder, ignore_errors=True)
    earlier = app.config.static_frames_from
    if earlier:
        os.environ.pop(ENV, None)
        if (Path(earlier) / docname).is_dir():
            shutil.copytree(Path(earlier) / docname, folder)
        return
    os.environ[ENV] = str(folder)


def _indexes(folder: Path) -> list[dict]:
    """The frame indexes written into one chapter's folder."""
    found = []
    for path in sorted(folder.glob("*/index.js")):
        text = path.read_text(encoding="utf-8")
        found.append(json.loads(text[text.index(",") + 1: text.rindex(")")]))
    return found


def _page_context(app: Any, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    if not _enabled(app) or not (_root(app) / pagename).is_dir():
        return
    url = context["pathto"](f"{FOLDER}/{pagename}/index", 1).rsplit("index", 1)[0]
    context["metatags"] = context.get("metatags", "") + f'\n<meta name="cm-frames" content="{url}" />'


def _build_finished(app: Any, exception: Exception | None) -> None:
    os.environ.pop(ENV, None)
    if exception is not None or not _enabled(app) or not _root(app).is_dir():
        return
    for folder in sorted(p for p in _root(app).rglob("*") if p.is_dir() and any(p.glob("*/index.js"))):
        indexes = _indexes(folder)
        size = sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())
        frames = sum(i["stats"]["frames"] for i in indexes)
        seconds = sum(i["stats"]["seconds"] for i in indexes)
        cpu = sum(i["stats"].get("cpu_seconds", 0) for i in indexes)
        explorers = f"{len(indexes)} explorer{'' if len(indexes) == 1 else 's'}"
        log.info(f"frames: {folder.relative_to(_root(app)).as_posix()}: {explorers}, "
                 f"{frames:,} frames, {size / 1e6:.2f} MB, computed in {seconds:.1f} s ({cpu:.1f} s of CPU)")


def setup(app: Any) -> dict:
    app.add_config_value("static_frames_from", "", "env")
    app.connect("source-read", _source_read)
    app.connect("html-page-context", _page_context)
    app.connect("build-finished", _build_finished)
    return {"parallel_read_safe": False, "parallel_write_safe": True}
