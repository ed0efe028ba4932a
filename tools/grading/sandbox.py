"""Pass 2: run one submission under bubblewrap and bring back the lines it reported.

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
  expected value; the hidden *inputs* do go in (the student's function must
  be called with them, and feedback quotes them anyway);
* a seccomp filter (``seccomp.py``) that refuses the kernel state the
  namespaces above leave shared between sandboxes (the keyring, asynchronous
  I/O and io_uring, page-cache advice and probes, ``RWF_NOWAIT``, file
  watches and locks), new namespaces and mounts, ``bpf``,
  ``perf_event_open``, ``userfaultfd`` and ``ptrace``;
* ``/proc/sys`` hidden (an empty folder: its machine-wide counters, such as
  ``fs/aio-nr``, were a channel between neighbours), the large trees the
  runner never loads (``HIDDEN``: a browser and its driver, other toolchains)
  covered by empty folders, and every other file of ``/usr`` over 16 MB that
  it never loads (``large_files``: node, GPU drivers, LLVM) replaced by
  ``/dev/null``, so that no sandbox can warm their pages for another; the
  interpreter's test suite and static libraries (``python_extras``) likewise;
* as root, a user id of its own (``--reuid``: fresh for every sandbox, no
  capabilities), so nothing the kernel keeps per user carries over either;
* a cgroup of its own (``confine.py``): one CPU quota, one memory ceiling
  (in-memory files and tmpfs included) and one task ceiling for everything
  it starts; when it ends, the pages charged to it leave the page cache
  (``memory.force_empty``), so that no later sandbox can time which pages it
  read.

Limits also set per process: address space, file size, processes
(RLIMIT_NPROC), open files. Time: a budget for the notebook, one per call,
and one for everything (``Limits.total_seconds``), enforced inside by the
runner's timers and outside by this module, which stops reading and kills
the group when a budget is spent. Where no cgroup can be made, the runner's
limits are CPU time with the clock as a backstop (``time_mode``), so a
neighbour that takes the CPU cannot make honest work time out; isolation
between submissions is weaker then, and the grader says so.

This module never parses what comes back: it keeps the raw lines (at most
``MAX_OUTPUT`` bytes, ``max_lines`` lines), and the verdict worker
(``judge.py``) decodes them under a time limit.
"""
from __future__ import annotations

import json
import os
import pathlib
import random
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import confine  # noqa: E402
import seccomp  # noqa: E402

NOBODY = 65534
SLOT_UID = 3_900_000_000
"""As root, every sandbox runs as a fresh uid in [SLOT_UID, SLOT_UID + 2**28) (no such user exists)."""
HIDDEN = ("/usr/lib/chromium", "/usr/lib/jvm", "/usr/lib/llvm-14", "/usr/lib/gcc", "/usr/lib/google-cloud-sdk",
          "/usr/lib/node_modules", "/usr/share/nodejs", "/usr/lib/firefox", "/usr/lib/firefox-esr")
"""Folders of /usr the runner never loads, covered inside the sandbox (those that exist here)."""
LARGE_FILE = 16 << 20
"""Files of /usr at least this large that the runner never loads are covered one by one (``large_files``)."""
_UNUSED_LIBRARIES = ("libLLVM", "libclang", "libz3", "libnv", "libcu", "libmozjs", "libwebkit", "libQt")
"""Shared libraries among those large files that no notebook's Python loads (any other ``.so`` stays)."""
HIDDEN_PACKAGES = ("playwright", "selenium", "jupyterlab", "notebook", "voila", "pyodide")
"""Packages of the Python environment the runner never imports (the browser driver is 150 MB)."""
MAX_LINE = 8 << 20
MAX_OUTPUT = 32 << 20
STARTUP_SECONDS = 30.0
GRACE_SECONDS = 3.0
"""How long after a budget ends the grader waits for the runner to report that it ended."""


@dataclass(frozen=True)
class Limits:
    """What one submission may use."""

    notebook_seconds: float = 60.0
    """Time to run every cell of the notebook."""
    call_seconds: float = 10.0
    """Time for one call of a student's function on a hidden input."""
    total_seconds: float = 120.0
    """Time for everything one submission does: start, cells, names and calls."""
    memory_bytes: int = 2 << 30
    """Memory of the whole sandbox (every process, in-memory files and tmpfs)."""
    file_bytes: int = 32 << 20
    tmpfs_bytes: int = 64 << 20
    processes: int = 256
    cpus: float = 1.0
    """CPU quota of one sandbox, in CPUs."""


@dataclass
class Run:
    """What came back from one sandbox: raw lines, none of them parsed here."""

    lines: list[bytes] = field(default_factory=list)
    finished: bool = False
    """A line announcing the end was seen (the notebook could forge it: then it only cut itself short)."""
    problem: str = ""
    """Why the sandbox stopped early ("" when it reported everything)."""
    seconds: float = 0.0
    peak_memory: int | None = None
    """The most memory the sandbox's cgroup held at once (bytes), where known."""
    confined: bool = False


def bwrap_path() -> str | None:
    return shutil.which("bwrap")


_PROBE: dict[bool, str] = {}


def _sysctl(name: str) -> str | None:
    try:
        return pathlib.Path("/proc/sys", *name.split(".")).read_text().strip()
    except OSError:
        return None


def _container_sign() -> str:
    for path in ("/.dockerenv", "/run/.containerenv"):
        if os.path.exists(path):
            return f"{path} exists"
    try:
        text = pathlib.Path("/proc/1/cgroup").read_text()
    except OSError:
        return ""
    return next((f"/proc/1/cgroup mentions {word}" for word in ("docker", "kubepods", "lxc") if word in text), "")


def sandbox_fixes(message: str = "") -> str:
    """What to do when bubblewrap is installed but cannot make a sandbox: the usual causes, each with its
    fix; the causes this machine shows signs of come first, with the sign."""
    restrict = _sysctl("kernel.apparmor_restrict_unprivileged_userns")
    clone = _sysctl("kernel.unprivileged_userns_clone")
    most = _sysctl("user.max_user_namespaces")
    apparmor = [f"kernel.apparmor_restrict_unprivileged_userns = {restrict}"] if restrict == "1" else []
    if "setting up uid map" in message or "RTM_NEWADDR" in message:
        apparmor.append("bwrap's message is the one this restriction gives")
    switched_off = [f"{name} = 0" for name, value in (("kernel.unprivileged_userns_clone", clone),
                                                      ("user.max_user_namespaces", most)) if value == "0"]
    if "No permissions to creat" in message:
        switched_off.append("bwrap's message is the one this setting gives")
    container = [sign] if (sign := _container_sign()) else []
    causes = [
        (apparmor,
         "Ubuntu 23.10 and later (24.04 too, and GitHub's ubuntu-latest runners) let only programs with an "
         "AppArmor profile create user namespaces (kernel.apparmor_restrict_unprivileged_userns = 1). "
         "Load Ubuntu's profile for bwrap:\n"
         "      sudo apt-get install apparmor-profiles\n"
         "      sudo install -m 0644 /usr/share/apparmor/extra-profiles/bwrap-userns-restrict /etc/apparmor.d/\n"
         "      sudo apparmor_parser -r /etc/apparmor.d/bwrap-userns-restrict\n"
         "    or lift the restriction for every program (simpler, weaker):\n"
         "      sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0"),
        (switched_off,
         "unprivileged user namespaces are switched off. Switch them on:\n"
         "      sudo sysctl -w kernel.unprivileged_userns_clone=1    (Debian and Ubuntu kernels that have it)\n"
         "      sudo sysctl -w user.max_user_namespaces=15000        (where it is 0: RHEL, hardened hosts)"),
        (container,
         "inside a container (Docker, Podman, Kubernetes) the runtime's seccomp and AppArmor profiles "
         "forbid new namespaces. Grade on the host, or start the container with\n"
         "      --security-opt seccomp=unconfined --security-opt apparmor=unconfined\n"
         "    (or --privileged) and grade as root inside it"),
    ]
    causes.sort(key=lambda c: not c[0])
    lines = ["Common causes, and their fixes (those this machine shows signs of first):"]
    for signs, text in causes:
        lines.append(f"  - {text}" + (f"\n    Seen here: {'; '.join(signs)}." if signs else ""))
    lines.append("Check the fix with: bwrap --unshare-all --ro-bind / / true   (silence means it works)")
    return "\n".join(lines)


def unavailable_reason() -> str:
    """"" when bubblewrap can run a sandbox here, else why not and how to fix it."""
    if True in _PROBE:
        return _PROBE[True]
    path = bwrap_path()
    if _privileged() and not os.path.exists("/usr/bin/setpriv"):
        reason = ("running as root, the sandbox needs /usr/bin/setpriv (util-linux) to drop to an "
                  "unprivileged user: install util-linux")
    elif path is None:
        reason = ("bubblewrap (bwrap) is not installed: install it with `sudo apt-get install bubblewrap` "
                  "(Debian, Ubuntu) or `sudo dnf install bubblewrap` (Fedora)")
    else:
        try:
            done = subprocess.run([path, *_namespaces(), "--die-with-parent", "--ro-bind", "/", "/",
                                   "--proc", "/proc", "--dev", "/dev", *_as_nobody(), "true"],
                                  capture_output=True, text=True, timeout=30)
            reason = "" if done.returncode == 0 else (
                f"bubblewrap is installed ({path}) but cannot create a sandbox here; it says:\n"
                f"  {done.stderr.strip()[:300] or f'(nothing; exit status {done.returncode})'}\n"
                + sandbox_fixes(done.stderr))
        except (OSError, subprocess.SubprocessError) as exc:
            reason = f"bubblewrap ({path}) failed to start: {exc}"
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


@dataclass(frozen=True)
class Timing:
    """How the runner measures its limits (see ``runner.py``)."""

    mode: str = "wall"
    """"wall" with a CPU share of its own (cgroups), "cpu" without one."""
    wall_factor: float = 1.0
    """Clock time allowed per second of limit: more than 1 when a sandbox gets less than one CPU, or as
    the backstop of CPU-time limits."""


def timing_for(cgroups: confine.Cgroups, cpus: float) -> Timing:
    if cgroups.version:
        return Timing("wall", max(1.0, 1.0 / cpus))
    return Timing("cpu", 3.0)


def _request(notebook_path: str, names: list[str], calls: list, limits: Limits, processes: int,
             timing: Timing, end: float, watch: list[str], sandboxed: bool = True) -> bytes:
    return json.dumps({
        "notebook": notebook_path, "names": names, "calls": calls, "sandboxed": sandboxed,
        "notebook_seconds": limits.notebook_seconds, "call_seconds": limits.call_seconds,
        "total_seconds": max(1.0, end - time.monotonic()), "time_mode": timing.mode,
        "wall_factor": timing.wall_factor, "watch": watch,
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


def fresh_uid() -> int:
    return SLOT_UID + random.SystemRandom().randrange(1 << 28)


def _as_nobody(uid: int | None = None) -> list[str]:
    """As root, run the student's code as an unprivileged uid without capabilities (a fresh one per
    sandbox: RLIMIT_NPROC and everything else the kernel keeps per user start from nothing)."""
    if _privileged():
        uid = NOBODY if uid is None else uid
        return ["/usr/bin/setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
                "--bounding-set=-all", "--inh-caps=-all", "--no-new-privs"]
    return []


def hidden_folders() -> list[str]:
    """The folders covered inside the sandbox: ``HIDDEN`` and the packages of ``HIDDEN_PACKAGES`` found in
    the interpreter's environments (only those that exist, by their real paths)."""
    found = [p for p in HIDDEN if os.path.isdir(p) and not os.path.islink(p)]
    import sysconfig

    try:  # the grader's own package, where the environment holds it (a non-editable install): the
        # sandbox gets only the copy bound at /grading/lib (see boundary.py)
        import clustermath

        own = os.path.realpath(os.path.dirname(clustermath.__file__))
        if any(own.startswith(root + "/") for root in python_roots()):
            found.append(own)
    except ImportError:
        pass

    for key in ("purelib", "platlib"):
        site = os.path.realpath(sysconfig.get_paths()[key])
        for name in HIDDEN_PACKAGES:
            path = os.path.join(site, name)
            if os.path.isdir(path) and not os.path.islink(path) and path not in found:
                found.append(path)
    return found


_EXTRAS: list[tuple[list[str], list[str]]] = []


def python_extras() -> tuple[list[str], list[str]]:
    """(folders, files) of the Python installations bound into the sandbox that the runner never loads:
    the interpreter's test suite (``lib/python3.*/test``, 123 MB here), its static libraries
    (``libpython*.a``, 44 MB) and, under a virtual environment that does not use them, the base
    interpreter's own site-packages (scipy's 25 MB OpenBLAS here), by their real paths, those that exist. Nothing else reads them, so a
    notebook could read one byte of a page of them per bit of its answers and a later one time the reads
    (issue 44): inside the sandbox the folders are empty and the files are /dev/null."""
    if _EXTRAS:
        return _EXTRAS[0]
    import glob
    import sysconfig

    folders, files = [], []
    on_path = {os.path.realpath(p) for p in sys.path if p}
    for key in ("purelib", "platlib"):  # the base interpreter's packages, where the venv does not use them
        site = os.path.realpath(sysconfig.get_path(key, vars={"base": sys.base_prefix,
                                                              "platbase": sys.base_exec_prefix}))
        if site not in on_path and os.path.isdir(site) and site not in folders and \
                not any(p.startswith(site + "/") for p in on_path):
            folders.append(site)
    for root in [*python_roots(), "/usr"]:
        for path in sorted(glob.glob(os.path.join(root, "lib", "python3*", "test"))):
            real = os.path.realpath(path)
            if os.path.isdir(real) and real == path and real not in folders:
                folders.append(real)
        for pattern in (("lib", "python3*", "config-*", "libpython*.a"), ("lib", "libpython*.a"),
                        ("lib", "*-linux-gnu", "libpython*.a")):
            for path in sorted(glob.glob(os.path.join(root, *pattern))):
                if os.path.isfile(path) and not os.path.islink(path) and path not in files:
                    files.append(path)
    _EXTRAS.append((folders, files))
    return folders, files


_LARGE: list[tuple[str, ...]] = []


def large_files() -> tuple[str, ...]:
    """Regular files of /usr of ``LARGE_FILE`` bytes or more that the runner does not load: programs and
    data (node, a browser's data, package lists) and the shared libraries of ``_UNUSED_LIBRARIES`` or of
    GPU drivers; found once per process by a walk without recursion, outside the ``HIDDEN`` folders.
    Inside the sandbox each one is /dev/null."""
    if _LARGE:
        return _LARGE[0]
    hidden = tuple(p + "/" for p in HIDDEN)
    found, stack = [], ["/usr"]
    while stack:
        folder = stack.pop()
        if (folder + "/").startswith(hidden):
            continue
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                    continue
                if not entry.is_file(follow_symlinks=False) or \
                        entry.stat(follow_symlinks=False).st_size < LARGE_FILE:
                    continue
            except OSError:
                continue
            library = ".so" in entry.name
            if library and not (entry.name.startswith(_UNUSED_LIBRARIES) or "/dri/" in entry.path):
                continue
            found.append(entry.path)
    _LARGE.append(tuple(sorted(found)))
    return _LARGE[0]


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
                   uid: int | None) -> list[str]:
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
    cmd += ["--perms", "0555", "--tmpfs", "/proc/sys", "--remount-ro", "/proc/sys"]
    extra_folders, extra_files = python_extras()
    for folder in hidden_folders() + extra_folders:
        cmd += ["--perms", "0555", "--tmpfs", folder, "--remount-ro", folder]
    for path in sorted(set(large_files()) | set(extra_files)):
        cmd += ["--ro-bind", "/dev/null", path]
    cmd += ["--perms", "0644", "--ro-bind-data", str(fds["runner"]), "/grading/runner.py",
            "--perms", "0644", "--ro-bind-data", str(fds["plain"]), "/grading/plain.py",
            "--perms", "0644", "--ro-bind-data", str(fds["request"]), "/grading/request.json",
            "--perms", "0644", "--file", str(fds["notebook"]), f"/home/student/{notebook_name}",
            "--chdir", "/home/student", "--clearenv",
            "--setenv", "HOME", "/home/student", "--setenv", "PYTHONPATH", "/grading/lib"]
    if "seccomp" in fds:
        cmd += ["--seccomp", str(fds["seccomp"])]
    for key, value in ENV.items():
        cmd += ["--setenv", key, value]
    cmd += [*_as_nobody(uid), python_executable(), "-B", "/grading/runner.py"]
    return cmd


def run(notebook: bytes, notebook_name: str, names: list[str], calls: list, limits: Limits,
        package: pathlib.Path, *, sandbox: bool = True, watch: list[str] | None = None,
        cgroups: confine.Cgroups | None = None) -> Run:
    """Run one submission; ``sandbox=False`` runs the same runner without bubblewrap (``--no-sandbox``)."""
    if "/" in notebook_name or notebook_name.startswith("."):
        raise ValueError(f"notebook_name must be a plain file name, got {notebook_name!r}")
    cgroups = cgroups if cgroups is not None else confine.detect()
    timing = timing_for(cgroups, limits.cpus)
    start = time.monotonic()
    end = start + limits.total_seconds * timing.wall_factor
    fds: dict[str, int] = {}
    scratch = None
    processes = limits.processes if os.geteuid() == 0 else _own_tasks() + limits.processes
    box = cgroups.box(confine.Quota(limits.cpus, limits.memory_bytes, limits.processes))
    try:
        if sandbox:
            request = _request(f"/home/student/{notebook_name}", names, calls, limits, processes, timing,
                               end - GRACE_SECONDS, watch or [])
            fds = {"runner": _memfd("runner", (HERE / "runner.py").read_bytes()),
                   "plain": _memfd("plain", (HERE / "plain.py").read_bytes()),
                   "request": _memfd("request", request),
                   "notebook": _memfd("notebook", notebook)}
            program = seccomp.sandbox_filter()
            if program is not None:
                fds["seccomp"] = _memfd("seccomp", program)
            cmd = _bwrap_command(package, notebook_name, limits, fds, fresh_uid())
            env = {"PATH": "/usr/bin:/bin"}
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
                _request(str(scratch / "home" / notebook_name), names, calls, limits, processes, timing,
                         end - GRACE_SECONDS, watch or [], sandboxed=False))
            cmd = [sys.executable, "-B", str(scratch / "grading" / "runner.py")]
            env = dict(ENV, HOME=str(scratch / "home"), MPLCONFIGDIR=str(scratch / "mpl"),
                       IPYTHONDIR=str(scratch / "ipython"),
                       PYTHONPATH=str(package.parent), PATH=os.environ.get("PATH", "/usr/bin:/bin"))
            cwd = str(scratch / "home")
        result = _collect(box.command(cmd), env, cwd, list(fds.values()), limits, timing,
                          max_lines=len(names) + len(calls) + 8, start=start, end=end)
    finally:
        peak = box.peak_memory()
        box.close()
        for fd in fds.values():
            os.close(fd)
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    result.confined, result.peak_memory = bool(box.groups), peak
    return result


def _children(pid: int) -> list[int]:
    found = []
    for task in pathlib.Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(p) for p in (task / "children").read_text().split()]
        except (OSError, ValueError):
            continue
    return found


def _end(bwrap: int) -> None:
    """Kill the sandbox's first process (PID 1 of its namespace: the kernel then kills every process of
    the namespace), then bubblewrap and its process group. Killing bubblewrap alone is not enough: the
    runner's parent-death signal does not survive its change of uid, nor a notebook that clears it."""
    for pid in _children(bwrap):
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    try:
        os.killpg(bwrap, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _collect(cmd, env, cwd, pass_fds, limits: Limits, timing: Timing, *, max_lines: int, start: float,
             end: float) -> Run:
    """Read the runner's lines until it is done, a budget is spent, or it writes more than allowed.

    Deadlines: the first report (the cells) within the start-up allowance plus
    the notebook's budget; every further report within one call's budget; all
    of it by ``end``. A line is only looked at by its first bytes ("done"
    ends the reading, "cells" starts the per-report clock); blank lines are
    dropped and count towards ``max_lines``.
    """
    result = Run()
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=None if os.environ.get("GRADING_DEBUG") else subprocess.DEVNULL,
                            env=env, cwd=cwd, pass_fds=pass_fds, start_new_session=True, close_fds=True)
    selector = selectors.DefaultSelector()
    selector.register(proc.stdout, selectors.EVENT_READ)
    os.set_blocking(proc.stdout.fileno(), False)
    pending, total, count, reporting = bytearray(), 0, 0, False
    per_report = limits.call_seconds * timing.wall_factor + GRACE_SECONDS
    deadline = min(start + STARTUP_SECONDS + limits.notebook_seconds * timing.wall_factor + GRACE_SECONDS, end)
    try:
        while True:
            wait = deadline - time.monotonic()
            if wait <= 0:
                result.problem = "timeout"
                break
            if not selector.select(timeout=min(wait, 1.0)):
                continue
            chunk = os.read(proc.stdout.fileno(), 1 << 16)
            if not chunk:
                result.problem = "" if result.finished else "crashed"
                break
            total += len(chunk)
            count += chunk.count(b"\n")
            if total > MAX_OUTPUT or count > max_lines:
                result.problem = "output-too-large"
                break
            pending += chunk
            if b"\n" not in chunk:
                if len(pending) > MAX_LINE:
                    result.problem = "output-too-large"
                    break
                continue
            *lines, rest = bytes(pending).split(b"\n")
            pending = bytearray(rest)
            for line in lines:
                if not line.strip():
                    continue
                if len(line) > MAX_LINE:
                    result.problem = "output-too-large"
                    break
                result.lines.append(line)
                if line.startswith(b'{"event":"done"'):
                    result.finished = True
                reporting = reporting or line.startswith(b'{"event":"cells"')
                if reporting:  # the cells are done: every further report within one call's time
                    deadline = min(time.monotonic() + per_report, end)
            if result.problem or result.finished:
                break
    finally:
        selector.close()
        if result.finished:  # the runner is ending by itself: let bubblewrap reap it and exit
            try:
                proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                pass
        if proc.poll() is None:
            _end(proc.pid)
        proc.kill()
        proc.wait()
        proc.stdout.close()
        result.seconds = time.monotonic() - start
    return result
