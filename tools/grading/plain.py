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

NumPy scalars become the Python number or bool they hold and arrays become
lists, so ``np.True_`` is ``True`` and ``np.int64(4)`` is ``4``.

Neither side runs the student's code on purpose: ``encode`` looks at a value's
exact type (``type(value)``, never ``isinstance``, which would ask the value's
``__class__``), reads built-in containers through the built-in methods, and
describes anything else by its type's name only: the student's ``__repr__``,
``__eq__`` or ``__hash__`` is never called. ``decode`` counts what it builds
(``MAX_ITEMS`` per value, and an optional shared ``Budget`` per submission,
with a deadline) and refuses a dict whose keys share hash values, the one
shape whose building costs quadratic time.
"""
from __future__ import annotations

import math
import sys
import time

MAX_DEPTH = 24
MAX_ITEMS = 200_000
"""Items one value may hold (every list entry, dict key and value, tuple entry counts)."""
MAX_STR = 100_000
MAX_INT_DIGITS = 1_000
_MAX_INT_BITS = 3_322  # 10 ** 1000 < 2 ** 3322
MAX_SHARED_HASH = 8
"""Dict keys that may share one hash value before a dict is refused (honest keys share none)."""


class Invalid(ValueError):
    """Data that does not have one of the shapes ``encode`` writes, or more of it than allowed."""


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


_TYPE_NAME = type.__dict__["__name__"]


def _type_name(kind: type) -> str:
    """A type's own name, read past any metaclass property (no student code runs)."""
    try:
        return _short(str.__str__(_TYPE_NAME.__get__(kind)), 80)
    except Exception:  # noqa: BLE001
        return "object"


_TOO_MANY = ("too many",)


def _numpy_plain(value, kind: type):
    """A NumPy scalar or array as Python data, through NumPy's own methods (never an override)."""
    numpy = sys.modules.get("numpy")
    if numpy is None:
        return None
    try:
        if issubclass(kind, numpy.ndarray):
            if numpy.ndarray.size.__get__(value) > MAX_ITEMS:
                return _TOO_MANY
            return (numpy.ndarray.tolist(value),)
        if issubclass(kind, numpy.generic):
            return (numpy.generic.item(value),)
    except Exception:  # noqa: BLE001
        return None
    return None


def encode(value, *, _depth: int = 0, _count: list | None = None):
    """``value`` as JSON-ready data (see the module docstring); never raises for odd objects."""
    count = _count if _count is not None else [0]
    count[0] += 1
    if count[0] > MAX_ITEMS or _depth > MAX_DEPTH:
        return {"$": "opaque", "type": "too-large", "repr": "nested too deep or too many items"}
    kind = type(value)
    converted = _numpy_plain(value, kind)
    if converted is _TOO_MANY:
        return {"$": "opaque", "type": "too-large", "repr": "an array with too many items"}
    if converted is not None:
        value = converted[0]
        kind = type(value)
    if value is None or value is True or value is False:
        return value
    if issubclass(kind, bool):  # a bool subclass
        return bool.__bool__(value)
    if issubclass(kind, int):
        number = int.__int__(value)
        if number.bit_length() > _MAX_INT_BITS:
            return {"$": "opaque", "type": "int", "repr": "an integer with more than 1,000 digits"}
        return number
    if issubclass(kind, float):
        number = float.__float__(value)
        if math.isnan(number):
            return {"$": "float", "v": "nan"}
        if math.isinf(number):
            return {"$": "float", "v": "inf" if number > 0 else "-inf"}
        return number
    if issubclass(kind, str):
        text = str.__str__(value)
        return text if len(text) <= MAX_STR else {"$": "opaque", "type": "str", "repr": _short(text)}
    if value is Ellipsis:
        return {"$": "ellipsis"}
    if issubclass(kind, tuple):
        return {"$": "tuple", "v": [encode(v, _depth=_depth + 1, _count=count) for v in tuple.__iter__(value)]}
    if issubclass(kind, list):
        return [encode(v, _depth=_depth + 1, _count=count) for v in list.__iter__(value)]
    if issubclass(kind, dict):
        return {"$": "dict", "v": [[encode(k, _depth=_depth + 1, _count=count),
                                    encode(v, _depth=_depth + 1, _count=count)]
                                   for k, v in dict.items(value)]}
    return {"$": "opaque", "type": _type_name(kind), "repr": ""}


class Budget:
    """What decoding one submission may still build: items, and a deadline (``time.monotonic``)."""

    def __init__(self, items: int, deadline: float = math.inf) -> None:
        self.items, self.deadline = items, deadline

    def take(self, n: int = 1) -> None:
        self.items -= n
        if self.items < 0:
            raise Invalid("more items than a submission may hand in")
        if self.items % 4096 == 0 and time.monotonic() > self.deadline:
            raise Invalid("decoding ran out of time")


_FLOATS = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


def decode(data, *, budget: Budget | None = None, _depth: int = 0, _count: list | None = None):
    """The value ``encode`` described; raises ``Invalid`` for anything else or too much of it."""
    if _depth > MAX_DEPTH + 1:
        raise Invalid("nested too deep")
    count = _count if _count is not None else [0]
    count[0] += 1
    if count[0] > MAX_ITEMS:
        raise Invalid("too many items")
    if budget is not None:
        budget.take()
    kind = type(data)
    if data is None or kind is bool or kind is str:
        return data
    if kind is int:
        if data.bit_length() > _MAX_INT_BITS:
            raise Invalid("integer too large")
        return data
    if kind is float:
        if not math.isfinite(data):
            raise Invalid("a non-finite float must be tagged")
        return data
    more = {"budget": budget, "_depth": _depth + 1, "_count": count}
    if kind is list:
        return [decode(v, **more) for v in data]
    if kind is not dict:
        raise Invalid(f"unexpected JSON type {kind.__name__}")
    tag = data.get("$")
    if tag == "tuple" and type(data.get("v")) is list and len(data) == 2:
        return tuple(decode(v, **more) for v in data["v"])
    if tag == "dict" and type(data.get("v")) is list and len(data) == 2:
        pairs = []
        for pair in data["v"]:
            if type(pair) is not list or len(pair) != 2:
                raise Invalid("a dict entry must be a [key, value] pair")
            pairs.append((decode(pair[0], **more), pair[1]))
        _check_keys(key for key, _ in pairs)
        return {key: decode(value, **more) for key, value in pairs}
    if tag == "float" and data.get("v") in _FLOATS and len(data) == 2:
        return _FLOATS[data["v"]]
    if tag == "ellipsis" and len(data) == 1:
        return Ellipsis
    if tag == "opaque" and type(data.get("type")) is str and type(data.get("repr")) is str and len(data) == 3:
        return Opaque(_short(data["type"], 80), _short(data["repr"]))
    raise Invalid(f"unknown tag {str(tag)[:40]!r}")


def _check_keys(keys) -> None:
    """Refuse keys that are unhashable, or that pile up on one hash value (building such a dict
    takes time quadratic in their number; the grader's string hashes are salted, numbers' are not)."""
    shared: dict[int, int] = {}
    for key in keys:
        try:
            h = hash(key)
        except TypeError:
            raise Invalid("a dict key must be hashable") from None
        # the hash values are distinct dict keys here, or the same one: never a pile-up of their own
        shared[h] = shared.get(h, 0) + 1
        if shared[h] > MAX_SHARED_HASH:
            raise Invalid("dict keys that share one hash value")


def call_key(name: str, args: list, kwargs: dict) -> str:
    """A canonical text for one call of a student function with plain arguments."""
    import json

    return json.dumps([name, encode(list(args)), encode(dict(sorted(kwargs.items())))],
                      sort_keys=True, separators=(",", ":"))
