"""Pages that load light (book/_ext/light_pages.py) and explorer pictures in packs
(book/_ext/static_frames.py's pack): on small pages written here, without a build.

The browser checks hold the built pages to issue 41's budget (tests/browser/test_pages.py,
test_first_load_within_budget); tools/page_weight.py measures them.
"""
from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "book" / "_ext"))
import light_pages as L  # noqa: E402
import static_frames as S  # noqa: E402

STATE = ('<script type="application/vnd.jupyter.widget-state+json">{"state": {"a": {"state": '
         '{"value": "<img src=\\"x.png\\">"}}}}</script>')


def page(body: str, math: bool = True, widgets: bool = True) -> str:
    head = [
        '<link rel="preload" as="font" type="font/woff2" crossorigin href="../_static/vendor/fontawesome/6.5.2/'
        'webfonts/fa-regular-400.woff2" />',
        '<script src="../_static/vendor/fontawesome/6.5.2/js/all.min.js?digest=1"></script>',
        '<link rel="stylesheet" type="text/css" href="../_static/pygments.css?v=1" />',
        '<link rel="stylesheet" type="text/css" href="../_static/styles/sphinx-book-theme.css?v=2" />',
        '<link rel="stylesheet" type="text/css" href="../_static/togglebutton.css?v=3" />',
        '<link rel="stylesheet" type="text/css" href="../_static/copybutton.css?v=4" />',
        '<link rel="stylesheet" type="text/css" href="../_static/exercise.css" />',
        '<link rel="stylesheet" type="text/css" href="../_static/sphinx-design.min.css?v=5" />',
        '<link rel="stylesheet" type="text/css" href="../_static/book.css?v=6" />',
        '<script data-sd-tabs-storage-prefix="x" src="../_static/design-tabs.js?v=7"></script>',
        '<script async="async" src="../_static/sphinx-thebe.js?v=8"></script>',
        '<script>const THEBE_JS_URL = "x";</script>',
        '<script>window.MathJax = {"options": {}}</script>',
        '<script defer="defer" src="../_static/mathjax/tex-chtml.js?v=9"></script>',
    ]
    if widgets:
        head += ['<script src="../_static/require.js?v=a"></script>',
                 '<script src="../_static/widgets-paths.js?v=b"></script>',
                 '<script src="../_static/embed-amd.js?v=c"></script>',
                 '<script defer="defer" src="../_static/mathjax-hub-shim.js?v=d"></script>',
                 '<script defer="defer" src="../_static/static-widgets.js?v=e"></script>']
    maths = '<span class="math notranslate nohighlight">\\(x\\)</span>' if math else ""
    return "<html><head>" + "\n".join(head) + "</head><body>" + maths + body + (STATE if widgets else "") \
        + "</body></html>"


def test_a_text_page_keeps_neither_icon_script_nor_mathjax_nor_thebe():
    out = L.lighten(page("<p>words</p>", math=False, widgets=False))
    for gone in ("all.min.js", "fa-regular-400", "tex-chtml.js", "window.MathJax", "sphinx-thebe", "THEBE_JS_URL",
                 "sphinx-design", "design-tabs", "exercise.css", L.LATER, "__cmWidgetsNow"):
        assert gone not in out, gone
    assert "book.css" in out and "togglebutton.css" in out


def test_a_page_with_maths_keeps_mathjax_and_one_with_components_their_styles():
    out = L.lighten(page('<div class="sd-card exercise">x</div>', widgets=False))
    assert "tex-chtml.js" in out and "window.MathJax" in out
    assert "sphinx-design.min.css" in out and "design-tabs.js" in out and "exercise.css" in out
    out = L.lighten(page('<i class="fa-regular fa-sun"></i>', math=False, widgets=False))
    assert "fa-regular-400.woff2" in out


def test_widget_scripts_wait_in_order_and_the_state_is_untouched():
    html = page('<img src="../_images/f.png" />')
    out = L.lighten(html)
    later = [line for line in out.split("\n") if L.LATER in line and "<script type=" in line]
    assert [n for name in L.WIDGET_SCRIPTS for n in [name] if any(name in t for t in later)] == list(L.WIDGET_SCRIPTS)
    assert out.index("__cmWidgetsNow") < out.index(f'<script type="{L.LATER}"')
    assert STATE in out  # an <img> inside the widget state gets no loading attribute
    assert '<img loading="lazy" src="../_images/f.png" />' in out
    assert 'defer="defer"' in out  # kept on the waiting tags, which the tests read
    # the PDF's single page loads its widgets at once
    assert L.LATER not in L.lighten(html, widgets_later=False)


def test_figures_get_their_size_and_lighten_is_idempotent():
    html = page('<img alt="a" src="../_images/f.png" />', widgets=False)
    bundles: dict = {}
    once = L.lighten(html, True, bundles, lambda name: (640, 480) if name == "f.png" else None)
    assert '<img loading="lazy" width="640" height="480" alt="a" src="../_images/f.png" />' in once
    assert L.lighten(once, True, bundles, lambda name: (1, 1)) == once


def test_small_stylesheets_become_one_in_order(tmp_path: Path):
    bundles: dict = {}
    out = L.lighten(page("<p>x</p>", widgets=False), True, bundles)
    (name, files), = bundles.items()
    assert files == ["togglebutton.css", "copybutton.css", "book.css"]
    assert f'href="../_static/{name}"' in out and "togglebutton.css" not in out
    assert out.index("pygments.css") < out.index("sphinx-book-theme.css") < out.index(name)
    for i, f in enumerate(files):
        (tmp_path / f).write_text(f".c{i} {{}}", encoding="utf-8")
    L.write_bundles(tmp_path, bundles)
    text = (tmp_path / name).read_text(encoding="utf-8")
    assert text.index(".c0") < text.index(".c1") < text.index(".c2")


def write_explorer(folder: Path, sizes: dict[str, int]) -> dict:
    """An explorer's frames as clustermath.views.frames writes them: two controls, a grid state."""
    folder.mkdir(parents=True)
    frames = {"0,0": [0, None], "1,0": [0, "a.webp"], "2,0": [0, "b.webp"], "0,1": [0, "c.png"],
              "1,1": [0, "d.webp"], "2,1": [0, "a.webp"]}
    for name, n in sizes.items():
        (folder / name).write_bytes(bytes([len(name)]) * n)
    index = {"key": "01-x", "default": "0,0", "frames": frames}
    (folder / "index.js").write_text(f'__cmFrames("01-x",{json.dumps(index)});\n', encoding="utf-8")
    return index


def read_pack(path: Path) -> dict[str, bytes]:
    text = path.read_text(encoding="utf-8")
    assert text.startswith('__cmFramesPack("01-x",')
    urls = json.loads(text[text.index("{"): text.rindex(")")])
    return {f: base64.b64decode(u.split(",", 1)[1]) for f, u in urls.items()}


def test_pictures_are_packed_by_the_control_that_reaches_them(tmp_path: Path, monkeypatch):
    folder = tmp_path / "01-x"
    write_explorer(folder, {"a.webp": 10, "b.webp": 20, "c.png": 30, "d.webp": 40})
    original = {p.name: p.read_bytes() for p in folder.iterdir() if p.suffix != ".js"}
    packs = S.pack(folder)
    assert packs == {"a.webp": "c0", "b.webp": "c0", "c.png": "c1", "d.webp": "x"}
    assert not [p for p in folder.iterdir() if p.suffix in (".webp", ".png")]
    got = {}
    for p in folder.glob("pack-*.js"):
        got.update(read_pack(p))
    assert got == original
    assert json.loads((folder / "index.js").read_text()[len('__cmFrames("01-x",'):-3])["packs"] == packs
    assert S.pack(folder) == packs  # packed already (a build reusing another's frames)
    assert (read_pack(folder / "pack-c1.js")["c.png"]) == original["c.png"]


def test_a_large_pack_is_split(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(S, "PACK_BYTES", 25)
    folder = tmp_path / "01-x"
    write_explorer(folder, {"a.webp": 10, "b.webp": 20, "c.png": 30, "d.webp": 40})
    packs = S.pack(folder)
    assert packs["a.webp"] == "c0" and packs["b.webp"] == "c0.1"
    assert sorted(p.name for p in folder.glob("pack-*.js")) == ["pack-c0.1.js", "pack-c0.js", "pack-c1.js", "pack-x.js"]
