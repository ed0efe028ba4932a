"""book/_ext/widget_state_order.py: a page's widget state, explorer by explorer, sorted by key.

The order must not depend on the order the kernel stored the models in (insertion order after a
fresh execution, model-id order once jupyter-cache has written the notebook back): every shuffle of
the same models gives the same order, each explorer comes with everything it refers to, and no model
is lost or changed.
"""
from __future__ import annotations

import importlib.util
import json
import random
from pathlib import Path

import pytest

EXT = Path(__file__).resolve().parent.parent / "book" / "_ext" / "widget_state_order.py"
_spec = importlib.util.spec_from_file_location("widget_state_order", EXT)
order = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(order)


def model(name: str, classes=(), **state) -> dict:
    return {"model_name": name, "model_module": "@jupyter-widgets/controls", "state": {"_dom_classes": list(classes), **state}}


def explorer_state() -> dict[str, dict]:
    """Two explorers ('zeta' with a picture, 'alpha' with a table only) and one plain widget."""
    return {
        "lay1": model("LayoutModel"),
        "zeta": model("VBoxModel", ("cm-explorer", "cm-frames", "cm-frames-zeta"),
                      children=["IPY_MODEL_zs", "IPY_MODEL_zp"], layout="IPY_MODEL_lay1"),
        "zs": model("IntSliderModel", ("cm-control-0",), style="IPY_MODEL_sty"),
        "zp": model("ImageModel", ("cm-frames-picture",)),
        "sty": model("SliderStyleModel"),
        "alpha": model("VBoxModel", ("cm-explorer", "cm-frames", "cm-frames-alpha"), children=["IPY_MODEL_at"]),
        "at": model("HTMLModel", ("cm-frames-table",), value="<table></table>"),
        "plain": model("ButtonModel", description="a button no explorer holds"),
        "cyc1": model("BoxModel", children=["IPY_MODEL_cyc2"]),
        "cyc2": model("BoxModel", children=["IPY_MODEL_cyc1"]),
    }


def test_explorers_come_first_by_key_each_with_what_it_refers_to():
    got = list(order.ordered_state(explorer_state()))
    assert got[:2] == ["alpha", "at"]
    assert got[2:7] == ["zeta", "zs", "sty", "zp", "lay1"]
    assert set(got[7:]) == {"plain", "cyc1", "cyc2"}


@pytest.mark.parametrize("seed", range(20))
def test_every_shuffle_gives_the_same_order_and_the_same_models(seed: int):
    state = explorer_state()
    items = list(state.items())
    random.Random(seed).shuffle(items)
    shuffled = dict(items)
    got = order.ordered_state(shuffled)
    assert list(got) == list(order.ordered_state(state))
    assert got == state
    # and the same text: keys inside each model sorted, whatever order the kernel wrote them in
    scrambled = {m: dict(reversed(list(model.items()))) for m, model in shuffled.items()}
    assert json.dumps(order.ordered_state(scrambled)) == json.dumps(order.ordered_state(state))


def test_the_key_of_a_model():
    assert order.explorer_key(model("VBoxModel", ("cm-frames", "cm-frames-table", "cm-frames-q1"))) == "q1"
    assert order.explorer_key(model("VBoxModel", ("cm-frames-q1",))) is None
    assert order.explorer_key({"state": {}}) is None


def test_an_empty_state_stays_empty():
    assert order.ordered_state({}) == {}
