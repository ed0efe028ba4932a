"""Re-execute notebooks in place, top to bottom, each in a fresh kernel.

Usage: python tools/refresh.py notebooks/*.ipynb

Stored outputs are what nbval compares, so run this (``make refresh``) after
any change to a notebook or to clustermath, and commit the result. Widget state
is stored in the notebook's metadata so the committed copy renders its widgets.
"""
from __future__ import annotations

import os
import pathlib
import sys
import time

import nbformat
from nbclient import NotebookClient
from nbconvert.preprocessors import CoalesceStreamsPreprocessor

os.environ.setdefault("PYTHONHASHSEED", "0")


def refresh(path: pathlib.Path, timeout: int = 600) -> float:
    """Execute one notebook in its own folder and write it back; return seconds taken."""
    nb = nbformat.read(path, as_version=4)
    os.environ["CLUSTERMATH_STABLE_WIDGET_IDS"] = path.as_posix()  # widget ids from the notebook's name and
    # the order they are made in, not random (tools/ipython_kernel_config.py): a refresh changes only what changed
    start = time.perf_counter()
    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
        store_widget_state=True,
        record_timing=False,  # no per-cell timestamps: a refresh changes only what changed
    )
    client.execute()
    # A cell's printed lines reach the client in as many stream outputs as the kernel flushed, which
    # varies from run to run; stored as one (as nbval compares them), a refresh changes only what changed.
    CoalesceStreamsPreprocessor().preprocess(nb, {})
    nbformat.write(nb, path)
    return time.perf_counter() - start


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    for name in argv:
        path = pathlib.Path(name)
        seconds = refresh(path)
        print(f"refreshed {path} in {seconds:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
