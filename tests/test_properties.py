"""Properties a reader relies on, checked with Hypothesis across the chapters.

The unit tests pin chosen cases; these state the invariants behind the
chapters' prose and let Hypothesis look for a counterexample anywhere in the
inputs' ranges:

* shares stay in [0, 100] (and the goodput bar's parts sum to 100);
* efficiency falls as communication grows;
* the pipeline bubble grows with stages and shrinks with microbatches;
* a job's lost time grows with its GPU count;
* Young's interval is the minimum of the first-order loss;
* placement never puts more GPUs in a domain than it holds, and places every rank once;
* every explorer's update accepts every value its controls can reach.

The default profile (``ci``) is deterministic: ``derandomize=True`` and no
example database, so CI sees the same examples every run. Set
``CLUSTERMATH_HYPOTHESIS=explore`` for a longer, randomised search.
"""
from __future__ import annotations

import math
import os

import ipywidgets as W
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from clustermath import (
    blast_radius,
    bubble_fraction,
    checkpoint_cost,
    cluster_economics,
    cluster_scale,
    daly_interval,
    daly_lost,
    failure_recovery,
    first_order_lost,
    goodput_budget,
    hops_crossing_formula,
    interruption_row,
    pipeline_bubble,
    straggler_tax,
    young_interval,
    young_lost,
)
from clustermath.placement.parallelism import _domains_of_ranks, placement
from clustermath.views import fabric_designs as fabric_designs_views
from clustermath.views import peak as peak_views
from clustermath.views import placement as placement_views
from clustermath.views import reliability as reliability_views
from clustermath.views import scaleup as scaleup_views

settings.register_profile("ci", derandomize=True, database=None, deadline=None, max_examples=60,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("explore", derandomize=False, database=None, deadline=None,
                          max_examples=2000, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("CLUSTERMATH_HYPOTHESIS", "ci"))

U16 = st.integers(0, 65535)
SAVE_S = st.floats(0.0, 3600.0, allow_nan=False)
MTBF_S = st.floats(1.0, 1e9, allow_nan=False)
GPUS = st.integers(1, 1_000_000)
GPU_MTBF_H = st.floats(1.0, 1e6, allow_nan=False)


def in_0_100(value: float) -> bool:
    return 0.0 <= value <= 100.0


# -- shares stay in [0, 100] -----------------------------------------------------------------

@given(nodes=U16, node_tflops=U16, compute_ms=U16, comm_ms=U16, broken=st.booleans())
def test_scaling_efficiency_is_a_share(nodes, node_tflops, compute_ms, comm_ms, broken):
    r = cluster_scale(nodes=nodes, node_tflops=node_tflops, compute_ms=compute_ms, comm_ms=comm_ms,
                      ignore_comm=broken)
    assert in_0_100(r.efficiency_pct)
    assert r.achieved_tflops <= r.ideal_tflops


@given(stages=st.integers(1, 65535), microbatches=U16, broken=st.booleans())
def test_bubble_is_a_share(stages, microbatches, broken):
    r = pipeline_bubble(stages=stages, microbatches=microbatches, ignore_bubble=broken)
    assert in_0_100(r.bubble_pct) and in_0_100(r.useful_pct)
    assert r.bubble_pct + r.useful_pct == 100
    assert 0.0 <= bubble_fraction(stages, microbatches) <= 1.0


@given(nodes=U16, node_cost=U16, node_tflops=U16, efficiency_pct=st.integers(0, 100), broken=st.booleans())
def test_economics_useful_never_beats_peak(nodes, node_cost, node_tflops, efficiency_pct, broken):
    r = cluster_economics(nodes=nodes, node_cost=node_cost, node_tflops=node_tflops,
                          efficiency_pct=efficiency_pct, ignore_efficiency=broken)
    assert r.useful_tflops <= r.peak_tflops


@given(speed=st.floats(0.0, 1.0, exclude_min=True), gpus=GPUS)
def test_straggler_throughput_loss_is_a_share(speed, gpus):
    r = straggler_tax(speed=speed, gpus=gpus)
    assert in_0_100(r.throughput_lost_pct)
    assert r.step_longer_pct >= r.throughput_lost_pct - 1e-9  # 1/s - 1 >= 1 - s


@given(gpus=GPUS, gpu_mtbf_h=GPU_MTBF_H, save_s=st.floats(0.1, 3600.0), restart_s=st.floats(0.0, 7200.0),
       interval_x=st.floats(0.05, 20.0), speed=st.floats(0.01, 1.0))
def test_goodput_shares_fill_the_bar(gpus, gpu_mtbf_h, save_s, restart_s, interval_x, speed):
    b = goodput_budget(gpus=gpus, gpu_mtbf_h=gpu_mtbf_h, save_s=save_s, restart_s=restart_s,
                       interval_x=interval_x, straggler_speed=speed)
    parts = (b.useful_pct, b.straggler_pct, b.checkpoint_pct, b.rework_pct, b.restart_pct)
    for share in (*parts, b.daly_goodput_pct):
        assert in_0_100(share), share
    assert b.availability_pct <= 100.0
    assert math.isclose(sum(parts), 100.0, abs_tol=1e-6)
    assert b.useful_pct <= b.availability_pct + 1e-9 or not b.first_order_valid


@given(gpus=st.integers(0, 1_000_000), save_s=st.just(0.0) | st.floats(1e-9, 3600.0), gpu_mtbf_h=GPU_MTBF_H)
def test_interruption_row_daly_loss_is_a_share(gpus, save_s, gpu_mtbf_h):
    row = interruption_row(gpus, save_s, gpu_mtbf_h)
    assert in_0_100(row.daly_lost_pct)
    assert row.young_lost_pct >= 0.0  # first order: may pass 100%, which the page flags


def test_daly_loss_of_a_vanishing_save_is_not_negative():
    assert interruption_row(1, 1.401298464324817e-45, 1.5).daly_lost_pct >= 0.0


@given(interval_s=st.floats(1e-3, 1e7), save_s=SAVE_S, mtbf_s=MTBF_S, restart_s=st.floats(0.0, 1e5))
def test_daly_loss_is_a_fraction(interval_s, save_s, mtbf_s, restart_s):
    assert 0.0 <= daly_lost(interval_s, save_s, mtbf_s, restart_s) <= 1.0


@given(data=st.data())
def test_blast_radius_shares(data):
    job = data.draw(st.integers(1, 4096), label="job_gpus")
    domain = data.draw(st.integers(1, 512), label="domain_gpus")
    failed = data.draw(st.integers(1, domain), label="failed_gpus")
    replica = data.draw(st.integers(1, job), label="replica_gpus")
    r = blast_radius(job_gpus=job, domain_gpus=domain, failed_gpus=failed, replica_gpus=replica)
    assert in_0_100(r.domain_share_pct) and in_0_100(r.replica_share_pct)
    assert 0 <= r.healthy_idled_gpus <= r.domain_gpus <= job
    assert 1 <= r.replicas_mean <= r.replicas_max


# -- efficiency falls as communication grows -------------------------------------------------

@given(nodes=U16, node_tflops=U16, compute_ms=U16, comm=st.tuples(U16, U16))
def test_efficiency_falls_as_communication_grows(nodes, node_tflops, compute_ms, comm):
    less, more = sorted(comm)
    a = cluster_scale(nodes=nodes, node_tflops=node_tflops, compute_ms=compute_ms, comm_ms=less)
    b = cluster_scale(nodes=nodes, node_tflops=node_tflops, compute_ms=compute_ms, comm_ms=more)
    assert b.efficiency_pct <= a.efficiency_pct
    assert b.achieved_tflops <= a.achieved_tflops
    if compute_ms and more:
        assert b.efficiency_pct < 100  # any communication costs something


# -- the bubble grows with stages and shrinks with microbatches --------------------------------

@given(stages=st.tuples(st.integers(1, 65535), st.integers(1, 65535)), microbatches=U16)
def test_bubble_grows_with_stages(stages, microbatches):
    few, many = sorted(stages)
    assert pipeline_bubble(stages=few, microbatches=microbatches).bubble_pct \
        <= pipeline_bubble(stages=many, microbatches=microbatches).bubble_pct
    if few < many and microbatches:
        assert bubble_fraction(few, microbatches) < bubble_fraction(many, microbatches)


@given(stages=st.integers(1, 65535), microbatches=st.tuples(U16, U16))
def test_bubble_shrinks_with_microbatches(stages, microbatches):
    few, many = sorted(microbatches)
    assert pipeline_bubble(stages=stages, microbatches=few).bubble_pct \
        >= pipeline_bubble(stages=stages, microbatches=many).bubble_pct
    if few < many and stages > 1:
        assert bubble_fraction(stages, few) > bubble_fraction(stages, many)


# -- a job's lost time grows with its GPU count ------------------------------------------------

@given(nodes=st.tuples(U16, U16), node_mtbf_h=U16, interval_min=U16)
def test_chapter1_lost_time_grows_with_nodes(nodes, node_mtbf_h, interval_min):
    few, many = sorted(nodes)
    assume(few >= 1)  # zero nodes is the model's degenerate "no cluster" case (a single node's MTBF)
    a = failure_recovery(nodes=few, node_mtbf_h=node_mtbf_h, interval_min=interval_min)
    b = failure_recovery(nodes=many, node_mtbf_h=node_mtbf_h, interval_min=interval_min)
    assert b.failures_per_day >= a.failures_per_day
    assert b.lost_min_per_day >= a.lost_min_per_day


@given(gpus=st.tuples(st.integers(0, 1_000_000), st.integers(0, 1_000_000)), save_s=SAVE_S,
       gpu_mtbf_h=GPU_MTBF_H)
def test_chapter2_lost_time_grows_with_gpus(gpus, save_s, gpu_mtbf_h):
    few, many = sorted(gpus)
    a, b = interruption_row(few, save_s, gpu_mtbf_h), interruption_row(many, save_s, gpu_mtbf_h)
    assert b.per_day >= a.per_day
    assert b.young_lost_pct >= a.young_lost_pct
    assert b.daly_lost_pct >= a.daly_lost_pct - 1e-9


@given(gpus=st.tuples(GPUS, GPUS), gpu_mtbf_h=GPU_MTBF_H, save_s=st.floats(0.1, 3600.0),
       restart_s=st.floats(0.0, 7200.0), speed=st.floats(0.01, 1.0))
def test_goodput_falls_with_gpus(gpus, gpu_mtbf_h, save_s, restart_s, speed):
    few, many = sorted(gpus)
    kw = dict(gpu_mtbf_h=gpu_mtbf_h, save_s=save_s, restart_s=restart_s, straggler_speed=speed)
    a, b = goodput_budget(gpus=few, **kw), goodput_budget(gpus=many, **kw)
    assert b.useful_pct <= a.useful_pct + 1e-9
    assert b.daly_goodput_pct <= a.daly_goodput_pct + 1e-9
    assert b.availability_pct <= a.availability_pct + 1e-9


@given(speed=st.floats(0.0, 1.0, exclude_min=True), gpus=st.tuples(GPUS, GPUS))
def test_straggler_hours_grow_with_gpus_but_the_step_does_not(speed, gpus):
    few, many = sorted(gpus)
    a, b = straggler_tax(speed=speed, gpus=few), straggler_tax(speed=speed, gpus=many)
    assert b.gpu_hours_lost_per_day >= a.gpu_hours_lost_per_day
    assert b.step_time_factor == a.step_time_factor


# -- Young's interval is the minimum of the first-order loss -----------------------------------

@given(save_s=st.floats(1e-3, 3600.0), mtbf_s=MTBF_S, factor=st.floats(1e-3, 1e3))
def test_young_interval_minimises_first_order_loss(save_s, mtbf_s, factor):
    best = young_interval(save_s, mtbf_s)
    at_best = first_order_lost(best, save_s, mtbf_s)
    assert math.isclose(at_best, young_lost(save_s, mtbf_s), rel_tol=1e-9)
    assert first_order_lost(best * factor, save_s, mtbf_s) >= at_best * (1 - 1e-12)
    if not 0.999 < factor < 1.001:
        assert first_order_lost(best * factor, save_s, mtbf_s) > at_best


@given(save_s=st.floats(1e-3, 3600.0), mtbf_s=MTBF_S)
def test_daly_interval_is_below_the_mtbf_and_near_young(save_s, mtbf_s):
    daly, young = daly_interval(save_s, mtbf_s), young_interval(save_s, mtbf_s)
    assert 0.0 < daly <= max(mtbf_s, young * 1.5)
    if save_s < 0.01 * mtbf_s:  # Daly tends to Young as δ/M → 0
        assert abs(daly - young) <= 0.1 * young


# -- placement accounts for every rank and never overfills a domain -----------------------------

ORDERS = ["tp,pp,dp", "tp,dp,pp", "pp,tp,dp", "pp,dp,tp", "dp,tp,pp", "dp,pp,tp"]


@st.composite
def jobs(draw, packing=None):
    domain = draw(st.integers(1, 72), label="domain_size")
    tp = draw(st.integers(1, domain), label="tp")
    pp = draw(st.integers(1, 16), label="pp")
    dp = draw(st.integers(1, 16), label="dp")
    packing = packing or draw(st.sampled_from(["groups", "ranks"]), label="packing")
    order = "tp,pp,dp" if packing == "groups" and draw(st.booleans()) else \
        draw(st.sampled_from([o for o in ORDERS if packing == "ranks" or o.startswith("tp")]), label="order")
    return tp, pp, dp, domain, order, packing


@given(job=jobs())
def test_placement_never_overfills_a_domain_and_places_every_rank(job):
    tp, pp, dp, domain, order, packing = job
    where = placement(tp, pp, dp, domain, order=order, packing=packing)
    dom = _domains_of_ranks(tp, pp, dp, domain, tuple(order.split(",")), packing)
    assert dom.shape == (dp, pp, tp)  # every rank has exactly one domain
    occupancy = np.bincount(dom.ravel(), minlength=where.domains)
    assert len(occupancy) == where.domains and dom.min() == 0
    assert occupancy.sum() == where.gpus == tp * pp * dp
    capacity = where.groups_per_domain * tp if packing == "groups" else domain
    assert occupancy.max() <= capacity <= domain
    assert (occupancy[:-1] == capacity).all()  # domains fill in order; only the last is partial
    assert occupancy[-1] == where.last_domain_gpus >= 1
    assert where.idle_gpus == where.domains * domain - where.gpus >= 0
    assert where.domains == math.ceil(where.gpus / capacity)


@given(job=jobs())
def test_placement_counts_are_consistent(job):
    tp, pp, dp, domain, order, packing = job
    w = placement(tp, pp, dp, domain, order=order, packing=packing)
    assert 0 <= w.tp_groups_inside <= w.tp_groups == pp * dp
    assert 0 <= w.pp_hops_crossing <= w.pp_hops == (pp - 1) * dp
    assert w.pp_hops_crossing <= w.pp_links_crossing <= w.pp_links == tp * w.pp_hops
    assert 0 <= w.dp_groups_crossing <= w.dp_groups == tp * pp
    if packing == "groups":
        assert w.tp_groups_inside == w.tp_groups  # whole groups are never split
    if w.domains == 1:
        assert w.pp_hops_crossing == w.dp_groups_crossing == 0 and w.tp_groups_inside == w.tp_groups
    assert bool(w.warnings) == bool(w.idle_gpus or w.tp_groups_inside < w.tp_groups)


@given(job=jobs(packing="groups"))
def test_crossing_hops_match_the_closed_form(job):
    tp, pp, dp, domain, _, _ = job
    w = placement(tp, pp, dp, domain)
    crossing, _, _ = hops_crossing_formula(pp, dp, w.groups_per_domain)
    assert w.pp_hops_crossing == crossing


# -- every explorer accepts every value its controls can reach -----------------------------------

FACTORIES = {
    **{f"peak:{name}": f for name, f in peak_views.EXPLORERS.items()},
    **{f"reliability:{name}": f for name, f in reliability_views.EXPLORERS.items()},
    **{f"placement:{name}": f for name, f in placement_views.EXPLORERS.items()},
    **{f"fabric_designs:{name}": f for name, f in fabric_designs_views.EXPLORERS.items()},
    **{f"scaleup:{name}": f for name, f in scaleup_views.EXPLORERS.items()},
}
_BUILT: dict[str, object] = {}


def built(name: str):
    """One explorer per factory, built once (building draws the figure)."""
    if name not in _BUILT:
        _BUILT[name] = FACTORIES[name]()
    return _BUILT[name]


def controls_of(explorer) -> dict[str, W.ValueWidget]:
    """Every control a reader can move: the inputs, and the broken-build toggle if any."""
    controls = dict(explorer.controls)
    if hasattr(explorer, "broken"):
        controls["<broken build>"] = explorer.broken
    return controls


def reachable(widget: W.ValueWidget, bounds: tuple | None = None) -> st.SearchStrategy:
    """The values a reader can give this control: the slider's grid, or both states of a toggle."""
    if isinstance(widget, (W.Checkbox, W.ToggleButton)):
        return st.booleans()
    if isinstance(widget, W.SelectionSlider):  # log-scaled sliders offer a list of values
        return st.sampled_from([value for _, value in widget.options])
    low, high = bounds or (widget.min, widget.max)
    step = widget.step
    n = int(math.floor((high - low) / step + 1e-9))
    grid = st.integers(0, n).map(lambda i: low + i * step)
    if isinstance(widget, W.FloatSlider):
        grid = grid.map(lambda v: min(float(v), high))
    return grid | st.just(high)  # the slider's end, even off the grid


def assert_shows(explorer) -> None:
    assert explorer.table.value.startswith("<table")
    assert explorer.picture.value[:8] == b"\x89PNG\r\n\x1a\n"
    assert isinstance(explorer.report(), str)


def test_every_explorer_is_covered():
    # ten in chapter 1, three in chapter 2, one in chapter 3, eleven in chapter 4, one in chapter 5
    assert len(FACTORIES) == 26


def move(explorer, moves) -> None:
    """Set controls one after another, then update once.

    Each widget change would redraw the picture; here the redraws in between
    are skipped (every intermediate state is itself an example) and the
    explorer updates once at the end, as after a reader's last move. A floor
    (``domain_size`` never below ``tp``) is applied by that update, as live.
    """
    explorer.update = lambda: None  # instance attribute: shadows the method while moving
    try:
        for widget, value in moves:
            widget.value = value  # a slider clamps to its range, as it does for a reader
    finally:
        del explorer.update
    explorer.update()
    assert_shows(explorer)


def ends(widget) -> tuple | None:
    """A slider's two ends (the first and last option of a selection slider); None for a toggle."""
    if isinstance(widget, W.SelectionSlider):
        return widget.options[0][1], widget.options[-1][1]
    return (widget.min, widget.max) if hasattr(widget, "min") else None


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_explorer_corners(name):
    """All sliders at their minimum, then all at their maximum, then back, in opposite orders."""
    explorer = built(name)
    ranges = _BOUNDS.setdefault(name, {k: ends(w) for k, w in controls_of(explorer).items() if ends(w)})
    for end in (0, 1, 0):
        keys = list(ranges) if end else list(reversed(list(ranges)))
        move(explorer, [(explorer.controls[k], ranges[k][end]) for k in keys])


@pytest.mark.parametrize("name", sorted(FACTORIES))
@settings(max_examples=8)
@given(data=st.data())
def test_explorer_accepts_every_reachable_value(name, data):
    explorer = built(name)
    controls = controls_of(explorer)
    # the ranges the factory gave, before any floor moved a minimum
    bounds = _BOUNDS.setdefault(name, {k: ends(w) for k, w in controls.items() if ends(w)})
    keys = data.draw(st.permutations(sorted(controls)), label="order of moves")
    move(explorer, [(controls[k], data.draw(reachable(controls[k], bounds.get(k)), label=k)) for k in keys])


_BOUNDS: dict[str, dict] = {}
