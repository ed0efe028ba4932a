#!/usr/bin/env python3
"""Write a full-page screenshot of every page of the table of contents, at a
laptop's 1366x900 and a phone's 390x844, so a reviewer can look at every page
without opening a browser (`make screenshots`).

Usage: python tools/screenshots.py [--html _build/html] [--out _build/screenshots]
Writes <out>/desktop/<page>.png and <out>/phone/<page>.png (page path with / as __).
Uses the browser checks' helpers (tests/browser/browsing.py): Debian's Chromium
(/usr/bin/chromium or CHROMIUM), the site served on 127.0.0.1, no internet.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--html", type=Path, default=REPO / "_build" / "html")
    ap.add_argument("--out", type=Path, default=REPO / "_build" / "screenshots")
    args = ap.parse_args()
    os.environ["BOOK_HTML_DIR"] = str(args.html.resolve())
    sys.path.insert(0, str(REPO / "tests" / "browser"))
    import browsing

    if not (browsing.HTML_DIR / "index.html").is_file():
        print(f"no built book at {browsing.HTML_DIR}: run `make book` first", file=sys.stderr)
        return 1
    start = time.perf_counter()
    pages = browsing.toc_pages()
    with browsing.serve(browsing.HTML_DIR) as base, browsing.chromium() as browser:
        context = browsing.new_context(browser)
        for rel in pages:
            browsing.visit_page(context, base, rel, screenshots=args.out)
            print(f"  {rel}")
        context.close()
    n = len(list(args.out.rglob("*.png")))
    print(f"{n} screenshots of {len(pages)} pages in {args.out} ({time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
