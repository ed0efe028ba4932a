"""The student kit: a zip of what a student needs to do the exercises, written into every HTML build.

The exercise pages and the front page link to ``student-kit.zip`` at the root of the built site
(both editions: the kit holds nothing an answer could be read from). It holds:

* ``exercises/``: the six student notebooks (prompts, starter code and public checks only:
  ``tools/exercises.py`` writes them from the masters without solutions or hidden tests);
* ``lib/clustermath/`` and ``pyproject.toml``: the book's helper package, which the exercises
  import and whose models they may call;
* ``requirements.txt``: the packages to run them, pinned as the book pins them (numpy, pandas,
  matplotlib, ipywidgets, the kernel, the exercises' grader, JupyterLab with jupyterlab-myst),
  then the package itself (``-e .``);
* ``README.md``: how to start (a virtual environment and JupyterLab, or the page's launch
  buttons) and how to check an answer.

Nothing of ``solutions/``, no master and no hidden test goes in: only the files named above
(``kit_members``), which tests/test_student_kit.py and tests/built_html/test_student_kit.py
check. The zip is the same bytes for the same sources (sorted members, fixed timestamps).
"""
from __future__ import annotations

import re
import zipfile
from pathlib import Path
from typing import Any

KIT_NAME = "student-kit.zip"
FOLDER = "ai-training-clusters-exercises"
STAMP = (2024, 1, 1, 0, 0, 0)
KIT_PACKAGES = ("numpy", "pandas", "matplotlib", "ipywidgets", "ipykernel")
"""The book's pins (requirements.txt) the kit keeps: what the exercises and the package import."""

README = """# AI Training Clusters: the exercises

This kit holds the book's six exercise notebooks (`exercises/`), the helper
package they import (`clustermath`, in `lib/`) and the pinned packages to run
them (`requirements.txt`). It holds no solution and no hidden test.

## Start

With Python 3.11 or newer:

```bash
python -m venv .venv
.venv/bin/pip install -r requirements.txt      # on Windows: .venv\\Scripts\\pip
.venv/bin/jupyter lab exercises/
```

JupyterLab opens in your browser. Open the chapter's notebook, for instance
`exercises/ch01_exercises.ipynb`.

## Work and check

Run the cells from the top. Replace each `...` with your code or your number,
then run the `grader.check("q1")` cell under the exercise. A passing check
prints that the public tests passed; a failing one names the mistake it
recognised and the section of the chapter that explains it. The public checks
try your function on the prompt's own example: when your instructor grades the
notebook, hidden tests also check your numbers and try your function on inputs
you have not seen, so a green check is necessary, not sufficient.

Hand in the notebook file (`.ipynb`) as your course asks, after
*Kernel → Restart and Run All*: the grader runs it from the top.
"""


def kit_requirements(repo: Path) -> str:
    """requirements.txt of the kit: the book's pins of ``KIT_PACKAGES``, the grader's, JupyterLab's
    (the Makefile's ``LAB_PKGS``), then the package itself."""
    pins = []
    for line in (repo / "requirements.txt").read_text(encoding="utf-8").splitlines():
        m = re.match(r"([A-Za-z0-9_.\-]+)==", line.strip())
        if m and m.group(1).lower() in KIT_PACKAGES:
            pins.append(line.strip())
    grader = [line.strip() for line in (repo / "requirements-exercises.txt").read_text(encoding="utf-8").splitlines()
              if line.strip() and not line.startswith("#")]
    lab = re.search(r"^LAB_PKGS\s*:=\s*(.+)$", (repo / "Makefile").read_text(encoding="utf-8"), re.M)
    missing = set(KIT_PACKAGES) - {p.split("==")[0].lower() for p in pins}
    if missing:
        raise ValueError(f"the kit's requirements: no pin for {sorted(missing)} in requirements.txt")
    if not grader or not lab:
        raise ValueError("the kit's requirements: no grader in requirements-exercises.txt or no LAB_PKGS in the Makefile")
    return "\n".join(["# The exercises' packages, pinned as the book pins them", *pins, *grader,
                      *lab.group(1).split(), "# the book's helper package, from lib/", "-e .", ""])


def kit_members(repo: Path) -> dict[str, bytes]:
    """Path inside the zip → content, for every file of the kit (see the module docstring)."""
    members: dict[str, bytes] = {}
    notebooks = sorted((repo / "exercises").glob("ch*_exercises.ipynb"))
    if not notebooks:
        raise ValueError(f"no exercise notebooks in {repo / 'exercises'}")
    for nb in notebooks:
        members[f"exercises/{nb.name}"] = nb.read_bytes()
    package = repo / "lib" / "clustermath"
    for path in sorted(package.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix in (".py", ".csv", ".md", ".json"):
            members[f"lib/{path.relative_to(repo / 'lib').as_posix()}"] = path.read_bytes()
    members["pyproject.toml"] = (repo / "pyproject.toml").read_bytes()
    members["requirements.txt"] = kit_requirements(repo).encode()
    members["README.md"] = README.encode()
    return members


def write_kit(repo: Path, out: Path) -> Path:
    """Write the kit's zip to ``out`` (a folder ``FOLDER`` inside it), the same bytes for the same sources."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as kit:
        for name, data in sorted(kit_members(repo).items()):
            info = zipfile.ZipInfo(f"{FOLDER}/{name}", date_time=STAMP)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            kit.writestr(info, data)
    return out


def _build_finished(app: Any, exception: Exception | None) -> None:
    if exception is None and app.builder.format == "html":
        write_kit(Path(app.srcdir), Path(app.outdir) / KIT_NAME)


def setup(app: Any) -> dict:
    app.connect("build-finished", _build_finished)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
