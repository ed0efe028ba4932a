"""What the browser checks, the screenshots and the PDF share: the built site,
a local server for it, Debian's Chromium driven by Playwright, and one visit of
one page at one width that measures everything the tests assert on.

The site is `_build/html` at the repository root, or BOOK_HTML_DIR (for
example /tmp/x/_build/html after `jupyter-book build . --path-output /tmp/x`),
whose pages are those of `_toc.yml`, or of BOOK_TOC (the student edition's
`_build/student/_toc.yml`).
Chromium is /usr/bin/chromium or CHROMIUM; Playwright's own browser download
is never needed (`.ci/run` installs Debian's `chromium` with apt).
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator
from urllib.parse import urlsplit

REPO = Path(__file__).resolve().parent.parent.parent
HTML_DIR = Path(os.environ.get("BOOK_HTML_DIR", REPO / "_build" / "html")).resolve()
# The table of contents of that build: BOOK_TOC=_build/student/_toc.yml for the student edition.
TOC = Path(os.environ.get("BOOK_TOC", REPO / "_toc.yml")).resolve()
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# The two widths every page is read at: a laptop and a phone (CSS pixels).
WIDTHS = {"desktop": (1366, 900), "phone": (390, 844)}
TIMEOUT_MS = 20_000


def toc_files(repo: Path = REPO) -> list[str]:
    """Every document of _toc.yml, root first, in reading order (no suffix)."""
    import yaml

    toc = yaml.safe_load((TOC if repo == REPO else repo / "_toc.yml").read_text(encoding="utf-8"))
    out = [toc["root"]]

    def walk(entries):
        for e in entries or []:
            if "file" in e:
                out.append(e["file"])
            walk(e.get("sections"))

    for part in toc.get("parts", []):
        walk(part.get("chapters"))
    walk(toc.get("chapters"))
    return out


def toc_pages(html_dir: Path = HTML_DIR) -> list[str]:
    """Site-relative paths of the HTML pages of the table of contents."""
    return [f + ".html" for f in toc_files()]


def chapter_titles(repo: Path = REPO) -> dict[str, str]:
    """The title (first heading) of every chapter notebook in the table of contents."""
    import json

    titles = {}
    for f in toc_files(repo):
        if not f.startswith("notebooks/"):
            continue
        nb = json.loads((repo / f"{f}.ipynb").read_text(encoding="utf-8"))
        for cell in nb["cells"]:
            if cell["cell_type"] != "markdown":
                continue
            for line in "".join(cell["source"]).splitlines():
                if line.startswith("# "):
                    titles[f] = line[2:].strip()
                    break
            if f in titles:
                break
    return titles


@contextlib.contextmanager
def serve(html_dir: Path = HTML_DIR) -> Iterator[str]:
    """Serve html_dir on 127.0.0.1 (a free port); yield the base URL."""

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    handler = functools.partial(Quiet, directory=str(html_dir))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@contextlib.contextmanager
def chromium() -> Iterator[object]:
    """A headless Debian Chromium, driven by Playwright."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        # Scrollbars shown as on a desktop, so a test can see whether a scroll area has one.
        browser = p.chromium.launch(
            executable_path=CHROMIUM, args=CHROMIUM_ARGS, ignore_default_args=["--hide-scrollbars"]
        )
        try:
            yield browser
        finally:
            browser.close()


def is_local(url: str) -> bool:
    parts = urlsplit(url)
    if parts.scheme in ("data", "blob", "about"):
        return True
    return parts.hostname == "127.0.0.1"


@dataclass
class Visit:
    """What one page showed at one width."""

    page: str
    width: str
    console: list[str] = field(default_factory=list)
    offsite: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    render: list[str] = field(default_factory=list)  # widget/MathJax timeouts
    dom: dict = field(default_factory=dict)
    drawers: dict = field(default_factory=dict)
    axe: dict | None = None
    contrast: dict | None = None
    seconds: dict = field(default_factory=dict)  # time spent in axe and in the contrast check
    weight: dict = field(default_factory=dict)  # the first load (settle, first_load)


def new_context(browser):
    """One browser context for every visit, so the widget bundle is fetched and compiled once."""
    w, h = WIDTHS["desktop"]
    return browser.new_context(viewport={"width": w, "height": h})


def open_page(context, base: str, rel: str, width: str = "desktop",
              plant: Callable[[str], str] | None = None):
    """A new page at the given width, loaded and rendered; returns (page, visit).

    The visit records console errors, uncaught exceptions, failed local
    requests (and HTTP errors) and every request that tried to leave
    127.0.0.1 (aborted, as if there were no internet). ``plant`` rewrites the
    page's own HTML on its way to the browser (the checks' defect drill).
    """
    w, h = WIDTHS[width]
    page = context.new_page()
    page.set_viewport_size({"width": w, "height": h})
    visit = Visit(rel, width)

    def on_console(m):
        if m.type in ("error", "warning"):
            visit.console.append(f"{m.type}: {m.text}")

    page.on("console", on_console)
    page.on("pageerror", lambda e: visit.console.append(f"uncaught: {e}"))
    page.on(
        "requestfailed",
        lambda r: visit.failed.append(f"{r.url} ({r.failure})") if is_local(r.url) else None,
    )
    page.on(
        "response",
        lambda r: visit.failed.append(f"{r.url} (HTTP {r.status})") if r.status >= 400 else None,
    )

    def route(r):
        if plant is not None and r.request.url == base + rel:
            response = r.fetch()
            r.fulfill(response=response, body=plant(response.text()))
        elif is_local(r.request.url):
            r.continue_()
        else:
            visit.offsite.append(r.request.url)
            r.abort("internetdisconnected")

    page.route("**/*", route)
    page.goto(base + rel, wait_until="load")
    settle(page, visit)
    return page, visit


def settle(page, visit: Visit) -> None:
    """Wait until MathJax is done, then (its scripts wait for a widget to come near: book/_ext/
    light_pages.py) load the widgets and wait until every widget view is rendered and its pictures
    decoded. The page's first load, everything it fetched before the widgets were asked for, is
    weighed into ``visit.weight``."""
    try:
        page.wait_for_function(
            """() => !document.querySelector('script[src*="mathjax"]:not([type="text/x-cm-later"])')
                     || !!(window.MathJax && MathJax.startup && MathJax.startup.promise)""",
            timeout=TIMEOUT_MS,
        )
        page.evaluate(
            """() => window.MathJax && MathJax.startup && MathJax.startup.promise
                     ? MathJax.startup.promise.then(() => true) : true"""
        )
    except Exception as exc:
        visit.render.append(f"MathJax did not finish ({type(exc).__name__})")
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => setTimeout(r, 0)))")
    visit.weight = first_load(page)
    page.evaluate("() => window.__cmWidgetsNow && window.__cmWidgetsNow()")
    try:
        page.wait_for_function(
            """() => {
                const n = document.querySelectorAll(
                    'script[type="application/vnd.jupyter.widget-view+json"]').length;
                const subs = [...document.querySelectorAll('.widget-subarea')];
                return subs.length >= n && subs.every(s => s.childElementCount > 0)
                    && [...document.querySelectorAll('.widget-subarea img')].every(i => i.complete);
            }""",
            timeout=TIMEOUT_MS,
        )
    except Exception as exc:  # playwright TimeoutError
        visit.render.append(f"widget views did not render ({type(exc).__name__})")


# What the page has fetched so far (the navigation and every resource), or, where its widgets were
# asked for (window.__cmWidgetsWhy === "asked"), what it fetched before: the first load a reader who
# has not scrolled to an explorer gets. Where the widgets started on their own (an explorer near the
# top), they are part of the first load.
FIRST_LOAD_JS = """() => {
  const asked = window.__cmWidgetsWhy === 'asked' && performance.getEntriesByName('cm-widgets')[0];
  const until = asked ? asked.startTime : Infinity;
  const nav = performance.getEntriesByType('navigation')[0];
  return [nav.name].concat(performance.getEntriesByType('resource')
    .filter(e => e.startTime < until && /^https?:/.test(e.name)).map(e => e.name));
}"""


@functools.lru_cache(maxsize=None)
def _gz_size(path: Path) -> tuple[int, int]:
    import gzip

    body = path.read_bytes()
    if path.suffix in (".png", ".jpg", ".webp", ".woff2", ".woff", ".zip", ".gif"):
        return len(body), len(body)
    return len(body), min(len(body), len(gzip.compress(body, 6)))


def first_load(page, html_dir: Path | None = None) -> dict:
    """{"requests", "raw", "gz", "urls"} of the page's first load; bytes read from the built files
    (gzip level 6 for text, images and fonts as they are)."""
    from urllib.parse import unquote

    root = (html_dir or HTML_DIR)
    urls = page.evaluate(FIRST_LOAD_JS)
    raw = gz = 0
    for url in urls:
        path = root / unquote(urlsplit(url).path.lstrip("/"))
        if path.is_dir():
            path = path / "index.html"
        if path.is_file():
            r, g = _gz_size(path)
            raw, gz = raw + r, gz + g
    return {"requests": len(urls), "raw": raw, "gz": gz, "urls": urls}


def frame_picture(folder: Path, file: str) -> bytes:
    """The bytes of one explorer picture as the build wrote them: from its pack (book/_ext/
    static_frames.py), or its own file in a build without packs. ``folder`` is the explorer's."""
    import base64
    import json

    path = folder / "index.js"
    text = path.read_text(encoding="utf-8")
    index = json.loads(text[text.index(",") + 1: text.rindex(")")])
    packs = index.get("packs")
    if "by" in index:  # frames per run: the picture is in the pack of a run that shows it
        for pack in sorted(folder.glob("pack-r*.js")):
            text = pack.read_text(encoding="utf-8")
            if f'"{file}":' in text:
                urls = json.loads(text[text.index("{"): text.index("},{") + 1])
                return base64.b64decode(urls[file].split(",", 1)[1])
        raise FileNotFoundError(f"no pack of {folder.name} holds {file}")
    if not packs:
        return (folder / file).read_bytes()
    text = (folder / f"pack-{packs[file]}.js").read_text(encoding="utf-8")
    urls = json.loads(text[text.index("{"): text.rindex(")")])
    return base64.b64decode(urls[file].split(",", 1)[1])


# Everything measured in the page, in one evaluation (see the tests for the rules).
MEASURE_JS = (Path(__file__).parent / "measure.js").read_text(encoding="utf-8")

DRAWERS_JS = r"""
(which) => {
  // pydata-sphinx-theme 0.16+ opens <dialog> drawers; 0.15 slides the sidebars in.
  const sel = which === 'primary'
    ? '#pst-primary-sidebar, #pst-primary-sidebar-modal, .bd-sidebar-primary'
    : '#pst-secondary-sidebar, #pst-secondary-sidebar-modal, .bd-sidebar-secondary';
  const vw = document.documentElement.clientWidth;
  for (const el of document.querySelectorAll(sel)) {
    const r = el.getBoundingClientRect();
    const cs = getComputedStyle(el);
    const links = [...el.querySelectorAll('a')].filter(a => {
      const q = a.getBoundingClientRect();
      return q.width > 0 && q.height > 0 && q.right > 0 && q.left < vw;
    });
    if (r.width > 40 && r.height > 40 && r.right > 0 && r.left < vw
        && cs.visibility !== 'hidden' && cs.display !== 'none' && links.length) return true;
  }
  return false;
}
"""


CLOSE_DRAWERS_JS = """() => {
    document.querySelectorAll('dialog[open]').forEach(d => d.close());
    document.querySelectorAll('#pst-primary-sidebar-checkbox, #pst-secondary-sidebar-checkbox')
        .forEach(c => { c.checked = false; });
}"""


# Resolves once no finite CSS transition or animation is running (a drawer sliding in or out, a
# dialog's fade), checked each frame from the next one on; infinite ones (spinners) are ignored.
SETTLED_JS = """(limit) => new Promise(resolve => {
  const start = performance.now();
  const busy = () => document.getAnimations().some(a => a.playState === 'running'
      && a.effect && a.effect.getComputedTiming().endTime !== Infinity);
  const tick = () => (!busy() || performance.now() - start > limit)
      ? resolve(performance.now() - start) : requestAnimationFrame(tick);
  requestAnimationFrame(() => requestAnimationFrame(tick));
})"""
SETTLE_LIMIT_MS = 2000  # the theme's drawer transitions take 200-300 ms


def wait_settled(page) -> float:
    """Wait until the page's transitions have ended (two frames at least, SETTLE_LIMIT_MS at most):
    the drawers' CSS transitions, instead of a fixed wait. Returns the milliseconds waited."""
    return page.evaluate(SETTLED_JS, SETTLE_LIMIT_MS)


def visible_toggle(page, cls: str):
    """The visible button of that class (theme headers hold several), or None."""
    for b in page.query_selector_all(f"button.{cls}, label.{cls}"):
        if b.is_visible():
            return b
    return None


def check_drawers(page) -> dict:
    """Click the navigation and page-contents buttons; report what each did.

    For each: {"button": bool, "before": bool, "after": bool} where before/after
    say whether the drawer's links were on screen before and after the click.
    """
    out = {}
    for which, cls in (("primary", "primary-toggle"), ("secondary", "secondary-toggle")):
        button = visible_toggle(page, cls)
        before = page.evaluate(DRAWERS_JS, which)
        if button is None:
            out[which] = {"button": False, "before": before, "after": before}
            continue
        try:
            button.click(timeout=3000)
        except Exception as exc:  # covered by another element, detached...
            out[which] = {"button": True, "before": before, "after": before,
                          "error": str(exc).splitlines()[0]}
            continue
        wait_settled(page)  # the drawers' CSS transition
        after = page.evaluate(DRAWERS_JS, which)
        out[which] = {"button": True, "before": before, "after": after}
        # Put it back: close a modal drawer (0.16+) or untick the drawer checkbox (0.15),
        # else re-toggle a sidebar.
        page.keyboard.press("Escape")
        page.evaluate(CLOSE_DRAWERS_JS)
        wait_settled(page)
        if page.evaluate(DRAWERS_JS, which) != before:
            b = visible_toggle(page, cls)
            if b is not None:
                try:
                    b.click(timeout=3000)
                    wait_settled(page)
                except Exception:
                    pass
    return out


# axe-core's colour-contrast rule, run as is, costs 3-8 ms per text element (for each text it
# rebuilds the stacking contexts of every ancestor and parses their colours): chapter 1 has 5,500
# (3,400 of them syntax-highlighting spans), 16-50 s depending on the machine's load; on every
# page in both colour modes with hidden cells opened, about four times what run_contrast takes.
# run_contrast judges the same rule on one text of each group of texts that must get the same
# verdict (contrast.js). AXE_CONTRAST=1 (`make a11y-contrast`) also runs the rule as is on every text,
# in both modes, and the test then requires each text it fails to be in a group that failed.
AXE_CONTRAST = os.environ.get("AXE_CONTRAST") == "1"


def run_axe(page) -> dict:
    """axe-core's violations on the page: {rule id: (impact, node count)}."""
    from axe_playwright_python.sync_playwright import Axe

    # preload=False: axe would otherwise re-fetch every stylesheet's @import by XHR and resolve it
    # against the page, not the stylesheet (a spurious 404 for /basic.css on every page).
    # Colour contrast is judged by run_contrast.
    options = {"resultTypes": ["violations"], "preload": False,
               "rules": {"color-contrast": {"enabled": False}}}
    result = Axe().run(page, options=options)
    return {
        v["id"]: (v.get("impact") or "", len(v.get("nodes", [])))
        for v in result.response.get("violations", [])
    }


CONTRAST_JS = (Path(__file__).parent / "contrast.js").read_text(encoding="utf-8")
# pydata-sphinx-theme's colour modes (its switch in the header); contrast is judged in each.
COLOUR_MODES = ("light", "dark")


def run_contrast(page) -> dict[str, dict]:
    """axe-core's color-contrast verdicts on every text of the page, in each colour mode.

    Opens what a reader can open (hidden code cells, dropdowns, header menus) first and puts
    the page back afterwards. Returns {mode: summary}; summary["violations"] lists one text of
    each failing group (with the group's size), see contrast.js.
    """
    from axe_playwright_python.sync_playwright import Axe

    if not page.evaluate("() => !!window.axe"):
        page.evaluate(Axe().axe_script)
    out = {}
    try:
        for mode in COLOUR_MODES:
            out[mode] = page.evaluate(CONTRAST_JS, {"mode": mode})
            if AXE_CONTRAST:
                out[mode]["cross_check"] = page.evaluate(CONTRAST_JS, {"action": "cross-check"})
        return out
    finally:
        page.evaluate(CONTRAST_JS, {"action": "restore"})


def visit_page(context, base: str, rel: str, *, axe: bool = False,
               screenshots: Path | None = None, plant: Callable[[str], str] | None = None) -> dict[str, Visit]:
    """Load a page once and read it at every width (the viewport is resized in place).

    Returns {width name: Visit}. Console errors, failed and off-site requests
    belong to the single load and are reported at the first width. axe-core runs
    at the first (desktop) width when asked, then the contrast check in light and dark mode. With `screenshots`, a full-page PNG
    per width is written to screenshots/<width>/<page>.png.
    """
    page, first = open_page(context, base, rel, "desktop", plant)
    out = {}
    try:
        for name, (w, h) in WIDTHS.items():
            visit = first if name == "desktop" else Visit(rel, name)
            if name != "desktop":
                page.set_viewport_size({"width": w, "height": h})
                page.wait_for_timeout(300)  # relayout, theme resize handlers
                page.evaluate(CLOSE_DRAWERS_JS)
                page.wait_for_timeout(300)
                page.evaluate("() => new Promise(r => requestAnimationFrame(() => r()))")
            visit.dom = page.evaluate(MEASURE_JS)
            if screenshots is not None:
                shot = screenshots / name / (rel.removesuffix(".html").replace("/", "__") + ".png")
                shot.parent.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(shot), full_page=True)
            if axe and name == "desktop":
                start = time.monotonic()
                visit.axe = run_axe(page)
                visit.seconds["axe"] = time.monotonic() - start
                start = time.monotonic()
                visit.contrast = run_contrast(page)
                visit.seconds["contrast"] = time.monotonic() - start
            visit.drawers = check_drawers(page)
            out[name] = visit
    finally:
        page.close()
    return out


# The groups of tests one pytest-xdist worker runs together (conftest.py's scheduler says why).
ONE_WORKER_MODULES = ("test_checks_catch_defects.py",)
PAGE_MODULES = ("test_pages.py",)
FRAME_MODULES = ("test_frames.py",)  # a group per page apart from the page's checks: finer, better balanced


def xdist_group_of(nodeid: str, pages: list[str]) -> str | None:
    """The group of tests one worker runs together, or None where any worker may run the test."""
    module = nodeid.split("::", 1)[0].rsplit("/", 1)[-1]
    if module in ONE_WORKER_MODULES:
        return module
    if module in PAGE_MODULES + FRAME_MODULES and nodeid.endswith("]") and "[" in nodeid:
        params = nodeid[nodeid.index("[") + 1: -1]
        for page in pages:
            if params == page or params.startswith(page + "-") or params.endswith("-" + page):
                return ("frames:" if module in FRAME_MODULES else "page:") + page
    return None
