#!/usr/bin/env python3
r"""Check, in a headless browser with the network blocked, that the built book's
widgets and math render offline (manual check, not part of `make test`).

For every chapter page with widget views and every page that loads MathJax (or
the pages given with --page), the script loads the page from a local server on
127.0.0.1 (or file:// with --file-url), aborts every request that is not local
(as if there were no internet), waits until every widget view has been
rendered by the vendored require.js + @jupyter-widgets/html-manager
(book/widgets-js/), and then checks the DOM against the widget state stored in
the page: each slider, HTML/Label, button and Image model that a view shows
must appear, and each Image widget must show an <img> whose picture actually
decoded. It then waits for the vendored MathJax 3 (book/mathjax/) to finish
and checks that every formula of the page was typeset (an <mjx-container>, no
<mjx-merror>) and that no raw TeX (`$$`, `\(`, `\[`, `\begin{`) is left in
the page's text. It prints what it found, the blocked requests and the
browser console errors, and exits 1 on failure: any blocked (non-local)
request, failed local request or unknown console error counts as one.

Requirements (keep them out of the book's .venv; no browser download needed):

    apt-get install -y chromium                 # Debian's /usr/bin/chromium
    python3 -m venv /tmp/widgets-check-venv
    /tmp/widgets-check-venv/bin/pip install playwright   # never `playwright install`

Usage (build the book first, e.g. `make book`):

    /tmp/widgets-check-venv/bin/python tools/check_widgets_offline.py _build/html
    ... _build/html --page notebooks/01_peak_is_bought.html --file-url
    ... --chromium /path/to/chrome   (or the CHROMIUM environment variable)
"""

from __future__ import annotations

import argparse
import functools
import http.server
import json
import os
import re
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "browser"))
import browsing  # noqa: E402  (Chromium's flags, shared with the browser checks)
from urllib.parse import urlsplit

REPO = Path(__file__).resolve().parent.parent
STATE_RE = re.compile(
    r'<script type="application/vnd\.jupyter\.widget-state\+json">(.*?)</script>', re.S
)
VIEW_RE = re.compile(
    r'<script type="application/vnd\.jupyter\.widget-view\+json">(.*?)</script>', re.S
)
# Console messages that every page of the book logs, widgets or not (harmless):
# sphinx-thebe 0.3.1 emits its inline config twice; pydata-sphinx-theme (under
# sphinx-book-theme) complains once about its empty default mode; and on widget
# pages html-manager's JSON-schema validator (ajv) warns about its own schema.
KNOWN_CONSOLE = [
    re.compile(r"Identifier 'THEBE_JS_URL' has already been declared"),
    re.compile(r"Got invalid theme mode: \. Resetting to auto\."),
    re.compile(r"^warning: strict mode: use allowUnionTypes to allow union type keyword"),
]
# Local files the widgets and MathJax load (printed, to show where they came from).
WIDGET_ASSET = re.compile(
    r"(require|widgets-paths|embed-amd|mathjax-hub-shim)\.js|/mathjax/|\.(woff2?|ttf|eot)(\?|$)"
)
# Sphinx writes each formula as <span|div class="math notranslate nohighlight">.
MATH_RE = re.compile(r'<(?:span|div) class="math[ "]')
MATHJAX_SCRIPT_RE = re.compile(r'<script[^>]*\ssrc="[^"]*/mathjax/[^"]*"', re.I)
# model_name -> (CSS selector, label) of what the html-manager renders for it.
EXPECT = {
    "IntSliderModel": (".widget-slider", "slider"),
    "FloatSliderModel": (".widget-slider", "slider"),
    "FloatLogSliderModel": (".widget-slider", "slider"),
    "IntRangeSliderModel": (".widget-slider", "slider"),
    "FloatRangeSliderModel": (".widget-slider", "slider"),
    "SelectionSliderModel": (".widget-slider", "slider"),
    "HTMLModel": (".widget-html", "HTML label"),
    "LabelModel": (".widget-label", "label"),
    "ButtonModel": (".widget-button", "button"),
    "ImageModel": (".widget-image", "image"),
}


def widget_pages(html_dir: Path) -> list[Path]:
    return sorted(
        p
        for p in (html_dir / "notebooks").rglob("*.html")
        if "application/vnd.jupyter.widget-view+json" in p.read_text(encoding="utf-8")
    )


def mathjax_pages(html_dir: Path) -> list[Path]:
    """Pages that load MathJax (Sphinx adds it where a page or its toctree has math)."""
    return sorted(
        p
        for p in html_dir.rglob("*.html")
        if "_static" not in p.relative_to(html_dir).parts
        and MATHJAX_SCRIPT_RE.search(p.read_text(encoding="utf-8"))
    )


def expected_models(html: str) -> dict[str, int]:
    """Count, per model_name, the models reachable from the page's views."""
    state = {}
    for m in STATE_RE.finditer(html):
        state.update(json.loads(m.group(1)).get("state", {}))
    todo = [json.loads(m.group(1))["model_id"] for m in VIEW_RE.finditer(html)]
    seen: set[str] = set()
    while todo:
        mid = todo.pop()
        if mid in seen or mid not in state:
            continue
        seen.add(mid)
        refs = re.findall(r"IPY_MODEL_([0-9a-f]+)", json.dumps(state[mid].get("state", {})))
        todo.extend(refs)
    counts: dict[str, int] = {}
    for mid in seen:
        name = state[mid].get("model_name", "?")
        counts[name] = counts.get(name, 0) + 1
    return counts


def serve(html_dir: Path):
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    handler = functools.partial(Quiet, directory=str(html_dir))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def is_local(url: str) -> bool:
    parts = urlsplit(url)
    if parts.scheme in ("file", "data", "blob", "about"):
        return True
    return parts.hostname in ("127.0.0.1", "localhost")


def check_page(context, url: str, html: str, timeout_ms: int) -> list[str]:
    """Return the failures found on one page (and print what was found)."""
    failures: list[str] = []
    console: list[str] = []
    blocked: list[str] = []
    failed: list[str] = []
    assets: list[str] = []
    page = context.new_page()
    page.on(
        "console",
        lambda m: console.append(f"{m.type}: {m.text}") if m.type in ("error", "warning") else None,
    )
    page.on("pageerror", lambda e: console.append(f"pageerror: {e}"))
    page.on(
        "requestfailed",
        lambda r: failed.append(f"{r.url} ({r.failure})") if is_local(r.url) else None,
    )

    page.on(
        "requestfinished",
        lambda r: assets.append(r.url) if is_local(r.url) and WIDGET_ASSET.search(r.url) else None,
    )

    def route(r):
        if is_local(r.request.url):
            r.continue_()
        else:
            blocked.append(r.request.url)
            r.abort("internetdisconnected")

    page.route("**/*", route)
    page.goto(url, wait_until="load")
    # the widget scripts wait until a view comes near (book/_ext/light_pages.py): ask for them now
    page.evaluate("() => window.__cmWidgetsNow && window.__cmWidgetsNow()")
    n_views = len(VIEW_RE.findall(html))
    try:
        # libembed puts each view into a new .widget-subarea before its script.
        page.wait_for_function(
            """n => {
                const subs = document.querySelectorAll('.widget-subarea');
                return subs.length >= n && [...subs].every(s => s.childElementCount > 0);
            }""",
            arg=n_views,
            timeout=timeout_ms,
        )
        # Image widgets: wait until every <img> has decoded (or failed).
        page.wait_for_function(
            "() => [...document.querySelectorAll('.widget-image')].every(i => i.complete)",
            timeout=timeout_ms,
        )
    except Exception as exc:  # playwright TimeoutError
        failures.append(f"widget views did not render within {timeout_ms} ms ({type(exc).__name__})")
    math = check_math(page, html, timeout_ms, failures) if MATHJAX_SCRIPT_RE.search(html) else None
    found = page.evaluate(
        """() => ({
            subareas: document.querySelectorAll('.widget-subarea').length,
            rendered: [...document.querySelectorAll('.widget-subarea')]
                        .filter(s => s.childElementCount > 0).length,
            sliders: [...document.querySelectorAll('.widget-slider')].map(s =>
                ((s.querySelector('.widget-label') || {}).textContent || '') + ' = ' +
                ((s.querySelector('.widget-readout') || {}).textContent || '?')),
            html: [...document.querySelectorAll('.widget-html')].map(h => h.textContent.trim()),
            labels: [...document.querySelectorAll('.widget-label:not(.widget-slider *)')]
                        .map(h => h.textContent.trim()).filter(t => t),
            buttons: [...document.querySelectorAll('.widget-button')].map(b => b.textContent.trim()
                        + (b.querySelector('i.fa, svg.svg-inline--fa') ? ' [icon]' : '')),
            images: [...document.querySelectorAll('.widget-image')].map(i =>
                ({tag: i.tagName, src: i.src.slice(0, 30), w: i.naturalWidth, h: i.naturalHeight})),
        })"""
    )
    page.close()

    if math is not None:
        print(
            f"  math: {math['formulas']} formula(s), {math['typeset']} typeset by MathJax "
            f"{math['version']} ({math['containers']} mjx-container, {math['errors']} mjx-merror)"
        )
        print(f"  raw TeX left in the text: {math['raw'] or 'none'}")
    if n_views:
        print(f"  views: {n_views}, rendered: {found['rendered']}/{found['subareas']} subareas")
        print(f"  sliders: {found['sliders']}")
        print(f"  HTML widgets: {found['html']}")
    if found["labels"]:
        print(f"  labels: {found['labels']}")
    if found["buttons"]:
        print(f"  buttons: {found['buttons']}")
    for img in found["images"]:
        print(f"  image: <{img['tag'].lower()}> {img['w']}x{img['h']} src={img['src']}...")
    if found["rendered"] < n_views:
        failures.append(f"only {found['rendered']} of {n_views} widget views rendered")

    expected = expected_models(html)
    if n_views:
        print(f"  models shown by the views: {dict(sorted(expected.items()))}")
    dom_count = {
        "slider": len(found["sliders"]),
        "HTML label": len(found["html"]),
        "label": len(found["labels"]),
        "button": len(found["buttons"]),
        "image": sum(1 for i in found["images"] if i["tag"] == "IMG" and i["w"] > 0),
    }
    need: dict[str, int] = {}
    for name, n in expected.items():
        if name in EXPECT:
            label = EXPECT[name][1]
            need[label] = need.get(label, 0) + n
    for label, n in need.items():
        if dom_count[label] < n:
            failures.append(f"expected {n} {label}(s), found {dom_count[label]} rendered")

    for u in assets:
        print(f"  loaded: {u}")
    for u in blocked:
        print(f"  blocked (no internet): {u}")
        failures.append(f"needs the internet: {u}")
    for f in failed:
        print(f"  local request failed: {f}")
        failures.append(f"local request failed: {f}")
    for c in console:
        known = any(k.search(c) for k in KNOWN_CONSOLE)
        print(f"  console {'(known) ' if known else ''}{c}")
        if c.startswith(("error", "pageerror")) and not known and "ERR_INTERNET_DISCONNECTED" not in c:
            failures.append(f"console {c}")
    return failures


def check_math(page, html: str, timeout_ms: int, failures: list[str]) -> dict | None:
    """Wait for MathJax 3 to finish; return what it typeset (failures appended)."""
    try:
        # The MathJax script is deferred: by the "load" event it has run, or failed.
        page.wait_for_function(
            """() => !!(window.MathJax && MathJax.startup && MathJax.startup.promise)
                     || document.readyState === 'complete'""",
            timeout=timeout_ms,
        )
        if not page.evaluate("() => !!(window.MathJax && MathJax.version)"):
            raise RuntimeError("the MathJax script did not load")
        # Wait for the initial typeset and for what the widgets queued after it
        # (mathjax-hub-shim.js chains those on MathJax.startup.promise).
        page.evaluate(
            """() => { window.__mathjaxDone = undefined;
                MathJax.startup.promise.then(() => { window.__mathjaxDone = 'ok'; },
                                             e => { window.__mathjaxDone = 'failed: ' + e; }); }"""
        )
        page.wait_for_function("() => window.__mathjaxDone", timeout=timeout_ms)
        done = page.evaluate("() => window.__mathjaxDone")
        if done != "ok":
            failures.append(f"MathJax {done}")
    except RuntimeError as exc:
        failures.append(str(exc))
    except Exception as exc:  # playwright TimeoutError
        failures.append(f"MathJax did not finish within {timeout_ms} ms ({type(exc).__name__})")
    found = page.evaluate(
        r"""() => {
            const math = [...document.querySelectorAll('.math')];
            const raw = [];
            const skip = 'SCRIPT,STYLE,PRE,CODE,TEXTAREA,MJX-CONTAINER'.split(',');
            const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT, {
                acceptNode: n => {
                    for (let e = n.parentElement; e; e = e.parentElement)
                        if (skip.includes(e.tagName)) return NodeFilter.FILTER_REJECT;
                    return NodeFilter.FILTER_ACCEPT;
                }});
            for (let n; (n = walk.nextNode());) {
                const m = n.data.match(/\$\$|\\[()\[\]]|\\begin\{/);
                if (m) raw.push(n.data.slice(Math.max(0, m.index - 20), m.index + 30).trim());
            }
            return {
                version: (window.MathJax && MathJax.version) || 'not loaded',
                formulas: math.length,
                typeset: math.filter(e => e.querySelector('mjx-container')).length,
                containers: document.querySelectorAll('mjx-container').length,
                errors: document.querySelectorAll('mjx-merror').length,
                raw: raw.slice(0, 10),
            };
        }"""
    )
    n_source = len(MATH_RE.findall(html))
    if not str(found["version"]).startswith("3."):
        failures.append(f"MathJax 3 is not running (MathJax.version: {found['version']})")
    if found["typeset"] < n_source:
        failures.append(f"MathJax typeset {found['typeset']} of the page's {n_source} formulas")
    if found["errors"]:
        failures.append(f"{found['errors']} formula(s) show a MathJax error (mjx-merror)")
    if found["raw"]:
        failures.append(f"raw TeX left in the page: {found['raw']}")
    return found


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("html_dir", nargs="?", default=str(REPO / "_build" / "html"))
    ap.add_argument("--page", action="append", help="page relative to html_dir (repeatable)")
    ap.add_argument("--file-url", action="store_true", help="open file:// URLs instead of http")
    ap.add_argument("--timeout", type=float, default=20, help="seconds per page")
    ap.add_argument("--chromium", default=os.environ.get("CHROMIUM", "/usr/bin/chromium"))
    args = ap.parse_args()

    html_dir = Path(args.html_dir).resolve()
    if not (html_dir / "index.html").is_file():
        print(f"not a built book: {html_dir} (run `make book` first)", file=sys.stderr)
        return 2
    if args.page:
        pages = [html_dir / p for p in args.page]
    else:
        pages = sorted(set(widget_pages(html_dir)) | set(mathjax_pages(html_dir)))
    if not pages:
        print(f"no page with widget views or math under {html_dir}", file=sys.stderr)
        return 2

    from playwright.sync_api import sync_playwright

    server = None if args.file_url else serve(html_dir)
    failures: dict[str, list[str]] = {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=args.chromium,
            args=browsing.CHROMIUM_ARGS,
        )
        context = browser.new_context()
        for path in pages:
            rel = path.relative_to(html_dir).as_posix()
            if args.file_url:
                url = path.as_uri()
            else:
                url = f"http://127.0.0.1:{server.server_address[1]}/{rel}"
            print(f"{rel}  ({url})")
            errs = check_page(context, url, path.read_text(encoding="utf-8"), int(args.timeout * 1000))
            if errs:
                failures[rel] = errs
        browser.close()
    if server:
        server.shutdown()

    if failures:
        print("\nFAILED")
        for rel, errs in failures.items():
            for e in errs:
                print(f"  {rel}: {e}")
        return 1
    print(f"\nOK: widgets and math rendered offline on {len(pages)} page(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
