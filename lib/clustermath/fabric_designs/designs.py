"""Chapter 4 ("Designs compared"): the comparison matrix, scale units, the spine's cost, Clos tiers.

Five published fabrics, each answering the same rows differently: Meta's RoCE
fabric as used for Llama 3, Alibaba HPN, ByteDance MegaScale, Google TPU v4 and
the MIT rail-only proposal. This module holds the matrix as data (one sourced
constant per design) and the port arithmetic behind the numbers in it:

* ``hpn_scale`` -- HPN's chain of scale units (64 → 128 → 1,024 → 8K → 15K GPUs)
  for a switch-chip generation and a NIC speed per GPU, and the pod's power;
* ``meta_zone``, ``megascale_tor_set``, ``tpu_v4_machine`` -- the other
  designs' scale units from their port counts;
* ``clos_tiers``, ``clos_ports``, ``table2_row`` -- full-bisection Clos port
  counts and the rail-only paper's Table II (switches, ports, cost, power);
* ``spine_cost`` -- what deleting the spine removes.

Units: Tb/s for switch chips, Gb/s for ports and NICs, watts, US dollars.
Impossible input raises ``ValueError`` naming the argument (``clustermath.validate``).

Sources: source 001 (chapter 13, "Designs compared"); Gangidi et al. (2024),
Qian et al. (2024, HPN), Jiang et al. (2024, MegaScale), Jouppi et al. (2023,
TPU v4), Wang et al. (2024, rail-only), Grattafiori et al. (2024, Llama 3).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..validate import one_of, real, whole

__all__ = [
    "BUILDING_KW_PER_GPU", "BUILDING_LIMIT_MW", "BUILDING_SLACK", "DESIGNS", "Design", "HpnScale", "MATRIX_ROWS",
    "PORT_GBPS", "RAIL_ONLY_COST", "RailOnlyCost", "SpineCost", "Table2Row", "TABLE2_STATED", "clos_max_gpus",
    "clos_ports", "clos_switches", "clos_tiers", "hpn_scale", "megascale_tor_set", "meta_zone",
    "spine_cost", "table2_row", "tpu_v4_machine",
]

PORT_GBPS = 400
"""Speed of one switch port in the 2024 designs, Gb/s (a 51.2 Tb/s chip has 128 of them)."""
BUILDING_LIMIT_MW = 18.0
"""HPN's power limit per building, MW (source 001, step 2 of the decision procedure)."""
BUILDING_KW_PER_GPU = 1.2
"""All-in power per GPU implied by 18 MW for about 15,000 GPUs, kW."""

BUILDING_SLACK = 0.05
"""How far over one building a pod may go and still count as "sized to the building": HPN's 15 segments
are 15,360 GPUs, 18.4 MW at 1.2 kW, which the source rounds to "about 15,000" and 18 MW."""

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
        scale_unit="AI Zone: two-stage non-blocking Clos (RTSW to CTSW); Llama 3 pod = 192 racks × 16 GPUs "
                   "= 3,072 GPUs at full bisection; 8 pods = 24K",
        tiers="1:1 in a zone, rack uplinks at 1:1.125 for headroom; ATSW layer deliberately oversubscribed; "
              "1:7 between Llama 3 pods",
        switch_type="CTSW: modular deep-buffer chassis (Arista 7800), memory split statically per port; "
                    "RTSW: Minipack2 (OCP)",
        tor_redundancy="one ToR per rack; 1:1.125 uplinks survive two failed uplinks at full speed",
        load_balancing="enhanced ECMP on the destination QP + QP scaling (16 flows per GPU pair; AllReduce "
                       "up to 40% faster); TE inside zones +5–10%",
        congestion_control="no DCQCN at 400G: PFC, deep CTSW buffers and NCCL's receiver-driven "
                           "clear-to-send; at 200G DCQCN with a relaxed 5 MB ECN threshold",
        front_end="separate FE fabric; Tectonic: 240 PB on 7,500 SSD servers, 2 TB/s sustained, "
                  "7 TB/s checkpoint peak",
        failure_handling="Llama 3: 466 interruptions in 54 days (419 unexpected, 78% hardware, 8.4% "
                         "switches and cables), 3 needed a person, >90% effective training time",
        collective_library="NCCLX: chunks tuned to a 22 µs RTT, clear-to-send prioritised (P90 43 → 4 µs); "
                           "co-tuning >2×",
        reported_results=">2× from co-tuning; AllReduce up to 40% faster than ECMP; Llama 3 BF16 MFU "
                         "43% / 41% / 38%",
        citation="Gangidi et al. (2024), SIGCOMM; Grattafiori et al. (2024), section 3.3",
        bibkey="gangidi2024rdma"),
    "hpn": Design(
        name="Alibaba HPN", pattern="any-to-any, single-chip dual-plane, 15:1 core",
        scale_unit="segment: 16 ToRs, 136 hosts, 1,024 active GPUs + 64 backup; pod: 15 segments "
                   "(15K GPUs); a core tier beyond",
        tiers="two tiers per pod; ToR 128 active ports down, 60 up (plus 8 backup host ports); "
              "aggregation 120 down : 8 up = 15:1 to the core",
        switch_type="51.2 Tb/s single chip, 128 × 400G; multi-chip switches had 3.77× more critical "
                    "failures in Alibaba's fleet",
        tor_redundancy="non-stacked dual-ToR: two bonded 200G ports per NIC, ARP and BGP to both; "
                       "one link lost costs 6.25%",
        load_balancing="dual-plane (no hash at tier 2); hosts pick disjoint paths (RePaC) and send on "
                       "the least-loaded connection (+34.7%)",
        congestion_control="not detailed (the paper is about topology); RoCEv2 over PFC assumed",
        front_end="a ninth NIC, 2 × 200G per host, on a non-blocking FE; storage kept off the back end",
        failure_handling="dual-ToR turns a halt into a 6.25% loss; 64 backup GPUs per segment; INT "
                         "probes check wiring; 8 months without a single-point failure",
        collective_library="NCCL-level: each message on the connection with fewest queued bytes; paths "
                           "made disjoint in advance",
        reported_results="14.9% faster training on >2,300 GPUs; AllReduce up to 59.3% faster on 448 GPUs; "
                         "ToR queues −91.8%",
        citation="Qian et al. (2024), SIGCOMM", bibkey="qian2024hpn"),
    "megascale": Design(
        name="ByteDance MegaScale", pattern="any-to-any three-tier Clos, 2× uplinks",
        scale_unit="ToR set: up to 64 servers (512 GPUs) on 8 ToRs; cluster: three-tier Clos, >10,000 "
                   "GPUs (12,288 in the reported run)",
        tiers="three tiers, 32 down / 32 up per switch (1:1); ToR downlinks split into 2 × 200G, so the "
              "uplinks have 2× the downlink bandwidth",
        switch_type="Broadcom Tomahawk 4 at every tier: 25.6 Tb/s, 64 × 400G, single chip",
        tor_redundancy="multi-rail: a server's 8 NICs reach 8 different ToRs; a standby pool replaces "
                       "failed nodes",
        load_balancing="2× uplink bandwidth absorbs collisions; communication-heavy ranks placed under "
                       "one ToR set",
        congestion_control="default DCQCN paused too much in all-to-all: Swift's RTT signal + DCQCN's "
                           "ECN response; NCCL retransmit timers tuned for flaps",
        front_end="HDFS; checkpoints in two stages: seconds to copy GPU state into pinned host "
                  "memory, then a background write to HDFS",
        failure_handling="heartbeat with RDMA counters → suspend → diagnose → evict → resume; >100 "
                         "restarts in weeks, >90% automatic, <10 min to diagnose",
        collective_library="TP, PP and DP traffic all hidden behind compute (worth 2.2, 2.5 and 1.5 "
                           "MFU points); "
                           "initialisation 1,047 s → <5 s",
        reported_results="55.2% MFU at 12,288 GPUs (1.34× Megatron-LM); 65.3% at 256 GPUs",
        citation="Jiang et al. (2024), NSDI", bibkey="jiang2024megascale"),
    "tpu": Design(
        name="Google TPU v4", pattern="3-D torus behind optical circuit switches",
        scale_unit="cube: 64 chips, 16 hosts, one rack; machine: 64 cubes = 4,096 chips, 1,024 hosts",
        tiers="no tiers: 3-D torus, 6 links × 50 GB/s per chip; twisted wrap-arounds raise bisection "
              "up to 1.63×",
        switch_type="no packet switches: 48 Palomar OCSes of 136 ports (128 used + 8 spare), MEMS "
                    "mirrors, millisecond reconfiguration",
        tor_redundancy="the OCS routes around a failed cube; 8 spare ports per OCS; goodput holds at "
                       "99.0–99.5% host availability",
        load_balancing="deterministic dimension-order routing: no hash, no sharing; XLA picks the "
                       "collective for the slice shape",
        congestion_control="none needed: dedicated circuits, deterministic routes, link-level credits",
        front_end="4 chips per CPU host; SparseCore uses the ICI as a 128 TiB remote-memory fabric",
        failure_handling="dead cubes are routed around by the scheduler; at 99.0–99.5% host "
                         "availability a slice of a quarter of the machine still reaches 75% goodput",
        collective_library="XLA chooses the collective for the slice; per-job topology gains 1.2–2.3×",
        reported_results="2.1× TPU v3 (2.7× per watt); 1.2–1.7× A100; ~60% of peak on LLMs; PaLM 57.8% "
                         "over 50 days",
        citation="Jouppi et al. (2023), ISCA", bibkey="jouppi2023tpuv4"),
    "rail_only": Design(
        name="MIT rail-only", pattern="rail-only (spine deleted)",
        scale_unit="one full-bisection network per rail (8 rails for 8-GPU servers); studied at 32,768 "
                   "and 65,536 GPUs; HPN's tier 2 is rail-only, at 120K GPUs per pod",
        tiers="leaf tier only; cross-rail traffic first takes one NVLink hop (NCCL PXN)",
        switch_type="radix 64 / 128 / 256 evaluated; 32,768 GPUs at radix 128: 256 switches, not 1,280",
        tor_redundancy="as a Clos for links and switches; a single failed GPU is the hard case",
        load_balancing="not addressed: relies on a sparse traffic matrix (>99% of GPU pairs silent)",
        congestion_control="—", front_end="—",
        failure_handling="a replacement GPU must be on the same rail with spare NVLink capacity",
        collective_library="stock NCCL, PXN for the rare cross-rail transfer",
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
    """Segments an aggregation layer at 1:1 reaches when every ToR links to every aggregation switch."""
    segments_dual_plane: int
    """Segments at 1:1 with dual-plane (each ToR reaches only its plane: half the links per segment)."""
    segments_per_pod: int
    """Segments at 15:1 toward the core (15/16 of the aggregation ports face down)."""
    gpus_dual_plane: int
    """Pod at 1:1 with dual-plane (HPN's "8K")."""
    gpus_per_pod: int
    """Pod at 15:1 (HPN's "15K")."""
    pod_power_mw: float
    """``gpus_per_pod × 1.2 kW``, MW."""
    gpus_per_building: int
    """``18 MW / 1.2 kW``: the GPUs one building can power."""
    buildings_needed: float
    """``pod_power_mw / building_mw``: 1.02 for HPN's own pod (sized to the building), 2.05 at 102.4T."""
    binding: str
    """"building power" when the pod needs more than ``BUILDING_SLACK`` over one building, else "switch ports"."""


def hpn_scale(chip_tbps: float = 51.2, nic_gbps: int = 400, *, rails: int = 8, core_ratio: int = 15,
              building_mw: float = BUILDING_LIMIT_MW, kw_per_gpu: float = BUILDING_KW_PER_GPU) -> HpnScale:
    """HPN's chain of scale units, from the switch chip and the NIC bandwidth per GPU.

    With ``k = chip_tbps × 1000 / 400`` ports of 400G and ``f = 400 / nic_gbps``::

        GPUs per ToR        = k / 2 × f                 (half down, half up)          64 at 51.2T, 400G
        GPUs per ToR pair   = k × f                     (dual-ToR: 200G to each)     128
        GPUs per segment    = rails × k × f             (rail-optimised)           1,024
        segments at 1:1     = (k / 2) / (2 × rails)     (every ToR to every agg)       4
        segments, dual-plane= (k / 2) / rails                                          8   (8,192: "8K")
        segments at r:1     = (k × r / (r + 1)) / rails / (k / 128)                   15   (15,360: "15K")

    The last line keeps HPN's pod of 15 segments when the chip grows, as the
    source does ("a pod built the same way"): a 102.4T pod is 15 × 2,048 =
    30,720 GPUs. Power is ``kw_per_gpu`` per GPU all-in; the binding
    constraint is the building once the pod draws more than ``building_mw``.

    Source: source 001, "Reading the scale row"; Qian et al. (2024), Table 2.
    """
    chip_tbps = real("chip_tbps", chip_tbps, low=0.0, low_open=True, unit="Tb/s")
    nic_gbps = whole("nic_gbps", nic_gbps, low=1, unit="Gb/s")
    rails = whole("rails", rails, low=1)
    core_ratio = whole("core_ratio", core_ratio, low=1)
    building_mw = real("building_mw", building_mw, unit="MW")
    kw_per_gpu = real("kw_per_gpu", kw_per_gpu, low=0.0, low_open=True, unit="kW")
    radix = int(round(chip_tbps * 1000 / PORT_GBPS))
    if radix < 2 or radix * PORT_GBPS != round(chip_tbps * 1000):
        raise ValueError(f"chip_tbps must be a whole number (>= 2) of 400G ports, got {chip_tbps}")
    per_port = PORT_GBPS / nic_gbps
    pair = int(radix * per_port)
    if pair < 2:
        raise ValueError(f"nic_gbps must leave at least one GPU per ToR, got {nic_gbps}")
    generation = radix / 128
    down = radix * core_ratio // (core_ratio + 1)
    segments = int(down / rails / generation)
    seg_gpus = rails * pair
    pod = segments * seg_gpus
    power = pod * kw_per_gpu / 1000
    building = int(building_mw * 1000 / kw_per_gpu + 1e-9)
    return HpnScale(
        radix=radix, gpus_per_tor=pair // 2, gpus_per_tor_pair=pair, gpus_per_segment=seg_gpus,
        segments_single_plane=radix // 2 // (2 * rails), segments_dual_plane=radix // 2 // rails,
        segments_per_pod=segments, gpus_dual_plane=radix // 2 // rails * seg_gpus, gpus_per_pod=pod,
        pod_power_mw=power, gpus_per_building=building, buildings_needed=power / building_mw if building_mw else math.inf,
        binding="building power" if power > building_mw * (1 + BUILDING_SLACK) else "switch ports")


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
    chip_tbps = real("chip_tbps", chip_tbps, low=0.0, low_open=True, unit="Tb/s")
    tors = whole("tors", tors, low=1)
    gpus_per_server = whole("gpus_per_server", gpus_per_server, low=1)
    split_gbps = whole("split_gbps", split_gbps, low=1, high=PORT_GBPS, unit="Gb/s")  # a split of one port
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
    Source: source 001, section 13.8 (Panel 13.8).
    """
    chip_tbps = real("chip_tbps", chip_tbps, low=0.0, low_open=True, unit="Tb/s")
    nic_gbps = whole("nic_gbps", nic_gbps, low=1, unit="Gb/s")
    radix = int(chip_tbps * 1000 // nic_gbps)
    if radix < 4:
        raise ValueError(f"nic_gbps must leave a radix of at least 4 ports, got {nic_gbps} on {chip_tbps} Tb/s")
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
