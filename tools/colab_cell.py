#!/usr/bin/env python3
"""Give every chapter notebook a first cell that installs clustermath where it is
missing (Colab opens a chapter straight from the repository and does not read
requirements.txt), from the repository URL in _config.yml.

Usage: python tools/colab_cell.py [--check] [notebooks/NN_x.ipynb ...]
  (default: every chapter of _toc.yml). --check changes nothing and exits 1 when a
  notebook lacks the current cell. After writing, run `make refresh`.

The cell is tagged `remove-cell` (the HTML book does not show it) and prints
nothing where clustermath is installed, so nbval's comparison is unchanged.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tools"))
from repository_url import install_command  # noqa: E402

MARK = "# Colab: install the book's helper package"


def repository_url() -> str:
    import yaml

    return yaml.safe_load((REPO / "_config.yml").read_text(encoding="utf-8"))["repository"]["url"]


def cell_source(url: str) -> str:
    return "\n".join([
        f"{MARK} (clustermath) when it is missing.",
        "try:",
        "    import clustermath  # noqa: F401",
        "except ModuleNotFoundError:",
        f"    %{install_command(url)} --quiet",
        "    try:  # Colab renders ipywidgets 8 with its custom widget manager",
        "        from google.colab import output",
        "        output.enable_custom_widget_manager()",
        "    except ImportError:",
        "        pass",
    ])


def chapters() -> list[Path]:
    sys.path.insert(0, str(REPO / "tests" / "browser"))
    import browsing

    return [REPO / f"{f}.ipynb" for f in browsing.toc_files() if f.startswith("notebooks/")]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("notebooks", nargs="*", type=Path)
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    source = cell_source(repository_url())
    stale = []
    for path in args.notebooks or chapters():
        nb = json.loads(path.read_text(encoding="utf-8"))
        cells = nb["cells"]
        first = next((i for i, c in enumerate(cells) if c["cell_type"] == "code"), None)
        has = first is not None and "".join(cells[first]["source"]).startswith(MARK)
        if has and "".join(cells[first]["source"]) == source:
            continue
        stale.append(path)
        if args.check:
            continue
        cell = {
            "cell_type": "code",
            "execution_count": None,
            "id": "colab-install",
            "metadata": {"tags": ["remove-cell"]},
            "outputs": [],
            "source": source.splitlines(keepends=True),
        }
        if has:
            cells[first] = cell
        else:
            cells.insert(0, cell)
        path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote the install cell into {path}")
    if args.check and stale:
        print("no current Colab install cell in: " + ", ".join(str(p) for p in stale))
        print("run `python tools/colab_cell.py` and then `make refresh`")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
