"""Plain data across the sandbox wall: encode Python values as JSON, decode them strictly.

This module is copied into every sandbox (the runner encodes the student's
values with it) and used by the grader (which decodes them). It imports only
the standard library. The grader never trusts what arrives: ``decode`` accepts
exactly the shapes ``encode`` writes and builds only built-in values
(``None``, ``bool``, ``int``, ``float``, ``str``, ``list``, ``tuple``,
``dict``, ``Ellipsis``) or an inert ``Opaque`` standing for anything else.

Tagged shapes (a JSON object is always a tag, never a Python dict)::

    {"$": "tuple", "v": [...]}       {"$": "dict", "v": [[key, value], ...]}
    {"$": "float", "v": "nan" | "inf" | "-inf"}     {"$": "ellipsis"}
    {"$": "opaque", "type": "...", "repr": "..."}

NumPy scalars become the Python number or bool they hold (``.item()``) and
arrays become lists, so ``np.True_`` is ``True`` and ``np.int64(4)`` is ``4``.
"""
from __future__ import annotations

import math

MAX_DEPTH = 24
MAX_ITEMS = 200_000
MAX_STR = 100_000
MAX_INT_DIGITS = 1_000


class Invalid(ValueError):
    """Data that does not have one of the shapes ``encode`` writes."""


class Opaque:
    """A value that is not plain data (a class instance, a set, a module ...): never equal to anything."""

    __slots__ = ("type_name", "text")

    def __init__(self, type_name: str, text: str) -> None:
        self.type_name, self.text = type_name, text

    def __repr__(self) -> str:
        return f"<{self.type_name}: {self.text}>" if self.text else f"<{self.type_name}>"

    def __eq__(self, other: object) -> bool:
        return False

    __hash__ = None  # type: ignore[assignment]


def _short(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def encode(value, *, _depth: int = 0, _count: list | None = None):
    """``value`` as JSON-ready data (see the module docstring); never raises for odd objects."""
    count = _count if _count is not None else [0]
    count[0] += 1
    if count[0] > MAX_ITEMS or _depth > MAX_DEPTH:
        return {"$": "opaque", "type": "too-large", "repr": "nested too deep or too many items"}
    kind = type(value)
    module = getattr(kind, "__module__", "")
    if module == "numpy" and hasattr(value, "tolist"):  # NumPy scalars and arrays
        try:
            value = value.tolist()
        except Exception:
            pass
        kind = type(value)
    if value is None or value is True or value is False:
        return value
    if isinstance(value, bool):  # a bool subclass
        return bool(value)
    if isinstance(value, int):
        number = int.__int__(value)
        if abs(number) >= 10 ** MAX_INT_DIGITS:
            return {"$": "opaque", "type": "int", "repr": "an integer with more than 1,000 digits"}
        return number
    if isinstance(value, float):
        number = float.__float__(value)
        if math.isnan(number):
            return {"$": "float", "v": "nan"}
        if math.isinf(number):
            return {"$": "float", "v": "inf" if number > 0 else "-inf"}
        return number
    if isinstance(value, str):
        text = str.__str__(value)
        return text if len(text) <= MAX_STR else {"$": "opaque", "type": "str", "repr": _short(text)}
    if value is Ellipsis:
        return {"$": "ellipsis"}
    if isinstance(value, tuple):
        return {"$": "tuple", "v": [encode(v, _depth=_depth + 1, _count=count) for v in tuple.__iter__(value)]}
    if isinstance(value, list):
        return [encode(v, _depth=_depth + 1, _count=count) for v in list.__iter__(value)]
    if isinstance(value, dict):
        return {"$": "dict", "v": [[encode(k, _depth=_depth + 1, _count=count),
                                    encode(v, _depth=_depth + 1, _count=count)]
                                   for k, v in dict.items(value)]}
    try:
        text = _short(repr(value))
    except BaseException:  # noqa: BLE001  (a student's __repr__ may do anything)
        text = ""
    return {"$": "opaque", "type": _short(getattr(kind, "__name__", "object"), 80), "repr": text}


_FLOATS = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


def decode(data, *, _depth: int = 0):
    """The value ``encode`` described; raises ``Invalid`` for anything else."""
    if _depth > MAX_DEPTH + 1:
        raise Invalid("nested too deep")
    kind = type(data)
    if data is None or kind is bool or kind is str:
        return data
    if kind is int:
        if abs(data) >= 10 ** MAX_INT_DIGITS:
            raise Invalid("integer too large")
        return data
    if kind is float:
        if not math.isfinite(data):
            raise Invalid("a non-finite float must be tagged")
        return data
    if kind is list:
        return [decode(v, _depth=_depth + 1) for v in data]
    if kind is not dict:
        raise Invalid(f"unexpected JSON type {kind.__name__}")
    tag = data.get("$")
    if tag == "tuple" and type(data.get("v")) is list and len(data) == 2:
        return tuple(decode(v, _depth=_depth + 1) for v in data["v"])
    if tag == "dict" and type(data.get("v")) is list and len(data) == 2:
        out = {}
        for pair in data["v"]:
            if type(pair) is not list or len(pair) != 2:
                raise Invalid("a dict entry must be a [key, value] pair")
            key = decode(pair[0], _depth=_depth + 1)
            try:
                hash(key)
            except TypeError:
                raise Invalid("a dict key must be hashable") from None
            out[key] = decode(pair[1], _depth=_depth + 1)
        return out
    if tag == "float" and data.get("v") in _FLOATS and len(data) == 2:
        return _FLOATS[data["v"]]
    if tag == "ellipsis" and len(data) == 1:
        return Ellipsis
    if tag == "opaque" and type(data.get("type")) is str and type(data.get("repr")) is str and len(data) == 3:
        return Opaque(_short(data["type"], 80), _short(data["repr"]))
    raise Invalid(f"unknown tag {str(tag)[:40]!r}")


def call_key(name: str, args: list, kwargs: dict) -> str:
    """A canonical text for one call of a student function with plain arguments."""
    import json

    return json.dumps([name, encode(list(args)), encode(dict(sorted(kwargs.items())))],
                      sort_keys=True, separators=(",", ":"))
