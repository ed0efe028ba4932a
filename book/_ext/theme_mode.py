"""Give the theme a colour mode on a reader's first visit.

pydata-sphinx-theme 0.15 copies ``localStorage.mode`` into ``<html data-mode>``
and, when the reader has never chosen a mode, copies an empty string; its
start-up code then logs "Got invalid theme mode: . Resetting to auto." as a
console error on the first page a new reader opens. This inline script, which
runs after the theme's and before the page is ready, fills in "auto" (what the
theme falls back to anyway), so the first visit is as quiet as every other.
"""
from __future__ import annotations

from typing import Any

FIRST_VISIT_MODE = (
    'if (!document.documentElement.dataset.mode) { document.documentElement.dataset.mode = "auto"; }'
)


def setup(app: Any) -> dict:
    app.add_js_file(None, body=FIRST_VISIT_MODE, priority=1)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
