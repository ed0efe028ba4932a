"""The student edition (`make book EDITION=student`) gives no answer away; the full book keeps them.

The search reads every file of the student build outside ``_static/`` (pages, the
members of the student kit ``student-kit.zip`` but its copy of the public helper package,
the notebooks under ``_sources/``, the search index) as text: tags stripped,
entities decoded, JSON strings unpacked, every space removed. What it looks for
comes from the masters in ``solutions/``:

* each solution cell's code (otter's markers taken out, as the Solutions page
  shows it), whole, and each of its lines that students never see (inside
  ``# BEGIN SOLUTION`` blocks, or marked ``# SOLUTION``) that is neither in the
  student copy nor in a chapter (code, prose or output);
* each hidden test's code, which holds the expected values;
* the sentences of the solutions-only cells (discussions, the Solutions
  page's title and introduction), compared letters and digits only.

The same search must find every cell in the full build, so a change of
rendering that hid solution text from the search would fail here instead of
passing silently. Standard library only; skipped until both builds exist
(`make student-check` builds the student edition after `make build-check`).
"""
from __future__ import annotations

import html
import json
import os
import re
import zipfile
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent.parent
FULL = Path(os.environ.get("FULL_HTML_DIR", REPO / "_build" / "html")).resolve()
STUDENT = Path(os.environ.get("STUDENT_HTML_DIR", REPO / "_build" / "student" / "_build" / "html")).resolve()

for _name, _dir in (("full", FULL), ("student", STUDENT)):
    if not (_dir / "index.html").is_file():
        pytest.skip(f"the {_name} edition is not built ({_dir}): `make build-check student-check`",
                    allow_module_level=True)

MASTERS = sorted((REPO / "solutions").glob("ch*_exercises.ipynb"))
MARKER = re.compile(r"^\s*# (BEGIN|END) (SOLUTION|PROMPT)( NO PROMPT)?\s*$")
SOLUTION_TAIL = re.compile(r"\s*# SOLUTION\s*$")
MIN_LINE = 16  # characters, spaces removed: shorter lines (`return total`) prove nothing
MIN_SENTENCE = 40  # letters and digits


def squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def letters(text: str) -> str:
    return re.sub(r"[^0-9a-z]+", "", text.lower())


@dataclass
class Needles:
    """What one solution cell, hidden test or solutions-only cell leaves in a build."""

    where: str
    code: list[str] = field(default_factory=list)  # squashed
    prose: list[str] = field(default_factory=list)  # letters and digits


def _source(cell: dict) -> str:
    return "".join(cell["source"])


def _raw_marker(cell: dict) -> str:
    return _source(cell).strip().splitlines()[0] if cell["cell_type"] == "raw" and _source(cell).strip() else ""


def _student_lines(master: Path) -> set[str]:
    student = REPO / "exercises" / master.name
    cells = json.loads(student.read_text(encoding="utf-8"))["cells"]
    return {squash(line) for c in cells if c["cell_type"] == "code" for line in _source(c).splitlines()}


@lru_cache(maxsize=None)
def chapter_text() -> str:
    """The chapters' code, prose and outputs, squashed: a solution line that repeats them gives
    nothing away."""
    return "\n".join(squash(s) for nb in sorted((REPO / "notebooks").glob("*.ipynb"))
                     for s in _strings(json.loads(nb.read_text(encoding="utf-8"))["cells"]))


def needles(master: Path) -> list[Needles]:
    cells = json.loads(master.read_text(encoding="utf-8"))["cells"]
    shown_to_students = _student_lines(master)
    found: list[Needles] = []
    in_solution = in_tests = False
    for i, cell in enumerate(cells):
        marker = _raw_marker(cell)
        if marker.startswith("# BEGIN SOLUTION"):
            in_solution = True
        elif marker.startswith("# END SOLUTION"):
            in_solution = False
        elif marker.startswith("# BEGIN TESTS"):
            in_tests = True
        elif marker.startswith("# END TESTS"):
            in_tests = False
        where = f"{master.name} cell {i}"
        text = _source(cell)
        if cell["cell_type"] == "code" and in_solution:
            shown, secret, block, prompt = [], [], False, False
            for line in text.splitlines():
                m = MARKER.match(line)
                if m:
                    if m.group(2) == "PROMPT":
                        prompt = m.group(1) == "BEGIN"
                    else:
                        block = m.group(1) == "BEGIN"
                    continue
                if prompt:
                    continue
                marked = SOLUTION_TAIL.search(line) is not None
                line = SOLUTION_TAIL.sub("", line)
                shown.append(line)
                if ((block or marked) and len(squash(line)) >= MIN_LINE and squash(line) not in shown_to_students
                        and squash(line) not in chapter_text()):
                    secret.append(squash(line))
            found.append(Needles(f"{where} (solution)", [squash("\n".join(shown)), *secret]))
        elif cell["cell_type"] == "code" and in_tests and text.lstrip().startswith("# HIDDEN"):
            found.append(Needles(f"{where} (hidden test)", [squash(text.split("\n", 1)[1])]))
        elif "solutions-only" in cell["metadata"].get("tags", []):
            sentences = re.split(r"(?<=[.!?:])\s+|\n\s*\n", text)
            prose = [letters(s) for s in sentences if len(letters(s)) >= MIN_SENTENCE]
            if prose:
                found.append(Needles(f"{where} (solutions-only text)", prose=prose))
    return found


BASE64_RUN = re.compile(r"[A-Za-z0-9+/=]{200,}")


def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    return []


def file_text(path: Path, data: bytes | None = None) -> str:
    raw = (path.read_bytes() if data is None else data).decode("utf-8", errors="replace")
    if path.suffix in (".ipynb", ".json"):
        try:
            raw = "\n".join(_strings(json.loads(raw)))
        except json.JSONDecodeError:
            pass
    elif path.suffix == ".html":
        raw = html.unescape(re.sub(r"<[^>]+>", "", raw))
    return BASE64_RUN.sub(" ", raw)


@lru_cache(maxsize=None)
def haystack(site: Path) -> dict[str, tuple[str, str]]:
    """{file: (text without spaces, letters and digits)} for every text file of a build outside _static/."""
    out = {}
    for path in sorted(site.rglob("*")):
        rel = path.relative_to(site)
        if not path.is_file() or rel.parts[0] in ("_static", "_images") or path.suffix in (".png", ".inv"):
            continue
        if path.suffix == ".zip":  # the student kit: every member, read as the files above
            with zipfile.ZipFile(path) as z:
                for name in z.namelist():
                    # but not the helper package: the book's public code, which students install from
                    # the repository or Binder anyway; a solution line it shares (a model the exercise
                    # may call, `rng = np.random.default_rng(seed)`) gives nothing away
                    if "/lib/clustermath/" in name:
                        continue
                    text = file_text(Path(name), z.read(name))
                    out[f"{rel.as_posix()}!{name}"] = (squash(text), letters(text))
            continue
        text = file_text(path)
        out[rel.as_posix()] = (squash(text), letters(text))
    return out


def where_found(needle: Needles, site: Path) -> list[str]:
    hits = []
    for rel, (code, prose) in haystack(site).items():
        if any(n in code for n in needle.code) or any(n in prose for n in needle.prose):
            hits.append(rel)
    return hits


ALL = [n for m in MASTERS for n in needles(m)]


def test_masters_yield_solutions_to_look_for():
    assert len(MASTERS) >= 5
    for master in MASTERS:
        kinds = {n.where.rsplit("(", 1)[1] for n in ALL if n.where.startswith(master.name)}
        assert {"solution)", "hidden test)", "solutions-only text)"} <= kinds, f"{master.name}: {kinds}"


@pytest.mark.parametrize("needle", ALL, ids=[n.where for n in ALL])
def test_full_book_shows_it_and_student_edition_does_not(needle: Needles):
    # Every piece the search looks for is in the full book (proof that the search can see it) ...
    for piece in needle.code:
        assert any(piece in code for code, _ in haystack(FULL).values()), (
            f"{needle.where}: the full book does not contain {piece[:80]!r}: the search cannot see it")
    if needle.prose:
        assert any(p in prose for p in needle.prose for _, prose in haystack(FULL).values()), (
            f"{needle.where}: no sentence of it is found in the full book")
    # ... and in no file of the student edition.
    hits = where_found(needle, STUDENT)
    assert not hits, f"{needle.where} reaches the student edition: {hits}"


def _hrefs(page: Path) -> list[str]:
    return re.findall(r'href="([^"#?]*)', page.read_text(encoding="utf-8"))


def test_student_edition_has_no_solution_page_and_no_link_to_one():
    pages = sorted(p for p in STUDENT.rglob("*.html") if "_static" not in p.parts)
    assert len(pages) >= 15, f"only {len(pages)} pages: is the student build complete?"
    left_out = [p.relative_to(STUDENT).as_posix() for p in pages
                if "solutions" in p.relative_to(STUDENT).parts or p.stem == "instructors"]
    assert not left_out, f"pages the student edition must leave out: {left_out}"
    links = [(p.relative_to(STUDENT).as_posix(), h) for p in pages for h in _hrefs(p)
             if re.search(r"(^|/)(solutions/|instructors\.html)", h)]
    assert not links, f"links to solutions or the instructors' page: {links[:10]}"
    for p in pages:
        text = re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", p.read_text(encoding="utf-8"))))
        said = re.findall(r"(?i)[^.]{0,60}\b(worked solutions?|solutions part)\b[^.]{0,40}", text)
        assert not said, f"{p.relative_to(STUDENT)} mentions the solutions: {said}"


def _repository_url() -> str:
    """``repository.url`` of _config.yml (read with a pattern: this module uses the standard library only)."""
    config = (REPO / "_config.yml").read_text(encoding="utf-8")
    return re.search(r"^repository:\s*\n\s+url:\s*(\S+)", config, re.M).group(1).rstrip("/")


def _repository_links(site: Path) -> dict[str, list[str]]:
    """Per page, the hrefs that open the repository: Binder, Colab, the repository itself."""
    opens = re.compile(r"mybinder\.org|colab\.research\.google\.com|" + re.escape(_repository_url()))
    found = {}
    for page in sorted(p for p in site.rglob("*.html") if "_static" not in p.parts):
        hits = [h for h in re.findall(r'href="([^"]*)', page.read_text(encoding="utf-8")) if opens.search(h)]
        if hits:
            found[page.relative_to(site).as_posix()] = hits
    return found


def test_student_edition_has_no_button_that_opens_the_repository():
    # The repository holds solutions/: Binder, Colab and the repository, edit and issue
    # buttons would each send a student to the masters. The full book keeps them (the control).
    full = _repository_links(FULL)
    assert "exercises/ch01_exercises.html" in full, "the full book lost its launch buttons: the search cannot see them"
    assert any("mybinder.org" in h for h in full["exercises/ch01_exercises.html"])
    student = _repository_links(STUDENT)
    assert not student, f"student pages that open the repository: {dict(list(student.items())[:5])}"
    how = (STUDENT / "book" / "how_to_use.html").read_text(encoding="utf-8")
    assert "rocket icon" not in how and "no launch buttons" in how
    assert "rocket icon" in (FULL / "book" / "how_to_use.html").read_text(encoding="utf-8")


def test_exercise_pages_are_in_both_editions():
    for master in MASTERS:
        page = Path("exercises") / master.with_suffix(".html").name
        assert (STUDENT / page).is_file() and (FULL / page).is_file(), page


def test_full_book_keeps_solutions_and_the_instructors_page():
    for master in MASTERS:
        assert (FULL / "book" / "solutions" / master.with_suffix(".html").name).is_file(), master.name
    assert (FULL / "book" / "instructors.html").is_file()
    index = (FULL / "book" / "how_to_use.html").read_text(encoding="utf-8")
    assert "solutions/ch01_exercises.html" in index and "instructors.html" in index


STATE_MIME = "application/vnd.jupyter.widget-state+json"
STATE_SCRIPT = re.compile(rf'<script type="{re.escape(STATE_MIME)}">(.*?)</script>', re.S)


def embedded_state(page: Path) -> list[tuple[str, dict]]:
    """The page's embedded widget state, as (model id, model) in the page's order."""
    found = STATE_SCRIPT.findall(page.read_text(encoding="utf-8"))
    assert len(found) <= 1, f"{page}: {len(found)} widget states"
    return list(json.loads(found[0])["state"].items()) if found else []


def canonical(models: list[tuple[str, dict]]) -> str:
    """The state with each model id replaced by its position and binary buffers dropped: equal for
    two builds that embed the same models in the same order, whatever ids their kernels drew."""
    text = json.dumps([{k: v for k, v in model.items() if k != "buffers"} for _, model in models])
    for position, (model_id, _) in enumerate(models):
        text = text.replace(model_id, f"model-{position}")
    return text


CHAPTERS = sorted(p.name for p in (FULL / "notebooks").glob("*.html"))


@pytest.mark.parametrize("name", CHAPTERS)
def test_both_editions_embed_the_same_widget_state_in_the_same_order(name: str):
    full, student = embedded_state(FULL / "notebooks" / name), embedded_state(STUDENT / "notebooks" / name)
    assert len(full) == len(student), f"{name}: {len(full)} widget models in the full edition, {len(student)} in the student's"
    if [m for m, _ in full] == [m for m, _ in student]:  # the same executions (make test reuses them)
        assert full == student, f"{name}: the same models, with different states"
    assert canonical(full) == canonical(student), f"{name}: the editions embed their widget models in different orders"


def test_the_state_comparison_catches_another_order():
    name = next((n for n in CHAPTERS if len(embedded_state(FULL / "notebooks" / n)) > 2), None)
    if name is None:
        pytest.skip("no chapter page with widgets")
    models = embedded_state(FULL / "notebooks" / name)
    assert canonical(models) != canonical(models[1:] + models[:1])
