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

from services.retriever.conditions import All, Any_, Condition, Range, match
from services.retriever.payloads import TIME_FIELD

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
            others = All(must=(Range(TIME_FIELD, gte=as_of_ts - self._default_days * DAY_S), *others.must),
                         must_not=others.must_not)
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
            should.append(All(must=(Range(TIME_FIELD, lt=as_of_ts - self._default_days * DAY_S),),
                              must_not=others.must_not))
        return Any_(tuple(should)) if should else None


def decayed(score: float, published_ts: float, as_of_ts: float, recency_lambda: float) -> float:
    """score × exp(−λ · age_days); content dated after as_of counts as age 0."""
    if recency_lambda <= 0:
        return score
    age_days = max(0.0, (as_of_ts - published_ts) / DAY_S)
    return score * math.exp(-recency_lambda * age_days)
