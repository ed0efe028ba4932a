"""Chapter 4 ("Designs compared"): the panels as explorers, and the chapter's static figures.

Every explorer is a ``ModelView`` over one model of ``fabric_designs``,
``incast``, ``load_balance``, ``redundancy`` or ``choice`` (the wing ``fabric_designs``); each
``view_*(ax)`` draws its frame once and returns ``update(inputs, mode)``,
which moves only artists created with ``animated=True``. Nothing here
computes a number the models do not.
"""
from __future__ import annotations

import html
import textwrap
from typing import Any, Callable, Mapping

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch, Rectangle

from ..fabric_designs.choice import (
    CHOICES, DEFAULTS, MOE_MEANINGFUL_PCT, PATTERN_NAMES, PATTERNS, RISKS, choose_fabric, decision_summary,
)
from ..fabric_designs.designs import (
    BUILDING_LIMIT_MW, TRANSFER_PATHS, hpn_scale, megascale_tor_set, meta_zone, table2_row, tier_counts, tiers_for,
    tpu_v4_machine, transfer_step,
)
from ..fabric_designs.incast import incast, queue_trace
from ..placement.parallelism import step_traffic
from ..fabric_designs.load_balance import expected_idle, hash_flows, polarized_loads
from ..fabric_designs.redundancy import slice_goodput
from .base import BROKEN_COLOUR, CORRECT_COLOUR, LIMIT_COLOUR, SMALL, legible, ModelView, Slider, Updater

__all__ = [
    "DECISION_STEPS", "EXPLORERS", "decision_explorer", "decision_tree_list", "figure_buffers", "figure_decision_tree",
    "figure_patterns",
    "figure_polarization", "figure_queue", "figure_scale_axis", "gpt3_traffic", "traffic_explorer", "hashing_explorer", "incast_explorer",
    "scale_explorer", "slice_explorer", "table2_explorer", "tiers_explorer",
]

Inputs = Mapping[str, Any]
GREY = "#9a9a9a"


def _status(ax: Axes, x: float = 0.02, y: float = 0.96, ha: str = "left") -> Any:
    return ax.text(x, y, "", transform=ax.transAxes, va="top", ha=ha, fontsize=8.5, animated=True,
                   bbox={"boxstyle": "round", "fc": "white", "ec": "#cccccc"})


# -- Panel 13.1: scale units ---------------------------------------------------------

_SCALE_ROWS = ("GPUs per ToR", "per ToR pair", "per segment", "pod, dual-plane 1:1", "pod at 15:1",
               "one 18 MW building")


def view_scale(ax: Axes) -> Updater:
    """HPN's chain as horizontal bars (log scale), with the other designs' units as fixed ticks."""
    y = np.arange(len(_SCALE_ROWS))
    bars = ax.barh(y, np.ones(len(y)), color=[CORRECT_COLOUR] * 5 + [GREY], height=0.6)
    for b in bars:
        b.set_animated(True)
    ax.set(yticks=y, yticklabels=_SCALE_ROWS, xscale="log", xlim=(10, 200_000), xlabel="GPUs (log scale)")
    ax.invert_yaxis()
    ax.figure.subplots_adjust(left=0.26, right=0.97, bottom=0.27, top=0.84)
    # the other designs' units as dotted lines, named above the plot on two staggered rows
    for value, name, ha, row in ((megascale_tor_set()[1], "MegaScale ToR set", "right", 0),
                                 (meta_zone()[0], "Meta pod", "right", 1),
                                 (tpu_v4_machine()[1], "TPU v4 machine", "left", 0)):
        ax.axvline(value, color=GREY, lw=0.8, ls=":")
        ax.text(value * (0.95 if ha == "right" else 1.05), 1.02 + 0.08 * row, f"{name} ({value:,})", fontsize=SMALL,
                ha=ha, color="#555555", transform=ax.get_xaxis_transform())
    labels = [ax.text(0, i, "", va="center", fontsize=SMALL, animated=True) for i in y]
    status = ax.text(1.0, -0.3, "", transform=ax.transAxes, ha="right", va="top", fontsize=8.5, animated=True)

    def update(p: Inputs, mode: Any = None) -> None:
        s = hpn_scale(p["chip_tbps"], p["nic_gbps"])
        values = (s.gpus_per_tor, s.gpus_per_tor_pair, s.gpus_per_segment, s.gpus_dual_plane, s.gpus_per_pod,
                  s.gpus_per_building)
        for bar, text, v in zip(bars, labels, values):
            bar.set_width(v)
            text.set_position((v * 1.1, text.get_position()[1]))
            text.set_text(f"{v:,}")
        flag = "  ⚠ over one building" if s.binding == "building power" else ""
        status.set_text(f"a 15:1 pod draws {s.pod_power_mw:.1f} MW, {s.buildings_needed:.2f}× one "
                        f"{BUILDING_LIMIT_MW:g} MW building: {s.binding} limits it{flag}")

    return update


def scale_explorer() -> ModelView:
    """Panel 13.1: switch-chip generation and NIC speed → GPUs per tier, pod power, the binding constraint."""
    return ModelView(
        hpn_scale, [Slider("chip_tbps", 51.2, 102.4, 51.2, step=51.2, label="switch chip, Tbps", readout_format=".1f"),
                    Slider("nic_gbps", 400, 800, 400, step=400, label="NIC per GPU, Gbps")],
        view_scale, formats={"pod_power_mw": ".1f", "buildings_needed": ".2f", "core_ports_freed_pct": ".1f",
                             "agg_ports_moved_pct": ".2f"},
        hidden=("segments_single_plane", "segments_dual_plane", "agg_down_ports", "agg_up_ports"),
        title="What one tier holds, by chip generation and NIC speed", figsize=(7.0, 3.5))


# -- Panel 13.2: Table II ------------------------------------------------------------------

def view_table2(ax: Axes) -> Updater:
    """Network cost of the rail-optimised Clos and of rail-only, $ million."""
    bars = ax.bar([0, 1], [1, 1], color=[BROKEN_COLOUR, CORRECT_COLOUR], width=0.6)
    for b in bars:
        b.set_animated(True)
    ax.set(xticks=[0, 1], xticklabels=["rail-optimised Clos", "rail-only"], ylabel="network cost, $ million",
           ylim=(0, 340))
    texts = [ax.text(i, 0, "", ha="center", va="bottom", fontsize=SMALL, animated=True) for i in (0, 1)]
    status = _status(ax, 0.98, 0.96, ha="right")

    def update(p: Inputs, mode: Any = None) -> None:
        r = table2_row(p["gpus"], p["radix"])
        for bar, text, cost, sw, tiers in zip(bars, texts, (r.clos_cost_musd, r.rail_cost_musd),
                                              (r.clos_switches, r.rail_switches), (r.clos_tiers, r.rail_tiers)):
            bar.set_height(cost)
            text.set_position((text.get_position()[0], cost + 4))
            text.set_text(f"${cost:,.0f}M\n{sw:,} switches, {tiers} tier{'s' if tiers != 1 else ''}")
        status.set_text(f"saving {r.saving_pct:.0f}% of network cost\n{r.ports_removed:,} ports, "
                        f"{r.power_removed_mw:.2f} MW removed")

    return update


def table2_explorer() -> ModelView:
    """Panel 13.2: the rail-only paper's Table II from Clos port arithmetic."""
    return ModelView(
        table2_row, [Slider("gpus", 32_768, 65_536, 32_768, step=32_768, label="GPUs"),
                     Slider("radix", 64, 256, 128, step=64, label="switch radix, ports")],
        view_table2, formats={"clos_cost_musd": ",.1f", "rail_cost_musd": ",.1f", "saving_pct": ".1f",
                              "cost_removed_musd": ",.1f", "power_removed_mw": ".2f"},
        hidden=("hb_domain",), title="What deleting the spine saves (the rail-only paper's Table II)", figsize=(6.0, 3.2))


# -- Panel 13.3: the incast -----------------------------------------------------------------

def view_incast(ax: Axes) -> Updater:
    """The queue at the receiver's port during the window, for three ports, on a log scale."""
    ax.set(xlim=(0, 100), ylim=(0.01, 1000), yscale="log", xlabel="time since the burst began, µs",
           ylabel="queue at the receiver's port, MB")
    deep, = ax.plot([], [], color=BROKEN_COLOUR, lw=2, animated=True, label="deep-buffer chassis")
    shallow, = ax.plot([], [], color=LIMIT_COLOUR, lw=2, animated=True, label="shallow chip (PFC at its share)")
    admit, = ax.plot([], [], color=CORRECT_COLOUR, lw=2, ls="--", animated=True,
                     label="receiver-driven admission (assumed: one BDP)")
    share = ax.axhline(incast().shallow_per_port_mb, color=GREY, lw=0.8, ls=":")
    ax.text(99, share.get_ydata()[0] * 1.15, "shallow chip's share per port", ha="right", fontsize=SMALL,
            color="#555555")
    ax.legend(loc="lower right", fontsize=SMALL, frameon=False)
    status = _status(ax)

    def update(p: Inputs, mode: Any = None) -> None:
        args = (p["senders"], p["port_gbps"], p["rtt_us"])
        shot = incast(*args)
        for line, kwargs in ((deep, {}), (shallow, {"cap_mb": shot.shallow_per_port_mb}),
                             (admit, {"admission": True})):
            t, q = queue_trace(*args, points=73, **kwargs)
            line.set_data(t, np.maximum(q, 1e-3))
        status.set_text(f"{shot.excess_senders} excess senders × {p['port_gbps']} Gbps for "
                        f"{shot.window_us:g} µs = {shot.queued_mb:,.1f} MB")

    return update


def incast_explorer() -> ModelView:
    """Panel 13.3: senders, port speed and round trip → the bytes queued before the first rate cut."""
    return ModelView(
        incast, [Slider("senders", 1, 64, 16, label="senders"),
                 Slider("port_gbps", 100, 800, 400, step=100, label="port speed, Gbps"),
                 Slider("rtt_us", 2, 50, 22, label="round trip, µs")],
        view_incast, formats={"queued_mb": ",.1f", "shallow_per_port_mb": ".2f", "shallow_share_pct": ".0f",
                              "deep_per_port_mb": ",.0f", "admission_bound_mb": ".2f"},
        title="An incast before the first rate cut", figsize=(6.4, 3.3))


# -- Panel 13.4: hashing flows -----------------------------------------------------------------

_FLOW_GRID = np.arange(0, 513)


def view_hashing(ax: Axes) -> Updater:
    """Idle share of the uplinks against flows: the formula as a curve, the simulation as a dot."""
    ax.set(xlim=(0, 512), ylim=(0, 1.02), xlabel="flows hashed", ylabel="share of uplinks idle")
    curve, = ax.plot([], [], color=CORRECT_COLOUR, lw=1.8, animated=True, label="n (1 − 1/n)^k ÷ n")
    dot, = ax.plot([], [], "o", color=BROKEN_COLOUR, ms=7, animated=True, label="simulated (1,000 trials)")
    ax.legend(loc="upper right", fontsize=SMALL, frameon=False)
    status = _status(ax, 0.98, 0.6, ha="right")

    def update(p: Inputs, mode: Any = None) -> None:
        n, k = p["links"], p["flows"]
        curve.set_data(_FLOW_GRID, (1 - 1 / n) ** _FLOW_GRID)
        r = hash_flows(n, k, 1_000, seed=0)
        dot.set_data([k], [r.simulated_idle / n])
        status.set_text(f"{n} uplinks, {k} flows: idle {r.formula_idle:.2f} (formula), {r.simulated_idle:.2f} "
                        f"(simulated)\nbusiest link {r.busiest_over_mean:.2f}× the mean")

    return update


def hashing_explorer() -> ModelView:
    """Panel 13.4: hash flows onto uplinks with a seeded generator, 1,000 trials per update."""
    return ModelView(
        hash_flows, [Slider("links", 2, 64, 16, label="uplinks"), Slider("flows", 1, 512, 16, label="flows", log=True)],
        view_hashing, fixed={"trials": 1_000, "seed": 0},
        formats={"formula_idle": ".3g", "simulated_idle": ".3g", "busiest_over_mean": ".2f",
                 "worst_busiest_over_mean": ".2f", "all_busy_pct": ".1f"},
        title="Idle uplinks when few large flows are hashed", figsize=(6.2, 3.1))


# -- Panel 13.5: spare cubes against a fixed torus -------------------------------------------------

_AVAIL = np.linspace(0.98, 1.0, 41)


def view_slices(ax: Axes) -> Updater:
    """Goodput against host availability, with an OCS and with a fixed torus."""
    ax.set(xlim=(98, 100), ylim=(0, 102), xlabel="host availability, %", ylabel="goodput, % of the machine")
    ocs, = ax.plot([], [], color=CORRECT_COLOUR, lw=2, animated=True, label="OCS: any working cubes")
    fixed, = ax.plot([], [], color=BROKEN_COLOUR, lw=2, animated=True, label="fixed torus: its own hosts")
    here = ax.axvline(99.5, color=GREY, lw=0.8, ls=":", animated=True)
    ax.legend(loc="lower right", fontsize=SMALL, frameon=False)
    status = _status(ax)

    def update(p: Inputs, mode: Any = None) -> None:
        s = p["slice_cubes"]
        rows = [slice_goodput(float(a), s) for a in _AVAIL]
        ocs.set_data(100 * _AVAIL, [r.ocs_pct for r in rows])
        fixed.set_data(100 * _AVAIL, [r.fixed_pct for r in rows])
        here.set_xdata([100 * p["availability"]] * 2)
        g = slice_goodput(p["availability"], s)
        status.set_text(f"slices of {s} cubes ({s * 64:,} chips) at {100 * p['availability']:.2f}%: "
                        f"OCS {g.ocs_pct:.0f}%, fixed {g.fixed_pct:.0f}%")

    return update


def slice_explorer() -> ModelView:
    """Panel 13.5: a simple model of OCS spare cubes against a fixed torus."""
    return ModelView(
        slice_goodput, [Slider("availability", 0.98, 1.0, 0.995, step=0.0005, label="host availability",
                               readout_format=".4f"),
                        Slider("slice_cubes", 1, 64, 16, label="cubes per slice")],
        view_slices, formats={"cube_up": ".4f", "expected_working_cubes": ".1f", "fixed_pct": ".1f",
                              "ocs_pct": ".1f", "ocs_one_slice_pct": ".1f"},
        title="Spare cubes behind a mirror", figsize=(6.2, 3.1))


# -- Panel 13.7: the decision procedure ----------------------------------------------------------

def view_decision(ax: Axes) -> Updater:
    """Scores of the four patterns as horizontal bars, with the winner's risk line."""
    y = np.arange(len(PATTERNS))
    bars = ax.barh(y, np.zeros(len(y)), color=CORRECT_COLOUR, height=0.6)
    for b in bars:
        b.set_animated(True)
    ax.set(yticks=y, yticklabels=[PATTERN_NAMES[p] for p in PATTERNS], xlim=(-12, 8), xlabel="score (points)")
    ax.figure.subplots_adjust(left=0.33, right=0.97, bottom=0.45, top=0.96)
    ax.axvline(0, color="black", lw=0.6)
    ax.invert_yaxis()
    values = [ax.text(0, i, "", va="center", fontsize=SMALL, animated=True) for i in y]
    risk = ax.text(-0.48, -0.27, "", transform=ax.transAxes, fontsize=SMALL, va="top", animated=True)

    def update(p: Inputs, mode: Any = None) -> None:
        c = choose_fabric(**{**DEFAULTS, **p})
        for bar, text, pattern in zip(bars, values, PATTERNS):
            score = c.scores[pattern]
            bar.set_width(score)
            top, bottom = pattern in c.leaders, pattern in c.trailers
            bar.set_color(CORRECT_COLOUR if top else (LIMIT_COLOUR if bottom else GREY))
            text.set_position((score + (0.3 if score >= 0 else -0.3), text.get_position()[1]))
            text.set_ha("left" if score >= 0 else "right")
            shared = top and len(c.leaders) > 1 or bottom and len(c.trailers) > 1
            text.set_text(f"{score:+d}" + ("  tie" if shared else ""))
        building = ("more than one building powers" if c.target_gpus > c.building_gpus
                    else "within what one building powers")
        moe = p["moe_pct"]
        moe_rule = "≥" if moe >= MOE_MEANINGFUL_PCT else "under"
        segment = hpn_scale(p["chip_tbps"], 400).gpus_per_segment
        lead = ", ".join(PATTERN_NAMES[q] for q in c.leaders)
        place = (f"first: {lead}" if len(c.leaders) == 1 else
                 f"tied first at {c.scores[c.leaders[0]]:+d}: {lead} (no rule breaks the tie)")
        risks = "\n".join(f"risk, {PATTERN_NAMES[q]}: " + RISKS[q].split("; ")[0] for q in c.leaders)
        risk.set_text(f"plan for {c.target_gpus:,} GPUs: {building} ({c.building_gpus:,} at 1.2 kW);\n"
                      f"one {p['chip_tbps']:g}T segment holds {segment:,}\n"
                      f"MoE {moe:g}%: {moe_rule} the {MOE_MEANINGFUL_PCT:g}% at which rule 3 fires\n"
                      f"{place}\n{risks}")

    return update


def decision_explorer() -> ModelView:
    """Panel 13.7: the procedure's inputs → the four scores; the rules are ``fabric_designs.choice.choose_fabric``."""
    return ModelView(
        decision_summary,
        [Slider("gpus_3y", 1_024, 131_072, DEFAULTS["gpus_3y"], step=1_024, label="GPUs in three years"),
         Slider("power_mw", 10.0, 200.0, DEFAULTS["power_mw"], step=10.0, label="building power, MW"),
         Slider("moe_pct", 0.0, 100.0, DEFAULTS["moe_pct"], step=5.0, label="MoE share, %"),
         Slider("chip_tbps", 51.2, 102.4, DEFAULTS["chip_tbps"], step=51.2, label="switch chip, Tbps",
                readout_format=".1f")],
        view_decision,
        checkboxes={"shared_hosts": DEFAULTS["shared_hosts"], "own_stack": DEFAULTS["own_stack"],
                    "can_fork": DEFAULTS["can_fork"], "cost_sensitive": DEFAULTS["cost_sensitive"]},
        fixed={"gpus_now": DEFAULTS["gpus_now"]}, hidden=("risk_of_first",),
        title="The decision procedure as visible rules", figsize=(6.4, 3.6))


# -- Panel 13.8: tiers against GPU count -------------------------------------------------------------

_GPU_GRID = np.unique(np.geomspace(64, 1_048_576, 400).astype(int))
_COMBOS = ((51.2, 400, "-", CORRECT_COLOUR), (51.2, 800, "--", CORRECT_COLOUR),
           (102.4, 400, "-", BROKEN_COLOUR), (102.4, 800, "--", BROKEN_COLOUR))


def view_tiers(ax: Axes) -> Updater:
    """Tiers needed against GPU count for four chip/NIC pairs (fixed), with a marker at the chosen count."""
    for chip, nic, ls, colour in _COMBOS:
        ax.step(_GPU_GRID, [tiers_for(int(g), chip, nic) for g in _GPU_GRID], where="post", ls=ls, color=colour,
                lw=1.6, label=f"{chip}T chip, {nic}G NIC")
    ax.set(xscale="log", xlim=(64, 1_048_576), ylim=(0.5, 4.5), yticks=[1, 2, 3, 4], xlabel="GPUs",
           ylabel="Clos tiers (full bisection)")
    ax.legend(loc="upper left", fontsize=SMALL, frameon=False)
    here = ax.axvline(16_384, color=LIMIT_COLOUR, lw=1, animated=True)
    status = _status(ax, 0.98, 0.06, ha="right")
    status.set_va("bottom")

    def update(p: Inputs, mode: Any = None) -> None:
        t = tier_counts(p["gpus"])
        here.set_xdata([t.gpus] * 2)
        status.set_text(f"{t.gpus:,} GPUs: {t.chip_51t_nic_400g} / {t.chip_51t_nic_800g} / "
                        f"{t.chip_102t_nic_400g} / {t.chip_102t_nic_800g} tiers")

    return update


def tiers_explorer() -> ModelView:
    """Panel 13.8: tiers needed against GPU count for 51.2T/102.4T chips and 400G/800G NICs."""
    return ModelView(tier_counts, [Slider("gpus", 1_024, 262_144, 16_384, step=1_024, label="GPUs")], view_tiers,
                     title="Tiers needed, by chip and NIC generation", figsize=(6.2, 3.1))


# -- Panel 13.6: why only pipeline traffic crosses HPN's core --------------------------------------

GPT3 = dict(layers=96, hidden=12_288, params=175e9, microbatch_tokens=2_048, grad_bytes=2)
"""GPT-3 175B's shape as HPN uses it (sequence 2,048, one sequence per microbatch), with the
2-byte gradients HPN's 5.5 GB shard implies (175e9 ÷ 64 × 2 B); chapter 3 uses Llama 3's FP32."""


def view_traffic(ax: Axes) -> Updater:
    """Bytes per GPU per step for TP, PP and DP (log scale), with the one that may cross a 15:1 core marked."""
    bars = ax.barh([0, 1, 2], [1, 1, 1], color=[GREY, CORRECT_COLOUR, GREY], height=0.6)
    for b in bars:
        b.set_animated(True)
    ax.set(yticks=[0, 1, 2], yticklabels=["tensor parallel", "pipeline (crosses the core)", "data parallel"],
           xscale="log", xlim=(1e6, 1e12), xlabel="bytes per GPU per step (log scale)")
    ax.figure.subplots_adjust(left=0.33, right=0.97, bottom=0.2, top=0.88)
    ax.invert_yaxis()
    texts = [ax.text(0, i, "", va="center", fontsize=SMALL, animated=True) for i in range(3)]
    job = ax.text(1.0, 1.03, "", transform=ax.transAxes, ha="right", va="bottom", fontsize=SMALL, animated=True)

    def update(p: Inputs, mode: Any = None) -> None:
        t = gpt3_traffic(p["tp"], p["pp"], p["dp"], p["microbatches"])
        for bar, text, v in zip(bars, texts, (t.tp_bytes_per_gpu, t.pp_bytes_per_gpu, t.dp_bytes_per_gpu)):
            bar.set_width(max(v, 1e6))
            text.set_position((max(v, 1e6) * 1.2, text.get_position()[1]))
            text.set_text(f"{_gigabytes(v)} GB")
        job.set_text(f"TP{p['tp']} × PP{p['pp']} × DP{p['dp']:,} = {t.gpus:,} GPUs, "
                     f"{p['microbatches']} microbatch{'es' if p['microbatches'] > 1 else ''} per step")

    return update


def _gigabytes(n_bytes: float) -> str:
    """Bytes as GB with four significant figures and thousands separators."""
    return f"{n_bytes / 1e9:,.4g}"


def gpt3_traffic(tp: int = 8, pp: int = 8, dp: int = 512, microbatches: int = 1):
    """``step_traffic`` for GPT-3 175B at a TP-PP-DP split, ``microbatches`` sequences of 2,048 tokens per replica."""
    return step_traffic(tp=tp, pp=pp, dp=dp, tokens_per_step=dp * 2_048 * microbatches, **GPT3)


def traffic_explorer() -> ModelView:
    """Panel 13.6: GPT-3 175B's per-GPU bytes by parallelism, from chapter 3's ``step_traffic``."""
    return ModelView(
        gpt3_traffic, [Slider("tp", 1, 16, 8, label="tensor parallel"), Slider("pp", 1, 16, 8, label="pipeline stages"),
                       Slider("dp", 2, 1024, 512, label="replicas", log=True),
                       Slider("microbatches", 1, 16, 1, label="microbatches per step")],
        view_traffic, formats={k: _gigabytes for k in
                               ("tp_bytes_per_gpu", "pp_bytes_per_gpu", "dp_bytes_per_gpu", "dp_reduce_bytes_per_gpu")},
        hidden=("microbatches", "tp_collectives_per_gpu", "pp_sends_per_gpu", "pp_bytes_per_link",
                "dp_collectives_per_gpu"),
        title="Why only pipeline traffic crosses a 15:1 core", figsize=(6.4, 2.8))


EXPLORERS: dict[str, Callable[[], ModelView]] = {
    "traffic": traffic_explorer,
    "scale": scale_explorer, "table2": table2_explorer, "incast": incast_explorer, "hashing": hashing_explorer,
    "slices": slice_explorer, "decision": decision_explorer, "tiers": tiers_explorer,
}
"""Chapter 4's explorers by name (``tools/bench_widgets.py`` times every registry)."""


# -- static figures ------------------------------------------------------------------------------------

def _node(ax: Axes, x: float, y: float, w: float, h: float, colour: str, label: str = "", fs: float = SMALL) -> None:
    ax.add_patch(Rectangle((x - w / 2, y - h / 2), w, h, fc=colour, ec="#333333", lw=0.6))
    if label:
        ax.text(x, y, label, ha="center", va="center", fontsize=fs)


def figure_patterns() -> Figure:
    """Figure 13.1: the four patterns side by side (any-to-any Clos, rail-only, dual-plane with a thin core,
    torus behind optical circuit switches), each drawn for four 4-GPU servers; two by two at the width of
    the book's column, so the switches' names stay legible."""
    fig = Figure(figsize=(7.2, 6.4), layout="constrained")
    axes = fig.subplots(2, 2).flatten()
    gpu_x = np.arange(16) % 4 * 0.06 + np.repeat(np.arange(4), 4) * 0.25 + 0.04
    rail_colours = ("#1f5fa8", "#2f8f3a", "#d9822b", "#7b4fa0")
    titles = ("Any-to-any Clos (Meta)", "Rail-only (MIT)", "Dual-plane, 15:1 core (HPN):\nToRs T1, T2 and aggregation "
              "A1, A2 per plane", "Torus + OCS (TPU v4)")
    for ax, title in zip(axes, titles):
        ax.set(xlim=(0, 1), ylim=(0, 1), title=title)
        ax.set_axis_off()
        ax.title.set_fontsize(9.5)
    # servers and GPUs, common to the three switched patterns
    for ax in axes[:3]:
        for s in range(4):
            ax.add_patch(Rectangle((s * 0.25 + 0.02, 0.04), 0.22, 0.14, fc="#f0f0f0", ec="#777777", lw=0.6))
        for i, x in enumerate(gpu_x):
            _node(ax, x + 0.01, 0.11, 0.045, 0.07, rail_colours[i % 4])
    leaf_x = np.array([0.14, 0.38, 0.62, 0.86])
    # any-to-any: 4 leaves (one per rail), 2 spines, every leaf to every spine
    ax = axes[0]
    for r, x in enumerate(leaf_x):
        _node(ax, x, 0.5, 0.16, 0.08, "#dfe8f5", f"leaf {r}")
        for i in range(r, 16, 4):
            ax.plot([gpu_x[i] + 0.01, x], [0.15, 0.46], color=rail_colours[r], lw=0.6)
        for sx in (0.3, 0.7):
            ax.plot([x, sx], [0.54, 0.81], color="#555555", lw=0.7)
    for sx in (0.3, 0.7):
        _node(ax, sx, 0.85, 0.22, 0.08, "#c8d7ee", "spine")
    # rail-only: same leaves, no spine, an NVLink hop inside the server
    ax = axes[1]
    for r, x in enumerate(leaf_x):
        _node(ax, x, 0.5, 0.16, 0.08, "#dfe8f5", f"rail {r}")
        for i in range(r, 16, 4):
            ax.plot([gpu_x[i] + 0.01, x], [0.15, 0.46], color=rail_colours[r], lw=0.6)
    ax.annotate("", xy=(gpu_x[3] + 0.01, 0.2), xytext=(gpu_x[0] + 0.01, 0.2),
                arrowprops={"arrowstyle": "->", "color": "#2f8f3a", "lw": 1.2, "connectionstyle": "arc3,rad=-0.5"})
    ax.text(0.5, 0.85, "spine deleted:\ncross-rail traffic takes\nan NVLink hop first", ha="center", fontsize=SMALL,
            color="#555555", va="center")
    # dual-plane: each server's NIC reaches ToR1 (plane 1) and ToR2 (plane 2); each ToR only its plane
    ax = axes[2]
    for plane, colour in enumerate(("#dfe8f5", "#f6e3cf")):
        aggs = [0.1 + plane * 0.5 + a * 0.15 for a in range(3)]
        for x in aggs:
            _node(ax, x, 0.66, 0.12, 0.07, colour, f"A{plane + 1}")
        for x in leaf_x:
            tx = x + (0.05 if plane else -0.05)
            _node(ax, tx, 0.38, 0.09, 0.07, colour, f"T{plane + 1}")
            ax.plot([tx, tx], [0.18, 0.35], color="#888888", lw=0.4)
            for ax_x in aggs:
                ax.plot([tx, ax_x], [0.41, 0.63], color="#888888", lw=0.4)
        for x in aggs:
            ax.plot([x, 0.5], [0.69, 0.89], color="#b22222", lw=0.5, ls=":")
    _node(ax, 0.5, 0.92, 0.3, 0.07, "#eeeeee", "core (15:1)")
    # torus: a 4×4 grid of chips with wrap-around links, and an OCS box
    ax = axes[3]
    for i in range(4):
        for j in range(4):
            _node(ax, 0.2 + i * 0.18, 0.2 + j * 0.18, 0.08, 0.08, "#dfe8f5")
            if i < 3:
                ax.plot([0.24 + i * 0.18, 0.34 + i * 0.18], [0.2 + j * 0.18] * 2, color="#555555", lw=0.8)
            if j < 3:
                ax.plot([0.2 + i * 0.18] * 2, [0.24 + j * 0.18, 0.34 + j * 0.18], color="#555555", lw=0.8)
        ax.plot([0.16, 0.08, 0.08, 0.16], [0.2 + i * 0.18] * 2 + [0.2 + i * 0.18] * 2, color="#2f8f3a", lw=0.6, ls="--")
    ax.add_patch(FancyBboxPatch((0.02, 0.82), 0.96, 0.15, boxstyle="round,pad=0.01", fc="#f6e3cf", ec="#777777"))
    ax.text(0.5, 0.895, "optical circuit switches:\nwrap-arounds and cube-to-cube links", ha="center", va="center",
            fontsize=SMALL)
    return legible(fig)


def figure_buffers() -> Figure:
    """Figure 13.3: buffers to scale: a shallow chip's share per port, its whole memory, Meta's 5 MB threshold
    on all 128 ports, the 54 MB incast, and an assumed deep chassis per port."""
    shot = incast()
    items = [("shallow chip, per port", shot.shallow_per_port_mb, LIMIT_COLOUR),
             ("Meta's 200G ECN threshold, per port", 5.0, GREY),
             ("the 16-to-1 incast in 72 µs", shot.queued_mb, BROKEN_COLOUR),
             ("shallow chip, whole shared memory", 100.0, LIMIT_COLOUR),
             ("deep chassis, per port (assumed 2 ms)", shot.deep_per_port_mb, CORRECT_COLOUR),
             ("5 MB × 128 ports", 5.0 * 128, GREY)]
    fig = Figure(figsize=(7.6, 3.2), layout="constrained")
    ax = fig.add_subplot()
    y = np.arange(len(items))
    ax.barh(y, [v for _, v, _ in items], color=[c for *_, c in items], height=0.6)
    for i, (_, v, _) in enumerate(items):
        ax.text(v + 6, i, f"{v:,.2f} MB" if v < 1 else f"{v:,.0f} MB", va="center", fontsize=SMALL)
    ax.set(yticks=y, yticklabels=[n for n, *_ in items], xlabel="MB (linear scale, to scale)", xlim=(0, 720))
    ax.invert_yaxis()
    return legible(fig)


def figure_queue() -> Figure:
    """Figure 13.4: the queue at the receiver's port during the 72 µs before the first rate cut (linear scale)."""
    shot = incast()
    fig = Figure(figsize=(7.2, 3.4), layout="constrained")
    ax = fig.add_subplot()
    for kwargs, colour, label, ls in (({}, BROKEN_COLOUR, "receiver behind a deep chassis: the queue fits", "-"),
                                      ({"cap_mb": shot.shallow_per_port_mb}, LIMIT_COLOUR,
                                       "single-chip rack switch: PFC pauses at its ~0.8 MB share", "-"),
                                      ({"admission": True}, CORRECT_COLOUR,
                                       "receiver-driven admission (assumed: one BDP in flight)", "--")):
        t, q = queue_trace(**kwargs)
        ax.plot(t, q, color=colour, lw=2, ls=ls, label=label)
    ax.axvline(22, color=GREY, lw=0.8, ls=":")
    ax.text(22.5, 30, "one round trip (22 µs):\nusual first rate cut", fontsize=SMALL, color="#555555")
    ax.axvline(72, color=GREY, lw=0.8, ls=":")
    ax.text(71, 30, "worst case\n(22 + 50 µs)", fontsize=SMALL, color="#555555", ha="right")
    ax.set(xlabel="time since the burst began, µs", ylabel="queue at the receiver's port, MB", xlim=(0, 75),
           ylim=(0, 58))
    ax.legend(loc="upper left", fontsize=SMALL, frameon=False)
    return legible(fig)


def figure_polarization(links: int = 8, flows: int = 64, seed: int = 0) -> Figure:
    """Figure 13.5: flows per second-tier uplink when the second tier reuses the first tier's hash, and when it
    salts it."""
    fig = Figure(figsize=(9, 3.2), layout="constrained")
    axes = fig.subplots(1, 2, sharey=True)
    for ax, salted, title in ((axes[0], False, "same hash at both tiers: polarized"),
                              (axes[1], True, "independent hash at tier 2")):
        loads = polarized_loads(links, flows, seed, salted=salted)
        im = ax.imshow(loads, cmap="Blues", vmin=0, vmax=max(1, loads.max()))
        idle = int((loads == 0).sum())
        ax.set(title=f"{title}\n{idle} of {links * links} uplinks idle", xlabel="uplink of the switch",
               ylabel="aggregation switch (tier-1 hash)")
        ax.title.set_fontsize(9)
    fig.colorbar(im, ax=axes, label="flows", shrink=0.8)
    return legible(fig)


def figure_scale_axis() -> Figure:
    """Figure 13.7: steps 1 and 2 of the procedure on one GPU-count axis: the scale units and the building."""
    s = hpn_scale()
    marks = [(s.gpus_per_segment, "one 51.2T segment"), (meta_zone()[0], "Meta pod"),
             (tpu_v4_machine()[1], "TPU v4 machine"), (s.gpus_per_pod, "HPN pod"), (meta_zone()[1], "Llama 3 (8 pods)"),
             (32_768, "rail-only savings largest"), (131_072, "Astral, two pods")]
    fig = Figure(figsize=(9, 2.6), layout="constrained")
    ax = fig.add_subplot()
    ax.set(xscale="log", xlim=(500, 300_000), ylim=(0, 1), yticks=[], xlabel="GPUs (log scale)")
    ax.axvspan(s.gpus_per_building, 300_000, color="#f6e3cf", alpha=0.7)
    ax.text(s.gpus_per_building * 1.05, 0.92, "beyond one 18 MW building (1.2 kW per GPU)", fontsize=SMALL, va="top")
    for i, (x, name) in enumerate(marks):
        ax.axvline(x, color=CORRECT_COLOUR, lw=1)
        ax.text(x * 1.03, 0.12 + 0.1 * (i % 6), f"{name}: {x:,}", fontsize=SMALL, rotation=0)
    return legible(fig)


DECISION_STEPS: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
    ("Step 3: any MoE share, or shared hosts?", (
        ("yes", "keep a tier that joins the rails (rail-only: all-to-all +8.2–11.2%)"),
        ("no", "rail-only is possible, with a placement discipline you can enforce"))),
    ("Step 4: which switch class?", (
        ("deep", "deep-buffer modular spine: PFC + receiver-driven admission, no DCQCN "
                 "(costlier; 3.77× more failures)"),
        ("shallow", "shallow single chip: keep DCQCN or Swift+DCQCN; ECN threshold ≤ buffer ÷ ports; "
                    "PFC watchdog ~200 ms"))),
    ("Step 5: beat the hash", (
        ("", "QP scaling (switch + library, up to 40%)"),
        ("", "dual-plane + host paths (−91.8% queues, +34.7%)"),
        ("", "TE inside the non-blocking domain (+5–10%)"),
        ("", "otherwise 2× uplinks (MegaScale)"))),
)
"""Steps 3 to 5 of the procedure: each step's question and its branches (the answer, where the step
forks, and what follows), drawn as a tree (``figure_decision_tree``) and listed for a phone
(``decision_tree_list``)."""


def figure_decision_tree() -> Figure:
    """Figure 13.8: steps 3 to 5 of the procedure as a tree, drawn at the width of the book's column
    (7.2 in: 720 CSS px at 100 dpi), so its text is at least 11 CSS px where a 1366 px page shows it."""
    fig = Figure(figsize=(7.2, 6.0))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set(xlim=(0, 1), ylim=(0, 1))
    ax.set_axis_off()

    def box(x: float, y: float, text: str, colour: str = "#eef3fa") -> None:
        ax.text(x, y, text, ha="center", va="center", fontsize=9, linespacing=1.3,
                bbox={"boxstyle": "round,pad=0.4", "fc": colour, "ec": "#777777"})

    def edge(a: tuple[float, float], b: tuple[float, float], label: str = "") -> None:
        ax.annotate("", xy=b, xytext=a, arrowprops={"arrowstyle": "->", "color": "#555555", "lw": 0.8})
        if label:
            ax.text((a[0] + b[0]) / 2 + (0.03 if b[0] > a[0] else -0.03), (a[1] + b[1]) / 2, label,
                    fontsize=9, ha="center", va="bottom", color="#444444")

    (q3, (yes, no)), (q4, (deep, shallow)), (q5, fixes) = DECISION_STEPS
    wrap = lambda text: textwrap.fill(text, 36)  # noqa: E731 - two columns of boxes
    box(0.5, 0.95, q3)
    box(0.25, 0.78, wrap(yes[1]))
    box(0.75, 0.78, wrap(no[1]), "#eaf5ea")
    edge((0.42, 0.925), (0.27, 0.83), yes[0])
    edge((0.58, 0.925), (0.73, 0.83), no[0])
    box(0.5, 0.605, q4)
    edge((0.25, 0.73), (0.42, 0.63))
    edge((0.75, 0.73), (0.58, 0.63))
    box(0.25, 0.42, wrap(deep[1]))
    box(0.75, 0.42, wrap(shallow[1]))
    edge((0.42, 0.58), (0.27, 0.49), deep[0])
    edge((0.58, 0.58), (0.73, 0.49), shallow[0])
    box(0.5, 0.12, q5 + ":\n" + "\n".join(f"· {text}" for _, text in fixes), "#fdf3e3")
    edge((0.25, 0.35), (0.42, 0.235))
    edge((0.75, 0.35), (0.58, 0.235))
    return legible(fig)


def decision_tree_list() -> Any:
    """The same steps as a nested list, for a phone: HTML shown only below 600 px (``cm-narrow-only``;
    the book's stylesheet hides the tree's picture there), so no text is scaled down with a picture."""
    from IPython.display import HTML

    items = []
    for question, branches in DECISION_STEPS:
        inner = "".join(f"<li>{html.escape(answer + ': ' if answer else '')}{html.escape(text)}</li>"
                        for answer, text in branches)
        items.append(f"<li>{html.escape(question)}<ul>{inner}</ul></li>")
    return HTML(f"<div class='cm-narrow-only'><ul>{''.join(items)}</ul></div>")


# -- Animation 13.3 as a stepper -------------------------------------------------------------------

FAILURE_DESIGN_NAMES = ("Meta (headroom)", "HPN (dual-ToR)", "MegaScale (standby pool)", "TPU v4 (spare cubes)")
"""The four designs of ``redundancy.FAILURE_DESIGNS``, in order, as the stepper names them."""

def view_failures(ax: Axes) -> Updater:
    """The four designs' job speed at the chosen step, with the chosen design's event and where work goes."""
    from ..fabric_designs.redundancy import FAILURE_DESIGNS, failure_step

    names = FAILURE_DESIGN_NAMES
    y = np.arange(len(FAILURE_DESIGNS))
    bars = ax.barh(y, np.zeros(len(y)), color=GREY, height=0.55)
    for b in bars:
        b.set_animated(True)
    ax.set(yticks=y, yticklabels=names, xlim=(0, 110), xlabel="job speed at this step, % of healthy")
    ax.invert_yaxis()
    ax.figure.subplots_adjust(left=0.3, bottom=0.32, top=0.95)
    labels = [ax.text(0, i, "", va="center", fontsize=SMALL, animated=True) for i in y]
    story = ax.text(-0.38, -0.3, "", transform=ax.transAxes, fontsize=SMALL, va="top", animated=True)

    def update(p: Inputs, mode: Any = None) -> None:
        steps = [failure_step(i, p["step"]) for i in range(len(FAILURE_DESIGNS))]
        for i, (bar, text, s) in enumerate(zip(bars, labels, steps)):
            bar.set_width(s.job_speed_pct)
            bar.set_color(CORRECT_COLOUR if i == p["design"] else (GREY if s.running else LIMIT_COLOUR))
            text.set_position((s.job_speed_pct + 1, i))
            text.set_text(f"{s.job_speed_pct:.2f}%" if s.running else "stopped")
        chosen = steps[p["design"]]
        story.set_text(f"step {chosen.step}: {chosen.event}\n→ {chosen.where_it_goes}")

    return update


def _design_name(key: str) -> str:
    from ..fabric_designs.redundancy import FAILURE_DESIGNS

    return FAILURE_DESIGN_NAMES[FAILURE_DESIGNS.index(key)]


def failure_explorer() -> ModelView:
    """Animation 13.3 as a stepper: one failure sequence per design, where the traffic or the work goes."""
    from ..fabric_designs.redundancy import failure_step

    return ModelView(failure_step, [Slider("design", 0, 3, 0, label="design", choices=FAILURE_DESIGN_NAMES),
                                    Slider("step", 0, 3, 0, label="step of the failure")],
                     view_failures, formats={"job_speed_pct": ".2f", "design": _design_name},
                     title="One failure in each design, step by step", figsize=(6.6, 3.0))


EXPLORERS["failures"] = failure_explorer
__all__ += ["failure_explorer", "view_failures"]


# -- Animation 13.1 as a stepper --------------------------------------------------------------------

def view_transfer(ax: Axes) -> Updater:
    """Each pattern's path as a row of nodes; the links crossed so far are drawn thick, by kind."""
    from ..fabric_designs.designs import TRANSFER_PATHS

    colours = {"network": CORRECT_COLOUR, "NVLink": "#2f8f3a", "ICI": BROKEN_COLOUR}
    ax.set_axis_off()
    ax.set(xlim=(-0.6, 4.6), ylim=(-0.6, len(TRANSFER_PATHS) - 0.3))
    ax.figure.subplots_adjust(left=0.01, right=0.99, bottom=0.02, top=0.98)
    segments = []
    titles = []
    for row, (name, path) in enumerate(TRANSFER_PATHS.items()):
        y = len(TRANSFER_PATHS) - 1 - row
        titles.append(ax.text(-0.55, y + 0.32, name, fontsize=8.5, fontweight="bold", animated=True))
        for i, (node, kind) in enumerate(path):
            ax.text(i, y, node, ha="center", va="center", fontsize=SMALL,
                    bbox={"boxstyle": "round,pad=0.25", "fc": "#f4f4f4", "ec": "#999999"})
            if i:
                ax.plot([i - 0.62, i - 0.38], [y, y], color="#cccccc", lw=1)
                line, = ax.plot([i - 0.62, i - 0.38], [y, y], color=colours.get(kind, GREY), lw=4, animated=True,
                                solid_capstyle="butt")
                segments.append((row, i, line))
    status = ax.text(4.55, -0.5, "", ha="right", fontsize=SMALL, animated=True)

    def update(p: Inputs, mode: Any = None) -> None:
        chosen = p["pattern"]
        for row, i, line in segments:
            line.set_visible(i <= p["step"])
            line.set_alpha(1.0 if row == chosen else 0.3)
        for row, title in enumerate(titles):
            title.set_color("black" if row == chosen else GREY)
            title.set_text(("▶ " if row == chosen else "") + tuple(TRANSFER_PATHS)[row])
        here = transfer_step(chosen, p["step"])
        status.set_text(f"{here.pattern}: at {here.at}, {here.network_links} of {here.total_links} links "
                        "on the network so far  (blue network, green NVLink, orange torus)")

    return update


def transfer_explorer() -> ModelView:
    """Animation 13.1 as a stepper: one transfer through each of the four patterns, one link per step."""
    return ModelView(transfer_step, [Slider("pattern", 0, 3, 0, label="pattern", choices=tuple(TRANSFER_PATHS)),
                                     Slider("step", 0, 4, 0, label="links crossed")],
                     view_transfer, title="One transfer, one link per step", figsize=(7.2, 3.0))


EXPLORERS["transfer"] = transfer_explorer
__all__ += ["transfer_explorer", "view_transfer"]


def figure_spraying(links: int = 16, flows: int = 16, seed: int = 0) -> Figure:
    """Figure 13.9: the same flows hashed per flow (ECMP) and sprayed per packet over 16 uplinks."""
    from ..fabric_designs.load_balance import link_loads

    fig = Figure(figsize=(9, 2.8), layout="constrained")
    axes = fig.subplots(1, 2, sharey=True)
    for ax, spray, title in ((axes[0], False, "per-flow hashing (ECMP)"), (axes[1], True, "packet spraying")):
        loads = link_loads(links, flows, seed, spray=spray)
        ax.bar(np.arange(links), loads, color=[LIMIT_COLOUR if v == 0 else CORRECT_COLOUR for v in loads])
        ax.axhline(flows / links, color=GREY, lw=0.8, ls=":")
        ax.set(title=f"{title}: {int((loads == 0).sum())} idle, busiest {loads.max() / (flows / links):.1f}× the mean",
               xlabel="uplink", xticks=[])
        ax.title.set_fontsize(9)
    axes[0].set_ylabel("flows' worth of traffic")
    return legible(fig)


__all__ += ["figure_spraying"]


# -- tables and texts the chapter prints (kept here so the chapter's code cells stay short) -------------

def table2_table() -> Any:
    """Table II recomputed from Clos port counts, one row per (GPUs, radix) the source quotes, as a Styler."""
    import pandas as pd

    from ..fabric_designs.designs import TABLE2_STATED

    rows = []
    for (gpus, radix), stated in TABLE2_STATED.items():
        r = table2_row(gpus, radix)
        rows.append((f"{gpus:,}", radix, r.clos_tiers, f"{r.clos_switches:,}", r.rail_tiers, f"{r.rail_switches:,}",
                     f"{r.clos_cost_musd:,.1f}", f"{r.rail_cost_musd:,.1f}", f"{r.saving_pct:.1f}", f"{stated:.0f}",
                     f"{r.cost_removed_musd:,.1f}", f"{r.power_removed_mw:.2f}"))
    frame = pd.DataFrame(rows, columns=[
        "GPUs", "radix", "Clos tiers", "Clos switches", "rail tiers", "rail switches", "Clos cost, $M",
        "rail cost, $M", "saving, %", "source's saving, %", "removed, $M", "removed, MW"])
    return (frame.style.hide(axis="index").set_properties(**{"text-align": "right", "padding": "2px 8px"})
            .set_uuid("ch4-t2"))


def rules_text(**inputs: Any) -> str:
    """Every rule that fires for ``inputs`` (the panel's defaults otherwise), then each pattern's risk line."""
    c = choose_fabric(**{**DEFAULTS, **inputs})
    import textwrap

    lines = [f"{PATTERN_NAMES[p]:<28}{points:+d}  {reason}" for p, points, reason in c.rules]
    lines.append("")
    for p in PATTERNS:
        lines += textwrap.wrap(f"risk, {PATTERN_NAMES[p]}: {RISKS[p]}", width=78, subsequent_indent="    ")
    return "\n".join(lines)


def moves_text(pattern: str) -> str:
    """Each single change from the defaults that puts ``pattern`` first, and whether it leads alone or tied."""
    from ..fabric_designs.choice import rank_after_each_change
    from ..labels import words

    lines = []
    for name, value, rank, tied in rank_after_each_change(pattern):
        if rank == 1:
            shown = ("yes" if value else "no") if isinstance(value, bool) else (
                f"{value:,}" if isinstance(value, int) else value)
            how = "alone" if not tied else f"tied with {tied} other pattern{'s' if tied > 1 else ''}"
            lines.append(f"  {words(name)} → {shown}: first, {how}")
    return f"{PATTERN_NAMES[pattern]} comes first after:\n" + "\n".join(lines)


def figure_astral() -> Figure:
    """Figure 13.2: Astral's pattern: each aggregation group serves one rail, and a 1:1 core joins the rails."""
    from ..fabric_designs.designs import ASTRAL

    fig = Figure(figsize=(7.2, 3.0), layout="constrained")
    ax = fig.add_subplot()
    ax.set(xlim=(0, 1), ylim=(0, 1))
    ax.set_axis_off()
    rail_colours = ("#1f5fa8", "#2f8f3a", "#d9822b", "#7b4fa0")
    for s in range(4):
        ax.add_patch(Rectangle((s * 0.25 + 0.02, 0.03), 0.22, 0.12, fc="#f0f0f0", ec="#777777", lw=0.6))
        for g in range(4):
            _node(ax, s * 0.25 + 0.05 + g * 0.05, 0.09, 0.035, 0.06, rail_colours[g])
    groups = [0.14, 0.38, 0.62, 0.86]
    for r, x in enumerate(groups):
        _node(ax, x, 0.5, 0.17, 0.08, "#dfe8f5", f"rail {r}: agg group", fs=SMALL)
        for s in range(4):
            ax.plot([s * 0.25 + 0.05 + r * 0.05, x], [0.12, 0.46], color=rail_colours[r], lw=0.6)
        for cx in (0.3, 0.7):
            ax.plot([x, cx], [0.54, 0.76], color="#555555", lw=0.7)
    for cx in (0.3, 0.7):
        _node(ax, cx, 0.8, 0.24, 0.08, "#c8d7ee", "core, 1:1", fs=SMALL)
    ax.text(0.5, 0.99, "tier 2: one aggregation group per rail (the option HPN priced and did not build);\n"
                       f"a 1:1 core joins the rails. Tencent runs {ASTRAL.gpus_in_production:,} GPUs in "
                       f"{ASTRAL.pods_in_production} pods; the design reaches {ASTRAL.gpus_designed:,}",
            ha="center", va="top", fontsize=SMALL)
    return legible(fig)


def figure_astral_spread() -> Figure:
    """Figure 13.6: Astral's measurement: all-to-all bandwidth lost by spreading a job over 32 pods."""
    from ..fabric_designs.designs import ASTRAL

    low, high = ASTRAL.spread_loss_1to1_pct
    fig = Figure(figsize=(7.0, 2.4), layout="constrained")
    ax = fig.add_subplot()
    ax.barh([0], [high - low], left=[low], color=CORRECT_COLOUR, height=0.5)
    ax.barh([1], [ASTRAL.extra_loss_16to1_pct], color=BROKEN_COLOUR, height=0.5)
    ax.text(high + 1, 0, f"{low:g}–{high:g}% lost", va="center", fontsize=SMALL)
    ax.text(ASTRAL.extra_loss_16to1_pct + 1, 1, f"up to {ASTRAL.extra_loss_16to1_pct:g}% more", va="center",
            fontsize=SMALL)
    ax.set(yticks=[0, 1], yticklabels=[f"one job over {ASTRAL.spread_pods} pods, 1:1 core",
                                        "16:1 core instead: further loss"],
           xlim=(0, 70), xlabel="all-to-all bandwidth lost, % (Astral, about 1K GPUs)")
    ax.invert_yaxis()
    return legible(fig)


# -- Animation 13.2 as a stepper ---------------------------------------------------------------------------

_QUEUE_BARS = ("single-chip rack switch", "receiver behind a deep chassis", "receiver-driven admission")


def view_queue_step(ax: Axes) -> Updater:
    """The queue at the receiver's port on three ports at one moment, as bars on a log scale."""
    from ..fabric_designs.incast import queue_at

    y = np.arange(3)
    bars = ax.barh(y, [1e-3] * 3, color=[LIMIT_COLOUR, BROKEN_COLOUR, CORRECT_COLOUR], height=0.55)
    for b in bars:
        b.set_animated(True)
    ax.set(yticks=y, yticklabels=_QUEUE_BARS, xscale="log", xlim=(0.01, 200), xlabel="queue at the receiver's "
           "port, MB (log scale)")
    ax.invert_yaxis()
    ax.figure.subplots_adjust(left=0.36, right=0.97, bottom=0.3, top=0.9)
    texts = [ax.text(0, i, "", va="center", fontsize=SMALL, animated=True) for i in y]
    status = ax.text(1.0, 1.03, "", transform=ax.transAxes, ha="right", va="bottom", fontsize=SMALL, animated=True)

    def update(p: Inputs, mode: Any = None) -> None:
        q = queue_at(p["time_us"])
        for bar, text, v in zip(bars, texts, (q.shallow_mb, q.deep_mb, q.admission_mb)):
            bar.set_width(max(v, 1e-3))
            text.set_position((max(v, 0.012) * 1.15, text.get_position()[1]))
            text.set_text(f"{v:,.2f} MB")
        texts[0].set_text(texts[0].get_text() + ("  PFC pausing the senders ⚠" if q.shallow_paused else ""))
        status.set_text(f"{q.time_us:g} µs after the burst began"
                        + ("; the first rate cut has taken effect" if q.rate_cut else ""))

    return update


def incast_stepper() -> ModelView:
    """Animation 13.2 as a stepper: the 16-to-1 incast at 400G on three ports, moment by moment."""
    from ..fabric_designs.incast import queue_at

    return ModelView(queue_at, [Slider("time_us", 0, 80, 12, step=4, label="µs since the burst began")],
                     view_queue_step, formats={"deep_mb": ".2f", "shallow_mb": ".2f", "admission_mb": ".2f"},
                     title="One incast, three ports", figsize=(6.4, 2.6))


EXPLORERS["queue_step"] = incast_stepper
__all__ += ["figure_astral", "figure_astral_spread", "incast_stepper", "moves_text", "rules_text", "table2_table",
            "view_queue_step"]
