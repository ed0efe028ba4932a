"""Chapter 4, axis (b): switch buffers, an incast, and the DCQCN marking bound.

An N-to-1 incast at line rate: the receiver's port drains one sender's worth,
so the other ``N − 1`` senders are the excess, and it piles up in the switch
until the first rate cut takes effect (one round trip plus DCQCN's
notification interval). ``incast`` computes that pile; ``queue_trace`` draws
it over time for three ports (a shallow single chip, a deep-buffer chassis,
and receiver-driven admission); ``ecn_bound`` is buffer ÷ ports.

Where the pile forms: at the last hop, the egress port of the receiver's rack
switch. In Meta's design that switch is an RTSW (Minipack2), not the deep CTSW
spine, so the deep-buffer line of the picture describes a receiver sitting
behind a chassis, not Meta's test.

Units: Gbps for rates, µs for times, bytes (1 MB = 10^6 bytes, as the source
counts) for buffers. Impossible input raises ``ValueError`` naming the argument.

Sources: source 001, section 13.3; Gangidi et al. (2024) for Meta's incast
test, 22 µs RTT and 5 MB ECN threshold; Zhu et al. (2015) for DCQCN.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..validate import real, whole

__all__ = [
    "DEEP_BUFFER_MS", "DCQCN_NOTIFY_US", "Incast", "META_RTT_US", "SHALLOW_CHIP_MB", "SHALLOW_CHIP_PORTS",
    "bdp_bytes", "ecn_bound", "incast", "queue_trace",
]

MB = 1e6
META_RTT_US = 22.0
"""Meta's measured round trip, µs."""
DCQCN_NOTIFY_US = 50.0
"""DCQCN's notification interval, µs: at most one congestion notification per flow every 50 µs, so the
first one can wait up to 50 µs. The worst case; when no notification went out in the last 50 µs the
first marked packet is answered at once and the window shrinks to about one round trip."""
SHALLOW_CHIP_MB = 100.0
"""Shared packet memory of a 51.2T single chip, MB (the source rounds; vendors differ)."""
SHALLOW_CHIP_PORTS = 128
"""400G ports of a 51.2T chip."""
DEEP_BUFFER_MS = 2.0
"""Assumed: the milliseconds of a 400G burst a deep-buffer chassis holds per port (the source says
"milliseconds"; 2 ms is this book's illustration, not a vendor figure)."""


@dataclass(frozen=True)
class Incast:
    """Outputs of ``incast``: what an N-to-1 burst leaves in the switch before senders slow down."""

    excess_senders: int
    """``senders − 1``: the receiver's port drains one sender's worth."""
    excess_gbytes_per_s: float
    """``(senders − 1) × port_gbps / 8``, GB/s."""
    window_us: float
    """``rtt_us + notify_us``: time before the first rate cut can act."""
    queued_mb: float
    """Bytes that pile up in that window, MB."""
    shallow_per_port_mb: float
    """A shallow chip's memory ÷ its ports, MB."""
    shallow_share_pct: float
    """``queued / shallow chip's whole memory``, %."""
    fits_shallow_port: bool
    """Does the pile fit a shallow chip's per-port share?"""
    fits_shallow_chip: bool
    """Does it fit the shallow chip's whole shared memory?"""
    deep_per_port_mb: float
    """Assumed deep-chassis memory per port (``DEEP_BUFFER_MS`` of line rate), MB."""
    fits_deep_port: bool
    admission_bound_mb: float
    """Receiver-driven admission, MB: this book's assumption that the receiver grants one bandwidth-delay
    product in all. The source bounds it by the senders' channel buffers (sixteen senders, sixteen times
    one connection's buffers), a size it does not give, so the model's bound is an illustration."""


def bdp_bytes(port_gbps: float, rtt_us: float) -> float:
    """Bandwidth-delay product, bytes: ``port_gbps × 10^9 / 8 × rtt_us × 10^-6`` (1.1 MB at 400G, 22 µs)."""
    port_gbps = real("port_gbps", port_gbps, unit="Gbps")
    rtt_us = real("rtt_us", rtt_us, unit="µs")
    return port_gbps * 1e9 / 8 * rtt_us * 1e-6


def incast(senders: int = 16, port_gbps: float = 400.0, rtt_us: float = META_RTT_US,
           notify_us: float = DCQCN_NOTIFY_US, *, chip_mb: float = SHALLOW_CHIP_MB,
           chip_ports: int = SHALLOW_CHIP_PORTS, deep_ms: float = DEEP_BUFFER_MS) -> Incast:
    """The bytes an incast of ``senders`` senders at ``port_gbps`` leaves queued before the first rate cut.

    ::

        excess rate = (senders − 1) × port_gbps / 8           GB/s    (15 × 400 / 8 = 750)
        window      = rtt_us + notify_us                      µs      (22 + 50 = 72)
        queued      = excess rate × window                    bytes   (750 GB/s × 72 µs = 54 MB)

    Bits are divided by 8 once, and only the senders beyond the first count:
    the receiver's port keeps draining at line rate. Raises ``ValueError`` for
    a negative number of senders or zero ports.

    Source: source 001, "Worked example: an incast at 400G".
    """
    senders = whole("senders", senders, low=0, unit="senders")
    port_gbps = real("port_gbps", port_gbps, unit="Gbps")
    rtt_us = real("rtt_us", rtt_us, unit="µs")
    notify_us = real("notify_us", notify_us, unit="µs")
    chip_mb = real("chip_mb", chip_mb, unit="MB")
    chip_ports = whole("chip_ports", chip_ports, low=1, unit="ports")
    deep_ms = real("deep_ms", deep_ms, unit="ms")
    excess = max(senders - 1, 0)
    rate = excess * port_gbps / 8  # GB/s
    window = rtt_us + notify_us
    queued = rate * 1e9 * window * 1e-6 / MB
    per_port = chip_mb / chip_ports
    deep = port_gbps / 8 * 1e9 * deep_ms * 1e-3 / MB
    return Incast(
        excess_senders=excess, excess_gbytes_per_s=rate, window_us=window, queued_mb=queued,
        shallow_per_port_mb=per_port, shallow_share_pct=100 * queued / chip_mb if chip_mb else float("inf"),
        fits_shallow_port=queued <= per_port, fits_shallow_chip=queued <= chip_mb,
        deep_per_port_mb=deep, fits_deep_port=queued <= deep,
        admission_bound_mb=bdp_bytes(port_gbps, rtt_us) / MB if senders > 1 else 0.0)


def queue_trace(senders: int = 16, port_gbps: float = 400.0, rtt_us: float = META_RTT_US,
                notify_us: float = DCQCN_NOTIFY_US, *, cap_mb: float = float("inf"), admission: bool = False,
                points: int = 145) -> tuple[np.ndarray, np.ndarray]:
    """Queue at the receiver's port over the window, MB, sampled at ``points`` times from 0 to the window.

    The queue grows at the excess rate until it reaches ``cap_mb`` (a shallow
    chip's per-port share: there PFC pauses the senders and the queue stops
    growing, but the pause spreads upstream). With ``admission`` the receiver
    grants only one bandwidth-delay product at a time, so the queue never
    exceeds it. Returns (times in µs, queue in MB).
    """
    shot = incast(senders, port_gbps, rtt_us, notify_us)
    cap = real("cap_mb", cap_mb, allow_inf=True, unit="MB")
    points = whole("points", points, low=2)
    t = np.linspace(0.0, shot.window_us, points)
    q = shot.excess_gbytes_per_s * t * 1e-3  # GB/s × µs = 10^3 bytes = 10^-3 MB
    if admission:
        cap = min(cap, shot.admission_bound_mb)
    return t, np.minimum(q, cap)


def ecn_bound(buffer_mb: float, ports: int) -> float:
    """Upper bound on a DCQCN ECN threshold, MB: the shared buffer divided by the ports that can feed one queue.

    Marking must begin before any ingress port reaches its PFC threshold, and
    the PFC threshold is at most the buffer's per-port share (less headroom),
    so ``t_ECN < buffer / ports``. Doubling the ports without doubling the
    memory halves the bound. Raises ``ValueError`` for zero ports.

    Source: source 001, "The inequality that decides it"; Zhu et al. (2015).
    """
    buffer_mb = real("buffer_mb", buffer_mb, unit="MB")
    ports = whole("ports", ports, low=1, unit="ports")
    return buffer_mb / ports


# -- Animation 13.2 as a stepper: the same incast on three ports, moment by moment -----------------------

@dataclass(frozen=True)
class QueueAt:
    """Outputs of ``queue_at``: the queue at the receiver's port ``time_us`` after the burst began."""

    time_us: float
    deep_mb: float
    """A receiver behind a deep-buffer chassis: the whole excess so far is queued (it fits)."""
    shallow_mb: float
    """A single-chip rack switch: the queue stops at the per-port share, where PFC pauses the senders."""
    shallow_paused: bool
    """Has the single chip reached its share and started pausing the senders upstream?"""
    admission_mb: float
    """Receiver-driven admission: never more than the granted bytes (this book's one-BDP assumption)."""
    rate_cut: bool
    """Has the first rate cut taken effect (``time_us`` at or past the worst-case window)?"""


def queue_at(time_us: float = 0.0, senders: int = 16, port_gbps: float = 400.0, rtt_us: float = META_RTT_US,
             notify_us: float = DCQCN_NOTIFY_US) -> QueueAt:
    """The three ports of Figure 13.4 at one moment: ``excess rate × min(t, window)``, capped per port.

    Raises ``ValueError`` for a negative time. Source: source 001, section 13.3 (Animation 13.2).
    """
    time_us = real("time_us", time_us, unit="µs")
    shot = incast(senders, port_gbps, rtt_us, notify_us)
    piled = shot.excess_gbytes_per_s * min(time_us, shot.window_us) * 1e-3
    return QueueAt(time_us=time_us, deep_mb=piled, shallow_mb=min(piled, shot.shallow_per_port_mb),
                   shallow_paused=piled >= shot.shallow_per_port_mb > 0,
                   admission_mb=min(piled, shot.admission_bound_mb), rate_cut=time_us >= shot.window_us)


__all__ += ["QueueAt", "queue_at"]
