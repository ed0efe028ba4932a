#!/usr/bin/env python3
"""The configuration of a derived build of the book: the student edition and the PDF.

Usage: python tools/edition.py student _build/student [--reuse]
       writes _build/student/_config.yml and _build/student/_toc.yml; then
       jupyter-book build . --all --config _build/student/_config.yml \\
           --toc _build/student/_toc.yml --path-output _build/student
       (`make book EDITION=student`) builds the site into _build/student/_build/html.

The student edition is the book a course can publish to the students it
assigns exercises to: the chapters, the exercises (prompts, starter code and
the checks students run), the appendices, and nothing that gives an answer
away. It leaves out the Solutions part and the page for instructors, and
``book/_ext/edition_links.py`` removes every paragraph that links to them. The
exercise pages are the student copies in ``exercises/``, which hold no
solution and no hidden test (``tools/exercises.py``). It draws no button that
opens the repository (launch on Binder or Colab, repository, edit, issue), since
the repository holds the masters; its pages say so where the full book points
at those buttons (``{only} not edition_student`` blocks, whose tags
``edition_links.py`` sets).

``--reuse`` (``make test`` passes it) makes a build reuse what an earlier build of
the same run computed instead of doing it again: each notebook's execution, through
the jupyter-cache in ``_build/.jupyter_cache`` that ``make build-check`` fills, and
the explorers' frames in ``_build/html/_frames``. ``full --reuse`` is the config
``make build-check`` itself uses then: the whole book, executing into that (fresh)
cache. Without ``--reuse`` a build executes every notebook afresh, as
``_config.yml`` says, so a changed model can never leave old numbers in it.

A build whose config lives outside the repository's root needs one change to
_config.yml besides its own: Jupyter Book resolves the paths of
``local_extensions`` against the folder of the config file, so they are
written as absolute paths (``derived_config``).
"""
from __future__ import annotations

import copy
import fnmatch
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent

EDITIONS: dict[str, list[str]] = {
    # document-name patterns each edition leaves out
    "student": ["book/solutions/*", "book/instructors"],
}

# The header buttons that open the repository (launch on Binder or Colab, repository, edit,
# issue): the repository holds ``solutions/``, so the student edition draws none of them.
# A course that wants Binder for its students points it at a repository of its own, made
# from the student kit.
REPOSITORY_BUTTONS = ("use_repository_button", "use_issues_button", "use_edit_page_button")
LAUNCH_URLS = ("binderhub_url", "jupyterhub_url", "colab_url")


def derived_config(repo: Path = REPO) -> dict:
    """_config.yml with its local extensions' paths and the favicon's made absolute (valid from any folder)."""
    config = yaml.safe_load((repo / "_config.yml").read_text(encoding="utf-8"))
    sphinx = config.setdefault("sphinx", {})
    extensions = sphinx.get("local_extensions") or {}
    sphinx["local_extensions"] = {name: str((repo / path).resolve()) for name, path in extensions.items()}
    html = config.get("html") or {}
    if html.get("favicon"):
        html["favicon"] = str((repo / html["favicon"]).resolve())
    return config


def edition_toc(edition: str, repo: Path = REPO) -> dict:
    """_toc.yml without the documents the edition leaves out (and without a part left empty)."""
    patterns = EDITIONS[edition]
    toc = yaml.safe_load((repo / "_toc.yml").read_text(encoding="utf-8"))

    def keep(entries: list[dict]) -> list[dict]:
        kept = []
        for entry in entries or []:
            if "file" in entry and any(fnmatch.fnmatchcase(entry["file"], p) for p in patterns):
                continue
            entry = dict(entry)
            if "sections" in entry:
                entry["sections"] = keep(entry["sections"])
                if not entry["sections"]:
                    del entry["sections"]
            kept.append(entry)
        return kept

    out = copy.deepcopy(toc)
    if "parts" in out:
        parts = []
        for part in out["parts"]:
            part = dict(part, chapters=keep(part.get("chapters")))
            if part["chapters"]:
                parts.append(part)
        out["parts"] = parts
    if "chapters" in out:
        out["chapters"] = keep(out["chapters"])
    return out


EXECUTION_CACHE = Path("_build") / ".jupyter_cache"
FRAMES = Path("_build") / "html" / "_frames"


def reuse(config: dict, repo: Path = REPO, *, frames: bool = True) -> dict:
    """``config`` changed to take each notebook's execution from the shared jupyter-cache (and,
    with ``frames``, the explorers' frames from the full build) instead of computing them."""
    execute = config.setdefault("execute", {})
    execute["execute_notebooks"] = "cache"
    execute["cache"] = str((repo / EXECUTION_CACHE).resolve())
    if frames:
        config.setdefault("sphinx", {}).setdefault("config", {})["static_frames_from"] = str((repo / FRAMES).resolve())
    return config


def edition_config(edition: str, repo: Path = REPO) -> dict:
    config = derived_config(repo)
    if edition == "full":
        return config
    settings = config.setdefault("sphinx", {}).setdefault("config", {})
    settings["book_edition"] = edition
    settings["book_edition_leaves_out"] = list(EDITIONS[edition])
    if edition == "student":
        html = config.setdefault("html", {})
        html.update({button: False for button in REPOSITORY_BUTTONS})
        launch = config.setdefault("launch_buttons", {})
        launch.update({url: "" for url in LAUNCH_URLS})
    return config


def write(edition: str, folder: Path, repo: Path = REPO, *, reuse_run: bool = False) -> tuple[Path, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    config, toc = folder / "_config.yml", folder / "_toc.yml"
    settings = edition_config(edition, repo)
    if reuse_run:  # the full build fills the cache and computes the frames; the others reuse both
        settings = reuse(settings, repo, frames=edition != "full")
    config.write_text(yaml.safe_dump(settings, sort_keys=False), encoding="utf-8")
    contents = yaml.safe_load((repo / "_toc.yml").read_text(encoding="utf-8")) if edition == "full" \
        else edition_toc(edition, repo)
    toc.write_text(yaml.safe_dump(contents, sort_keys=False), encoding="utf-8")
    return config, toc


def main(argv: list[str]) -> int:
    reuse_run = "--reuse" in argv
    argv = [a for a in argv if a != "--reuse"]
    if len(argv) != 2 or argv[0] not in ("full", *EDITIONS):
        known = ", ".join(["full", *EDITIONS])
        print(f"usage: python tools/edition.py EDITION FOLDER [--reuse]  (EDITION: one of {known}; "
              f"full is _config.yml itself){'' if not argv else f', got {argv[0]!r}'}", file=sys.stderr)
        return 2
    config, toc = write(argv[0], Path(argv[1]), reuse_run=reuse_run)
    print(f"{argv[0]} edition: wrote {config} and {toc}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
