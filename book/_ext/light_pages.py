"""Pages that load light (issue 41): a reader gets what the page uses, and the widgets when they
come near.

Every page the HTML builders write passes through :func:`lighten`, which rewrites the page's
own markup and never the embedded widget state (so ``widget_state_order``'s order is kept):

* **No icon script.** pydata-sphinx-theme loads Font Awesome twice: a 1.5 MB script that turns
  every ``<i class="fa-…">`` into an SVG, and a stylesheet with web fonts that draws the same
  icons. The script goes; the stylesheet draws the icons. The regular-weight font is preloaded
  only where a page uses a ``fa-regular`` icon.
* **No MathJax without maths.** The MathJax script and its configuration go from a page with no
  maths in it (no ``class="math``, ``\\(``, ``\\[`` or ``$$`` outside its scripts).
* **No thebe.** The book has no thebe launch button (``launch_buttons`` in ``_config.yml``), so
  sphinx-thebe's script, stylesheet and inline configuration go.
* **No unused stylesheets.** sphinx-design's stylesheet and script go from a page with no
  ``sd-`` component, sphinx-exercise's stylesheet from a page with no exercise or solution.
* **One request for the small stylesheets.** A run of stylesheets straight under ``_static/``
  (togglebutton, copybutton, myst-nb, the book's own) becomes one link to
  ``_static/cm-styles-<digest>.css``, their text in the same order, written when the build ends
  (they hold no ``url()``, so nothing they point at moves).
* **Images when they come near.** Images in the page get ``loading="lazy"``, and the book's own
  figures (``_images/``) their ``width`` and ``height``, so the page keeps its place while they load.
* **Widgets when they come near** (HTML builder only). The widget scripts (``require.js``,
  ``widgets-paths.js``, ``embed-amd.js``: 1.1 MB gzipped; the MathJax shim and
  ``static-widgets.js``) keep their tags, in order, but as ``type="text/x-cm-later"``, which the
  browser neither fetches nor runs. A small inline loader turns them into real scripts, in the
  same order, when the first widget view comes within 1.5 screens (``IntersectionObserver``), so
  the page's text paints and its first load ends without them. ``window.__cmWidgetsNow()`` loads
  them at once (the browser checks call it); ``window.__cmWidgetsWhy`` says what started them
  (``near``, ``asked``) and ``performance.mark("cm-widgets")`` when.

tools/page_weight.py measures the result; tests/browser/test_pages.py holds every chapter to
issue 41's budget (first load ≤ 1.5 MB gzipped, ≤ 30 requests).
"""
from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any, Callable

LATER = "text/x-cm-later"
WIDGET_SCRIPTS = ("require.js", "widgets-paths.js", "embed-amd.js", "mathjax-hub-shim.js", "static-widgets.js")

_SCRIPT = re.compile(r"<script\b[^>]*>.*?</script>", re.S | re.I)
_ICON_SCRIPT = re.compile(r'<script src="[^"]*/vendor/fontawesome/[^"]*/js/all\.min\.js[^"]*"></script>\s*')
_REGULAR_FONT = re.compile(r'<link rel="preload" as="font"[^>]*fa-regular-400\.woff2"\s*/?>\s*')
_MATHJAX = re.compile(r'<script[^>]*src="[^"]*/mathjax/tex-[^"]*"[^>]*></script>\s*'
                      r'|<script>window\.MathJax = [^<]*</script>\s*')
_THEBE = re.compile(r'<script[^>]*src="[^"]*sphinx-thebe\.js[^"]*"[^>]*></script>\s*'
                    r'|<link[^>]*sphinx-thebe\.css[^>]*>\s*'
                    r'|<script>const THEBE_JS_URL = [^<]*</script>\s*')
_DESIGN = re.compile(r'<link[^>]*sphinx-design[^>]*\.css[^>]*>\s*|<script[^>]*design-tabs\.js[^>]*></script>\s*')
_EXERCISE = re.compile(r'<link[^>]*/exercise\.css[^>]*>\s*')
_SMALL_CSS = re.compile(r'(?:<link rel="stylesheet" type="text/css" href="((?:\.\./)*)_static/[^/"]+\.css[^"]*" />\s*){2,}')
_SMALL_HREF = re.compile(r'href="(?:\.\./)*_static/([^/"?]+\.css)(?:\?v=([^"]*))?"')
_MATH_MARK = re.compile(r'class="[^"]*\bmath\b|\\\(|\\\[|\$\$')
_IMG = re.compile(r"<img\b(?![^>]*\bloading=)")
_FIGURE = re.compile(r'<img\b(?![^>]*\bwidth=)([^>]*\ssrc="[^"]*_images/([^"/?]+)")')
_WIDGET_TAG = re.compile(r'<script(?![^>]*\btype=)([^>]*\ssrc="[^"]*/(?:%s)(?:\?[^"]*)?")([^>]*)></script>'
                         % "|".join(re.escape(n) for n in WIDGET_SCRIPTS))

# Inline, in the page's head: turns the waiting widget tags into scripts when a widget view nears.
LOADER = """<script>(function () {
  var why = null;
  function go(reason) {
    if (why) return;
    why = window.__cmWidgetsWhy = reason;
    if (window.performance && performance.mark) performance.mark("cm-widgets");
    var tags = [].slice.call(document.querySelectorAll('script[type="%(later)s"]'));
    /* the deferred ones first (the MathJax shim, static-widgets.js): as tags they ran before the
       widgets rendered on the load event, and embed-amd.js renders at once on a loaded page */
    tags.sort(function (a, b) { return b.hasAttribute("defer") - a.hasAttribute("defer"); });
    tags.forEach(function (t) {
      var s = document.createElement("script");
      for (var i = 0; i < t.attributes.length; i++) {
        var a = t.attributes[i];
        if (a.name !== "type" && a.name !== "defer") s.setAttribute(a.name, a.value);
      }
      s.async = false;  /* run in this order */
      t.parentNode.insertBefore(s, t.nextSibling);
    });
  }
  window.__cmWidgetsNow = function () { go("asked"); };
  function watch() {
    var views = document.querySelectorAll('script[type="application/vnd.jupyter.widget-view+json"]');
    if (!views.length) return;
    if (!("IntersectionObserver" in window)) { go("near"); return; }
    var seen = new IntersectionObserver(function (entries) {
      if (entries.some(function (e) { return e.isIntersecting; })) { seen.disconnect(); go("near"); }
    }, { rootMargin: "150%% 0px" });
    views.forEach(function (v) { seen.observe(v.parentNode); });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", watch);
  else watch();
})();</script>
""" % {"later": LATER}


def _outside_scripts(html: str, edit) -> str:
    """Apply ``edit`` to the page's text between its script elements (never inside one)."""
    out, last = [], 0
    for m in _SCRIPT.finditer(html):
        out.append(edit(html[last:m.start()]))
        out.append(m.group(0))
        last = m.end()
    out.append(edit(html[last:]))
    return "".join(out)


def has_math(html: str) -> bool:
    """Whether anything in the page (outside its scripts, widget state included) is maths."""
    text = _SCRIPT.sub(lambda m: m.group(0) if "widget-state+json" in m.group(0)[:120] else "", html)
    return bool(_MATH_MARK.search(text))


def bundle_styles(html: str, bundles: dict[str, list[str]]) -> str:
    """Each run of small stylesheets as one link; ``bundles`` gets {bundle file: [its files]}."""
    def one(m: re.Match) -> str:
        files = _SMALL_HREF.findall(m.group(0))
        digest = hashlib.sha256(repr(files).encode()).hexdigest()[:12]
        name = f"cm-styles-{digest}.css"
        bundles[name] = [f for f, _ in files]
        return f'<link rel="stylesheet" type="text/css" href="{m.group(1)}_static/{name}" />\n'
    return _SMALL_CSS.sub(one, html)


def write_bundles(static: Path, bundles: dict[str, list[str]]) -> None:
    """Write each bundle into the site's _static/ from the files it joins, in order."""
    for name, files in bundles.items():
        text = "\n".join(f"/* {f} */\n" + (static / f).read_text(encoding="utf-8") for f in files)
        (static / name).write_text(text, encoding="utf-8")


def lighten(html: str, widgets_later: bool = True, bundles: dict[str, list[str]] | None = None,
            size: Callable[[str], tuple[int, int] | None] | None = None) -> str:
    """The page as issue 41 wants it loaded (see the module's docstring)."""
    html = _ICON_SCRIPT.sub("", html)
    if "fa-regular" not in _SCRIPT.sub("", html).replace("fa-regular-400.woff2", ""):
        html = _REGULAR_FONT.sub("", html)
    if not has_math(html):
        html = _MATHJAX.sub("", html)
    html = _THEBE.sub("", html)
    markup = _SCRIPT.sub("", html)
    if not re.search(r'class="[^"]*\bsd-', markup):
        html = _DESIGN.sub("", html)
    if not re.search(r'class="[^"]*\b(?:exercise|solution)\b', markup):
        html = _EXERCISE.sub("", html)
    if bundles is not None:
        html = bundle_styles(html, bundles)
    def sized(m: re.Match) -> str:
        wh = size(m.group(2)) if size else None
        return f'<img width="{wh[0]}" height="{wh[1]}"{m.group(1)}' if wh else m.group(0)

    html = _outside_scripts(html, lambda part: _IMG.sub('<img loading="lazy"', _FIGURE.sub(sized, part)))
    if widgets_later and _WIDGET_TAG.search(html):
        html = _WIDGET_TAG.sub(lambda m: f'<script type="{LATER}"{m.group(1)}{m.group(2)}></script>', html)
        first = html.index(f'<script type="{LATER}"')
        html = html[:first] + LOADER + html[first:]
    return html


def _builder_inited(app: Any) -> None:
    builder = app.builder
    if getattr(builder, "format", "") != "html" or not hasattr(builder, "templates"):
        return
    render = builder.templates.render
    later = builder.name == "html"  # the PDF's single page loads everything at once
    bundles = app.light_pages_bundles = {}

    def size(name: str) -> tuple[int, int] | None:
        """A figure's pixel size, from the file Sphinx copies to _images/<name>."""
        sources = {dest: src for src, dest in builder.images.items()}
        if name not in sources or not name.lower().endswith((".png", ".jpg", ".jpeg", ".gif", ".webp")):
            return None
        from PIL import Image

        with Image.open(Path(app.srcdir) / sources[name]) as im:
            return im.size

    def render_light(template: str, context: dict) -> str:
        out = render(template, context)
        return lighten(out, later, bundles, size) if template.endswith(".html") and "<head" in out else out

    builder.templates.render = render_light


def _build_finished(app: Any, exception: Exception | None) -> None:
    bundles = getattr(app, "light_pages_bundles", None)
    if exception is None and bundles:
        write_bundles(Path(app.outdir) / "_static", bundles)


def setup(app: Any) -> dict:
    app.connect("builder-inited", _builder_inited)
    app.connect("build-finished", _build_finished)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
