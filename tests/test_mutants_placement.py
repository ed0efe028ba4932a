"""Tests added to kill the mutants that chapter 3's tests let live (see tools/mutants/REPORT.md)."""
from __future__ import annotations

import pytest

from clustermath.placement.parallelism import hops_crossing_formula, placement, step_traffic, tp_group_layout

from argument_errors import BAD, assert_errors_name_their_argument


VALID = [
    (placement, dict(tp=1, pp=1, dp=1, domain_size=1, order="tp,pp,dp", packing="groups", strict=False)),
    (hops_crossing_formula, dict(pp=1, dp=1, groups_per_domain=1)),
    (tp_group_layout, dict(tp=1, pp=1, dp=1, domain_size=1)),
    (step_traffic, dict(tp=1, pp=1, dp=1, layers=1, hidden=1, tokens_per_step=1, microbatch_tokens=1,
                        params=1.0, act_bytes=2, grad_bytes=2)),
]


@pytest.mark.parametrize("function, valid", VALID, ids=[f.__name__ for f, _ in VALID])
def test_every_chapter3_error_names_its_argument(function, valid):
    """A ValueError names the input that is wrong, not another (kills mutated argument names)."""
    assert_errors_name_their_argument(function, valid)


def test_step_traffic_rejects_a_scatter_gather_that_is_not_a_flag():
    with pytest.raises(ValueError, match="^scatter_gather must"):
        step_traffic(tp=1, pp=1, dp=1, layers=1, hidden=1, tokens_per_step=1, microbatch_tokens=1,
                     params=1.0, grad_bytes=2, scatter_gather=BAD)


# -- every size at the ends of its range ------------------------------------------------------

from clustermath.placement.parallelism import MAX_GPUS, network_traffic  # noqa: E402

VALID_BY_NAME = {f.__name__: v for f, v in VALID}
FUNCTIONS = {f.__name__: f for f, _ in VALID}
ENDS = [
    *[("placement", a, 1, MAX_GPUS) for a in ("tp", "pp", "dp", "domain_size")],
    *[("hops_crossing_formula", a, 1, MAX_GPUS) for a in ("pp", "dp", "groups_per_domain")],
    *[("step_traffic", a, 1, MAX_GPUS) for a in ("tp", "pp", "dp")],
    ("step_traffic", "layers", 1, 1 << 20), ("step_traffic", "hidden", 1, 1 << 24),
    ("step_traffic", "tokens_per_step", 1, 1 << 40), ("step_traffic", "microbatch_tokens", 1, 1 << 40),
    ("step_traffic", "act_bytes", 1, 8), ("step_traffic", "grad_bytes", 1, 8),
]


def _at(function, name, value):
    kwargs = {**VALID_BY_NAME[function], name: value}
    if function == "placement" and name == "tp":
        kwargs["domain_size"] = max(value, 1)  # a tensor-parallel group fits in its domain
    if function == "step_traffic" and name in ("dp", "microbatch_tokens"):
        kwargs["tokens_per_step"] = min(max(value, 1), 1 << 40)  # tokens split into whole microbatches
    return FUNCTIONS[function](**kwargs)


@pytest.mark.parametrize("function, name, low, high", ENDS, ids=[f"{f}-{a}" for f, a, _, _ in ENDS])
def test_every_size_at_its_ends_and_one_past(function, name, low, high):
    _at(function, name, low)
    _at(function, name, high)
    for bad in (low - 1, high + 1):
        with pytest.raises(ValueError) as err:
            _at(function, name, bad)
        assert str(err.value).startswith(f"{name} must"), (name, bad, str(err.value))


def test_network_and_nvlink_bytes_add_up_and_jobs_must_match():
    where = placement(8, 16, 4, 72)
    traffic = step_traffic(tp=8, pp=16, dp=4, layers=126, hidden=16_384, tokens_per_step=4 * 16 * 4096,
                           microbatch_tokens=4096, params=405e9, grad_bytes=4)
    net = network_traffic(where, traffic)
    total = traffic.tp_bytes + traffic.pp_bytes + traffic.dp_bytes
    assert net.network_bytes + net.nvlink_bytes == pytest.approx(total, rel=1e-12)
    assert net.tp_network_bytes == 0.0  # whole groups never straddle a domain
    assert net.pp_network_bytes == where.pp_links_crossing * traffic.pp_bytes_per_link > 0
    assert net.dp_network_bytes == traffic.dp_bytes > 0  # every data-parallel group spans domains
    with pytest.raises(ValueError, match="^traffic and placement must describe the same job"):
        network_traffic(placement(8, 16, 2, 72), traffic)


def test_group_layout_domains_are_whole_numbers():
    layout = tp_group_layout(4, 3, 2, 12)  # three groups a domain
    assert layout.domain.tolist() == [g // 3 for g in range(6)] and layout.domain.dtype.kind == "i"
    assert layout.slot.tolist() == [g % 3 for g in range(6)]
    assert layout.replica.tolist() == [g // 3 for g in range(6)] and layout.stage.tolist() == [0, 1, 2] * 2


def test_step_traffic_totals_and_counts():
    t = step_traffic(tp=2, pp=4, dp=3, layers=8, hidden=10, tokens_per_step=3 * 5 * 7, microbatch_tokens=7,
                     params=1200.0, act_bytes=2, grad_bytes=2)
    assert t.microbatches == 5 and t.gpus == 24
    assert t.pp_sends_per_gpu == 2 * 5 * 3 / 4
    assert t.dp_collectives_per_gpu == 1
    assert t.tp_bytes == t.tp_bytes_per_gpu * 24 and t.dp_bytes == t.dp_bytes_per_gpu * 24
    assert t.pp_bytes == t.pp_bytes_per_gpu * 24
    assert t.dp_bytes_per_gpu == 2 * 2 / 3 * 1200 / 8 * 2


def test_step_traffic_refuses_zero_tokens_and_zero_parameters():
    valid = VALID_BY_NAME["step_traffic"]
    with pytest.raises(ValueError, match="^tokens_per_step must be a whole number in 1"):
        step_traffic(**{**valid, "tokens_per_step": 0})
    with pytest.raises(ValueError, match="^params must be a positive number"):
        step_traffic(**{**valid, "params": 0.0})


def test_network_traffic_counts_split_tensor_groups_whole():
    where = placement(4, 2, 2, 6, packing="ranks")  # groups of 4 on domains of 6: some straddle
    traffic = step_traffic(tp=4, pp=2, dp=2, layers=4, hidden=8, tokens_per_step=2 * 2 * 16,
                           microbatch_tokens=16, params=1e6, grad_bytes=2)
    net = network_traffic(where, traffic)
    assert 0 < where.tp_groups_split < where.tp_groups
    assert net.tp_network_bytes == pytest.approx(traffic.tp_bytes * where.tp_groups_split / where.tp_groups)
    total = traffic.tp_bytes + traffic.pp_bytes + traffic.dp_bytes
    assert net.nvlink_bytes == pytest.approx(total - net.network_bytes)


@pytest.mark.parametrize("args, packing, warnings", [
    ((4, 1, 3, 6), "groups", ("tp=4 does not divide domain_size=6: each domain takes 1 whole tensor-parallel "
                              "group (4 GPUs) and leaves 2 idle", "6 GPUs of the 3 occupied domains stay idle")),
    ((3, 1, 5, 7), "groups", ("tp=3 does not divide domain_size=7: each domain takes 2 whole tensor-parallel "
                              "groups (6 GPUs) and leaves 1 idle",
                              "the job does not fill its last domain: 3 of 6 usable GPUs (1 of 2 groups)",
                              "6 GPUs of the 3 occupied domains stay idle")),
    ((4, 3, 1, 8), "groups", ("the job does not fill its last domain: 4 of 8 usable GPUs (1 of 2 groups)",
                              "4 GPUs of the 2 occupied domains stay idle")),
    ((4, 1, 3, 6), "ranks", ("1 of 3 tensor-parallel groups straddle a domain boundary",)),
    ((4, 1, 2, 6), "ranks", ("the job does not fill its last domain: 2 of 6 GPUs",
                             "1 of 2 tensor-parallel groups straddle a domain boundary",
                             "4 GPUs of the 2 occupied domains stay idle")),
])
def test_warnings_word_for_word(args, packing, warnings):
    """What a scheduler is told: one group or several, usable GPUs with whole groups, plain GPUs with ranks."""
    assert placement(*args, packing=packing).warnings == warnings


def test_placement_echoes_its_inputs_and_flags_only_a_partial_last_domain():
    w = placement(4, 2, 3, 8, order="tp,pp,dp", packing="groups")
    assert (w.tp, w.pp, w.dp, w.domain_size, w.order, w.packing) == (4, 2, 3, 8, "tp,pp,dp", "groups")
    assert placement(2, 2, 2, 8, order=("pp", "tp", "dp"), packing="ranks").order == "pp,tp,dp"
    assert w.last_domain_gpus == 8 and not w.partial_last_domain  # a full last domain is not partial
    with pytest.raises(ValueError) as err:
        placement(3, 1, 5, 7, strict=True)
    assert str(err.value) == "strict=True: " + "; ".join(placement(3, 1, 5, 7).warnings)


# -- survivors of the rerun after step_traffic gained gather_bytes (tools/mutants/REPORT.md) --------

SMALL = dict(tp=2, pp=2, dp=4, layers=4, hidden=10, tokens_per_step=80, microbatch_tokens=5, params=1_000.0)


def test_dp_reduce_bytes_by_hand():
    # the reduce-scatter alone: (dp - 1) / dp × params / (tp × pp) × grad_bytes = 3/4 × 1,000 / 4 × 4 = 750
    r = step_traffic(**SMALL, grad_bytes=4, gather_bytes=1)
    assert r.dp_reduce_bytes_per_gpu == 750.0 and r.dp_bytes_per_gpu == 750.0 + 187.5


def test_gather_bytes_range_and_message():
    assert step_traffic(**SMALL, grad_bytes=2, gather_bytes=1).dp_bytes_per_gpu == 3 / 4 * 250 * 3
    with pytest.raises(ValueError, match=r"^gather_bytes must be a whole number in 1..8, got 0$"):
        step_traffic(**SMALL, grad_bytes=2, gather_bytes=0)


def test_tokens_must_split_into_whole_microbatches_even_when_there_are_several():
    # 21 tokens per replica in microbatches of 5: four whole microbatches and one token over
    with pytest.raises(ValueError, match=r"^tokens_per_step must split into dp × a whole number of microbatches"):
        step_traffic(**dict(SMALL, tokens_per_step=84), grad_bytes=2)
