"""The book's environment apart from the test tools: `make book` installs no test tool.

requirements.txt is what building and reading the book needs (`make book`, Binder, `make lab`);
requirements-exercises.txt adds the exercises' grader (otter-grader, which pulls in Playwright
through nbconvert's PDF export) and requirements-test.txt the test tools; the Makefile installs
each only for the targets that use it. Checked three ways: the test tools are named in requirements-test.txt and not in
requirements.txt; no package requirements.txt names pulls one in (the installed packages'
declared dependencies, walked to the end); and `book` does not depend on the test stamp, while
every target that runs pytest, Playwright or mutmut does.
"""
from __future__ import annotations

import importlib.metadata as md
import re
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parent.parent
TEST_TOOLS = {"pytest", "pytest-xdist", "nbval", "playwright", "axe-playwright-python", "hypothesis", "mutmut"}
RUNS_TEST_TOOLS = re.compile(r"-m pytest|tools/(pdf|live_kernel|lab_check|screenshots|bench_widgets)\.py|mutants/run\.py")


def pins(path: Path) -> list[Requirement]:
    """The requirements a file pins (lines like ``name[extra]==1.0``; comments and ``-e .`` skipped)."""
    lines = (line.strip() for line in path.read_text(encoding="utf-8").splitlines())
    return [Requirement(line) for line in lines if "==" in line and not line.startswith(("#", "-"))]


def names(path: Path) -> set[str]:
    return {canonicalize_name(r.name) for r in pins(path)}


def test_the_test_tools_are_apart():
    book, tests = names(REPO / "requirements.txt"), names(REPO / "requirements-test.txt")
    grader = names(REPO / "requirements-exercises.txt")
    assert not book & TEST_TOOLS, f"requirements.txt names test tools: {sorted(book & TEST_TOOLS)}"
    assert TEST_TOOLS <= tests, f"requirements-test.txt lacks {sorted(TEST_TOOLS - tests)}"
    assert "otter-grader" in grader and "otter-grader" not in book
    for a, b in ((book, tests), (book, grader), (grader, tests)):
        assert not a & b, f"pinned twice: {sorted(a & b)}"


def closure(roots: list[Requirement]) -> set[str]:
    """Every installed distribution the roots need, by their declared dependencies: extras followed,
    markers evaluated for this machine (``packaging``)."""
    seen: set[tuple[str, frozenset[str]]] = set()
    stack = [(r.name, frozenset(r.extras)) for r in roots]
    while stack:
        name, extras = stack.pop()
        if (canonicalize_name(name), extras) in seen:
            continue
        seen.add((canonicalize_name(name), extras))
        try:
            requires = md.requires(name) or []
        except md.PackageNotFoundError:
            continue
        for req in map(Requirement, requires):
            if req.marker and not any(req.marker.evaluate({"extra": e}) for e in extras or {""}):
                continue
            stack.append((req.name, frozenset(req.extras)))
    return {name for name, _ in seen}


def test_no_book_requirement_pulls_in_a_test_tool():
    try:
        md.distribution("jupyter-book")
    except md.PackageNotFoundError:
        pytest.skip("the book's packages are not installed here")
    roots = pins(REPO / "requirements.txt") + [Requirement("clustermath")]
    pulled = closure(roots) & TEST_TOOLS
    assert not pulled, f"the book's requirements pull in test tools: {sorted(pulled)}"
    # and the walk does see what the grader pulls in (nbconvert[webpdf] brings Playwright)
    assert "playwright" in closure(pins(REPO / "requirements-exercises.txt"))


def rules() -> dict[str, tuple[list[str], str]]:
    """Makefile target → (prerequisites, recipe), for plain `target: prereqs` rules."""
    text = (REPO / "Makefile").read_text(encoding="utf-8")
    found: dict[str, tuple[list[str], str]] = {}
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"^([A-Za-z0-9_.$()-]+):(?!=)\s*(.*)$", line)
        if not m:
            continue
        recipe = []
        for follow in lines[i + 1:]:
            if not follow.startswith("\t"):
                break
            recipe.append(follow)
        prereqs, body = m.group(2).split(), "\n".join(recipe)
        old = found.get(m.group(1), ([], ""))
        found[m.group(1)] = (old[0] + prereqs, old[1] + body)
    return found


def test_make_book_needs_no_test_tool_and_the_test_targets_install_them():
    targets = rules()
    assert "$(TEST_STAMP)" not in targets["book"][0], "make book installs the test tools"
    runners = [t for t, (_, recipe) in targets.items() if RUNS_TEST_TOOLS.search(recipe)]
    assert {"unit", "nbval", "pdf", "browser-check", "live-kernel"} <= set(runners), runners
    for target in runners:
        prereqs = targets[target][0]
        assert "$(TEST_STAMP)" in prereqs or "$(BROWSER_STAMP)" in prereqs and "$(TEST_STAMP)" in targets["$(BROWSER_STAMP)"][0], (
            f"make {target} runs a test tool without installing requirements-test.txt first")
    assert "$(TEST_STAMP)" in targets["test"][0]
    assert "$(EX_STAMP)" in targets["$(TEST_STAMP)"][0], "the tests run without the exercises' grader"
    for target in ("exercises", "grade"):
        assert "$(EX_STAMP)" in targets[target][0], f"make {target} needs the grader"
