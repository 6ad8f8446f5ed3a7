"""Backend-neutral filter conditions.

The service says *what* must hold (strategy, documents, freshness window);
each `VectorIndex` translates it into its own filter types, Qdrant Edge's or
qdrant-client's. Keeping one small algebra means both backends apply exactly
the same predicate, which the congruence tests check.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Match:
    """The payload field equals one of the values."""

    key: str
    values: tuple[Any, ...]


@dataclass(frozen=True)
class Range:
    """A numeric payload field within [gte, lt) (either bound optional)."""

    key: str
    gte: float | None = None
    lt: float | None = None


@dataclass(frozen=True)
class All:
    """Every condition in `must` holds and none in `must_not` does."""

    must: tuple[Condition, ...] = ()
    must_not: tuple[Condition, ...] = field(default=())


@dataclass(frozen=True)
class Any_:
    """At least one of the conditions holds."""

    should: tuple[Condition, ...]


Condition = Match | Range | All | Any_


def match(key: str, *values: Any) -> Match:
    return Match(key, tuple(values))


def evaluate(condition: Condition | None, payload: dict) -> bool:
    """The same predicate in Python: used on expansion results (a neighbour or a
    parent outside the freshness window is not returned) and by tests."""
    if condition is None:
        return True
    if isinstance(condition, Match):
        return payload.get(condition.key) in condition.values
    if isinstance(condition, Range):
        value = payload.get(condition.key)
        if not isinstance(value, (int, float)):
            return False
        return (condition.gte is None or value >= condition.gte) and (condition.lt is None or value < condition.lt)
    if isinstance(condition, All):
        return all(evaluate(c, payload) for c in condition.must) and not any(
            evaluate(c, payload) for c in condition.must_not
        )
    if isinstance(condition, Any_):
        return any(evaluate(c, payload) for c in condition.should)
    raise TypeError(f"not a condition: {condition!r}")
