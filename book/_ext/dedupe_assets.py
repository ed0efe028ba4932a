"""Write each script and stylesheet once per page.

sphinx-thebe 0.3.1 registers its inline configuration (``const THEBE_JS_URL
= ...``) both with the builder and with the registry, so Sphinx 7 writes it
twice and the browser logs "Identifier 'THEBE_JS_URL' has already been
declared" on every page; sphinx-togglebutton's inline setting is doubled the
same way. This extension drops exact repeats (same file, or same inline
body, same attributes) from each page's script and stylesheet lists.
"""
from __future__ import annotations

from typing import Any


def _key(asset: Any) -> tuple:
    """File and attributes (an inline script's body is one of them), but not the priority; an inline
    script's file is None in one copy and "" in the other, so both count as no file."""
    attributes = getattr(asset, "attributes", {}) or {}
    filename = getattr(asset, "filename", asset) or ""
    return (str(filename), tuple(sorted((k, str(v)) for k, v in attributes.items())))


def _dedupe(app: Any, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    for name in ("script_files", "css_files"):
        assets = context.get(name)
        if not assets:
            continue
        seen: set[tuple] = set()
        kept = []
        for asset in assets:
            key = _key(asset)
            if key in seen:
                continue
            seen.add(key)
            kept.append(asset)
        context[name] = kept


def setup(app: Any) -> dict:
    app.connect("html-page-context", _dedupe, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

