"""The built site carries every explorer's frames, and they belong to the page (none missing or stale).

While the book builds, each explorer writes its frames into _build/html/_frames/<chapter>/<key>/
(clustermath/views/frames.py; book/_ext/static_frames.py). Here, without a browser, for every
chapter page: each explorer in its embedded widget state carries a key whose index exists; the
index was computed from that very explorer (its default table and a hash of its default picture,
its controls' kinds and values as the widget state stores them); every picture a frame names
exists (in the pack the index names: book/_ext/static_frames.py packs them, one script per control)
and no picture is left unnamed; one control at a time covers every value of every control (or the
whole grid); and each pack (what one touch fetches) stays under 450 kB gzipped, each chapter's
frames under 10 MB (what a reader moving every control of every explorer would fetch). Standard library only; the
browser checks (tests/browser/test_frames.py) move every control on the served pages.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import math
import re
from pathlib import Path

import pytest

from built_site import HTML_DIR, page_refs

STATE_MIME = "application/vnd.jupyter.widget-state+json"
VIEW_MIME = "application/vnd.jupyter.widget-view+json"
LIMIT_BYTES = 10_000_000
"""A chapter's frames, gzipped: what a reader moving every control of every explorer would fetch (a guard
on the site's size; issue 41's pictures at twice the pixels took chapter 1 from 4.1 to about 6 MB)."""
PACK_LIMIT_BYTES = 450_000
"""One pack file, gzipped: what one touch fetches (a control's first pack, and at most one more as its
neighbours are fetched ahead). The budget that matters to a reader, since packs come per control on focus
(book/_ext/static_frames.py splits a control's pictures at 400 kB)."""
PAGES = sorted(p for p in (HTML_DIR / "notebooks").glob("*.html") if VIEW_MIME in p.read_text(encoding="utf-8")) \
    if (HTML_DIR / "notebooks").is_dir() else []
IDS = [p.relative_to(HTML_DIR).as_posix() for p in PAGES]


def table_text(table: str) -> str:
    """As clustermath.views.frames.table_text (the text a browser reads, without white space)."""
    return "".join(html.unescape(re.sub(r"<[^>]*>", "", table)).split())


def read_index(path: Path) -> dict:
    text = path.read_text(encoding="utf-8")
    return json.loads(text[text.index(",") + 1: text.rindex(")")])


def packed_pictures(folder: Path, index: dict) -> set[str]:
    """The pictures an explorer's folder holds: in its packs (pack-*.js), or as files if unpacked."""
    if "packs" not in index:
        return {p.name for p in folder.iterdir() if p.suffix in (".webp", ".png")}
    found = set()
    for pack in folder.glob("pack-*.js"):
        text = pack.read_text(encoding="utf-8")
        name = json.loads(text[text.index(",") + 1: text.index(",", text.index(",") + 1)])
        found |= {f for f in json.loads(text[text.index("{"): text.rindex(")")]) if index["packs"].get(f) == name}
    return found


def run_packs(folder: Path, index: dict) -> tuple[dict, set[str]]:
    """An index whose frames come per value of one control (``by``: chapter 6's run picker), with every
    value's pack merged in as the page merges it (frames, tables as tokens), and the pictures the packs hold."""
    merged = json.loads(json.dumps(index))
    pictures: set[str] = set()
    for r in range(len(index["by"]["runs"])):
        path = folder / f"pack-r{r}.js"
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8")
        body = text[text.index(",", text.index(",") + 1) + 1: text.rindex(")")]
        urls, extra = json.loads(f"[{body}]")
        pictures |= set(urls)
        t0, n0 = len(merged["tokens"]), len(merged["tables"])
        merged["tokens"] += extra["tokens"]
        first = extra["tables"][0]
        for ids in extra["tables"]:
            if ids and ids[0] == -1:
                whole = list(first)
                for i in range(1, len(ids), 2):
                    whole[ids[i]] = ids[i + 1]
                ids = whole
            merged["tables"].append([t + t0 for t in ids])
        for state, entry in extra["frames"].items():
            merged["frames"][state] = [entry[0] + n0, *entry[1:]]
    return merged, pictures


def run_problems(index: dict) -> list[str]:
    """Frames per run: each run's defaults and, one control at a time from them, every value of each
    control (a slider's every stop on the run's grid), with the run held."""
    by, bad = index["by"]["control"], []
    for r, run in enumerate(index["by"]["runs"]):
        defaults = [int(k) for k in run["default"].split(",")]
        if defaults[by] != r or run["default"] not in index["frames"]:
            bad.append(f"run {r}: no frame at its defaults {run['default']}")
            continue
        for i, spec in enumerate(index["controls"]):
            if i == by or (run.get("disabled") or {}).get(str(i), spec.get("disabled", False)):
                continue
            values = run["grids"].get(str(i)) or range(len(run["labels"].get(str(i)) or []) or spec["count"])
            for k in values:
                key = ",".join(str(k if j == i else d) for j, d in enumerate(defaults))
                if key not in index["frames"]:
                    bad.append(f"run {r}: missing frame {key} (control {i}, value {k})")
                    break
    return bad


def widget_state(page: Path) -> dict:
    states = [json.loads(body) for attrs, body in page_refs(page).scripts if attrs.get("type") == STATE_MIME]
    assert len(states) == 1, f"{page.name}: {len(states)} widget states"
    return states[0]["state"]


def descendants(state: dict, model_id: str):
    yield model_id
    for ref in state[model_id]["state"].get("children", []):
        yield from descendants(state, ref.removeprefix("IPY_MODEL_"))


def classes(model: dict) -> list[str]:
    return model["state"].get("_dom_classes", [])


def frames_folder(page: Path) -> Path | None:
    found = re.search(r'<meta name="cm-frames" content="([^"]+)"', page.read_text(encoding="utf-8"))
    return (page.parent / found.group(1)).resolve() if found else None


def slider_values(model: dict) -> list[float]:
    s = model["state"]
    low, high, step = s["min"], s["max"], s["step"]
    return [low + k * step for k in range(int(math.floor((high - low) / step + 1e-9)) + 1)]


def check_explorer(state: dict, root: str, index: dict, folder: Path) -> list[str]:
    """What is wrong with one explorer's frames, against the widget state the page embeds."""
    bad = []
    models = {m: state[m] for m in descendants(state, root)}
    tables = [m for m in models.values() if "cm-frames-table" in classes(m)]
    pictures = [m for m in models.values() if "cm-frames-picture" in classes(m)]
    if len(tables) != 1:
        return [f"{len(tables)} tables marked cm-frames-table"]
    if table_text(tables[0]["state"]["value"]) != index["check"]["table"]:
        bad.append("stale: the page's default table is not the frames' default")
    if pictures:
        buffers = [b for b in pictures[0].get("buffers", []) if b["path"] == ["value"]]
        data = base64.b64decode(buffers[0]["data"]) if buffers else b""
        if hashlib.sha256(data).hexdigest() != index["check"]["picture"]:
            bad.append("stale: the page's default picture is not the frames' default")
    controls = {int(c.removeprefix("cm-control-")): m for m in models.values() for c in classes(m)
                if re.fullmatch(r"cm-control-\d+", c)}
    if sorted(controls) != list(range(len(index["controls"]))):
        return bad + [f"controls on the page {sorted(controls)}, in the frames {len(index['controls'])}"]
    for i, spec in enumerate(index["controls"]):
        model, name = controls[i], controls[i]["model_name"]
        if model["state"].get("description") != spec["label"]:
            bad.append(f"control {i}: the page says {model['state'].get('description')!r}, the frames {spec['label']!r}")
        if name in ("IntSliderModel", "FloatSliderModel"):
            values = slider_values(model)
            if spec["kind"] != "slider" or len(values) != spec["count"] or any(
                    abs(a - b) > 1e-9 * max(1, abs(a)) for a, b in zip(values, spec["values"])):
                bad.append(f"control {i} ({spec['label']}): the slider's steps are not the frames' values")
        elif name in ("SelectionSliderModel", "DropdownModel"):
            if len(model["state"]["_options_labels"]) != spec["count"]:
                bad.append(f"control {i} ({spec['label']}): {len(model['state']['_options_labels'])} options, "
                           f"{spec['count']} in the frames")
        elif name in ("CheckboxModel", "ToggleButtonModel"):
            if spec["count"] != 2:
                bad.append(f"control {i} ({spec['label']}): a switch with {spec['count']} values")
        else:
            bad.append(f"control {i}: a {name} the page cannot move")
    if "by" in index:  # frames per run: merged from the runs' packs
        index, files = run_packs(folder, index)
        bad += run_problems(index)
        named = {e[1] for e in index["frames"].values() if e[1]}
        if named - files:
            bad.append(f"{len(named - files)} pictures missing, e.g. {sorted(named - files)[:2]}")
        if files - named:
            bad.append(f"{len(files - named)} pictures no frame names")
        return bad
    counts = [1 if c.get("disabled") else c["count"] for c in index["controls"]]  # a switched-off control stays
    expected = math.prod(counts) if index["grid"] else 1 + sum(n - 1 for n in counts)
    defaults = [int(k) for k in index["default"].split(",")]
    reached = {k for k in index["frames"] if len(k.split(",")) == len(counts)}
    if len(reached) < expected:
        bad.append(f"{len(reached)} frames of {expected}")
    if not index["grid"]:
        for i, c in enumerate(counts):
            for k in (range(c) if c > 1 else ()):
                key = ",".join(str(k if j == i else d) for j, d in enumerate(defaults))
                if key not in index["frames"]:
                    bad.append(f"missing frame {key} (control {i}, value {k})")
                    break
    named = {e[1] for e in index["frames"].values() if e[1]}
    files = packed_pictures(folder, index)
    if named - files:
        bad.append(f"{len(named - files)} pictures missing, e.g. {sorted(named - files)[:2]}")
    if files - named:
        bad.append(f"{len(files - named)} pictures no frame names")
    for key, entry in index["frames"].items():
        if not 0 <= entry[0] < len(index["tables"]):
            bad.append(f"frame {key}: no table {entry[0]}")
            break
    return bad


def test_some_chapter_has_frames():
    if not PAGES:
        pytest.skip("no chapter page with widgets")
    assert any(frames_folder(p) for p in PAGES), "no chapter page names its frames (<meta name='cm-frames'>)"


@pytest.mark.parametrize("page", PAGES, ids=IDS)
def test_every_explorer_has_current_frames(page: Path):
    state = widget_state(page)
    folder = frames_folder(page)
    roots = {m: next(c.removeprefix("cm-frames-") for c in classes(model)
                     if c.startswith("cm-frames-") and c not in ("cm-frames-table", "cm-frames-picture"))
             for m, model in state.items() if "cm-frames" in classes(model)}
    explorers = [m for m, model in state.items() if "cm-explorer" in classes(model)]
    assert set(explorers) <= set(roots), f"{page.name}: explorers without frames: {set(explorers) - set(roots)}"
    assert roots and folder is not None and folder.is_dir(), f"{page.name}: no frames folder"
    bad = []
    for root, key in roots.items():
        path = folder / key / "index.js"
        if not path.is_file():
            bad.append(f"{key}: no index.js")
            continue
        bad += [f"{key}: {b}" for b in check_explorer(state, root, read_index(path), path.parent)]
    on_disk = {p.name for p in folder.iterdir() if p.is_dir()}
    if on_disk - set(roots.values()):
        bad.append(f"frames of no explorer on the page: {sorted(on_disk - set(roots.values()))}")
    assert not bad, f"{page.name}:" + "".join(f"\n  {b}" for b in bad[:12])


@pytest.mark.parametrize("page", PAGES, ids=IDS)
def test_frames_of_a_chapter_stay_under_budget(page: Path):
    """Every pack under ``PACK_LIMIT_BYTES`` gzipped (one touch), the chapter under ``LIMIT_BYTES``."""
    import gzip

    folder = frames_folder(page)
    if folder is None:
        pytest.skip(f"{page.name} has no frames")
    files = [p for p in folder.rglob("*") if p.is_file()]
    sizes = {p: len(gzip.compress(p.read_bytes(), 6)) for p in files}
    size = sum(sizes.values())
    packs = {p: n for p, n in sizes.items() if p.name.startswith("pack-")}
    largest = max(packs, key=packs.get, default=None)
    print(f"{page.name}: {len(files)} files, {size / 1e6:.2f} MB gzipped; {len(packs)} packs, the largest "
          f"{(packs[largest] if largest else 0) / 1e3:.0f} kB")
    assert size < LIMIT_BYTES, f"{page.name}: frames weigh {size / 1e6:.2f} MB gzipped"
    heavy = [f"{p.parent.name}/{p.name}: {n / 1e3:.0f} kB" for p, n in packs.items() if n > PACK_LIMIT_BYTES]
    assert not heavy, f"{page.name}: packs over {PACK_LIMIT_BYTES / 1e3:.0f} kB gzipped: {heavy}"


def explorers_on(page: Path) -> list[tuple[str, str, bool]]:
    """(root model id, key, has a picture) of every explorer in a page's widget state, by key."""
    state = widget_state(page)
    found = []
    for m, model in state.items():
        if "cm-frames" not in classes(model):
            continue
        key = next(c.removeprefix("cm-frames-") for c in classes(model)
                   if c.startswith("cm-frames-") and c not in ("cm-frames-table", "cm-frames-picture"))
        picture = any("cm-frames-picture" in classes(state[d]) for d in descendants(state, m))
        found.append((m, key, picture))
    return sorted(found, key=lambda e: e[1])


def pick_explorer(with_picture: bool) -> tuple[Path, str, str] | None:
    """The first page and explorer (by page, then key) that has a picture, or that has none."""
    for page in PAGES:
        if frames_folder(page):
            for root, key, picture in explorers_on(page):
                if picture == with_picture:
                    return page, root, key
    return None


def planted_copy(tmp_path: Path, page: Path, root: str, key: str):
    """A copy of one explorer's frames, its index, and a function that plants a change in the index
    and returns what check_explorer then reports."""
    import shutil

    state, folder = widget_state(page), frames_folder(page)
    copy = tmp_path / key
    shutil.copytree(folder / key, copy)
    index = read_index(copy / "index.js")
    assert check_explorer(state, root, index, copy) == [], f"{page.name} {key}: the unchanged copy fails"

    def planted(change) -> list[str]:
        data = json.loads(json.dumps(index))
        change(data)
        return check_explorer(state, root, data, copy)

    return state, copy, index, planted


def test_the_check_catches_missing_and_stale_frames(tmp_path: Path):
    """The check above reports each defect planted in a copy of an explorer's frames: one that draws a
    picture (picture path) and one that shows a table only (table path), picked on purpose."""
    chosen = pick_explorer(with_picture=True)
    if chosen is None:
        pytest.skip("no chapter page with an explorer that draws a picture")
    page, root, key = chosen
    state, copy, index, planted = planted_copy(tmp_path / "picture", page, root, key)
    where = f"{page.name}, explorer {key}"
    assert index["check"]["picture"], f"{where}: an explorer with a picture has no picture hash in its index"
    found = planted(lambda d: d["check"].update(table="another table"))
    assert any("stale" in b for b in found), f"{where}: a stale default table went unreported: {found}"
    found = planted(lambda d: d["check"].update(picture="0" * 64))
    assert any("stale" in b and "picture" in b for b in found), f"{where}: a stale picture went unreported: {found}"
    found = planted(lambda d: d["frames"].pop(next(k for k in d["frames"] if k != d["default"])))
    assert any("missing frame" in b or "frames of" in b for b in found), f"{where}: a missing frame: {found}"
    found = planted(lambda d: d["controls"].pop())
    assert any("controls on the page" in b for b in found), f"{where}: a missing control: {found}"
    named = next(e[1] for e in index["frames"].values() if e[1])
    if "packs" in index:  # take the picture out of its pack
        pack = copy / f"pack-{index['packs'][named]}.js"
        text = pack.read_text(encoding="utf-8")
        urls = json.loads(text[text.index("{"): text.rindex(")")])
        del urls[named]
        pack.write_text(text[: text.index("{")] + json.dumps(urls) + ");\n", encoding="utf-8")
    else:
        (copy / named).unlink()
    found = check_explorer(state, root, index, copy)
    assert any("pictures missing" in b for b in found), f"{where}: a deleted picture went unreported: {found}"


def test_the_check_catches_stale_frames_of_a_table_only_explorer(tmp_path: Path):
    """The table path: an explorer with no picture still has its default table and controls checked."""
    chosen = pick_explorer(with_picture=False)
    if chosen is None:
        pytest.skip("no chapter page with a table-only explorer")
    page, root, key = chosen
    state, copy, index, planted = planted_copy(tmp_path / "table", page, root, key)
    where = f"{page.name}, explorer {key}"
    found = planted(lambda d: d["check"].update(table="another table"))
    assert any("stale" in b and "table" in b for b in found), f"{where}: a stale default table went unreported: {found}"
    found = planted(lambda d: d["check"].update(picture="0" * 64))
    assert not any("picture" in b for b in found), f"{where}: a table-only explorer was judged on a picture: {found}"
    found = planted(lambda d: d["controls"].pop())
    assert any("controls on the page" in b for b in found), f"{where}: a missing control: {found}"
