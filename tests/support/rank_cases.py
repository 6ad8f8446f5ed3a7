"""Rankings built by hand with their rank measures computed by hand (the textbook
formulas), shared by the unit tests and the experiment that must report the same."""

from __future__ import annotations

import math

from chunklab.metrics import Span


def d(rank: int) -> float:
    """The discount of a rank: 1 / log2(rank + 1)."""
    return 1 / math.log2(rank + 1)


def hits(*ranges: tuple[str, int, int]) -> list[list[Span]]:
    return [[Span(doc, start, end)] for doc, start, end in ranges]


# Four questions: (ranked hits, reference excerpts, top_k, the measures worked out by hand).
CASES = {
    # One excerpt, first touched by hit 2; hit 4 touches it again (a duplicate, no gain).
    "one excerpt at rank 2": (
        hits(("A", 0, 50), ("A", 150, 250), ("A", 300, 400), ("A", 180, 190), ("A", 400, 500)),
        [Span("A", 100, 200)],
        5,
        {"recall_at_1": 0.0, "recall_at_3": 1.0, "recall_at_5": 1.0, "ndcg": d(2) / d(1), "map": (1 / 2) / 1},
    ),
    # Three excerpts: E2 at rank 1, E1 at rank 3 (and again at 4), E3 in document B never found.
    "three excerpts, one missed": (
        hits(("A", 500, 600), ("A", 100, 200), ("A", 0, 5), ("A", 5, 40), ("A", 900, 950)),
        [Span("A", 0, 10), Span("A", 510, 520), Span("B", 0, 30)],
        5,
        {
            "recall_at_1": 1 / 3,
            "recall_at_3": 2 / 3,
            "recall_at_5": 2 / 3,
            "ndcg": (d(1) + d(3)) / (d(1) + d(2) + d(3)),
            "map": (1 / 1 + 2 / 3) / 3,
        },
    ),
    # One chunk at rank 2 holds both excerpts: it finds both (gain 2); top_k 3 has no recall@5.
    "one hit finds two excerpts": (
        hits(("A", 100, 200), ("A", 0, 40), ("A", 200, 300)),
        [Span("A", 0, 10), Span("A", 20, 30)],
        3,
        {"recall_at_1": 0.0, "recall_at_3": 1.0, "ndcg": (2 * d(2)) / (2 * d(1)), "map": (1 / 2) / 1},
    ),
    # Ten hits of 100 characters: E2 at rank 1, E1 at rank 8, E3 (document C) missed.
    "top 10, a late hit": (
        hits(*(("A", 100 * i, 100 * (i + 1)) for i in range(10))),
        [Span("A", 750, 760), Span("A", 50, 60), Span("C", 0, 5)],
        10,
        {
            "recall_at_1": 1 / 3,
            "recall_at_3": 1 / 3,
            "recall_at_5": 1 / 3,
            "recall_at_10": 2 / 3,
            "ndcg": (d(1) + d(8)) / (d(1) + d(2) + d(3)),
            "ndcg_at_10": (d(1) + d(8)) / (d(1) + d(2) + d(3)),
            "map": (1 / 1 + 2 / 8) / 3,
        },
    ),
}
