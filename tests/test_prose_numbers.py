"""No number a model or the data produces is typed into chapter 6's prose (issue 39).

Every number in the chapter's markdown cells, in the paragraphs its code cells render
(``views.base.prose`` templates, whose numbers are ``{{name}}`` placeholders filled from the
code), and in its exercises' prompts and discussions must be one of:

* **rendered**: a ``{{name}}`` placeholder (the test never sees its value; nbval compares
  the rendered paragraph);
* **a cited quotation**: a number some check line of the chapter prints as ``quoted from``
  a source (label or value: the check itself compares it with the data file), matched after
  rounding to the printed digits;
* **a figure of the data file**: a number without a percent sign that equals a value of
  ``measurements.csv`` exactly (a run's configuration, quoted from its source with the row);
* **a name, not a quantity**: a year, a figure, table, equation, chapter or exercise number,
  a model's size in its name (175B, 1T), a parallel size in a configuration's name (TP 8),
  a GPU or library name;
* **listed below** with the reason it is typed (``ALLOWED``), or, for an exercise's check
  value, recomputed here from its formula (``CHECK_VALUES``).

Math (``$…$``), code spans and the targets of roles and labels are not prose. A number typed
anywhere else fails the test: a model's output typed by hand goes stale the day the model
changes, which is how chapter 6 came to say "20% low" beside a table printing −15.9%.
The same test carries to chapters 1–5 by adding their notebooks to ``CHAPTERS``.
"""
from __future__ import annotations

import ast
import json
import math
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent

CHAPTERS = {"06_do_the_models_hold": "ch06_exercises"}
"""Chapter notebook -> its exercise master."""

NUMBER = re.compile(r"(?<![\w.\-−+])[-−+]?\d+(?:,\d{3})*(?:\.\d+)?")
PLACEHOLDER = re.compile(r"\{\{\s*\w+\s*\}\}")
NOT_PROSE = [
    re.compile(r"\$\$.*?\$\$", re.S),                 # display math
    re.compile(r"(?<!\\)\$[^$\n]+\$"),                # inline math
    re.compile(r"```.*?```", re.S),                   # fenced code
    re.compile(r"`[^`]*`"),                           # code spans and role targets
    re.compile(r"^\([\w-]+\)=\s*$", re.M),            # labels
    re.compile(r"\{[\w:-]+\}"),                       # role names ({cite:p}, {ref})
    re.compile(r"<[^>]+>"),                           # html tags
    re.compile(r"^:class:.*$", re.M),                 # directive options
]
NAMES = re.compile(
    r"\b(?:Figures?|Tables?|eq\.|eqs\.|[Cc]hapters?|[Ss]ections?|§|[Ee]xercises?|Appendix|issue|"
    r"Llama|RSC-|GPT-|MLPerf v|Megatron-LM v|NeMo|version|v)\s?\d[\d.]*(?:\s(?:to|and)\s\d+)?"
    r"|\b\d+(?:\.\d+)?[BMTk]\b"                       # model sizes: 175B, 1T, 125M, 256k
    r"|\b\d+(?:,\d{3})*-(?:bit|byte|GPU|node|way|day|layer|host|wide)s?\b"  # compound names: 16-bit, 4-byte
    r"|\b(?:TP|PP|CP|DP|EP)\s?\d+(?:(?:,\s?|\s(?:and|or)\s)\d+)*"  # a configuration's sizes
    r"|\b(?:19|20)\d\d\b"                             # years
    r"|\bH100|A100|B200|H800|FP8|BF16|FP32|HBM2e|DGX-\w+|V100"
)

ALLOWED = {
    "06_do_the_models_hold": {
        "±10%": "the figures' bands, a drawing choice",
        "±25%": "the figures' bands, a drawing choice",
        "±15%": "the threshold the limits list uses, a choice",
        "25%": "the figures' ±25% band, a drawing choice",
        "15%": "the limits' ±15% threshold, a choice",
        "128": "Kokolis et al.'s jobs of more than 128 GPUs, read second-hand (cited)",
        "148": "Llama 3 Table 5's 148 faulty-GPU interruptions (cited; the disagreements list recomputes it)",
        "8%": "the leave-one-source-out target the chapter set itself",
        "10%": "within 10%: a threshold the count uses",
        "3,079": "Lin et al.'s number of jobs, read second-hand (cited beside it)",
        "1.7%": "Lin et al.'s share of straggling jobs with a single bad worker (cited)",
        "500": "torchtitan's stated power limit, 500 W (cited)",
        "10,000": "MegaScale's \"more than 10,000 GPUs\" (quoted)",
        "256": "MegaScale Table 3's 256 GPUs (a run's name)",
        "90%": "Llama 3's \"higher than 90%\" (quoted)",
        "512": "MLPerf's smallest run, 512 GPUs (a run's name)",
        "10,752": "MLPerf's largest run, 10,752 GPUs (a run's name)",
        "384": "BLOOM's 384 GPUs (a run's name)",
        "5%": "HPN's \"around 5%\" (quoted)",
        "100": "HPN's 100 s checkpoints (quoted)",
        "1,000": "the unit of a failure rate, per 1,000 node-days",
        "32": "micro-batches in a check value's case",
    },
    "ch06_exercises": {
        "5%": "exercise 3's tolerance, a choice of the exercise",
        "90%": "Llama 3's \"higher than 90%\" (quoted)",
        "0.9": "the ratio exercise 5 sets, 90%",
        "0.41": "the convention's example of a fraction (0.41, not 41)",
        "7": "the storage's 7 TB/s peak (Llama 3, quoted)",
        "1,000": "the unit of a failure rate, per 1,000 node-days",
        "365": "days in a year",
        "60": "seconds in a minute, and a save of 60 s in a check's case",
        "24": "hours in a day",
        "3,600": "seconds in an hour",
        "131,072": "the 131,072 GPUs exercise 4 asks about",
        "100,000": "the 100,000 GPUs of exercise 4's title",
        "900": "NVLink's 900 GB/s counted both ways (quoted)",
        "0": "a restart of 0 s in a check's case",
        "1": "a micro-batch of 1, a chunk count",
        "2": "2 interleaved chunks, the chapter's assumption (stated as such)",
        "4": "a chunk count the exercise offers",
        "8": "GPUs of a node; the layers of a stage",
        "10": "a restart of 10 minutes (MegaScale's, quoted)",
        "11,135": "the Llama 3 MTBF in seconds, computed in the prompt's hint from quoted figures",
    },
}

CHECK_VALUES = {
    "390.6": lambda: 201.6 * 2 * 31 / 32,
    "0.7502": lambda: (72 * (1 + 2048 / (6 * 25600) + 51200 / (12 * 25600 * 128))
                       / (96 * (1 + 2048 / (6 * 25600) + 51200 / (16 * 25600 * 128)))),
    "3.789": lambda: 1000 * 419 / (2048 * 54),
    "28.85": lambda: 24 / (128 * 6.5 / 1000),
    "1,156": lambda: math.sqrt(2 * 60 * 11_135),
    "0.9013": lambda: (1 - 578 / 11_135) / (1 + 60 / 1_156),
}
"""A check value typed into an exercise's prompt, recomputed from the formula the prompt gives."""


def _source(cell: dict) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def prose_templates(code: str) -> list[str]:
    """The first argument of every ``prose(...)`` call in a code cell."""
    try:
        tree = ast.parse(code.replace("%matplotlib inline", ""))
    except SyntaxError:
        return []
    out = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "prose" and node.args
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            out.append(node.args[0].value)
    return out


def texts(notebook: pathlib.Path, exercise: bool = False) -> list[str]:
    """The prose of a notebook: markdown cells and prose templates (for a master, its prompts and discussions)."""
    nb = json.loads(notebook.read_text())
    out = []
    for cell in nb["cells"]:
        tags = cell.get("metadata", {}).get("tags", [])
        if exercise and "exercises-only" in tags:
            out.append(_source(cell))
        elif cell["cell_type"] == "markdown":
            out.append(_source(cell))
        elif cell["cell_type"] == "code":
            out.extend(prose_templates(_source(cell)))
    return out


def typed_numbers(text: str) -> list[str]:
    """The numbers typed into a piece of prose, as written, after what is not prose and every name."""
    text = PLACEHOLDER.sub(" ", text)
    for pattern in NOT_PROSE:
        text = pattern.sub(" ", text)
    text = NAMES.sub(" ", text)
    found = []
    for match in NUMBER.finditer(text):
        token = match.group(0).lstrip("+-−")
        after = text[match.end():match.end() + 1]
        found.append(token + ("%" if after == "%" else ""))
    return found


def quoted_numbers(notebook: pathlib.Path) -> list[tuple[float, int]]:
    """Every number on a check line that quotes a source: (value, decimals printed)."""
    nb = json.loads(notebook.read_text())
    out = []
    for cell in nb["cells"]:
        for o in cell.get("outputs", []):
            for line in "".join(o.get("text", "")).splitlines():
                if "quoted from" not in line:
                    continue
                for token in NUMBER.findall(line):
                    token = token.lstrip("+-−").replace(",", "")
                    decimals = len(token.split(".")[1]) if "." in token else 0
                    out.append((float(token), decimals))
    return out


def is_quoted(token: str, quoted: list[tuple[float, int]]) -> bool:
    x = float(token.rstrip("%").replace(",", ""))
    return any(abs(x - q) <= 0.5 * 10 ** -d + 1e-12 for q, d in quoted)


def data_values() -> set[float]:
    """Every number of the data file (configurations and figures, each quoted from its source)."""
    from clustermath.validation import load_measurements

    frame = load_measurements()
    out = set()
    for column in frame.columns:
        values = frame[column]
        if values.dtype.kind in "if":
            out.update(float(v) for v in values.dropna())
    return out


def offending(prose: list[str], quoted, allowed: dict[str, str]) -> list[str]:
    data = data_values()
    bad = []
    for text in prose:
        for token in typed_numbers(text):
            if token in allowed or token.rstrip("%") in allowed or token in CHECK_VALUES:
                continue
            if is_quoted(token, quoted):
                continue
            if not token.endswith("%") and float(token.replace(",", "")) in data:
                continue
            bad.append(f"{token!r} in: …{text[:80]!r}")
    return bad


def test_the_scan_catches_a_typed_model_number():
    assert typed_numbers("Llama 3's row is predicted 20% low (Table 4, 2024; TP 8, 405B)") == ["20%"]
    assert typed_numbers("a bubble of {{share}} of the step, $(p-1)/(vm)$, `ms24-t2-12`") == []
    assert typed_numbers("errors from −3.8% to +13.9%") == ["3.8%", "13.9%"]
    assert typed_numbers("GPT-3 on 16-bit H100, 1,024-GPU jobs") == []
    assert prose_templates('x = 1\nprose("""a {{b}} c 7%""", b="2")') == ["a {{b}} c 7%"]
    assert is_quoted("232.54", [(232.5, 1)]) and not is_quoted("233", [(232.5, 1)])


@pytest.mark.parametrize("chapter", sorted(CHAPTERS))
def test_no_typed_model_number_in_the_chapter(chapter):
    path = ROOT / "notebooks" / f"{chapter}.ipynb"
    prose = texts(path)
    assert sum(len(PLACEHOLDER.findall(t)) for t in prose) > 100, "the chapter renders its numbers"
    assert offending(prose, quoted_numbers(path), ALLOWED[chapter]) == []


@pytest.mark.parametrize("chapter, master", sorted(CHAPTERS.items()))
def test_no_typed_model_number_in_the_exercises(chapter, master):
    quoted = quoted_numbers(ROOT / "notebooks" / f"{chapter}.ipynb")
    prose = texts(ROOT / "solutions" / f"{master}.ipynb", exercise=True)
    assert offending(prose, quoted, ALLOWED[master]) == []


@pytest.mark.parametrize("token", sorted(CHECK_VALUES))
def test_a_check_value_in_a_prompt_is_what_its_formula_gives(token):
    value = CHECK_VALUES[token]()
    decimals = len(token.split(".")[1]) if "." in token else 0
    assert f"{value:,.{decimals}f}" == token
