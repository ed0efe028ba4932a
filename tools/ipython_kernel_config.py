"""Kernel configuration the Makefile installs into the venv (.venv/etc/ipython/).

The book's kernels are started on this machine by nbclient (myst-nb, nbval, tools/refresh.py),
over loopback TCP. ipykernel 7 warns on every start that TCP is unencrypted: 12 identical warnings
in every build log, which hide the lines that matter. The warning does not apply to a kernel that
only ever listens on 127.0.0.1 for its own parent process, so this drops that one message and no
other.
"""
import logging


class _DropUnencryptedTcpWarning(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Kernel is running over TCP without encryption")


logging.getLogger("IPKernelApp").addFilter(_DropUnencryptedTcpWarning())

# Issue 41: the chapters' static figures at twice their pixels, shown at their own size in CSS px
# (the PNG's width and height ride along in the output's metadata): sharp on high-density screens.
# PNG rather than SVG: nbval compares no PNG bytes, and an SVG's text needs the reader's fonts.
c = get_config()  # noqa: F821 - IPython's config loader provides it
c.InlineBackend.figure_formats = {"retina"}

# A table shown as a pandas Styler (the worked tables) is HTML; its plain-text form was pandas' default,
# "<pandas.io.formats.style.Styler at 0x7f...>", a memory address that changed on every run. It now says
# what it is, the same on every run.
c.InteractiveShellApp.exec_lines = [
    "get_ipython().display_formatter.formatters['text/plain'].for_type_by_name("
    "'pandas.io.formats.style', 'Styler', lambda table, p, cycle: p.text("
    "f'<table: {table.data.shape[0]:,} rows, {table.data.shape[1]:,} columns>'))",
]

# `make refresh` (tools/refresh.py) names the notebook it runs in CLUSTERMATH_STABLE_WIDGET_IDS: each widget
# then gets an id computed from that name and its place in the order of creation, instead of a random one,
# so a notebook refreshed twice stores the same widget state and a refresh changes only what changed
# (random ids rewrote about 8,000 lines of chapter 1 on every refresh). The ids differ between notebooks.
# Any other kernel (the book's build, nbval, JupyterLab, Voila) keeps ipywidgets' random ids.
import os  # noqa: E402

if os.environ.get("CLUSTERMATH_STABLE_WIDGET_IDS"):
    import hashlib
    import itertools

    from ipywidgets.widgets import widget as _widget

    _created = itertools.count()
    _seed = os.environ["CLUSTERMATH_STABLE_WIDGET_IDS"]
    _open = _widget.Widget.open

    def _open_with_a_stable_id(self: _widget.Widget) -> None:
        if self.comm is None and self._model_id is None:
            self._model_id = hashlib.sha1(f"{_seed}:{next(_created)}".encode()).hexdigest()[:32]
        _open(self)

    _widget.Widget.open = _open_with_a_stable_id
