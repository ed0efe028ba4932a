"""Weigh the built book as a reader's browser loads it: per page, the first load's bytes (raw and
gzipped) and requests; per explorer, the requests and bytes of its first touch and first move.

Usage: python tools/page_weight.py [--html _build/html] [--pages notebooks/01_peak_is_bought ...]
                                   [--no-touch] [--json weight.json]

Each page is opened in a fresh browser context (an empty cache) of Debian's Chromium at 1366 x 900
(CSS px), served by ``http.server`` on 127.0.0.1, and left until the network is idle (500 ms with no
request in flight) without scrolling: that is the *first load*. Bytes are the responses' bodies;
"gzipped" is what a server compressing with gzip (level 6) would send, counting images and fonts
(already compressed) at their own size. Then, for every explorer whose frames were built
(``.cm-frames``), its first control takes the keyboard's focus (the *first touch*: the frames' code
and index, and whatever they fetch) and moves one step (the *first move*), each until the network is
idle again. Issue 41's budgets: a chapter's first load at most 1.5 MB gzipped and 30 requests; an
explorer's first touch and first move at most 10 requests.

A report, not a test: tests/browser/test_pages.py asserts the budgets on every page it visits.
"""
from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests" / "browser"))
import browsing  # noqa: E402

BUDGET_BYTES_GZ = 1_500_000
BUDGET_REQUESTS = 30
BUDGET_TOUCH = 10
COMPRESSED = ("image/png", "image/jpeg", "image/webp", "image/gif", "font/woff2", "font/woff",
              "application/zip", "application/font-woff2")


def gz_size(body: bytes, content_type: str) -> int:
    """What a gzip-compressing server sends for this body (bytes)."""
    if content_type.split(";")[0].strip() in COMPRESSED:
        return len(body)
    return min(len(body), len(gzip.compress(body, 6)))


class Meter:
    """Every http(s) response a page receives, bodies weighed, in windows the caller opens."""

    def __init__(self, page) -> None:
        self.page = page
        self.responses: list = []
        self.requests: list[str] = []
        page.on("request", lambda r: self.requests.append(r.url) if r.url.startswith("http") else None)
        page.on("response", lambda r: self.responses.append(r) if r.url.startswith("http") else None)
        self.mark = (0, 0)

    def window(self) -> dict:
        """Requests and bytes since the last window (after the network is idle)."""
        try:
            self.page.wait_for_load_state("networkidle", timeout=30_000)
        except Exception:  # noqa: BLE001 - a page that never idles is reported by its numbers
            pass
        self.page.wait_for_timeout(600)
        self.page.wait_for_load_state("networkidle", timeout=30_000)
        r0, q0 = self.mark
        responses, requests = self.responses[r0:], self.requests[q0:]
        self.mark = (len(self.responses), len(self.requests))
        raw = gz = 0
        largest = []
        for resp in responses:
            try:
                body = resp.body()
            except Exception:  # noqa: BLE001 - a redirect or aborted body
                continue
            size = gz_size(body, resp.headers.get("content-type", ""))
            raw += len(body)
            gz += size
            largest.append((size, resp.url.rsplit("/", 1)[-1].split("?")[0]))
        largest.sort(reverse=True)
        return {"requests": len(requests), "raw": raw, "gz": gz, "largest": largest[:4]}


EXPLORERS_JS = """() => [...document.querySelectorAll('.jupyter-widgets.cm-frames')].map(root => {
  const key = [...root.classList].find(c => c.startsWith('cm-frames-') && c !== 'cm-frames-table'
                                            && c !== 'cm-frames-picture').slice('cm-frames-'.length);
  return {key, title: (root.querySelector('.widget-html b') || root).textContent.trim().slice(0, 50)};
})"""

FOCUS_JS = """(key) => {
  const root = document.querySelector('.cm-frames-' + key);
  const el = root.querySelector('.cm-control-0');
  if (!el) return null;
  const target = el.querySelector('.noUi-handle') || el.querySelector('input, select') || el;
  target.scrollIntoView({block: 'center'});
  target.focus();
  return el.querySelector('.noUi-handle') ? 'ArrowRight' : (el.querySelector('select') ? 'ArrowDown' : 'Space');
}"""


def weigh_page(browser, base: str, rel: str, touch: bool) -> dict:
    context = browsing.new_context(browser)
    page = context.new_page()
    page.route("**/*", lambda r: r.continue_() if browsing.is_local(r.request.url) else r.abort())
    meter = Meter(page)
    page.goto(base + rel, wait_until="load")
    out = {"page": rel, "first": meter.window(), "explorers": []}
    if touch:
        # the rest of the page as a reader scrolling to its explorers gets it (lazy parts, if any)
        page.evaluate("() => window.scrollTo(0, document.body.scrollHeight)")
        browsing.settle(page, browsing.Visit(rel, "desktop"))
        out["rest"] = meter.window()
        for ex in page.evaluate(EXPLORERS_JS):
            key = page.evaluate(FOCUS_JS, ex["key"])
            if key is None:
                continue
            t = meter.window()
            page.keyboard.press(key)
            m = meter.window()
            out["explorers"].append({"key": ex["key"], "title": ex["title"], "touch": t, "move": m})
    context.close()
    return out


def mb(n: int) -> str:
    return f"{n / 1e6:.2f}"


def report(results: list[dict]) -> str:
    lines = [f"{'page':44} {'first load: MB':>14} {'gz MB':>6} {'req':>4}   largest (gz)"]
    for r in results:
        f = r["first"]
        flag = " OVER" if r["page"].startswith("notebooks/") and (
            f["gz"] > BUDGET_BYTES_GZ or f["requests"] > BUDGET_REQUESTS) else ""
        big = ", ".join(f"{n} {s / 1e3:.0f} kB" for s, n in f["largest"][:3])
        lines.append(f"{r['page']:44} {mb(f['raw']):>14} {mb(f['gz']):>6} {f['requests']:>4}{flag}   {big}")
    touched = [(r["page"], e) for r in results for e in r["explorers"]]
    if touched:
        lines.append("")
        lines.append(f"{'explorer':60} {'touch req':>9} {'kB':>7} {'move req':>8} {'kB':>7}")
        for page, e in touched:
            name = f"{page.split('/')[-1][:2]} {e['title']}"[:60]
            flag = " OVER" if max(e["touch"]["requests"], e["move"]["requests"]) > BUDGET_TOUCH else ""
            lines.append(f"{name:60} {e['touch']['requests']:>9} {e['touch']['raw'] / 1e3:>7.0f} "
                         f"{e['move']['requests']:>8} {e['move']['raw'] / 1e3:>7.0f}{flag}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--html", type=Path, default=browsing.HTML_DIR)
    ap.add_argument("--pages", nargs="*", help="documents (no suffix); default: the table of contents")
    ap.add_argument("--no-touch", action="store_true", help="first loads only")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    pages = [p + ".html" for p in args.pages] if args.pages else browsing.toc_pages()
    results = []
    with browsing.serve(args.html.resolve()) as base, browsing.chromium() as browser:
        for rel in pages:
            results.append(weigh_page(browser, base, rel, not args.no_touch))
            print(report(results[-1:]).splitlines()[1], flush=True)
    print(report(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
