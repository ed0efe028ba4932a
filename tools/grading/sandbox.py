"""Pass 2: run one submission under bubblewrap and read back its answers as plain data.

The sandbox (``bwrap``, Debian's ``bubblewrap``) gets:

* every namespace unshared (``--unshare-all``): no network, its own PID
  namespace (nothing inside can see or signal the grader, and everything
  inside dies with it: ``--die-with-parent``), its own IPC and hostname;
* read-only binds of ``/usr`` and of the Python environment (the venv and the
  interpreter it was made from), and of the ``clustermath`` package the
  grader imports; nothing else of the repository (no ``solutions/``, no
  tests, no other submissions, no output folder);
* private tmpfs mounts, size-capped: ``/home/student`` (the working
  directory, holding only the copy of the submission) and ``/tmp``;
* the runner (``runner.py`` and ``plain.py``) and its request, copied in
  from memory: the names and calls the hidden tests need, never a test or an
  expected value.

Limits: address space, file size, processes (RLIMIT_NPROC; as root, bwrap
keeps the user namespace and ``setpriv`` turns the student's code into
``nobody`` without capabilities, because the kernel does not apply that limit
to root), a time budget for the notebook, one per call and one for all calls,
and a cap on what the grader reads back. No file is written outside the
sandbox: the submission and the runner go in through memory file descriptors.
"""
from __future__ import annotations

import json
import os
import pathlib
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

HERE = pathlib.Path(__file__).resolve().parent
NOBODY = 65534
SLOT_UID = 3_900_000_000
"""As root, sandbox ``slot`` runs as uid ``SLOT_UID + slot`` (no such user exists): each sandbox gets
its own RLIMIT_NPROC count, so a fork flood in one cannot starve the one beside it."""
MAX_LINE = 8 << 20
MAX_OUTPUT = 32 << 20
STARTUP_SECONDS = 30.0


@dataclass(frozen=True)
class Limits:
    """What one submission may use."""

    notebook_seconds: float = 120.0
    """Time to run every cell of the notebook."""
    call_seconds: float = 10.0
    """Time for one call of a student's function on a hidden input."""
    calls_seconds: float = 60.0
    """Time for all the calls together."""
    memory_bytes: int = 2 << 30
    file_bytes: int = 32 << 20
    tmpfs_bytes: int = 64 << 20
    processes: int = 256


@dataclass
class Answers:
    """What came back from one sandbox (all of it the student's own data, decoded by the caller)."""

    cells: dict | None = None
    names: dict[str, dict] = field(default_factory=dict)
    calls: dict[int, dict] = field(default_factory=dict)
    finished: bool = False
    problem: str = ""
    """Why the sandbox stopped early ("" when it reported everything)."""
    seconds: float = 0.0


def bwrap_path() -> str | None:
    return shutil.which("bwrap")


_PROBE: dict[bool, str] = {}


def unavailable_reason() -> str:
    """"" when bubblewrap can run a sandbox here, else why not."""
    if True in _PROBE:
        return _PROBE[True]
    path = bwrap_path()
    if _privileged() and not os.path.exists("/usr/bin/setpriv"):
        reason = ("running as root, the sandbox needs /usr/bin/setpriv (util-linux) to drop to an "
                  "unprivileged user")
    elif path is None:
        reason = ("bubblewrap (bwrap) is not installed: install it with `apt-get install bubblewrap` "
                  "(Debian/Ubuntu) or your distribution's package")
    else:
        try:
            done = subprocess.run([path, *_namespaces(), "--die-with-parent", "--ro-bind", "/", "/",
                                   "--proc", "/proc", "--dev", "/dev", *_as_nobody(), "true"],
                                  capture_output=True, text=True, timeout=30)
            reason = "" if done.returncode == 0 else (
                "bubblewrap is installed but cannot create a sandbox here (unprivileged user "
                f"namespaces disabled?): {done.stderr.strip()[:200]}")
        except (OSError, subprocess.SubprocessError) as exc:
            reason = f"bubblewrap failed to start: {exc}"
    _PROBE[True] = reason
    return reason


def _own_tasks() -> int:
    """Threads currently running under this user id (RLIMIT_NPROC counts them all)."""
    uid, count = os.getuid(), 0
    for entry in pathlib.Path("/proc").glob("[0-9]*"):
        try:
            if entry.stat().st_uid == uid:
                count += len(os.listdir(entry / "task"))
        except OSError:
            continue
    return count


def python_roots() -> list[str]:
    """The folders the interpreter needs outside /usr: the venv and the Python it was made from."""
    roots = []
    for raw in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
                os.path.dirname(os.path.dirname(os.path.realpath(sys.executable)))):
        path = os.path.realpath(raw)
        if path.startswith("/usr/") or path == "/usr":
            continue
        if not any(path == r or path.startswith(r + "/") for r in roots):
            roots = [r for r in roots if not r.startswith(path + "/")] + [path]
    return roots


def python_executable() -> str:
    """This interpreter under the venv's real folder (the sandbox sees real paths only)."""
    return os.path.join(os.path.realpath(sys.prefix), "bin", os.path.basename(sys.executable))


def _memfd(name: str, data: bytes) -> int:
    fd = os.memfd_create(name, 0)
    view, written = memoryview(data), 0
    while written < len(data):
        written += os.write(fd, view[written:])
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _request(notebook_path: str, names: list[str], calls: list, limits: Limits, processes: int) -> bytes:
    return json.dumps({
        "notebook": notebook_path, "names": names, "calls": calls,
        "notebook_seconds": limits.notebook_seconds, "call_seconds": limits.call_seconds,
        "calls_seconds": limits.calls_seconds,
        "limits": {"memory_bytes": limits.memory_bytes, "file_bytes": limits.file_bytes,
                   "processes": processes},
    }).encode()


ENV = {
    "PATH": "/usr/bin:/bin", "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1",
    "MPLBACKEND": "Agg", "MPLCONFIGDIR": "/tmp/matplotlib", "IPYTHONDIR": "/tmp/ipython",
    "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
    "LANG": "C.UTF-8",
}


def _privileged() -> bool:
    return os.geteuid() == 0


def _namespaces() -> list[str]:
    """As root: every namespace but the user one, so that ``setpriv`` can become nobody (see below)."""
    if _privileged():
        return ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
                "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    return ["--unshare-all"]


def _as_nobody(slot: int | None = None) -> list[str]:
    """As root, run the student's code as an unprivileged uid without capabilities.

    RLIMIT_NPROC does not bind root, and counts every process of a uid: one
    uid per sandbox slot keeps the limit per sandbox.
    """
    if _privileged():
        uid = NOBODY if slot is None else SLOT_UID + slot
        return ["/usr/bin/setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
                "--bounding-set=-all", "--inh-caps=-all", "--no-new-privs"]
    return []


def _ro_binds(binds: list[tuple[str, str]], made: set[str]) -> list[str]:
    """Read-only binds, with world-readable parent folders (bwrap makes them 0700 when run as root);
    ``made``: folders that already exist in the sandbox."""
    cmd, made = [], set(made)
    for source, dest in binds:
        parents = list(pathlib.PurePosixPath(dest).parents)[::-1]
        for parent in map(str, parents):
            if parent not in made:
                cmd += ["--perms", "0755", "--dir", parent]
                made.add(parent)
        cmd += ["--ro-bind", source, dest]
        made.add(dest)
    return cmd


def _bwrap_command(package: pathlib.Path, notebook_name: str, limits: Limits, fds: dict[str, int],
                   slot: int) -> list[str]:
    cmd = [bwrap_path() or "bwrap", *_namespaces(), "--die-with-parent", "--new-session", "--as-pid-1",
           "--ro-bind", "/usr", "/usr"]
    for top in ("bin", "lib", "lib64", "sbin", "lib32"):
        path = pathlib.Path("/") / top
        if path.is_symlink():
            cmd += ["--symlink", os.readlink(path), f"/{top}"]
        elif path.is_dir():
            cmd += ["--ro-bind", str(path), f"/{top}"]
    # The private tmpfs folders come first and the read-only binds after them, so that a venv or a
    # checkout that lives under /tmp or /home (a CI clone in /tmp, say) is bound on top of the tmpfs
    # instead of being hidden by it.
    cmd += ["--proc", "/proc", "--dev", "/dev",
            "--perms", "1777", "--size", str(limits.tmpfs_bytes), "--tmpfs", "/tmp",
            "--perms", "1777", "--size", str(limits.tmpfs_bytes), "--tmpfs", "/home/student"]
    cmd += _ro_binds([(root, root) for root in python_roots()]
                     + [(str(package), "/grading/lib/clustermath")],
                     made={"/", "/usr", "/tmp", "/home", "/home/student"})
    cmd += ["--perms", "0644", "--ro-bind-data", str(fds["runner"]), "/grading/runner.py",
            "--perms", "0644", "--ro-bind-data", str(fds["plain"]), "/grading/plain.py",
            "--perms", "0644", "--ro-bind-data", str(fds["request"]), "/grading/request.json",
            "--perms", "0644", "--file", str(fds["notebook"]), f"/home/student/{notebook_name}",
            "--chdir", "/home/student", "--clearenv",
            "--setenv", "HOME", "/home/student", "--setenv", "PYTHONPATH", "/grading/lib"]
    for key, value in ENV.items():
        cmd += ["--setenv", key, value]
    cmd += [*_as_nobody(slot), python_executable(), "-B", "/grading/runner.py"]
    return cmd


def run(notebook: bytes, notebook_name: str, names: list[str], calls: list, limits: Limits,
        package: pathlib.Path, *, sandbox: bool = True, slot: int = 0) -> Answers:
    """Run one submission; ``sandbox=False`` runs the same runner without isolation (``--no-sandbox``)."""
    if "/" in notebook_name or notebook_name.startswith("."):
        raise ValueError(f"notebook_name must be a plain file name, got {notebook_name!r}")
    fds: dict[str, int] = {}
    bind_fds: dict[str, int] = {}
    scratch = None
    processes = limits.processes if os.geteuid() == 0 else _own_tasks() + limits.processes
    try:
        if sandbox:
            request = _request(f"/home/student/{notebook_name}", names, calls, limits, processes)
            fds = {"runner": _memfd("runner", (HERE / "runner.py").read_bytes()),
                   "plain": _memfd("plain", (HERE / "plain.py").read_bytes()),
                   "request": _memfd("request", request),
                   "notebook": _memfd("notebook", notebook)}
            cmd = _bwrap_command(package, notebook_name, limits, fds, slot)
            env = {"PATH": "/usr/bin:/bin"}
            extra = {}
            cwd = "/"
        else:
            scratch = pathlib.Path(tempfile.mkdtemp(prefix="grading-nosandbox-"))
            (scratch / "grading").mkdir()
            for name in ("runner.py", "plain.py"):
                text = (HERE / name).read_text().replace('"/grading', f'"{scratch}/grading')
                (scratch / "grading" / name).write_text(text)
            (scratch / "home").mkdir()
            (scratch / "home" / notebook_name).write_bytes(notebook)
            (scratch / "grading" / "request.json").write_bytes(
                _request(str(scratch / "home" / notebook_name), names, calls, limits, processes))
            cmd = [sys.executable, "-B", str(scratch / "grading" / "runner.py")]
            env = dict(ENV, HOME=str(scratch / "home"), MPLCONFIGDIR=str(scratch / "mpl"),
                       IPYTHONDIR=str(scratch / "ipython"),
                       PYTHONPATH=str(package.parent), PATH=os.environ.get("PATH", "/usr/bin:/bin"))
            extra, cwd = {}, str(scratch / "home")
        return _collect(cmd, env, cwd, list(fds.values()) + list(bind_fds.values()), extra, names,
                        calls, limits)
    finally:
        for fd in list(fds.values()) + list(bind_fds.values()):
            os.close(fd)
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)


def _collect(cmd, env, cwd, pass_fds, extra, names, calls, limits: Limits) -> Answers:
    answers = Answers()
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=None if os.environ.get("GRADING_DEBUG") else subprocess.DEVNULL, env=env, cwd=cwd, pass_fds=pass_fds,
                            start_new_session=True, close_fds=True, **extra)
    selector = selectors.DefaultSelector()
    selector.register(proc.stdout, selectors.EVENT_READ)
    os.set_blocking(proc.stdout.fileno(), False)
    buffer, total = b"", 0
    deadline = start + STARTUP_SECONDS + limits.notebook_seconds
    end_of_all = deadline + limits.call_seconds * (len(names) + 1) + limits.calls_seconds + 10
    try:
        while True:
            now = time.monotonic()
            wait = min(deadline, end_of_all) - now
            if wait <= 0:
                answers.problem = "timeout"
                break
            if not selector.select(timeout=min(wait, 1.0)):
                continue
            chunk = os.read(proc.stdout.fileno(), 1 << 16)
            if not chunk:
                answers.problem = "" if answers.finished else "crashed"
                break
            total += len(chunk)
            if total > MAX_OUTPUT:
                answers.problem = "output-too-large"
                break
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            if len(buffer) > MAX_LINE:
                answers.problem = "output-too-large"
                break
            for line in lines:
                try:
                    record = json.loads(line)
                except (ValueError, RecursionError):
                    continue
                if not isinstance(record, dict):
                    continue
                event = record.get("event")
                if event == "cells" and answers.cells is None:
                    answers.cells = record
                elif event == "name" and isinstance(record.get("name"), str) and record["name"] in names:
                    answers.names.setdefault(record["name"], record)
                elif event == "call" and type(record.get("index")) is int and 0 <= record["index"] < len(calls):
                    answers.calls.setdefault(record["index"], record)
                elif event == "done":
                    answers.finished = True
                # every further report must come within one call's time
                if answers.cells is not None:
                    deadline = time.monotonic() + limits.call_seconds + 10
            if answers.finished:
                break
    finally:
        selector.close()
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        proc.kill()
        proc.wait()
        proc.stdout.close()
        answers.seconds = time.monotonic() - start
    return answers
