"""Rank measures of one question's ranked hits: recall@k, NDCG and average
precision (ADR 0052).

The relevant items of a question are its reference excerpts. The ranked list
is the retriever's hits, each with what it pulled in (the groups the expanded
MRR reads); a group *finds* every excerpt it touches (ADR 0025's rule: at least
one shared character), and an excerpt counts at the rank of the first group
that finds it. So:

- recall@k = share of the excerpts found at rank <= k;
- each hit is judged by its gain, the number of excerpts it finds first (0 for
  a hit that finds none, or only excerpts an earlier hit found); one excerpt no
  hit finds is a relevant item of gain 1 that was not retrieved;
- NDCG@k and AP@k are trec_eval's measures on those judgments (gain / log2(rank + 1),
  the ideal ranking holding the same gains best first; AP counts a judged item
  as relevant when its gain is at least 1).

When every hit finds at most one new excerpt, the judged items are the
excerpts themselves and every measure is the textbook one; tests/unit/test_rank_metrics.py
checks them against ir-measures (trec_eval). A cut-off deeper than the run's
top_k is not measured: a top-5 run has no recall@10.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from chunklab.metrics import Span, touches

RECALL_CUTOFFS = (1, 3, 5, 10)
NDCG_CUTOFF = 10


def first_ranks(groups: Sequence[Sequence[Span]], references: Sequence[Span]) -> list[int | None]:
    """Per distinct excerpt (in their first listed order), the rank (from 1) of the
    first group that touches it; None when no group does."""
    excerpts = list(dict.fromkeys(r for r in references if r.length))
    ranks: list[int | None] = []
    for excerpt in excerpts:
        found = (rank for rank, group in enumerate(groups, start=1) if any(touches(s, [excerpt]) for s in group))
        ranks.append(next(found, None))
    return ranks


def judgments(ranks: Sequence[int | None], depth: int) -> tuple[list[int], int]:
    """(gain of each rank 1..depth, excerpts no group found)."""
    gains = [0] * depth
    for rank in ranks:
        if rank is not None:
            gains[rank - 1] += 1
    return gains, sum(rank is None for rank in ranks)


def recall_at(ranks: Sequence[int | None], k: int) -> float:
    return sum(rank is not None and rank <= k for rank in ranks) / len(ranks)


def ndcg_at(gains: Sequence[int], missed: int, k: int) -> float:
    def dcg(values: Sequence[int]) -> float:
        return sum(g / math.log2(i + 2) for i, g in enumerate(values[:k]))

    ideal = sorted([g for g in gains if g] + [1] * missed, reverse=True)
    return dcg(gains) / dcg(ideal)


def average_precision(gains: Sequence[int], missed: int) -> float:
    relevant_seen, total = 0, 0.0
    for rank, gain in enumerate(gains, start=1):
        if gain:
            relevant_seen += 1
            total += relevant_seen / rank
    return total / (relevant_seen + missed)


def rank_measures(groups: Sequence[Sequence[Span]], references: Sequence[Span], top_k: int) -> dict[str, float]:
    """The measured RetrievalMetrics rank fields of one question, by field name;
    empty without references. `groups` are the ranked hits, at most top_k."""
    ranks = first_ranks(groups[:top_k], references)
    if not ranks:
        return {}
    gains, missed = judgments(ranks, top_k)
    measured = {f"recall_at_{k}": recall_at(ranks, k) for k in RECALL_CUTOFFS if k <= top_k}
    measured["ndcg"] = ndcg_at(gains, missed, top_k)
    if top_k >= NDCG_CUTOFF:
        measured[f"ndcg_at_{NDCG_CUTOFF}"] = ndcg_at(gains, missed, NDCG_CUTOFF)
    measured["map"] = average_precision(gains, missed)
    return measured


RANK_FIELDS = (*(f"recall_at_{k}" for k in RECALL_CUTOFFS), "ndcg", f"ndcg_at_{NDCG_CUTOFF}", "map")
