"""The browser checks are alive: each one reports its defect when the defect comes back.

A check that never fails proves nothing (the source's testbench lesson: a test
suite is judged by the wrong designs it catches). Here one chapter page is
served with every defect the checks guard planted in its HTML on the way to
the browser (``browsing.visit_page(..., plant=...)``; the built file is not
touched), and each finder of ``test_pages.py`` must report its own defect
while the same page, unplanted, passes them all (``test_pages.py``). The link
check gets a two-page site with a missing file and a missing anchor.

Each planted defect is one the reader review found or one a check names:
a console error and a console warning, a request to the internet, raw MyST and TeX in the prose,
a formula MathJax cannot parse,
a code output cut off without a scrollbar, an unfolded code line wider than its column, a table with 1 px padding, pale grey text on
white (axe's color-contrast, serious), a table drawn in its box's colour in dark mode (1:1,
which axe leaves undecided), an image without alt text (axe-core's image-alt, critical), explorer controls
pushed off the screen, control labels cut short with an ellipsis, a navigation drawer whose button opens nothing (phone
width), and static explorers whose controls move with no kernel and no note
(the static-widgets script removed), a block wider than the phone's screen, a wide table whose
first column scrolls away, a held first column 8 px in from its box's edge in dark mode, a dropdown whose choice is cut, and the "back to top" button over the
text (issue 40).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import browsing
from test_links import broken_links
from test_pages import (
    axe_problems,
    clipped_problems,
    code_input_problems,
    back_to_top_problems,
    console_problems,
    contrast_problems,
    drawer_problems,
    dropdown_problems,
    explorer_problems,
    offsite_problems,
    padding_problems,
    page_width_problems,
    raw_markup_problems,
    static_explorer_problems,
    wide_table_problems,
)

PAGE = "notebooks/03_where_the_traffic_lands.html"  # the smallest chapter with an explorer
MARK = "planted-defect"

STYLE = f"""<style id="{MARK}-style">
  .widget-subarea .widget-slider {{ position: relative; left: 3000px; }}
  html body .cm-explorer .widget-inline-hbox .widget-label {{ white-space: nowrap !important; overflow: hidden !important; text-overflow: ellipsis !important; width: 30px !important; }}
  #pst-primary-sidebar, .bd-sidebar-primary {{ display: none !important; }}
  html[data-theme="dark"] .{MARK}-ghost {{ color: #cfd6dd; background-color: #cfd6dd; }}
  html[data-theme="dark"] .{MARK}-strip {{ padding: 8px; }}
  #pst-back-to-top {{ display: block !important; position: fixed; left: 50vw !important; right: auto !important;
                     top: 90vh !important; bottom: auto !important; transform: translate(-50%) !important; }}
</style>"""
CONSOLE = (f'<script>console.error("{MARK}: console");'
           f'console.warn("{MARK}: console warning");</script>')
BODY = f"""
<section id="{MARK}">
  <p>{MARK}: a role left raw, {{math}}`x^2`.</p>
  <p>{MARK}: a TeX command left raw, \\frac{{a}}{{b}}.</p>
  <div class="math notranslate nohighlight">\\[\\frac{{1}}\\]</div>
  <div class="cell_output"><pre style="overflow-x: hidden; width: 200px">{MARK}: {"0123456789 " * 40}</pre></div>
  <div class="cell_input"><div class="highlight"><pre>{MARK} = check("a check line far too long for any column", {"1" * 40}, {"1" * 40}, kind="quoted")</pre></div></div>
  <table><tbody><tr><td style="padding: 1px">{MARK}</td><td style="padding: 1px">1,234</td></tr></tbody></table>
  <div class="cell_output"><div class="output text_html"><table class="{MARK}-loose"><tbody>
    <tr><td style="position: static">{MARK}: a row name that scrolls away</td>{"<td>1,234,567 TFLOPS</td>" * 14}</tr>
  </tbody></table></div></div>
  <div class="cell_output"><div class="output text_html {MARK}-strip"><table><tbody>
    <tr><td style="position: sticky; left: 0; background: inherit">{MARK}: a held row name</td>{"<td>1,234,567 TFLOPS</td>" * 14}</tr>
  </tbody></table></div></div>
  <div style="width: 1500px">{MARK}: a block wider than any screen</div>
  <select style="width: 90px"><option>{MARK}: a choice far wider than its box</option></select>
  <p class="{MARK}-pale" style="color: #c8c8c8">{MARK}: pale grey text, too faint on a white page</p>
  <table><tbody><tr><td class="{MARK}-ghost">{MARK}: a table drawn in its box's colour in dark mode</td></tr></tbody></table>
  <img src="https://{MARK}.invalid/picture.png" alt="{MARK}: an image from the internet">
  <img src="data:image/gif;base64,R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7" width="40" height="40">
</section>
"""


def plant(html: str) -> str:
    """Every defect at once: the checks read different things, so each must still find its own."""
    html, n = re.subn(r'<script[^>]*static-widgets\.js[^>]*></script>', "", html)
    assert n == 1, "the page no longer loads static-widgets.js: update the drill"
    html = html.replace("</head>", STYLE + CONSOLE + "</head>", 1)
    main = re.search(r"<main[^>]*>", html)
    assert main, "the page has no <main>: update the drill"
    return html[: main.end()] + BODY + html[main.end():]


@pytest.fixture(scope="module")
def planted():
    if not (browsing.HTML_DIR / PAGE).is_file():
        pytest.skip(f"the book is not built ({browsing.HTML_DIR / PAGE} is missing)")
    with browsing.serve() as base, browsing.chromium() as browser:
        context = browsing.new_context(browser)
        visits = browsing.visit_page(context, base, PAGE, axe=True, plant=plant)
        context.close()
    return visits


def mentions(problems: list[str], *words: str) -> bool:
    return any(all(w in p for w in words) for p in problems)


def test_console_check_catches_a_console_error(planted):
    assert mentions(console_problems(planted["desktop"]), MARK, "console")


def test_offline_check_catches_a_request_to_the_internet(planted):
    assert mentions(offsite_problems(planted["desktop"]), f"{MARK}.invalid")


def test_markup_check_catches_raw_myst_and_tex(planted):
    found = raw_markup_problems(planted["desktop"])
    assert mentions(found, "MyST role") and mentions(found, "TeX command") and mentions(found, "TeX error"), found


@pytest.mark.parametrize("width", list(browsing.WIDTHS))
def test_clipping_check_catches_output_cut_without_scrollbar(planted, width):
    assert mentions(clipped_problems(planted[width]), MARK, "cut at"), clipped_problems(planted[width])


@pytest.mark.parametrize("width", list(browsing.WIDTHS))
def test_code_check_catches_an_unfolded_code_line_wider_than_its_column(planted, width):
    found = code_input_problems(planted[width])
    assert mentions(found, MARK, "fold the cell"), found


def test_console_check_catches_a_console_warning(planted):
    # the widget library's two strict-mode warnings once sat in every explorer page's console
    assert mentions(console_problems(planted["desktop"]), "warning", MARK), planted["desktop"].console


@pytest.mark.parametrize("width", list(browsing.WIDTHS))
def test_page_width_check_catches_a_page_wider_than_the_screen(planted, width):
    found = page_width_problems(planted[width])
    assert mentions(found, "px wide on a") and mentions(found, MARK, "ends at"), found


@pytest.mark.parametrize("width", list(browsing.WIDTHS))
def test_table_check_catches_a_wide_table_whose_first_column_scrolls_away(planted, width):
    found = wide_table_problems(planted[width])
    assert mentions(found, MARK, "scrolls with its first column"), found


def test_table_check_catches_a_held_column_away_from_its_box_edge_in_dark_mode(planted):
    # issue 40: in dark mode the theme pads an output box by 8 px, and a held first column stuck 8 px
    # in, the scrolled columns showing through beside it (dark mode is judged at phone width)
    found = wide_table_problems(planted["phone"])
    assert mentions(found, MARK, "dark mode", "8 px in from its box's edge"), found
    assert not mentions(found, MARK, "light mode"), found


@pytest.mark.parametrize("width", list(browsing.WIDTHS))
def test_back_to_top_check_catches_the_button_over_the_text(planted, width):
    assert mentions(back_to_top_problems(planted[width]), "covers the text column"), planted[width].dom["backToTop"]


@pytest.mark.parametrize("width", list(browsing.WIDTHS))
def test_dropdown_check_catches_a_choice_cut_short(planted, width):
    assert mentions(dropdown_problems(planted[width]), MARK, "needs"), planted[width].dom["cutChoices"]


def test_padding_check_catches_a_tight_table(planted):
    assert mentions(padding_problems(planted["desktop"]), "1 px", MARK)


def test_contrast_check_catches_pale_text(planted):
    found = contrast_problems(planted["desktop"])
    assert mentions(found, "light:", f"{MARK}-pale"), found


def test_contrast_check_catches_text_in_its_background_colour_in_dark_mode(planted):
    # axe leaves 1:1 text undecided (chapter 6's tables once vanished in dark mode unnoticed)
    found = contrast_problems(planted["desktop"])
    assert mentions(found, "dark:", f"{MARK}-ghost"), found


def test_axe_catches_an_image_without_alt_text(planted):
    assert mentions(axe_problems(planted["desktop"]), "image-alt"), planted["desktop"].axe


def test_layout_check_catches_controls_off_the_screen(planted):
    assert mentions(explorer_problems(planted["desktop"]), "controls off the screen")


def test_explorer_check_catches_a_label_cut_short(planted):
    # "communication per step (..." in chapter 1 once hid the unit of the slider it names
    assert mentions(explorer_problems(planted["desktop"]), "labels cut short")


def test_drawer_check_catches_a_navigation_button_that_opens_nothing(planted):
    assert mentions(drawer_problems(planted["phone"]), "navigation"), planted["phone"].drawers


def test_static_check_catches_live_controls_without_a_kernel(planted):
    found = static_explorer_problems(planted["desktop"])
    assert mentions(found, "controls move with no kernel") and mentions(found, "how to make it live"), found


def test_link_check_catches_a_missing_page_and_a_missing_anchor(tmp_path: Path):
    (tmp_path / "a.html").write_text('<a href="b.html#here">ok</a> <a href="b.html#gone">anchor</a> '
                                     '<a href="c.html">page</a> <a href="https://example.org">offsite</a>')
    (tmp_path / "b.html").write_text('<h1 id="here">B</h1>')
    broken, checked = broken_links([tmp_path / "a.html", tmp_path / "b.html"], root=tmp_path)
    assert checked == 3
    assert len(broken) == 2 and mentions(broken, "#gone") and mentions(broken, "c.html"), broken
