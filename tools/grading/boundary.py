"""The own-code boundary: a chapter's sandbox holds only the book modules its exercises may use.

A master names, per question, the ``clustermath`` modules whose use means the
student did not write the code (``metadata.grading.own_code``). The runner's
watch (``runner.py``) notes calls into those modules, but it lives in the
student's process: issue 29 undid it three ways (the originals taken back
from the wrappers' closures, the package loaded a second time under another
name, the runner's record of used modules replaced). So a module that *every*
question of a chapter forbids is not in that chapter's sandbox at all: the
sandbox gets a copy of the package in which each of its files is a stand-in
that names the same public names, each of which raises ``OwnCodeRequired``
when called or read (the rest of the package still imports, and the book's
other models keep working). A module that some question may use stays, and
stays watched.
"""
from __future__ import annotations

import importlib
import pathlib
import shutil

STUB = '''"""{module}: not in this exercise's sandbox (the exercises ask for the student's own code)."""


class OwnCodeRequired(RuntimeError):
    """The book's own model was used where the exercise asks for the student's code."""


class _Absent:
    def __init__(self, name):
        self._name = name

    def _refuse(self, *args, **kwargs):
        raise OwnCodeRequired(f"{{self._name}} is the book's own model, which this exercise's sandbox does "
                              "not hold: write the function yourself")

    __call__ = __getattr__ = __iter__ = __getitem__ = __bool__ = __int__ = __float__ = __index__ = _refuse

    def __repr__(self):
        return f"<absent: {{self._name}}>"

    def __mro_entries__(self, bases):
        self._refuse()


__all__ = {names!r}


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _Absent(f"{module}.{{name}}")
'''


def absent_modules(plan) -> list[str]:
    """The ``clustermath`` modules every question of ``plan`` forbids (none when some question may use
    them, or when the plan names no questions)."""
    rules = getattr(plan, "own_code", None) or {}
    questions = list(getattr(plan, "points", {}) or {})
    if not questions or any(q not in rules for q in questions):
        return []
    common = set.intersection(*(set(rules[q]) for q in questions))
    return sorted(m for m in common if m.startswith("clustermath.") and m.count(".") >= 1)


def _module_name(package: pathlib.Path, path: pathlib.Path) -> str:
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def bounded_package(package: pathlib.Path, absent: list[str], dest: pathlib.Path) -> pathlib.Path:
    """A copy of ``package`` (the ``clustermath`` folder) in ``dest`` whose modules under ``absent`` are
    stand-ins; returns the copy's package folder."""
    target = dest / package.name
    shutil.copytree(package, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for module in absent:
        rel = pathlib.Path(*module.split(".")[1:])
        folder, single = target / rel, (target / rel).with_suffix(".py")
        files = sorted(folder.rglob("*.py")) if folder.is_dir() else [single] if single.is_file() else []
        for path in files:
            name = _module_name(target, path)
            real = importlib.import_module(name)
            names = list(getattr(real, "__all__", None) or [n for n in vars(real) if not n.startswith("_")])
            path.write_text(STUB.format(module=name, names=names))
    return target
