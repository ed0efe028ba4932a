#!/usr/bin/env python3
"""Drive every explorer of every chapter in a live kernel (`make live-kernel`).

Each chapter notebook is served by Voila on 127.0.0.1 (from the separate
environment .venv-browser, so the book's .venv stays fast) and opened in
Debian's headless Chromium. For every explorer (a widget view with a picture
and controls) the script focuses its first slider (or checkbox, or drop-down)
and moves it with the keyboard, alternately one step up and one step down,
and checks that the explorer's table text and its picture both change. It
measures, in the page, the time from the key press to the new picture having
loaded (input-to-picture latency) and reports its median and p95 per explorer.

Usage: python tools/live_kernel.py [--voila .venv-browser/bin/voila] [--moves 10]
           [--json _build/live_kernel.json] [notebooks/NN_x.ipynb ...]
Exit status 1 when an explorer does not respond (or a chapter fails to run).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests" / "browser"))

CONTROL = (
    ".widget-slider, .widget-checkbox, .widget-dropdown, .widget-toggle-buttons, "
    ".widget-radio, .widget-button, .widget-toggle-button, .widget-text, .widget-select"
)

# Find explorers, tag each with data-live-explorer=i and its first movable control.
TAG_JS = """
(CONTROL) => {
  const roots = [...document.querySelectorAll('.jp-OutputArea-output, .widget-subarea')]
    .filter(o => !o.parentElement.closest('.jp-OutputArea-output, .widget-subarea'));
  const found = [];
  for (const root of roots) {
    const img = [...root.querySelectorAll('img')].sort((a, b) =>
      b.getBoundingClientRect().width * b.getBoundingClientRect().height
      - a.getBoundingClientRect().width * a.getBoundingClientRect().height)[0];
    if (!img || !root.querySelector(CONTROL)) continue;
    const i = found.length;
    root.setAttribute('data-live-explorer', i);
    img.setAttribute('data-live-picture', i);
    let handle = root.querySelector('.widget-slider .noUi-handle');
    let kind = 'slider';
    if (!handle) { handle = root.querySelector('.widget-checkbox input'); kind = 'checkbox'; }
    if (!handle) { handle = root.querySelector('.widget-dropdown select'); kind = 'dropdown'; }
    if (handle) handle.setAttribute('data-live-control', i);
    const label = handle && handle.closest(CONTROL)
      ? (handle.closest(CONTROL).querySelector('.widget-label') || {}).textContent || '' : '';
    const heading = root.querySelector('.widget-html, h1, h2, h3, h4, b, strong');
    found.push({index: i, kind: handle ? kind : 'none', label: label.trim(),
                title: (heading ? heading.textContent : root.textContent).replace(/\\s+/g, ' ').trim().slice(0, 60)});
  }
  return found;
}
"""

STATE_JS = """
(i) => {
  const root = document.querySelector(`[data-live-explorer="${i}"]`);
  const img = document.querySelector(`[data-live-picture="${i}"]`);
  const texts = [...root.querySelectorAll('.widget-html, table, .widget-label, .widget-readout')]
    .map(e => e.textContent).join(' | ');
  return {table: texts, picture: img ? img.src : ''};
}
"""

# Arm a timer: the next time the picture's src changes and the new image has loaded,
# record the time since the key press (performance.now() stamps in the page).
ARM_JS = """
(i) => {
  const img = document.querySelector(`[data-live-picture="${i}"]`);
  window.__live = {pressed: null, done: null, src: img.src};
  const control = document.querySelector(`[data-live-control="${i}"]`);
  const stamp = () => { if (window.__live.pressed === null) window.__live.pressed = performance.now(); };
  control.addEventListener('keydown', stamp, {once: true, capture: true});
  const finish = () => { if (window.__live.done === null && img.src !== window.__live.src) {
      window.__live.done = performance.now(); } };
  const obs = new MutationObserver(() => {
    if (img.src === window.__live.src) return;
    obs.disconnect();
    if (img.complete && img.naturalWidth) finish();
    else img.addEventListener('load', finish, {once: true});
  });
  obs.observe(img, {attributes: true, attributeFilter: ['src']});
  return true;
}
"""


def free_port() -> int:
    rng = random.Random()
    for _ in range(50):
        port = rng.randint(8100, 8999)
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) != 0:
                return port
    raise RuntimeError("no free port in 8100-8999")


def start_voila(voila: str, port: int) -> subprocess.Popen:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO / "lib"), env.get("PYTHONPATH")) if p)
    env.setdefault("MPLBACKEND", "Agg")
    cmd = [
        voila, "--no-browser", f"--port={port}", "--Voila.ip=127.0.0.1",
        "--Voila.root_dir=" + str(REPO),
        "--VoilaConfiguration.file_allowlist=['.*']",
        "--MappingKernelManager.cull_idle_timeout=0",
    ]
    log = open(REPO / "_build" / "voila.log", "w") if (REPO / "_build").is_dir() else subprocess.DEVNULL
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.time() + 60
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"voila exited with {proc.returncode} (see _build/voila.log)")
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2)
            return proc
        except OSError:
            time.sleep(0.5)
    proc.terminate()
    raise RuntimeError("voila did not start within 60 s")


def expected_views(notebook: str) -> int:
    """How many widget views the committed notebook shows (one per explorer cell)."""
    nb = json.loads((REPO / notebook).read_text(encoding="utf-8"))
    return sum(
        any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in c.get("outputs", []))
        for c in nb["cells"]
        if c["cell_type"] == "code"
    )


def wait_rendered(page, views: int, timeout_s: float) -> int:
    """Wait until the chapter has run: every widget view rendered, then 2 s without change."""
    deadline = time.time() + timeout_s
    last, stable_since = -1, time.time()
    while time.time() < deadline:
        n = page.evaluate(
            "() => document.querySelectorAll('.jupyter-widgets.widget-container, .widget-slider').length"
        )
        done = page.evaluate(
            "(views) => [...document.querySelectorAll('.jp-OutputArea-output')].filter(o => "
            "o.querySelector('.jupyter-widgets')).length >= views", views
        )
        if n != last:
            last, stable_since = n, time.time()
        elif done and time.time() - stable_since > 2:
            return n
        time.sleep(0.5)
    raise TimeoutError(f"the chapter did not finish rendering in {timeout_s:.0f} s")


def drive_chapter(context, base: str, notebook: str, moves: int, timeout_s: float) -> list[dict]:
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    t0 = time.perf_counter()
    response = page.goto(f"{base}voila/render/{notebook}", wait_until="domcontentloaded", timeout=timeout_s * 1000)
    if response is None or response.status >= 400:
        status = response.status if response is not None else "no response"
        raise RuntimeError(f"Voila answered HTTP {status} for {notebook} (see _build/voila.log)")
    wait_rendered(page, expected_views(notebook), timeout_s)
    load_s = time.perf_counter() - t0
    explorers = page.evaluate(TAG_JS, CONTROL)
    results = []
    for e in explorers:
        i = e["index"]
        r = {"chapter": notebook, **e, "load_s": load_s, "latencies_ms": [], "problems": []}
        results.append(r)
        if e["kind"] == "none":
            r["problems"].append("no slider, checkbox or drop-down to move")
            continue
        control = page.locator(f'[data-live-control="{i}"]')
        control.scroll_into_view_if_needed()
        before = page.evaluate(STATE_JS, i)
        changed_table = changed_picture = False
        for k in range(moves):
            key = {"slider": ("ArrowRight", "ArrowLeft"), "checkbox": ("Space", "Space"),
                   "dropdown": ("ArrowDown", "ArrowUp")}[e["kind"]][k % 2]
            page.evaluate(ARM_JS, i)
            control.focus()
            control.press(key)
            try:
                page.wait_for_function("() => window.__live.done !== null", timeout=10_000, polling=5)
                live = page.evaluate("() => window.__live")
                r["latencies_ms"].append(live["done"] - live["pressed"])
            except Exception:
                r["problems"].append(f"move {k + 1} ({key}): the picture did not change within 10 s")
            if k == 0:
                after = page.evaluate(STATE_JS, i)
                changed_table = after["table"] != before["table"]
                changed_picture = after["picture"] != before["picture"]
            if r["problems"]:
                break
        if not changed_table:
            r["problems"].append("its table did not change")
        if not changed_picture and not any("picture" in p for p in r["problems"]):
            r["problems"].append("its picture did not change")
    if errors:
        results.append({"chapter": notebook, "index": -1, "kind": "page", "title": "page errors",
                        "label": "", "load_s": load_s, "latencies_ms": [], "problems": errors[:5]})
    page.close()
    return results


def percentile(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    k = (len(xs) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def report(results: list[dict]) -> str:
    lines = [
        "Input-to-picture latency in a live kernel (Voila + Chromium, key press to new picture loaded)",
        f"{'chapter':34} {'explorer':44} {'moved':22} {'median ms':>9} {'p95 ms':>7} {'n':>3}  result",
    ]
    for r in results:
        lat = r["latencies_ms"]
        med = f"{statistics.median(lat):9.0f}" if lat else f"{'-':>9}"
        p95 = f"{percentile(lat, 0.95):7.0f}" if lat else f"{'-':>7}"
        moved = f"{r['kind']} {r['label']}"[:22]
        verdict = "ok" if not r["problems"] else "; ".join(r["problems"])
        lines.append(f"{Path(r['chapter']).stem[:34]:34} {r['title'][:44]:44} {moved:22} {med} {p95} {len(lat):3}  {verdict}")
    return "\n".join(lines)


def chapters() -> list[str]:
    import browsing

    return [f + ".ipynb" for f in browsing.toc_files() if f.startswith("notebooks/")]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("notebooks", nargs="*", help="default: every chapter of _toc.yml")
    ap.add_argument("--voila", default=str(REPO / ".venv-browser" / "bin" / "voila"))
    ap.add_argument("--moves", type=int, default=10, help="key presses per explorer")
    ap.add_argument("--timeout", type=float, default=240, help="seconds for a chapter to run")
    ap.add_argument("--json", type=Path, default=REPO / "_build" / "live_kernel.json")
    args = ap.parse_args()
    if not Path(args.voila).exists():
        print(f"no voila at {args.voila}: run `make live-kernel` (it creates .venv-browser)", file=sys.stderr)
        return 1
    import browsing

    start = time.perf_counter()
    port = free_port()
    proc = start_voila(args.voila, port)
    results: list[dict] = []
    try:
        with browsing.chromium() as browser:
            context = browser.new_context(viewport={"width": 1366, "height": 900})
            for nb in args.notebooks or chapters():
                try:
                    results += drive_chapter(context, f"http://127.0.0.1:{port}/", nb, args.moves, args.timeout)
                except Exception as exc:
                    results.append({"chapter": nb, "index": -1, "kind": "page", "title": "chapter",
                                    "label": "", "load_s": 0, "latencies_ms": [],
                                    "problems": [f"{type(exc).__name__}: {exc}"]})
            context.close()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
    print(report(results))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(results, indent=1))
    bad = [r for r in results if r["problems"]]
    n = len([r for r in results if r["index"] >= 0])
    print(f"{n} explorers in {len({r['chapter'] for r in results})} chapters, {len(bad)} with problems "
          f"({time.perf_counter() - start:.0f} s)")
    return 1 if bad or not n else 0


if __name__ == "__main__":
    sys.exit(main())
