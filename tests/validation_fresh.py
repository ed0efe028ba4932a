"""Chapter 6's tests compute every cached table anew, inside the test that reads it.

``measurements`` and ``holdout`` cache what they compute (the cross-checks, the
disagreements, the residuals, each throughput row's prediction), and a test that
reads a table built at import time, or by an earlier test, never sees the code
that built it run. Mutation testing makes that concrete: mutmut 3 collects the
test modules once, then runs each mutant in a forked child and runs only the
tests it saw reach the mutated function, so a table computed at import time, or
cached by the first test, is computed by the original code. The chapter-6 test
modules therefore build nothing at import time and call :func:`fresh` before each
test (an autouse fixture), and parametrize ids come from the CSV's text or from
the tests' own tables, never from the functions under test.
"""
from __future__ import annotations

import csv
import io
from importlib import resources

from clustermath.validation import holdout
from clustermath.validation import measurements as m


def fresh() -> None:
    """Drop the caches of the tables computed from the data (not of the data itself, which is read
    by code mutmut does not mutate)."""
    for cached in (m._cross_checks, m.disagreements, holdout._all, holdout.throughput_prediction):
        cached.cache_clear()


def csv_rows() -> list[dict[str, str]]:
    """The CSV's rows as the text it holds, read with the plain csv module (for ids and references)."""
    text = resources.files("clustermath.validation").joinpath("measurements.csv").read_text(encoding="utf-8")
    return list(csv.DictReader(io.StringIO(text, newline="")))
