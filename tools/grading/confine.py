"""Confine a whole sandbox with cgroups: a CPU quota, memory (in-memory files and tmpfs included) and tasks.

Limits set per process (``setrlimit``) do not add up: 200 processes each
under a CPU-time limit still take every core, and pages written into a
memfd or a tmpfs belong to no process at all. A cgroup holds everything a
sandbox starts, and the kernel charges it for all of it:

* ``cpu``: a quota of CPU time per period (``cpu.cfs_quota_us`` in v1,
  ``cpu.max`` in v2), so a submission that forks busy processes shares one
  quota among them, and the submission graded beside it keeps its own;
* ``memory``: a ceiling on every page charged to the group, tmpfs and memfd
  pages included (``memory.limit_in_bytes`` / ``memory.max``; swap is
  capped too); past it the kernel's OOM killer picks a process of this
  group, never one of the host's;
* ``pids``: a ceiling on the tasks the group may hold (``pids.max``).

Two layouts are supported:

* **cgroup v1** (this book's CI machine: root, controllers mounted under
  ``/sys/fs/cgroup/<controller>``): one child group per sandbox under the
  grader's own group in each of the three hierarchies;
* **cgroup v2** (systemd hosts such as GitHub's Ubuntu runners): one child
  per sandbox under the grader's own group, once the grader can write there
  and the three controllers can be enabled for its children (root, or a
  delegated group such as ``systemd-run --user --scope -p Delegate=yes``).
  If the grader's group also holds other processes, the grader first moves
  itself into a leaf of its own, as the kernel's "no internal processes"
  rule requires.

Where neither works (a normal user without delegation), ``detect`` says why
and the grader judges time limits on the sandbox's CPU time instead, and says
that isolation between submissions is weaker.

A sandbox is started through ``Box.command``: a tiny ``/bin/sh`` wrapper
that writes its own pid into the group and then ``exec``s bubblewrap, so
nothing the sandbox starts is ever outside it. ``Box.close`` kills whatever
is left in the group, drops the pages charged to it from the page cache
(``empty_page_cache``: v1 ``memory.force_empty``, v2 ``memory.reclaim``), and
removes it.
"""
from __future__ import annotations

import errno
import itertools
import os
import pathlib
import signal
import threading
import time
from dataclasses import dataclass

CONTROLLERS = ("cpu", "memory", "pids")
PREFIX = "grading-"
_COUNTER = itertools.count()
_ENTER = 'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 125; shift; n=$((n-1)); done; exec "$@"'
"""sh -c script: join the groups named by the first n arguments, then become the command that follows."""


@dataclass(frozen=True)
class Quota:
    """What one sandbox's group may use."""

    cpus: float = 1.0
    memory_bytes: int = 2 << 30
    tasks: int = 256


def _mounts() -> list[tuple[str, str, str, str]]:
    """(mount point, root of the mount, filesystem type, super options) of every cgroup mount."""
    found = []
    try:
        lines = pathlib.Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return found
    for line in lines:
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) >= 5 and tail and tail[0] in ("cgroup", "cgroup2"):
            found.append((fields[4].replace("\\040", " "), fields[3], tail[0], tail[2] if len(tail) > 2 else ""))
    return found


def _own_groups() -> dict[str, str]:
    """Controller (or "" for v2) -> this process's group path, from /proc/self/cgroup."""
    groups = {}
    for line in pathlib.Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if controllers == "":
            groups[""] = path
        for controller in controllers.split(","):
            groups[controller] = path
    return groups


def _write(path: pathlib.Path, text: str) -> None:
    with open(path, "w") as handle:
        handle.write(text)


class Cgroups:
    """The way this host lets the grader confine a sandbox (see ``detect``)."""

    version = 0
    reason = ""

    def box(self, quota: Quota) -> "Box":
        raise NotImplementedError


class NoCgroups(Cgroups):
    def __init__(self, reason: str) -> None:
        self.reason = reason

    def box(self, quota: Quota) -> "Box":
        return Box([], None)


class V1(Cgroups):
    version = 1

    def __init__(self, parents: dict[str, pathlib.Path]) -> None:
        self.parents = parents

    def box(self, quota: Quota) -> "Box":
        name = f"{PREFIX}{os.getpid()}-{next(_COUNTER)}"
        made: list[pathlib.Path] = []
        try:
            for controller in CONTROLLERS:
                group = self.parents[controller] / name
                group.mkdir()
                made.append(group)
            cpu, memory, pids = (self.parents[c] / name for c in CONTROLLERS)
            period = int((cpu / "cpu.cfs_period_us").read_text())
            _write(cpu / "cpu.cfs_quota_us", str(max(1000, int(period * quota.cpus))))
            _write(memory / "memory.limit_in_bytes", str(quota.memory_bytes))
            if (memory / "memory.memsw.limit_in_bytes").exists():  # swap counted too, where swap accounting is on
                try:
                    _write(memory / "memory.memsw.limit_in_bytes", str(quota.memory_bytes))
                except OSError:
                    pass
            _write(pids / "pids.max", str(quota.tasks))
        except BaseException:
            Box(made, None).close()
            raise
        return Box(made, memory / "memory.max_usage_in_bytes", memory)


class V2(Cgroups):
    version = 2

    def __init__(self, parent: pathlib.Path) -> None:
        self.parent = parent

    def box(self, quota: Quota) -> "Box":
        group = self.parent / f"{PREFIX}{os.getpid()}-{next(_COUNTER)}"
        group.mkdir()
        try:
            _write(group / "cpu.max", f"{max(1000, int(100_000 * quota.cpus))} 100000")
            _write(group / "memory.max", str(quota.memory_bytes))
            if (group / "memory.swap.max").exists():
                _write(group / "memory.swap.max", "0")
            _write(group / "pids.max", str(quota.tasks))
        except BaseException:
            Box([group], None).close()
            raise
        return Box([group], group / "memory.peak", group)


class Box:
    """One sandbox's group (one directory per v1 hierarchy, one in v2; none without cgroups)."""

    def __init__(self, groups: list[pathlib.Path], peak: pathlib.Path | None,
                 memory: pathlib.Path | None = None) -> None:
        self.groups, self._peak, self._memory = groups, peak, memory
        self.emptied: bool | None = None
        """After ``close``: whether the group's pages were dropped (None: no memory group)."""

    def command(self, cmd: list[str]) -> list[str]:
        """``cmd`` started inside the group: the wrapper joins it before it becomes ``cmd``."""
        if not self.groups:
            return cmd
        procs = [str(g / "cgroup.procs") for g in self.groups]
        return ["/bin/sh", "-c", _ENTER, "sh", str(len(procs)), *procs, *cmd]

    def peak_memory(self) -> int | None:
        """The most memory the group held at once (bytes), where the kernel reports it."""
        try:
            return int(self._peak.read_text()) if self._peak is not None else None
        except (OSError, ValueError):
            return None

    def close(self) -> None:
        """Kill every task still in the group, then remove it."""
        for group in self.groups:
            kill = group / "cgroup.kill"
            if kill.exists():
                try:
                    _write(kill, "1")
                except OSError:
                    pass
        killed: set[int] = set()
        for group in self.groups:
            for _ in range(1000):  # at most about 10 s: a task the OOM killer chose may take a while
                try:
                    pids = [int(p) for p in (group / "cgroup.procs").read_text().split()]
                except OSError:
                    break
                if not pids:
                    break
                for pid in pids:
                    try:
                        os.kill(pid, signal.SIGKILL)
                        killed.add(pid)
                    except (ProcessLookupError, PermissionError):
                        pass
                time.sleep(0.01)
        for _ in range(200):  # until the last of them has ended (a zombie holds nothing but its pid)
            if not any(_running(pid) for pid in killed):
                break
            time.sleep(0.01)
        if self._memory is not None:
            self.emptied = empty_page_cache(self._memory)
        for group in reversed(self.groups):
            for _ in range(500):
                try:
                    group.rmdir()
                    break
                except OSError as exc:
                    if exc.errno != errno.EBUSY:
                        break
                    time.sleep(0.02)  # the last tasks are still exiting
            else:
                _LEFT.append(group)  # tried again by ``sweep_own``


def cached_bytes(group: pathlib.Path) -> int | None:
    """Bytes of files' pages charged to a v1 memory group: ``memory.stat``'s ``active_file`` plus
    ``inactive_file`` (None: unreadable)."""
    try:
        stat = dict(line.split(" ", 1) for line in (group / "memory.stat").read_text().splitlines())
        return int(stat["active_file"]) + int(stat["inactive_file"])
    except (OSError, ValueError, KeyError):
        return None


def empty_page_cache(group: pathlib.Path) -> bool:
    """Drop every page charged to a sandbox's memory group before the group is removed: the files it
    read leave the page cache with it. Otherwise a v1 group's pages move to its parent, still cached, and
    a notebook graded later (at JOBS=1 too, or in a run minutes later) can time one read per page and
    learn which pages an earlier notebook read: a channel of one bit per page (issue 44). v1:
    ``memory.force_empty`` (once the group has no task, until none of its page cache is left); v2: ``memory.reclaim`` of what it holds.
    Returns whether the kernel took the request."""
    force = group / "memory.force_empty"
    if force.exists():
        # The kernel's force_empty gives up on pages another reclaimer holds at that moment (two graders,
        # or two test workers, side by side left 2 of 1,024 pages cached): ask again until none is left.
        for _ in range(50):
            try:
                _write(force, "0")
            except OSError as exc:
                if exc.errno != errno.EBUSY:
                    return False
                time.sleep(0.02)  # a task is still leaving the group
                continue
            if cached_bytes(group) in (0, None):  # None: no way to tell, the request was taken
                return True
            time.sleep(0.01)
        return False
    reclaim = group / "memory.reclaim"
    if reclaim.exists():
        for _ in range(8):
            try:
                held = int((group / "memory.current").read_text())
            except (OSError, ValueError):
                return False
            if held < 1 << 16:
                return True
            try:
                _write(reclaim, str(held))
            except OSError as exc:
                if exc.errno != errno.EAGAIN:  # EAGAIN: less than asked was reclaimed; ask again
                    return False
        return True
    return False


_LEFT: list[pathlib.Path] = []


def _running(pid: int) -> bool:
    try:
        stat = pathlib.Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[:1] != ["Z"]


def sweep_own() -> list[str]:
    """Remove this grader's groups that were still busy when their sandbox ended; return any that stay."""
    left = []
    while _LEFT:
        group = _LEFT.pop()
        memory = group if any((group / f).exists() for f in ("memory.force_empty", "memory.reclaim")) else None
        Box([group], None, memory).close()
        if group.exists():
            left.append(str(group))
    _LEFT.extend(pathlib.Path(g) for g in left)
    return left


_DETECTED: dict[str, Cgroups] = {}
_LOCK = threading.Lock()


def detect() -> Cgroups:
    """How sandboxes can be confined on this host (probed once: a test group is made and removed)."""
    with _LOCK:
        if "found" not in _DETECTED:
            if os.environ.get("GRADING_CGROUPS") == "0":
                _DETECTED["found"] = NoCgroups("switched off (GRADING_CGROUPS=0)")
            else:
                _DETECTED["found"] = _probe()
        return _DETECTED["found"]


def _probe() -> Cgroups:
    try:
        mounts, groups = _mounts(), _own_groups()
    except OSError as exc:
        return NoCgroups(f"cannot read this process's cgroups ({exc})")
    v1 = {}
    for point, root, fstype, options in mounts:
        if fstype == "cgroup":
            for controller in CONTROLLERS:
                if controller in options.split(",") and controller in groups:
                    v1[controller] = _under(point, root, groups[controller])
    reasons = []
    if len(v1) == len(CONTROLLERS):
        try:
            found = V1(v1)
            _sweep([found.parents[c] for c in CONTROLLERS])
            found.box(Quota()).close()
            return found
        except OSError as exc:
            reasons.append(f"cgroup v1 groups cannot be made under {v1['memory']} ({exc.strerror})")
    v2 = [_under(point, root, groups[""]) for point, root, fstype, _ in mounts
          if fstype == "cgroup2" and "" in groups]
    if v2:
        try:
            return _v2(v2[0])
        except OSError as exc:
            reasons.append(f"cgroup v2 group {v2[0]} cannot hold the sandboxes' groups "
                           f"({exc.strerror or exc})")
    if not reasons:
        reasons.append("no cgroup hierarchy with the cpu, memory and pids controllers is mounted")
    return NoCgroups("; ".join(reasons))


def _under(point: str, root: str, group: str) -> pathlib.Path:
    """The folder of ``group`` (a path from /proc/self/cgroup) in a hierarchy mounted at ``point``
    whose mount shows the hierarchy from ``root`` (not "/" in some containers)."""
    if root != "/" and (group == root or group.startswith(root.rstrip("/") + "/")):
        group = group[len(root.rstrip("/")):]
    return pathlib.Path(point) / group.lstrip("/")


def _v2(own: pathlib.Path) -> V2:
    """Children of the grader's own v2 group with cpu, memory and pids, moving the grader into a leaf
    of its own first if its group holds processes (the kernel's "no internal processes" rule)."""
    available = set((own / "cgroup.controllers").read_text().split())
    missing = [c for c in CONTROLLERS if c not in available]
    if missing:
        raise OSError(0, f"controllers {', '.join(missing)} are not available to it")
    enabled = set((own / "cgroup.subtree_control").read_text().split())
    parent = own
    if not set(CONTROLLERS) <= enabled:
        try:
            _write(own / "cgroup.subtree_control", " ".join(f"+{c}" for c in CONTROLLERS))
        except OSError:
            # processes in our own group: move this one into a leaf, then enable the controllers
            leaf = own / f"{PREFIX}grader-{os.getpid()}"
            leaf.mkdir(exist_ok=True)
            _write(leaf / "cgroup.procs", str(os.getpid()))
            _write(own / "cgroup.subtree_control", " ".join(f"+{c}" for c in CONTROLLERS))
    _sweep([parent])
    found = V2(parent)
    found.box(Quota()).close()
    return found


def _sweep(parents: list[pathlib.Path]) -> None:
    """End the sandbox groups a grader that was killed left behind (their grader's pid is gone): kill
    what still runs in them and remove them."""
    stale: dict[str, list[pathlib.Path]] = {}
    for parent in parents:
        for group in parent.glob(f"{PREFIX}*-*"):
            try:
                pid = int(group.name[len(PREFIX):].split("-")[0])
            except ValueError:
                continue
            if pid != os.getpid() and not pathlib.Path(f"/proc/{pid}").exists():
                stale.setdefault(group.name, []).append(group)
    for groups in stale.values():
        Box(groups, None).close()
