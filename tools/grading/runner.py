"""Inside the sandbox: run one student notebook, then report its answers as plain data.

Started by ``tools/grading/sandbox.py`` under bubblewrap, with this file and
``plain.py`` in ``/grading`` and the request in ``/grading/request.json``:
the notebook's path, the names the hidden tests read, the calls they make
(function name and plain-data arguments), limits and time budgets, and the
``clustermath`` modules to watch. Nothing expected ever comes in. It writes
JSON lines to its original standard output (the student's own prints go to
/dev/null):

    {"event": "cells", "errors": [...], "stopped": "" | reason, "seconds": s, "models": {cell: [...]}}
    {"event": "name", "name": n, "defined": bool, "callable": bool, "value": ...}
    {"event": "call", "index": i, "value": ..., "models": [...]}
        | {"event": "call", "index": i, "error": "...", "etype": "..."} | {"event": "call", "index": i, "timeout": s}
    {"event": "done"}

Every code cell runs as the student left it: ``import otter`` finds a stand-in
whose ``Notebook`` does nothing, so otter's set-up cell, imports added to it,
and answers typed under a ``grader.check`` line all run.

Time: ``time_mode`` "wall" (the sandbox has its own CPU share, see
``confine.py``) limits each cell and call by the clock; "cpu" (no cgroup: a
neighbour may slow this sandbox down) limits them by this process's CPU time,
with the clock as a backstop at ``wall_factor`` times the limit. Everything,
the names and calls included, must end within ``total_seconds``.

Everything in here runs next to the student's code, so the grader trusts none
of it beyond "these are the student's own values": a notebook that forges
these lines only forges its own answers. The grader parses them in a worker
process under a time limit and item caps.
"""
import functools
import json
import os
import resource
import signal
import sys
import time
import types

START = time.monotonic()
sys.path.insert(0, "/grading")
import plain  # noqa: E402

REQUEST = json.load(open("/grading/request.json"))
CPU = REQUEST.get("time_mode") == "cpu"
WALL_FACTOR = float(REQUEST.get("wall_factor", 1.0))
END = START + float(REQUEST["total_seconds"])
MAX_CELL_CHARS = 200_000
"""Largest code cell the runner runs (the book's largest has 4,315 characters). A larger cell is not
compiled: it is reported as a cell that raised. Compiling a 5 MB cell of ``a,a,a,...`` takes more than a
sandbox's 2 GB and its whole time (issue 44)."""
_TYPE_NAME = type.__dict__["__name__"]
_ARGS = BaseException.__dict__["args"]


class TimeUp(BaseException):
    """Raised by the interval timers when a cell or a call runs out of time."""


def _alarm(signum, frame):
    raise TimeUp()


def _limits() -> None:
    lim = REQUEST["limits"]
    for name, value in (("RLIMIT_AS", lim["memory_bytes"]), ("RLIMIT_FSIZE", lim["file_bytes"]),
                        ("RLIMIT_NPROC", lim["processes"]), ("RLIMIT_CORE", 0),
                        ("RLIMIT_NOFILE", 256)):
        try:
            resource.setrlimit(getattr(resource, name), (value, value))
        except (ValueError, OSError):
            soft, hard = resource.getrlimit(getattr(resource, name))
            resource.setrlimit(getattr(resource, name), (min(value, hard), hard))


def _emit(out, record: dict) -> None:
    out.write(json.dumps(record, separators=(",", ":")) + "\n")
    out.flush()


def _error_text(exc: BaseException) -> tuple[str, str]:
    """The exception's type name and its string arguments, read without running the student's code."""
    try:
        etype = str.__str__(_TYPE_NAME.__get__(type(exc)))
    except Exception:  # noqa: BLE001
        etype = "Exception"
    try:
        text = ", ".join(str.__str__(a) for a in tuple.__iter__(_ARGS.__get__(exc)) if issubclass(type(a), str))
    except Exception:  # noqa: BLE001
        text = ""
    return etype[:80], text[:300]


def _timer(limit: float, wall: float | None = None) -> None:
    """Arm the timers for a cell or a call: ``limit`` seconds of CPU time ("cpu" mode) or of the clock
    ("wall"), and the clock's allowance ``wall`` (``limit`` times ``WALL_FACTOR`` unless given), never
    past ``END``. The handlers are set again each time: the student's code may have moved them."""
    wall = limit * WALL_FACTOR if wall is None else wall
    signal.signal(signal.SIGALRM, _alarm)
    if CPU:
        signal.signal(signal.SIGPROF, _alarm)
        signal.setitimer(signal.ITIMER_PROF, max(limit, 0.001))
    signal.setitimer(signal.ITIMER_REAL, max(min(wall, END - time.monotonic()), 0.001))


def _stop_timer() -> None:
    signal.setitimer(signal.ITIMER_REAL, 0)
    if CPU:
        signal.setitimer(signal.ITIMER_PROF, 0)


class _Grader:
    """Stands in for ``otter.Notebook``: the grade is decided outside, so checks do nothing here."""

    def __init__(self, *args, **kwargs):
        pass

    def __getattr__(self, name):
        return lambda *args, **kwargs: None


def _only_checks(source: str) -> bool:
    """A cell of ``grader.check(...)`` lines only: nothing to run (the stand-in would do nothing)."""
    lines = [line.strip() for line in source.splitlines() if line.strip() and not line.strip().startswith("#")]
    return all(line.startswith("grader.check(") and line.endswith(")") and line.count("(") == 1
               for line in lines)


def _otter_stand_in() -> None:
    """``import otter`` gives a module whose ``Notebook`` does nothing (otter itself never loads)."""
    otter = types.ModuleType("otter")
    otter.Notebook = _Grader
    sys.modules["otter"] = otter


# ---------------------------------------------------------------- the book's models, watched

USED: set = set()


def _watched(name: str, prefixes: list[str]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def _wrap(module, prefixes: list[str]) -> None:
    """Replace every function defined in ``module`` by one that notes its call (no ``__wrapped__``)."""
    for attr, value in list(vars(module).items()):
        if type(value) is not types.FunctionType or not _watched(value.__module__ or "", prefixes):
            continue
        setattr(module, attr, _noting(value, f"{value.__module__}.{value.__qualname__}"))


def _noting(function, label: str):
    def call(*args, **kwargs):
        USED.add(label)
        return function(*args, **kwargs)

    functools.update_wrapper(call, function)
    del call.__wrapped__
    return call


class _Watch:
    """An import hook: once a module under one of the watched ``clustermath`` prefixes has run, its
    functions are wrapped, so every name later imported from it (the package's re-exports included,
    which are bound after the module ran) notes each call. Nothing is imported that the notebook
    does not import itself."""

    def __init__(self, prefixes: list[str]) -> None:
        self.prefixes = prefixes

    def find_spec(self, name, path=None, target=None):
        if not _watched(name, self.prefixes):
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        else:
            return None
        loader, prefixes = spec.loader, self.prefixes
        if loader is not None and hasattr(loader, "exec_module"):
            run = loader.exec_module

            def exec_module(module):
                run(module)
                _wrap(module, prefixes)

            loader.exec_module = exec_module
        return spec


def _watch(prefixes: list[str]) -> None:
    """Note which functions of the ``clustermath`` modules under ``prefixes`` the notebook calls: the
    exercises that want the student's own code name these modules, and the report says which of
    their functions each cell and each call used."""
    if prefixes:
        sys.meta_path.insert(0, _Watch(prefixes))


def _used() -> list[str]:
    found = sorted(USED)[:50]
    USED.clear()
    return found


# ---------------------------------------------------------------- cells, names, calls

def run_cells(shell, cells: list, budget: float) -> dict:
    errors, stopped, start, models = [], "", time.monotonic(), {}
    cpu = time.process_time()
    for index, source in cells:
        wall_left = min(budget * WALL_FACTOR - (time.monotonic() - start), END - time.monotonic())
        left = budget - (time.process_time() - cpu) if CPU else wall_left / WALL_FACTOR
        if left <= 0 or wall_left <= 0:
            stopped = f"the notebook ran out of its {budget:g} s before cell {index}"
            break
        result = None
        if len(source) > MAX_CELL_CHARS:
            errors.append(f"cell {index}: CellTooLarge: {len(source):,} characters, over the "
                          f"{MAX_CELL_CHARS:,} a cell may have: not run")
            continue
        try:
            _timer(left, wall_left)
            result = shell.run_cell(source, store_history=False, silent=True)
        except TimeUp:
            stopped = f"the notebook ran out of its {budget:g} s in cell {index}"
        finally:
            _stop_timer()
        used = _used()
        if used:
            models[str(index)] = used
        error = result and (result.error_before_exec or result.error_in_exec)
        if isinstance(error, TimeUp):
            stopped = f"the notebook ran out of its {budget:g} s in cell {index}"
        elif error is not None and error is not False:
            etype, text = _error_text(error)
            errors.append(f"cell {index}: {etype}: {text[:120]}")
        if stopped:
            break
    return {"errors": errors[:50], "stopped": stopped, "seconds": round(time.monotonic() - start, 2),
            "models": models}


def _end_the_cells_processes() -> None:
    """Inside the sandbox the runner is PID 1 of its namespace: once the cells are done, end every
    process they left (a busy one would only slow the names and calls down). Never outside a sandbox."""
    if os.getpid() == 1 and REQUEST.get("sandboxed"):
        try:
            os.kill(-1, signal.SIGKILL)
        except OSError:
            pass


def _die_with_the_sandbox() -> None:
    """Ask the kernel to kill this process when its parent (bubblewrap) dies: the one bubblewrap set
    was cleared when ``setpriv`` changed the uid."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except Exception:  # noqa: BLE001
        pass


def main() -> int:
    if REQUEST.get("sandboxed"):
        _die_with_the_sandbox()
    _limits()
    out = os.fdopen(os.dup(1), "w")
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    signal.signal(signal.SIGALRM, _alarm)

    with open(REQUEST["notebook"], encoding="utf-8") as handle:
        nb = json.load(handle)
    cells = []
    for index, cell in enumerate(nb.get("cells", [])):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else str(source)
        if source.strip() and not _only_checks(source):
            cells.append((index, source))

    from traitlets.config import Config
    from IPython.core.interactiveshell import InteractiveShell

    _otter_stand_in()
    _watch(REQUEST.get("watch", []))
    config = Config()
    config.HistoryManager.enabled = False
    shell = InteractiveShell.instance(config=config)
    shell.user_ns["grader"] = _Grader()
    report = run_cells(shell, cells, REQUEST["notebook_seconds"])
    _end_the_cells_processes()
    _emit(out, {"event": "cells", **report})

    ns = shell.user_ns
    call_seconds = REQUEST["call_seconds"]
    for name in REQUEST["names"]:
        record = {"event": "name", "name": name, "defined": name in ns, "callable": False}
        if name in ns:
            try:
                _timer(call_seconds)
                value = ns[name]
                record["callable"] = bool(callable(value))
                if not record["callable"]:
                    record["value"] = plain.encode(value)
            except TimeUp:
                record["value"] = {"$": "opaque", "type": "timeout", "repr": "took too long to read"}
            except BaseException as exc:  # noqa: BLE001
                record["value"] = {"$": "opaque", "type": "error", "repr": "%s: %s" % _error_text(exc)}
            finally:
                _stop_timer()
        _emit(out, record)

    timeouts: dict[str, int] = {}
    for index, (name, args, kwargs, *_) in enumerate(REQUEST["calls"]):
        record = {"event": "call", "index": index}
        left = min(call_seconds, (END - time.monotonic()) / WALL_FACTOR)
        if timeouts.get(name, 0) >= 2 or left <= 0:
            record["timeout"] = 0  # not run: this function already timed out twice, or time is up
            _emit(out, record)
            continue
        function = ns.get(name)
        _used()
        try:
            _timer(left)
            if not callable(function):
                raise TypeError(f"{name} is not a function")
            value = function(*plain.decode(args), **plain.decode(kwargs))
            record["value"] = plain.encode(value)
        except TimeUp:
            record.pop("value", None)
            record["timeout"] = round(left, 1)
            timeouts[name] = timeouts.get(name, 0) + 1
        except BaseException as exc:  # noqa: BLE001  (SystemExit and KeyboardInterrupt too)
            record.pop("value", None)
            record["etype"], record["error"] = _error_text(exc)
        finally:
            _stop_timer()
        used = _used()
        if used:
            record["models"] = used
        _emit(out, record)
    _emit(out, {"event": "done"})
    out.close()
    os._exit(0)


if __name__ == "__main__":
    main()
