"""The book is written in its own words: no run of eight words is shared with a source text.

Facts, figures and formulas carry over from the sources in ``shared/seeds/``; sentences do
not. This test reads everything a reader can meet, the chapters, the exercises and their
solutions, the pages under ``book/`` and the words the models and views put on screen
(``lib/``, ``tools/``: their comments and strings), and fails on any run of eight words it
shares with a source.
Runs made mostly of numbers (three or more numeric words) are facts, and runs made
mostly of one- and two-letter words are formulas (``E_WR ≤ 2(N_t − R)P_s^K``); both are
left out, as the developers' stop hook does. Digits are split from letters before words are
counted, because the extracted sources glue a section's number to its title ("13.3Axis (b): ...");
and every piece a reader meets is prose here: headings, captions, alt text and table cells too
(issue 30). The sources live beside the repository, not
in it: where they cannot be found the test says so and skips.
"""
from __future__ import annotations

import io
import json
import os
import re
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
WORD = re.compile(r"[a-z0-9]+(?:['’][a-z]+)?")
LATEX = re.compile(r"\\[A-Za-z]+")  # a TeX command (\frac, \delta) is a formula's symbol, not a word
GLUE = re.compile(r"(?<=[0-9])(?=[a-z])|(?<=[a-z])(?=[0-9])")
RUN = 8
SKIP_DIRS = {".git", ".venv", "venv", "_build", "node_modules", ".ipynb_checkpoints", "tests", ".hypothesis"}
SUFFIXES = {".md", ".ipynb", ".py", ".rst", ".txt", ".yml"}


def seeds_folder() -> Path | None:
    """``$BOOK_SEEDS``, else ``shared/seeds`` beside the repository or above it."""
    candidates = [os.environ.get("BOOK_SEEDS", "")] + [str(p / "shared" / "seeds") for p in ROOT.parents]
    for c in candidates:
        if c and Path(c).is_dir() and any(Path(c).glob("*.txt")):
            return Path(c)
    return None


def runs(text: str) -> set[str]:
    """Every run of eight words, except the numeric ones and the formulas."""
    words = WORD.findall(GLUE.sub(" ", LATEX.sub(" ", text).lower()))
    out = set()
    for i in range(len(words) - RUN + 1):
        run = words[i:i + RUN]
        if sum(w[0].isdigit() for w in run) >= 3:
            continue
        if sum(len(w) <= 2 for w in run) >= 5:
            continue
        out.add(" ".join(run))
    return out


def words_in_code(source: str) -> list[str]:
    """The words a reader meets in code: comments, and strings with a space in them (docstrings,
    labels, captions, messages). Identifiers, and strings that are one identifier (the source's port
    names, ``"act_per_layer_mb"``), are code's vocabulary, not its sentences."""
    out = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.COMMENT or (tok.type == tokenize.STRING and re.search(r"\s", tok.string)):
                out.append(tok.string)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return [source]  # not Python (a cell magic, a fragment): read all of it
    return out


def prose(path: Path) -> list[str]:
    """The pieces of text in a file, each read on its own (a run never spans two strings or cells)."""
    if path.suffix == ".ipynb":
        pieces = []
        for cell in json.loads(path.read_text()).get("cells", []):
            text = "".join(cell.get("source", ""))
            pieces += words_in_code(text) if cell.get("cell_type") == "code" else [text]
        return pieces
    if path.suffix == ".py":
        return words_in_code(path.read_text(errors="ignore"))
    return [path.read_text(errors="ignore")]


def book_files() -> list[Path]:
    return sorted(p for p in ROOT.rglob("*") if p.suffix in SUFFIXES and p.is_file()
                  and not SKIP_DIRS.intersection(p.relative_to(ROOT).parts))


SEEDS = seeds_folder()


def test_code_gives_its_comments_and_sentences_not_its_identifiers():
    code = 'inputs = ("layers", "batch")  # the ports\nmsg = "a whole sentence here"\n'
    assert words_in_code(code) == ["# the ports", '"a whole sentence here"']


def test_runs_ignore_numbers_and_formulas():
    assert runs("one two three four five six seven eight") == {"one two three four five six seven eight"}
    assert runs("the 8 gpus of 72 racks and 16 nodes") == set()
    assert runs("e wr le 2 n t r p") == set()
    assert runs(r"\frac{\delta}{\tau} + \frac{\tau}{2M} \qquad \tau^* = \sqrt{2\delta M}") == set()


def test_digits_are_split_from_letters():
    assert runs("13.3Axis (b): deep buffers or shallow single chips") >= {
        "axis b deep buffers or shallow single chips"}


def copied(files: list[Path], seeds: Path) -> list[str]:
    """Every run of eight words that a file in ``files`` shares with a text in ``seeds``."""
    seed_runs: dict[str, str] = {}
    for seed in sorted(seeds.glob("*.txt")):
        for r in runs(seed.read_text(errors="ignore")):
            seed_runs.setdefault(r, seed.name)
    found = []
    for path in files:
        for r in sorted(set().union(*map(runs, prose(path))) & seed_runs.keys()):
            found.append(f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name}: "
                         f"\"{r}\" (in {seed_runs[r]})")
    return found


def test_a_copied_sentence_is_found_in_prose_and_in_a_docstring(tmp_path):
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    (seeds / "000.txt").write_text("The slowest rank sets the pace of every synchronous step in the job.")
    page, module = tmp_path / "page.md", tmp_path / "model.py"
    page.write_text("As we saw, the slowest rank sets the pace of every synchronous step here.")
    module.write_text('def f():\n    """Note: the slowest rank sets the pace of every synchronous step."""\n')
    found = copied([page, module], seeds)
    assert 'page.md: "the slowest rank sets the pace of every" (in 000.txt)' in found
    assert 'model.py: "slowest rank sets the pace of every synchronous" (in 000.txt)' in found
    assert {f.split(":")[0] for f in found} == {"page.md", "model.py"}


def test_a_copied_heading_caption_alt_text_or_table_cell_is_found(tmp_path):
    """Issue 30: the source glues its section number to the title; a heading, a caption, an image's
    alt text and a table's cell are read like any other prose."""
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    (seeds / "001.txt").write_text(
        "13.3Axis (b): deep buffers or shallow single chips軸 (b)\n"
        "Figure 13.4 plots how the queue at the receiving rack switch grows.\n"
        "| Failure handling | a rack switch failure stops the whole rack of servers |\n")
    heading, caption, alt, cell = (tmp_path / f"{n}.md" for n in ("heading", "caption", "alt", "cell"))
    heading.write_text("## Axis (b): deep buffers or shallow single chips\n\nOur own text.\n")
    caption.write_text("*Figure 3. It plots how the queue at the receiving rack switch grows.*\n")
    alt.write_text("![plots how the queue at the receiving rack switch grows](fig.png)\n")
    cell.write_text("| design | risk |\n|---|---|\n| Meta | a rack switch failure stops the whole rack |\n")
    module = tmp_path / "table.py"
    module.write_text('rows = [("Meta", "a rack switch failure stops the whole rack of servers")]\n')
    found = {f.split(":")[0] for f in copied([heading, caption, alt, cell, module], seeds)}
    assert found == {"heading.md", "caption.md", "alt.md", "cell.md", "table.py"}


@pytest.mark.skipif(SEEDS is None, reason="the source texts (shared/seeds/*.txt beside the repository, "
                                          "or $BOOK_SEEDS) are not on this machine")
def test_no_run_of_eight_words_is_shared_with_a_source():
    found = copied(book_files(), SEEDS)
    assert not found, (f"{len(found)} runs of eight words are copied from the sources; write them in the "
                       "book's own words:\n" + "\n".join(found[:60]))
