"""The student edition's configuration (tools/edition.py), the PDF's (tools/pdf.py), and the
extension that drops links to left-out pages (book/_ext/edition_links.py), without a build.

`make student-check` builds the edition and searches it (tests/built_html/test_student_edition.py);
these tests pin the pieces: what the edition's table of contents keeps, that a derived config's
extension paths work from any folder, and which paragraphs the extension removes or refuses.
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
import yaml
from docutils import nodes
from docutils.frontend import get_default_settings
from docutils.parsers.rst import Parser
from docutils.utils import new_document
from sphinx import addnodes

REPO = Path(__file__).resolve().parent.parent


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


edition = _load("tools_edition", REPO / "tools" / "edition.py")
links = _load("edition_links", REPO / "book" / "_ext" / "edition_links.py")


def toc_files(toc: dict) -> list[str]:
    out = [toc["root"]]
    for part in toc.get("parts", []):
        out += [c["file"] for c in part["chapters"]]
    return out


# -- tools/edition.py --------------------------------------------------------------------------------

def test_student_toc_drops_solutions_and_the_instructors_page_only():
    full = yaml.safe_load((REPO / "_toc.yml").read_text(encoding="utf-8"))
    student = edition.edition_toc("student")
    kept = toc_files(student)
    dropped = [f for f in toc_files(full) if f not in kept]
    assert dropped and all(f.startswith("book/solutions/") or f == "book/instructors" for f in dropped)
    assert "book/instructors" in dropped and any(f.startswith("book/solutions/") for f in dropped)
    assert kept == [f for f in toc_files(full) if f not in dropped], "the order is kept"
    assert "Solutions" not in [p["caption"] for p in student["parts"]], "an emptied part goes too"
    assert any(f.startswith("exercises/") for f in kept)


def test_derived_config_names_its_extensions_by_absolute_paths(tmp_path):
    config = edition.derived_config()
    extensions = config["sphinx"]["local_extensions"]
    original = yaml.safe_load((REPO / "_config.yml").read_text(encoding="utf-8"))["sphinx"]["local_extensions"]
    assert set(extensions) == set(original) and "edition_links" in extensions
    for name, path in extensions.items():
        assert Path(path).is_absolute() and (Path(path) / f"{name}.py").is_file(), (name, path)


def test_written_edition_config_and_toc(tmp_path):
    config_path, toc_path = edition.write("student", tmp_path / "student")
    config = yaml.safe_load(config_path.read_text(encoding="utf-8"))
    assert config["sphinx"]["config"]["book_edition"] == "student"
    assert config["sphinx"]["config"]["book_edition_leaves_out"] == edition.EDITIONS["student"]
    assert yaml.safe_load(toc_path.read_text(encoding="utf-8")) == edition.edition_toc("student")


def test_student_edition_draws_no_button_that_opens_the_repository():
    full, student = edition.edition_config("full"), edition.edition_config("student")
    assert full["launch_buttons"]["binderhub_url"] and full["html"]["use_repository_button"]
    assert not any(student["launch_buttons"].get(url) for url in edition.LAUNCH_URLS)
    assert not any(student["html"].get(button) for button in edition.REPOSITORY_BUTTONS)
    assert student["repository"] == full["repository"], "the install line of how_to_use still reads it"


def test_pdf_config_is_valid_from_its_own_folder(tmp_path):
    # `make pdf` from a clean checkout: the config lives under _build/pdf/, so a relative
    # extension path ("book/_ext") would be looked up there ("Could not import extension").
    sys.path.insert(0, str(REPO / "tools"))
    try:
        pdf = _load("tools_pdf", REPO / "tools" / "pdf.py")
    finally:
        sys.path.remove(str(REPO / "tools"))
    pdf.write_config(tmp_path / "_config.yml")
    config = yaml.safe_load((tmp_path / "_config.yml").read_text(encoding="utf-8"))
    for name, path in config["sphinx"]["local_extensions"].items():
        assert (Path(path) / f"{name}.py").is_file(), (name, path)
    assert config["latex"]["use_jupyterbook_latex"] is False


def test_a_reusing_build_takes_executions_and_frames_from_the_run(tmp_path):
    """make test executes every notebook once: the full build fills the cache (and computes the
    frames), the student edition and the PDF read both; alone, each build executes afresh."""
    cache = str((REPO / "_build" / ".jupyter_cache").resolve())
    frames = str((REPO / "_build" / "html" / "_frames").resolve())
    plain = yaml.safe_load(edition.write("student", tmp_path / "plain")[0].read_text(encoding="utf-8"))
    assert plain["execute"]["execute_notebooks"] == "force" and "cache" not in plain["execute"]
    assert "static_frames_from" not in plain["sphinx"]["config"]
    student = yaml.safe_load(edition.write("student", tmp_path / "s", reuse_run=True)[0].read_text(encoding="utf-8"))
    assert student["execute"]["execute_notebooks"] == "cache" and student["execute"]["cache"] == cache
    assert student["sphinx"]["config"]["static_frames_from"] == frames
    full_config, full_toc = edition.write("full", tmp_path / "f", reuse_run=True)
    full = yaml.safe_load(full_config.read_text(encoding="utf-8"))
    assert full["execute"] == {**plain["execute"], "execute_notebooks": "cache", "cache": cache}
    assert "static_frames_from" not in full.get("sphinx", {}).get("config", {}), "the full build computes them"
    assert "book_edition" not in full.get("sphinx", {}).get("config", {})
    assert yaml.safe_load(full_toc.read_text(encoding="utf-8")) == \
        yaml.safe_load((REPO / "_toc.yml").read_text(encoding="utf-8"))
    assert edition.main(["student", str(tmp_path / "cli"), "--reuse"]) == 0
    assert "static_frames_from" in (tmp_path / "cli" / "_config.yml").read_text(encoding="utf-8")


def test_make_test_alone_reuses_the_run(tmp_path):
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    assert "\ntest: REUSE := 1\n" in makefile
    for target in ("build-check", "student-check", "pdf"):
        recipe = makefile.split(f"\n{target}: ", 1)[1].split("\n\n", 1)[0]
        assert "$(REUSE)" in recipe, target


def test_unknown_edition_is_refused(capsys):
    assert edition.main(["teacher", "x"]) == 2
    assert "one of full, student" in capsys.readouterr().err


# -- book/_ext/edition_links.py ----------------------------------------------------------------------

@pytest.mark.parametrize("refdoc, target, docname", [
    ("notebooks/01_peak_is_bought", "../book/solutions/ch01_exercises", "book/solutions/ch01_exercises"),
    ("exercises/ch01_exercises", "/book/solutions/ch01_exercises", "book/solutions/ch01_exercises"),
    ("book/how_to_use", "solutions/ch01_exercises", "book/solutions/ch01_exercises"),
    ("book/how_to_use", "instructors.md#re-grading", "book/instructors"),
    ("book/how_to_use", "../exercises/ch02_exercises.ipynb", "exercises/ch02_exercises"),
])
def test_target_docname(refdoc, target, docname):
    assert links.target_docname(refdoc, target) == docname


class _Config:
    book_edition = "student"
    book_edition_leaves_out = ["book/solutions/*", "book/instructors"]


class _App:
    def __init__(self, docname: str):
        self.config = _Config()
        self.env = type("Env", (), {"docname": docname})()


def _xref(target: str, reftype: str = "doc") -> addnodes.pending_xref:
    ref = addnodes.pending_xref("", nodes.inline(text=target), reftype=reftype, refdomain="std",
                                reftarget=target)
    return ref


def _document(*children: nodes.Node) -> nodes.document:
    doc = new_document("test", get_default_settings(Parser))
    section = nodes.section("", nodes.title(text="A page"), *children)
    doc += section
    return doc


@pytest.fixture
def warnings(monkeypatch) -> list[str]:
    said: list[str] = []
    monkeypatch.setattr(links.logger, "warning", lambda msg, *a, **k: said.append(msg))
    monkeypatch.setattr(links.logger, "info", lambda *a, **k: None)
    return said


def test_paragraph_linking_only_to_a_solution_is_removed(warnings):
    keep = nodes.paragraph("", "", nodes.Text("The exercises: "), _xref("../exercises/ch01_exercises"))
    drop = nodes.paragraph("", "", nodes.Text("Worked solutions: "), _xref("../book/solutions/ch01_exercises"))
    doc = _document(keep, drop)
    links.leave_out_links(_App("notebooks/01_peak_is_bought"), doc)
    paragraphs = list(doc.findall(nodes.paragraph))
    assert paragraphs == [keep] and not warnings


def test_admonition_left_empty_goes_with_its_paragraph(warnings):
    note = nodes.admonition("", nodes.title(text="Note"),
                            nodes.paragraph("", "", _xref("/book/instructors")))
    other = nodes.paragraph("", "", nodes.Text("Stays."))
    doc = _document(note, other)
    links.leave_out_links(_App("book/how_to_use"), doc)
    assert not list(doc.findall(nodes.admonition)) and list(doc.findall(nodes.paragraph)) == [other]


def test_paragraph_that_also_links_elsewhere_is_refused_not_cut(warnings):
    both = nodes.paragraph("", "", nodes.Text("The chapter is "), _xref("/notebooks/01_peak_is_bought"),
                           nodes.Text("; solutions are on "), _xref("/book/solutions/ch01_exercises"))
    doc = _document(both)
    links.leave_out_links(_App("exercises/ch01_exercises"), doc)
    assert list(doc.findall(nodes.paragraph)) == [both]
    assert len(warnings) == 1 and "notebooks/01_peak_is_bought" in warnings[0]


def test_link_outside_a_paragraph_is_reported(warnings):
    title = nodes.title("", "", _xref("../book/solutions/ch01_exercises"))
    doc = new_document("test", get_default_settings(Parser))
    doc += nodes.section("", title)
    links.leave_out_links(_App("notebooks/01_peak_is_bought"), doc)
    assert len(warnings) == 1 and "outside a paragraph" in warnings[0]


def test_full_edition_touches_nothing(warnings):
    drop = nodes.paragraph("", "", _xref("../book/solutions/ch01_exercises"))
    doc = _document(drop)
    app = _App("notebooks/01_peak_is_bought")
    app.config.book_edition = "full"
    links.leave_out_links(app, doc)
    assert list(doc.findall(nodes.paragraph)) == [drop]
