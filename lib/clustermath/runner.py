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

__all__ = ["ModelSpec", "Tally", "counted", "output_ports", "spec_of", "run", "MAX_ROWS"]

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
