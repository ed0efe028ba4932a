"""Report how long every explorer in the book takes to recompute and redraw.

Usage: python tools/bench_widgets.py [--updates N] [--seed S]      (or: make bench)

For each explorer (every ``EXPLORERS`` registry in a ``clustermath`` module
or in ``clustermath.views``, plus the chapter-1 debug lab), the script moves
each control to N seeded random positions, one at a time, exactly as a
reader dragging a slider would, and records per update, in wall-clock time
and in this process's CPU time:

* model:  computing the model's outputs and the table (the explorer's own
  ``timings`` / ``cpu_timings``; blank where the explorer does not split it),
* draw:   updating the picture (blit and PNG encoding),
* total:  the whole update, as the reader waits for it.

It prints the median and the 95th percentile of each and judges the
explorer on the p95 of its total wall time against the book's 100 ms
budget; the CPU columns tell a slow explorer from a loaded machine (on a
busy shared machine wall time exceeds CPU time). A single worst sample
says more about the machine's load than about the explorer, so it is not
the verdict. The script is a report, not a test.
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
    import clustermath.views as views

    modules = [f"clustermath.{i.name}" for i in pkgutil.iter_modules(clustermath.__path__)]
    modules += [f"clustermath.views.{i.name}" for i in pkgutil.iter_modules(views.__path__)]
    for name in modules:
        module = importlib.import_module(name)
        for key, factory in getattr(module, "EXPLORERS", {}).items():
            found[f"{name.rpartition('.')[2]}:{key}"] = factory
    from clustermath.views.peak import lab_explorer

    found["peak:lab_explorer"] = lab_explorer
    return found


def ring_builder_speedup(repeats: int = 5) -> str:
    """Chapter 5's vectorised ring builder against the plain-loop reference kept in its tests."""
    import importlib.util
    from pathlib import Path

    from clustermath.scaleup.ring_builder import draw_failures, ring_draws

    path = Path(__file__).resolve().parent.parent / "tests" / "test_scaleup_ring.py"
    spec = importlib.util.spec_from_file_location("ring_reference", path)
    reference = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(reference)  # type: ignore[union-attr]
    failed = draw_failures(0.0117, 720, 200, 0)
    timed = {}
    for name, fn in (("vectorised", lambda: ring_draws(failed, 4, 32, 3)),
                     ("loop", lambda: reference.reference_ring_draws(failed, 4, 32, 3))):
        runs = []
        for _ in range(repeats):
            start = time.perf_counter()
            fn()
            runs.append(time.perf_counter() - start)
        timed[name] = statistics.median(runs) * 1000
    return (f"ring builder, 200 draws x 720 nodes: vectorised {timed['vectorised']:.1f} ms, "
            f"loop reference {timed['loop']:.0f} ms, speed-up {timed['loop'] / timed['vectorised']:.0f}x")


def positions(control: W.ValueWidget, n: int, rng: random.Random) -> list[Any]:
    """N values a reader could give this control."""
    if isinstance(control, (W.Checkbox, W.ToggleButton)):
        return [i % 2 == 0 for i in range(n)]
    if isinstance(control, (W.SelectionSlider, W.Dropdown)):
        values = [value for _, value in control.options] if isinstance(control.options[0], tuple) \
            else list(control.options)
        return [rng.choice(values) for _ in range(n)]
    if isinstance(control, W.IntSlider):
        return [rng.randrange(control.min, control.max + 1, control.step) for _ in range(n)]
    if isinstance(control, W.FloatSlider):
        steps = int(round((control.max - control.min) / control.step))
        return [control.min + control.step * rng.randint(0, steps) for _ in range(n)]
    return []


def bench(factory: Callable[[], Any], updates: int, seed: int) -> dict[str, list[float]]:
    """Per-update samples, in ms: model and draw (wall and CPU), and the total (wall and CPU)."""
    explorer = factory()
    rng = random.Random(seed)
    controls = list(getattr(explorer, "controls", {}).values()) + [getattr(explorer, "broken", None)]
    out: dict[str, list[float]] = {k: [] for k in ("model", "draw", "model cpu", "draw cpu", "total", "total cpu")}
    wall = getattr(explorer, "timings", None)
    cpu = getattr(explorer, "cpu_timings", None)
    for control in filter(None, controls):
        for value in positions(control, updates, rng):
            before = len(wall) if wall is not None else 0
            before_cpu = len(cpu) if cpu is not None else 0
            start, start_cpu = time.perf_counter(), time.process_time()
            control.value = value
            elapsed, elapsed_cpu = time.perf_counter() - start, time.process_time() - start_cpu
            if wall is not None and len(wall) > before:
                out["model"] += [m * 1000 for m, _ in wall[before:]]
                out["draw"] += [d * 1000 for _, d in wall[before:]]
            if cpu is not None and len(cpu) > before_cpu:
                out["model cpu"] += [m * 1000 for m, _ in cpu[before_cpu:]]
                out["draw cpu"] += [d * 1000 for _, d in cpu[before_cpu:]]
            redrew = wall is None or len(wall) > before  # the same value again is no update: not a sample
            if redrew and elapsed > 0:
                out["total"].append(elapsed * 1000)
                out["total cpu"].append(elapsed_cpu * 1000)
    return out


def p95(values: list[float]) -> float:
    """The 95th percentile (nearest rank above, so one outlier in 30 samples does not decide it)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


def fmt(values: list[float]) -> str:
    if not values:
        return f"{'-':>6} {'-':>6}"
    return f"{statistics.median(values):6.1f} {p95(values):6.1f}"


COLUMNS = ("model", "model cpu", "draw", "draw cpu", "total", "total cpu")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--updates", type=int, default=30, help="positions per control (default 30)")
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args(argv)
    print(f"{'explorer':<30}" + "".join(f" {c + ' ms':>13}" for c in COLUMNS) + "   (median, p95)")
    over = []
    for name, factory in registries().items():
        result = bench(factory, args.updates, args.seed)
        judged = p95(result["total"]) if result["total"] else 0.0
        flag = "  <-- p95 over budget" if judged > BUDGET_MS else ""
        if flag:
            over.append(name)
        print(f"{name:<30}" + "".join(f" {fmt(result[c])}" for c in COLUMNS) + flag)
    print(ring_builder_speedup())
    print(f"\nbudget: p95 of the total wall time under {BUDGET_MS:.0f} ms per update; "
          f"{len(over)} explorer(s) over it" + (f": {', '.join(over)}" if over else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
