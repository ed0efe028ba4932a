"""The package's three layers, enforced: models, views, feedback.

* models (the top level of ``clustermath`` and ``compositions/``) never import
  ``clustermath.views``, ``clustermath.feedback``, ipywidgets or matplotlib, so
  they stay pure and cheap to import in a grader or a test;
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
    for path in paths:
        mod = module_name(path)
        layer = layer_of(mod)
        for line, target in imports_of(path):
            for banned in FORBIDDEN[layer]:
                if target == banned or target.startswith(banned + "."):
                    bad.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {layer} {mod} imports {target}")
    return bad


MODULES = sorted(PACKAGE.rglob("*.py"))


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
    assert {"clustermath.views.base", "clustermath.scaling", "clustermath.compositions.budget"} <= got
