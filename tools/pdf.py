#!/usr/bin/env python3
"""Print the single-page build of the book to a PDF with headless Chromium (`make pdf`).

Usage: python tools/pdf.py --config _build/pdf/_config.yml   (write the build's config)
       python tools/pdf.py _build/singlehtml/index.html _build/pdf/book.pdf
       (writes _build/singlehtml/print.html, the page it prints)

The single-page build uses _config.yml with two changes: no LaTeX-oriented
restructuring (sphinx-jupyterbook-latex), and tools/pdf_singlehtml.py, which
lets the single-page builder render folded code cells.

The page is served on 127.0.0.1 (no request leaves it), the explorers are
rendered from their stored state (their default pictures) and MathJax finishes
before printing. A print stylesheet starts every document of the table of
contents after the first on a new page (the single-page builder marks each
with a `<span id="document-...">` and demotes its title to an h3), keeps figures and table rows whole, hides the site's
navigation and lets wide tables and code wrap. A4, backgrounds printed.

Before printing, the solutions' folded code cells and the discussions open
(paper has no button to unfold them; a chapter's folded code and its folded
check lines stay folded, as the page shows them), the page is
laid out at the width of A4's printable area, and every table, code block,
output and picture that is wider than that column is listed in
``layout.json`` beside the PDF (tests/browser/test_pdf.py requires none). The
PDF carries bookmarks made from the headings (chapters and their sections),
page numbers in the footer ("12 / 290") and a tagged structure for screen
readers. ``stats.json`` beside it records the page count, size and time of the
run, and ``headings.json`` the headings the bookmarks were titled from.
"""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests" / "browser"))
sys.path.insert(0, str(REPO / "tools"))

PRINT_CSS = """
@page { size: A4; margin: 16mm 14mm; }
@media print {
  .bd-header, .bd-sidebar-primary, .bd-sidebar-secondary, .bd-header-article, .bd-footer,
  .bd-footer-article, .prev-next-area, .header-article-items, #pst-back-to-top,
  .search-button-field, .theme-switch-button, dialog, .skip-link,
  #pst-skip-link { display: none !important; }
  html, body, .bd-container, .bd-container__inner, .bd-main, .bd-content, .bd-article-container,
  .bd-article { overflow: visible !important; height: auto !important; max-height: none !important;
    display: block !important; position: static !important; }
  .bd-main, .bd-content, .bd-article-container, .bd-page-width, .bd-container__inner {
    max-width: 100% !important; width: 100% !important; }
  span[id^="document-"] + section { break-before: page; page-break-before: always; }
  figure, img, .widget-subarea, tr, mjx-container { break-inside: avoid; page-break-inside: avoid; }
  table { font-size: 72%; width: auto !important; max-width: 100% !important; table-layout: auto; }
  td, th { padding: 2px 4px !important; white-space: normal !important; overflow-wrap: anywhere; }
  .cell_output, .output, .output_area, .text_html, div.highlight, .table-wrapper, .pst-scrollable-table-container {
    overflow: visible !important; max-width: 100% !important; }
  img, svg, .widget-subarea img { max-width: 100% !important; height: auto !important; }
  details > summary { list-style: none; }
  .cm-checks-open, button.toggle-button, .toggle-button .tb-icon { display: none !important; }
  pre { white-space: pre-wrap !important; word-break: break-word; font-size: 80%; }
  .widget-subarea { zoom: 0.8; }
}
"""


def write_config(path: Path, reuse_run: bool = False) -> None:
    """_config.yml for the single-page build, written under _build/pdf/: the local extensions'
    paths are absolute, since Jupyter Book resolves them against the config's own folder. With
    ``reuse_run`` (``make test``) the notebooks' outputs come from the run's jupyter-cache."""
    import yaml

    from edition import derived_config, reuse

    config = derived_config(REPO)
    if reuse_run:
        config = reuse(config, REPO, frames=False)
    config.setdefault("latex", {})["use_jupyterbook_latex"] = False
    sphinx = config.setdefault("sphinx", {})
    sphinx.setdefault("local_extensions", {})["pdf_singlehtml"] = str(REPO / "tools")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    print(f"wrote {path}")


# What the single-page build leaves out (Sphinx adds MathJax and myst-nb the widget
# scripts only to pages it sees math or widgets on; the single page is the root
# document): the same vendored scripts the HTML book loads.
HEAD_SCRIPTS = """
<script>window.MathJax = {"options": {"processHtmlClass": "tex2jax_process|mathjax_process|math|output_area"}}</script>
<script defer="defer" src="_static/mathjax/tex-chtml.js"></script>
<script src="_static/require.js"></script>
<script src="_static/widgets-paths.js"></script>
<script src="_static/embed-amd.js"></script>
<script defer="defer" src="_static/mathjax-hub-shim.js"></script>
"""


STATE_MIME = "application/vnd.jupyter.widget-state+json"


def print_page(singlehtml: Path) -> Path:
    """The single page, copied to the build's root as print.html with the scripts it lacks.

    The single-page builder writes the root document (book/intro.html) with links
    relative to the build's root, so it only renders from there.
    """
    root = singlehtml / "index.html"
    html = root.read_text(encoding="utf-8")
    m = re.search(r'url=([^"\s>]+)', html) if len(html) < 500 else None
    if m:
        html = (singlehtml / m.group(1)).read_text(encoding="utf-8")
    missing = [
        line for line in HEAD_SCRIPTS.strip().splitlines()
        if (re.search(r'src="([^"]+)"', line) is None or re.search(r'src="([^"]+)"', line).group(1) not in html)
        and not ("window.MathJax" in line and "window.MathJax" in html)
    ]
    html = html.replace("</head>", "\n".join(missing) + "\n</head>", 1)
    # The single page holds the widget views but not their state: take it from the
    # notebooks this build executed (_build/jupyter_execute), as the HTML pages do, and, where the
    # build took its outputs from the run's jupyter-cache (make test), from the cache's executed
    # notebooks: there jupyter_execute holds the committed notebooks, whose widgets have other ids.
    if STATE_MIME not in html:
        state: dict = {}
        executed = sorted((singlehtml.parent / "jupyter_execute").rglob("*.ipynb"))
        executed += sorted((REPO / "_build" / ".jupyter_cache" / "executed").glob("*/base.ipynb"))
        for nb in executed:
            meta = json.loads(nb.read_text(encoding="utf-8"))["metadata"].get("widgets", {})
            state.update(meta.get(STATE_MIME, {}).get("state", {}))
        blob = json.dumps({"version_major": 2, "version_minor": 0, "state": state}).replace("</", "<\\/")
        html = html.replace("</body>", f'<script type="{STATE_MIME}">{blob}</script>\n</body>', 1)
    out = singlehtml / "print.html"
    out.write_text(html, encoding="utf-8")
    return out


A4_COLUMN_PX = round((210 - 2 * 14) / 25.4 * 96)
"""The width of A4's printable area in CSS px (the @page margins above): the layout the print gets."""

OPEN_FOLDS = """() => {
  // the solutions' folded code cells (a chapter's folded plumbing stays folded, as the check lines do)
  for (const mark of document.querySelectorAll('span[id^="document-book/solutions/"]')) {
    const doc = mark.nextElementSibling;
    if (doc) doc.querySelectorAll('details:not(.cm-checks)').forEach(d => { d.open = true; });
  }
  // dropdowns (the discussions): the printed page has no button to open them
  document.querySelectorAll('.toggle-hidden').forEach(e => e.classList.remove('toggle-hidden'));
  document.querySelectorAll('details.toggle-details').forEach(d => { d.open = true; });
}"""

HEADINGS = """() => [...document.querySelectorAll('h1, h2, h3, h4, h5, h6, [role="heading"]')]
  .filter(h => h.getClientRects().length > 0)
  .map(h => { const c = h.cloneNode(true); c.querySelectorAll('.headerlink').forEach(a => a.remove());
              return c.textContent.replace(/\\s+/g, ' ').trim(); })"""


def _letters(text: str) -> str:
    return re.sub(r"\W+", "", text).lower()


def retitle_bookmarks(pdf: Path, titles: list[str]) -> str:
    """Chromium makes the bookmarks from the headings but takes their text as laid out: a heading
    that wraps loses the space at the break ("iftalking") or its last line, and some come out
    twice over. Each bookmark is matched, in document order, to the next heading whose letters it
    holds (whole, cut short or doubled) and takes that heading's own text; say how many."""
    from pypdf import PdfWriter
    from pypdf.generic import NameObject, TextStringObject

    writer = PdfWriter(clone_from=str(pdf))
    root = writer._root_object.get("/Outlines")
    items = []

    def walk(node) -> None:
        while node is not None:
            node = node.get_object()
            items.append(node)
            walk(node.get("/First"))
            node = node.get("/Next")

    walk(root.get_object().get("/First") if root is not None else None)
    plain = [_letters(t) for t in titles]
    fixed, at = 0, 0
    for item in items:
        mark = _letters(str(item.get("/Title", "")))
        for k in range(at, min(at + 8, len(titles))):
            if mark and (mark == plain[k] or mark == plain[k] * 2 or plain[k].startswith(mark)):
                if str(item.get("/Title", "")) != titles[k]:
                    item[NameObject("/Title")] = TextStringObject(titles[k])
                    fixed += 1
                at = k + 1
                break
    with pdf.open("wb") as out:
        writer.write(out)
    return f"{len(items)} bookmarks, {fixed} retitled from their headings' text"


WIDER_THAN_COLUMN = """(column) => {
  const main = document.querySelector('.bd-article') || document.body;
  const right = main.getBoundingClientRect().left + column;
  const found = [];
  for (const el of main.querySelectorAll('table, pre, img, .widget-subarea, .cell_output .output')) {
    if (!el.offsetParent && el.tagName !== 'IMG') continue;
    const box = el.getBoundingClientRect();
    const cut = Math.max(box.right - right, el.scrollWidth - el.clientWidth);
    if (box.width > 0 && cut > 1) {
      const doc = el.closest('section[id]');
      found.push({what: el.tagName.toLowerCase() + (el.className ? '.' + String(el.className).split(' ')[0] : ''),
                  section: doc ? doc.id : '', text: (el.innerText || el.alt || '').trim().slice(0, 80),
                  cut_px: Math.round(cut)});
    }
  }
  return found;
}"""

FOOTER = ('<div style="width:100%; font-size:8px; color:#555; text-align:center; '
          'font-family:sans-serif"><span class="pageNumber"></span> / <span class="totalPages"></span></div>')


def main() -> int:
    if len(sys.argv) in (3, 4) and sys.argv[1] == "--config":
        write_config(Path(sys.argv[2]), reuse_run=sys.argv[3:] == ["--reuse"])
        return 0
    if len(sys.argv) != 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    page_path, out = Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve()
    if page_path.is_file():
        page_path = print_page(page_path.parent)
    if not page_path.is_file():
        print(f"no single-page build at {page_path}: run `make pdf`", file=sys.stderr)
        return 1
    import browsing

    start = time.perf_counter()
    out.parent.mkdir(parents=True, exist_ok=True)
    with browsing.serve(page_path.parent) as base, browsing.chromium() as browser:
        context = browsing.new_context(browser)
        page, visit = browsing.open_page(context, base, page_path.name, "desktop")
        # Lazy pictures below the fold load before printing.
        page.evaluate("() => document.querySelectorAll('img[loading=lazy]').forEach(i => i.loading = 'eager')")
        page.wait_for_function("() => [...document.images].every(i => i.complete)", timeout=30_000)
        page.evaluate(OPEN_FOLDS)
        page.add_style_tag(content=PRINT_CSS)
        page.emulate_media(media="print")
        page.set_viewport_size({"width": A4_COLUMN_PX, "height": 1000})
        page.wait_for_timeout(300)
        wide = page.evaluate(WIDER_THAN_COLUMN, A4_COLUMN_PX)
        titles = page.evaluate(HEADINGS)
        page.pdf(path=str(out), format="A4", print_background=True, prefer_css_page_size=True,
                 outline=True, tagged=True, display_header_footer=True,
                 header_template="<span></span>", footer_template=FOOTER)
        context.close()
    (out.parent / "headings.json").write_text(json.dumps(titles, indent=0, ensure_ascii=False), encoding="utf-8")
    print(retitle_bookmarks(out, titles))
    (out.parent / "layout.json").write_text(json.dumps(wide, indent=1), encoding="utf-8")
    for w in wide[:10]:
        print(f"warning: wider than the printed column by {w['cut_px']} px: {w['what']} in #{w['section']}: "
              f"{w['text']!r}", file=sys.stderr)
    if visit.offsite:
        print(f"warning: {len(visit.offsite)} requests to the internet were blocked", file=sys.stderr)
    if visit.render:  # the explorers' pictures would be missing from the PDF
        print(f"error: {visit.render}", file=sys.stderr)
        return 1
    from pypdf import PdfReader

    stats = {"pages": len(PdfReader(str(out)).pages), "megabytes": round(out.stat().st_size / 1e6, 1),
             "seconds": round(time.perf_counter() - start), "wider_than_column": len(wide)}
    (out.parent / "stats.json").write_text(json.dumps(stats), encoding="utf-8")
    print(f"{out} ({stats['pages']} A4 pages, {stats['megabytes']} MB, {stats['seconds']} s; "
          f"{len(wide)} elements wider than the column)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
