"""The ten worked tables of source 000, rebuilt.

The extracted source lost every worked table's rows; its prose still states
the setting, some rows and each table's totals (how many rows fail in each
build). Each table here holds rows chosen to reproduce every number the prose
states, flags which rows the prose fixes (``stated``) and which were
reconstructed, and records the numbers the prose states so a notebook or a
test can check them.

Source: source 000, sections 5 to 14 (the paragraph after each module).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Callable, Mapping

if TYPE_CHECKING:  # pandas is imported only when a table is rendered
    import pandas as pd

from .activations import activation_memory
from .assembled import training_cluster_model
from .checkpoint import checkpoint_cost
from .collectives import collective_cost
from .economics import cluster_economics
from .fabric import fabric_bisection
from .failures import failure_recovery
from .pipeline import pipeline_bubble
from ..check import check, fmt_value
from ..runner import SPEC_SHEET_BUILD, Tally, run, spec_of
from .scaling import cluster_scale
from .stragglers import straggler_step

__all__ = ["Row", "WorkedTable", "TABLES", "table"]


@dataclass(frozen=True)
class Row:
    """One row of a worked table.

    ``inputs`` are the ports that vary by row (the table's ``fixed`` ports fill
    the rest); ``stated`` is True when the source's prose fixes the row;
    ``equality`` marks a row that sits exactly on its threshold.

    The output values a row pins down come in two kinds, and a check line says
    which: ``states`` and ``states_broken`` hold values the source prints
    (in digits or in words: "zero length", "one fifth") for the correct and
    the spec-sheet build, and are checked as *quoted*; ``rebuilds`` and
    ``rebuilds_broken`` hold cells of the lost table that the source never
    prints, which the book rebuilt from the model and the prose, and are
    checked as *rebuilt*.
    """

    inputs: Mapping[str, Any]
    note: str
    stated: bool = False
    equality: bool = False
    states: Mapping[str, Any] = field(default_factory=dict)
    states_broken: Mapping[str, Any] = field(default_factory=dict)
    rebuilds: Mapping[str, Any] = field(default_factory=dict)
    rebuilds_broken: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in ("inputs", "states", "states_broken", "rebuilds", "rebuilds_broken"):
            object.__setattr__(self, name, MappingProxyType(dict(getattr(self, name))))
        for build, printed, rebuilt in (("correct", self.states, self.rebuilds),
                                        ("spec-sheet", self.states_broken, self.rebuilds_broken)):
            both = set(printed) & set(rebuilt)
            if both:
                raise ValueError(f"an output is either printed by the source or rebuilt, not both; "
                                 f"{build} build gives {sorted(both)} in both")

    def pinned(self, broken: bool = False) -> dict[str, Any]:
        """Every output value this row pins down in one build, printed or rebuilt."""
        if broken:
            return {**self.states_broken, **self.rebuilds_broken}
        return {**self.states, **self.rebuilds}


@dataclass(frozen=True)
class WorkedTable:
    """A worked table: a model, its fixed setting, its rows and the totals the source states."""

    model: Callable[..., Any]
    title: str
    setting: str
    fixed: Mapping[str, Any]
    rows: tuple[Row, ...]
    stated_flagged: int
    stated_flagged_broken: int
    shown: tuple[str, ...]
    reconstruction: str

    @property
    def name(self) -> str:
        return self.model.__name__

    @property
    def broken_label(self) -> str:
        """The spec-sheet build's one name in every table, with the flag that selects it."""
        return f"{SPEC_SHEET_BUILD} ({spec_of(self.model).broken_flag})"

    def inputs(self, row: Row) -> dict[str, Any]:
        """The full keyword arguments of one row: the fixed setting, then the row's own ports."""
        return {**self.fixed, **row.inputs}

    def tally(self, broken: bool = False) -> Tally:
        """Run the table in the correct build, or in the broken one."""
        flag = spec_of(self.model).broken_flag
        return run(self.model, [self.inputs(r) for r in self.rows], **{flag: broken})

    def agrees(self) -> list[bool]:
        """Per row: does the broken build give exactly the correct build's shown outputs?"""
        good, bad = self.tally().results, self.tally(broken=True).results
        return [all(getattr(g, k) == getattr(b, k) for k in self.shown) for g, b in zip(good, bad)]

    def frame(self) -> "pd.DataFrame":
        """Both builds side by side: the varying inputs, the shown outputs of each build, a note.

        Columns are a two-level index: ("row", "source") (``stated`` when the
        source's prose fixes the row, ``rebuilt`` when it was reconstructed),
        ("inputs", port), ("correct build", output), (broken_label, output)
        and ("row", "shows"). The check flags
        (``*_err``) appear under the broken build only, where they fire. Numbers
        keep their types; ``styled`` formats them.
        """
        import pandas as pd

        varying = [p for p in spec_of(self.model).inputs if any(p in r.inputs for r in self.rows)]
        good, bad = self.tally().results, self.tally(broken=True).results
        records = []
        for i, row in enumerate(self.rows):
            full = self.inputs(row)
            record = {("row", "source"): "stated" if row.stated else "rebuilt"}
            record.update({("inputs", p): full[p] for p in varying})
            record.update({("correct build", k): getattr(good[i], k) for k in self.shown if not k.endswith("_err")})
            record.update({(self.broken_label, k): getattr(bad[i], k) for k in self.shown})
            record[("row", "shows")] = row.note
            records.append(record)
        frame = pd.DataFrame.from_records(records, index=pd.RangeIndex(1, len(self.rows) + 1, name="row"))
        frame.columns = pd.MultiIndex.from_tuples(frame.columns)
        return frame

    def caption(self) -> str:
        """One line in words: the setting, then what each build counts ("3 of 5 rows scale poorly").

        The counters keep their computed values; their names (``n_poor`` ...) and the broken
        build's flag stay out, said in words (``labels.COUNTED``).
        """
        from ..labels import COUNTED

        spec = spec_of(self.model)
        good, bad = self.tally(), self.tally(broken=True)
        return (f"{self.title}: {self.setting}. Correct build: {good[spec.flagged]} of {good[spec.total]} "
                f"rows {COUNTED[spec.flagged]}; {SPEC_SHEET_BUILD}: {bad[spec.flagged]}.")

    def note(self) -> "Note":
        """The reconstruction note as prose: Jupyter shows it as Markdown, so it reads, and wraps, as
        the chapter's text (printed, its one long line scrolled sideways in a code box)."""
        return Note(self.reconstruction)

    def styled(self) -> "pd.io.formats.style.Styler":  # noqa: F821 - pandas is imported lazily
        """The frame in the book's table style: headers in words with units, numbers right-aligned
        with thousands separators, yes/no for flags, rows highlighted, 3 px × 10 px padding.

        Green rows are rows where the broken build happens to be right; amber
        rows sit exactly on their threshold (the equality cases), the row number
        included. Shaded rows set their own dark text, so they stay legible in
        the site's dark mode.
        """
        import re

        import pandas as pd

        from ..labels import words

        frame = self.frame()
        agree = self.agrees()

        def shade(row: "pd.Series") -> list[str]:
            i = row.name - 1
            colour = ""
            if self.rows[i].equality:
                colour = "background-color: #fff3cd; color: #1a1a1a"
            elif agree[i]:
                colour = "background-color: #e3f4e1; color: #1a1a1a"
            return [colour] * len(row)

        def shade_index(index: "pd.Index") -> list[str]:
            # the held (sticky) row number takes its row's shade too, in light and dark mode alike:
            # pandas styles it by its id, above the page's rule that paints held cells the page colour
            return [shade(pd.Series([None], name=i))[0] for i in index]

        header = {"source": "source", "shows": "what the row shows"}
        # group headers in words too: "peak FLOPs (ignore_comm)" shows as "peak FLOPs"
        group = {self.broken_label: re.sub(r"\s*\(\w+_\w+\)", "", self.broken_label)}
        frame.columns = pd.MultiIndex.from_tuples([(group.get(a, a), header.get(b, words(b)))
                                                   for a, b in frame.columns])
        text = [i for i, c in enumerate(frame.columns) if c[0] == "row"]
        mask = [c for c in frame.columns if c[1] == words("fail_mask")]
        return (
            frame.style.set_uuid(f"worked-{self.name}")
            # the row numbers stay; pandas' extra header row naming the index ("row") goes
            .hide(axis="index", names=True)
            .format(lambda v: fmt_value(v) if not isinstance(v, str) else v)
            .format(lambda v: f"{v:06b}", subset=mask)
            .apply(shade, axis=1)
            .apply_index(shade_index, axis="index")
            .set_caption(self.caption())
            .set_table_styles([
                {"selector": "", "props": "font-size: 85%; border-collapse: collapse; "
                                          "font-variant-numeric: tabular-nums;"},
                {"selector": "caption", "props": "caption-side: top; text-align: left; font-weight: bold; "
                                                 "color: inherit; padding: 4px 0;"},
                {"selector": "td, th", "props": "padding: 3px 10px; white-space: nowrap;"},
                {"selector": "td", "props": "text-align: right;"},
                {"selector": "thead th", "props": "white-space: normal; vertical-align: bottom; text-align: right; "
                                                  "border-bottom: 1px solid #888;"},
                *({"selector": f"td.col{i}", "props": "text-align: left;"} for i in text),
                {"selector": "td.col" + str(len(frame.columns) - 1), "props": "white-space: normal; min-width: 12em;"},
            ])
        )

    def check_stated(self) -> None:
        """Check each build's counter and every output value a row pins down, one line each.

        The totals are printed by the prose after the module (``kind="quoted"``,
        "source 000 §N"), the values in ``states`` somewhere in source 000
        (``kind="quoted"``); the values in ``rebuilds`` are cells of the lost
        table that the book rebuilt (``kind="rebuilt"``, "source 000 §N table").
        """
        spec = spec_of(self.model)
        good, bad = self.tally(), self.tally(broken=True)
        # the totals follow the module in its own section; a row's values may be printed anywhere in
        # source 000 (the summary of §15, the assertions of §16 ...), so their bracket names the source
        prose, lost = f"source 000 §{spec.section}", f"source 000 §{spec.section} table"
        check(f"{self.title}: rows counted ({spec.total})", good[spec.total], len(self.rows),
              kind="quoted", source=prose)
        check(f"{self.title}, correct build: {spec.flagged}", good[spec.flagged], self.stated_flagged,
              kind="quoted", source=prose)
        check(f"{self.title}, {self.broken_label}: {spec.flagged}", bad[spec.flagged], self.stated_flagged_broken,
              kind="quoted", source=prose)
        for i, row in enumerate(self.rows):
            for broken, tally, build in ((False, good, ""), (True, bad, f", {self.broken_label}")):
                printed = row.states_broken if broken else row.states
                pinned = row.pinned(broken)
                for key in sorted(pinned, key=spec.outputs.index):
                    value = pinned[key]
                    kind, source = ("quoted", "source 000") if key in printed else ("rebuilt", lost)
                    check(f"row {i + 1}, {key}{build}", getattr(tally.results[i], key), value,
                          fmt=_FORMATS.get(key), kind=kind, source=source)


_FORMATS = {"fail_mask": "06b"}
"""Outputs printed in a format of their own (the six-bit mask in binary)."""


class Note(str):
    """A worked table's note: plain text that Jupyter's display protocol shows as Markdown (a model
    module does not import IPython; ``_repr_markdown_`` is all a front end asks for)."""

    def _repr_markdown_(self) -> str:
        return str(self)

    def __repr__(self) -> str:
        return str(self)


def _rows(*rows: Row) -> tuple[Row, ...]:
    return rows


TABLES: dict[str, WorkedTable] = {}


def _add(t: WorkedTable) -> None:
    TABLES[t.name] = t


_add(WorkedTable(
    model=cluster_scale,
    title="Five measurements",
    setting=f"64 nodes of 100 TFLOPS each: a peak of {64 * 100:,} TFLOPS",
    fixed={"nodes": 64, "node_tflops": 100},
    rows=_rows(
        Row({"compute_ms": 100, "comm_ms": 100}, "compute equals communication", stated=True,
            states={"ideal_tflops": 6400, "efficiency_pct": 50, "achieved_tflops": 3200}),
        Row({"compute_ms": 400, "comm_ms": 100}, "a larger step: four times the compute"),
        Row({"compute_ms": 100, "comm_ms": 300}, "communication three times the compute"),
        Row({"compute_ms": 300, "comm_ms": 100}, "the threshold: exactly 75%", stated=True, equality=True,
            states={"efficiency_pct": 75, "achieved_tflops": 4800, "scales_well": True}),
        Row({"compute_ms": 0, "comm_ms": 100}, "no compute at all", stated=True,
            states={"efficiency_pct": 0}, states_broken={"step_ms": 0}),
    ),
    stated_flagged=3,
    stated_flagged_broken=1,
    shown=("step_ms", "efficiency_pct", "achieved_tflops", "scales_well"),
    reconstruction="Rows 2 and 3 are reconstructed: with rows 1 and 5 below 75%, the stated three "
                   "poor rows need exactly one more (row 3), and the spec-sheet build's single poor "
                   "row is row 5, the one with no compute.",
))

_add(WorkedTable(
    model=collective_cost,
    title="Six collectives",
    setting="8 GB of gradient, an 800 Gbps fabric and a budget of 100 ms",
    fixed={"bytes_gb": 8, "fabric_gbps": 800, "budget_ms": 100},
    rows=_rows(
        Row({"nodes": 8}, "eight ranks", stated=True,
            states={"moved_gb": 14, "collective_ms": 140}),
        Row({"nodes": 2}, "two ranks: the spec-sheet build is exact", stated=True,
            states={"moved_gb": 8}, rebuilds={"collective_ms": 80, "within_budget": True},
            states_broken={"collective_ms": 80}, rebuilds_broken={"moved_gb": 8}),
        Row({"nodes": 64}, "sixty-four ranks: the factor has saturated", stated=True,
            states={"moved_gb": 15}, rebuilds={"collective_ms": 150}),
        Row({"nodes": 4, "bytes_gb": 16}, "a 16 GB gradient: over budget in both builds"),
        Row({"nodes": 1}, "one rank: nothing to exchange"),
        Row({"nodes": 2, "fabric_gbps": 640}, "two ranks at 640 Gbps: exactly the budget", equality=True,
            states={"moved_gb": 8, "collective_ms": 100}, rebuilds={"within_budget": True}),
    ),
    stated_flagged=3,
    stated_flagged_broken=1,
    shown=("moved_gb", "collective_ms", "within_budget", "understated_err"),
    reconstruction="Rows 4 to 6 are reconstructed. With the stated 8 GB at 800 Gbps the spec-sheet "
                   "build always gives 80 ms, so its one over-budget row must change the gradient or the "
                   "fabric: row 4 doubles the gradient to 16 GB. Row 6 is the equality case of the "
                   "source's assertions (640 Gbps).",
))

_add(WorkedTable(
    model=pipeline_bubble,
    title="Seven schedules",
    setting="stages and microbatches varied; a bubble above 20% stalls the schedule",
    fixed={},
    rows=_rows(
        Row({"stages": 8, "microbatches": 32}, "eight stages, 32 microbatches", stated=True,
            states={"bubble_pct": 17}),
        Row({"stages": 8, "microbatches": 1}, "eight stages on one microbatch",
            states={"bubble_pct": 87}),
        Row({"stages": 1, "microbatches": 8}, "a single stage is not a pipeline", stated=True,
            states={"bubble_pct": 0}, rebuilds={"bubble_ignored_err": False}),
        Row({"stages": 8, "microbatches": 64}, "eight stages, 64 microbatches", stated=True,
            states={"bubble_pct": 9}),
        Row({"stages": 16, "microbatches": 32}, "twice the depth on the same 32 microbatches"),
        Row({"stages": 5, "microbatches": 16}, "exactly 20%", equality=True,
            states={"bubble_pct": 20}, rebuilds={"acceptable": True}),
        Row({"stages": 1, "microbatches": 0}, "an empty schedule: the zero-denominator guard"),
    ),
    stated_flagged=2,
    stated_flagged_broken=0,
    shown=("bubble_pct", "useful_pct", "acceptable", "bubble_ignored_err"),
    reconstruction="The prose places 32 microbatches in row 1, 64 in row 4 and the single stage in "
                   "row 3. Row 2 is the book's choice: its 87% is the chapter's opening figure, "
                   "but the prose does not place it in the table. Rows 5 to 7 are reconstructed; row 6 is the equality case of the "
                   "assertions (five stages, sixteen microbatches).",
))

_add(WorkedTable(
    model=checkpoint_cost,
    title="Six checkpoints",
    setting="a 560 GB training state (weights, gradients and optimizer state)",
    fixed={"footprint_gb": 560},
    rows=_rows(
        Row({"tier_gbps": 80, "interval_s": 300}, "80 Gbps every five minutes", stated=True,
            states={"write_s": 56, "overhead_pct": 18}),
        Row({"tier_gbps": 800, "interval_s": 300}, "ten times the tier bandwidth", stated=True,
            states={"write_s": 5, "overhead_pct": 1}),
        Row({"tier_gbps": 80, "interval_s": 60}, "80 Gbps every minute", stated=True,
            states={"overhead_pct": 93}),
        Row({"tier_gbps": 0, "interval_s": 300}, "no tier: the missing-tier guard"),
        Row({"tier_gbps": 80, "interval_s": 0}, "no interval: the missing-interval guard"),
        Row({"tier_gbps": 80, "interval_s": 560}, "exactly 10%", equality=True,
            rebuilds={"overhead_pct": 10, "affordable": True}),
    ),
    stated_flagged=4,
    stated_flagged_broken=1,
    shown=("write_s", "overhead_pct", "affordable", "free_write_err"),
    reconstruction="Rows 4 to 6 are reconstructed. The spec-sheet build writes in 0 s, so its "
                   "single unaffordable row has to be the one with no interval at all (row 5).",
))

_add(WorkedTable(
    model=failure_recovery,
    title="Seven assessments",
    setting="nodes with an 8,760 h (one-year) mean time between failures",
    fixed={"node_mtbf_h": 8760},
    rows=_rows(
        Row({"nodes": 1000, "interval_min": 60}, "a thousand nodes, hourly checkpoints", stated=True,
            states={"cluster_mtbf_h": 8, "failures_per_day": 3, "lost_min_per_day": 90}),
        Row({"nodes": 500, "interval_min": 60}, "half the cluster"),
        Row({"nodes": 1000, "interval_min": 120}, "the interval doubled", stated=True,
            states={"lost_min_per_day": 180}),
        Row({"nodes": 1000, "interval_min": 40}, "exactly an hour a day", equality=True,
            rebuilds={"lost_min_per_day": 60, "tolerable": True}),
        Row({"nodes": 4000, "interval_min": 30}, "four thousand nodes, half-hourly"),
        Row({"nodes": 1, "interval_min": 60}, "a single node: both builds agree"),
        Row({"nodes": 10000, "interval_min": 60}, "the cluster MTBF truncates to 0 h",
            rebuilds={"cluster_mtbf_h": 0, "failures_per_day": 65535}),
    ),
    stated_flagged=4,
    stated_flagged_broken=0,
    shown=spec_of(failure_recovery).outputs[:4],  # MTBF, failures a day, minutes lost, tolerable
    reconstruction="Rows 2 and 4 to 7 are reconstructed; the prose fixes rows 1 and 3 and says "
                   "only that some scale makes the cluster MTBF round to nothing, so row 7 "
                   "(10,000 nodes) is the book's choice.",
))

_add(WorkedTable(
    model=straggler_step,
    title="Five steps",
    setting="a 200 ms mean rank time",
    fixed={"mean_ms": 200},
    rows=_rows(
        Row({"slowest_ms": 260}, "one 260 ms rank", stated=True,
            states={"step_ms": 260, "waste_pct": 30}),
        Row({"slowest_ms": 200}, "uniform ranks: both builds are right", stated=True,
            rebuilds={"waste_pct": 0, "uniform_assumed_err": False},
            rebuilds_broken={"waste_pct": 0, "uniform_assumed_err": False}),
        Row({"slowest_ms": 210}, "a 5% tail"),
        Row({"slowest_ms": 220}, "exactly 10%", equality=True,
            rebuilds={"waste_pct": 10, "tolerable": True}),
        Row({"slowest_ms": 400}, "one rank at half speed"),
    ),
    stated_flagged=2,
    stated_flagged_broken=0,
    shown=("step_ms", "waste_ms", "waste_pct", "tolerable"),
    reconstruction="Rows 3 to 5 are reconstructed; row 4 drives the tolerance boundary exactly, "
                   "as the source's assertions do.",
))

_add(WorkedTable(
    model=activation_memory,
    title="Five sizings",
    setting="80 layers, 16 MB of activations per layer, 8,192 MB of fast memory",
    fixed={"layers": 80, "act_per_layer_mb": 16, "hbm_mb": 8192},
    rows=_rows(
        Row({"batch": 8, "recompute": False}, "batch 8, every layer held", stated=True,
            states={"act_mb": 10240}, rebuilds={"fits": False}),
        Row({"batch": 8, "recompute": True}, "batch 8 with recomputation", stated=True,
            states={"act_mb": 128}),
        Row({"batch": 4, "recompute": False}, "batch 4, every layer held"),
        Row({"batch": 512, "recompute": True}, "exactly fills the fast memory", equality=True,
            rebuilds={"act_mb": 8192, "fits": True, "spare_mb": 0}),
        Row({"batch": 0, "recompute": False}, "an empty batch holds nothing", stated=True,
            states={"act_mb": 0}, rebuilds={"activations_free_err": False}),
    ),
    stated_flagged=1,
    stated_flagged_broken=0,
    shown=("act_mb", "spare_mb", "fits", "activations_free_err"),
    reconstruction="Rows 3 and 4 are reconstructed. With 80 layers of 16 MB no batch fills 8,192 MB "
                   "exactly without recomputation (it would need 6.4), so the equality row uses "
                   "recomputation at batch 512.",
))

_add(WorkedTable(
    model=fabric_bisection,
    title="Six assessments",
    setting="16 nodes with 800 Gbps links each; full bisection 6,400 Gbps",
    fixed={"nodes": 16, "link_gbps": 800},
    rows=_rows(
        Row({"oversub_x": 1, "demand_gbps": 3200}, "one-to-one: both builds agree"),
        Row({"oversub_x": 4, "demand_gbps": 3200}, "four-to-one", stated=True,
            states={"full_bisection_gbps": 6400, "real_bisection_gbps": 1600}),
        Row({"oversub_x": 2, "demand_gbps": 4000}, "two-to-one"),
        Row({"oversub_x": 1, "demand_gbps": 8000}, "demand beyond even the full figure"),
        Row({"oversub_x": 0, "demand_gbps": 3200}, "oversubscription unstated"),
        Row({"oversub_x": 4, "demand_gbps": 1600}, "demand met exactly", stated=True, equality=True,
            rebuilds={"real_bisection_gbps": 1600, "sufficient": True}),
    ),
    stated_flagged=3,
    stated_flagged_broken=1,
    shown=("real_bisection_gbps", "sufficient", "oversub_ignored_err"),
    reconstruction="Rows 1 and 3 to 5 are reconstructed and every demand figure is ours; the prose "
                   "fixes the four-to-one figure and says the last row meets its demand exactly.",
))

_add(WorkedTable(
    model=cluster_economics,
    title="Six pricings",
    setting="nodes costing 100 units with 100 TFLOPS each",
    fixed={"node_cost": 100, "node_tflops": 100},
    rows=_rows(
        Row({"nodes": 64, "efficiency_pct": 50}, "sixty-four nodes at 50%", stated=True,
            states={"total_cost": 6400, "useful_tflops": 3200, "cost_per_useful": 2000},
            states_broken={"cost_per_useful": 1000}),
        Row({"nodes": 64, "efficiency_pct": 100}, "perfect efficiency: peak pricing is right"),
        Row({"nodes": 32, "efficiency_pct": 70}, "the debug lab before doubling"),
        Row({"nodes": 64, "efficiency_pct": 41}, "the debug lab after doubling"),
        Row({"nodes": 16, "efficiency_pct": 50}, "a quarter of the nodes, efficiency unchanged", stated=True,
            states={"useful_tflops": 800, "cost_per_useful": 2000}),
        Row({"nodes": 64, "efficiency_pct": 0}, "nothing delivered: the zero-useful guard"),
    ),
    stated_flagged=4,
    stated_flagged_broken=0,
    shown=("useful_tflops", "cost_per_useful", "acceptable"),
    reconstruction="Rows 2, 3, 4 and 6 are reconstructed; rows 3 and 4 use the debug lab's 70% at "
                   "32 nodes and 41% at 64. With these node figures the cost is 100,000 / efficiency "
                   "at any size, and no whole-number efficiency lands exactly on 1,500 (it would "
                   "need 66.7%), so this table has no equality row.",
))

_ALL = dict(nodes_added=True, comm_costed=True, bubble_bounded=True,
            checkpoint_affordable=True, stragglers_bounded=True, bisection_sufficient=True)

_add(WorkedTable(
    model=training_cluster_model,
    title="Six configurations",
    setting="six properties per configuration; the cluster scales only if all hold",
    fixed={},
    rows=_rows(
        Row(_ALL, "everything holds"),
        Row({**_ALL, "comm_costed": False}, "the collective left out of the step"),
        Row({**_ALL, "bubble_bounded": False, "stragglers_bounded": False, "bisection_sufficient": False},
            "the debug lab: fabric, bubble and straggler at once"),
        Row({**_ALL, "stragglers_bounded": False}, "only the straggler fails", stated=True,
            rebuilds={"fail_mask": 0b010000}),
        Row({**_ALL, "checkpoint_affordable": False}, "the checkpoint does not fit its interval"),
        Row({**_ALL, "nodes_added": False}, "no nodes were added", stated=True,
            rebuilds={"scales": False, "fail_mask": 0b000001}, rebuilds_broken={"scales": False}),
    ),
    stated_flagged=1,
    stated_flagged_broken=5,
    shown=("scales", "fail_mask", "false_scale_err"),
    reconstruction="Only row 4 (the straggler) is placed by the prose, and it says one row adds no "
                   "nodes; the other rows are reconstructed. Here the counter counts the rows "
                   "that scale, not the rows that fail.",
))


def table(name: str) -> WorkedTable:
    """The worked table of a model, by the model's name (``"cluster_scale"`` ...)."""
    try:
        return TABLES[name]
    except KeyError:
        raise ValueError(f"name must be one of {sorted(TABLES)}, got {name!r}") from None
