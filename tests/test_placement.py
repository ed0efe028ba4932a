"""Chapter 3's placement model (``clustermath.placement``) and its views.

* BRUTE FORCE: for many small jobs (every rank order, both packings, domain
  sizes that tp does and does not divide, partly filled last domains) every
  count equals a direct enumeration of the global ranks.
* SOURCE: Llama 3 405B on 8-GPU servers and on NVL72 racks, as source 003 states.
* DEGENERATE inputs, and ValueError messages that name the argument and its range.
* TRAFFIC: the per-step byte model against hand arithmetic, and its split
  between NVLink and network.
"""
from __future__ import annotations

import dataclasses
import itertools
import math
from collections import defaultdict

import pytest

from clustermath.placement.parallelism import (
    MAX_GPUS,
    network_traffic,
    placement,
    hops_crossing_formula,
    step_traffic,
    tp_group_layout,
)

ORDERS = [",".join(p) for p in itertools.permutations(("tp", "pp", "dp"))]


def brute(tp: int, pp: int, dp: int, domain_size: int, order: str, packing: str) -> dict[str, int]:
    """Count everything by walking every global rank: its (tp, pp, dp) coordinates and its domain."""
    axes = order.split(",")
    sizes = {"tp": tp, "pp": pp, "dp": dp}
    gpus = tp * pp * dp
    domain_of: dict[tuple[int, int, int], int] = {}
    for rank in range(gpus):
        coord, rest = {}, rank
        for axis in axes:  # innermost first
            coord[axis] = rest % sizes[axis]
            rest //= sizes[axis]
        if packing == "ranks":
            domain = rank // domain_size
        else:
            domain = (rank // tp) // (domain_size // tp)
        domain_of[coord["tp"], coord["pp"], coord["dp"]] = domain

    used = defaultdict(int)
    for domain in domain_of.values():
        used[domain] += 1
    domains = max(used) + 1
    assert sorted(used) == list(range(domains)), "domains are filled without gaps"

    tp_group = defaultdict(set)
    dp_group = defaultdict(set)
    for (t, s, d), domain in domain_of.items():
        tp_group[s, d].add(domain)
        dp_group[t, s].add(domain)
    hops = hops_crossing = links_crossing = 0
    for d in range(dp):
        for s in range(pp - 1):
            hops += 1
            crossing = [domain_of[t, s, d] != domain_of[t, s + 1, d] for t in range(tp)]
            links_crossing += sum(crossing)
            hops_crossing += any(crossing)
    return {
        "gpus": gpus,
        "domains": domains,
        "last_domain_gpus": used[domains - 1],
        "idle_gpus": domains * domain_size - gpus,
        "tp_groups": len(tp_group),
        "tp_groups_inside": sum(len(v) == 1 for v in tp_group.values()),
        "pp_hops": hops,
        "pp_hops_crossing": hops_crossing,
        "pp_links": hops * tp,
        "pp_links_crossing": links_crossing,
        "dp_groups": len(dp_group),
        "dp_groups_crossing": sum(len(v) > 1 for v in dp_group.values()),
    }


def small_jobs():
    """(tp, pp, dp, domain_size): tp 1..4, pp 1..4, dp 1..3, domains tp divides and does not, partial last ones."""
    for tp, pp, dp in itertools.product(range(1, 5), range(1, 5), range(1, 4)):
        for domain_size in sorted({tp, tp + 1, 2 * tp, 2 * tp + 1, 3 * tp + 2, 7, 12}):
            if domain_size >= tp:
                yield tp, pp, dp, domain_size


JOBS = list(small_jobs())


def test_there_are_many_small_jobs_and_all_kinds_of_domains():
    assert len(JOBS) > 250
    assert any(d % tp for tp, _, _, d in JOBS)                               # tp does not divide the domain
    assert any((pp * dp) % (d // tp) for tp, pp, dp, d in JOBS)              # partly filled last domain


@pytest.mark.parametrize("packing", ["groups", "ranks"])
def test_counts_match_brute_force_enumeration(packing):
    checked = 0
    for tp, pp, dp, domain_size in JOBS:
        orders = ORDERS if packing == "ranks" else ["tp,pp,dp", "tp,dp,pp"]
        for order in orders:
            got = placement(tp, pp, dp, domain_size, order=order, packing=packing)
            want = brute(tp, pp, dp, domain_size, order, packing)
            for field, value in want.items():
                assert getattr(got, field) == value, (tp, pp, dp, domain_size, order, packing, field)
            checked += 1
    assert checked > 500


def test_both_packings_agree_when_tp_divides_the_domain():
    for tp, pp, dp, domain_size in JOBS:
        if domain_size % tp == 0:
            a = dataclasses.replace(placement(tp, pp, dp, domain_size), packing="", warnings=())
            b = dataclasses.replace(placement(tp, pp, dp, domain_size, packing="ranks"), packing="", warnings=())
            assert a == b


def test_closed_form_for_crossing_hops():
    for tp, pp, dp, domain_size in JOBS:
        where = placement(tp, pp, dp, domain_size)
        crossing, starts, both = hops_crossing_formula(pp, dp, where.groups_per_domain)
        assert crossing == where.pp_hops_crossing
        assert starts == where.domains - 1


def test_group_layout_agrees_with_the_counts():
    for tp, pp, dp, domain_size in JOBS[::7]:
        lay = tp_group_layout(tp, pp, dp, domain_size)
        where = lay.placement
        assert len(lay.hop_from) == where.pp_hops
        assert int(lay.hop_crosses.sum()) == where.pp_hops_crossing
        assert int(lay.domain.max()) + 1 == where.domains
        assert (lay.stage + pp * lay.replica == range(pp * dp)).all()
        assert (lay.slot < where.groups_per_domain).all()


# -- the source's numbers ------------------------------------------------------------------

def test_llama3_405b_on_eight_gpu_servers():
    r = placement(8, 16, 128, 8)
    assert (r.gpus, r.domains, r.idle_gpus, r.warnings) == (16_384, 2_048, 0, ())
    assert (r.tp_groups_inside, r.tp_groups) == (2_048, 2_048)
    assert (r.pp_hops_crossing, r.pp_hops) == (1_920, 1_920)
    assert (r.dp_groups_crossing, r.dp_groups) == (128, 128)


def test_llama3_405b_rehoused_on_nvl72():
    r = placement(8, 16, 128, 72)
    assert (r.groups_per_domain, r.domains) == (9, 228)
    assert divmod(r.tp_groups, r.groups_per_domain) == (227, 5)          # 227 full racks and 5 groups
    assert (r.last_domain_gpus, r.idle_gpus, r.partial_last_domain) == (40, 32, True)
    assert (r.tp_groups_inside, r.pp_hops_crossing, r.pp_hops_on_nvlink) == (2_048, 213, 1_707)
    assert (r.dp_groups_crossing, r.dp_groups) == (128, 128)
    assert hops_crossing_formula(16, 128, 9) == (213, 227, 14)
    assert any("last domain" in w for w in r.warnings)


def test_pipeline_innermost_moves_tensor_traffic_to_the_network():
    r = placement(8, 16, 128, 8, order="pp,tp,dp", packing="ranks")
    assert r.tp_groups_inside == 0
    assert r.pp_hops_crossing == 128      # only the stage 7 -> 8 hop of each replica leaves a server


# -- degenerate inputs ------------------------------------------------------------------

def test_one_gpu():
    r = placement(1, 1, 1, 1)
    assert (r.gpus, r.domains, r.tp_groups_inside, r.pp_hops, r.dp_groups, r.dp_groups_crossing) == (1, 1, 1, 0, 1, 0)
    assert r.warnings == ()


def test_no_pipeline_means_no_hops_and_one_replica_means_no_dp_crossing():
    assert placement(4, 1, 64, 8).pp_hops == 0
    r = placement(2, 8, 1, 4)
    assert r.dp_groups_crossing == 0 and r.dp_groups == 16


def test_whole_job_in_one_domain_uses_no_network():
    r = placement(2, 3, 2, 72)
    assert r.domains == 1 and r.pp_hops_crossing == 0 and r.dp_groups_crossing == 0
    assert r.partial_last_domain and r.idle_gpus == 60


def test_tp_equal_to_domain_size():
    r = placement(8, 2, 2, 8)
    assert r.groups_per_domain == 1 and r.pp_hops_crossing == r.pp_hops == 2


def test_tp_not_dividing_the_domain():
    groups = placement(16, 16, 64, 72)
    assert groups.groups_per_domain == 4 and groups.tp_groups_inside == groups.tp_groups
    assert groups.idle_gpus == groups.domains * 8 and groups.domains == 256
    ranks = placement(16, 16, 64, 72, packing="ranks")
    assert ranks.domains == 228 and ranks.tp_groups_inside < ranks.tp_groups
    assert any("straddle" in w for w in ranks.warnings)
    assert any("does not divide" in w for w in groups.warnings)


def test_strict_raises_only_when_gpus_idle_or_groups_split():
    placement(8, 16, 128, 8, strict=True)                                   # fills every server
    placement(8, 9, 2, 72, strict=True)                                     # 18 groups, 2 full racks
    with pytest.raises(ValueError, match=r"strict=True: the job does not fill its last domain: 40 of 72"):
        placement(8, 16, 128, 72, strict=True)
    with pytest.raises(ValueError, match=r"strict=True: tp=16 does not divide domain_size=72"):
        placement(16, 9, 2, 72, strict=True)
    with pytest.raises(ValueError, match=r"straddle"):
        placement(16, 9, 1, 72, packing="ranks", strict=True)


# -- error messages ------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["tp", "pp", "dp", "domain_size"])
@pytest.mark.parametrize("bad", [0, -1, 2.0, True, "8", None, MAX_GPUS + 1])
def test_bad_sizes_name_the_argument_and_the_range(name, bad):
    args = {"tp": 2, "pp": 2, "dp": 2, "domain_size": 8, name: bad}
    with pytest.raises(ValueError, match=rf"^{name} must be a whole number in 1\.\.1,048,576, got "):
        placement(**args)


def test_tp_larger_than_the_domain():
    with pytest.raises(ValueError, match=r"^tp must be in 1\.\.domain_size \(8\), got tp=16: .*one NVLink domain"):
        placement(16, 2, 2, 8)


def test_too_many_gpus():
    with pytest.raises(ValueError, match=r"tp × pp × dp must be at most 1,048,576 GPUs, got 8 × 1024 × 1024"):
        placement(8, 1024, 1024, 8)


def test_bad_order_packing_and_strict():
    with pytest.raises(ValueError, match=r"^order must list tp, pp and dp once each"):
        placement(2, 2, 2, 8, order="tp,tp,dp")
    with pytest.raises(ValueError, match=r"^packing must be one of \['groups', 'ranks'\], got "):
        placement(2, 2, 2, 8, packing="racks")
    with pytest.raises(ValueError, match=r"^packing='groups' .* order must put tp innermost"):
        placement(2, 2, 2, 8, order="pp,tp,dp")
    with pytest.raises(ValueError, match=r"^strict must be True or False"):
        placement(2, 2, 2, 8, strict=1)
    with pytest.raises(ValueError, match=r"^groups_per_domain must be a whole number in 1\.\."):
        hops_crossing_formula(2, 2, 0)


def test_order_given_as_a_tuple():
    assert placement(2, 2, 2, 4, order=("tp", "pp", "dp")) == placement(2, 2, 2, 4)


def test_result_is_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        placement(2, 2, 2, 4).domains = 3


# -- the byte model --------------------------------------------------------------------------

LLAMA = dict(tp=8, pp=16, dp=128, layers=126, hidden=16_384, tokens_per_step=2**24, microbatch_tokens=8_192,
             params=405e9, grad_bytes=4, gather_bytes=2)     # FP32 reduce-scatter, BF16 all-gather (Llama 3 §3.3.2)


def test_step_traffic_by_hand():
    r = step_traffic(tp=2, pp=4, dp=3, layers=8, hidden=10, tokens_per_step=60, microbatch_tokens=5, params=1200,
                     grad_bytes=2)
    activation = 5 * 10 * 2                                   # one microbatch at a layer boundary, bf16
    assert r.microbatches == 4                                # 60 tokens / 3 replicas / 5 tokens
    assert r.tp_collectives_per_gpu == 4 * 8 / 4 * 4          # 4 per layer, 2 layers per stage, 4 microbatches
    assert r.tp_bytes_per_gpu == pytest.approx(32 * 2 * (1 / 2) * activation)
    assert r.pp_bytes_per_link == 2 * 4 * activation / 2
    assert r.pp_bytes_per_gpu == pytest.approx(3 / 4 * r.pp_bytes_per_link)
    assert r.dp_bytes_per_gpu == pytest.approx(2 * 2 / 3 * 1200 / 8 * 2)
    assert r.pp_bytes == pytest.approx(placement(2, 4, 3, 8).pp_links * r.pp_bytes_per_link)
    plain = step_traffic(tp=2, pp=4, dp=3, layers=8, hidden=10, tokens_per_step=60, microbatch_tokens=5,
                         params=1200, grad_bytes=2, scatter_gather=False)
    assert plain.pp_bytes_per_link == 2 * r.pp_bytes_per_link


def test_step_traffic_without_a_dimension_has_no_traffic_of_that_kind():
    r = step_traffic(tp=1, pp=1, dp=1, layers=4, hidden=8, tokens_per_step=16, microbatch_tokens=4, params=100, grad_bytes=4)
    assert (r.tp_bytes_per_gpu, r.pp_bytes_per_gpu, r.dp_bytes_per_gpu) == (0, 0, 0)


def test_llama_traffic_order_and_split():
    r = step_traffic(**LLAMA)
    assert r.microbatches == 16
    assert r.tp_bytes_per_gpu > r.dp_bytes_per_gpu > r.pp_bytes_per_gpu    # in bytes, DP outweighs PP
    assert r.tp_collectives_per_gpu > r.pp_sends_per_gpu > r.dp_collectives_per_gpu  # in messages, the source's order
    servers = network_traffic(placement(8, 16, 128, 8), r)
    racks = network_traffic(placement(8, 16, 128, 72), r)
    assert servers.tp_network_bytes == racks.tp_network_bytes == 0
    assert racks.pp_network_bytes == pytest.approx(servers.pp_network_bytes * 213 / 1920)
    assert racks.dp_network_bytes == servers.dp_network_bytes == pytest.approx(r.dp_bytes)
    total = r.tp_bytes + r.pp_bytes + r.dp_bytes
    assert servers.network_bytes + servers.nvlink_bytes == pytest.approx(total)


def test_gradient_width_is_an_input():
    base = dict(LLAMA, grad_bytes=2, gather_bytes=None)
    bf16 = step_traffic(**base)
    # an all-reduce at one width is a reduce-scatter and an all-gather at that width
    assert bf16.dp_bytes_per_gpu == pytest.approx(2 * 127 / 128 * 405e9 / 128 * 2)
    assert bf16.dp_bytes_per_gpu == pytest.approx(step_traffic(**dict(base, gather_bytes=2)).dp_bytes_per_gpu)
    assert bf16.dp_bytes_per_gpu / 1e9 == pytest.approx(12.56, abs=0.005)
    llama = step_traffic(**LLAMA)                               # FP32 reduce-scatter + BF16 all-gather
    assert llama.dp_bytes_per_gpu / 1e9 == pytest.approx(18.84, abs=0.005)
    assert llama.dp_reduce_bytes_per_gpu == pytest.approx(2 * bf16.dp_reduce_bytes_per_gpu)
    assert llama.dp_bytes_per_gpu == pytest.approx(1.5 * bf16.dp_bytes_per_gpu)
    fp32 = step_traffic(**dict(LLAMA, gather_bytes=4))
    assert fp32.dp_bytes_per_gpu == pytest.approx(2 * bf16.dp_bytes_per_gpu)
    # the other kinds of traffic do not depend on the gradient width
    assert (llama.tp_bytes_per_gpu, llama.pp_bytes_per_gpu) == (bf16.tp_bytes_per_gpu, bf16.pp_bytes_per_gpu)
    assert step_traffic(**dict(LLAMA, dp=1, tokens_per_step=2**17)).dp_bytes_per_gpu == 0
    with pytest.raises(TypeError):
        step_traffic(**{k: v for k, v in LLAMA.items() if k not in ("grad_bytes", "gather_bytes")})
    for bad in (0, 9, 2.5):
        with pytest.raises(ValueError, match="grad_bytes"):
            step_traffic(**dict(LLAMA, grad_bytes=bad))
        with pytest.raises(ValueError, match="gather_bytes"):
            step_traffic(**dict(LLAMA, gather_bytes=bad))


def test_step_traffic_errors():
    with pytest.raises(ValueError, match=r"^tokens_per_step must split into dp × a whole number of microbatches"):
        step_traffic(**{**LLAMA, "tokens_per_step": 2**24 + 1})
    with pytest.raises(ValueError, match=r"^hidden must be a whole number in 1\.\."):
        step_traffic(**{**LLAMA, "hidden": 0})
    with pytest.raises(ValueError, match=r"^params must be a positive number"):
        step_traffic(**{**LLAMA, "params": -1})
    with pytest.raises(ValueError, match=r"^traffic and placement must describe the same job"):
        network_traffic(placement(8, 16, 64, 8), step_traffic(**LLAMA))


# -- the views ----------------------------------------------------------------------------------

def test_explorer_reports_the_model_and_floors_the_domain_at_tp():
    from clustermath.views.placement import placement_explorer

    e = placement_explorer()
    assert repr(e) == "ModelView(placement)"
    assert e.report().splitlines()[0] == "placement(tp=4, pp=4, dp=4, domain_size=12)"
    e.controls["tp"].value = 16
    assert e.controls["domain_size"].value == 16 and e.controls["domain_size"].min == 16
    assert "pp_hops_crossing" in e.report() and math.isfinite(e.timings[-1][1])
