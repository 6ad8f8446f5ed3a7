"""Rankings that do not depend on how the index happens to be laid out (ADR 0044).

Identical passages embed to identical vectors and score exactly alike; the
store returns tied points in its own internal order, which changes whenever
points are written, deleted or compacted. So every ranking the retriever
returns is ordered by a documented rule, the same on Qdrant Edge and a
Qdrant server:

1. score, highest first, compared at SCORE_DIGITS decimals (two stores, or
   one vector written twice, may differ in the last bits of a float);
2. then the point's key: document id, strategy, configuration, role, chunk
   index (`lexical.point_key`), so within a document earlier chunks come first.

A tie can straddle the cut at `limit`: which of the tied points the store
returned would then still be its choice. `stable_top` asks for more until the
last point it got scores below the point at the cut (or there are no more),
so every point tied at the cut is ordered by the rule; it asks for at most
MAX_CANDIDATES, which bounds the work (more points tied at one score than
that and the store's choice stands among the ones past it).
"""

from __future__ import annotations

from collections.abc import Callable

from services.retriever.search.lexical import point_key

SCORE_DIGITS = 6
# The first request asks for this many more than the cut; each further one four times as many.
TIE_SLACK = 8
MAX_CANDIDATES = 1024

Hit = tuple[dict, float]


def rank_key(hit: Hit) -> tuple:
    payload, score = hit
    return (-round(score, SCORE_DIGITS), point_key(payload))


def ordered(hits: list[Hit]) -> list[Hit]:
    """The hits in the documented order."""
    return sorted(hits, key=rank_key)


def stable_top(search: Callable[[int], list[Hit]], limit: int) -> list[Hit]:
    """The first `limit` hits of `search(n)` (a store's ranking of n points) in
    the documented order, whatever order the store returned ties in."""
    wanted = limit + TIE_SLACK
    while True:
        hits = search(wanted)
        if len(hits) < wanted or wanted >= MAX_CANDIDATES:
            break
        at_cut = round(sorted(s for _, s in hits)[-limit], SCORE_DIGITS)
        if round(min(s for _, s in hits), SCORE_DIGITS) < at_cut:
            break  # the last points score below the cut: every point tied at it is here
        wanted = min(wanted * 4, MAX_CANDIDATES)
    return ordered(hits)[:limit]
