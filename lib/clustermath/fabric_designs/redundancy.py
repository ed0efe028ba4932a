"""Chapter 4, axis (d): where the spare capacity sits.

* ``slice_intact`` -- the chance that every host of a fixed slice is up, ``p^hosts``;
* ``ocs_goodput`` / ``fixed_goodput`` -- a simple model of TPU v4's spare cubes:
  with an OCS a slice needs enough working cubes anywhere in the machine;
  without one it needs its own hosts all up;
* ``uplink_headroom`` -- Meta's 1:1.125 rack uplinks;
* ``dual_tor`` -- HPN's second ToR: the share lost with one link, the backup GPUs;
* ``interruption_budget`` -- the Llama 3 arithmetic, from chapter 2's record.

Sources: source 001, section 13.5; Jouppi et al. (2023); Gangidi et al. (2024);
Qian et al. (2024); Grattafiori et al. (2024).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..reliability.interruptions import LLAMA3_405B, InterruptionRecord
from ..validate import probability, real, whole

__all__ = [
    "DualTor", "Headroom", "InterruptionBudget", "SliceGoodput", "dual_tor", "host_availability_for",
    "interruption_budget", "slice_goodput", "slice_intact", "uplink_headroom",
]


def slice_intact(hosts: int, availability: float) -> float:
    """Probability that all ``hosts`` of a fixed slice are up at once: ``availability ** hosts``.

    0.995^256 = 0.28, 0.995^1024 = 0.006, 0.999^1024 = 0.36. This is the
    probability for the whole slice, not for one host. Raises ``ValueError``
    for an availability outside [0, 1] or negative hosts.
    Source: source 001, §13.5 (TPU v4 and its spare cubes).
    """
    hosts = whole("hosts", hosts, low=0, unit="hosts")
    availability = probability("availability", availability)
    return availability ** hosts


def host_availability_for(target: float, hosts: int) -> float:
    """The host availability at which a fixed slice of ``hosts`` hosts is intact with probability ``target``: ``target^(1/hosts)``."""
    target = probability("target", target, low_open=True)
    hosts = whole("hosts", hosts, low=1, unit="hosts")
    return target ** (1.0 / hosts)


@dataclass(frozen=True)
class SliceGoodput:
    """Outputs of ``slice_goodput``: share of the machine doing useful work, with and without an OCS."""

    cube_up: float
    """A cube works when all its hosts are up: ``p^hosts_per_cube``."""
    expected_working_cubes: float
    slices: int
    """Slices of ``slice_cubes`` cubes the machine holds."""
    fixed_pct: float
    """Fixed torus: each slice needs its own hosts all up, ``100 × p^(hosts per slice)``."""
    ocs_pct: float
    """OCS: ``100 × E[floor(W / s) × s] / cubes`` with ``W ~ Binomial(cubes, cube_up)`` working cubes."""
    ocs_one_slice_pct: float
    """OCS: probability, %, that at least one slice's worth of cubes works."""


def slice_goodput(availability: float = 0.995, slice_cubes: int = 16, *, cubes: int = 64,
                  hosts_per_cube: int = 16) -> SliceGoodput:
    """Goodput of a machine of ``cubes`` cubes cut into slices of ``slice_cubes``, with and without an OCS.

    A cube is up when its ``hosts_per_cube`` hosts are (``q = p^16``). A fixed
    torus wires each slice to particular cubes, so a slice runs only when its
    own ``slice_cubes × hosts_per_cube`` hosts are up: goodput ``p^hosts``.
    With an OCS the scheduler takes any working cubes, so the machine runs
    ``floor(W / s)`` slices, ``W`` the working cubes (binomial). For a quarter
    machine at 99.5% this is 75%: three of four slices. Simple model: repair,
    spare OCS ports and partial cubes are ignored.

    Source: source 001, §13.5 (TPU v4 and its spare cubes); Jouppi et al. (2023), Figure 4.
    """
    p = probability("availability", availability)
    cubes = whole("cubes", cubes, low=1, high=4_096, unit="cubes")
    slice_cubes = whole("slice_cubes", slice_cubes, low=1, high=cubes, unit="cubes")
    hosts_per_cube = whole("hosts_per_cube", hosts_per_cube, low=1, unit="hosts")
    q = p ** hosts_per_cube
    w = np.arange(cubes + 1)
    if q in (0.0, 1.0):
        pmf = (w == (cubes if q == 1.0 else 0)).astype(float)
    else:
        logc = np.array([math.lgamma(cubes + 1) - math.lgamma(k + 1) - math.lgamma(cubes - k + 1) for k in w])
        pmf = np.exp(logc + w * math.log(q) + (cubes - w) * math.log1p(-q))
    used = (w // slice_cubes) * slice_cubes
    return SliceGoodput(
        cube_up=q, expected_working_cubes=float(cubes * q), slices=cubes // slice_cubes,
        fixed_pct=100 * p ** (slice_cubes * hosts_per_cube) * ((cubes // slice_cubes) * slice_cubes) / cubes,
        ocs_pct=float(min(100.0, 100 * (pmf * used).sum() / cubes)),
        ocs_one_slice_pct=float(min(100.0, 100 * pmf[w >= slice_cubes].sum())))


@dataclass(frozen=True)
class Headroom:
    """Outputs of ``uplink_headroom``."""

    uplinks: int
    """``ceil(downlinks × ratio)``."""
    failures_tolerated: int
    """Uplinks that may fail before bandwidth drops below 1:1: ``uplinks − downlinks``."""
    extra_pct: float
    """Extra uplink ports and transceivers over 1:1, %."""


def uplink_headroom(downlinks: int = 16, ratio: float = 1.125) -> Headroom:
    """Rack uplinks at ``downlinks : uplinks = 1 : ratio``, and the failures they absorb at full speed.

    16 downlinks at 1:1.125 need 18 uplinks; two may fail and 16 remain (1:1).
    Source: source 001, "Meta: headroom in the uplinks"; Gangidi et al. (2024).
    """
    downlinks = whole("downlinks", downlinks, low=0, unit="ports")
    ratio = real("ratio", ratio, low=1.0, unit="")
    uplinks = math.ceil(downlinks * ratio - 1e-9)
    return Headroom(uplinks=uplinks, failures_tolerated=uplinks - downlinks,
                    extra_pct=100.0 * (uplinks - downlinks) / downlinks if downlinks else 0.0)


@dataclass(frozen=True)
class DualTor:
    """Outputs of ``dual_tor``."""

    host_ports: int
    loss_one_link_pct: float
    """Bandwidth lost when one of a host's ports fails, %."""
    backup_gpus: int
    """Backup GPUs per segment: backup ports over all ToRs ÷ ports per GPU."""


def dual_tor(nics: int = 8, ports_per_nic: int = 2, tors: int = 16, backup_ports_per_tor: int = 8) -> DualTor:
    """HPN's dual-ToR: 8 NICs × 2 ports = 16 host ports, so one lost link costs 1/16 = 6.25%;
    16 ToRs × 8 backup ports ÷ 2 ports per GPU = 64 backup GPUs per segment.

    Source: source 001, section 13.5 (HPN's dual-ToR); Qian et al. (2024).
    """
    nics = whole("nics", nics, low=1)
    ports_per_nic = whole("ports_per_nic", ports_per_nic, low=1, unit="ports")
    tors = whole("tors", tors, low=0)
    backup_ports_per_tor = whole("backup_ports_per_tor", backup_ports_per_tor, low=0, unit="ports")
    host_ports = nics * ports_per_nic
    return DualTor(host_ports=host_ports, loss_one_link_pct=100.0 / host_ports,
                   backup_gpus=tors * backup_ports_per_tor // ports_per_nic)


@dataclass(frozen=True)
class InterruptionBudget:
    """Outputs of ``interruption_budget``."""

    spacing_h: float
    """``hours / interruptions``."""
    lost_allowed_h: float
    """``(1 − effective) × hours``."""
    lost_allowed_min: float
    """The same in minutes, the unit of the source's table (7,776 min for Llama 3)."""
    per_interruption_min: float
    """``lost_allowed_h × 60 / interruptions``: the most each may cost on average."""


def interruption_budget(record: InterruptionRecord = LLAMA3_405B, effective_pct: float | None = None) -> InterruptionBudget:
    """How often a run was interrupted and how long each interruption may take to keep ``effective_pct``.

    Llama 3: 466 interruptions in 54 days → one every 2.8 h; 90% effective
    leaves 10% of 1,296 h = 129.6 h, at most 16.7 min per interruption.
    Uses chapter 2's record (``reliability.LLAMA3_405B``); counts all
    interruptions, planned ones included, as the source does.
    """
    eff = real("effective_pct", record.effective_training_pct if effective_pct is None else effective_pct,
               high=100.0, unit="%")
    if record.total < 1:
        raise ValueError(f"record.total must be at least 1 interruption, got {record.total}")
    lost = (1 - eff / 100) * record.hours
    return InterruptionBudget(spacing_h=record.hours / record.total, lost_allowed_h=lost,
                              lost_allowed_min=lost * 60, per_interruption_min=lost * 60 / record.total)


# -- Animation 13.3 as a stepper: one failure sequence per design -------------------------

FAILURE_DESIGNS = ("meta", "hpn", "megascale", "tpu")
"""The four designs of the stepper, in slider order."""


@dataclass(frozen=True)
class FailureStep:
    """Outputs of ``failure_step``: what one step of a design's failure sequence does to a job."""

    design: str
    step: int
    event: str
    job_speed_pct: float
    """The job's speed against a healthy fabric, % (0 while it is stopped)."""
    running: bool
    where_it_goes: str
    """Where the traffic or the work goes at this step."""


def failure_step(design: int = 0, step: int = 0) -> FailureStep:
    """Step ``step`` (0-3) of one failure sequence in design ``design`` (0-3: Meta, HPN, MegaScale, TPU v4).

    The speeds come from the chapter's models and the source's figures:
    Meta's 18 uplinks for 16 downlinks (``uplink_headroom``) keep full speed
    through two failures; a failed rack switch stops its rack. HPN's host
    loses one of its 16 ports per failed link (``dual_tor``; the source's
    measured 6.25%), and a whole failed ToR takes one port from every host
    under it, again 1 of 16: the source's "survives a rack switch at 6.25%"
    (step 6 of its procedure). The speed shown is the host's bandwidth; a job
    bound by the slowed rail's collectives would lose more. MegaScale and TPU
    v4 stop the job and resume it on spare compute.
    Source: source 001, sections 13.5 and 13.7 (Animation 13.3).
    """
    d = FAILURE_DESIGNS[whole("design", design, low=0, high=len(FAILURE_DESIGNS) - 1)]
    step = whole("step", step, low=0, high=3)
    head = uplink_headroom()
    tor = dual_tor()
    full = 100.0
    table = {
        "meta": [
            ("healthy rack: 16 downlinks, 18 uplinks", full, True, "flows hash over all 18 uplinks"),
            ("one uplink fails", full, True, "its flows rehash onto 17 uplinks, still above 1:1"),
            (f"a second uplink fails ({head.failures_tolerated} tolerated)", full, True,
             "16 uplinks for 16 downlinks: exactly 1:1, no slowdown"),
            ("the rack switch fails", 0.0, False,
             "the rack drops out; the job restarts from its checkpoint without it"),
        ],
        "hpn": [
            ("healthy host: 8 NICs × 2 ports to two ToRs", full, True, "traffic on all 16 ports, both planes"),
            ("one NIC-to-ToR link fails", full - tor.loss_one_link_pct, True,
             "the bond moves its traffic to the NIC's other port, on the other ToR"),
            ("the link is repaired", full, True, "both ports carry traffic again, no restart"),
            ("a whole ToR fails", full - tor.loss_one_link_pct, True,
             "each host under it loses one of 16 ports; the twin ToR carries the rest"),
        ],
        "megascale": [
            ("healthy job; heartbeats carry RDMA counters", full, True, "work on every node"),
            ("a node's traffic drops; the driver suspends the job", 0.0, False,
             "diagnosis: loopback, NIC-to-NIC and small collectives under one ToR"),
            ("the faulty node is evicted", 0.0, False, "a node from the standby pool takes its ranks"),
            ("the job resumes from its checkpoint", full, True, "work on the replacement node"),
        ],
        "tpu": [
            ("healthy slice of 16 cubes", full, True, "the OCS wires the slice's cubes into a torus"),
            ("one host fails: its cube is down", 0.0, False, "the torus is broken for the slice that holds it"),
            ("the scheduler picks a spare working cube", 0.0, False, "the OCS mirrors rewire in milliseconds"),
            ("the slice resumes from its checkpoint", full, True, "work on the rewired torus"),
        ],
    }
    event, speed, running, where = table[d][step]
    return FailureStep(design=d, step=step, event=event, job_speed_pct=speed, running=running, where_it_goes=where)


__all__ += ["FAILURE_DESIGNS", "FailureStep", "failure_step"]
