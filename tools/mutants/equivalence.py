"""Check REPORT.md's equivalence claims: run each listed mutant beside the original.

A mutant listed as equivalent is set aside by the runner, so a wrong claim hides a
real gap in the tests. This module puts every claim to the test instead of taking
it on trust:

1. **Inputs.** The tests that cover the module run once in the mutants folder with
   a small pytest plugin that records every call reaching each listed function
   (the arguments, deep-copied; at most ``MAX_RECORDED`` distinct calls each).
2. **Edge values.** From each recorded call, every argument in turn is replaced by
   edge values: zero and negative zero, one, minus one, the numbers the function's
   own source names (its bounds and defaults) with their neighbours, very large and
   very small floats, infinities, NaN, booleans, integers where a float came and
   floats where an integer came, numpy scalars, a Decimal; a keyword argument is
   also left out, so the function's own default is used; pairs of arguments take
   the extremes together; small whole numbers fill a grid of all numeric
   arguments; a frozen dataclass receiver has its fields varied the same way.
3. **Side by side.** Each input runs through the original and through the mutant
   (mutmut's trampoline switches between them), and the two outcomes are compared:
   the value (dataclasses field by field, arrays with their dtype, floats bit for
   bit with NaN equal to NaN) or the exception: its type, and its message too when
   it is one the book raises on purpose (``ValueError``, ``CheckFailed``). A call that
   runs out of time or memory on either side is left out, not counted as a match.

A listed mutant whose outcome differs from the original's on any input is not
equivalent: the run fails and prints the call. The check runs inside
``tools/mutants/run.py`` after mutmut (``make mutants``) and alone with
``run.py --check-equivalents``.

Usage (normally through run.py)::

    python tools/mutants/equivalence.py record WORK TESTS... --targets JSON --out FILE
    python tools/mutants/equivalence.py compare WORK --inputs FILE --mutants JSON --out FILE
"""
from __future__ import annotations

import argparse
import ast
import copy
import dataclasses
import decimal
import importlib
import inspect
import itertools
import json
import math
import os
import pickle
import re
import resource
import signal
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

MAX_RECORDED = 40
"""Distinct recorded calls kept per function (the first ones the tests make)."""
MAX_INPUTS = 4000
"""Inputs per function: recorded calls are taken as bases for edge values (calls whose argument
types differ first) until the variants reach this many."""
CALL_SECONDS = 0.5
"""A call that takes longer is left out (on either side)."""
FUNCTION_SECONDS = 30.0
"""Time for the original's outcomes of one function, over all its inputs."""
MEMORY_BYTES = 6 * 2**30
"""Address-space limit of the comparing process: a huge input raises MemoryError instead of
taking the machine's memory."""

SEP = "ǁ"


# -------------------------------------------------------------------------- names

def split_mutant(name: str) -> tuple[str, str]:
    """``clustermath.peak.budget.x_peak_to_delivered__mutmut_52`` -> (module, ``x_peak_to_delivered``)."""
    mangled_full = name.partition("__mutmut_")[0]
    module, _, mangled = mangled_full.rpartition(".")
    return module, mangled


def dict_name(mangled: str) -> str:
    return f"mutants_{mangled}__mutmut"


def public_callable(module: Any, mangled: str) -> tuple[Any, str | None]:
    """The trampoline callers use, and the class name for a method."""
    if mangled.startswith("x_"):
        return getattr(module, mangled[2:]), None
    _, cls, meth = mangled.split(SEP)
    klass = getattr(module, cls)
    return inspect.getattr_static(klass, meth), cls


# -------------------------------------------------------------------------- recording

RECORDER = '''
"""pytest plugin written by tools/mutants/equivalence.py: records the calls reaching listed functions."""
import copy, importlib, json, os, pickle

import _equiv_support  # noqa: F401  (lets pickle take the mapping proxies of frozen records)

_TARGETS = json.loads(os.environ["EQUIV_TARGETS"])
_OUT = os.environ["EQUIV_OUT"]
_MAX = int(os.environ.get("EQUIV_MAX", "40"))
_SEEN = {}


def _recorder(key, orig):
    def record(*args, **kwargs):
        calls = _SEEN.setdefault(key, {})
        if len(calls) < _MAX:
            try:
                blob = pickle.dumps((copy.deepcopy(args), copy.deepcopy(kwargs)))
            except Exception:
                blob = None
            if blob is not None:
                calls.setdefault(blob, None)
        return orig(*args, **kwargs)
    return record


def pytest_configure(config):
    for module, mangled in _TARGETS:
        mod = importlib.import_module(module)
        table = getattr(mod, "mutants_" + mangled + "__mutmut")
        table["_mutmut_orig"] = _recorder(module + "." + mangled, table["_mutmut_orig"])


def pytest_unconfigure(config):
    with open(_OUT, "wb") as fh:
        pickle.dump({k: list(v) for k, v in _SEEN.items()}, fh)
'''


SUPPORT = '''
"""Written by tools/mutants/equivalence.py: pickling for the mapping proxies frozen records hold."""
import copyreg
import types


def mappingproxy(items):
    return types.MappingProxyType(items)


copyreg.pickle(types.MappingProxyType, lambda m: (mappingproxy, (dict(m),)))
'''


# -------------------------------------------------------------------------- edge values

BIG, TINY = 1e300, 1e-300
FLOAT_EDGES = (0.0, -0.0, 1.0, -1.0, 0.5, 2.0, TINY, 5e-324, BIG, sys.float_info.max,
               math.inf, -math.inf, math.nan)
INT_EDGES = (0, 1, -1, 2, 3, 2**31, 2**53 + 1, 2**63)
EXTREMES = (0, TINY, BIG, math.inf, sys.float_info.max)
GRID = (0, 1, 2)


def source_numbers(func: Any) -> list[float]:
    """The numeric constants written in a function's source (bounds, defaults, factors)."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(func)))
    except (OSError, TypeError, SyntaxError):
        return []
    found = {n.value for n in ast.walk(tree)
             if isinstance(n, ast.Constant) and isinstance(n.value, (int, float))
             and not isinstance(n.value, bool)}
    return sorted(found, key=lambda v: (abs(v), v))[:40]


def numeric(value: Any) -> bool:
    import numpy as np
    return (isinstance(value, (int, float, np.integer, np.floating))
            and not isinstance(value, (bool, np.bool_)))


def edges_for(value: Any, constants: list[float], seen_strings: list[str]) -> list[Any]:
    """The values that replace one argument of a recorded call."""
    import numpy as np
    out: list[Any] = []
    if isinstance(value, (bool, np.bool_)):
        out += [not bool(value), 0, 1, None, np.True_, np.False_]
    elif numeric(value):
        x = float(value)
        out += list(FLOAT_EDGES) + list(INT_EDGES)
        if math.isfinite(x):
            out += [x + 1, x - 1, math.nextafter(x, math.inf), math.nextafter(x, -math.inf),
                    np.float64(x), decimal.Decimal(repr(x)), -x]
            if x == int(x) and abs(x) < 2**62:
                out += [int(x), np.int64(int(x)), float(x), int(x) + 1, int(x) - 1]
        for c in constants:
            out += [c, c + 1, c - 1, math.nextafter(float(c), math.inf), math.nextafter(float(c), -math.inf)]
        out += [decimal.Decimal("Infinity"), True, False, None, "1"]
    elif isinstance(value, str):
        out += ["", value.upper(), value + " ", *seen_strings, None, 0]
    elif value is None:
        out += [0, 1, 0.0, -1, math.inf, "", False]
    elif isinstance(value, (tuple, list)):
        out += [type(value)(), type(value)(value[:1])] if value else [(0,), (1,)]
    return out


def variants(args: tuple, kwargs: dict, constants: list[float],
             strings: dict[Any, list[str]], defaults: set[str]) -> list[tuple[tuple, dict]]:
    """Recorded call -> calls with one argument, a pair, or a grid of arguments replaced."""
    slots: list[tuple[Any, Any]] = [(i, a) for i, a in enumerate(args)] + list(kwargs.items())
    out: list[tuple[tuple, dict]] = []

    def with_(changes: dict[Any, Any]) -> tuple[tuple, dict]:
        a, k = list(args), dict(kwargs)
        for slot, v in changes.items():
            if isinstance(slot, int):
                a[slot] = v
            else:
                k[slot] = v
        return tuple(a), k

    for name in kwargs.keys() & defaults:  # the callee's own default instead (a mutated default shows here)
        out.append((tuple(args), {k: v for k, v in kwargs.items() if k != name}))
    for slot, value in slots:
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            for f in dataclasses.fields(value):
                for e in edges_for(getattr(value, f.name), constants, strings.get(f.name, [])):
                    try:
                        out.append(with_({slot: dataclasses.replace(value, **{f.name: e})}))
                    except Exception:  # noqa: BLE001  (a field the dataclass checks)
                        pass
            continue
        for e in edges_for(value, constants, strings.get(slot, [])):
            out.append(with_({slot: e}))
    nums = [s for s, v in slots if numeric(v)]
    for s1, s2 in itertools.combinations(nums, 2):
        for e1, e2 in itertools.product(EXTREMES, repeat=2):
            out.append(with_({s1: e1, s2: e2}))
    if 0 < len(nums) <= 6:
        for combo in itertools.product(GRID, repeat=len(nums)):
            out.append(with_(dict(zip(nums, combo))))
    return out


def by_novelty(calls: list[tuple[tuple, dict]]) -> list[tuple[tuple, dict]]:
    """Recorded calls reordered so that each new kind of call (its arguments' types) comes first."""
    groups: dict[tuple, list] = {}
    for args, kwargs in calls:
        kind = (tuple(type(a).__name__ for a in args), tuple(sorted((k, type(v).__name__) for k, v in kwargs.items())))
        groups.setdefault(kind, []).append((args, kwargs))
    out = []
    for batch in itertools.zip_longest(*groups.values()):
        out += [c for c in batch if c is not None]
    return out


# -------------------------------------------------------------------------- outcomes

class _Timeout(BaseException):
    pass


_armed = False
"""True while a call is timed: an alarm that arrives after its call was disarmed is ignored."""


def _alarm(signum, frame):  # noqa: ARG001
    if _armed:
        raise _Timeout


ADDRESS = re.compile(r"0x[0-9a-fA-F]{6,16}")
MANGLED = re.compile(r"x(?:_|ǁ\w+ǁ)(\w+?)__mutmut_(?:orig|\d+)")
"""mutmut's names for the original and the mutant (in a TypeError's message, say): both read as the function's."""


def clean(message: str) -> str:
    return MANGLED.sub(r"\1", ADDRESS.sub("0x", message))


def normal(value: Any, depth: int = 0) -> Any:
    """A comparable, hashable image of a result: exact for numbers, NaN equal to NaN."""
    import numpy as np
    if depth > 12:
        return ("deep",)
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return (type(value).__name__, value)
    if isinstance(value, int):
        return ("int", value)
    if isinstance(value, float):
        return ("float", "nan" if math.isnan(value) else value.hex())
    if isinstance(value, np.generic):
        return ("np", str(value.dtype), normal(value.item(), depth + 1))
    if isinstance(value, np.ndarray):
        return ("array", str(value.dtype), value.shape, normal(value.tolist(), depth + 1))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return (type(value).__name__,
                tuple((f.name, normal(getattr(value, f.name), depth + 1)) for f in dataclasses.fields(value)))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(normal(v, depth + 1) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple(sorted(((repr(k), normal(v, depth + 1)) for k, v in value.items()),
                                     key=lambda kv: kv[0])))
    if hasattr(value, "to_html") and callable(value.to_html):
        return (type(value).__name__, ADDRESS.sub("0x", value.to_html()))
    if hasattr(value, "to_csv") and callable(value.to_csv):
        return (type(value).__name__, value.to_csv())
    if isinstance(value, (set, frozenset)):
        return ("set", tuple(sorted(repr(normal(v, depth + 1)) for v in value)))
    return (type(value).__name__, ADDRESS.sub("0x", repr(value)))


def outcome(func: Any, args: tuple, kwargs: dict) -> tuple:
    """("value", image) or ("raise", type, message), or ("skip", why) when time or memory ran out."""
    global _armed
    a, k = copy.deepcopy(args), copy.deepcopy(kwargs)
    try:
        _armed = True
        signal.setitimer(signal.ITIMER_REAL, CALL_SECONDS)
        try:
            value = func(*a, **k)
            image = normal(value)
        finally:  # an alarm due just now may still land here: the outer handler counts it as time
            _armed = False
            signal.setitimer(signal.ITIMER_REAL, 0)
    except _Timeout:
        return ("skip", "time")
    except MemoryError:
        return ("skip", "memory")
    except RecursionError:
        return ("skip", "recursion")
    except Exception as exc:  # noqa: BLE001  (an exception is an outcome to compare)
        return ("raise", type(exc).__name__, clean(str(exc)))
    return ("value", image)


OWN_ERRORS = ("ValueError", "CheckFailed")
"""Exceptions the book raises on purpose, with messages its tests pin: their words must match too.
Other exceptions (a TypeError from inside Python) must only be of the same type."""


def same(a: tuple, b: tuple) -> bool:
    """Whether two outcomes are the same to a caller (see ``OWN_ERRORS``)."""
    if a[0] == b[0] == "raise" and a[1] == b[1] and a[1] not in OWN_ERRORS:
        return True
    return a == b


def show_call(name: str, args: tuple, kwargs: dict) -> str:
    parts = [repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()]
    text = f"{name}({', '.join(parts)})"
    return text if len(text) < 400 else text[:400] + " …)"


def show_outcome(o: tuple) -> str:
    if o[0] == "raise":
        return f"raises {o[1]}: {o[2]}"
    text = repr(o[1])
    return "returns " + (text if len(text) < 300 else text[:300] + " …")


def compare(mutants: list[str], recorded: dict[str, list[bytes]]) -> dict[str, dict]:
    """Each mutant's verdict: ``{"inputs": n, "differs": None or {call, original, mutant}}``."""
    from mutmut.mutation.trampoline import set_mutant_under_test

    import _equiv_support  # noqa: F401  (written beside the mutants by the record step)

    signal.signal(signal.SIGALRM, _alarm)
    try:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
    except (ValueError, OSError):
        pass
    by_function: dict[tuple[str, str], list[str]] = {}
    for name in mutants:
        by_function.setdefault(split_mutant(name), []).append(name)
    verdicts: dict[str, dict] = {}
    for (module_name, mangled), names in by_function.items():
        module = importlib.import_module(module_name)
        func, cls = public_callable(module, mangled)
        if isinstance(func, property):
            func = func.fget
        table = getattr(module, dict_name(mangled))
        constants = sorted(set().union(*(source_numbers(table[n.rpartition(".")[2]]) for n in names),
                                       source_numbers(table["_mutmut_orig"])), key=lambda v: (abs(v), v))[:40]
        calls = [pickle.loads(b) for b in recorded.get(f"{module_name}.{mangled}", [])]
        if not calls:
            for name in names:
                verdicts[name] = {"inputs": 0, "differs": None, "note": "no test reaches the function"}
            continue
        strings: dict[Any, list[str]] = {}
        for args, kwargs in calls:
            for slot, v in list(enumerate(args)) + list(kwargs.items()):
                if isinstance(v, str) and v not in strings.setdefault(slot, []):
                    strings[slot].append(v)
        try:
            defaults = {n for n, p in inspect.signature(func).parameters.items()
                        if p.default is not inspect.Parameter.empty}
        except (TypeError, ValueError):
            defaults = set()
        inputs = list(calls)
        for args, kwargs in by_novelty(calls):
            if len(inputs) >= MAX_INPUTS:
                break
            inputs += variants(args, kwargs, constants, strings, defaults)
        seen, unique = set(), []
        for args, kwargs in inputs:
            try:
                key = pickle.dumps((args, kwargs))
            except Exception:  # noqa: BLE001
                key = repr((args, kwargs)).encode()
            if key not in seen:
                seen.add(key)
                unique.append((args, kwargs))
        label = f"{module_name}.{cls + '.' if cls else ''}{mangled.rpartition(SEP)[2] if cls else mangled[2:]}"
        set_mutant_under_test("")
        originals, start = [], time.monotonic()
        for args, kwargs in unique:
            if time.monotonic() - start > FUNCTION_SECONDS:
                break
            originals.append(outcome(func, args, kwargs))
        for name in names:
            set_mutant_under_test(name)
            checked, differs = 0, None
            for (args, kwargs), orig in zip(unique, originals):
                if orig[0] == "skip":
                    continue
                got = outcome(func, args, kwargs)
                if got[0] == "skip":
                    continue
                checked += 1
                if not same(orig, got):
                    differs = {"call": show_call(label, args, kwargs),
                               "original": show_outcome(orig), "mutant": show_outcome(got)}
                    break
            verdicts[name] = {"inputs": checked, "differs": differs}
            set_mutant_under_test("")
    return verdicts


# -------------------------------------------------------------------------- command line

def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    rec = sub.add_parser("record")
    rec.add_argument("work")
    rec.add_argument("tests", nargs="+")
    rec.add_argument("--targets", required=True)
    rec.add_argument("--out", required=True)
    cmp_ = sub.add_parser("compare")
    cmp_.add_argument("work")
    cmp_.add_argument("--inputs", required=True)
    cmp_.add_argument("--mutants", required=True)
    cmp_.add_argument("--out", required=True)
    args = parser.parse_args()
    work = Path(args.work)
    if args.cmd == "record":
        plugin = work / "mutants" / "_equiv_recorder.py"
        plugin.write_text(RECORDER)
        (work / "mutants" / "_equiv_support.py").write_text(SUPPORT)
        env = dict(os.environ, EQUIV_TARGETS=args.targets, EQUIV_OUT=str(Path(args.out).resolve()),
                   EQUIV_MAX=str(MAX_RECORDED), PYTHONPATH=f"{work / 'mutants' / 'src'}{os.pathsep}{work / 'mutants'}",
                   MUTANT_UNDER_TEST="")
        import subprocess
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "_equiv_recorder", "-p", "no:cacheprovider",
                               "-k", "not explorer and not wheel", "-x", *args.tests], cwd=work / "mutants", env=env,
                              capture_output=True, text=True)
        plugin.unlink()
        if done.returncode != 0:
            print(done.stdout[-3000:], done.stderr[-3000:], sep="\n")
            return done.returncode
        return 0
    sys.path.insert(0, str(work / "mutants" / "src"))
    sys.path.insert(0, str(work / "mutants"))
    os.chdir(work / "mutants")
    recorded = pickle.loads(Path(args.inputs).read_bytes())
    verdicts = compare(json.loads(args.mutants), recorded)
    Path(args.out).write_text(json.dumps(verdicts, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
