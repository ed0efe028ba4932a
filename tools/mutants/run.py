"""Mutation testing of clustermath's model modules with mutmut 3 (``make mutants``).

mutmut 3 finds a package only under ``./``, ``src/`` or ``source/`` and skips
every decorated function (chapter 1's ``@counted`` models, ``@property``
methods). This script therefore never mutates the working tree: it copies the
package into a scratch folder (``_build/mutants`` by default) as
``src/clustermath``, rewrites each ``@counted(...)``/``@property`` decoration
into the equivalent assignment after the function (``f = counted(...)(f)``),
so mutmut mutates those bodies too, copies the unit tests, and runs mutmut
there, one model module at a time, each against the test files that cover it
(``MODULES`` below). It then writes the kill rate per module and every
surviving mutant to ``_build/mutants/summary.md`` and exits non-zero when a
module scores below 95% once the survivors that ``tools/mutants/REPORT.md``
lists as equivalent are set aside.

Usage::

    python tools/mutants/run.py                 # every model module
    python tools/mutants/run.py scaling budget  # some modules (names as in MODULES)
    python tools/mutants/run.py --show NAME     # the diff of one mutant

Run it under ``nice``: it keeps the CPU busy (``--jobs``, default 1).
"""
from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GOAL = 0.95

# module (path under lib/clustermath) -> the test files that exercise it
CH1 = ["test_ch1_models.py", "test_ch1_validation.py", "test_ch1_rtl_reference.py",
       "test_ch1_source_numbers.py", "test_mutants_models.py", "test_properties.py"]
PLUMBING = ["test_ports_check_runner.py", "test_ch1_validation.py", "test_ch1_rtl_reference.py",
            "test_ch1_models.py", "test_mutants_models.py", "test_reliability.py", "test_goodput.py",
            "test_placement.py", "test_mutants_reliability.py", "test_mutants_placement.py",
            "test_saturation_flags.py"]
CH2 = ["test_reliability.py", "test_goodput.py", "test_mutants_reliability.py", "test_properties.py"]
CH3 = ["test_placement.py", "test_mutants_placement.py", "test_properties.py"]
COMPOSITIONS = ["test_ch1_worked_tables.py", "test_ch1_source_numbers.py", "test_mutants_compositions.py",
                "test_budget.py"]
# chapters 4 and 5: test_properties.py reaches their models only through the explorers, which
# `-k "not explorer"` leaves out, so it is not listed
CH4 = ["test_fabric_designs.py", "test_mutants_fabric.py"]
CH5 = ["test_scaleup.py", "test_scaleup_ring.py", "test_mutants_scaleup.py"]
CH6 = ["test_predict_run.py", "test_predict_kernels.py", "test_predict_readable.py", "test_predict_unchanged.py",
       "test_predict_switches.py", "test_holdout.py", "test_measurements.py", "test_mutants_validation.py",
       "test_mutants_predict.py", "test_mutants_data.py"]
# the inputs on which listed "equivalents" turned out not to be (issue 21), for every group
CLAIMS = "test_equivalence_claims.py"
CH1, PLUMBING, CH2, CH3, COMPOSITIONS, CH4, CH5, CH6 = ([*g, CLAIMS] for g in (
    CH1, PLUMBING, CH2, CH3, COMPOSITIONS, CH4, CH5, CH6))
MODULES: dict[str, list[str]] = {
    **{f"peak/{m}": CH1 for m in ("scaling.py", "collectives.py", "pipeline.py", "checkpoint.py",
                                  "failures.py", "stragglers.py", "activations.py", "fabric.py",
                                  "economics.py")},
    "peak/assembled.py": ["test_ch1_assembled.py", "test_ch1_models.py", "test_mutants_models.py", CLAIMS],
    "peak/ports.py": PLUMBING,
    **{m: PLUMBING for m in ("check.py", "runner.py", "validate.py")},
    "reliability/interruptions.py": CH2,
    "reliability/goodput.py": CH2,
    "placement/parallelism.py": CH3,
    **{f"peak/{m}": COMPOSITIONS for m in ("budget.py", "debug_lab.py", "worked_tables.py")},
    **{f"fabric_designs/{m}": CH4 for m in ("designs.py", "choice.py", "incast.py", "load_balance.py",
                                            "redundancy.py")},
    **{f"scaleup/{m}": CH5 for m in ("domains.py", "ring_builder.py")},
    **{f"validation/{m}": CH6 for m in ("predict.py", "inputs.py", "training_time.py", "measurements.py",
                                        "holdout.py")},
    "validation/gpus.py": ["test_gpus.py", CLAIMS],
    "validation/flop_counts.py": ["test_flop_counts.py", CLAIMS],
    "validation/gemm.py": ["test_gemm.py", CLAIMS],
    "validation/kernels.py": ["test_kernels.py", "test_gemm.py", CLAIMS],
    "validation/ablation.py": ["test_ablation.py", CLAIMS],
    "validation/collectives.py": ["test_collectives.py", CLAIMS],
}
"""Every model module (path under lib/clustermath) and the test files that cover it.
``make mutants MODULES=<wing>`` runs one wing's modules (``peak``, ``reliability``, ...)."""

KILLED = ("killed", "timeout", "caught by type check")
STATUS = {0: "survived", 1: "killed", 3: "killed", -24: "timeout", 24: "timeout",
          152: "timeout", 255: "timeout", 33: "no tests", 34: "skipped", 35: "suspicious",
          36: "timeout", 37: "caught by type check", -11: "segfault", -9: "timeout"}
DECORATORS = ("counted", "property")


def undecorate(source: str) -> str:
    """``@counted(...)``/``@property`` decorations rewritten as assignments after the def."""
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    edits = []  # (first line of decorators, last line of def, indent, name, decorator sources)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.decorator_list:
            names = [d.func.id if isinstance(d, ast.Call) and isinstance(d.func, ast.Name)
                     else d.id if isinstance(d, ast.Name) else None for d in node.decorator_list]
            if not all(n in DECORATORS for n in names):
                continue
            decos = [ast.get_source_segment(source, d) for d in node.decorator_list]
            first = node.decorator_list[0].lineno - 1
            indent = lines[node.lineno - 1][: node.col_offset]
            edits.append((first, node.lineno - 1, node.end_lineno, indent, node.name, decos))
    for first, def_line, end, indent, name, decos in sorted(edits, reverse=True):
        wrapped = name
        for d in reversed(decos):
            wrapped = f"{d}({wrapped})"
        lines.insert(end, f"{indent}{name} = {wrapped}\n")
        del lines[first:def_line]
    return "".join(lines)


def prepare(work: Path, modules: list[str]) -> None:
    """The scratch project: src/clustermath (undecorated), tests, pyproject with mutmut's config."""
    src = work / "src" / "clustermath"
    if src.exists():
        shutil.rmtree(src)
    shutil.copytree(ROOT / "lib" / "clustermath", src,
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for path in src.rglob("*.py"):
        text = path.read_text()
        new = undecorate(text)
        if new != text:
            path.write_text(new)
    tests = work / "tests"
    if tests.exists():
        shutil.rmtree(tests)
    tests.mkdir()
    for path in (ROOT / "tests").glob("*.py"):
        shutil.copy2(path, tests / path.name)
    for extra in ("nbval_sanitize.cfg",):
        if (ROOT / "tests" / extra).exists():
            shutil.copy2(ROOT / "tests" / extra, tests / extra)
    (work / "book").mkdir(exist_ok=True)  # chapter 6's data tests read the bibliography
    shutil.copy2(ROOT / "book" / "references.bib", work / "book" / "references.bib")
    selection = sorted({f"tests/{t}" for m in modules for t in MODULES[m]
                        if (tests / t).exists()})
    only = [f"src/clustermath/{m}" for m in modules]
    (work / "pyproject.toml").write_text(
        "[tool.pytest.ini_options]\n"
        'testpaths = ["tests"]\n'
        'addopts = "-p no:cacheprovider"\n'
        "[tool.mutmut]\n"
        'source_paths = ["src"]\n'
        f"only_mutate = {json.dumps(only)}\n"
        f"pytest_add_cli_args_test_selection = {json.dumps(selection)}\n"
        # the view tests are slow and test no arithmetic; the wheel test builds the repository itself
        'pytest_add_cli_args = ["-x", "-q", "-k", "not explorer and not wheel"]\n'
        'also_copy = ["book"]\n'
        "use_git_change_detection = false\n"
    )


def mutmut(work: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(work / "src")
    env.setdefault("PYTHONHASHSEED", "0")
    exe = Path(sys.executable).with_name("mutmut")
    return subprocess.run([str(exe), *args], cwd=work, env=env, text=True,
                          capture_output=True, check=check)


def _results(work: Path, module: str) -> dict[str, str]:
    meta = work / "mutants" / "src" / "clustermath" / f"{module}.meta"
    if not meta.exists():
        return {}
    codes = json.loads(meta.read_text())["exit_code_by_key"]
    return {name: STATUS.get(code, f"exit {code}") if code is not None else "not run"
            for name, code in codes.items()}


def results(work: Path, module: str) -> dict[str, str]:
    """Each mutant's status; a survivor that a later ``--retest`` run killed counts as killed.

    Tests are only ever added, so a mutant killed by an earlier run stays killed.
    """
    res = _results(work, module)
    for name, status in _results(retest_dir(work), module).items():
        if name in res and status != "not run" and res[name] not in KILLED:
            res[name] = status
    return res


def fold_retest(work: Path, modules: list[str]) -> None:
    """Copy the verdicts of an earlier ``--retest`` run into the group's own results."""
    for module in modules:
        meta = work / "mutants" / "src" / "clustermath" / f"{module}.meta"
        again = retest_dir(work) / "mutants" / "src" / "clustermath" / f"{module}.meta"
        if not (meta.exists() and again.exists()):
            continue
        data = json.loads(meta.read_text())
        later = json.loads(again.read_text())["exit_code_by_key"]
        for name, code in later.items():
            if code is not None and name in data["exit_code_by_key"] and \
                    STATUS.get(data["exit_code_by_key"][name]) not in KILLED:
                data["exit_code_by_key"][name] = code
        meta.write_text(json.dumps(data))


def retest_dir(work: Path) -> Path:
    return work.with_name(work.name + "+retest")


def equivalents() -> set[str]:
    """Mutant names REPORT.md lists as equivalent (a line ``- `name`: reason``)."""
    report = ROOT / "tools" / "mutants" / "REPORT.md"
    if not report.exists():
        return set()
    return set(re.findall(r"^\s*[-*]\s+`([^`]+__mutmut_\d+)`", report.read_text(), re.M))


def score_module(work: Path, module: str, equivalent: set[str], seconds: float):
    res = results(work, module)
    killed = sum(s in KILLED for s in res.values())
    alive = sorted(n for n, s in res.items() if s not in KILLED)
    equiv = [n for n in alive if n in equivalent]
    score = (killed + len(equiv)) / len(res) if res else 0.0
    print(f"{module:32} {len(res):5} mutants  {killed:5} killed  {len(equiv):3} equivalent  "
          f"{len(alive) - len(equiv):3} open  {100 * score:6.1f}%", flush=True)
    row = (module, len(res), killed, len(equiv), len(alive) - len(equiv), score, seconds)
    surv = [(module, n, res[n]) for n in alive if n not in equivalent]
    return row, surv, bool(res) and score >= GOAL


def module_of(name: str) -> str:
    """``clustermath.peak.budget.x_f__mutmut_3`` -> ``peak/budget.py`` (its key in MODULES)."""
    module = name.partition("__mutmut_")[0].rpartition(".")[0]
    return module.removeprefix("clustermath.").replace(".", "/") + ".py"


def generate(gwork: Path) -> None:
    """Write the mutants of a prepared scratch folder without running any test (about 5 s)."""
    code = ("import os\n"
            "from mutmut.utils.file_utils import copy_src_dir\n"
            "from mutmut.__main__ import create_mutants\n"
            "from mutmut.mutation.trampoline import set_mutant_under_test\n"
            "set_mutant_under_test('mutant_generation')\n"
            "os.makedirs('mutants', exist_ok=True)\n"
            "copy_src_dir()\n"
            "create_mutants(1)\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    subprocess.run([sys.executable, "-c", code], cwd=gwork, env=env, check=True, capture_output=True, text=True)
    tests = gwork / "mutants" / "tests"
    if not tests.exists():
        shutil.copytree(gwork / "tests", tests)
    book = gwork / "mutants" / "book"  # mutmut's also_copy, which only its run does
    if (gwork / "book").exists() and not book.exists():
        shutil.copytree(gwork / "book", book)


def mutant_source(gwork: Path, name: str) -> tuple[str, str] | None:
    """The original's and the mutant's source, from the generated mutants file."""
    path = gwork / "mutants" / "src" / "clustermath" / module_of(name)
    if not path.exists():
        return None
    tree = ast.parse(path.read_text())
    mangled = name.rpartition(".")[2]
    orig_name = mangled.partition("__mutmut_")[0] + "__mutmut_orig"
    found = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name in (mangled, orig_name):
            found[node.name] = ast.get_source_segment(path.read_text(), node)
    if len(found) < 2:
        return None
    return found[orig_name], found[mangled].replace(mangled, orig_name, 1)


def show(work: Path, name: str) -> int:
    """Print one mutant's diff, generating the mutants first on a fresh clone."""
    import difflib
    module = module_of(name)
    if module not in MODULES:
        print(f"no module {module!r} for mutant {name!r}; modules: {', '.join(MODULES)}")
        return 1
    gwork = group_dir(work, [m for m in MODULES if MODULES[m] == MODULES[module]])
    sources = mutant_source(gwork, name)
    if sources is None:
        prepare(gwork, [m for m in MODULES if MODULES[m] == MODULES[module]])
        generate(gwork)
        sources = mutant_source(gwork, name)
    if sources is None:
        print(f"no mutant named {name!r} in {module}")
        return 1
    orig, mutant = sources
    status = results(gwork, module).get(name, "not run in this folder")
    print(f"# {name}: {status}")
    print("".join(difflib.unified_diff(orig.splitlines(True), mutant.splitlines(True),
                                       "original", "mutant")))
    return 0


def group_dir(work: Path, group: list[str]) -> Path:
    return work / "-".join(Path(m).stem for m in group)[:80]


def check_equivalents(gwork: Path, group: list[str], listed: list[str],
                      res: dict[str, str] | None) -> tuple[list[str], list[str]]:
    """Run each listed equivalent of ``group`` beside the original (tools/mutants/equivalence.py).

    Returns (lines for the summary, failures). A listed mutant fails the check when the
    tests kill it, when it no longer exists, or when an input makes it differ from the original.
    """
    lines, failures = [], []
    alive = []
    for name in sorted(listed):
        if res is not None and name not in res:
            failures.append(f"{name}: listed as equivalent but no such mutant (the ids moved: renumber REPORT.md)")
        elif res is not None and res[name] in KILLED:
            failures.append(f"{name}: listed as equivalent but the tests kill it ({res[name]}): remove it from REPORT.md")
        else:
            alive.append(name)
    if not alive:
        return lines, failures
    if not (gwork / "mutants" / "src").exists():
        generate(gwork)
    tests = sorted({f"tests/{t}" for m in group for t in MODULES[m]})
    targets = sorted({(n.partition("__mutmut_")[0].rpartition(".")[0],
                       n.partition("__mutmut_")[0].rpartition(".")[2]) for n in alive})
    tool = [sys.executable, str(ROOT / "tools" / "mutants" / "equivalence.py")]
    inputs, verdicts = gwork / "equivalence-inputs.pkl", gwork / "equivalence.json"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.setdefault("PYTHONHASHSEED", "0")
    rec = subprocess.run([*tool, "record", str(gwork), *tests, "--targets", json.dumps(targets),
                          "--out", str(inputs)], env=env, text=True, capture_output=True)
    if rec.returncode != 0:
        return lines, failures + [f"recording the tests' inputs failed:\n{rec.stdout[-2000:]}{rec.stderr[-2000:]}"]
    cmp_ = subprocess.run([*tool, "compare", str(gwork), "--inputs", str(inputs), "--mutants", json.dumps(alive),
                           "--out", str(verdicts)], env=env, text=True, capture_output=True)
    if cmp_.returncode != 0:
        return lines, failures + [f"comparing failed:\n{cmp_.stdout[-2000:]}{cmp_.stderr[-2000:]}"]
    for name, v in json.loads(verdicts.read_text()).items():
        if v["differs"]:
            d = v["differs"]
            failures.append(f"{name}: listed as equivalent, but {d['call']} {d['original']} in the original "
                            f"and {d['mutant']} in the mutant")
        elif v["inputs"] == 0:
            failures.append(f"{name}: listed as equivalent, but no test input reaches it ({v.get('note', '')})")
        else:
            lines.append(f"- `{name}`: same outcome as the original on {v['inputs']:,} inputs")
    return lines, failures


def commit_described() -> str:
    """The commit the run describes, with "+changes" when lib/ or tests/ differ from it."""
    def git(*a: str) -> str:
        done = subprocess.run(["git", "-C", str(ROOT), *a], capture_output=True, text=True)
        return done.stdout.strip() if done.returncode == 0 else ""
    head = git("rev-parse", "--short=10", "HEAD") or "unknown"
    return head + ("+changes" if git("status", "--porcelain", "--", "lib", "tests") else "")


TABLE_BEGIN, TABLE_END = "<!-- mutants-table:begin (written by tools/mutants/run.py) -->", "<!-- mutants-table:end -->"
HEADER = ("| module | mutants | killed | equivalent (each checked) | open | score | seconds | commit |\n"
          "|---|--:|--:|--:|--:|--:|--:|---|")


def write_table(rows: list[tuple]) -> None:
    """Update the rows of the modules just run in REPORT.md's results table; keep the others."""
    report = ROOT / "tools" / "mutants" / "REPORT.md"
    text = report.read_text()
    old: dict[str, str] = {}
    if TABLE_BEGIN in text:
        body = text[text.index(TABLE_BEGIN) + len(TABLE_BEGIN):text.index(TABLE_END)]
        for line in body.splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) == 8 and cells[0] in MODULES:
                old[cells[0]] = line.strip()
    commit = commit_described()
    for m, n, k, e, o, sc, t in rows:
        old[m] = f"| {m} | {n:,} | {k:,} | {e} | {o} | {100 * sc:.1f}% | {t:.0f} | {commit} |"
    lines = [old[m] for m in MODULES if m in old]
    totals = [line.strip("|").split("|") for line in lines]
    n_all = sum(int(c[1].replace(",", "")) for c in totals)
    k_all = sum(int(c[2].replace(",", "")) for c in totals)
    e_all = sum(int(c[3]) for c in totals)
    o_all = sum(int(c[4]) for c in totals)
    block = "\n".join([TABLE_BEGIN, HEADER, *lines,
                       f"| **all {len(lines)} modules** | {n_all:,} | {k_all:,} | {e_all} | {o_all} | "
                       f"{100 * (k_all + e_all) / max(n_all, 1):.1f}% | | |", TABLE_END])
    if TABLE_BEGIN in text:
        text = text[:text.index(TABLE_BEGIN)] + block + text[text.index(TABLE_END) + len(TABLE_END):]
    else:
        text = text.replace("## Results\n", "## Results\n\n" + block + "\n", 1)
    report.write_text(text)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("modules", nargs="*", help="modules as in MODULES, a wing, or a stem")
    parser.add_argument("--work", default=str(ROOT / "_build" / "mutants"))
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--show", metavar="MUTANT", help="print one mutant's diff (generates the mutants "
                                                         "if no run left them)")
    parser.add_argument("--retest", action="store_true",
                        help="rerun only the open survivors of an earlier run, with the current tests")
    parser.add_argument("--report", action="store_true",
                        help="only score the results already in --work (no mutmut run)")
    parser.add_argument("--check-equivalents", action="store_true",
                        help="only check REPORT.md's equivalence claims (no mutmut run; generates the mutants)")
    parser.add_argument("--no-table", action="store_true", help="leave REPORT.md's table as it is")
    args = parser.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    if args.show:
        return show(work, args.show)
    chosen = []
    for want in args.modules or MODULES:
        hits = [m for m in MODULES if m == want or Path(m).stem == want or m.split("/")[0] == want]
        if not hits:
            parser.error(f"unknown module {want!r}; choose from {list(MODULES)}")
        chosen += hits
    equivalent = equivalents()
    rows, survivors, failed, eq_lines, eq_failures = [], [], [], [], []
    # modules that share their tests run together: mutmut collects test coverage once per run
    groups: dict[tuple[str, ...], list[str]] = {}
    for module in chosen:
        groups.setdefault(tuple(MODULES[module]), []).append(module)
    for group in groups.values():
        # each group in its own scratch folder, so a run of one never invalidates another
        gwork = group_dir(work, group)
        gwork.mkdir(parents=True, exist_ok=True)
        listed = [n for n in equivalent if module_of(n) in group]
        if args.check_equivalents:
            if not listed:
                continue
            gwork = gwork.with_name(gwork.name + "+check")  # never in place of a run's results
            prepare(gwork, group)
            shutil.rmtree(gwork / "mutants", ignore_errors=True)
            generate(gwork)
            lines, fails = check_equivalents(gwork, group, listed, None)
            eq_lines += lines
            eq_failures += fails
            print(f"[{', '.join(group)}: {len(listed)} listed equivalents, {len(fails)} failed the check]", flush=True)
            continue
        timing = gwork / "seconds.txt"
        checked_in = gwork  # where the claims are checked: a folder with the current tests
        if args.retest:
            open_ = [n for m in group for n, st in results(gwork, m).items()
                     if st not in KILLED and n not in equivalent]
            if open_:
                rwork = retest_dir(gwork)
                fold_retest(gwork, group)  # keep what an earlier retest killed
                rwork.mkdir(exist_ok=True)
                prepare(rwork, group)
                shutil.rmtree(rwork / "mutants", ignore_errors=True)
                t0 = time.monotonic()
                run = mutmut(rwork, "run", "--max-children", str(args.jobs), *open_, check=False)
                (rwork / "seconds.txt").write_text(f"{time.monotonic() - t0:.0f}\n")
                checked_in = rwork  # the group's own folder holds the tests of its last full run
                if run.returncode != 0:
                    print(run.stdout[-3000:], run.stderr[-3000:], sep="\n")
        elif not args.report:
            prepare(gwork, group)
            shutil.rmtree(gwork / "mutants", ignore_errors=True)
            t0 = time.monotonic()
            run = mutmut(gwork, "run", "--max-children", str(args.jobs), check=False)
            timing.write_text(f"{time.monotonic() - t0:.0f}\n")
            if run.returncode != 0:
                print(run.stdout[-3000:], run.stderr[-3000:], sep="\n")
        seconds = sum(float(t.read_text()) for t in (timing, retest_dir(gwork) / "seconds.txt")
                      if t.exists()) if timing.exists() else float("nan")
        print(f"[{', '.join(group)}: {seconds:.0f} s]", flush=True)
        res_all: dict[str, str] = {}
        for module in group:
            row, surv, ok = score_module(gwork, module, equivalent, seconds / len(group))
            rows.append(row)
            survivors += surv
            res_all.update(results(gwork, module))
            if not ok:
                failed.append(module)
        t0 = time.monotonic()
        lines, fails = check_equivalents(checked_in, group, listed, res_all)
        eq_lines += lines
        eq_failures += fails
        print(f"  {len(listed)} listed equivalents checked side by side in {time.monotonic() - t0:.0f} s: "
              f"{len(fails)} failed", flush=True)
    if rows and not args.no_table and not args.retest:
        write_table(rows)
    lines = ["| module | mutants | killed | equivalent | open | score | seconds (share of its group) |",
             "|---|--:|--:|--:|--:|--:|--:|"]
    lines += [f"| {m} | {n} | {k} | {e} | {o} | {100 * s:.1f}% | {t:.0f} |"
              for m, n, k, e, o, s, t in rows]
    lines += ["", "Open survivors (neither killed nor listed as equivalent in REPORT.md):", ""]
    lines += [f"- `{n}` ({s}, {m})" for m, n, s in survivors] or ["- none"]
    lines += ["", "Equivalence claims that failed their check:", ""]
    lines += [f"- {f}" for f in eq_failures] or ["- none"]
    lines += ["", "Equivalence claims that held:", ""] + (eq_lines or ["- none checked"])
    (work / "summary.md").write_text("\n".join(lines) + "\n")
    print(f"\nsummary: {work / 'summary.md'}")
    for f in eq_failures:
        print(f"EQUIVALENCE CLAIM FAILED: {f}")
    if failed:
        print(f"below {GOAL:.0%}: {', '.join(failed)}")
    return 1 if failed or eq_failures else 0


if __name__ == "__main__":
    sys.exit(main())
