"""Report how long every explorer in the book takes to recompute and redraw.

Usage: python tools/bench_widgets.py [--updates N] [--seed S]      (or: make bench)

For each explorer (every ``EXPLORERS`` registry in a ``clustermath`` module,
plus the chapter-1 debug lab), the script moves each control to N seeded
random positions, one at a time, exactly as a reader dragging a slider would,
and records per update:

* model:  time spent computing the model's outputs (from the explorer's own
  ``timings``; blank where the explorer does not split it),
* redraw: time spent updating the picture (blit and PNG encoding),
* total:  wall time of the whole update, as the reader waits for it.

It prints the median and the worst of each and flags any worst total above
the book's 100 ms budget. It is a report, not a test: timings depend on the
machine and its load.
"""
from __future__ import annotations

import argparse
import importlib
import pkgutil
import random
import statistics
import sys
import time
from typing import Any, Callable

import ipywidgets as W

import clustermath

BUDGET_MS = 100.0


def registries() -> dict[str, Callable[[], Any]]:
    """Every explorer factory in the package, keyed by "module:name"."""
    found: dict[str, Callable[[], Any]] = {}
    for info in pkgutil.iter_modules(clustermath.__path__):
        module = importlib.import_module(f"clustermath.{info.name}")
        for name, factory in getattr(module, "EXPLORERS", {}).items():
            found[f"{info.name}:{name}"] = factory
    views = importlib.import_module("clustermath.views")

    for info in pkgutil.iter_modules(views.__path__):  # each chapter's views (chapter 4 onwards too)
        module = importlib.import_module(f"clustermath.views.{info.name}")
        for name, factory in getattr(module, "EXPLORERS", {}).items():
            found.setdefault(f"views.{info.name}:{name}", factory)
    from clustermath.views.peak import lab_explorer

    found["debug_lab:lab_explorer"] = lab_explorer
    return found


def positions(control: W.ValueWidget, n: int, rng: random.Random) -> list[Any]:
    """N values a reader could give this control."""
    if isinstance(control, (W.Checkbox, W.ToggleButton)):
        return [i % 2 == 0 for i in range(n)]
    if isinstance(control, W.IntSlider):
        return [rng.randrange(control.min, control.max + 1, control.step) for _ in range(n)]
    if isinstance(control, W.FloatSlider):
        steps = int(round((control.max - control.min) / control.step))
        return [control.min + control.step * rng.randint(0, steps) for _ in range(n)]
    return []


def bench(factory: Callable[[], Any], updates: int, seed: int) -> dict[str, list[float]]:
    explorer = factory()
    rng = random.Random(seed)
    controls = list(getattr(explorer, "controls", {}).values()) + [getattr(explorer, "broken", None)]
    totals: list[float] = []
    split: list[tuple[float, float]] = []
    for control in filter(None, controls):
        for value in positions(control, updates, rng):
            before = len(getattr(explorer, "timings", []))
            start = time.perf_counter()
            control.value = value
            elapsed = time.perf_counter() - start
            if getattr(explorer, "timings", None) is not None and len(explorer.timings) > before:
                split.extend(explorer.timings[before:])
            if elapsed > 0:
                totals.append(elapsed)
    return {
        "model": [m * 1000 for m, _ in split],
        "redraw": [r * 1000 for _, r in split],
        "total": [t * 1000 for t in totals],
    }


def fmt(values: list[float]) -> str:
    if not values:
        return f"{'-':>7} {'-':>7}"
    return f"{statistics.median(values):7.1f} {max(values):7.1f}"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--updates", type=int, default=30, help="positions per control (default 30)")
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args(argv)
    print(f"{'explorer':<44} {'model ms':>15} {'redraw ms':>15} {'total ms':>15}   (median, worst)")
    over = []
    for name, factory in registries().items():
        result = bench(factory, args.updates, args.seed)
        worst = max(result["total"], default=0.0)
        flag = "  <-- over budget" if worst > BUDGET_MS else ""
        if flag:
            over.append(name)
        print(f"{name:<44} {fmt(result['model'])} {fmt(result['redraw'])} {fmt(result['total'])}{flag}")
    print(f"\nbudget: {BUDGET_MS:.0f} ms per update; {len(over)} explorer(s) over it" + (f": {', '.join(over)}" if over else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
