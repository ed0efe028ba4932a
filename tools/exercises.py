"""Student notebooks and autograders, generated from the master notebooks.

Every chapter's exercises live in one master notebook, ``solutions/chNN_*.ipynb``,
in otter-grader's format: prompts, solutions, and public and hidden tests
(exception-based, ``ok_format: false``). From it this tool derives

* the student notebook ``exercises/<same name>.ipynb`` (committed): prompts,
  starter code and the public tests only;
* the solutions page ``book/solutions/<same name>.ipynb`` (committed, executed
  by the book build): prompts and folded solutions without otter's markers,
  and the tests, hidden from the page, so a build fails if a solution does; and
* otter's autograder zip (not committed: it holds the hidden tests), for
  Gradescope, with the book's package inside it (``book/``: ``clustermath``
  from ``lib/``, a ``pyproject.toml``, and ``requirements.txt`` pinning its
  dependencies as the book does) and ``install_book.sh``, which the zip's
  ``setup.sh`` runs in otter's environment: every test imports
  ``clustermath``, which is on no package index. ``tools/grade.py`` grades
  from the same tests through ``tools/grading/plan.py``.

Usage::

    python tools/exercises.py build             regenerate exercises/ and book/solutions/
    python tools/exercises.py check             fail if either is out of date
    python tools/exercises.py autograder DIR [--key-file PATH]
                                                write the autograder zips into DIR (with the course key,
                                                chapters with variants grade each submitter's own case)
    python tools/exercises.py autograder-check  install one zip in a clean environment and grade
                                                a solved and a blank notebook with it (slow)

Cell tags in a master steer the derivation. ``solutions-only`` cells (the
solutions page's title, discussions) are dropped from the student copy;
``exercises-only`` cells (the student copy's title and instructions, tagged
``remove-cell`` too so the master itself reads as the solutions) are dropped
from the solutions page and lose that tag in the student copy. Folding tags
on solution cells (``hide-cell``) and their ``mystnb`` labels are dropped from
the student copy, and otter's plumbing (the initialisation and
``grader.check`` cells) is tagged ``remove-cell`` there, so the exercise page
of the book shows only prompts and starter code.

``otter assign`` stamps its output with times and random cell ids, so the
check compares a normalised form (cell types, sources and tags, and the tests
in the notebook's metadata), and ``build`` writes stable cell ids so that an
unchanged master regenerates an identical file.
"""
from __future__ import annotations

import argparse
import copy
import difflib
import fcntl
import hashlib
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass

import nbformat

ROOT = pathlib.Path(__file__).resolve().parent.parent
SOLUTIONS = ROOT / "solutions"
EXERCISES = ROOT / "exercises"
PAGES = ROOT / "book" / "solutions"

SOLUTIONS_ONLY = "solutions-only"
EXERCISES_ONLY = "exercises-only"
FOLDING_TAGS = {"hide-cell", "hide-input", "hide-output"}
REMOVE = "remove-cell"


def masters(folder: pathlib.Path = SOLUTIONS) -> list[pathlib.Path]:
    """The master notebooks, one per chapter, in chapter order."""
    return sorted(p for p in folder.glob("ch*.ipynb") if ".ipynb_checkpoints" not in p.parts)


def otter_assign(master: pathlib.Path, dest: pathlib.Path) -> tuple[pathlib.Path, pathlib.Path]:
    """Run ``otter assign`` (without executing the master) and return (student notebook, autograder zip)."""
    cmd = [sys.executable, "-m", "otter", "assign", "--no-run-tests", str(master), str(dest)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"otter assign failed on {master}:\n{done.stdout}\n{done.stderr}")
    student = dest / "student" / master.name
    zips = sorted((dest / "autograder").glob("*.zip"))
    if not student.is_file() or len(zips) != 1:
        raise RuntimeError(f"otter assign wrote no student notebook or no single zip for {master}")
    return student, zips[0]


def _tags(cell: nbformat.NotebookNode) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


def _set_tags(cell: nbformat.NotebookNode, tags: list[str]) -> None:
    if tags:
        cell.metadata["tags"] = tags
    else:
        cell.metadata.pop("tags", None)


def _is_plumbing(cell: nbformat.NotebookNode) -> bool:
    source = cell.source if isinstance(cell.source, str) else "".join(cell.source)
    return cell.cell_type == "code" and (
        source.startswith("# Initialize Otter") or source.strip().startswith("grader.check(")
    )


CASE_TAG = "case"
"""The master's cell that declares its exercises' case (``CASE = Case(...)``, issue 31)."""


def case_of(nb: nbformat.NotebookNode):
    """The case a master (or a notebook derived from it) declares in its ``case`` cell, else None.

    The cell is the master's own code (trusted): it is run here, alone, to read the declaration.
    """
    found = [c for c in nb.cells if c.cell_type == "code" and CASE_TAG in _tags(c)]
    if not found:
        return None
    if len(found) > 1:
        raise ValueError(f"a master declares its case in one cell, found {len(found)} tagged {CASE_TAG!r}")
    namespace: dict = {"__name__": "__case__"}
    exec(compile(found[0].source, "<case>", "exec"), namespace)
    return namespace["CASE"]


def _render(cell: nbformat.NotebookNode, case) -> None:
    """Fill a markdown cell's ``{{...}}`` placeholders from the case (the prompts name no typed number)."""
    from clustermath.feedback.variants import PLACEHOLDER, render

    if cell.cell_type == "markdown" and PLACEHOLDER.search(cell.source):
        if case is None:
            raise ValueError("a markdown cell has {{...}} placeholders but the master declares no case")
        cell.source = render(cell.source, case)


def student_copy(assigned: nbformat.NotebookNode, stem: str, case=None) -> nbformat.NotebookNode:
    """Turn otter's student notebook into the committed one (see the module docstring); ``case``: the
    case its prompts show (default: the one the notebook declares, at its default values). The case
    cell becomes that case's values as plain data (``Case.student_cell``)."""
    nb = copy.deepcopy(assigned)
    declared = case_of(nb)
    if case is None:
        case = declared
    elif declared is None:
        raise ValueError(f"{stem} declares no case, so it has no variants")
    cells = []
    for cell in nb.cells:
        _render(cell, case)
        if CASE_TAG in _tags(cell) and case is not None:
            cell.source = case.student_cell()
        tags = _tags(cell)
        if SOLUTIONS_ONLY in tags:
            continue
        if EXERCISES_ONLY in tags:
            tags = [t for t in tags if t not in (EXERCISES_ONLY, REMOVE)]
        tags = [t for t in tags if t not in FOLDING_TAGS]
        if _is_plumbing(cell) and REMOVE not in tags:
            tags.append(REMOVE)
        _set_tags(cell, tags)
        cell.metadata.pop("mystnb", None)  # the solutions page's folding labels
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
        cells.append(cell)
    for i, cell in enumerate(cells):
        cell["id"] = f"{stem}-{i:03d}"
    nb.cells = cells
    keep = ("kernelspec", "language_info", "otter")
    nb.metadata = nbformat.from_dict({k: nb.metadata[k] for k in keep if k in nb.metadata})
    nb.nbformat, nb.nbformat_minor = 4, 5
    return nb


_MARKER_LINE = re.compile(r"^\s*# (BEGIN|END) SOLUTION( NO PROMPT)?\s*$")
_MARKER_SUFFIX = re.compile(r"\s*# SOLUTION( NO PROMPT)?\s*$")


def _without_markers(source: str) -> str:
    """Code as a reader should see it: otter's solution markers and prompt-only lines removed."""
    kept, prompt = [], False
    for line in source.splitlines():
        stripped = line.strip()
        if stripped == "# BEGIN PROMPT":
            prompt = True
            continue
        if stripped == "# END PROMPT":
            prompt = False
            continue
        if prompt or _MARKER_LINE.match(line):
            continue
        kept.append(_MARKER_SUFFIX.sub("", line))
    return re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip("\n")


def solution_page(master: nbformat.NotebookNode, stem: str) -> nbformat.NotebookNode:
    """The master as a page of the book: no otter raw cells, no markers, no student-only cells."""
    nb = copy.deepcopy(master)
    case = case_of(nb)
    cells = []
    for cell in nb.cells:
        if cell.cell_type == "raw" or EXERCISES_ONLY in _tags(cell):
            continue
        _render(cell, case)
        if cell.cell_type == "code":
            cell.source = _without_markers(cell.source)
            cell.outputs = []
            cell.execution_count = None
        cells.append(cell)
    for i, cell in enumerate(cells):
        cell["id"] = f"{stem}-solutions-{i:03d}"
    nb.cells = cells
    keep = ("kernelspec", "language_info")
    nb.metadata = nbformat.from_dict({k: nb.metadata[k] for k in keep if k in nb.metadata})
    nb.nbformat, nb.nbformat_minor = 4, 5
    return nb


def normalised(nb: nbformat.NotebookNode) -> list[str]:
    """A notebook as comparable lines: cell types, sources and tags, then the otter tests."""
    lines: list[str] = []
    for i, cell in enumerate(nb.cells):
        source = cell.source if isinstance(cell.source, str) else "".join(cell.source)
        lines.append(f"--- cell {i}: {cell.cell_type} tags={sorted(_tags(cell))}")
        lines.extend(source.splitlines())
    otter = nb.metadata.get("otter", {})
    lines.append(f"--- otter: assignment {otter.get('assignment_name')!r}, ok_format {otter.get('OK_FORMAT')!r}")
    for name, test in sorted(otter.get("tests", {}).items()):
        lines.append(f"--- test {name}")
        lines.extend(str(test).splitlines())
    return lines


def generate(master: pathlib.Path) -> nbformat.NotebookNode:
    """The student notebook derived from one master."""
    with tempfile.TemporaryDirectory(prefix="otter-assign-") as tmp:
        student, _ = otter_assign(master, pathlib.Path(tmp) / "dist")
        assigned = nbformat.read(student, as_version=4)
    return student_copy(assigned, master.stem)


def _problems_with_master(master: pathlib.Path) -> list[str]:
    nb = nbformat.read(master, as_version=4)
    problems = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code" and cell.get("outputs"):
            problems.append(f"{master.relative_to(ROOT)}: cell {i} has stored outputs; "
                            "masters are committed without outputs (the book executes them)")
            break
    return problems


def build(solutions: pathlib.Path = SOLUTIONS, exercises: pathlib.Path = EXERCISES,
          pages: pathlib.Path = PAGES) -> list[pathlib.Path]:
    """Regenerate every student notebook and solutions page; remove those whose master is gone."""
    exercises.mkdir(exist_ok=True)
    pages.mkdir(parents=True, exist_ok=True)
    written = []
    for master in masters(solutions):
        nbformat.write(generate(master), exercises / master.name)
        page = solution_page(nbformat.read(master, as_version=4), master.stem)
        nbformat.write(page, pages / master.name)
        written += [exercises / master.name, pages / master.name]
    for old in list(exercises.glob("*.ipynb")) + list(pages.glob("*.ipynb")):
        if old not in written:
            old.unlink()
    return written


def _compare(target: pathlib.Path, fresh: nbformat.NotebookNode) -> list[str]:
    name = target.relative_to(ROOT) if target.is_relative_to(ROOT) else target
    if not target.is_file():
        return [f"{name} is missing"]
    committed = normalised(nbformat.read(target, as_version=4))
    regenerated = normalised(fresh)
    if committed == regenerated:
        return []
    diff = list(difflib.unified_diff(committed, regenerated, "committed", "regenerated", lineterm="", n=1))
    shown = "\n".join(diff[:40]) + ("\n..." if len(diff) > 40 else "")
    return [f"{name} is out of date:\n{shown}"]


def check(solutions: pathlib.Path = SOLUTIONS, exercises: pathlib.Path = EXERCISES,
          pages: pathlib.Path = PAGES) -> list[str]:
    """Problems that make the committed derived notebooks disagree with the masters (empty if none)."""
    problems: list[str] = []
    expected = set()
    for master in masters(solutions):
        problems += _problems_with_master(master)
        expected.add(master.name)
        student = exercises / master.name
        problems += _compare(student, generate(master))
        problems += _compare(pages / master.name,
                             solution_page(nbformat.read(master, as_version=4), master.stem))
        if student.is_file() and "hidden=True" in json.dumps(
                nbformat.read(student, as_version=4).metadata.get("otter", {})):
            problems.append(f"{student.relative_to(ROOT)} contains a hidden test")
    for extra in sorted(list(exercises.glob("*.ipynb")) + list(pages.glob("*.ipynb"))):
        if extra.name not in expected:
            problems.append(f"{extra} has no master in {solutions}/")
    return problems


@dataclass(frozen=True)
class Autograder:
    """One chapter's autograder: its zip and the points of each question."""

    assignment: str
    zip_path: pathlib.Path
    points: dict[str, float]
    notebook: str = ""
    """The student notebook's file name, which its ``grader.check`` cells read."""

    @property
    def possible(self) -> float:
        return sum(self.points.values())


def _question_points(master: pathlib.Path) -> tuple[str, dict[str, float]]:
    """The assignment name and each question's points, read from the master's raw cells."""
    import yaml

    nb = nbformat.read(master, as_version=4)
    name, points = master.stem, {}
    for cell in nb.cells:
        if cell.cell_type != "raw":
            continue
        text = cell.source.strip()
        if text.startswith("# ASSIGNMENT CONFIG"):
            name = str(yaml.safe_load(text.split("\n", 1)[1]).get("name", name))
        elif text.startswith("# BEGIN QUESTION"):
            config = yaml.safe_load(text.split("\n", 1)[1])
            value = config.get("points", 1)
            if isinstance(value, list):  # points per test case
                value = sum(float(v) for v in value)
            elif not isinstance(value, (int, float)):  # e.g. {each: ...}: otter's own total is used
                value = 1
            points[str(config["name"])] = float(value)
    return name, points


AUTOGRADER_CHECK = pathlib.Path(os.environ.get("XDG_CACHE_HOME") or pathlib.Path.home() / ".cache") \
    / "ai-training-clusters-grading" / "autograder-check"
"""The clean environment of ``autograder-check``: made once from pip's cache, then reused."""
BOOK_FOLDER = "book"
"""Where the zip holds the book's package."""
INSTALL_SCRIPT = "install_book.sh"
INSTALL = """#!/usr/bin/env bash
# Installs the book's package (clustermath) and its pinned dependencies into the Python on PATH.
# The autograder's setup.sh runs it inside otter's environment; it works from any folder.
set -e
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
python -m pip install --no-input -r "$here/book/requirements.txt" "$here/book"
python -c "import clustermath; print('clustermath', clustermath.__file__)"
"""
SETUP_LINE = "\n# the book's package, which every test imports (added by tools/exercises.py)\n" \
             "mamba run -n otter-env bash /autograder/source/install_book.sh\n"


def _package_requirements() -> str:
    """The package's dependencies (pyproject) pinned as the book's requirements.txt pins them."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = {re.split(r"[<>=\[ ;]", d, maxsplit=1)[0].lower() for d in project["dependencies"]}
    pins = {}
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        name = re.split(r"[<>=\[ ;]", line, maxsplit=1)[0].lower()
        if name in wanted:
            pins[name] = line
    return "\n".join(pins.get(name, name) for name in sorted(wanted)) + "\n"


def _package_pyproject() -> str:
    """The repository's pyproject.toml for the package alone (no readme, no test settings)."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return (
        '[build-system]\nrequires = ["setuptools>=68"]\nbuild-backend = "setuptools.build_meta"\n\n'
        f'[project]\nname = "{project["name"]}"\nversion = "{project["version"]}"\n'
        f'requires-python = "{project["requires-python"]}"\n'
        f'dependencies = {json.dumps(project["dependencies"])}\n\n'
        '[tool.setuptools.packages.find]\nwhere = ["lib"]\n\n'
        '[tool.setuptools.package-data]\n"clustermath.validation" = ["measurements.csv"]\n')


PLUGIN = "clustermath.feedback.gradescope.DrawCase"
"""The otter plugin that grades a submission on its submitter's case (chapters with a case, given a key)."""


def add_book_package(zip_path: pathlib.Path, case=None, key: bytes | None = None) -> None:
    """Put the book's package into an otter autograder zip and have its setup.sh install it; with a
    chapter's ``case`` and the course ``key``, name the plugin that draws each submitter's case."""
    import zipfile

    with zipfile.ZipFile(zip_path) as source:
        members = {info.filename: source.read(info) for info in source.infolist()}
    if "setup.sh" not in members:
        raise RuntimeError(f"{zip_path} has no setup.sh: not an otter autograder zip")
    if case is not None and key is not None:
        config = json.loads(members.get("otter_config.json", b"{}") or b"{}")
        plugins = [p for p in config.get("plugins", []) if PLUGIN not in (p if isinstance(p, str) else p)]
        config["plugins"] = plugins + [{PLUGIN: {"spec": case.spec(), "key": key.hex()}}]
        members["otter_config.json"] = json.dumps(config, indent=2, sort_keys=True).encode()
    setup = members["setup.sh"].decode()
    if INSTALL_SCRIPT not in setup:
        members["setup.sh"] = (setup.rstrip("\n") + "\n" + SETUP_LINE).encode()
    members[INSTALL_SCRIPT] = INSTALL.encode()
    members[f"{BOOK_FOLDER}/pyproject.toml"] = _package_pyproject().encode()
    members[f"{BOOK_FOLDER}/requirements.txt"] = _package_requirements().encode()
    package = ROOT / "lib" / "clustermath"
    for path in sorted(package.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
            members[f"{BOOK_FOLDER}/lib/{path.relative_to(package.parent).as_posix()}"] = path.read_bytes()
    tmp = zip_path.with_suffix(".tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as out:
        for name, data in members.items():
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            info.external_attr = (0o755 if name.endswith(".sh") or name == "run_autograder" else 0o644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            out.writestr(info, data)
    tmp.replace(zip_path)


def _package_digest() -> bytes:
    package = ROOT / "lib" / "clustermath"
    h = hashlib.sha256(_package_requirements().encode())
    for path in sorted(package.rglob("*.py")):
        h.update(path.relative_to(package).as_posix().encode() + path.read_bytes())
    return h.digest()


def autograders(out: pathlib.Path, solutions: pathlib.Path = SOLUTIONS,
                only: list[str] | None = None, key: bytes | None = None) -> dict[str, Autograder]:
    """Build (or reuse, keyed by the master's content and the package's) one autograder zip per master in
    ``out`` (``only``: master stems to build, e.g. ``["ch01_exercises"]``; ``key``: the course key, with
    which a chapter that declares a case grades each submitter on theirs, ``clustermath.feedback.gradescope``)."""
    import otter

    out.mkdir(parents=True, exist_ok=True)
    found: dict[str, Autograder] = {}
    package = _package_digest()
    for master in masters(solutions):
        if only is not None and master.stem not in only:
            continue
        keyed = hashlib.sha256(key).digest() if key else b""
        digest = hashlib.sha256(master.read_bytes() + otter.__version__.encode() + package + keyed).hexdigest()[:12]
        zip_path = out / f"{master.stem}-{digest}.zip"
        if not zip_path.is_file():
            for stale in out.glob(f"{master.stem}-*.zip"):
                stale.unlink()
            with tempfile.TemporaryDirectory(prefix="otter-assign-") as tmp:
                _, made = otter_assign(master, pathlib.Path(tmp) / "dist")
                add_book_package(made, case_of(nbformat.read(master, as_version=4)), key)
                shutil.copyfile(made, zip_path)
        assignment, points = _question_points(master)
        found[assignment] = Autograder(assignment, zip_path, points, master.name)
    return found


def autograder_check(work: pathlib.Path, stem: str = "ch01_exercises") -> list[str]:
    """Install one chapter's zip the way Gradescope does (its own ``install_book.sh``) into a clean virtual
    environment made here (pip's cache serves the wheels), then grade a solved and a blank notebook with
    ``otter run``; returns the problems found.

    ``work`` (by default one folder for every clone and worktree of the book: its venv takes minutes to
    make) is held under a lock while the check runs, so a second check waits for the first instead of
    removing the files the first is grading."""
    work.mkdir(parents=True, exist_ok=True)
    with open(work / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _autograder_check(work, stem)


def _autograder_check(work: pathlib.Path, stem: str) -> list[str]:
    """``autograder_check``'s work, with its folder locked."""
    import zipfile

    sys.path.insert(0, str(ROOT / "tools" / "grading"))
    import attacks  # the solved and blank notebooks the attack folder uses

    ag = autograders(work / "zips", only=[stem])
    zip_path = next(iter(ag.values())).zip_path
    possible = next(iter(ag.values())).possible
    source = work / "source"
    shutil.rmtree(source, ignore_errors=True)
    with zipfile.ZipFile(zip_path) as z:
        z.extractall(source)
    venv = work / "venv"
    problems = []
    if not (venv / "bin" / "otter").is_file():
        shutil.rmtree(venv, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        import otter

        subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet",
                        f"otter-grader[grading]=={otter.__version__}"], check=True)
    env = {"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "HOME": str(work), "LANG": "C.UTF-8"}
    # the environment is kept between runs (otter's own install takes minutes); the book's package is
    # removed first, so that only the zip's own script can put it back
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "uninstall", "--yes", "--quiet", "clustermath"],
                   env=env, capture_output=True, cwd=work)
    gone = subprocess.run([str(venv / "bin" / "python"), "-c", "import clustermath"], env=env,
                          capture_output=True, cwd="/")
    if gone.returncode == 0:
        return ["clustermath could not be removed from the check's environment before the install"]
    done = subprocess.run(["bash", str(source / INSTALL_SCRIPT)], env=env, capture_output=True, text=True,
                          cwd=work)
    if done.returncode != 0 or "clustermath" not in done.stdout:
        return [f"{INSTALL_SCRIPT} failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"]
    where = subprocess.run([str(venv / "bin" / "python"), "-c", "import clustermath; print(clustermath.__file__)"],
                           env=env, capture_output=True, text=True, cwd="/")
    if not where.stdout.startswith(str(venv)):
        problems.append(f"clustermath is not installed in the clean environment: {where.stdout}{where.stderr}")
    for name, nb, want in (("solved", attacks.solved(stem), possible), ("blank", attacks._student(stem), 0.0)):
        folder = work / name
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
        nbformat.write(nb, folder / f"{stem}.ipynb")
        run = subprocess.run([str(venv / "bin" / "otter"), "run", "-a", str(zip_path), "-o", str(folder),
                              str(folder / f"{stem}.ipynb")], env=env, capture_output=True, text=True, cwd=folder)
        results = folder / "results.json"
        if not results.is_file():
            problems.append(f"otter run wrote no results for the {name} notebook:\n{run.stdout[-1500:]}\n"
                            f"{run.stderr[-1500:]}")
            continue
        data = json.loads(results.read_text())
        score = sum(float(t.get("score") or 0) for t in data.get("tests", []))
        print(f"{name}: {score:g} of {possible:g} ({len(data.get('tests', []))} tests)")
        if abs(score - want) > 1e-6:
            problems.append(f"the {name} notebook scored {score:g}, expected {want:g}")
    return problems


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("build", help="regenerate exercises/ and book/solutions/ from solutions/")
    sub.add_parser("check", help="fail if exercises/ or book/solutions/ is out of date")
    ag = sub.add_parser("autograder", help="write the autograder zips into a folder")
    ag.add_argument("out", type=pathlib.Path)
    ag.add_argument("--key-file", type=pathlib.Path, default=None,
                    help="the course key: chapters with a case grade each submitter on theirs (variants)")
    zc = sub.add_parser("autograder-check", help="install a zip in a clean environment and grade with it")
    zc.add_argument("--work", type=pathlib.Path, default=AUTOGRADER_CHECK,
                    help="where the clean environment and the zip are kept (reused between runs)")
    args = parser.parse_args(argv)

    if args.command == "autograder-check":
        args.work.mkdir(parents=True, exist_ok=True)
        problems = autograder_check(args.work.resolve())
        for problem in problems:
            print(problem, file=sys.stderr)
        print("the autograder zip installs clustermath and grades" if not problems else "autograder check failed")
        return 1 if problems else 0

    if args.command == "build":
        for path in build():
            print(f"wrote {path.relative_to(ROOT)}")
        return 0
    if args.command == "check":
        problems = check()
        for problem in problems:
            print(problem, file=sys.stderr)
        if problems:
            print("Run `make exercises` to regenerate exercises/ and book/solutions/, and commit them.",
                  file=sys.stderr)
            return 1
        print(f"exercises/ and book/solutions/ match solutions/ ({len(masters())} master notebook(s))")
        return 0
    key = None
    if args.key_file is not None:
        from clustermath.feedback.variants import course_key

        key = course_key(args.key_file, create=False)
    for name, ag in autograders(args.out, key=key).items():
        print(f"{name}: {ag.zip_path} ({len(ag.points)} questions, {ag.possible:g} points)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
