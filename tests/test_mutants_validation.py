"""Mutation tests of chapter 6's models (``clustermath.validation``): what the chapter tests left open.

Written against the survivors of ``make mutants`` (``tools/mutants/REPORT.md``): every
error's full message at the bound it states, each bound at equality, every field of
every result, the degenerate inputs, and the parts of ``predict_run`` the chapter's
own tests only reach at their defaults (context parallelism with full recompute, a
data-parallel group inside one domain of a job that spans several, a tensor-parallel
size that does not divide the domain). Values are computed here from the formulas
the docstrings print, not read back from the code under test.
"""
from __future__ import annotations

import math
import statistics
from statistics import NormalDist

import pytest

from clustermath import (
    CALIBRATION, Calibrated, Calibration, calibrate, calibrate_defaults, hardware_flops, model_flops,
    TrainingDays, days_to_train, parameter_count, predict_run, refit_solved, ring_factor, run_ettr, slowest_of,
)
import validation_printed as printed_pins
from clustermath.validation import cross_checks, disagreements
from clustermath.validation import measurements
from clustermath.validation import predict as predict_module
from clustermath.validation.holdout import residuals, summary
from clustermath.validation.inputs import CP_ATTENTION_OVERHEAD
from validation_fresh import csv_rows, fresh

INF = math.inf


@pytest.fixture(autouse=True)
def _fresh():
    fresh()


# a small run whose every term can be written out: 8 GPUs in one 8-GPU domain, TP 2 x PP 2 x DP 2
SMALL = dict(layers=4, hidden=512, seq_len=3072, vocab=24_576, global_batch=8, microbatch=1, gpus=8,
             tp=2, pp=2, peak_tflops=100.0, scale_up_GBps=100.0, scale_out_GBps=10.0,
             kernel_efficiency=0.5, kernel_half_width=0.0, bus_efficiency_up=1.0, bus_efficiency_out=1.0,
             straggler_cv=0.0, memory_TBps=math.inf, latency_s=0.0)
UP, OUT = 100e9, 10e9  # bytes/s of SMALL's two wires at efficiency 1


def params(l: int, h: int, s: int, v: int) -> float:
    """Narayanan et al. eq. 2, written out here."""
    return 12.0 * l * h * h * (1.0 + 13.0 / (12.0 * h) + (v + s) / (12.0 * l * h))


# -- predict.py: argument checks at their bounds ------------------------------------------------

@pytest.mark.parametrize("change, message", [
    ({"layers": 0}, "layers must be a whole number in 1..inf, got 0"),
    ({"hidden": 0}, "hidden must be a whole number in 1..inf, got 0"),
    ({"seq_len": 0}, "seq_len must be a whole number in 1..inf, got 0"),
    ({"vocab": -1}, "vocab must be a whole number in 0..inf, got -1"),
    ({"global_batch": 0}, "global_batch must be a whole number in 1..inf, got 0"),
    ({"microbatch": 0}, "microbatch must be a whole number in 1..inf, got 0"),
    ({"gpus": 0}, "gpus must be a whole number in 1..inf, got 0"),
    ({"tp": 0}, "tp must be a whole number in 1..65,535, got 0"),
    ({"pp": 0}, "pp must be a whole number in 1..65,535, got 0"),
    ({"pp": 65_536}, "pp must be a whole number in 1..65,535, got 65536"),
    ({"cp": 0}, "cp must be a whole number in 1..65,535, got 0"),
    ({"cp": 65_536}, "cp must be a whole number in 1..65,535, got 65536"),
    ({"virtual_stages": 0}, "virtual_stages must be a whole number in 1..inf, got 0"),
    ({"scale_up_gpus": 0}, "scale_up_gpus must be a whole number in 1..inf, got 0"),
    ({"heads": 0}, "heads must be a whole number in 1..inf, got 0"),
    ({"kv_heads": 0}, "kv_heads must be a whole number in 1..8, got 0"),
    ({"scale_up_GBps": 0}, "scale_up_GBps must be a number in (0, inf] GB/s, got 0"),
    ({"scale_out_GBps": -1}, "scale_out_GBps must be a number in (0, inf] GB/s, got -1"),
    ({"bus_efficiency_up": 0}, "bus_efficiency_up must be a number in (0, 1], got 0"),
    ({"bus_efficiency_out": 0}, "bus_efficiency_out must be a number in (0, 1], got 0"),
    ({"kernel_efficiency": 0}, "kernel_efficiency must be a number in (0, 1], got 0"),
    ({"tp_overlap": 1.5}, "tp_overlap must be a number in [0, 1], got 1.5"),
    ({"pp_overlap": -0.5}, "pp_overlap must be a number in [0, 1], got -0.5"),
    ({"straggler_cv": -1}, "straggler_cv must be a number in [0, inf), got -1"),
    ({"peak_tflops": 0}, "peak_tflops must be a number in (0, inf) TFLOP/s, got 0"),
    ({"gpus": 4 * 65_536, "global_batch": 65_536 * 2, "virtual_stages": 1},
     "gpus must keep the data-parallel group gpus/(tp·pp) within 1..65,535 ranks, got 262144 (65,536 ranks)"),
    ({"global_batch": 2 * 40_000},
     "virtual_stages must keep virtual_stages·microbatches within 1..65,535, got 2 (80,000)"),
    ({"gpus": 6}, "gpus must be a multiple of tp·pp·cp = 4, got 6"),
    ({"global_batch": 7}, "global_batch must be a multiple of microbatch·dp = 2 sequences, got 7"),
    ({"pp": 1, "gpus": 4}, "virtual_stages must be 1 when pp = 1 (interleaving needs a pipeline), got 2"),
    ({"layers": 1}, "layers must be at least pp = 2 (a layer per stage), got 1"),
    ({"cp": 2, "seq_len": 3071, "gpus": 16, "global_batch": 4}, "seq_len must be a multiple of cp = 2 tokens, got 3071"),
    ({"heads": 7}, "heads must divide hidden = 512, got 7"),
    ({"kv_heads": 3}, "kv_heads must divide heads = 8, got 3"),
    ({"heads": None}, "kv_heads must be None when heads is None, got 4"),
])
def test_every_refusal_reads_in_full(change, message):
    valid = {**SMALL, "heads": 8, "kv_heads": 4, "virtual_stages": 2}
    with pytest.raises(ValueError) as err:
        predict_run(**{**valid, **change})
    assert str(err.value) == message


def test_each_lower_bound_itself_is_accepted():
    one = predict_run(layers=1, hidden=1, seq_len=1, vocab=0, global_batch=1, microbatch=1, gpus=1, tp=1,
                      pp=1, cp=1, virtual_stages=1, heads=1, kv_heads=1, scale_up_gpus=1, peak_tflops=1.0,
                      scale_up_GBps=1.0, scale_out_GBps=1.0, kernel_half_width=0.0, straggler_cv=0.0)
    assert (one.dp, one.microbatches) == (1, 1)
    assert one.parameters == params(1, 1, 1, 0)
    assert one.step_s == one.compute_s
    assert parameter_count(layers=1, hidden=1, seq_len=1, vocab=0) == params(1, 1, 1, 0)


def test_the_16_bit_groups_reach_65535_and_stop_there():
    # the data-parallel group counts d·c ranks: 21,845 replicas of 3 context-parallel ranks = 65,535
    edge = predict_run(**{**SMALL, "tp": 1, "pp": 1, "cp": 3, "gpus": 65_535, "global_batch": 21_845})
    assert (edge.dp, edge.microbatches) == (21_845, 1)
    with pytest.raises(ValueError) as err:  # 32,768 replicas of 2: 65,536 ranks, though gpus/cp is not
        predict_run(**{**SMALL, "tp": 1, "pp": 1, "cp": 2, "gpus": 65_536, "global_batch": 32_768})
    assert str(err.value) == ("gpus must keep the data-parallel group gpus/(tp·pp) within 1..65,535 ranks, "
                              "got 65536 (65,536 ranks)")
    # v·m = 3 × 21,845 = 65,535 interleaved micro-batch slots: the largest chapter 1's bubble takes
    slots = predict_run(**{**SMALL, "layers": 6, "gpus": 4, "virtual_stages": 3, "global_batch": 21_845})
    assert slots.microbatches == 21_845
    work = slots.compute_s + slots.tp_exposed_s + slots.pp_exposed_s
    assert slots.bubble_s == pytest.approx(work * 1 / 65_535, rel=1e-12)


# -- predict.py: the FLOP formulas and slowest_of ------------------------------------------------

def test_flop_formulas_take_whole_floats_and_zero_sequences():
    shape = dict(layers=4, hidden=512, seq_len=3072, vocab=24_576)
    unit = 72 * 3072 * 4 * 512 ** 2  # 72 s l h² per sequence; each term of the bracket is 1
    assert model_flops(**shape, sequences=2.0) == model_flops(**shape, sequences=2) == 2 * 3 * unit
    assert hardware_flops(**shape, sequences=2.0) == hardware_flops(**shape, sequences=2) == 2 * 3 * unit
    # full recompute adds 24 s l h² (1 + s/6h) = unit/3 × 2 per sequence
    assert hardware_flops(**shape, sequences=2.0, recompute="full") == 2 * 3 * unit + 2 * unit / 3 * 2
    assert model_flops(**shape, sequences=0) == hardware_flops(**shape, sequences=0, recompute="full") == 0.0
    for function in (model_flops, hardware_flops):
        with pytest.raises(ValueError) as err:
            function(**shape, sequences=-1)
        assert str(err.value) == "sequences must be a whole number in 0..inf, got -1"
        with pytest.raises(ValueError) as err:
            function(**{**shape, "seq_len": 0}, sequences=1)
        assert str(err.value) == "seq_len must be a whole number in 1..inf, got 0"
    assert model_flops(layers=1, hidden=6, seq_len=1, vocab=0, sequences=1) == 72 * 36 * (1 + 1 / 36)


def test_slowest_of_at_its_edges():
    blom = NormalDist().inv_cdf
    assert slowest_of(1) == slowest_of(1.0) == 0.0
    assert slowest_of(2.0) == slowest_of(2) == blom((2 - 0.375) / (2 + 0.25))
    assert slowest_of(12_288) == blom((12_288 - 0.375) / (12_288 + 0.25))
    for bad in (0, 2.5, True):
        with pytest.raises(ValueError) as err:
            slowest_of(bad)
        assert str(err.value) == f"ranks must be a whole number in 1..inf, got {bad!r}"


def test_seconds_of_nothing_and_over_an_unlimited_wire():
    seconds = predict_module._seconds
    assert seconds(0.0, 0.0) == 0.0          # no bytes take no time, whatever the wire
    assert seconds(0.0, 5.0) == 0.0
    assert seconds(3.0, INF) == 0.0          # an unlimited wire takes none either
    assert seconds(3.0, 4.0) == 0.75


# -- predict.py: the wires --------------------------------------------------------------------------

def test_context_parallel_exchange_with_full_recompute_at_the_domain_edge():
    """t·c = 8 GPUs fill the 8-GPU domain exactly: the exchange rides the scale-up wire."""
    run = {**SMALL, "layers": 4, "seq_len": 4096, "vocab": 0, "global_batch": 8, "microbatch": 2, "gpus": 16,
           "tp": 2, "pp": 1, "cp": 4, "recompute": "full", "peak_tflops": 1000.0, "scale_up_GBps": 1.0,
           "hopper_kernel_efficiency": 0.5, "causal_attention": False}   # the attention below in full
    r = predict_run(**run)
    assert (r.dp, r.microbatches) == (2, 2)
    b, s, h, l, t, c, m = 2, 4096, 512, 4, 2, 4, 2
    kv = 2 * b * s * h / t                     # no heads given: every head carries keys and values
    exchange = m * l * 3 * 2 * (c - 1) / c * kv  # (2 + full) passes, ring_factor(c)/2 each
    assert r.cp_comm_s == pytest.approx(exchange / 1e9, rel=1e-12)
    rate = 16 * 1000e12 * 0.5
    attention = 16 * 8 * s * s * h * l / rate * (1 + CP_ATTENTION_OVERHEAD)  # 4 passes of 4 s h per token
    # with full recompute, a context-parallel ring's overhead on top
    assert 0 < attention < r.cp_comm_s
    assert r.cp_exposed_s == pytest.approx(r.cp_comm_s - attention, rel=1e-12)
    # a 4-GPU domain cannot hold the 8 GPUs: the exchange crosses the 10 GB/s NICs
    beyond = predict_run(**run, scale_up_gpus=4)
    assert beyond.cp_comm_s == pytest.approx(exchange / 10e9, rel=1e-12)
    # grouped-query attention: 2 key/value heads of 8 carry a quarter of the bytes
    gqa = predict_run(**run, heads=8, kv_heads=2)
    assert gqa.cp_comm_s == pytest.approx(exchange / 4 / 1e9, rel=1e-12)
    # without recompute two passes instead of three
    assert predict_run(**{**run, "recompute": "none"}).cp_comm_s == pytest.approx(exchange * 2 / 3 / 1e9, rel=1e-12)


def test_a_data_parallel_group_inside_one_domain_of_a_larger_job():
    # 16 GPUs over two 8-GPU domains; TP 2 × PP 2: each stage's 4 replicas sit in one domain, on NVLink
    run = {**SMALL, "gpus": 16, "global_batch": 8}
    r = predict_run(**run)
    assert r.dp == 4
    p = params(4, 512, 3072, 24_576)
    assert r.dp_comm_s == pytest.approx(ring_factor(4) * 4 * p / 4 / UP, rel=1e-12)
    assert r.pp_comm_s == pytest.approx(2 * r.microbatches * 2 * 3072 * 512 / 2 / OUT, rel=1e-12)


def test_a_tensor_parallel_size_that_does_not_divide_the_domain():
    # TP 3 in an 8-GPU domain: two whole TP groups share a domain, so 2 rings through 2 NICs
    run = {**SMALL, "tp": 3, "pp": 1, "gpus": 12, "global_batch": 8}
    r = predict_run(**run)
    assert r.dp == 4
    p = params(4, 512, 3072, 24_576)
    assert r.dp_comm_s == pytest.approx(ring_factor(4) * 4 * p / 3 / (2 * OUT), rel=1e-12)


def test_the_parts_in_order():
    r = predict_run(**SMALL)
    assert list(r.parts.items()) == [
        ("compute", r.compute_s), ("bubble", r.bubble_s), ("tp_exposed", r.tp_exposed_s),
        ("cp_exposed", r.cp_exposed_s), ("pp_exposed", r.pp_exposed_s), ("dp_exposed", r.dp_exposed_s),
        ("straggler", r.straggler_s)]
    assert sum(r.parts.values()) == pytest.approx(r.step_s, rel=1e-12)


# -- predict.py: calibrate ------------------------------------------------------------------------

def _mfu(**change) -> float:
    return predict_run(**{**SMALL, **change}).mfu


def test_calibrate_refusals_read_in_full():
    for kw, message in (({"measured": 0}, "measured must be a number in (0, inf), got 0"),
                        ({"measured": -0.5}, "measured must be a number in (0, inf), got -0.5"),
                        ({"low": -1}, "low must be a number in [0, inf), got -1"),
                        ({"low": 0.5, "high": 0.25}, "high must be a number in (0.5, inf), got 0.25")):
        with pytest.raises(ValueError) as err:
            calibrate("tp_overlap", metric="mfu", run=SMALL, **{"measured": 0.5, **kw})
        assert str(err.value) == message


@pytest.mark.parametrize("at", [0.0, 1.0])
@pytest.mark.parametrize("metric", ["mfu", "step_s"])
def test_calibrate_returns_a_bound_that_meets_the_figure_exactly(at, metric):
    """MFU rises with the overlap and the step falls: either way a bound that fits is the answer."""
    measured = getattr(predict_run(**SMALL, tp_overlap=at), metric)
    fit = calibrate("tp_overlap", metric=metric, measured=measured, run=SMALL)
    assert fit == Calibrated("tp_overlap", at, False, measured)
    assert fit.at_bound is False


@pytest.mark.parametrize("metric", ["mfu", "step_s"])
def test_calibrate_finds_a_root_at_the_first_midpoint(metric):
    measured = getattr(predict_run(**SMALL, tp_overlap=0.5), metric)
    fit = calibrate("tp_overlap", metric=metric, measured=measured, run=SMALL)
    assert fit.value == pytest.approx(0.5, abs=1e-12) and fit.at_bound is False
    assert fit.predicted == pytest.approx(measured, rel=1e-15)


def test_calibrate_out_of_reach_returns_the_nearer_bound():
    above = calibrate("tp_overlap", metric="mfu", measured=0.99, run=SMALL)
    assert above == Calibrated("tp_overlap", 1.0, True, _mfu(tp_overlap=1.0))
    below = calibrate("tp_overlap", metric="mfu", measured=0.01, run=SMALL)
    assert below == Calibrated("tp_overlap", 0.0, True, _mfu(tp_overlap=0.0))
    # TP 1 has no tensor-parallel traffic: the overlap changes nothing, both bounds are as near: low
    flat = {**SMALL, "tp": 1, "gpus": 4, "global_batch": 4}
    fit = calibrate("tp_overlap", metric="mfu", measured=0.9, run=flat, low=0.25, high=0.75)
    assert fit == Calibrated("tp_overlap", 0.25, True, predict_run(**flat).mfu)


def test_calibrate_halves_the_bracket_sixty_times():
    """The documented bisection, written out: on a bracket of 1e9 the 60th halving still shows."""
    run = {**SMALL, "kernel_half_width": 0.0}
    measured = _mfu(kernel_half_width=1234.5)

    def gap(x):
        return predict_run(**{**run, "kernel_half_width": x}).mfu - measured

    lo, hi, g_lo = 0.0, 1e9, gap(0.0)
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if (gap(mid) < 0.0) == (g_lo < 0.0):
            lo, g_lo = mid, gap(mid)
        else:
            hi = mid
    fit = calibrate("kernel_half_width", metric="mfu", measured=measured, run=run, low=0.0, high=1e9)
    assert fit.value == 0.5 * (lo + hi) and fit.at_bound is False
    assert fit.constant == "kernel_half_width"
    assert fit.predicted == _mfu(kernel_half_width=fit.value)
    assert abs(fit.value - 1234.5) < 1e-6


# -- predict.py: calibrate_defaults and the calibration rows ------------------------------------------

@pytest.fixture
def calls(monkeypatch):
    """Counts the ``calibrate`` calls ``calibrate_defaults`` makes."""
    made = []
    original = predict_module.calibrate

    def counting(*args, **kwargs):
        made.append(args[0])
        return original(*args, **kwargs)

    monkeypatch.setattr(predict_module, "calibrate", counting)
    return made


def test_refitting_stops_when_a_sweep_moves_nothing(calls):
    one = (CALIBRATION[0],)
    fits = calibrate_defaults(one)
    assert calls == ["kernel_efficiency", "kernel_efficiency"]  # the second sweep moves it by exactly 0
    assert set(fits) == {"kernel_efficiency"}
    calls.clear()
    assert calibrate_defaults(one, sweeps=1) == fits
    assert calls == ["kernel_efficiency"]


def test_a_refit_that_cannot_settle_stops_after_its_sweeps(calls):
    # two rows pull the same constant two ways: every sweep moves it, so all sweeps run
    torn = (CALIBRATION[0], Calibration("kernel_efficiency", 0.6, "nar21-t1-01", low=0.05, high=1.0))
    calibrate_defaults(torn, sweeps=3)
    assert len(calls) == 6
    calls.clear()
    calibrate_defaults(torn)
    assert len(calls) == 2 * 40
    for bad in (0, 2.5):
        with pytest.raises(ValueError) as err:
            calibrate_defaults(torn, sweeps=bad)
        assert str(err.value) == f"sweeps must be a whole number in 1..inf, got {bad!r}"


def test_a_negative_tolerance_runs_every_sweep_and_the_fits_update_fixed(calls):
    """``refit_solved`` (shared by the calibration, leave-one-source-out and the switches' refits): a
    negative tolerance runs exactly ``sweeps`` sweeps even when nothing moves; ``fixed`` ends at the fits."""
    row = CALIBRATION[0]
    fixed = {c.constant: c.value for c in CALIBRATION}
    fits = refit_solved([(row, row.run)], fixed, sweeps=3, tolerance=-1.0)
    assert calls == ["kernel_efficiency"] * 3
    assert fixed["kernel_efficiency"] == fits["kernel_efficiency"].value
    calls.clear()
    assert refit_solved([(row, row.run)], dict(fixed), sweeps=3) == fits     # settled: one sweep, then stop
    assert calls == ["kernel_efficiency"]


def test_the_refit_defaults_field_by_field():
    fits = calibrate_defaults()
    share_up, share_out = 370.0 / 450.0, 320.0 / 400.0
    assert fits["bus_efficiency_up"] == Calibrated("bus_efficiency_up", share_up, False, share_up)
    assert fits["bus_efficiency_out"] == Calibrated("bus_efficiency_out", share_out, False, share_out)
    gain = 0.7 / 100.0
    assert fits["straggler_cv"] == Calibrated("straggler_cv", gain / slowest_of(12_288), False, gain)
    assert all(fits[k].at_bound is False for k in fits if k != "kernel_half_width")
    width = fits["kernel_half_width"]
    assert width == Calibrated("kernel_half_width", width.value, False, width.predicted)
    assert 166.0 < width.value < 168.0 and width.predicted == pytest.approx(137.0)
    assert fits["latency_s"].value == pytest.approx(47.54e-6 / 8, rel=1e-12)
    assert fits["latency_s"].predicted == pytest.approx(47.54e-6, rel=1e-12) and not fits["latency_s"].at_bound
    # converged: the solved constants together reproduce both rows they were fitted on
    constants = {k: f.value for k, f in fits.items()}
    # the efficiency and the half width (inside its range) each reproduce their row
    row = CALIBRATION[0]
    assert predict_run(**{**row.run, **constants}).tflops_per_gpu == pytest.approx(row.measured, rel=1e-9)
    narrow = CALIBRATION[1]
    assert predict_run(**{**narrow.run, **constants}).tflops_per_gpu == pytest.approx(narrow.measured, rel=1e-9)
    assert all(fits[c.constant].constant == c.constant for c in CALIBRATION)


def test_the_calibration_rows_read_the_csv():
    text = {r["id"]: r for r in csv_rows()}
    assert [c.metric for c in CALIBRATION] == [
        "tflops_per_gpu", "tflops_per_gpu", "busbw_share", "busbw_share", "latency", "step_gain", "mfu",
        "model_tflops_per_gpu"]
    for c in CALIBRATION:
        assert (c.source, c.where) == (text[c.row]["key"], text[c.row]["where"]), c.row
    assert [c.ranks for c in CALIBRATION] == [0, 0, 0, 0, 16, 12_288, 0, 0]
    assert CALIBRATION[7].measured == 711.0 and CALIBRATION[7].run["cp"] == 2
    assert CALIBRATION[5].measured == 0.7 / 100.0
    assert CALIBRATION[4].measured == pytest.approx(47.54e-6, rel=1e-12)
    assert CALIBRATION[2].measured == 370.0 / 450.0
    assert CALIBRATION[0].measured == 171.0
    assert CALIBRATION[2].run == {} and CALIBRATION[5].run == {}
    assert CALIBRATION[0].run["hidden"] == 20_480


# -- measurements.py: the disagreements, as the chapter prints them ------------------------------------

def test_every_disagreement_field_by_field():
    found = disagreements()
    assert [d.id for d in found] == [p.id for p in printed_pins.DISAGREEMENTS]
    for d, pin in zip(found, printed_pins.DISAGREEMENTS):
        for field in ("id", "kind", "sources", "rows", "where", "claim", "unit", "computation", "checks"):
            assert getattr(d, field) == getattr(pin, field), (d.id, field)
        assert d.stated == pytest.approx(pin.stated, rel=1e-12, abs=0), d.id
        assert d.recomputed == pytest.approx(pin.recomputed, rel=1e-12, abs=0), d.id
        assert d.difference == d.stated - d.recomputed


# -- measurements.py: the cross-checks, recomputed here from the CSV's text -------------------------

def _interval(text: str) -> tuple[float, float]:
    """Half a unit of the last printed digit either side (``printed``'s rule, tested on its own)."""
    mantissa, _, exponent = text.lower().partition("e")
    half = 0.5 * 10.0 ** (int(exponent or 0) - len(mantissa.partition(".")[2]))
    return float(text) - half, float(text) + half


def _over(func, text: str) -> tuple[float, float]:
    """A function monotonic in one printed input, over that input's interval."""
    a, b = (func(x) for x in _interval(text))
    return min(a, b), max(a, b)


def reference_checks() -> list[dict]:
    """Every cross-check the module documents, in its order, from the CSV's text and the sources' formulas."""
    rows = csv_rows()
    out = []

    def add(name, r, column, span, computation):
        low, high = span
        stated_low, stated_high = _interval(r[column])
        out.append(dict(check=name, id=r["id"], stated=float(r[column]), stated_low=stated_low,
                        stated_high=stated_high, low=low, high=high, computation=computation))

    for r in rows:
        if r["key"] != "narayanan2021" or r["family"] != "throughput":
            continue
        l, h, v, s = (int(r[c]) for c in ("layers", "hidden", "vocab", "seq_len"))
        tf, peak, n = float(r["value"]), float(r["peak_tflops"]), int(r["gpus"])
        p = 12 * l * h**2 * (1 + 13 / (12 * h) + (v + s) / (12 * l * h)) / 1e9
        add("params_eq2", r, "stated_params_b", (p, p), f"eq. (2) with l={l}, h={h}, V={v}, s={s}: {p:.2f}B")
        if r["stated_pct_peak"]:
            add("pct_peak_vs_tflops", r, "stated_pct_peak", _over(lambda x: 100 * x / peak, r["value"]),
                f"{tf:g} / {peak:g} TFLOP/s = {100 * tf / peak:.2f}%")
        if r["stated_aggregate_pflops"]:
            add("aggregate_vs_tflops", r, "stated_aggregate_pflops", _over(lambda x: x * n / 1000, r["value"]),
                f"{tf:g} TFLOP/s x {n:,} GPUs = {tf * n / 1000:.1f} PFLOP/s")
        if r["stated_days"]:
            per_token = 96 * l * h**2 * (1 + s / (6 * h) + v / (16 * l * h))  # eq. (3) over B s tokens
            days = lambda x: 300e9 * per_token / (n * x * 1e12) / 86400  # noqa: E731
            add("days_vs_eq3", r, "stated_days", _over(days, r["value"]),
                f"300B tokens x {per_token:.4g} FLOPs/token (eq. 3) / ({n:,} x {tf:g} TFLOP/s) = {days(tf):.2f} days")
    for r in rows:
        if r["key"] != "korthikanti2023" or r["metric"] != "mfu" or not r["stated_iteration_s"]:
            continue
        b, l, h, v, s = (int(r[c]) for c in ("global_batch", "layers", "hidden", "vocab", "seq_len"))
        n, peak, t = int(r["gpus"]), float(r["peak_tflops"]), float(r["stated_iteration_s"])
        for name, column, eq, third in (("mfu_from_iteration", "value", 7, 6), ("hfu_from_iteration", "stated_hfu_pct", 8, 3)):
            if not r[column]:
                continue
            flops = 72 * b * l * s * h**2 * (1 + s / (third * h) + v / (12 * h * l))
            add(name, r, column, _over(lambda x: 100 * flops / (x * n * peak * 1e12), r["stated_iteration_s"]),
                f"eq. ({eq}) {flops:.4g} FLOPs / ({t:g} s x {n} x {peak:g} TFLOP/s) = "
                f"{100 * flops / (t * n * peak * 1e12):.2f}%")
    for r in rows:
        if r["key"] != "jiang2024megascale" or not r["stated_iteration_s"]:
            continue
        n, peak, agg = int(r["gpus"]), float(r["peak_tflops"]), float(r["stated_aggregate_pflops"])
        batch, s, t = int(r["global_batch"]), int(r["seq_len"]), float(r["stated_iteration_s"])
        tokens = float(r["stated_tokens_per_s"])
        add("mfu_vs_aggregate", r, "value", _over(lambda a: 100 * a * 1e3 / (n * peak), r["stated_aggregate_pflops"]),
            f"{agg:g} PFLOP/s / ({n:,} x {peak:g} TFLOP/s) = {100 * agg * 1e3 / (n * peak):.2f}%")
        add("tokens_vs_iteration", r, "stated_tokens_per_s", _over(lambda x: batch * s / x, r["stated_iteration_s"]),
            f"{batch:,} x {s:,} tokens / {t:g} s = {batch * s / t:,.0f} tokens/s")
        add("days_vs_tokens", r, "stated_days", _over(lambda x: 300e9 / x / 86400, r["stated_tokens_per_s"]),
            f"300e9 tokens / {tokens:,.0f} tokens/s / 86,400 s = {300e9 / tokens / 86400:.2f} days")
    for r in rows:
        if r["key"] != "grattafiori2024llama3" or r["family"] != "throughput":
            continue
        peak, tf = float(r["peak_tflops"]), float(r["stated_tflops_per_gpu"])
        add("mfu_vs_tflops", r, "value", _over(lambda x: 100 * x / peak, r["stated_tflops_per_gpu"]),
            f"{tf:g} / {peak:g} TFLOP/s = {100 * tf / peak:.2f}%")
        batch, s, stated = int(r["global_batch"]), int(r["seq_len"]), float(r["stated_tokens_per_batch"])
        out.append(dict(check="tokens_per_batch", id=r["id"], stated=stated, stated_low=stated, stated_high=stated,
                        low=batch * s, high=batch * s,
                        computation=f"{batch:,} sequences (batch per DP group x DP) x {s:,} = {batch * s:,} tokens"))
    unexpected = float(next(r["value"] for r in rows if r["id"] == "llama3-int-unexpected"))
    for r in rows:
        if r["stated_share_pct"]:
            share = 100 * float(r["value"]) / unexpected
            add("share_vs_count", r, "stated_share_pct", (share, share),
                f"{float(r['value']):g} / {unexpected:g} = {share:.2f}%")
    for r in rows:
        if r["stated_algbw_GBps"] and r["ranks"]:
            k, algbw = int(r["ranks"]), float(r["stated_algbw_GBps"])
            add("busbw_vs_algbw", r, "value", _over(lambda a: a * 2 * (k - 1) / k, r["stated_algbw_GBps"]),
                f"{algbw:g} GB/s x 2({k}-1)/{k} = {algbw * 2 * (k - 1) / k:.2f} GB/s")
    for r in rows:
        if r["stated_algbw_GBps"] and r["stated_time_us"]:
            size, us = int(r["message_bytes"]), float(r["stated_time_us"])
            add("algbw_vs_time", r, "stated_algbw_GBps", _over(lambda x: size / (x * 1e-6) / 1e9, r["stated_time_us"]),
                f"{size:,} B / {us:g} us = {size / us / 1e3:.2f} GB/s")
    return out


def test_every_cross_check_recomputed_from_the_text():
    found = cross_checks()
    expected = reference_checks()
    assert list(found.columns) == ["check", "id", "stated", "computed", "low", "high", "holds", "flagged",
                                   "computation"]
    assert list(zip(found["check"], found["id"])) == [(e["check"], e["id"]) for e in expected]
    assert len(expected) == 117 and sum(not e["low"] <= e["stated_high"] or not e["high"] >= e["stated_low"]
                                        for e in expected) == 11
    flagged = {check: pin.id for pin in printed_pins.DISAGREEMENTS for check in pin.checks}
    for (_, got), want in zip(found.iterrows(), expected):
        key = (want["check"], want["id"])
        assert got["computation"] == want["computation"], key
        for column in ("stated", "low", "high"):
            assert got[column] == pytest.approx(want[column], rel=1e-12, abs=0), (key, column)
        assert got["computed"] == pytest.approx((want["low"] + want["high"]) / 2, rel=1e-12, abs=0), key
        holds = want["low"] <= want["stated_high"] and want["high"] >= want["stated_low"]
        assert bool(got["holds"]) is holds, key
        assert got["flagged"] == flagged.get(key, ""), key
    # the checks as the module keeps them, with the printed figure's own interval
    for check, want in zip(measurements._cross_checks(), expected):
        assert (check.stated_low, check.stated_high) == pytest.approx((want["stated_low"], want["stated_high"]),
                                                                      rel=1e-12, abs=0), (check.name, check.id)
        assert check.computed == (check.low + check.high) / 2
        assert check.holds == (check.low <= check.stated_high and check.high >= check.stated_low)


# -- holdout.py: every residual and the summary, recomputed here ------------------------------------

_FIELD = {("mfu", "model"): "mfu", ("hfu", "hardware"): "hfu", ("pct_peak", "hardware"): "hfu",
          ("pct_peak", "model"): "mfu", ("tflops_per_gpu", "hardware"): "tflops_per_gpu",
          ("tflops_per_gpu", "model"): "model_tflops_per_gpu", ("iteration_s", ""): "step_s",
          ("tokens_per_s", ""): "tokens_per_s"}


def _config(r: dict) -> dict:
    """A throughput row's predict_run keywords, from the CSV's text."""
    ints = ("layers", "hidden", "seq_len", "vocab", "global_batch", "microbatch", "gpus", "tp", "pp",
            "virtual_stages", "heads", "kv_heads", "cp")
    config = {c: int(r[c]) for c in ints if r[c]}
    config.update({c: float(r[c]) for c in ("peak_tflops", "scale_up_GBps", "scale_out_GBps")})
    config["recompute"] = r["recompute"]
    config.update({c: r[c] for c in ("precision", "sharding") if r[c]})
    config.update({c: r[c] == "yes" for c in ("sequence_parallel", "overlap", "flash_attention", "gated_mlp")
                   if r[c]})
    if r["ffn_hidden"]:
        config["ffn_hidden"] = int(r["ffn_hidden"])
    if r["memory_TBps"]:
        config["memory_TBps"] = float(r["memory_TBps"])
    if r["grad_bytes"]:
        config["grad_bytes"] = float(r["grad_bytes"])
    return config


def reference_residuals() -> dict[str, tuple[str, float, float]]:
    """id -> (unit, measured, predicted) for every row a model predicts, from the CSV's text and the
    models' formulas (predict_run and run_ettr are tested on their own)."""
    rows = {r["id"]: r for r in csv_rows()}
    value = {rid: float(r["value"]) for rid, r in rows.items()}
    out: dict[str, tuple[str, float, float]] = {}
    for rid, r in rows.items():
        if r["family"] == "throughput":
            p = predict_run(**_config(r))
            field = _FIELD[(r["metric"], r["flops_basis"])]
            predicted = getattr(p, field) * (100.0 if field in ("mfu", "hfu") else 1.0)
            if field in ("mfu", "hfu") and r.get("mfu_peak_tflops"):
                # a share measured against another peak (FP8's) is read on that peak
                predicted *= float(r["peak_tflops"]) / float(r["mfu_peak_tflops"])
            out[rid] = (r["unit"], value[rid], predicted)
        elif r["family"] == "collectives" and r["unit"] == "GB/s" and r["collective"] == "all_reduce":
            eta = 0.82 if r["nodes"] in ("", "1") else 0.80
            out[rid] = ("GB/s", value[rid], eta * float(r["link_GBps"]) if r["link_GBps"] else math.nan)
        elif rid == "nccl1244-latency":  # α = 47.54 µs / 8, times the same 8 steps
            out[rid] = ("us", value[rid], 1e6 * 5.94e-6 * 8)
    size = params(*(int(rows["nar21-ckpt-size"][c]) for c in ("layers", "hidden", "seq_len", "vocab")))
    out["nar21-ckpt-size"] = ("TB", value["nar21-ckpt-size"], size * 14 / 1e12)
    base = value["kor22-t4-1"]
    for rid in ("kor22-t4-1", "kor22-t4-2", "kor22-t4-3", "kor22-t4-4", "kor22-t4-5", "kor22-ovh-full-large",
                "kor22-ovh-present-large"):
        s, h = int(rows[rid]["seq_len"]), int(rows[rid]["hidden"])
        # hardware over model FLOPs of one layer (no logits): one more forward of everything, or of the scores
        ratio = {"none": 1.0, "full": 4 / 3, "selective": 1 + 4 * s * s * h / (72 * s * h * h * (1 + s / (6 * h)))}[
            rows[rid]["recompute"]]
        if rid.startswith("kor22-ovh"):
            out[rid] = ("× the time without recompute", 1 + value[rid] / 100, ratio)
        else:
            out[rid] = ("ms", value[rid], base * ratio)
    rate = value["kok25-rsc1-rate"] / 1000
    out["kok25-rsc1-rate"] = ("failures per 1000 node-days", 6.5, 6.5)
    out["kok25-rsc2-rate"] = ("failures per 1000 node-days", 2.34, 6.5)
    out["kok25-mttf-1024"] = ("h", 7.9, 24 / (128 * rate))
    out["kok25-mttf-8"] = ("days", 47.7, 24 / (1 * rate) / 24)
    out["kok25-mttf-16k"] = ("h", 1.8, 24 / (2048 * rate))
    out["llama3-int-unexpected"] = ("interruptions", 419.0, float(rows["llama3-int-unexpected"]["node_days"]) * rate)
    inputs = dict(gpus=16_384, failures_per_node_day=419 / float(rows["llama3-int-unexpected"]["node_days"]),
                  save_s=16_384 * 4 / (2 * 1000), restart_s=60 * 10.0)
    out["llama3-ett"] = ("%", value["llama3-ett"], 100 * run_ettr(**inputs).ettr)
    x = 0.0018 * NormalDist().inv_cdf((12_288 - 0.375) / (12_288 + 0.25))
    out["ms24-evict-gain"] = ("%", value["ms24-evict-gain"], 100 * x)
    for rid in ("lin25-waste-median", "lin25-waste-p90", "lin25-fleet"):
        out[rid] = ("%", value[rid], 100 * x / (1 + x))
    traffic = rows["hpn-dp-traffic"]
    grads = params(*(int(traffic[c]) for c in ("layers", "hidden", "seq_len", "vocab"))) * 2 / (8 * 8) / 1e9
    for rid, predicted in (("hpn-tor-oversub", 128 * 200 / (60 * 400)), ("hpn-segment", 8 * 128 * 1.0),
                           ("hpn-pod", 15 * 1024.0), ("llama3-pod", 192 * 16.0), ("ms24-tor-servers", 32 * 2.0),
                           ("hpn-dp-traffic", grads)):
        out[rid] = (rows[rid]["unit"], value[rid], predicted)
    return out


def test_every_residual_field_by_field():
    found = residuals()
    rows = {r["id"]: r for r in csv_rows()}
    expected = reference_residuals()
    assert list(found.index) == list(printed_pins.RESIDUALS) == list(found["id"])
    assert set(found.index) == set(expected)
    assert list(found.columns) == ["id", "family", "role", "model", "measured", "predicted", "unit", "error",
                                   "key", "system", "software", "publication", "note"]
    assert list(dict.fromkeys(found["family"])) == ["collectives", "throughput", "memory", "failures",
                                                    "stragglers", "fabric"]
    for rid, got in found.iterrows():
        r, (unit, measured, predicted) = rows[rid], expected[rid]
        family = r["family"]
        model = printed_pins.RESIDUAL_MODELS.get(rid, "series failure model" if family == "failures"
                                                 else printed_pins.MODELS[family])
        assert (got["family"], got["role"], got["note"]) == (family, *printed_pins.RESIDUALS[rid]), rid
        assert (got["model"], got["unit"], got["key"]) == (model, unit, r["key"]), rid
        assert (got["system"], got["software"]) == (r["system"], r["software"]), rid
        assert got["measured"] == pytest.approx(measured, rel=1e-12, abs=0), rid
        if math.isnan(predicted):
            assert math.isnan(got["predicted"]) and math.isnan(got["error"]), rid
        else:
            assert got["predicted"] == pytest.approx(predicted, rel=1e-12, abs=0), rid
            assert got["error"] == got["predicted"] / got["measured"] - 1.0, rid
    assert residuals("stragglers").equals(found[found["family"] == "stragglers"])


def test_the_summary_recomputed_from_the_residuals():
    table = summary()
    every = residuals()
    rows_by_id = {r["id"]: r for r in csv_rows()}
    counts = {}
    for r in csv_rows():
        counts[r["family"]] = counts.get(r["family"], 0) + 1
    assert list(table.index) == list(table["family"]) == ["collectives", "throughput", "memory", "failures",
                                                          "stragglers", "fabric"]
    assert list(table.columns) == ["family", "model", "calibration", "fitted", "validated", "validated_rows",
                                   "rows", "median_abs_error", "worst_abs_error", "worst", "outside", "identity"]
    for family, got in table.iterrows():
        part = every[every["family"] == family]
        # input sets, recomputed here: a throughput row's set is the first row with the same configuration
        # elsewhere the first row with the same model, unit and prediction (a row with none is its own)
        first: dict = {}
        sets = {rid: first.setdefault(tuple(sorted(_config(rows_by_id[rid]).items())) if family == "throughput"
                                      else rid if math.isnan(part.at[rid, "predicted"])
                                      else (part.at[rid, "model"], part.at[rid, "unit"], part.at[rid, "predicted"]),
                                      rid) for rid in part.index}
        calibration = [rid for rid, role in part["role"].items() if role == "calibration"]
        fitted = {sets[rid] for rid in calibration}
        errors = {rid: abs(e) for rid, e in part.loc[part["role"] == "validation", "error"].items()
                  if sets[rid] not in fitted}
        by_set: dict = {}
        for rid, e in errors.items():
            by_set.setdefault(sets[rid], []).append(e)
        worst = max(errors, key=errors.get)
        assert got["model"] == printed_pins.MODELS[family]
        assert got["calibration"] == ", ".join(calibration)
        assert (got["fitted"], got["validated"], got["validated_rows"], got["rows"]) == \
            (len(calibration), len(by_set), len(errors), counts[family])
        assert got["median_abs_error"] == pytest.approx(
            statistics.median(statistics.fmean(v) for v in by_set.values()), rel=1e-12), family
        assert (got["worst_abs_error"], got["worst"]) == (errors[worst], worst), family
        assert got["outside"] == sum(role == "outside" for role in part["role"]), family
        assert got["identity"] == sum(role == "identity" for role in part["role"]), family
    # the numbers chapter 6 prints from it
    assert list(table["validated"]) == [1, 117, 5, 4, 1, 1]
    assert list(table["worst"]) == ["ncclt175-a100-1node", "titan24-t2-8b-cp8", "kor22-t4-4", "kok25-mttf-1024",
                                    "lin25-waste-p90", "hpn-dp-traffic"]
    assert [round(100 * e, 1) for e in table["median_abs_error"]] == [5.8, 5.6, 2.3, 147.0, 93.7, 0.8]
    assert list(table["outside"]) == [8, 8, 0, 1, 0, 0]
    assert list(table["identity"]) == [0, 0, 0, 0, 0, 5]


# -- training_time.py -----------------------------------------------------------------------------------

ETTR_BASE = dict(gpus=8, failures_per_node_day=0.01, save_s=30, restart_s=60)


@pytest.mark.parametrize("change, message", [
    ({"failures_per_node_day": -1}, "failures_per_node_day must be a number in [0, inf) per node-day, got -1"),
    ({"save_s": 0}, "save_s must be a number in (0, inf) s, got 0"),
    ({"restart_s": -1}, "restart_s must be a number in [0, inf) s, got -1"),
    ({"gpus_per_node": 0}, "gpus_per_node must be a whole number in 1..inf, got 0"),
    ({"gpus": 0}, "gpus must be a whole number in 1..inf, got 0"),
    ({"gpus": 8.5}, "gpus must be a whole number in 1..inf, got 8.5"),
    ({"gpus": None, "nodes": 0}, "nodes must be a whole number in 1..inf, got 0"),
    ({"gpus": None, "nodes": 1.5}, "nodes must be a whole number in 1..inf, got 1.5"),
    ({"interval_s": 0}, "interval_s must be a number in (0, inf] s, got 0"),
    ({"days": 0}, "days must be a number in (0, inf) days, got 0"),
    ({"nodes": 1}, "gpus must be given, or nodes, but not both: got gpus=8, nodes=1"),
    ({"gpus": None}, "gpus must be given, or nodes, but not both: got gpus=None, nodes=None"),
])
def test_run_ettr_refusals_read_in_full(change, message):
    with pytest.raises(ValueError) as err:
        run_ettr(**{**ETTR_BASE, **change})
    assert str(err.value) == message


def _daly_ettr(tau: float, delta: float, m: float, r: float) -> float:
    return 1.0 / ((m / tau) * math.exp(r / m) * (math.exp((tau + delta) / m) - 1.0))


def test_run_ettr_every_field():
    # 9 GPUs on 8-GPU nodes take 2 nodes; 0.5 failures per node-day: M = 1 day
    e = run_ettr(gpus=9.0, gpus_per_node=8.0, failures_per_node_day=0.5, save_s=60, restart_s=600, days=30)
    m = 86_400 / (2 * 0.5)
    tau = math.sqrt(2 * 60 * m)
    assert e.nodes == 2 and type(e.nodes) is int
    assert e.mtbf_h == pytest.approx(24.0, rel=1e-12)
    assert e.interval_s == pytest.approx(tau, rel=1e-12)
    assert e.ettr == pytest.approx(_daly_ettr(tau, 60, m, 600), rel=1e-12)
    assert e.ettr_first_order == pytest.approx((1 - 600 / m - tau / (2 * m)) * tau / (tau + 60), rel=1e-12)
    assert e.checkpoint_only == pytest.approx(tau / (tau + 60), rel=1e-12)
    assert e.checkpoint_share == pytest.approx(60 / (tau + 60), rel=1e-9)
    assert e.rework_share == pytest.approx(tau / (2 * m), rel=1e-12)
    assert e.restart_share == pytest.approx(600 / m, rel=1e-12)
    assert e.interruptions_per_day == pytest.approx(1.0, rel=1e-12)
    assert e.interruptions == pytest.approx(30.0, rel=1e-12)
    assert e.lost_days == pytest.approx(30 * (1 - e.ettr), rel=1e-12)
    assert e.short_run is False
    given = run_ettr(nodes=2, failures_per_node_day=0.5, save_s=60, restart_s=600, interval_s=3600)
    assert given.interval_s == 3600.0
    assert given.ettr == pytest.approx(_daly_ettr(3600, 60, m, 600), rel=1e-12)
    assert (given.interruptions, given.lost_days, given.short_run) == (None, None, False)


def test_run_ettr_short_run_threshold_at_ten_interruptions():
    # one node failing once a day: 10 days expect exactly 10 interruptions, not a short run
    kw = dict(nodes=1, failures_per_node_day=1.0, save_s=60, restart_s=0)
    assert run_ettr(**kw).interruptions_per_day == 1.0
    assert run_ettr(**kw, days=10).short_run is False
    assert run_ettr(**kw, days=9.999).short_run is True


def test_run_ettr_degenerate_ends():
    never = run_ettr(gpus=8, failures_per_node_day=0, save_s=30, restart_s=600, interval_s=90, days=2)
    assert (never.mtbf_h, never.ettr, never.ettr_first_order) == (INF, 0.75, 0.75)
    assert (never.checkpoint_only, never.checkpoint_share) == (0.75, 0.25)
    assert (never.rework_share, never.restart_share, never.interruptions_per_day) == (0.0, 0.0, 0.0)
    assert (never.interruptions, never.lost_days, never.short_run) == (0.0, 0.5, True)
    forever = run_ettr(gpus=8, failures_per_node_day=0.5, save_s=30, restart_s=600, interval_s=INF)
    m = 86_400 / 0.5
    assert (forever.ettr, forever.ettr_first_order, forever.checkpoint_only) == (0.0, 0.0, 1.0)
    assert (forever.checkpoint_share, forever.rework_share) == (0.0, INF)
    assert forever.restart_share == pytest.approx(600 / m, rel=1e-12)
    assert forever.interruptions_per_day == pytest.approx(0.5, rel=1e-12)
    # a restart longer than the mean time between failures: the first-order ratio floors at 0
    swamped = run_ettr(nodes=1, failures_per_node_day=1.0, save_s=1, restart_s=100_000)
    assert swamped.ettr_first_order == 0.0 and swamped.ettr > 0.0


@pytest.mark.parametrize("kw, message", [
    ({"tokens": -1}, "tokens must be a number in [0, inf) tokens, got -1"),
    ({"tokens_per_s": 0}, "tokens_per_s must be a number in (0, inf) tokens/s, got 0"),
    ({"ettr": -0.5}, "ettr must be a number in [0, 1], got -0.5"),
])
def test_days_to_train_refusals_read_in_full(kw, message):
    with pytest.raises(ValueError) as err:
        days_to_train(**{"tokens": 1e9, "tokens_per_s": 1e5, "ettr": 0.5, **kw})
    assert str(err.value) == message


def test_days_to_train_at_its_ends():
    d = days_to_train(tokens=86_400e3, tokens_per_s=1e3, ettr=1)
    assert d == TrainingDays(compute_days=1.0, wall_days=1.0, lost_days=0.0)
    half = days_to_train(tokens=86_400e3, tokens_per_s=1e3, ettr=0.5)
    assert half == TrainingDays(compute_days=1.0, wall_days=2.0, lost_days=1.0)
    assert days_to_train(tokens=0, tokens_per_s=1, ettr=0) == TrainingDays(0.0, 0.0, 0.0)
    assert days_to_train(tokens=1, tokens_per_s=86_400, ettr=0) == TrainingDays(1 / 86_400 / 86_400, INF, INF)


# -- measurements.py: the helpers ------------------------------------------------------------------------

def test_present_tells_an_empty_cell_from_a_zero():
    import pandas as pd
    for empty in (None, pd.NA, "", math.nan, float("nan")):
        assert measurements._present(empty) is False, empty
    for filled in (0, 0.0, "0", "x", False, 1.5):
        assert measurements._present(filled) is True, filled


def test_assumed_columns_of_every_kind_of_row():
    assert measurements.assumed_columns({"assumed": "microbatch;virtual_stages"}) == ("microbatch", "virtual_stages")
    assert measurements.assumed_columns({"assumed": ";microbatch;"}) == ("microbatch",)
    assert measurements.assumed_columns({"assumed": ""}) == ()
    assert measurements.assumed_columns({"assumed": None}) == ()
    assert measurements.assumed_columns({}) == ()
    text = {r["id"]: r["assumed"] for r in csv_rows()}
    assert measurements.assumed_columns("llama3-t4-1") == tuple(text["llama3-t4-1"].split(";"))
    frame = measurements.load_measurements()
    assert measurements.assumed_columns(frame.loc["nar21-t1-01"]) == ("microbatch", "scale_up_GBps", "precision",
                                                                      "overlap", "grad_bytes")


def test_comparable_reads_mappings_and_rows():
    assert measurements.comparable({"family": "throughput", "metric": "iteration_s", "value": "1.5"}) == ("step_s", 1.5)
    assert measurements.comparable({"family": "throughput", "metric": "tokens_per_s", "flops_basis": None,
                                    "unit": "tokens/s", "value": 49e3}) == ("tokens_per_s", 49e3)
    assert measurements.comparable({"family": "throughput", "metric": "hfu", "flops_basis": "", "unit": "%",
                                    "value": 50}) == ("hfu", 0.5)
    assert measurements.comparable("ms24-t2-12") == ("mfu", 41.2 / 100.0)
    assert measurements.comparable(measurements.load_measurements().loc["nar21-t1-01"]) == ("tflops_per_gpu", 137.0)
    for row, got in (({"family": "memory", "metric": "mfu", "flops_basis": "model"}, "'mfu' (flops basis 'model')"),
                     ({"family": "throughput", "metric": "bubble"}, "'bubble' (flops basis '')")):
        with pytest.raises(ValueError) as err:
            measurements.comparable(row)
        assert str(err.value) == ("row must be a throughput row with a metric of ('mfu', 'hfu', 'pct_peak', "
                                  f"'tflops_per_gpu', 'iteration_s', 'tokens_per_s'), got {got}")


def test_family_and_rows_refusals_read_in_full():
    with pytest.raises(ValueError) as err:
        measurements.family("optics")
    assert str(err.value) == ("family must be one of ['collectives', 'throughput', 'memory', 'failures', "
                              "'stragglers', 'fabric'], got 'optics'")
    frame = measurements.load_measurements()
    two = frame.loc[["nar21-t1-01", "kok25-lemon"]]
    assert list(measurements.family("failures", two).index) == ["kok25-lemon"]
    with pytest.raises(ValueError) as err:
        measurements.run_config("no-such-row")
    assert str(err.value) == "row must be an id of the measurements, got 'no-such-row'"
    for args, message in ((("no-such-row",), "row_id must be an id of the measurements, got 'no-such-row'"),
                          (("nar21-t1-01", "nope"), "column must be a column of the measurements, got 'nope'"),
                          (("nar21-t1-01", "stated_iteration_s"), "nar21-t1-01 has no stated_iteration_s")):
        with pytest.raises(ValueError) as err:
            measurements.printed(*args)
        assert str(err.value) == message
    with pytest.raises(AttributeError) as err:
        measurements.NOTHING  # noqa: B018
    assert str(err.value) == "module 'clustermath.validation.measurements' has no attribute 'NOTHING'"
    assert measurements.DISAGREEMENTS is disagreements()


def test_printed_intervals_of_every_notation():
    assert measurements.printed("ms24-t2-09", "stated_tokens_per_s") == (433.6e3 - 50, 433.6e3 + 50)
    assert measurements.printed("nar21-t1-10") == (162.5, 163.5)
    assert measurements.printed("ms24-t2-09", "stated_iteration_s") == (29.02 - 0.005, 29.02 + 0.005)


def test_run_config_types_and_what_a_model_accepts():
    config = measurements.run_config({"layers": 2.0, "hidden": "", "recompute": "full", "peak_tflops": 312,
                                      "sequence_parallel": "yes", "kv_heads": None, "heads": math.nan})
    assert config == {"layers": 2, "recompute": "full", "peak_tflops": 312.0, "sequence_parallel": True}
    assert {k: type(x) for k, x in config.items()} == {"layers": int, "recompute": str, "peak_tflops": float,
                                                         "sequence_parallel": bool}

    def some(*, layers, peak_tflops, **rest):
        return layers

    def named(layers, recompute="none"):
        return layers

    assert measurements.run_config({"layers": 2, "peak_tflops": 1}, accepts=some) == {"layers": 2, "peak_tflops": 1.0}
    assert measurements.run_config({"layers": 2, "peak_tflops": 1, "recompute": "full"}, accepts=named) == {
        "layers": 2, "recompute": "full"}


def test_the_sources_formulas_exactly():
    l, h, v, s, b = 128, 25_600, 51_200, 2_048, 3
    assert measurements.narayanan_params(l, h) == measurements.narayanan_params(l, h, v, s) == \
        12 * l * h**2 * (1 + 13 / (12 * h) + (v + s) / (12 * l * h))
    assert measurements.narayanan_params(2, 64, 1000, 100) == 12 * 2 * 64**2 * (1 + 13 / (12 * 64) + 1100 / (12 * 2 * 64))
    assert measurements.narayanan_flops(b, l, h) == measurements.narayanan_flops(b, l, h, v, s) == \
        96 * b * s * l * h**2 * (1 + s / (6 * h) + v / (16 * l * h))
    assert measurements.narayanan_flops(1, 2, 64, 1000, 100) == 96 * 100 * 2 * 64**2 * (1 + 100 / 384 + 1000 / 2048)
    assert measurements.korthikanti_model_flops(b, 2, 64, 1000, 100) == \
        72 * b * 2 * 100 * 64**2 * (1 + 100 / 384 + 1000 / (12 * 64 * 2))
    assert measurements.korthikanti_hardware_flops(b, 2, 64, 1000, 100) == \
        72 * b * 2 * 100 * 64**2 * (1 + 100 / 192 + 1000 / (12 * 64 * 2))
