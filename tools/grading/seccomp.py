"""A seccomp filter for the sandbox: no kernel state shared between notebooks, no foreign table.

Namespaces and cgroups separate processes, files and limits, but some kernel
state stays shared between every sandbox of the machine (issues 20 and 29
measured each of these channels): the kernel keyring of a user id; the
asynchronous-I/O and io_uring contexts, which move machine-wide counters
(``/proc/sys/fs/aio-nr``) a neighbour can read; and the page cache of files
every sandbox can read, which a notebook can evict, prefetch or probe without
reading (``fadvise``, ``readahead``, ``mincore``, ``cachestat``,
``preadv2`` with ``RWF_NOWAIT``). A notebook that could create namespaces,
mount, load BPF programs, open performance counters, handle page faults in
user space or trace a process would reach further still. No exercise needs
any of them, so the filter refuses them with ``EPERM``:

* the keyring: ``add_key``, ``request_key``, ``keyctl``;
* asynchronous I/O and io_uring: ``io_setup``, ``io_destroy``,
  ``io_submit``, ``io_cancel``, ``io_getevents``, ``io_pgetevents``,
  ``io_uring_setup``, ``io_uring_enter``, ``io_uring_register``;
* the page cache: ``fadvise64``, ``readahead``, ``mincore``, ``cachestat``,
  ``preadv2`` and ``pwritev2`` (outright: their flags are the only way to
  ask for ``RWF_NOWAIT``, and plain ``pread``/``pwrite`` remain);
* namespaces and mounts: ``unshare``, ``setns``, ``mount``, ``umount2``,
  ``pivot_root``, the new mount API (``open_tree`` to ``fspick``,
  ``mount_setattr``), and ``clone`` with any namespace flag; ``clone3``
  (whose flags sit behind a pointer the filter cannot read) answers
  ``ENOSYS``, so the C library falls back to ``clone``;
* ``bpf``, ``perf_event_open``, ``userfaultfd``, ``ptrace``,
  ``process_vm_readv``, ``process_vm_writev``, ``kcmp``;
* file watches and locks (issue 44): ``inotify_init``, ``inotify_init1``,
  ``inotify_add_watch``, ``fanotify_init``, ``fanotify_mark``, ``flock``, and
  ``fcntl``'s lock, lease and dnotify commands (``FCNTL_REFUSED``). A watch
  needs only read access and sees every open of a shared read-only file,
  whoever opened it; a neighbour's shared lock makes ``LOCK_EX|LOCK_NB``
  fail until it ends: each was an exact channel between two notebooks
  graded at once. Every other ``fcntl`` command stays allowed.

The filter allows every other call (it is a deny list, not an allow list:
the notebook runs numpy and matplotlib, whose calls vary by version). It is
a classic BPF program written here by hand rather than with libseccomp's
bindings: the bindings on PyPI (``pyseccomp``) have not been released since
2021, Debian's ``python3-seccomp`` is built for the system's Python and not
the grader's virtual environment, and the program is short enough to read
(``tests/test_grading_sandbox.py`` runs it in a sandbox and checks each
call). bubblewrap loads it (``--seccomp FD``) after setting up the sandbox,
and every process inside inherits it.

It checks the architecture first: a process may switch system-call tables
(``int 0x80`` gives an x86-64 process the 32-bit table, where the calls
have other numbers, and x32 calls carry bit 30), so anything but the native
table is refused outright; no exercise needs it.
"""
from __future__ import annotations

import errno
import platform
import struct

# struct seccomp_data: int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6]
_NR, _ARCH, _ARG0_LOW, _ARG1_LOW = 0, 4, 16, 24  # args[n]'s low word (little-endian machines only, as both below are)
# classic BPF opcodes (linux/filter.h)
_LD_W_ABS = 0x00 | 0x00 | 0x20   # BPF_LD | BPF_W | BPF_ABS
_JEQ_K = 0x05 | 0x10 | 0x00      # BPF_JMP | BPF_JEQ | BPF_K
_JSET_K = 0x05 | 0x40 | 0x00     # BPF_JMP | BPF_JSET | BPF_K
_RET_K = 0x06 | 0x00             # BPF_RET | BPF_K
_ALLOW = 0x7FFF0000              # SECCOMP_RET_ALLOW
_REFUSE = 0x00050000 | errno.EPERM  # SECCOMP_RET_ERRNO | EPERM
_NO_SUCH_CALL = 0x00050000 | errno.ENOSYS
_X32 = 0x40000000
NAMESPACE_FLAGS = 0x7E020000
"""CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET (clone's low word)."""

REFUSED = ("add_key", "request_key", "keyctl",
           "io_setup", "io_destroy", "io_submit", "io_cancel", "io_getevents", "io_pgetevents",
           "io_uring_setup", "io_uring_enter", "io_uring_register",
           "fadvise64", "readahead", "mincore", "cachestat", "preadv2", "pwritev2",
           "unshare", "setns", "mount", "umount2", "pivot_root", "open_tree", "move_mount", "fsopen",
           "fsconfig", "fsmount", "fspick", "mount_setattr",
           "bpf", "perf_event_open", "userfaultfd", "ptrace", "process_vm_readv", "process_vm_writev", "kcmp",
           "inotify_init", "inotify_init1", "inotify_add_watch", "fanotify_init", "fanotify_mark", "flock")
"""The calls refused with EPERM, by name (``inotify_init`` exists only on x86-64)."""
FCNTL_REFUSED = (5, 6, 7, 12, 13, 14, 36, 37, 38, 1024, 1026)
"""``fcntl`` commands refused with EPERM: F_GETLK, F_SETLK, F_SETLKW, their 64-bit names (12-14, which a
64-bit kernel does not know), F_OFD_GETLK, F_OFD_SETLK, F_OFD_SETLKW, F_SETLEASE and F_NOTIFY (dnotify,
inotify's older form). Every other command (F_GETFL, F_SETFD, F_DUPFD...) is allowed."""

ARCHES = {
    # machine: (AUDIT_ARCH_*, {call: number}) from arch/x86/entry/syscalls/syscall_64.tbl and
    # include/uapi/asm-generic/unistd.h
    "x86_64": (0xC000003E, {
        "add_key": 248, "request_key": 249, "keyctl": 250,
        "io_setup": 206, "io_destroy": 207, "io_getevents": 208, "io_submit": 209, "io_cancel": 210,
        "io_pgetevents": 333, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
        "fadvise64": 221, "readahead": 187, "mincore": 27, "cachestat": 451, "preadv2": 327, "pwritev2": 328,
        "unshare": 272, "setns": 308, "mount": 165, "umount2": 166, "pivot_root": 155, "open_tree": 428,
        "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433, "mount_setattr": 442,
        "bpf": 321, "perf_event_open": 298, "userfaultfd": 323, "ptrace": 101, "process_vm_readv": 310,
        "process_vm_writev": 311, "kcmp": 312, "clone": 56, "clone3": 435,
        "inotify_init": 253, "inotify_add_watch": 254, "inotify_init1": 294, "fanotify_init": 300,
        "fanotify_mark": 301, "flock": 73, "fcntl": 72}),
    "aarch64": (0xC00000B7, {
        "add_key": 217, "request_key": 218, "keyctl": 219,
        "io_setup": 0, "io_destroy": 1, "io_submit": 2, "io_cancel": 3, "io_getevents": 4,
        "io_pgetevents": 292, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
        "fadvise64": 223, "readahead": 213, "mincore": 232, "cachestat": 451, "preadv2": 286, "pwritev2": 287,
        "unshare": 97, "setns": 268, "mount": 40, "umount2": 39, "pivot_root": 41, "open_tree": 428,
        "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433, "mount_setattr": 442,
        "bpf": 280, "perf_event_open": 241, "userfaultfd": 282, "ptrace": 117, "process_vm_readv": 270,
        "process_vm_writev": 271, "kcmp": 272, "clone": 220, "clone3": 435,
        "inotify_add_watch": 27, "inotify_init1": 26, "fanotify_init": 262, "fanotify_mark": 263,
        "flock": 32, "fcntl": 25}),
}


def _op(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def _assemble(program: list[tuple]) -> bytes:
    """Instructions (code, true label, false label, k) or label strings -> the BPF program; a jump's
    labels are resolved to offsets (0 or None: the next instruction)."""
    at, index = {}, 0
    for item in program:
        if isinstance(item, str):
            at[item] = index
        else:
            index += 1
    out, index = [], 0
    for item in program:
        if isinstance(item, str):
            continue
        code, jt, jf, k = item
        offsets = []
        for label in (jt, jf):
            offset = 0 if label in (0, None) else at[label] - index - 1
            assert 0 <= offset < 256, (label, offset)
            offsets.append(offset)
        out.append(_op(code, offsets[0], offsets[1], k))
        index += 1
    return b"".join(out)


def sandbox_filter(machine: str | None = None) -> bytes | None:
    """The BPF program (``struct sock_filter`` array) for this machine, or None if its numbers are unknown.

    Layout: the table check, the x32 check, one comparison per refused call
    (a match jumps to the refusal at the end), ``clone3`` to ``ENOSYS``,
    ``clone`` to its flag check, ``fcntl`` to its command check, and
    ``ALLOW`` for the rest.
    """
    machine = machine or platform.machine()
    if machine not in ARCHES:
        return None
    arch, numbers = ARCHES[machine]
    refused = sorted({numbers[name] for name in REFUSED if name in numbers})
    program: list = [
        (_LD_W_ABS, 0, 0, _ARCH),
        (_JEQ_K, "native", 0, arch),        # the native table: go on
        (_RET_K, 0, 0, _REFUSE),            # any other table: refused
        "native",
        (_LD_W_ABS, 0, 0, _NR),
        (_JSET_K, "refuse", 0, _X32),       # an x32 call: refused
    ]
    program += [(_JEQ_K, "refuse", 0, number) for number in refused]
    program += [
        (_JEQ_K, "enosys", 0, numbers["clone3"]),
        (_JEQ_K, "clone", 0, numbers["clone"]),
        (_JEQ_K, "fcntl", 0, numbers["fcntl"]),
        (_RET_K, 0, 0, _ALLOW),
        "enosys",
        (_RET_K, 0, 0, _NO_SUCH_CALL),
        "clone",
        (_LD_W_ABS, 0, 0, _ARG0_LOW),
        (_JSET_K, "refuse", 0, NAMESPACE_FLAGS),  # a new namespace: refused
        (_RET_K, 0, 0, _ALLOW),
        "fcntl",
        (_LD_W_ABS, 0, 0, _ARG1_LOW),
    ]
    program += [(_JEQ_K, "refuse", 0, command) for command in FCNTL_REFUSED]
    program += [
        (_RET_K, 0, 0, _ALLOW),
        "refuse",
        (_RET_K, 0, 0, _REFUSE),
    ]
    return _assemble(program)


keyring_filter = sandbox_filter
"""The old name (issue 20's filter refused only the keyring calls)."""
