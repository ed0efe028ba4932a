"""A seccomp filter for the sandbox: no kernel keyring, no foreign system-call table.

The kernel's key store (``add_key``, ``request_key``, ``keyctl``) belongs to
a user id, not to a sandbox: a notebook could leave its answers there and a
later notebook running under the same uid, in the same batch or a later one,
could read them back. No exercise needs the keyring, so the sandbox refuses
those three calls with ``EPERM``.

The filter is a classic BPF program of ten instructions, written here by
hand rather than with libseccomp's bindings: the bindings on PyPI
(``pyseccomp``) have not been released since 2021, Debian's
``python3-seccomp`` is built for the system's Python and not the grader's
virtual environment, and the program is small enough to read in full
(``tests/test_grading_sandbox.py`` runs it in a sandbox and checks each
call). bubblewrap loads it (``--seccomp FD``) after setting up the sandbox,
and every process inside inherits it.

It checks the architecture first: a process may switch system-call tables
(``int 0x80`` gives an x86-64 process the 32-bit table, where the keyring
calls have other numbers, and x32 calls carry bit 30), so anything but the
native table is refused outright; no exercise needs it.
"""
from __future__ import annotations

import errno
import platform
import struct

# struct seccomp_data: int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6]
_NR, _ARCH = 0, 4
# classic BPF opcodes (linux/filter.h)
_LD_W_ABS = 0x00 | 0x00 | 0x20   # BPF_LD | BPF_W | BPF_ABS
_JEQ_K = 0x05 | 0x10 | 0x00      # BPF_JMP | BPF_JEQ | BPF_K
_JSET_K = 0x05 | 0x40 | 0x00     # BPF_JMP | BPF_JSET | BPF_K
_RET_K = 0x06 | 0x00             # BPF_RET | BPF_K
_ALLOW = 0x7FFF0000              # SECCOMP_RET_ALLOW
_REFUSE = 0x00050000 | errno.EPERM  # SECCOMP_RET_ERRNO | EPERM
_X32 = 0x40000000

ARCHES = {
    # machine: (AUDIT_ARCH_*, numbers of add_key, request_key, keyctl)
    "x86_64": (0xC000003E, (248, 249, 250)),
    "aarch64": (0xC00000B7, (217, 218, 219)),
}


def _op(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def keyring_filter(machine: str | None = None) -> bytes | None:
    """The BPF program (``struct sock_filter`` array) for this machine, or None if its numbers are unknown."""
    machine = machine or platform.machine()
    if machine not in ARCHES:
        return None
    arch, (add_key, request_key, keyctl) = ARCHES[machine]
    return b"".join([
        _op(_LD_W_ABS, 0, 0, _ARCH),
        _op(_JEQ_K, 1, 0, arch),          # the native table: go on
        _op(_RET_K, 0, 0, _REFUSE),       # any other table: refused
        _op(_LD_W_ABS, 0, 0, _NR),
        _op(_JSET_K, 4, 0, _X32),         # an x32 call: refused
        _op(_JEQ_K, 3, 0, add_key),
        _op(_JEQ_K, 2, 0, request_key),
        _op(_JEQ_K, 1, 0, keyctl),
        _op(_RET_K, 0, 0, _ALLOW),
        _op(_RET_K, 0, 0, _REFUSE),
    ])
