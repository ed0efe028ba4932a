"""Chapter 6, "Do the models hold?": published measurements of real training runs, as data.

``load_measurements()`` returns the shipped ``measurements.csv`` as a pandas DataFrame;
``family()``, ``run_config()``, ``cross_checks()`` and ``DISAGREEMENTS`` are described in
:mod:`clustermath.validation.measurements`.
"""
from .measurements import (
    CSV_NAME, DISAGREEMENT_KINDS, FAMILIES, KNOWN_UNITS, LLAMA3_TABLE5, MODEL_INPUTS, PREDICT_RUN_INPUTS,
    Check, Disagreement, assumed_columns, cross_checks, csv_path, disagreements, family,
    load_measurements, printed, run_config,
)

__all__ = [
    "CSV_NAME", "Check", "DISAGREEMENTS", "DISAGREEMENT_KINDS", "Disagreement", "FAMILIES", "KNOWN_UNITS",
    "LLAMA3_TABLE5", "MODEL_INPUTS", "PREDICT_RUN_INPUTS", "assumed_columns", "cross_checks", "csv_path",
    "disagreements", "family", "load_measurements", "printed", "run_config",
]


def __getattr__(name: str):
    if name == "DISAGREEMENTS":
        return disagreements()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
