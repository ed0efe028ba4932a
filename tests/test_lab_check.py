"""The pieces of `make lab` and `make lab-check` that can be checked without a server.

The check itself (tools/lab_check.py: JupyterLab, a kernel and Chromium, about 2 min)
runs only through `make lab-check`, never in `make test`.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tools"))

import lab_check  # noqa: E402  (tools/lab_check.py)

MAKEFILE = (REPO / "Makefile").read_text(encoding="utf-8")


def recipe(target: str) -> tuple[str, str]:
    """(prerequisites, recipe lines) of a Makefile rule."""
    m = re.search(rf"^{re.escape(target)}:(.*)\n((?:\t.*\n)*)", MAKEFILE, re.M)
    assert m, f"no rule {target} in the Makefile"
    return m.group(1), m.group(2)


def test_raw_myst_flags_unrendered_directives_and_roles():
    text = "```{note}\nx {cite:t}src001 and {ref}ch1, {term}spec-sheet build, {doc}x, {cite}k"
    assert set(lab_check.RAW_MYST.findall(text)) == {"```{", "{cite:t}", "{ref}", "{term}", "{doc}", "{cite}"}


def test_raw_myst_accepts_rendered_text():
    rendered = "Note\nThe source column of every table… src000 prints; {x: 1} and {} in prose."
    assert lab_check.RAW_MYST.findall(rendered) == []


def test_admonitions_counted_at_line_start_only():
    src = "```{admonition} How to read\nbody\n```\n\n:::{note}\nx\n:::\ninline ```{note} is not one"
    assert len(lab_check.ADMONITION.findall(src)) == 2


def test_lab_takes_extra_arguments_and_lab_check_is_not_in_make_test():
    _, lab = recipe("lab")
    assert lab.rstrip().endswith("$(LAB_ARGS)")
    test_prereqs, _ = recipe("test")
    assert "lab-check" not in test_prereqs and "lab" not in test_prereqs.split()


def test_lab_kernel_has_the_name_every_notebook_stores():
    """Otherwise JupyterLab marks a chapter modified on opening and autosave rewrites it."""
    m = re.search(r'ipykernel install --sys-prefix --name (\S+) --display-name "([^"]+)"', MAKEFILE)
    assert m, "the lab environment installs no named kernel"
    for nb in sorted((REPO / "notebooks").glob("*.ipynb")) + sorted((REPO / "exercises").glob("*.ipynb")):
        spec = json.loads(nb.read_text(encoding="utf-8"))["metadata"]["kernelspec"]
        assert (spec["name"], spec["display_name"]) == (m.group(1), m.group(2)), nb.name


def test_binder_renders_myst_with_the_same_pin_as_make_lab():
    pins = re.search(r"^LAB_PKGS\s*:=\s*(.+)$", MAKEFILE, re.M).group(1).split()
    myst = next(p for p in pins if p.startswith("jupyterlab-myst=="))
    binder = (REPO / "binder" / "requirements.txt").read_text(encoding="utf-8").split("\n")
    assert myst in binder
