"""Tests for chapter 1's compositions, which had none of their own (see tools/mutants/REPORT.md).

``compositions/budget.py`` and ``compositions/debug_lab.py`` were reached only
through the notebook; mutation testing found every mutant of them alive. Each
expected value here is worked out from the models' formulas in the test.
"""
from __future__ import annotations

import pytest

from clustermath import bubble_fraction, checkpoint_cost, pipeline_bubble, straggler_step
from clustermath.peak import debug_lab as lab
from clustermath.peak.budget import BudgetTerm, peak_to_delivered


# -- the peak-to-delivered budget ---------------------------------------------------------------

def test_budget_at_the_chapters_defaults():
    terms = peak_to_delivered()
    assert terms == peak_to_delivered(nodes=64, node_tflops=100, compute_ms=100, comm_ms=100, stages=8,
                                      microbatches=32, mean_ms=200, slowest_ms=260, footprint_gb=560,
                                      tier_gbps=80, interval_s=300)
    names = ["peak (the purchase order)", "communication", "pipeline bubble", "straggler", "checkpoint"]
    assert [t.name for t in terms] == names
    # 6,400 TFLOPS; 50% efficiency; bubble 7/39 so 32/39 useful; 200/260; 560×8/80 = 56 s of 300,
    # so 61/75 kept: every factor exact (the chapter's rule since the reader review)
    keeps = [1.0, 0.5, 32 / 39, 200 / 260, 61 / 75]
    assert [t.keeps for t in terms] == pytest.approx(keeps, rel=1e-15)
    left, expected = 6400.0, []
    for k in keeps:
        left *= k
        expected.append(left)
    assert [t.remaining_tflops for t in terms] == pytest.approx(expected, rel=1e-12)
    assert isinstance(terms[0], BudgetTerm) and terms[0].remaining_tflops == 6400.0


def test_budget_terms_follow_each_input():
    t = peak_to_delivered(nodes=10, node_tflops=10, compute_ms=3, comm_ms=1, stages=2, microbatches=9,
                          mean_ms=90, slowest_ms=100, footprint_gb=10, tier_gbps=8, interval_s=20)
    # eff 75%; bubble 1/10 = 10%; straggler 90/100; write 10 s of 20 = 50%
    assert [x.keeps for x in t] == pytest.approx([1.0, 0.75, 0.9, 0.9, 0.5], rel=1e-15)
    assert t[-1].remaining_tflops == pytest.approx(100 * 0.75 * 0.9 * 0.9 * 0.5, rel=1e-12)


def test_budget_straggler_of_an_empty_step_keeps_nothing():
    t = peak_to_delivered(mean_ms=0, slowest_ms=0)
    assert t[3].keeps == 0.0 and t[-1].remaining_tflops == 0.0


def test_budget_checkpoint_at_and_over_the_whole_interval():
    # 100 s write every 100 s: overhead exactly 100% is allowed and keeps nothing
    at = peak_to_delivered(footprint_gb=1000, tier_gbps=80, interval_s=100)
    assert checkpoint_cost(footprint_gb=1000, tier_gbps=80, interval_s=100).overhead_pct == 100
    assert at[-1].keeps == 0.0
    with pytest.raises(ValueError, match=r"^checkpoint overhead must be in 0\.\.100 %, got 101\.0 %"):
        peak_to_delivered(footprint_gb=1000, tier_gbps=80, interval_s=99)


# -- the debug lab ------------------------------------------------------------------------------

def test_step_split_of_the_lab():
    s = lab.step_split()
    assert s == lab.step_split(70, 41, 11.0)
    assert (s.efficiency_before_pct, s.efficiency_after_pct) == (70, 41)
    assert (s.achieved_before_tflops, s.achieved_after_tflops) == (3200 * 70 // 100, 6400 * 41 // 100)
    ratio = 2624 / 2240
    assert s.throughput_ratio == ratio
    assert s.time_reduction_pct == pytest.approx((1 - 1 / ratio) * 100, rel=1e-15)
    assert s.ratio_for_stated_reduction == pytest.approx(1 / 0.89, rel=1e-15)
    assert s.share_for_stated_reduction_pct == pytest.approx(70 / 0.89 / 2, rel=1e-15)
    other = lab.step_split(80, 50, 20.0)
    assert other.throughput_ratio == 3200 / 2560
    assert other.share_for_stated_reduction_pct == pytest.approx(80 / 0.8 / 2, rel=1e-15)


def test_fabric_bytes_of_the_lab():
    f = lab.fabric_bytes()
    assert f == lab.fabric_bytes(8)
    assert (f.moved_32_ranks_gb, f.moved_64_ranks_gb, f.moved_8_ranks_gb) == (2 * 8 * 31 // 32, 2 * 8 * 63 // 64,
                                                                              2 * 8 * 7 // 8)
    assert (f.exact_32_ranks_gb, f.exact_64_ranks_gb, f.exact_8_ranks_gb) == pytest.approx(
        (16 * 31 / 32, 16 * 63 / 64, 16 * 7 / 8), rel=1e-15)
    g = lab.fabric_bytes(100)
    assert (g.moved_32_ranks_gb, g.exact_8_ranks_gb) == (200 * 31 // 32, pytest.approx(175.0))


def test_cut_bandwidth_of_the_lab():
    c = lab.cut_bandwidth()
    assert c == lab.cut_bandwidth(64, 4)
    assert (c.full_gbps, c.real_gbps, c.factor) == (64 * 800 // 2, 64 * 800 // 2 // 4, 4)
    assert lab.cut_bandwidth(16, 2) == lab.CutBandwidth(6400, 3200, 2)


def test_straggler_tax_of_the_lab():
    t = lab.straggler_tax()
    assert t == lab.straggler_tax(180, 244)
    assert (t.waste_ms, t.waste_pct) == (64, 35)
    assert t.exact_pct == pytest.approx(100 * 64 / 180, rel=1e-15)
    assert lab.straggler_tax(200, 260) == lab.StragglerTax(60, 30, 30.0)


def test_bubble_shift_of_the_lab():
    b = lab.bubble_shift(32)
    assert b == lab.bubble_shift(32, 4, 8)
    assert (b.microbatches, b.before_pct, b.after_pct) == (32, 300 // 35, 700 // 39)
    assert (b.exact_before_pct, b.exact_after_pct) == pytest.approx((300 / 35, 700 / 39), rel=1e-15)
    c = lab.bubble_shift(10, 2, 3)
    assert (c.before_pct, c.after_pct) == (100 // 11, 200 // 12)
    assert c.exact_after_pct == pytest.approx(100 * bubble_fraction(3, 10), rel=1e-15)


def test_microbatches_matching():
    truncated = lab.microbatches_matching(8, 17, rounded=False)
    assert truncated == [m for m in range(1, 4097)
                         if (pipeline_bubble(stages=4, microbatches=m).bubble_pct,
                             pipeline_bubble(stages=8, microbatches=m).bubble_pct) == (8, 17)]
    assert 32 in truncated
    assert lab.microbatches_matching(9, 17, rounded=False) == []
    rounded = lab.microbatches_matching(9, 18, rounded=True, search_to=64)
    assert rounded == [m for m in range(1, 65)
                       if (round(300 / (m + 3)), round(700 / (m + 7))) == (9, 18)]
    assert lab.microbatches_matching(8, 17, rounded=False, search_to=32) == [m for m in truncated if m <= 32]
    assert lab.microbatches_matching(50, 50, rounded=False, before_stages=2, after_stages=2) == [1]


def test_microbatches_to_restore():
    m = lab.microbatches_to_restore(8)
    assert m == lab.microbatches_to_restore(8, 8)
    assert pipeline_bubble(stages=8, microbatches=m).bubble_pct <= 8 < \
        pipeline_bubble(stages=8, microbatches=m - 1).bubble_pct
    assert lab.microbatches_to_restore(100) == 0
    assert lab.microbatches_to_restore(20, stages=4) == 12  # 300/15 = 20: exactly at the target


def test_unit_cost_of_the_lab():
    u = lab.unit_cost()
    assert u == lab.unit_cost(70, 41) == lab.UnitCost(1428, 2439)
    assert lab.unit_cost(100, 50) == lab.UnitCost(1000, 2000)


def test_lab_summary_rows():
    rows = lab.lab_summary()
    assert rows == lab.lab_summary(70, 41, 32, 180, 244)
    ratio = 2624 / 2240
    assert rows == [
        ("compute share of the step", "70%", "41%"),
        ("achieved TFLOPS", "2,240", "2,624"),
        ("throughput ratio", "1", f"{ratio:.3f}"),
        ("training time", "100%", f"{100 / ratio:.1f}%"),
        ("bubble at 4 then 8 stages", "8%", "17%"),
        ("straggler tax (64 nodes)", "absorbed", "35% (35.6% exact)"),
        ("cost per useful TFLOPS", "1,428", "2,439"),
    ]
    other = lab.lab_summary(80, 50, 9, 200, 260)
    assert other[0] == ("compute share of the step", "80%", "50%")
    assert other[4] == ("bubble at 4 then 8 stages", f"{300 // 12}%", f"{700 // 16}%")
    assert other[5] == ("straggler tax (64 nodes)", "absorbed", "30% (30.0% exact)")
    assert other[6] == ("cost per useful TFLOPS", "1,250", "2,000")


# -- the worked tables: rows, frames, captions, styling, the stated checks ----------------------

from types import MappingProxyType  # noqa: E402

from clustermath import spec_of  # noqa: E402
from clustermath.peak.worked_tables import TABLES, Row, table  # noqa: E402
from clustermath.labels import COUNTED  # noqa: E402


def test_tables_are_keyed_by_their_models_name():
    assert list(TABLES) == [t.model.__name__ for t in TABLES.values()] and len(TABLES) == 10
    assert all(table(name) is t for name, t in TABLES.items())


def test_a_row_is_frozen_and_owns_its_mappings():
    inputs, states = {"nodes": 1}, {"x": 2}
    row = Row(inputs, "note", states=states)
    inputs["nodes"], states["x"] = 5, 6
    for name in ("inputs", "states", "states_broken", "rebuilds", "rebuilds_broken"):
        assert isinstance(getattr(row, name), MappingProxyType)
    assert dict(row.inputs) == {"nodes": 1} and dict(row.states) == {"x": 2} and dict(row.states_broken) == {}
    assert dict(row.rebuilds) == {} == dict(row.rebuilds_broken)
    with pytest.raises(TypeError):
        row.inputs["nodes"] = 2


@pytest.mark.parametrize("name", list(TABLES))
def test_frame_shows_both_builds_row_by_row(name):
    t = TABLES[name]
    spec = spec_of(t.model)
    frame = t.frame()
    good, bad = t.tally().results, t.tally(broken=True).results
    varying = [p for p in spec.inputs if any(p in r.inputs for r in t.rows)]
    assert list(frame.columns) == (
        [("row", "source")] + [("inputs", p) for p in varying]
        + [("correct build", k) for k in t.shown if not k.endswith("_err")]
        + [(t.broken_label, k) for k in t.shown] + [("row", "shows")])
    assert list(frame.index) == list(range(1, len(t.rows) + 1)) and frame.index.name == "row"
    for i, row in enumerate(t.rows):
        line = frame.loc[i + 1]
        assert line[("row", "source")] == ("stated" if row.stated else "rebuilt")
        assert line[("row", "shows")] == row.note
        for p in varying:
            assert line[("inputs", p)] == t.inputs(row)[p]
        for k in t.shown:
            assert line[(t.broken_label, k)] == getattr(bad[i], k)
            if not k.endswith("_err"):
                assert line[("correct build", k)] == getattr(good[i], k)


@pytest.mark.parametrize("name", list(TABLES))
def test_caption_gives_the_setting_and_both_counters(name):
    t = TABLES[name]
    spec = spec_of(t.model)
    good, bad = t.tally(), t.tally(broken=True)
    assert t.caption() == (f"{t.title}: {t.setting}. Correct build: {good[spec.flagged]} of "
                           f"{good[spec.total]} rows {COUNTED[spec.flagged]}; spec-sheet build: {bad[spec.flagged]}.")


@pytest.mark.parametrize("name", list(TABLES))
def test_styled_table_shades_equality_and_agreeing_rows(name):
    t = TABLES[name]
    styler = t.styled()
    html = styler.to_html()
    styler._compute()
    agree = t.agrees()
    columns = len(styler.data.columns)
    for i, row in enumerate(t.rows):
        colour = "#fff3cd" if row.equality else "#e3f4e1" if agree[i] else None
        cells = [styler.ctx.get((i, j), []) for j in range(columns)]
        # the held row number takes the row's shade too (issue 41)
        held = styler.ctx_index.get((i, 0), [])
        if colour:
            assert all(("background-color", colour) in c for c in cells), (i, cells[:1])
            assert ("background-color", colour) in held, (i, held)
        else:
            assert not any(c for c in cells), (i, cells[:1])
            assert not held, (i, held)
    assert f"worked-{name}" in html and t.caption() in html
    assert all("_" not in b or "_<wbr>" in b for _, b in styler.data.columns)
    for css in ("font-size: 85%", "caption-side: top", "padding: 3px 10px", "white-space: normal",
                "min-width: 12em", "vertical-align: bottom", "font-weight: bold", "text-align: right"):
        assert css in html, css
    assert f"td.col{columns - 1}" in html


def test_styled_masks_are_six_bits_and_numbers_have_separators():
    html = table("training_cluster_model").styled().to_html()
    assert ">000001<" in html  # the mask in binary, six digits
    assert ">6,400<" in table("cluster_scale").styled().to_html()
    assert ">yes<" in table("cluster_scale").styled().to_html()


def test_check_stated_prints_one_labelled_line_per_stated_number(capsys):
    table("cluster_scale").check_stated()
    assert capsys.readouterr().out.splitlines() == [
        "✓ Five measurements: rows counted (n_measures): 5  [quoted from source 000 §5: 5]",
        "✓ Five measurements, correct build: n_poor: 3  [quoted from source 000 §5: 3]",
        "✓ Five measurements, spec-sheet build (ignore_comm): n_poor: 1  [quoted from source 000 §5: 1]",
        "✓ row 1, ideal_tflops: 6,400  [quoted from source 000: 6,400]",
        "✓ row 1, efficiency_pct: 50  [quoted from source 000: 50]",
        "✓ row 1, achieved_tflops: 3,200  [quoted from source 000: 3,200]",
        "✓ row 4, efficiency_pct: 75  [quoted from source 000: 75]",
        "✓ row 4, achieved_tflops: 4,800  [quoted from source 000: 4,800]",
        "✓ row 4, scales_well: yes  [quoted from source 000: yes]",
        "✓ row 5, efficiency_pct: 0  [quoted from source 000: 0]",
        "✓ row 5, step_ms, spec-sheet build (ignore_comm): 0  [quoted from source 000: 0]",
    ]
    table("training_cluster_model").check_stated()
    out = capsys.readouterr().out
    assert "✓ row 6, fail_mask: 000001  [rebuilt from source 000 §14 table: 000001]" in out


@pytest.mark.parametrize("name", list(TABLES))
def test_check_stated_fails_when_a_stated_total_is_wrong(name):
    from dataclasses import replace

    from clustermath import CheckFailed
    t = TABLES[name]
    for wrong in (replace(t, stated_flagged=t.stated_flagged + 1),
                  replace(t, stated_flagged_broken=t.stated_flagged_broken + 1),
                  replace(t, rows=t.rows + t.rows[:1], stated_flagged=t.stated_flagged + 100)):
        with pytest.raises(CheckFailed):
            wrong.check_stated()


# -- defaults a reader sees, and integer arithmetic that truncation hides ------------------------

@pytest.mark.parametrize("function, defaults", [
    (peak_to_delivered, dict(nodes=64, node_tflops=100, compute_ms=100, comm_ms=100, stages=8, microbatches=32,
                             mean_ms=200, slowest_ms=260, footprint_gb=560, tier_gbps=80, interval_s=300)),
    (lab.step_split, dict(before_pct=70, after_pct=41, stated_reduction_pct=11.0)),
    (lab.fabric_bytes, dict(gradient_gb=8)),
    (lab.cut_bandwidth, dict(nodes=64, oversub_x=4)),
    (lab.straggler_tax, dict(mean_ms=180, slowest_ms=244)),
    (lab.bubble_shift, dict(before_stages=4, after_stages=8)),
    (lab.microbatches_matching, dict(search_to=4096, before_stages=4, after_stages=8)),
    (lab.microbatches_to_restore, dict(stages=8)),
    (lab.unit_cost, dict(before_pct=70, after_pct=41)),
    (lab.lab_summary, dict(share_32_pct=70, share_64_pct=41, microbatches=32, mean_ms=180, slowest_ms=244)),
], ids=lambda x: getattr(x, "__name__", ""))
def test_defaults_are_the_sources_setting(function, defaults):
    """The defaults are the source's stated inputs (truncation would hide a default that is off by one)."""
    import inspect
    params = inspect.signature(function).parameters
    assert {k: params[k].default for k in defaults} == defaults


def test_fabric_bytes_counts_32_64_and_8_ranks():
    f = lab.fabric_bytes(1000)
    assert (f.moved_32_ranks_gb, f.moved_64_ranks_gb, f.moved_8_ranks_gb) == (1937, 1968, 1750)


def test_cut_bandwidth_factor_is_a_whole_number():
    c = lab.cut_bandwidth(64, 3)
    assert (c.full_gbps, c.real_gbps, c.factor) == (25_600, 8_533, 3) and isinstance(c.factor, int)


@pytest.mark.parametrize("name", list(TABLES))
def test_styled_table_styles_are_scoped_to_the_table(name):
    html = TABLES[name].styled().to_html()
    uid = f"#T_worked-{name}"
    for selector in (f"{uid}  {{", f"{uid} caption {{", f"{uid} td {{", f"{uid}  th {{", f"{uid} thead th {{"):
        assert selector in html, selector


def test_microbatches_matching_starts_at_one_microbatch():
    # zero microbatches would give 100% at any depth; the search starts at 1
    assert lab.microbatches_matching(100, 100, rounded=False, search_to=5) == []
    assert lab.microbatches_matching(75, 87, rounded=False, search_to=5) == [1]


def test_check_stated_prints_a_broken_builds_mask_in_binary(capsys):
    from dataclasses import replace
    t = table("training_cluster_model")
    row = replace(t.rows[-1], states_broken={"fail_mask": 0b000001})
    one = replace(t, rows=(row,))
    flagged = spec_of(t.model).flagged
    one = replace(one, stated_flagged=one.tally()[flagged], stated_flagged_broken=one.tally(broken=True)[flagged])
    one.check_stated()
    assert ("✓ row 1, fail_mask, spec-sheet build (scale_only): 000001  [quoted from source 000: 000001]"
            in capsys.readouterr().out)


def test_a_one_gigabyte_checkpoint_still_costs_its_share():
    # only an empty checkpoint is free: 1 GB at 80 Gb/s every 300 s keeps 1 - 0.1 / 300
    assert peak_to_delivered(footprint_gb=1)[-1].keeps == pytest.approx(1 - 8 / 80 / 300, rel=1e-12)
