"""The Pareto front: the one rule every page, report and study uses for "the best trade-offs"."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TypeVar

Key = TypeVar("Key", bound=Hashable)


def front(points: Sequence[tuple[Key, Sequence[float]]], higher: Sequence[bool]) -> list[Key]:
    """The keys of (key, measures) that no other point beats: at least as good on every measure
    (higher[i]: more is better on measure i) and better on one. Equal points both stay; the
    order is the points' order."""
    signs = [1.0 if up else -1.0 for up in higher]
    scored = [(key, [sign * value for sign, value in zip(signs, values, strict=True)]) for key, values in points]

    def beats(a: list[float], b: list[float]) -> bool:
        return all(x >= y for x, y in zip(a, b)) and any(x > y for x, y in zip(a, b))

    return [
        key
        for i, (key, mine) in enumerate(scored)
        if not any(beats(o, mine) for j, (_, o) in enumerate(scored) if j != i)
    ]
