"""Chapter 4 ("Designs compared"): the comparison matrix, scale units, the spine's cost, Clos tiers.

Five published fabrics, each answering the same rows differently: the RoCE
fabric Meta trained Llama 3 on, Alibaba's HPN, ByteDance's MegaScale, Google's
TPU v4, and MIT's rail-only proposal. This module holds the matrix as data (one sourced
constant per design) and the port arithmetic behind the numbers in it:

* ``hpn_scale`` -- HPN's chain of scale units (64 → 128 → 1,024 → 8K → 15K GPUs)
  for a switch-chip generation and a NIC speed per GPU, and the pod's power;
* ``meta_zone``, ``megascale_tor_set``, ``tpu_v4_machine`` -- the other
  designs' scale units from their port counts;
* ``clos_tiers``, ``clos_ports``, ``table2_row`` -- full-bisection Clos port
  counts and the rail-only paper's Table II (switches, ports, cost, power);
* ``spine_cost`` -- what deleting the spine removes;
* ``checkpoint_burst`` -- the front end's checkpoint burst (step 7 of the procedure).

Units: Tbps for switch chips, Gbps for ports and NICs, watts, US dollars.
Impossible input raises ``ValueError`` naming the argument (``clustermath.validate``).

Sources: source 001 (chapter 13, "Designs compared"); Gangidi et al. (2024),
Qian et al. (2024, HPN), Jiang et al. (2024, MegaScale), Jouppi et al. (2023,
TPU v4), Wang et al. (2024, rail-only), Grattafiori et al. (2024, Llama 3).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..validate import real, whole

__all__ = [
    "BUILDING_KW_PER_GPU", "BUILDING_LIMIT_MW", "DESIGNS", "Design", "HpnScale", "MATRIX_ROWS",
    "PORT_GBPS", "RAIL_ONLY_COST", "RailOnlyCost", "SpineCost", "Table2Row", "TABLE2_STATED", "clos_max_gpus",
    "clos_ports", "clos_switches", "clos_tiers", "hpn_scale", "megascale_tor_set", "meta_zone",
    "spine_cost", "table2_row", "tpu_v4_machine",
]

PORT_GBPS = 400
"""Speed of one switch port in the 2024 designs, Gbps (a 51.2 Tbps chip has 128 of them)."""
BUILDING_LIMIT_MW = 18.0
"""HPN's power limit per building, MW (source 001, step 2 of the decision procedure)."""
BUILDING_KW_PER_GPU = 1.2
"""All-in power per GPU, kW: the source's rounding of 18 MW for "about 15,000 GPUs" (18 MW ÷ 15,000)."""

MATRIX_ROWS = ("scale_unit", "tiers", "switch_type", "tor_redundancy", "load_balancing", "congestion_control",
               "front_end", "failure_handling", "collective_library", "reported_results")
"""The rows of the comparison matrix, in the source's order."""


@dataclass(frozen=True)
class Design:
    """One column of the comparison matrix: a design's answer to every row, in the book's words."""

    name: str
    pattern: str
    """Which of the four patterns of Figure 13.1 it is (Astral is the fifth, not in the matrix)."""
    scale_unit: str
    tiers: str
    switch_type: str
    tor_redundancy: str
    load_balancing: str
    congestion_control: str
    front_end: str
    failure_handling: str
    collective_library: str
    reported_results: str
    citation: str
    bibkey: str


DESIGNS: dict[str, Design] = {
    "meta": Design(
        name="Meta RoCE / Llama 3", pattern="any-to-any Clos, deep-buffer spine",
        scale_unit="AI Zone: rack switches (RTSW) under cluster switches (CTSW), non-blocking, two stages; "
                   "Llama 3 pod: 192 racks of 16 GPUs, 3,072 at full bisection; eight pods make the 24K "
                   "cluster",
        tiers="1:1 inside a zone, rack uplinks provisioned at 1.125× the downlinks (18 up for 16 down); "
              "the ATSW layer oversubscribed by design; 1:7 between Llama 3 pods",
        switch_type="CTSW: modular chassis (Arista 7800 for Llama 3), deep buffers carved statically per "
                    "port; RTSW: Minipack2, an OCP switch",
        tor_redundancy="a single ToR per rack; the spare uplinks let two fail with no slowdown",
        load_balancing="enhanced ECMP hashes on the destination QP; QP scaling opens 16 flows per GPU pair "
                       "for LLMs (AllReduce up to 40% faster); centralised TE inside zones adds 5–10%",
        congestion_control="400G runs without DCQCN, on PFC, deep spine buffers and the receiver's "
                           "clear-to-send in NCCL; at 200G, DCQCN with a loose ECN threshold of 5 MB",
        front_end="a front-end fabric of its own; Tectonic storage: 240 PB over 7,500 SSD servers, "
                  "2 TB/s sustained, 7 TB/s peak for checkpoints",
        failure_handling="Llama 3: 466 interruptions in 54 days (419 unexpected; 78% hardware; 8.4% "
                         "switches and cables); 3 needed a person; over 90% effective training time",
        collective_library="NCCLX: chunk sizes tuned for a 22 µs RTT, clear-to-send messages prioritised "
                           "(P90 43 → 4 µs); tuning network and library together gave over 2×",
        reported_results="over 2× from co-tuning; AllReduce up to 40% faster than ECMP; Llama 3 BF16 MFU "
                         "43% on 8K GPUs, 41% and 38% on 16K (the 38% at 128K context)",
        citation="Gangidi et al. (2024), SIGCOMM; Grattafiori et al. (2024), section 3.3",
        bibkey="gangidi2024rdma"),
    "hpn": Design(
        name="Alibaba HPN", pattern="any-to-any, single-chip dual-plane, 15:1 core",
        scale_unit="segment: 16 ToRs and 136 hosts, 1,024 GPUs in use plus 64 spares; pod: 15 segments "
                   "(15K GPUs); a core tier joins pods",
        tiers="two tiers in a pod. ToR: 128 active host ports (200G) plus 8 spare, 60 uplinks. "
              "Aggregation: 120 ports down, 8 to the core (15:1)",
        switch_type="one 51.2 Tbps chip (128 × 400G); in Alibaba's fleet multi-chip switches had 3.77× the "
                    "critical failures of single-chip ones",
        tor_redundancy="dual-ToR without stacking: each NIC bonds two 200G ports, one per ToR, and "
                       "announces its ARP and BGP routes to both; losing a link costs 6.25%",
        load_balancing="dual-plane leaves no hash at tier 2; hosts find disjoint paths (RePaC) and send "
                       "each message where the fewest bytes wait (+34.7%)",
        congestion_control="left out (the paper is about topology); RoCEv2 with PFC assumed",
        front_end="a ninth NIC per host (2 × 200G) on a non-blocking front-end fabric; storage traffic "
                  "kept off the back end",
        failure_handling="dual-ToR turns a halt into a 6.25% slowdown; 64 spare GPUs per segment; INT "
                         "probes compare the wiring with the blueprint; 8 months with no single-point "
                         "failure",
        collective_library="in NCCL: paths made disjoint beforehand, then each message sent on the "
                           "connection with the fewest queued bytes",
        reported_results="training 14.9% faster on over 2,300 GPUs; on 448 GPUs, AllReduce up to 59.3% "
                         "faster; ToR queues 91.8% shorter",
        citation="Qian et al. (2024), SIGCOMM", bibkey="qian2024hpn"),
    "megascale": Design(
        name="ByteDance MegaScale", pattern="any-to-any three-tier Clos, 2× uplinks",
        scale_unit="ToR set: 8 ToRs serving up to 64 servers (512 GPUs); the cluster is a three-tier Clos "
                   "of over 10,000 GPUs (12,288 in the run reported)",
        tiers="three tiers, each switch 32 ports down and 32 up (1:1 in total); ToR downlinks split into "
              "2 × 200G, so each uplink runs at twice a server link's rate",
        switch_type="Broadcom Tomahawk 4 in every tier: one 25.6 Tbps chip, 64 × 400G",
        tor_redundancy="multi-rail: the 8 NICs of a server land on 8 different ToRs; a pool of standby "
                       "nodes replaces failed ones",
        load_balancing="uplinks twice a server link's rate absorb hash collisions; the scheduler puts "
                       "chatty ranks under one ToR set",
        congestion_control="stock DCQCN caused too many PFC pauses in all-to-all; replaced by Swift's RTT "
                           "signal with DCQCN's ECN reaction; NCCL retransmit timers set to ride out "
                           "link flaps",
        front_end="HDFS; checkpoints in two stages: seconds to copy GPU state into pinned host "
                  "memory, then a background write to HDFS",
        failure_handling="heartbeats carry RDMA counters; on a fault the job is suspended, diagnosed, the "
                         "node evicted, the job resumed; over 100 restarts in weeks, more than 90% "
                         "handled automatically, diagnosis under 10 min",
        collective_library="TP, PP and DP traffic all hidden behind compute (worth 2.2, 2.5 and 1.5 "
                           "MFU points); "
                           "initialisation 1,047 s → <5 s",
        reported_results="55.2% MFU at 12,288 GPUs (1.34× Megatron-LM); 65.3% at 256 GPUs",
        citation="Jiang et al. (2024), NSDI", bibkey="jiang2024megascale"),
    "tpu": Design(
        name="Google TPU v4", pattern="3-D torus behind optical circuit switches",
        scale_unit="cube: 64 chips (4×4×4) on 16 hosts, a rack; machine: 64 cubes, 4,096 chips on 1,024 "
                   "hosts",
        tiers="no switch tiers: a 3-D torus, each chip with 6 links of 50 GB/s; twisting the wrap-around "
              "links raises bisection up to 1.63× with no added hardware",
        switch_type="no packet switches: 48 Palomar OCSes with 136 ports each (128 used, 8 spare) steer "
                    "light with MEMS mirrors and rewire in milliseconds",
        tor_redundancy="the OCS wires around a failed cube; 8 spare ports per OCS; goodput holds at "
                       "99.0–99.5% host availability",
        load_balancing="dimension-order routing fixed in advance: nothing to hash, nothing shared; XLA "
                       "chooses the collective for each slice shape",
        congestion_control="none needed: circuits owned by one slice, fixed routes, credits on each link",
        front_end="each CPU host drives 4 chips; SparseCore turns the ICI into 128 TiB of remote memory",
        failure_handling="dead cubes are left out when the scheduler wires a torus; at 99.0–99.5% host "
                         "availability a slice of a quarter of the machine keeps 75% goodput",
        collective_library="XLA chooses the collective for the slice; per-job topology gains 1.2–2.3×",
        reported_results="2.1× TPU v3 (2.7× per watt); 1.2–1.7× an A100; near 60% of peak for LLMs; "
                         "PaLM held 57.8% for 50 days",
        citation="Jouppi et al. (2023), ISCA", bibkey="jouppi2023tpuv4"),
    "rail_only": Design(
        name="MIT rail-only", pattern="rail-only (spine deleted)",
        scale_unit="a full-bisection network for each rail (8 rails for 8-GPU servers); studied at 32,768 "
                   "and 65,536 GPUs. HPN's Table 4 priced a rail-only tier 2 at over 120K GPUs per pod and "
                   "did not build it",
        tiers="leaves only, no spine; traffic bound for another rail crosses NVLink inside the server "
              "first (NCCL's PXN)",
        switch_type="radices 64, 128 and 256 studied; 32,768 GPUs at radix 128 need 256 switches against "
                    "the Clos's 1,280",
        tor_redundancy="links and switches as in a Clos (rail switches can be duplicated); the hard case "
                       "is one failed GPU",
        load_balancing="not covered: the design counts on a sparse traffic matrix (over 99% of GPU pairs "
                       "never talk)",
        congestion_control="—", front_end="—",
        failure_handling="the replacement GPU has to sit on the failed one's rail, in a server with "
                         "NVLink capacity to spare; the paper suggests moving the HB domain or adding "
                         "optical switches",
        collective_library="unmodified NCCL, PXN for the occasional cross-rail transfer",
        reported_results="0.9–4.1% from an ideal all-NVLink machine (dense); MoE all-to-all 8.2–11.2% "
                         "slower; 38–77% less network cost",
        citation="Wang et al. (2024), rail-only", bibkey="wang2024railonly"),
}
"""The comparison matrix of source 001, section 13.1: one column per design, one field per row."""


# -- scale units ------------------------------------------------------------------------

@dataclass(frozen=True)
class HpnScale:
    """Outputs of ``hpn_scale``: HPN's scale units for one chip generation and NIC speed."""

    radix: int
    """400G ports on one switch chip."""
    gpus_per_tor: int
    """GPUs under one ToR of a plain Clos (half the ports down, one 400G port per GPU)."""
    gpus_per_tor_pair: int
    """Dual-ToR: each NIC's bandwidth split over two switches, so a pair faces twice the GPUs."""
    gpus_per_segment: int
    """Rail-optimised: 8 ToR pairs, one per rail."""
    segments_single_plane: int
    """Segments an aggregation switch at 1:1 reaches when every ToR of a segment links to it (16 per segment)."""
    segments_dual_plane: int
    """Segments at 1:1 with dual-plane (each ToR reaches only its plane: 8 links per segment)."""
    segments_per_pod: int
    """Segments at ``core_ratio``:1 toward the core: the aggregation switch's down ports ÷ 8."""
    gpus_plain_pod: int
    """A plain Clos pod (one ToR per NIC): half the dual-ToR pod, as the source's doubling argument has it
    (HPN's "2K")."""
    gpus_dual_tor_pod: int
    """Dual-ToR and rail-optimised, one plane, 1:1: ``segments_single_plane × gpus_per_segment`` ("4K")."""
    gpus_dual_plane: int
    """Pod at 1:1 with dual-plane (HPN's "8K")."""
    gpus_per_pod: int
    """Pod at ``core_ratio``:1 (HPN's "15K")."""
    agg_down_ports: int
    """Aggregation-switch ports facing the segments at ``core_ratio``:1 (120 of 128)."""
    agg_up_ports: int
    """Aggregation-switch ports facing the core at ``core_ratio``:1 (8 of 128)."""
    core_ports_freed_pct: float
    """Share of the 1:1 design's core-facing ports turned to face segments: 56 of 64 = 87.5%."""
    agg_ports_moved_pct: float
    """The same ports as a share of all the aggregation switch's ports: 56 of 128 = 43.75%."""
    pod_power_mw: float
    """``gpus_per_pod × 1.2 kW``, MW."""
    gpus_per_building: int
    """``18 MW / 1.2 kW``: the GPUs one building can power."""
    buildings_needed: float
    """``pod_power_mw / building_mw``: 1.02 for HPN's own pod, 4.10 for the full-radix 102.4T pod."""
    binding: str
    """"building power" when the pod draws more than one building (``buildings_needed > 1``), else
    "switch ports". No slack: HPN's own pod, 18.4 MW at the rounded 1.2 kW, reads "building power"."""


def hpn_scale(chip_tbps: float = 51.2, nic_gbps: int = 400, *, rails: int = 8, core_ratio: int = 15,
              segments: int | None = None, building_mw: float = BUILDING_LIMIT_MW,
              kw_per_gpu: float = BUILDING_KW_PER_GPU) -> HpnScale:
    """HPN's chain of scale units, from the switch chip and the NIC bandwidth per GPU.

    With ``k = chip_tbps × 1000 / 400`` ports of 400G and ``f = 400 / nic_gbps``::

        GPUs per ToR        = k / 2 × f                 (half down, half up)          64 at 51.2T, 400G
        GPUs per ToR pair   = k × f                     (dual-ToR: 200G to each)     128
        GPUs per segment    = rails × k × f             (rail-optimised)           1,024
        segments at 1:1     = (k / 2) / (2 × rails)     (all 16 ToRs to every agg)     4   (4,096: "4K")
        segments, dual-plane= (k / 2) / rails           (8 ToRs of one plane)          8   (8,192: "8K")
        segments at r:1     = (k × r / (r + 1)) / rails (8 ToRs per segment)          15   (15,360: "15K")

    Every switch in the pod is built from the same chip, so at 102.4T the
    aggregation switch has 240 ports down and reaches 30 segments: 61,440
    GPUs. The source's "30,720" keeps 15 segments; pass ``segments=15`` for it.
    A plain Clos pod (one ToR per NIC) is half the dual-ToR pod, following the
    source's argument that dual-ToR doubles both tiers ("2K", "4K").

    Power is ``kw_per_gpu`` per GPU all-in; the building binds once the pod
    draws more than ``building_mw`` (no slack: at the rounded 1.2 kW, HPN's
    own 15,360-GPU pod is 2.4% over one building).

    Source: source 001, "Reading the scale row"; Qian et al. (2024), Table 2.
    """
    chip_tbps = real("chip_tbps", chip_tbps, low=0.0, low_open=True, unit="Tbps")
    nic_gbps = whole("nic_gbps", nic_gbps, low=1, unit="Gbps")
    rails = whole("rails", rails, low=1)
    core_ratio = whole("core_ratio", core_ratio, low=1)
    building_mw = real("building_mw", building_mw, low=0.0, low_open=True, unit="MW")
    kw_per_gpu = real("kw_per_gpu", kw_per_gpu, low=0.0, low_open=True, unit="kW")
    radix = int(round(chip_tbps * 1000 / PORT_GBPS))
    if radix < 2 or radix * PORT_GBPS != round(chip_tbps * 1000):
        raise ValueError(f"chip_tbps must be a whole number (>= 2) of 400G ports, got {chip_tbps}")
    per_port = PORT_GBPS / nic_gbps
    pair = int(radix * per_port)
    if pair < 2:
        raise ValueError(f"nic_gbps must leave at least one GPU per ToR, got {nic_gbps}")
    down = radix * core_ratio // (core_ratio + 1)
    up = radix - down
    if segments is None:
        segments = down // rails
    segments = whole("segments", segments, low=0)
    seg_gpus = rails * pair
    single = radix // 2 // (2 * rails)
    pod = segments * seg_gpus
    power = pod * kw_per_gpu / 1000
    building = int(building_mw * 1000 / kw_per_gpu + 1e-9)
    freed = radix // 2 - up
    return HpnScale(
        radix=radix, gpus_per_tor=pair // 2, gpus_per_tor_pair=pair, gpus_per_segment=seg_gpus,
        segments_single_plane=single, segments_dual_plane=radix // 2 // rails,
        segments_per_pod=segments, gpus_plain_pod=single * seg_gpus // 2, gpus_dual_tor_pod=single * seg_gpus,
        gpus_dual_plane=radix // 2 // rails * seg_gpus, gpus_per_pod=pod, agg_down_ports=down, agg_up_ports=up,
        core_ports_freed_pct=100.0 * freed / (radix // 2), agg_ports_moved_pct=100.0 * freed / radix,
        pod_power_mw=power, gpus_per_building=building, buildings_needed=power / building_mw,
        binding="building power" if power > building_mw else "switch ports")


def meta_zone(racks: int = 192, gpus_per_rack: int = 16, pods: int = 8) -> tuple[int, int]:
    """Meta's Llama 3 pod and cluster: ``racks × gpus_per_rack`` (3,072) and ``pods ×`` that (24,576: "24K").

    Source: source 001, scale row; Grattafiori et al. (2024), section 3.3.1.
    """
    racks = whole("racks", racks, low=1)
    gpus_per_rack = whole("gpus_per_rack", gpus_per_rack, low=1)
    pods = whole("pods", pods, low=1)
    pod = racks * gpus_per_rack
    return pod, pod * pods


def megascale_tor_set(chip_tbps: float = 25.6, tors: int = 8, gpus_per_server: int = 8,
                      split_gbps: int = 200) -> tuple[int, int]:
    """MegaScale's ToR set: servers = half the chip's 400G ports, each split into two ``split_gbps`` links.

    A Tomahawk 4 (25.6T, 64 × 400G) has 32 downward 400G ports, each split into
    two 200G links, one to each server: 64 servers; ``tors`` such ToRs (one per rail) serve
    ``64 × gpus_per_server`` = 512 GPUs at one switch hop. Returns (servers, GPUs).

    Source: source 001, scale row; Jiang et al. (2024), section 3.
    """
    chip_tbps = real("chip_tbps", chip_tbps, low=0.0, low_open=True, unit="Tbps")
    tors = whole("tors", tors, low=1)
    gpus_per_server = whole("gpus_per_server", gpus_per_server, low=1)
    split_gbps = whole("split_gbps", split_gbps, low=1, high=PORT_GBPS, unit="Gbps")  # a split of one port
    downlinks = int(round(chip_tbps * 1000 / PORT_GBPS)) // 2
    servers = downlinks * PORT_GBPS // split_gbps
    if servers < 1:
        raise ValueError(f"chip_tbps must give at least one downlink, got {chip_tbps}")
    return servers, servers * gpus_per_server


def tpu_v4_machine(ocs_count: int = 48, ocs_ports: int = 128, faces: int = 6, links_per_face: int = 16,
                   chips_per_cube: int = 64, chips_per_host: int = 4) -> tuple[int, int, int]:
    """TPU v4's machine: cubes an OCS layer can wire, and the chips and hosts they hold.

    A 4×4×4 cube has ``faces × links_per_face`` = 96 optical links leaving it,
    each on one OCS port, so ``ocs_count × ocs_ports / 96`` cubes can be wired:
    48 × 128 / 96 = 64 cubes, 4,096 chips, 1,024 hosts. Returns (cubes, chips, hosts).

    Source: source 001, scale row; Jouppi et al. (2023), section 2.
    """
    ocs_count = whole("ocs_count", ocs_count, low=0)
    ocs_ports = whole("ocs_ports", ocs_ports, low=1)
    faces = whole("faces", faces, low=1)
    links_per_face = whole("links_per_face", links_per_face, low=1)
    chips_per_cube = whole("chips_per_cube", chips_per_cube, low=1)
    chips_per_host = whole("chips_per_host", chips_per_host, low=1)
    cubes = ocs_count * ocs_ports // (faces * links_per_face)
    chips = cubes * chips_per_cube
    return cubes, chips, chips // chips_per_host


# -- full-bisection Clos port arithmetic -------------------------------------------------

def clos_max_gpus(radix: int, tiers: int) -> int:
    """Endpoints a full-bisection Clos of ``tiers`` tiers of radix-``radix`` switches reaches: ``2 (k/2)^t``.

    One tier: ``k``; two: ``k²/2``; three: ``k³/4``. Source: the fat-tree count
    (Al-Fares et al., 2008), as used by the rail-only paper's Table II.
    """
    radix = whole("radix", radix, low=2, unit="ports")
    tiers = whole("tiers", tiers, low=1)
    return 2 * (radix // 2) ** tiers


def clos_tiers(gpus: int, radix: int) -> int:
    """The fewest tiers of radix-``radix`` switches a full-bisection Clos of ``gpus`` endpoints needs (0 for none)."""
    gpus = whole("gpus", gpus, low=0, unit="GPUs")
    radix = whole("radix", radix, low=2, unit="ports")
    if gpus <= 1:
        return 0
    if radix == 2 and gpus > 2:
        raise ValueError("radix must be at least 4 to connect more than two GPUs in a Clos, got 2")
    tiers = 1
    while clos_max_gpus(radix, tiers) < gpus:
        tiers += 1
    return tiers


def clos_ports(gpus: int, radix: int) -> int:
    """Switch ports in use in a full-bisection Clos of ``gpus`` endpoints: ``gpus × (2t − 1)``.

    Each tier below the top has ``gpus`` ports facing down and ``gpus`` up;
    the top tier only faces down. Ports on partly used switches are not counted.
    """
    return whole("gpus", gpus, low=0) * max(0, 2 * clos_tiers(gpus, radix) - 1)


def clos_switches(gpus: int, radix: int) -> int:
    """Switches of a full-bisection Clos: ``gpus / (k/2)`` per lower tier, ``gpus / k`` at the top (rounded up)."""
    tiers = clos_tiers(gpus, radix)
    if tiers == 0:
        return 0
    half = radix // 2
    return (tiers - 1) * math.ceil(gpus / half) + math.ceil(gpus / radix)


@dataclass(frozen=True)
class RailOnlyCost:
    """Unit prices of the rail-only paper's cost model."""

    port_usd: float = 694.0
    xcvr_usd: float = 199.0
    port_w: float = 18.0
    xcvr_w: float = 9.0


RAIL_ONLY_COST = RailOnlyCost()
"""$694 and 18 W per 400G switch port, $199 and 9 W per transceiver (Wang et al. 2024)."""


@dataclass(frozen=True)
class Table2Row:
    """Outputs of ``table2_row``: one cell pair of the rail-only paper's Table II."""

    gpus: int
    radix: int
    hb_domain: int
    clos_tiers: int
    clos_switches: int
    clos_ports: int
    rail_tiers: int
    rail_switches: int
    rail_ports: int
    clos_cost_musd: float
    rail_cost_musd: float
    saving_pct: float
    """``100 (1 − rail / Clos)`` of network cost (ports and transceivers, GPU end included)."""
    ports_removed: int
    cost_removed_musd: float
    power_removed_mw: float


def table2_row(gpus: int, radix: int, hb_domain: int = 256, prices: RailOnlyCost = RAIL_ONLY_COST) -> Table2Row:
    """A rail-optimised full-bisection Clos against rail-only, for ``gpus`` GPUs and radix-``radix`` switches.

    Rail-only builds one full-bisection network per rail: ``hb_domain`` rails of
    ``gpus / hb_domain`` GPUs each (the paper's high-bandwidth domain of 256
    GPUs). Cost counts the switch ports in use and one transceiver per port
    plus one per GPU NIC::

        cost = ports × (port_usd + xcvr_usd) + gpus × xcvr_usd
        power = ports × (port_w + xcvr_w) + gpus × xcvr_w

    Source: source 001, "what the spine costs"; Wang et al. (2024), Table II.
    """
    gpus = whole("gpus", gpus, low=1, unit="GPUs")
    radix = whole("radix", radix, low=4, unit="ports")
    hb_domain = whole("hb_domain", hb_domain, low=1, unit="GPUs")
    if gpus % hb_domain:
        raise ValueError(f"gpus must be a multiple of hb_domain={hb_domain}, got {gpus}")
    per_rail = gpus // hb_domain
    c_t, c_p, c_s = clos_tiers(gpus, radix), clos_ports(gpus, radix), clos_switches(gpus, radix)
    r_t = clos_tiers(per_rail, radix)
    r_p = hb_domain * clos_ports(per_rail, radix)
    r_s = hb_domain * clos_switches(per_rail, radix)
    per_port = prices.port_usd + prices.xcvr_usd
    clos_cost = c_p * per_port + gpus * prices.xcvr_usd
    rail_cost = r_p * per_port + gpus * prices.xcvr_usd
    removed = c_p - r_p
    return Table2Row(
        gpus=gpus, radix=radix, hb_domain=hb_domain, clos_tiers=c_t, clos_switches=c_s, clos_ports=c_p,
        rail_tiers=r_t, rail_switches=r_s, rail_ports=r_p, clos_cost_musd=clos_cost / 1e6,
        rail_cost_musd=rail_cost / 1e6, saving_pct=100 * (1 - rail_cost / clos_cost), ports_removed=removed,
        cost_removed_musd=removed * per_port / 1e6,
        power_removed_mw=removed * (prices.port_w + prices.xcvr_w) / 1e6)


TABLE2_STATED: dict[tuple[int, int], float] = {
    (32_768, 64): 38.0, (32_768, 128): 77.0, (32_768, 256): 62.0,
    (65_536, 64): 38.0, (65_536, 128): 38.0, (65_536, 256): 77.0,
}
"""Network-cost savings (%) of rail-only quoted by source 001 from the rail-only paper's Table II."""


@dataclass(frozen=True)
class SpineCost:
    """Outputs of ``spine_cost``: what deleting the spine removes."""

    switches_removed: int
    ports_removed: int
    cost_musd: float
    power_mw: float


def spine_cost(clos_switches: int = 1_280, rail_switches: int = 256, radix: int = 128,
               prices: RailOnlyCost = RAIL_ONLY_COST) -> SpineCost:
    """Switches, ports, dollars and watts removed when ``clos_switches`` become ``rail_switches``.

    ``ports = (clos − rail) × radix``; every removed port takes its transceiver
    with it: ``cost = ports × ($694 + $199)``, ``power = ports × (18 + 9) W``.
    1,024 switches × 128 = 131,072 ports, $117 million, 3.5 MW.

    Source: source 001, "Worked example: what the spine costs"; Wang et al. (2024).
    """
    clos_switches = whole("clos_switches", clos_switches, low=0)
    rail_switches = whole("rail_switches", rail_switches, low=0, high=clos_switches)
    radix = whole("radix", radix, low=1, unit="ports")
    removed = clos_switches - rail_switches
    ports = removed * radix
    return SpineCost(switches_removed=removed, ports_removed=ports,
                     cost_musd=ports * (prices.port_usd + prices.xcvr_usd) / 1e6,
                     power_mw=ports * (prices.port_w + prices.xcvr_w) / 1e6)


def tiers_for(gpus: int, chip_tbps: float = 51.2, nic_gbps: int = 400) -> int:
    """Tiers a full-bisection Clos needs for ``gpus`` GPUs when each GPU has one ``nic_gbps`` port.

    The switch's radix at that speed is ``chip_tbps × 1000 / nic_gbps``
    (128 at 51.2T and 400G, 256 at 102.4T and 400G, 64 at 51.2T and 800G).
    ``chip_tbps`` is at most a million Tbps (about 10,000 times today's chips), so the
    radix stays a finite whole number.
    Source: source 001, section 13.8 (Panel 13.8).
    """
    chip_tbps = real("chip_tbps", chip_tbps, low=0.0, low_open=True, high=1e6, unit="Tbps")
    nic_gbps = whole("nic_gbps", nic_gbps, low=1, unit="Gbps")
    radix = int(chip_tbps * 1000 // nic_gbps)
    if radix < 4:
        raise ValueError(f"nic_gbps must leave a radix of at least 4 ports, got {nic_gbps} on {chip_tbps} Tbps")
    return clos_tiers(gpus, radix)


__all__.append("tiers_for")


@dataclass(frozen=True)
class TierCounts:
    """Outputs of ``tier_counts``: Clos tiers for one GPU count at four chip and NIC generations."""

    gpus: int
    chip_51t_nic_400g: int
    chip_51t_nic_800g: int
    chip_102t_nic_400g: int
    chip_102t_nic_800g: int


def tier_counts(gpus: int) -> TierCounts:
    """``tiers_for(gpus, chip, nic)`` for 51.2T/102.4T chips and 400G/800G NICs (Panel 13.8)."""
    gpus = whole("gpus", gpus, low=0, unit="GPUs")
    return TierCounts(gpus, tiers_for(gpus, 51.2, 400), tiers_for(gpus, 51.2, 800),
                      tiers_for(gpus, 102.4, 400), tiers_for(gpus, 102.4, 800))


__all__ += ["TierCounts", "tier_counts"]


# -- Animation 13.1 as a stepper: one transfer through each pattern ----------------------------

TRANSFER_PATHS: dict[str, tuple[tuple[str, str], ...]] = {
    "any-to-any Clos": (("GPU 0, server A", "NIC"), ("leaf 0", "network"), ("spine", "network"),
                        ("leaf 5", "network"), ("GPU 5, server B", "network")),
    "rail-only": (("GPU 0, server A", "NIC"), ("GPU 5, server A", "NVLink"), ("rail-5 switch", "network"),
                  ("GPU 5, server B", "network")),
    "dual-plane (HPN)": (("GPU 0, server A", "NIC"), ("ToR1, rail 0", "network"), ("agg, plane 1", "network"),
                         ("ToR1, rail 5", "network"), ("GPU 5, server B", "network")),
    "torus": (("chip (0,0,0)", "chip"), ("chip (1,0,0)", "ICI"), ("chip (2,0,0)", "ICI"), ("chip (2,1,0)", "ICI")),
}
"""One transfer, from the first GPU of server A to the sixth of server B (or across a torus), as the
nodes it passes and the kind of link that reaches each (source 001, Animation 13.1)."""


@dataclass(frozen=True)
class TransferStep:
    """Outputs of ``transfer_step``."""

    pattern: str
    step: int
    at: str
    """The node the transfer has reached."""
    link: str
    """The kind of link just crossed ("start" at step 0)."""
    network_links: int
    """Switched-network links crossed so far."""
    total_links: int
    """Links of the whole path."""
    done: bool


def transfer_step(pattern: int = 0, step: int = 0) -> TransferStep:
    """Where one transfer is after ``step`` links in pattern ``pattern`` (0-3, the order of ``TRANSFER_PATHS``).

    Steps beyond the end of a shorter path stay at its destination.
    """
    names = tuple(TRANSFER_PATHS)
    name = names[whole("pattern", pattern, low=0, high=len(names) - 1)]
    step = whole("step", step, low=0, high=8)
    path = TRANSFER_PATHS[name]
    s = min(step, len(path) - 1)
    crossed = path[1:s + 1]
    return TransferStep(pattern=name, step=step, at=path[s][0], link="start" if s == 0 else path[s][1],
                        network_links=sum(kind == "network" for _, kind in crossed), total_links=len(path) - 1,
                        done=s == len(path) - 1)


__all__ += ["TRANSFER_PATHS", "TransferStep", "transfer_step"]


# -- step 7 of the procedure: the front end's checkpoint burst ------------------------------------------

@dataclass(frozen=True)
class CheckpointBurst:
    """Outputs of ``checkpoint_burst``."""

    total_tb: float
    """Bytes written at once, TB: ``gpus × gb_per_gpu / 1000``."""
    rate_tbytes_per_s: float
    """The write rate that fits the pause, TB/s: ``total_tb / pause_s``."""
    pause_at_7tb_s: float
    """How long the same burst takes at Tectonic's 7 TB/s peak, s."""


TECTONIC_PEAK_TBYTES_PER_S = 7.0
"""Tectonic's peak write rate for checkpoint bursts, TB/s (source 001, matrix row "Front end")."""


def checkpoint_burst(gpus: int, gb_per_gpu: float, pause_s: float) -> CheckpointBurst:
    """The front end's checkpoint burst: ``gpus × bytes per GPU ÷ the pause the job can afford``.

    Llama 3's checkpoints run from 1 MB to 4 GB per GPU; 16,000 GPUs writing
    4 GB each put 64 TB on the front end, 9.1 s at Tectonic's 7 TB/s peak.
    Raises ``ValueError`` for a negative count or size, or a pause of zero.

    Source: source 001, step 7 of the decision procedure and the matrix's "Front end" row.
    """
    gpus = whole("gpus", gpus, low=0, unit="GPUs")
    gb_per_gpu = real("gb_per_gpu", gb_per_gpu, unit="GB")
    pause_s = real("pause_s", pause_s, low=0.0, low_open=True, unit="s")
    total = gpus * gb_per_gpu / 1000
    return CheckpointBurst(total_tb=total, rate_tbytes_per_s=total / pause_s,
                           pause_at_7tb_s=total / TECTONIC_PEAK_TBYTES_PER_S)


__all__ += ["CheckpointBurst", "TECTONIC_PEAK_TBYTES_PER_S", "checkpoint_burst"]


# -- the fifth pattern: Astral ------------------------------------------------------------------------

@dataclass(frozen=True)
class AstralFigures:
    """What source 001 reports of Astral (SIGCOMM 2025), read second-hand through the source."""

    gpus_in_production: int = 131_072
    """Tencent's "128K GPUs in two Pods" (binary thousands)."""
    pods_in_production: int = 2
    gpus_designed: int = 524_288
    """The largest design the source reports."""
    spread_pods: int = 32
    """Astral's experiment: one job on about 1K GPUs spread over 32 pods."""
    spread_loss_1to1_pct: tuple[float, float] = (19.0, 37.0)
    """All-to-all bandwidth lost by spreading, with a 1:1 core, %."""
    extra_loss_16to1_pct: float = 52.0
    """The further loss, up to, with a 16:1 core instead, %."""


ASTRAL = AstralFigures()
"""Astral's figures as source 001 gives them (Figures 13.2 and 13.6 of the source)."""

__all__ += ["ASTRAL", "AstralFigures"]
