"""Tests that kill the mutants REPORT.md once listed as equivalent although they are not (issue 21).

``make mutants`` now runs every listed equivalent beside the original on the tests'
inputs and on edge values (``tools/mutants/equivalence.py``); these are the inputs on
which 41 of the 151 claims failed, each pinned so that the mutant dies in the ordinary
run and the claim comes off the list. Grouped by module.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import Decimal

import pytest

from clustermath import CheckFailed, async_checkpoint, check, young_lost
from clustermath.runner import ModelSpec, _REGISTRY, counted, output_ports, run, spec_of
from clustermath.validate import real

# ----------------------------------------------------------------------- check


@pytest.mark.parametrize("value, expected", [(True, False), (False, True)])
def test_check_tells_two_different_booleans_apart(value, expected):
    """``_exactly_equal`` mutant 2 made any two booleans equal: a yes/no mismatch must raise."""
    with pytest.raises(CheckFailed):
        check("flag", value, expected, kind="algebra")


# ----------------------------------------------------------------------- runner


@dataclass(frozen=True)
class _Probe:
    level: int
    spare: int


def _probe_model(*, level: int, wrong: bool = False) -> _Probe:
    return _Probe(level + (1 if wrong else 0), 0)


def test_counted_registers_a_model_when_called_at_test_time():
    """``counted`` runs at import for the book's models; called here, each of its mutants shows."""
    def counts(r: _Probe) -> bool:
        return r.level > 1

    spec = dict(broken_flag="wrong", total="n_rows", flagged="n_high", counts=counts,
                inputs=("level",), outputs=("level", "spare"), section="99")
    try:
        assert counted(**spec)(_probe_model) is _probe_model
        assert spec_of("_probe_model") == ModelSpec("_probe_model", "wrong", "n_rows", "n_high", counts,
                                                    ("level",), ("level", "spare"), "99")
        assert spec_of(_probe_model) is _REGISTRY["_probe_model"]
        tally = run(_probe_model, [{"level": 1}, {"level": 2}, {"level": 3}])
        assert (tally.n_rows, tally.n_high) == (3, 2)
        assert run(_probe_model, [{"level": 1}], wrong=True).n_high == 1
    finally:
        _REGISTRY.pop("_probe_model", None)


def test_output_ports_are_the_result_fields_in_order():
    assert output_ports(_Probe) == ("level", "spare")


# ----------------------------------------------------------------------- validate


def test_real_writes_a_bound_given_as_a_decimal_like_a_float():
    """Bounds are coerced to float, so an infinite bound always reads "inf"."""
    with pytest.raises(ValueError, match=r"^speed must be a number in \(0, inf\), got 0$"):
        real("speed", 0, high=Decimal("Infinity"), low_open=True)
    with pytest.raises(ValueError, match=r"^x must be a number in \[0\.5, 2\] s, got 3$"):
        real("x", 3, low=Decimal("0.5"), high=Decimal("2"), unit="s")


# ----------------------------------------------------------------------- reliability


@pytest.mark.parametrize("mtbf", [0, 0.0, "1"])
def test_async_checkpoint_names_its_own_range_for_the_mtbf(mtbf):
    """Mutants 29, 33 and 37 dropped the open low end of async_checkpoint's own check; the
    young_lost it calls next refuses 0 too, but with the value as young_lost received it."""
    shown = re.escape(repr(mtbf)) + (r" \(str\)" if isinstance(mtbf, str) else "")
    with pytest.raises(ValueError, match=rf"^mtbf_s must be a number in \(0, inf\], got {shown}$"):
        async_checkpoint(persist_s=1, copy_s=1, mtbf_s=mtbf)


def test_young_loses_nothing_when_nothing_fails_even_for_the_largest_save():
    """√(2δ/M) with M infinite is 0 even where 2δ overflows (mutant 21 gave NaN)."""
    assert young_lost(1.7976931348623157e308, math.inf) == 0.0


# ----------------------------------------------------------------------- peak (chapter 1)


def test_microbatch_search_covers_exactly_1_to_4096():
    """Every count from 694 on truncates to 0% at 8 stages (and from 298 at 4): 694..4096 match."""
    from clustermath.peak import debug_lab
    first_8 = next(m for m in range(1, 5000) if 100 * 7 // (m + 7) == 0)
    first_4 = next(m for m in range(1, 5000) if 100 * 3 // (m + 3) == 0)
    assert (first_8, first_4) == (694, 298)
    assert debug_lab.microbatches_matching(0, 0, rounded=False) == list(range(694, 4097))


def test_every_worked_table_is_registered_under_its_models_name_at_test_time():
    from clustermath.peak import worked_tables as wt
    before = dict(wt.TABLES)
    table = next(iter(before.values()))
    try:
        wt.TABLES.clear()
        assert wt._add(table) is None
        assert wt.TABLES == {table.name: table}
    finally:
        wt.TABLES.clear()
        wt.TABLES.update(before)


def test_styled_tables_keep_their_column_group_headers():
    """The group headers (inputs, correct build, the broken build's name) reach the HTML."""
    from clustermath.peak.worked_tables import TABLES
    for table in TABLES.values():
        groups = list(dict.fromkeys(a for a, _ in table.frame().columns))
        expected = [re.sub(r"\s*\(\w+_\w+\)", "", g) for g in groups]
        html = table.styled().to_html()
        shown = re.findall(r'<th[^>]*class="col_heading level0[^"]*"[^>]*>([^<]*)<', html)
        assert [s for s in dict.fromkeys(shown)] == list(dict.fromkeys(expected)), table.name
        assert all(s.strip() for s in shown), table.name


# ----------------------------------------------------------------------- Daly's exact interval


@pytest.mark.parametrize("save, mtbf", [(60, 11_100), (1, 1), (5, 1), (0.1, 1e6), (1e-6, 1), (20, 1)])
def test_daly_exact_interval_is_the_root_to_the_last_bit(save, mtbf):
    """u + ln(1 − u) = −δ/M changes sign between the neighbours of the returned u."""
    from clustermath import daly_exact_interval
    from clustermath.reliability.interruptions import _u_plus_log1m
    u = daly_exact_interval(save, mtbf) / mtbf
    eps = save / mtbf
    below, above = math.nextafter(u, 0.0), math.nextafter(u, 1.0)
    assert _u_plus_log1m(below) + eps >= 0.0 >= _u_plus_log1m(above) + eps


def test_daly_exact_interval_at_its_edges():
    from clustermath import daly_exact_interval
    # a save over ~37 MTBFs puts the root within one ulp of u = 1 (it used to raise "math domain error")
    for save in (37, 40, 700, 1e300):
        assert daly_exact_interval(save, 1) == pytest.approx(1.0, rel=1e-15)
    # δ/M underflows to 0: the interval is Young's √(2δM), not whatever bisection halving reached
    assert daly_exact_interval(1e-300, 1e300) == math.sqrt(2.0)
    assert daly_exact_interval(1, 1e300) == pytest.approx(math.sqrt(2e300), rel=1e-15)
    # tiny saves follow the series u = √(2ε)(1 − √(2ε)/3 + ε/18) to the last bits
    def series(e: float) -> float:
        y = math.sqrt(2 * e)
        return y * (1 - y / 3 + y * y / 36)
    for e in (1e-300, 1e-100, 1e-20, 0.99e-16, 1.01e-16, 1e-14, 1e-12):
        assert daly_exact_interval(e, 1) == pytest.approx(series(e), rel=1e-15)
    # where the equation holds exactly at a midpoint, that midpoint is the answer (the first one
    # bisection meets; pinned to the bit, since the doubles next to it may solve it too)
    assert daly_exact_interval(60, 11_100) == 1114.4744623629415
    u = daly_exact_interval(60, 11_100) / 11_100
    from clustermath.reliability.interruptions import _u_plus_log1m
    assert _u_plus_log1m(u) + 60 / 11_100 == 0.0


def test_u_plus_log1m_near_zero_and_above_the_switch():
    from clustermath.reliability.interruptions import _u_plus_log1m

    def series(u: float) -> float:  # the documented series, to the 39th power
        return -math.fsum(u ** k / k for k in range(2, 40))

    # the switch is inclusive: 0.1 itself takes the series, the next double the direct form
    assert _u_plus_log1m(0.1) == pytest.approx(series(0.1), rel=2.3e-16, abs=0)
    for u in (1e-300, 1e-20, 1e-8, 1e-3, 0.05):
        assert _u_plus_log1m(u) == pytest.approx(series(u), rel=2.3e-16, abs=0)
    assert _u_plus_log1m(0.1) != 0.1 + math.log1p(-0.1)
    above = math.nextafter(0.1, 1.0)
    assert _u_plus_log1m(above) == above + math.log1p(-above)
    assert _u_plus_log1m(0.0) == 0.0
    assert _u_plus_log1m(1e-8) == pytest.approx(-5.000000033333334e-17, rel=1e-15)
    for u in (0.05, 0.1, 0.1000001, 0.5, 0.9):
        assert _u_plus_log1m(u) == pytest.approx(u + math.log1p(-u), rel=1e-14)


def test_budget_with_nothing_to_write_loses_nothing_to_the_checkpoint():
    """A zero footprint costs nothing even on a zero-rate tier (the integer model saturates there,
    which made the budget refuse it: mutant 52 of peak_to_delivered showed the difference)."""
    from clustermath.peak.budget import peak_to_delivered
    for interval in (1, 300, 64_500, 65_535):
        terms = peak_to_delivered(footprint_gb=0, tier_gbps=0, interval_s=interval)
        assert terms[-1].keeps == 1.0 and terms[-1].remaining_tflops == terms[-2].remaining_tflops
    with pytest.raises(ValueError, match=r"^checkpoint overhead must be in 0\.\.100 %, got inf %"):
        peak_to_delivered(footprint_gb=1, tier_gbps=0, interval_s=64_500)
    with pytest.raises(ValueError, match=r"^checkpoint overhead must be in 0\.\.100 %, got 100\.1 %"):
        peak_to_delivered(footprint_gb=1001, tier_gbps=8, interval_s=1000)
    assert peak_to_delivered(footprint_gb=1000, tier_gbps=8, interval_s=1000)[-1].keeps == 0.0


# ----------------------------------------------------------------------- scale-up (chapter 5)


def test_synthetic_trace_reaches_its_mean_or_says_which_means_it_can():
    """The shape search stays on the stretch where the mean falls with gamma; a mean outside the
    reachable range is refused with the range (mutant 163 showed a silent miss at mean 1.7)."""
    from clustermath import synthetic_fault_trace
    for kwargs in ({}, {"days": 2, "samples_per_day": 3}, {"mean_pct": 3.0}, {"mean_pct": 1.76}):
        trace = synthetic_fault_trace(**kwargs)
        assert trace.mean_pct == pytest.approx(kwargs.get("mean_pct", 2.33), rel=1e-12)
    for mean in (1.7, 1.67000001, 3.9):
        with pytest.raises(ValueError, match=r"^mean_pct must be a number in \[1\.753, 3\.806\] % for a "
                                             r"median of 1\.67 % and a p99 of 7\.22 %"):
            synthetic_fault_trace(mean_pct=mean)


def test_synthetic_trace_memory_is_bounded_and_the_shape_positive():
    import numpy as np

    from clustermath import synthetic_fault_trace
    from clustermath.scaleup.domains import _quantile_curve
    with pytest.raises(ValueError, match=r"^weeks_memory must be a number in \(0, 1e\+06\] weeks, got 100000000000000$"):
        synthetic_fault_trace(weeks_memory=int(1e14))
    assert synthetic_fault_trace(days=3, weeks_memory=1e6).faulty_pct.size == 72
    for gamma in (0.0, -1.0, math.nan):
        with pytest.raises(ValueError, match=r"^gamma must be a number in \(0, inf\)"):
            _quantile_curve(np.array([0.0, 1.0]), 1.0, 2.0, gamma)


def test_synthetic_trace_is_the_same_on_numpys_baseline_code_path():
    """NumPy picks SIMD kernels by CPU; with them switched off the trace agrees to 1e-12."""
    import json
    import subprocess
    import sys

    import numpy as np

    from clustermath import synthetic_fault_trace
    code = ("import json; from clustermath import synthetic_fault_trace as f; t = f(days=30); "
            "print(json.dumps([t.mean_pct, t.median_pct, t.p99_pct, float(t.faulty_pct.max()), "
            "float(t.faulty_pct[123])]))")
    env = {"NPY_DISABLE_CPU_FEATURES": "X86_V3 X86_V4 AVX512_ICL AVX512_SPR AVX512F AVX2 FMA3",
           "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    baseline = json.loads(done.stdout.strip().splitlines()[-1])
    t = synthetic_fault_trace(days=30)
    here = [t.mean_pct, t.median_pct, t.p99_pct, float(t.faulty_pct.max()), float(t.faulty_pct[123])]
    assert np.allclose(baseline, here, rtol=1e-12, atol=0)


def test_tor_wiring_lays_out_at_most_a_million_nodes():
    from clustermath import tor_wiring
    from clustermath.scaleup.domains import MAX_NODES
    assert tor_wiring(1, MAX_NODES, 1 << 19).tp_groups == 2
    with pytest.raises(ValueError, match=r"^tors × nodes_per_tor must be a whole number in 1\.\.1,048,576 "
                                         r"nodes, got 2 × 524,289 = 1,048,578$"):
        tor_wiring(2, (1 << 19) + 1, 2)


# ----------------------------------------------------------------------- fabric designs (chapter 4)


def test_tiers_for_takes_a_chip_of_at_most_a_million_tbps():
    """A larger chip made the radix infinite (mutant 38 of tiers_for raised another error there)."""
    from clustermath import tiers_for
    assert tiers_for(15_360, 1e6) == 1
    with pytest.raises(ValueError, match=r"^chip_tbps must be a number in \(0, 1e\+06\] Tbps, got 1\.79"):
        tiers_for(15_360, 1.7976931348623157e308)


def test_a_line_shorter_than_one_group_is_all_idle():
    """One GPU cannot hold a TP group of two: the whole line is waste (mutant 69 of ring_builder,
    which divided by at least two GPUs, halved it)."""
    from clustermath import ring_builder
    r = ring_builder(0.0, gpus_per_node=1, tp=2, hops=1, gpus=1, switch_gpus=1)
    assert (r.ring_waste, r.static_waste, r.switch_waste, r.usable_gpus) == (1.0, 1.0, 1.0, 0.0)


def test_styled_tables_keep_the_house_style_to_the_letter():
    """The worked tables' style is the book's table style (padding, right-aligned numbers, the row
    labels left-aligned, the note column wrapping), pinned declaration by declaration."""
    from clustermath.peak.worked_tables import TABLES
    for table in TABLES.values():
        styled = table.styled()
        columns = list(styled.data.columns)
        last = len(columns) - 1
        label_columns = [i for i, c in enumerate(columns) if c[0] == "row"]
        assert label_columns == [0, last], table.name
        assert (columns[0][1], columns[last][1]) == ("source", "what the row shows"), table.name
        assert styled.table_styles == [
            {"selector": "", "props": [("font-size", "85%"), ("border-collapse", "collapse"),
                                       ("font-variant-numeric", "tabular-nums")]},
            {"selector": "caption", "props": [("caption-side", "top"), ("text-align", "left"),
                                              ("font-weight", "bold"), ("color", "inherit"),
                                              ("padding", "4px 0")]},
            {"selector": "td, th", "props": [("padding", "3px 10px"), ("white-space", "nowrap")]},
            {"selector": "td", "props": [("text-align", "right")]},
            {"selector": "thead th", "props": [("white-space", "normal"), ("vertical-align", "bottom"),
                                               ("text-align", "right"), ("border-bottom", "1px solid #888")]},
            {"selector": "td.col0", "props": [("text-align", "left")]},
            {"selector": f"td.col{last}", "props": [("text-align", "left")]},
            {"selector": f"td.col{last}", "props": [("white-space", "normal"), ("min-width", "12em")]},
        ], table.name
        html = styled.to_html()
        assert "6,400" in TABLES["cluster_scale"].styled().to_html()  # numbers with thousands separators
        assert all(row.note in html for row in table.rows), table.name  # notes reach the page as written


def test_a_row_cannot_mark_one_output_both_printed_and_rebuilt():
    from clustermath.peak.worked_tables import Row
    with pytest.raises(ValueError, match=r"^an output is either printed by the source or rebuilt, not both; "
                                         r"correct build gives \['step_ms'\] in both$"):
        Row({"nodes": 1}, "note", states={"step_ms": 1}, rebuilds={"step_ms": 1})
    with pytest.raises(ValueError, match=r"; spec-sheet build gives \['a', 'b'\] in both$"):
        Row({"nodes": 1}, "note", states_broken={"b": 1, "a": 2}, rebuilds_broken={"a": 2, "b": 1})


def test_fabric_bytes_rings_have_eight_ranks_for_every_gradient():
    """With an 8 GB gradient, 8 and 9 ranks happen to move the same truncated 14 GB; other sizes tell
    them apart (mutants 42 and 55 of fabric_bytes gave the eight-replica rings nine ranks)."""
    from clustermath import collective_cost
    from clustermath.peak.debug_lab import LINK_GBPS, fabric_bytes

    def ring(gb: int, ranks: int) -> int:
        return collective_cost(bytes_gb=gb, nodes=ranks, fabric_gbps=LINK_GBPS, budget_ms=0).moved_gb

    sizes = (8, 64, 128, 1000)
    assert any(ring(g, 8) != ring(g, 9) for g in sizes) and any(ring(g // 2, 8) != ring(g // 2, 9) for g in sizes)
    for g in sizes:
        got = fabric_bytes(g)
        assert (got.moved_8_ranks_gb, got.replicas_4_stages_gb) == (ring(g, 8), ring(g, 8))
        assert got.replicas_8_stages_gb == ring(g * 4 // 8, 8)
        assert (got.moved_32_ranks_gb, got.moved_64_ranks_gb) == (ring(g, 32), ring(g, 64))


# ----------------------------------------------------------------------- runner.saturated


def test_saturated_without_computed_from_flags_only_outputs_at_the_ceiling():
    from clustermath.runner import saturated

    @dataclass(frozen=True)
    class Plain:
        a: int
        b: float
        c: bool

    assert saturated(Plain(65_535, 65_535.0, True)) == {"a": ()}
    assert saturated(Plain(65_534, 1.0, False)) == {}


def test_saturated_follows_a_chain_in_any_field_order():
    """A dependent listed before what it is computed from needs a second pass over the fields."""
    from clustermath.runner import saturated

    @dataclass(frozen=True)
    class Backwards:
        verdict: bool
        share: int
        raw: int
        COMPUTED_FROM = {"verdict": ("share",), "share": ("raw",)}

    assert saturated(Backwards(True, 3, 65_535)) == {"raw": (), "share": ("raw",), "verdict": ("raw",)}
    assert saturated(Backwards(True, 3, 7)) == {}


@pytest.mark.parametrize("u", [-1.0, -1e-300, 1.0, 2.0, math.nan, math.inf])
def test_u_plus_log1m_takes_only_the_unit_interval(u):
    from clustermath.reliability.interruptions import _u_plus_log1m
    with pytest.raises(ValueError, match=r"^u must be a number in \[0, 1\), got "):
        _u_plus_log1m(u)
