"""Each page's embedded widget state in a stable order: explorer by explorer, sorted by key.

myst-nb embeds a notebook's widget state (``metadata.widgets``) in the page as one JSON
script. Its models come in the order the kernel happened to store them: insertion order
after a fresh execution, model-id order (random UUIDs) once jupyter-cache has written the
notebook back. Two builds of the same notebooks could therefore list the explorers in
different orders (the full edition, which executes, and the student edition, which reads
the cache), and a test that took "the first explorer" met a different one each time.

Before myst-nb writes the script (``html-page-context`` at a lower priority than its
own handler), the models are put in this order:

1. each explorer (a model with the class ``cm-frames`` and a ``cm-frames-<key>`` class),
   in the order of its key, followed by every model it refers to, depth first, in the
   order its state names them (children, layout, style, ...);
2. then the models no explorer refers to, each tree by the same walk, the trees sorted by
   their content (model name, module and state, as JSON with sorted keys).

Inside each model the keys are sorted, as jupyter-cache stores them. Model ids stay as they
are (the views in the page point at them); only the order changes, so two builds that share
their executions give byte-identical states.
"""
from __future__ import annotations

import json
from typing import Any

REF = "IPY_MODEL_"
FRAMES = "cm-frames"


def _refs(value: Any):
    """Model ids a state value refers to, in the order they appear."""
    if isinstance(value, str):
        if value.startswith(REF):
            yield value.removeprefix(REF)
    elif isinstance(value, list):
        for item in value:
            yield from _refs(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _refs(item)


def explorer_key(model: dict) -> str | None:
    """The explorer key of a model (``cm-frames-<key>``), or None for a model that is no explorer."""
    classes = model.get("state", {}).get("_dom_classes", [])
    if FRAMES not in classes:
        return None
    return next((c.removeprefix(f"{FRAMES}-") for c in classes
                 if c.startswith(f"{FRAMES}-") and c not in (f"{FRAMES}-table", f"{FRAMES}-picture")), None)


def _content(model: dict) -> str:
    return json.dumps({k: model.get(k) for k in ("model_name", "model_module", "state")}, sort_keys=True)


def ordered_state(state: dict[str, dict]) -> dict[str, dict]:
    """``state`` (model id → model) reordered as the module docstring says; same keys, same values."""
    order: list[str] = []
    seen: set[str] = set()

    def walk(model_id: str) -> None:
        stack = [model_id]
        while stack:
            current = stack.pop()
            if current in seen or current not in state:
                continue
            seen.add(current)
            order.append(current)
            stack.extend(reversed(list(_refs(state[current].get("state", {})))))

    keyed = sorted(((explorer_key(model), model_id) for model_id, model in state.items()
                    if explorer_key(model) is not None), key=lambda pair: pair[0])
    for _, model_id in keyed:
        walk(model_id)
    referred = {ref for model in state.values() for ref in _refs(model.get("state", {}))}
    tops = sorted((m for m in state if m not in seen and m not in referred), key=lambda m: _content(state[m]))
    for model_id in tops:
        walk(model_id)
    # models left only in reference cycles: by content
    for model_id in sorted((m for m in state if m not in seen), key=lambda m: _content(state[m])):
        walk(model_id)
    return {model_id: _sorted_keys(state[model_id]) for model_id in order}


def _sorted_keys(model: dict) -> dict:
    """The model with its own keys sorted at every level, as jupyter-cache stores it (nbformat writes
    JSON with sorted keys; a fresh execution keeps the kernel's insertion order)."""
    return json.loads(json.dumps(model, sort_keys=True))


def _page_context(app: Any, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    from myst_nb.core.render import sanitize_script_content

    js_files = getattr(app.env, "nb_metadata", {}).get(pagename, {}).get("js_files", {})
    entry = js_files.get("ipywidgets_state")
    if not entry or not entry[1].get("body"):
        return
    data = json.loads(entry[1]["body"])
    data["state"] = ordered_state(data.get("state", {}))
    entry[1]["body"] = sanitize_script_content(json.dumps(data))


def setup(app: Any) -> dict:
    # myst-nb adds the page's scripts at the default priority (500): run before it
    app.connect("html-page-context", _page_context, priority=400)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
