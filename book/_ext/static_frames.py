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

When the build ends, each explorer's pictures are packed (:func:`pack`): the pictures of the
frames one control reaches from the defaults go into one script, ``pack-c<i>.js`` (the frames of
several controls at once, a grid's or a preset's, into ``pack-x.js``; a pack over ``PACK_BYTES``
is split in parts), as ``data:`` URLs, and the index names each picture's pack. The page fetches
a control's pack when that control first takes the focus or moves, so one touch of an explorer is
a few requests, not one per picture (issue 41: 113-888 before). An explorer whose frames are
computed per value of one control (chapter 6's run picker, ``frames_by``) gets one script per value
instead, ``pack-r<k>.js``, with that value's frames as well as their pictures (:func:`pack_runs`).

Only the ``html`` builder gets frames (the PDF's single-page build does not:
paper shows the default picture), and a chapter's old frames are removed
before it runs again, so frames never outlive the explorer that wrote them.
"""
from __future__ import annotations

import base64
import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

from sphinx.util import logging

ENV = "CLUSTERMATH_FRAMES_DIR"  # clustermath.views.frames.ENV (kept import-free: the layer rules)
FOLDER = "_frames"
PACK_BYTES = 400_000  # a pack's pictures (before base64), at most, unless one picture is larger
MIME = {".webp": "image/webp", ".png": "image/png"}

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
    return [_read_index(path)[1] for path in sorted(folder.glob("*/index.js"))]


def _read_index(path: Path) -> tuple[str, dict]:
    text = path.read_text(encoding="utf-8")
    return text[: text.index(",") + 1], json.loads(text[text.index(",") + 1: text.rindex(")")])


def _group(state: str, default: list[str]) -> str:
    """The pack of a frame: ``c<i>`` when only control i differs from the default, else ``x``."""
    moved = [i for i, (a, b) in enumerate(zip(state.split(","), default)) if a != b]
    return f"c{moved[0]}" if len(moved) == 1 else "x"


def _table(index: dict, number: int) -> str:
    """A table's HTML from the index's tokens (``clustermath.views.frames._Tokens.text``)."""
    ids = index["tables"][number]
    if ids and ids[0] == -1:
        whole = list(index["tables"][0])
        for i in range(1, len(ids), 2):
            whole[ids[i]] = ids[i + 1]
        ids = whole
    return "".join(index["tokens"][i] for i in ids)


def _tokenize(tables: list[str]) -> tuple[list[str], list[list[int]]]:
    """Tables as ids into one list of tokens, each after the first as its differences from the first
    where it has as many tokens (the index's own scheme, ``_Tokens``)."""
    tokens: list[str] = []
    ids_of: dict[str, int] = {}
    out: list[list[int]] = []
    for table in tables:
        ids = []
        for token in re.split(r"(<[^>]*>)", table):
            if token:
                ids.append(ids_of.setdefault(token, len(tokens)))
                if ids[-1] == len(tokens):
                    tokens.append(token)
        if out and len(out[0]) == len(ids):
            ids = [-1] + [x for i, (a, b) in enumerate(zip(out[0], ids)) if a != b for x in (i, b)]
        out.append(ids)
    return tokens, out


def _data_url(path: Path) -> str:
    return f"data:{MIME[path.suffix]};base64," + base64.b64encode(path.read_bytes()).decode("ascii")


def pack_runs(explorer: Path, head: str, index: dict) -> dict[str, str]:
    """Pack an explorer whose frames are per value of one control (``by``, chapter 6's run picker): one
    script per value, ``pack-r<k>.js``, holding that value's frames (states, tables as tokens) and their
    pictures, fetched when the reader picks it. The index keeps the controls, each value's defaults and
    grids, and the default frame only."""
    by = index["by"]["control"]
    runs: dict[int, dict[str, list]] = {}
    for state, entry in index["frames"].items():
        runs.setdefault(int(state.split(",")[by]), {})[state] = entry
    used: set[str] = set()
    for r, frames in sorted(runs.items()):
        numbers = sorted({e[0] for e in frames.values()})
        local = {n: k for k, n in enumerate(numbers)}
        tokens, tables = _tokenize([_table(index, n) for n in numbers])
        files = sorted({e[1] for e in frames.values() if e[1]})
        used |= set(files)
        data = {"frames": {s: [local[e[0]], *e[1:]] for s, e in frames.items()}, "tokens": tokens, "tables": tables}
        urls = {f: _data_url(explorer / f) for f in files}
        (explorer / f"pack-r{r}.js").write_text(
            f"__cmFramesPack({json.dumps(index['key'])},{json.dumps(f'r{r}')},"
            f"{json.dumps(urls, separators=(',', ':'))},{json.dumps(data, ensure_ascii=False, separators=(',', ':'))});\n",
            encoding="utf-8")
    for f in used:
        (explorer / f).unlink()
    default = index["frames"][index["default"]]
    tokens, tables = _tokenize([_table(index, default[0])])
    index.update(frames={index["default"]: [0, *default[1:]]}, tokens=tokens, tables=tables, packs={})
    index["by"]["packed"] = True
    text = json.dumps(index, ensure_ascii=False, separators=(",", ":"))
    (explorer / "index.js").write_text(f"{head}{text});\n", encoding="utf-8")
    return {}


def pack(explorer: Path) -> dict[str, str]:
    """Pack one explorer's pictures (see the module's docstring); return {picture: pack}. Idempotent."""
    head, index = _read_index(explorer / "index.js")
    if "packs" in index:
        return index["packs"]
    if "by" in index:
        return pack_runs(explorer, head, index)
    default = index["default"].split(",")
    groups: dict[str, list[str]] = {}
    placed: dict[str, str] = {}
    # single-control frames first, so a picture two frames share goes with the control that reaches it alone
    for state in sorted(index["frames"], key=lambda s: _group(s, default) == "x"):
        file = index["frames"][state][1]
        if file and file not in placed:
            placed[file] = _group(state, default)
            groups.setdefault(placed[file], []).append(file)
    packs: dict[str, str] = {}
    for group, files in groups.items():
        parts: list[list[str]] = [[]]
        size = 0
        for file in files:
            n = (explorer / file).stat().st_size
            if parts[-1] and size + n > PACK_BYTES:
                parts.append([])
                size = 0
            parts[-1].append(file)
            size += n
        for k, part in enumerate(parts):
            name = group if k == 0 else f"{group}.{k}"
            urls = {f: f"data:{MIME[Path(f).suffix]};base64,"
                       + base64.b64encode((explorer / f).read_bytes()).decode("ascii") for f in part}
            (explorer / f"pack-{name}.js").write_text(
                f"__cmFramesPack({json.dumps(index['key'])},{json.dumps(name)},"
                f"{json.dumps(urls, separators=(',', ':'))});\n", encoding="utf-8")
            for f in part:
                packs[f] = name
                (explorer / f).unlink()
    index["packs"] = packs
    text = json.dumps(index, ensure_ascii=False, separators=(",", ":"))
    (explorer / "index.js").write_text(f"{head}{text});\n", encoding="utf-8")
    return packs


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
        for index in sorted(folder.glob("*/index.js")):
            pack(index.parent)
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
