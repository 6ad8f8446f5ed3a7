"""Freshness windows per collection and recency decay (SPEC section 4, seeds
adr-freshness-window).

A window is a maximum age in days (0 = unlimited) of a document's
publication (`published_ts`) as of the query's time. The key "default"
covers the collection named "default" and every collection without a
window of its own. The windows become one filter condition that the store
applies during the search itself, so nothing outside a window is ever a
candidate; the same predicate is checked on expansion results.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from services.retriever.index.conditions import All, Any_, Condition, Range, match
from services.retriever.index.payloads import TIME_FIELD

DAY_S = 86400.0
DEFAULT = "default"


class FreshnessPolicy:
    def __init__(self, windows: dict[str, int]) -> None:
        self.windows = dict(windows)
        self._default_days = self.windows.get(DEFAULT, 0)
        self._known = sorted(c for c in self.windows if c != DEFAULT)

    def max_age_days(self, collection: str) -> int:
        return self.windows.get(collection, self._default_days)

    def _others(self) -> All:
        return All(must_not=(match("collection", *self._known),)) if self._known else All()

    def visible(self, as_of_ts: float) -> Condition | None:
        """Points inside their collection's window as of as_of_ts (None: all are)."""
        limited = [(name, self.windows[name]) for name in self._known if self.windows[name] > 0]
        if not limited and self._default_days <= 0:
            return None
        unlimited = [name for name in self._known if self.windows[name] <= 0]
        should: list[Condition] = []
        if unlimited:
            should.append(match("collection", *unlimited))
        for name, days in limited:
            should.append(All(must=(match("collection", name), Range(TIME_FIELD, gte=as_of_ts - days * DAY_S))))
        others = self._others()
        if self._default_days > 0:
            others = All(
                must=(Range(TIME_FIELD, gte=as_of_ts - self._default_days * DAY_S), *others.must),
                must_not=others.must_not,
            )
        should.append(others)
        return Any_(tuple(should))

    def expired(self, as_of_ts: float) -> Condition | None:
        """Points outside their window as of as_of_ts: what a sweep removes."""
        should: list[Condition] = []
        for name in self._known:
            days = self.windows[name]
            if days > 0:
                should.append(All(must=(match("collection", name), Range(TIME_FIELD, lt=as_of_ts - days * DAY_S))))
        if self._default_days > 0:
            others = self._others()
            should.append(
                All(must=(Range(TIME_FIELD, lt=as_of_ts - self._default_days * DAY_S),), must_not=others.must_not)
            )
        return Any_(tuple(should)) if should else None

    def first_expiry(self, oldest: Callable[[Condition | None], float | None]) -> float:
        """The earliest time as of which some point is outside its window
        (math.inf when none ever will be), given `oldest(where)`, the earliest
        publication among the points that match: before that time no query
        needs the window filter."""
        first = math.inf
        for name in self._known:
            days = self.windows[name]
            if days > 0:
                published = oldest(match("collection", name))
                if published is not None:
                    first = min(first, published + days * DAY_S)
        if self._default_days > 0:
            published = oldest(self._others())
            if published is not None:
                first = min(first, published + self._default_days * DAY_S)
        return first


class ExpiryWatch:
    """Whether an index holds points outside their windows, asked cheaply.

    An index other processes write too (a Qdrant server) is probed on every
    query. One that only this process writes (the embedded store) is asked
    when its first point leaves its window, once per write and per change of
    the windows; a query then compares two numbers. The index's generation is
    read before asking, so a write meanwhile makes the answer stale (asked
    again next time), never trusted past that write.
    """

    # A query this close to the moment a point leaves its window is checked
    # anyway (the two sides of that comparison are rounded differently).
    MARGIN_S = 1.0

    def __init__(self) -> None:
        # index -> (policy, index generation, when its first point expires)
        self._known: dict[object, tuple[FreshnessPolicy, int, float]] = {}

    def holds_expired(self, index, policy: FreshnessPolicy, as_of_ts: float) -> bool:
        """`index` is a services.retriever.index.vector_index.VectorIndex."""
        if not index.sole_writer:
            expired = policy.expired(as_of_ts)
            return expired is not None and index.exists(expired)
        generation = index.generation
        known = self._known.get(index)
        if known is None or known[0] is not policy or known[1] != generation:
            known = (policy, generation, policy.first_expiry(index.oldest))
            self._known[index] = known
        return as_of_ts + self.MARGIN_S > known[2]


def decayed(score: float, published_ts: float, as_of_ts: float, recency_lambda: float) -> float:
    """score × exp(−λ · age_days); content dated after as_of counts as age 0."""
    if recency_lambda <= 0:
        return score
    age_days = max(0.0, (as_of_ts - published_ts) / DAY_S)
    return score * math.exp(-recency_lambda * age_days)
