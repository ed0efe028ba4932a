"""The built book needs no CDN for MathJax or the widget JavaScript.

Runs after `jupyter-book build . --all -W` (`make build-check`); set
BOOK_HTML_DIR to check a build elsewhere (e.g. `--path-output /tmp/x` writes
/tmp/x/_build/html). Standard library only; the real in-browser check is
tools/check_widgets_offline.py (needs Chromium).

- No built page refers to MathJax, require.js or @jupyter-widgets/html-manager
  on the internet (in a <script src> or anywhere else in the page).
- Every local script and stylesheet a page refers to exists in the build.
- Pages with math load the vendored MathJax 3 (book/mathjax/, see its
  README.md) with `defer`; widget pages that also have MathJax load
  mathjax-hub-shim.js after it, deferred too (else the widgets throw
  "Cannot read properties of undefined (reading 'Queue')").
- The fonts MathJax's CommonHTML output names are all in the build, and no
  formula uses a TeX macro whose MathJax extension would be fetched at run
  time (autoload/\\require) but is not vendored.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from built_site import HTML_DIR, local_target, page_refs

STATIC_MATHJAX = HTML_DIR / "_static" / "mathjax"
MATHJAX_JS = STATIC_MATHJAX / "tex-chtml.js"
REMOTE = re.compile(r"^(https?:)?//", re.I)
# Any URL naming one of the scripts that must come from _static/.
REMOTE_OFFLINE_ASSET = re.compile(
    r"""(?:https?:)?//[^\s"'<>()]*?(?:mathjax|require(?:\.min)?\.js|requirejs|html-manager"""
    r"""|embed-amd)[^\s"'<>()]*""",
    re.I,
)
VIEW_MIME = "application/vnd.jupyter.widget-view+json"
MATH_ELEMENT = re.compile(
    r'<(span|div) class="math[^"]*">(.*?)</\1>', re.S
)  # Sphinx's \(...\) / \[...\] containers

PAGES = sorted(
    p for p in HTML_DIR.rglob("*.html") if "_static" not in p.relative_to(HTML_DIR).parts
)
IDS = [p.relative_to(HTML_DIR).as_posix() for p in PAGES]


@pytest.mark.parametrize("page", PAGES, ids=IDS)
def test_no_cdn_for_mathjax_requirejs_or_html_manager(page: Path):
    text = page.read_text(encoding="utf-8")
    remote = sorted(set(REMOTE_OFFLINE_ASSET.findall(text)))
    assert not remote, f"{page.name} still refers to the internet for: {remote}"


@pytest.mark.parametrize("page", PAGES, ids=IDS)
def test_local_scripts_and_stylesheets_exist(page: Path):
    r = page_refs(page)
    urls = r.srcs + r.styles
    missing = []
    for url in urls:
        if REMOTE.match(url) or urlsplit(url).scheme:
            continue
        target = local_target(page, url)
        if HTML_DIR not in target.parents or not target.is_file():
            missing.append(f"{url} -> {target}")
    assert not missing, f"{page.name} refers to files missing from the build: {missing}"


MATH_PAGES = [p for p in PAGES if MATH_ELEMENT.search(p.read_text(encoding="utf-8"))]


def test_some_page_has_math():
    assert MATH_PAGES, "no built page contains a formula: did dollarmath stop working?"


@pytest.mark.parametrize(
    "page", MATH_PAGES, ids=[p.relative_to(HTML_DIR).as_posix() for p in MATH_PAGES]
)
def test_math_pages_load_vendored_mathjax_then_the_widget_shim(page: Path):
    scripts = [attrs for attrs, _ in page_refs(page).scripts]
    srcs = [s.get("src") or "" for s in scripts]
    mj = [i for i, s in enumerate(srcs) if Path(urlsplit(s).path).name == MATHJAX_JS.name]
    assert len(mj) == 1, f"expected one <script src=.../{MATHJAX_JS.name}>, found {srcs}"
    assert local_target(page, srcs[mj[0]]) == MATHJAX_JS.resolve()
    assert "defer" in scripts[mj[0]], "MathJax must load with defer (Sphinx does that)"

    shim = [i for i, s in enumerate(srcs) if Path(urlsplit(s).path).name == "mathjax-hub-shim.js"]
    if VIEW_MIME in page.read_text(encoding="utf-8"):
        assert len(shim) == 1, f"widget page without mathjax-hub-shim.js: {srcs}"
        # Deferred scripts run in document order: MathJax 3 must exist when the
        # shim runs, and the shim before the widgets render (window "load").
        assert shim[0] > mj[0], "mathjax-hub-shim.js must come after MathJax"
        assert "defer" in scripts[shim[0]], "mathjax-hub-shim.js must be deferred"


def test_mathjax_fonts_are_vendored():
    if not MATHJAX_JS.is_file():
        pytest.fail(f"{MATHJAX_JS} is missing from the build")
    names = set(re.findall(r"MathJax_[A-Za-z0-9-]+\.woff", MATHJAX_JS.read_text(encoding="utf-8")))
    assert names, f"no font names found in {MATHJAX_JS.name}: did its format change?"
    fonts = STATIC_MATHJAX / "output" / "chtml" / "fonts" / "woff-v2"
    missing = sorted(n for n in names if not (fonts / n).is_file())
    assert not missing, f"fonts MathJax may request but that are not vendored: {missing}"
    assert (STATIC_MATHJAX / "LICENSE").is_file(), "MathJax's LICENSE must ship with it"


def autoload_table() -> dict[str, tuple[set[str], set[str]]]:
    """extension -> (macros, environments) that make MathJax fetch it at run time.

    Read from the vendored tex-chtml.js itself, minus the packages it preloads.
    """
    js = MATHJAX_JS.read_text(encoding="utf-8")
    m = re.search(r"autoload:\(0,[\w.$]+\.expandable\)\((\{.*?\})\)\}", js)
    assert m, f"autoload table not found in {MATHJAX_JS.name}: update this test"
    table = json.loads(re.sub(r"([{,])([A-Za-z]+):", r'\1"\2":', m.group(1)))
    preloaded = set()
    for args in re.findall(r"preLoad\(([^)]*)\)", js):
        preloaded |= set(re.findall(r'"\[tex\]/(\w+)"', args))
    out = {}
    for ext, spec in table.items():
        macros, envs = spec if len(spec) == 2 and isinstance(spec[0], list) else (spec, [])
        if ext not in preloaded:
            out[ext] = (set(macros), set(envs))
    return out


def test_no_formula_needs_an_extension_that_is_not_vendored():
    if not MATHJAX_JS.is_file():
        pytest.fail(f"{MATHJAX_JS} is missing from the build")
    table = autoload_table()
    needs: dict[str, set[str]] = {}
    for page in MATH_PAGES:
        for _, tex in MATH_ELEMENT.findall(page.read_text(encoding="utf-8")):
            macros = set(re.findall(r"\\([A-Za-z]+)", tex))
            envs = set(re.findall(r"\\begin\{([A-Za-z*]+)\}", tex))
            wanted = {e for e, (m, v) in table.items() if macros & m or envs & v}
            wanted |= set(re.findall(r"\\require\{([\w-]+)\}", tex))
            for ext in wanted:
                needs.setdefault(ext, set()).add(page.relative_to(HTML_DIR).as_posix())
    ext_dir = STATIC_MATHJAX / "input" / "tex" / "extensions"
    missing = {e: sorted(p) for e, p in needs.items() if not (ext_dir / f"{e}.js").is_file()}
    assert not missing, (
        "formulas use TeX macros whose MathJax extension is loaded at run time but "
        f"not vendored (copy es5/input/tex/extensions/<name>.js, see book/mathjax/README.md): "
        f"{missing}"
    )
