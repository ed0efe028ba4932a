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
