"""The package's layout and layers, enforced: shared modules, wings, views, feedback.

* every model lives in a *wing*, one folder per chapter (``peak/``,
  ``reliability/`` ...); the top of the package holds only the few modules every
  wing shares (``SHARED``), so the flat layout cannot come back;
* each wing has a view module and a feedback module of the same name;
* models (wings and shared modules) never import ``clustermath.views``,
  ``clustermath.feedback``, ipywidgets or matplotlib, so they stay pure and cheap
  to import in a grader or a test; a wing may import the shared modules and
  another wing's models; a shared module imports no wing (no arrow runs back up);
* views (``views/``) import models, never feedback;
* feedback (``feedback/``) imports models only: no views, ipywidgets or matplotlib.

Every ``import`` in every module is read from its source (including imports
inside functions), relative imports are resolved, and each is checked against
the rule of the importing module's layer.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

import clustermath

PACKAGE = Path(clustermath.__file__).parent
WIDGET_LIBS = ("ipywidgets", "matplotlib", "IPython", "PIL")

FORBIDDEN: dict[str, tuple[str, ...]] = {
    "model": ("clustermath.views", "clustermath.feedback", *WIDGET_LIBS),
    "view": ("clustermath.feedback",),
    "feedback": ("clustermath.views", *WIDGET_LIBS),
}


SHARED = ("check", "labels", "runner", "validate")
"""The top-level modules every wing shares (besides ``__init__``); at most six."""
LAYERS = ("views", "feedback")


def wings() -> list[str]:
    """The model folders: every package under ``clustermath`` except the view and feedback layers."""
    return sorted(p.parent.name for p in PACKAGE.glob("*/__init__.py") if p.parent.name not in LAYERS)


def layout_problems(package: Path) -> list[str]:
    """What breaks the one-wing-per-chapter layout of ``package`` (a folder like lib/clustermath)."""
    problems = []
    for path in sorted(package.glob("*.py")):
        if path.stem != "__init__" and path.stem not in SHARED:
            problems.append(f"{path.name}: a model module at the top of the package; put it in its "
                            f"chapter's wing ({', '.join(sorted(p.parent.name for p in package.glob('*/__init__.py') if p.parent.name not in LAYERS))})")
    for folder in sorted(p.parent for p in package.glob("*/__init__.py")):
        if folder.name in LAYERS:
            continue
        for layer in LAYERS:
            if not (package / layer / f"{folder.name}.py").exists():
                problems.append(f"{folder.name}/: a wing without {layer}/{folder.name}.py")
    return problems


def layer_of(module: str) -> str:
    """``clustermath.views.peak`` -> "view"; ``clustermath.feedback.core`` -> "feedback"; else "model"."""
    parts = module.split(".")
    if len(parts) > 1 and parts[1] == "views":
        return "view"
    if len(parts) > 1 and parts[1] == "feedback":
        return "feedback"
    return "model"


def module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path) -> list[tuple[int, str]]:
    """(line, absolute module name) for every import statement in ``path``."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.append((node.lineno, target))
            # `from . import peak` imports the submodule clustermath.<pkg>.peak
            found += [(node.lineno, f"{target}.{alias.name}") for alias in node.names
                      if target.startswith("clustermath")]
    return found


def violations(paths) -> list[str]:
    bad = []
    wing_names = wings()
    for path in paths:
        mod = module_name(path)
        layer = layer_of(mod)
        banned_here = FORBIDDEN[layer]
        if mod.count(".") == 1 and mod.split(".")[1] in SHARED:  # a shared module imports no wing
            banned_here = (*banned_here, *(f"clustermath.{w}" for w in wing_names))
        for line, target in imports_of(path):
            for banned in banned_here:
                if target == banned or target.startswith(banned + "."):
                    bad.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {layer} {mod} imports {target}")
    return bad


MODULES = sorted(PACKAGE.rglob("*.py"))


def test_every_model_lives_in_a_wing_named_as_its_view_and_feedback():
    assert layout_problems(PACKAGE) == []
    assert len(SHARED) <= 6
    assert wings() == sorted(clustermath.WINGS)


def test_a_model_module_at_the_top_is_caught(tmp_path):
    """The layout rule is live: a model put back at the top of a copy of the package is reported."""
    import shutil
    copy = tmp_path / "clustermath"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "young.py").write_text("def young_interval(save_s, mtbf_s):\n    return (2 * save_s * mtbf_s) ** 0.5\n")
    (copy / "views" / "scaleup.py").unlink()
    assert layout_problems(copy) == [
        "young.py: a model module at the top of the package; put it in its chapter's wing "
        f"({', '.join(sorted(clustermath.WINGS))})",
        "scaleup/: a wing without views/scaleup.py",
    ]


def test_a_wing_importing_a_view_is_caught():
    """A wing module that imports a view is reported."""
    probe = PACKAGE / "reliability" / "_layer_probe.py"
    try:
        probe.write_text("from ..views.reliability import goodput_explorer\nfrom ..scaleup import domains\n")
        assert violations([probe]) == [
            "clustermath/reliability/_layer_probe.py:1: model clustermath.reliability._layer_probe "
            "imports clustermath.views.reliability",
            "clustermath/reliability/_layer_probe.py:1: model clustermath.reliability._layer_probe "
            "imports clustermath.views.reliability.goodput_explorer",
        ]
    finally:
        probe.unlink()


def test_a_shared_module_importing_a_wing_is_caught(monkeypatch):
    """No arrow runs back up: a shared module that imports a wing is reported."""
    import sys
    probe = PACKAGE / "_shared_probe.py"
    monkeypatch.setattr(sys.modules[__name__], "SHARED", (*SHARED, "_shared_probe"))
    try:
        probe.write_text("from .peak import scaling\n")
        assert violations([probe]) == [
            "clustermath/_shared_probe.py:1: model clustermath._shared_probe imports clustermath.peak",
            "clustermath/_shared_probe.py:1: model clustermath._shared_probe imports clustermath.peak.scaling",
        ]
    finally:
        probe.unlink()


def test_the_package_has_all_three_layers():
    layers = {layer_of(module_name(p)) for p in MODULES}
    assert layers == {"model", "view", "feedback"}


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_module_respects_its_layer(path):
    assert violations([path]) == []


def test_a_model_importing_matplotlib_is_caught(tmp_path, monkeypatch):
    """The rule itself is live: a model module that imports matplotlib is reported."""
    fake = PACKAGE / "_layer_probe_model.py"
    try:
        fake.write_text("import math\n\ndef f():\n    from matplotlib import pyplot  # a model must not draw\n")
        assert violations([fake]) == [
            "clustermath/_layer_probe_model.py:4: model clustermath._layer_probe_model imports matplotlib"]
    finally:
        fake.unlink()


def test_relative_imports_resolve_to_their_absolute_module():
    got = {target for _, target in imports_of(PACKAGE / "views" / "peak.py")}
    assert {"clustermath.views.base", "clustermath.peak.scaling", "clustermath.peak.budget"} <= got
