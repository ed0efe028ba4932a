"""Run a model over a sequence of rows and keep the source's counters.

Each chapter-1 model in source 000 carries two 8-bit counters that tick on
every strobed row: a total (``n_measures``, ``n_collectives`` ...) and a count
of rows that failed its property (``n_poor``, ``n_over_budget`` ...; for the
assembled model, ``n_scales`` counts rows that *pass*).  ``run`` reproduces
them, so a worked table's totals are computed rather than counted by hand.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Callable, Iterable, Mapping, TypeVar

from .validate import U16_MAX

__all__ = ["ModelSpec", "Tally", "counted", "output_ports", "spec_of", "run", "MAX_ROWS", "SPEC_SHEET_BUILD",
           "saturated"]

SPEC_SHEET_BUILD = "spec-sheet build"
"""The book's one name for a model's broken build (the one that takes the specification sheet at its
word): worked tables, explorers and the glossary all use it."""

MAX_ROWS = 255
"""The source's counters are 8 bits wide; ``run`` refuses more rows than they hold."""

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class ModelSpec:
    """What ``run`` needs to know about a model: its counters and its broken build."""

    name: str
    broken_flag: str
    total: str
    flagged: str
    counts: Callable[[Any], bool]
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    section: str


_REGISTRY: dict[str, ModelSpec] = {}


def output_ports(record: type) -> tuple[str, ...]:
    """The output port names of a model: the fields of its result dataclass, in order."""
    return tuple(f.name for f in fields(record))


def counted(
    *,
    broken_flag: str,
    total: str,
    flagged: str,
    counts: Callable[[Any], bool],
    inputs: tuple[str, ...],
    outputs: tuple[str, ...],
    section: str,
) -> Callable[[F], F]:
    """Register a model's counters (a decorator; the function is returned unchanged)."""

    def register(model: F) -> F:
        _REGISTRY[model.__name__] = ModelSpec(
            model.__name__, broken_flag, total, flagged, counts, inputs, outputs, section
        )
        return model

    return register


def spec_of(model: Callable[..., Any] | str) -> ModelSpec:
    """The registered ``ModelSpec`` of a model function (or of its name)."""
    name = model if isinstance(model, str) else model.__name__
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ValueError(f"model must be one of {sorted(_REGISTRY)}, got {name!r}") from None


@dataclass(frozen=True)
class Tally:
    """The results of one run and the two counters the source keeps.

    Counters are reachable by the source's names: ``tally.n_poor`` or
    ``tally["n_poor"]``.
    """

    model: str
    results: tuple[Any, ...]
    counters: Mapping[str, int] = field(default_factory=dict)

    def __getattr__(self, name: str) -> int:
        counters = object.__getattribute__(self, "counters")
        if name in counters:
            return counters[name]
        raise AttributeError(name)

    def __getitem__(self, name: str) -> int:
        return self.counters[name]


def run(model: Callable[..., Any], rows: Iterable[Mapping[str, Any]], **build: Any) -> Tally:
    """Evaluate ``model(**row, **build)`` for every row and count as the source does.

    ``build`` selects the build, e.g. ``ignore_comm=True`` for the broken one.
    Raises ``ValueError`` if there are more rows than the source's 8-bit
    counters can hold (255), and whatever the model raises for a bad row.
    """
    spec = spec_of(model)
    rows = list(rows)
    if len(rows) > MAX_ROWS:
        raise ValueError(
            f"rows must number 0..{MAX_ROWS} (the source's counters are 8 bits), got {len(rows)}"
        )
    results = tuple(model(**row, **build) for row in rows)
    flagged = sum(1 for r in results if spec.counts(r))
    return Tally(spec.name, results, {spec.total: len(results), spec.flagged: flagged})


def saturated(result: Any) -> dict[str, tuple[str, ...]]:
    """The outputs of a chapter-1 result that the 16-bit ceiling makes untrustworthy.

    The chapter-1 models keep source 000's 16-bit outputs, which stop at 65,535:
    1,024 nodes of 1,000 TFLOPS peak at 65,535 (truly 1,024,000) and deliver
    32,767 at 50% (truly 512,000). Both are flagged by the explorers.

    An integer output at 65,535 maps to ``()``: it saturated (or stands for
    "unbounded"), and the true value is at least that. An output computed from
    such an output (directly or through others, as the result class's
    ``COMPUTED_FROM`` says) maps to the saturated outputs it was computed
    from (the roots of the chain: ``affordable`` maps to ``write_s``): its value is not the true one either, and may be smaller (32,767
    achieved TFLOPS from a saturated peak) or larger (a cost per useful
    TFLOPS over a saturated useful figure). Booleans are included: a
    threshold test on a saturated value can give the wrong verdict.
    A result without ``COMPUTED_FROM`` (no chapter-1 model) gives ``{}``
    unless an integer output sits at the ceiling.
    """
    found: dict[str, tuple[str, ...]] = {}
    names = [f.name for f in fields(result)]
    for name in names:
        value = getattr(result, name)
        if isinstance(value, int) and not isinstance(value, bool) and value == U16_MAX:
            found[name] = ()
    computed_from: dict[str, tuple[str, ...]] = getattr(type(result), "COMPUTED_FROM", {})
    changed = True
    while changed:  # follow chains (write_s -> overhead_pct -> affordable) to a fixed point
        changed = False
        for name in names:
            if name in found:
                continue
            roots = [r for u in computed_from.get(name, ()) if u in found for r in (found[u] or (u,))]
            if roots:
                found[name] = tuple(dict.fromkeys(roots))
                changed = True
    return found
