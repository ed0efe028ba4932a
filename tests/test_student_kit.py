"""book/_ext/student_kit.py: the kit a student downloads holds the exercises and the package, no answer.

What must be in it: the six student notebooks, the helper package, its pyproject, pinned
requirements with the grader and JupyterLab, and a README. What must not: any file of
``solutions/`` or of the book's solution pages, any hidden test, any line of solution code that
the student copy does not show (the masters' ``# BEGIN SOLUTION`` blocks and ``# SOLUTION`` lines).
"""
from __future__ import annotations

import importlib.util
import json
import re
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
EXT = REPO / "book" / "_ext" / "student_kit.py"
_spec = importlib.util.spec_from_file_location("student_kit", EXT)
kit = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(kit)

MASTERS = sorted((REPO / "solutions").glob("ch*_exercises.ipynb"))


@pytest.fixture(scope="module")
def members() -> dict[str, bytes]:
    return kit.kit_members(REPO)


def squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def secrets() -> list[tuple[str, str]]:
    """(master, text) of every hidden test and every solution-only line of the masters."""
    found = []
    for master in MASTERS:
        student = squash((REPO / "exercises" / master.name).read_text(encoding="utf-8"))
        for cell in json.loads(master.read_text(encoding="utf-8"))["cells"]:
            source = "".join(cell["source"])
            if cell["cell_type"] != "code":
                continue
            if source.lstrip().startswith("# HIDDEN"):
                body = "\n".join(source.splitlines()[1:])
                found.append((master.name, body))
            inside = False
            for line in source.splitlines():
                if re.match(r"^\s*# BEGIN SOLUTION", line):
                    inside = True
                elif re.match(r"^\s*# END SOLUTION", line):
                    inside = False
                elif (inside or line.rstrip().endswith("# SOLUTION")) and len(squash(line)) >= 16:
                    text = line.replace("# SOLUTION", "")
                    if squash(text) not in student:
                        found.append((master.name, text))
    return found


def test_the_kit_holds_the_exercises_the_package_and_how_to_start(members):
    notebooks = sorted(n for n in members if n.startswith("exercises/"))
    assert notebooks == [f"exercises/ch0{i}_exercises.ipynb" for i in range(1, 7)]
    for nb in notebooks:
        assert members[nb] == (REPO / nb).read_bytes(), f"{nb} is not the student copy"
    assert "lib/clustermath/__init__.py" in members and "lib/clustermath/validation/measurements.csv" in members
    assert {"pyproject.toml", "requirements.txt", "README.md"} <= set(members)
    requirements = members["requirements.txt"].decode()
    for pin in ("numpy==", "ipywidgets==", "otter-grader[grading]==", "jupyterlab==", "-e ."):
        assert pin in requirements, f"the kit's requirements.txt lacks {pin}"
    readme = members["README.md"].decode()
    assert "grader.check" in readme and "jupyter lab" in readme


def test_the_kit_holds_no_answer(members):
    assert not [n for n in members if n.startswith(("solutions/", "book/", "tests/", "tools/"))]
    assert not [n for n in members if "__pycache__" in n]
    hay = squash(b"\n".join(members.values()).decode("utf-8", errors="replace"))
    # the package is the book's own code, printed in its chapters: a line it shares with a
    # solution (`rng = np.random.default_rng(seed)`) gives nothing away
    package = squash(b"\n".join(v for n, v in members.items() if n.startswith("lib/")).decode("utf-8", errors="replace"))
    found = [(m, t) for m, t in secrets() if squash(t) not in package]
    assert len(found) > 50, f"only {len(found)} hidden tests and solution lines to look for"
    leaked = [(m, t.strip()[:60]) for m, t in found if squash(t) in hay]
    assert not leaked, f"the kit holds answers: {leaked[:5]}"


def test_the_search_finds_a_planted_answer(members):
    master, text = next((m, t) for m, t in secrets() if "def test_" in t)
    planted = squash(b"\n".join([*members.values(), text.encode()]).decode())
    assert squash(text) in planted


def test_the_zip_is_the_same_for_the_same_sources(tmp_path: Path):
    a, b = kit.write_kit(REPO, tmp_path / "a.zip"), kit.write_kit(REPO, tmp_path / "b.zip")
    assert a.read_bytes() == b.read_bytes()
    with zipfile.ZipFile(a) as z:
        assert all(n.startswith(kit.FOLDER + "/") for n in z.namelist())
        assert z.read(f"{kit.FOLDER}/README.md").decode() == kit.README


def test_requirements_without_a_pin_are_refused(tmp_path: Path):
    (tmp_path / "requirements.txt").write_text("numpy==2.4.6\n")
    (tmp_path / "requirements-exercises.txt").write_text("otter-grader[grading]==7.0.0\n")
    (tmp_path / "Makefile").write_text("LAB_PKGS  := jupyterlab==4.6.6\n")
    with pytest.raises(ValueError, match="no pin for"):
        kit.kit_requirements(tmp_path)
