"""Time the explorers on the static pages as a reader on a high-density screen meets them: per explorer,
the bytes of its frames and the time from a key press to its picture, at pixel ratio 2.

Usage: python tools/bench_static.py [--html _build/html] [--moves 6] [--ratio 2] [--json out.json]
                                    [--baseline earlier.json] [--pages notebooks/06_do_the_models_hold]
                                    [--pause 300]                     (part of make bench)

Each chapter page of the built site (``make book``) is served on 127.0.0.1 and opened in Debian's
Chromium at 1366 x 900 CSS px and the given device pixel ratio. For every explorer whose frames were
built, each control in turn takes the keyboard's focus and is moved ``--moves`` times (right, then
back left: every move a new frame), and the time from the key's ``keydown`` to the decoded picture
(``data-cm-shown-at``, set by book/static/static-frames.js) is recorded. The first move of each
control is reported apart (it may wait for that control's pack of pictures); so are the later moves of a
run picker (an explorer framed per run: each of its moves is a run change). Frame bytes are the
explorer's folder on disk (index and packs), raw and gzipped. Issue 41's budget: p95 of the later
moves at most 50 ms. Each key comes right after the picture it waits for (what look-ahead has least
time for); ``--pause`` waits that many ms before each key, as a reader looking at each picture does.
With ``--baseline`` (a JSON this script wrote before) each explorer's earlier figures are printed
beside today's.

A report, not a test: tests/browser/test_frames_latency.py only guards the median (under 150 ms) in make test.
"""
from __future__ import annotations

import argparse
import gzip
import json
import statistics
import sys
from pathlib import Path
from urllib.parse import unquote

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests" / "browser"))
import browsing  # noqa: E402
from test_frames import EXPLORERS_JS, FOCUS_JS, KEY_CLOCK, SPEC_JS, key_for, wait_ready  # noqa: E402

BUDGET_P95_MS = 50.0

STATE_JS = "(k) => document.querySelector('.cm-frames-' + k).__cmEngine.state()"
SHOWN_AT_JS = "(k) => Number(document.querySelector('.cm-frames-' + k).getAttribute('data-cm-shown-at') || 0)"
BASE_JS = "(k) => document.querySelector('.cm-frames-' + k).__cmEngine.base"
BY_JS = "(k) => document.querySelector('.cm-frames-' + k).__cmEngine.by"


def p95(values: list[float]) -> float:
    return sorted(values)[int(0.95 * (len(values) - 1))] if values else float("nan")


def folder_bytes(folder: Path) -> tuple[int, int]:
    files = [p for p in folder.iterdir() if p.is_file()]
    return (sum(p.stat().st_size for p in files), sum(len(gzip.compress(p.read_bytes(), 6)) for p in files))


def bench_page(context, base: str, html: Path, rel: str, moves: int, pause: float = 0) -> list[dict]:
    page, _ = browsing.open_page(context, base, rel)
    page.evaluate(KEY_CLOCK)
    out = []
    for explorer in page.evaluate(EXPLORERS_JS):
        key, first, later, picker = explorer["key"], [], [], []
        for i in range(explorer["controls"]):
            if not page.evaluate(FOCUS_JS, [key, i]):
                continue
            wait_ready(page, key)
            spec = page.evaluate(SPEC_JS, [key, i])
            if spec.get("disabled") or spec["count"] < 2:
                continue
            for m in range(moves):
                index = page.evaluate(STATE_JS, key)[i]
                # right while it can (left on the way back), so every press moves the control
                press = key_for(spec["kind"], index if m < moves // 2 else spec["count"] - 1, spec["count"])
                if pause:
                    page.wait_for_timeout(pause)
                before = page.evaluate(SHOWN_AT_JS, key)
                page.keyboard.press(press)
                try:
                    page.wait_for_function(f"([k, t]) => ({SHOWN_AT_JS})(k) > t", arg=[key, before], timeout=5000)
                except Exception:  # noqa: BLE001 - the control was at its end: no new frame
                    continue
                ms = page.evaluate(SHOWN_AT_JS, key) - page.evaluate("() => window.__cmKeyAt")
                (later if m else first).append(ms)
                if m and i == page.evaluate(BY_JS, key):
                    picker.append(ms)
        folder = html / "_frames" / unquote(page.evaluate(BASE_JS, key).split("/_frames/", 1)[1])
        raw, gz = folder_bytes(folder)
        out.append({"page": rel, "key": key, "title": explorer["title"], "raw": raw, "gz": gz,
                    "first": first, "later": later, **({"picker": picker} if picker else {})})
    page.close()
    return out


def report(results: list[dict], baseline: dict[str, dict]) -> str:
    lines = [f"{'explorer':52} {'frames kB':>9} {'gz kB':>7} {'moves':>5} {'median':>7} {'p95':>6} {'first':>6}"
             + ("   before: median / p95 ms" if baseline else "")]
    for r in results:
        name = f"{r['page'].split('/')[-1][:2]} {r['title']}"[:52]
        later = r["later"]
        row = (f"{name:52} {r['raw'] / 1e3:>9.0f} {r['gz'] / 1e3:>7.0f} {len(later):>5} "
               f"{statistics.median(later) if later else float('nan'):>7.1f} {p95(later):>6.1f} "
               f"{statistics.median(r['first']) if r['first'] else float('nan'):>6.1f}")
        old = baseline.get(r["key"])
        if old and old["later"]:
            row += f"   {statistics.median(old['later']):.1f} / {p95(old['later']):.1f}"
        lines.append(row + (" OVER" if later and p95(later) > BUDGET_P95_MS else ""))
        if r.get("picker"):  # frames per run: the run picker's later moves (each a run change) apart
            picker, old_picker = r["picker"], (old or {}).get("picker")
            lines.append(f"{'   of which the run picker':52} {'':>9} {'':>7} {len(picker):>5} "
                         f"{statistics.median(picker):>7.1f} {p95(picker):>6.1f} {'':>6}"
                         + (f"   {statistics.median(old_picker):.1f} / {p95(old_picker):.1f}" if old_picker else ""))
    every = [ms for r in results for ms in r["later"]]
    if every:
        lines.append(f"all explorers: {len(every)} moves, median {statistics.median(every):.1f} ms, "
                     f"p95 {p95(every):.1f} ms (budget {BUDGET_P95_MS:.0f} ms at p95); "
                     f"frames {sum(r['raw'] for r in results) / 1e6:.1f} MB, "
                     f"{sum(r['gz'] for r in results) / 1e6:.1f} MB gzipped")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--html", type=Path, default=browsing.HTML_DIR)
    ap.add_argument("--moves", type=int, default=6)
    ap.add_argument("--ratio", type=float, default=2.0)
    ap.add_argument("--pause", type=float, default=0, help="ms to wait before each key (a reader's pace)")
    ap.add_argument("--pages", nargs="*", help="chapters (no suffix); default: every notebooks/ page")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--baseline", type=Path)
    args = ap.parse_args(argv)
    html = args.html.resolve()
    if not (html / "index.html").is_file():
        print(f"no built book at {html}: run `make book` first")
        return 2
    pages = [p + ".html" for p in args.pages] if args.pages else \
        [p for p in browsing.toc_pages() if p.startswith("notebooks/")]
    baseline = {r["key"]: r for r in json.loads(args.baseline.read_text())} if args.baseline else {}
    results: list[dict] = []
    with browsing.serve(html) as base, browsing.chromium() as browser:
        w, h = browsing.WIDTHS["desktop"]
        context = browser.new_context(viewport={"width": w, "height": h}, device_scale_factor=args.ratio)
        for rel in pages:
            results += bench_page(context, base, html, rel, args.moves, args.pause)
        context.close()
    print(f"explorers on the static pages at pixel ratio {args.ratio:g}: key press to picture, ms"
          + (f" (each key {args.pause:g} ms after the last picture)" if args.pause else ""))
    print(report(results, baseline))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
