"""Inside the sandbox: run one student notebook, then report its answers as plain data.

Started by ``tools/grading/sandbox.py`` under bubblewrap, with this file and
``plain.py`` in ``/grading`` and the request in ``/grading/request.json``:
the notebook's path, the names the hidden tests read, the calls they make
(function name and plain-data arguments), limits and time budgets. Nothing
expected ever comes in. It writes JSON lines to its original standard output
(the student's own prints go to /dev/null):

    {"event": "cells", "errors": [...], "stopped": "" | reason, "seconds": s}
    {"event": "name", "name": n, "defined": bool, "callable": bool, "value": ...}
    {"event": "call", "index": i, "value": ...} | {"event": "call", "index": i, "error": "...", "etype": "..."}
                                                | {"event": "call", "index": i, "timeout": s}
    {"event": "done"}

Everything in here runs next to the student's code, so the grader trusts none
of it beyond "these are the student's own values": a notebook that forges
these lines only forges its own answers.
"""
import json
import os
import resource
import signal
import sys
import time

sys.path.insert(0, "/grading")
import plain  # noqa: E402

REQUEST = json.load(open("/grading/request.json"))


class TimeUp(BaseException):
    """Raised by the interval timer when a cell or a call runs out of time."""


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
    etype = type(exc).__name__
    try:
        text = str(exc)
    except BaseException:  # noqa: BLE001
        text = ""
    return etype[:80], text[:300]


def _timer(seconds: float) -> None:
    signal.setitimer(signal.ITIMER_REAL, max(seconds, 0.001))


def _stop_timer() -> None:
    signal.setitimer(signal.ITIMER_REAL, 0)


class _Grader:
    """Stands in for ``otter.Notebook``: the grade is decided outside, so checks do nothing here."""

    def __getattr__(self, name):
        return lambda *args, **kwargs: None


def _is_plumbing(source: str) -> bool:
    return source.startswith("# Initialize Otter") or source.strip().startswith("grader.check(")


def run_cells(shell, cells: list[str], budget: float) -> dict:
    errors, stopped, start = [], "", time.monotonic()
    for index, source in cells:
        left = budget - (time.monotonic() - start)
        if left <= 0:
            stopped = f"the notebook ran out of its {budget:g} s before cell {index}"
            break
        try:
            _timer(left)
            result = shell.run_cell(source, store_history=False, silent=True)
        except TimeUp:
            result = None
            stopped = f"the notebook ran out of its {budget:g} s in cell {index}"
        finally:
            _stop_timer()
        error = result and (result.error_before_exec or result.error_in_exec)
        if isinstance(error, TimeUp):
            stopped = f"the notebook ran out of its {budget:g} s in cell {index}"
        elif error is not None and error is not False:
            etype, text = _error_text(error)
            errors.append(f"cell {index}: {etype}: {text[:120]}")
        if stopped:
            break
    return {"errors": errors[:50], "stopped": stopped, "seconds": round(time.monotonic() - start, 2)}


def main() -> int:
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
        if source.strip() and not _is_plumbing(source):
            cells.append((index, source))

    from traitlets.config import Config
    from IPython.core.interactiveshell import InteractiveShell

    config = Config()
    config.HistoryManager.enabled = False
    shell = InteractiveShell.instance(config=config)
    shell.user_ns["grader"] = _Grader()
    report = run_cells(shell, cells, REQUEST["notebook_seconds"])
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

    budget_end = time.monotonic() + REQUEST["calls_seconds"]
    timeouts: dict[str, int] = {}
    for index, (name, args, kwargs) in enumerate(REQUEST["calls"]):
        record = {"event": "call", "index": index}
        left = min(call_seconds, budget_end - time.monotonic())
        if timeouts.get(name, 0) >= 2 or left <= 0:
            record["timeout"] = 0  # not run: this function already timed out twice, or time is up
            _emit(out, record)
            continue
        function = ns.get(name)
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
        _emit(out, record)
    _emit(out, {"event": "done"})
    out.close()
    os._exit(0)


if __name__ == "__main__":
    main()
