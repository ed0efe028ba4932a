"""The ten worked tables of source 000 (clustermath.peak.worked_tables.TABLES).

Each table is run in both builds: its totals must equal the ones the source's
prose states, every value a row pins down (``states``, printed by the source, and
``rebuilds``, cells of the lost table) must be what the model computes,
and every row marked ``equality`` must sit exactly on its model's threshold.
"""
from __future__ import annotations

import dataclasses

import pytest

from clustermath import MODELS, spec_of
from clustermath.peak.worked_tables import TABLES, Row, WorkedTable, table

NAMES = [m.__name__ for m in MODELS]

# The totals as the prose after each module states them, transcribed independently of
# worked_tables.py: (rows, flagged in the correct build, flagged in the broken build).
PROSE_TOTALS = {
    "cluster_scale": (5, 3, 1),  # "Five measurements." "Three ... scaled poorly; the peak-FLOPs model reported one."
    "collective_cost": (6, 3, 1),  # "Six collectives." "Three ... exceeded the budget; the flat model reported one."
    "pipeline_bubble": (7, 2, 0),  # 7 rows; 2 stalled, 0 in the no-bubble build
    "checkpoint_cost": (6, 4, 1),  # "Six checkpoints." "Four ... unaffordable; the no-checkpoint model reported one."
    "failure_recovery": (7, 4, 0),  # "Seven assessments." "Four ... intolerable; the single-node model reported none."
    "straggler_step": (5, 2, 0),  # "Five steps." "Two steps were wasteful; the uniform model reported none."
    "activation_memory": (5, 1, 0),  # "Five sizings." "One sizing did not fit; the model that ignores ... none."
    "fabric_bisection": (6, 3, 1),  # 6 rows; 3 short, 1 in the full-bisection build
    "cluster_economics": (6, 4, 0),  # "Six pricings." "Four ... unacceptable; the peak-priced model reported none."
    "training_cluster_model": (6, 1, 5),  # "One scaling configuration of six"; "The scale-only definition reported five."
}

# Which output sits on which threshold: (measured output, the value it is compared with, property).
THRESHOLD = {
    "cluster_scale": ("efficiency_pct", lambda inputs: 75, "scales_well"),
    "collective_cost": ("collective_ms", lambda inputs: inputs["budget_ms"], "within_budget"),
    "pipeline_bubble": ("bubble_pct", lambda inputs: 20, "acceptable"),
    "checkpoint_cost": ("overhead_pct", lambda inputs: 10, "affordable"),
    "failure_recovery": ("lost_min_per_day", lambda inputs: 60, "tolerable"),
    "straggler_step": ("waste_pct", lambda inputs: 10, "tolerable"),
    "activation_memory": ("act_mb", lambda inputs: inputs["hbm_mb"], "fits"),
    "fabric_bisection": ("real_bisection_gbps", lambda inputs: inputs["demand_gbps"], "sufficient"),
    "cluster_economics": ("cost_per_useful", lambda inputs: 1500, "acceptable"),
}


def build_of(broken):
    return "broken" if broken else "correct"


def test_one_table_per_model_in_source_order():
    assert list(TABLES) == NAMES
    for name, t in TABLES.items():
        assert isinstance(t, WorkedTable) and t.name == name and table(name) is t


def test_unknown_table():
    with pytest.raises(ValueError, match=r"^name must be one of \[.*\], got 'nope'$"):
        table("nope")


@pytest.mark.parametrize("name", NAMES)
def test_table_shape(name):
    t = TABLES[name]
    spec = spec_of(t.model)
    assert (len(t.rows), t.stated_flagged, t.stated_flagged_broken) == PROSE_TOTALS[name]
    assert set(t.shown) <= set(spec.outputs)
    assert spec.broken_flag in t.broken_label
    for row in t.rows:
        assert isinstance(row, Row)
        assert set(t.inputs(row)) == set(spec.inputs), row.note  # every port given, no stray ones
        for pinned in (row.states, row.states_broken, row.rebuilds, row.rebuilds_broken):
            assert set(pinned) <= set(spec.outputs), row.note


@pytest.mark.parametrize("broken", [False, True], ids=build_of)
@pytest.mark.parametrize("name", NAMES)
def test_tally_matches_the_prose(name, broken):
    t = TABLES[name]
    spec = spec_of(t.model)
    tally = t.tally(broken)
    rows, flagged, flagged_broken = PROSE_TOTALS[name]
    assert tally.counters == {spec.total: rows, spec.flagged: flagged_broken if broken else flagged}
    assert tally[spec.flagged] == (t.stated_flagged_broken if broken else t.stated_flagged)
    assert tally.results == tuple(
        t.model(**t.inputs(r), **{spec.broken_flag: broken}) for r in t.rows
    )


def test_counters_differ_between_builds_in_all_ten():
    """Section 18: the two builds' totals differ for every one of the ten tables."""
    for t in TABLES.values():
        assert t.tally(False).counters != t.tally(True).counters


STATED = [
    pytest.param(name, i, broken, id=f"{name}[{i}]/{build_of(broken)}")
    for name, t in TABLES.items()
    for i, row in enumerate(t.rows)
    for broken in (False, True)
    if row.pinned(broken)
]


@pytest.mark.parametrize("name, index, broken", STATED)
def test_row_states_what_the_model_computes(name, index, broken):
    t = TABLES[name]
    row = t.rows[index]
    expected = row.pinned(broken)
    result = t.tally(broken).results[index]
    assert {k: getattr(result, k) for k in expected} == dict(expected)


def test_every_stated_row_states_something():
    for name, t in TABLES.items():
        for row in t.rows:
            if row.stated:
                assert row.pinned(), (name, row.note)


EQUALITY = [
    pytest.param(name, i, id=f"{name}[{i}]")
    for name, t in TABLES.items()
    for i, row in enumerate(t.rows)
    if row.equality
]


def test_equality_rows_are_where_expected():
    """One equality row in each table with a threshold, except economics (see below)."""
    with_equality = {p.values[0] for p in EQUALITY}
    assert len(EQUALITY) == len(with_equality) == 8
    assert with_equality == set(THRESHOLD) - {"cluster_economics"}


@pytest.mark.parametrize("name, index", EQUALITY)
def test_equality_row_sits_exactly_on_its_threshold(name, index):
    t = TABLES[name]
    measured, limit, prop = THRESHOLD[name]
    inputs = t.inputs(t.rows[index])
    result = t.tally(False).results[index]
    assert getattr(result, measured) == limit(inputs)
    assert getattr(result, prop) is True  # every threshold is inclusive


def test_no_whole_efficiency_reaches_1500_with_100_unit_100_tflops_nodes():
    """The economics table's reconstruction note: 1500 would need 66.7%."""
    t = TABLES["cluster_economics"]
    assert dict(t.fixed) == {"node_cost": 100, "node_tflops": 100}
    costs = {
        t.model(**{**t.fixed, "nodes": 64, "efficiency_pct": eff}).cost_per_useful for eff in range(101)
    }
    assert 1500 not in costs
    assert {1515, 1492} <= costs  # 66% and 67% straddle it


# ---------------------------------------------------------------- the assembled table


def test_four_false_claims():
    """Section 14: "One scaling configuration of six, and four false claims." """
    t = TABLES["training_cluster_model"]
    correct, broken = t.tally(False).results, t.tally(True).results
    false_claims = [i for i, r in enumerate(broken) if r.scales and r.fail_mask != 0]
    assert len(false_claims) == 4
    assert [i for i, r in enumerate(broken) if r.false_scale_err] == false_claims
    assert not any(r.false_scale_err for r in correct)
    assert [i for i, r in enumerate(correct) if r.scales] == [0]


def test_scale_only_is_right_about_two_rows_not_one():
    """The source credits the scale-only build with one right answer (the row that adds no
    nodes); it is also right about the row where everything holds, so the book says two."""
    t = TABLES["training_cluster_model"]
    correct, broken = t.tally(False).results, t.tally(True).results
    right = [i for i, (c, b) in enumerate(zip(correct, broken)) if c.scales == b.scales]
    assert right == [0, 5]
    assert t.rows[0].inputs == dict.fromkeys(t.rows[0].inputs, True)  # everything holds
    assert t.rows[5].inputs["nodes_added"] is False  # nothing was added


def test_agrees_marks_the_two_rows_scale_only_gets_right():
    assert TABLES["training_cluster_model"].agrees() == [True, False, False, False, False, True]


@pytest.mark.parametrize("name", NAMES)
def test_check_stated_passes(name, capsys):
    TABLES[name].check_stated()
    lines = capsys.readouterr().out.splitlines()
    assert lines and all(line.startswith("✓ ") for line in lines)


@pytest.mark.parametrize("name", NAMES)
def test_check_stated_quotes_only_what_the_source_prints(name, capsys):
    """A printed value's bracket says quoted from source 000; a rebuilt cell's says rebuilt, never quoted."""
    t = TABLES[name]
    t.check_stated()
    lines = capsys.readouterr().out.splitlines()
    quoted = sum(len(r.states) + len(r.states_broken) for r in t.rows) + 3  # the three totals
    rebuilt = sum(len(r.rebuilds) + len(r.rebuilds_broken) for r in t.rows)
    assert len(lines) == quoted + rebuilt
    assert sum("[quoted from source 000" in line for line in lines) == quoted
    assert sum(f"[rebuilt from source 000 §{spec_of(t.model).section} table:" in line for line in lines) == rebuilt


def test_a_value_is_printed_or_rebuilt_not_both():
    with pytest.raises(ValueError, match=r"either printed by the source or rebuilt, not both"):
        Row({"nodes": 1}, "note", states={"moved_gb": 8}, rebuilds={"moved_gb": 8})


def test_the_straggler_row():
    """Section 14's row four: everything correct except one rank in sixty-four 30% slow."""
    t = TABLES["training_cluster_model"]
    r = t.tally(False).results[3]
    assert (r.scales, r.fail_mask) == (False, 0b010000)
    assert t.tally(True).results[3].scales is True


def test_tables_are_frozen():
    t = TABLES["cluster_scale"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.title = "x"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.rows[0].note = "x"  # type: ignore[misc]


@pytest.mark.parametrize("name", sorted(TABLES))
def test_a_worked_tables_caption_is_in_words(name):
    """Issue 41: the caption says what the counters count in words, no identifier (n_poor, ignore_comm)."""
    import re

    caption = TABLES[name].caption()
    assert not re.search(r"\b[a-z]+_[a-z_]+\b", caption), caption
    spec = spec_of(TABLES[name].model)
    good = TABLES[name].tally()
    assert f"{good[spec.flagged]} of {good[spec.total]} rows" in caption
