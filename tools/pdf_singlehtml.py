"""Sphinx extension used only by `make pdf`'s single-page build (tools/pdf.py config).

When any extension registers a node for the `singlehtml` builder by name, Sphinx
stops falling back to the `html` handlers for that builder, and myst-nb's folded
code cells (HideCodeCellNode, registered for `html` only) stop the build with
"departing unknown node type". Give the single-page builder every html handler
it lacks.
"""


def _merge(app):
    handlers = app.registry.translation_handlers
    if app.builder.name == "singlehtml":
        single = handlers.setdefault("singlehtml", {})
        for node, pair in handlers.get("html", {}).items():
            single.setdefault(node, pair)


def setup(app):
    app.connect("builder-inited", _merge)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
