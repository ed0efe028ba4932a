"""One spelling per unit, everywhere a reader looks (issue 23, item 4).

The notation page fixes the spellings: bits per second are Gbps and Tbps,
bytes per second are GB/s and TB/s. A second spelling of the same unit ("Gb/s"
in a table header under a caption that says "800 Gbps") makes a reader wonder
whether two different things are meant, and it crept back into chapter 1's
table headers, sliders and fabric explorer, the glossary and chapters 4-5.

This test reads the book's pages (``book/``, the README files), every
notebook in full (sources, stored outputs and widget state: the text a reader
sees), and the package's sources (labels, docstrings, messages), and fails on
every other spelling, naming the file and line. Chapters 4 and 5 belong to
their own owners; their cases fail with a message that says so until they
are fixed.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

import clustermath

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = Path(clustermath.__file__).parent

WRONG: dict[str, str] = {
    r"\b([KMGTP])b/s\b": r"\1bps",  # Gb/s -> Gbps
    r"\b([KMGTP])bits?/s(?:ec)?\b": r"\1bps",  # Gbit/s, Gbits/s -> Gbps
    r"\b([KMGTP])b/sec\b": r"\1bps",
    r"\b([KMGTP])Bps\b": r"\1B/s",  # GBps -> GB/s
    r"\b([KMGTP])B/sec\b": r"\1B/s",
    r"\b([KMGTP])bytes?/s\b": r"\1B/s",
}
"""Each other spelling and the book's one spelling of the same unit."""

PATTERN = re.compile("|".join(f"(?:{p})" for p in WRONG))


def spelled_otherwise(text: str) -> list[tuple[int, str, str]]:
    """(line number, the other spelling, the book's spelling) for every unit spelled another way."""
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        for m in PATTERN.finditer(line):
            word = m.group(0)
            if re.search(rf"\bnever\b[^.]*{re.escape(word)}", line):
                continue  # the notation page naming the spelling it forbids
            right = next(re.sub(p, r, word) for p, r in WRONG.items() if re.fullmatch(p, word))
            found.append((number, word, right))
    return found


def _files() -> list[Path]:
    pages = [*ROOT.glob("*.md"), *(ROOT / "book").rglob("*.md"), *(ROOT / "solutions").glob("*.md")]
    notebooks = [*(ROOT / "notebooks").glob("*.ipynb"), *(ROOT / "exercises").glob("*.ipynb"),
                 *(ROOT / "solutions").glob("*.ipynb"), *(ROOT / "book" / "solutions").glob("*.ipynb")]
    code = [p for p in PACKAGE.rglob("*.py")]
    return sorted(p for p in pages + notebooks + code if "_build" not in p.parts)


EARLY = ("01_", "02_", "03_", "ch01", "ch02", "ch03", "/peak/", "/reliability/", "/placement/", "views/peak",
         "views/reliability", "views/placement", "views/base", "feedback/peak", "feedback/reliability",
         "feedback/placement", "book/", "README", "ARCHITECTURE")


def _owner_note(path: Path) -> str:
    """Who fixes a finding: chapters 1-3 were cleaned under issue 23; other chapters by their owners."""
    name = str(path.relative_to(ROOT))
    if path.name == "labels.py":
        return " (the labels left are chapters 4 and 5's, fixed by their owners under issue 23)"
    later = any(k in name for k in ("04_", "05_", "06_", "ch04", "ch05", "ch06"))
    if later or not any(k in name for k in EARLY):
        return " (not chapters 1-3: fixed by the chapter's owner, issue 23)"
    return ""


@pytest.mark.parametrize("path", _files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_a_unit_has_one_spelling(path):
    found = spelled_otherwise(path.read_text(errors="ignore"))
    assert not found, (
        f"{path.relative_to(ROOT)}{_owner_note(path)}: {len(found)} unit(s) spelled another way; "
        f"the notation page fixes one spelling each:\n  "
        + "\n  ".join(f"line {n}: {wrong!r} should be {right!r}" for n, wrong, right in found))


@pytest.mark.parametrize("text, expected", [
    ("a link rate (Gb/s)", [(1, "Gb/s", "Gbps")]),
    ("a 12.8 Tb/s chip", [(1, "Tb/s", "Tbps")]),
    ("NVLink at 900 GBps", [(1, "GBps", "GB/s")]),
    ("400 Gbit/s NICs", [(1, "Gbit/s", "Gbps")]),
    ("800 Gbps links, 900 GB/s NVLink, 12.8 Tbps, fabric_gbps, 3.2 TB/s", []),
    ("Gbps and Tbps (never Gb/s or Tb/s); GB/s (never GBps).", []),
])
def test_the_other_spellings_are_found(text, expected):
    assert spelled_otherwise(text) == expected
