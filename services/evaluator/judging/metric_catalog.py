"""Every metric experiments report, in one place: its name, what it means for
people, its unit, whether higher or lower is better, and how to read it off one
question's result (ADR 0039). ListMetrics serves it, so the UI, the CLI and
the reports agree on which run wins; compare.py's bootstrap reads the values.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from chunklab.v1 import evaluator_pb2 as pb
from services.evaluator.judging.rank import NDCG_CUTOFF, RECALL_CUTOFFS

Value = Callable[[pb.QuestionResult], "float | None"]


@dataclass(frozen=True)
class Metric:
    info: pb.MetricInfo
    value: Value  # one question's value, None when it was not measured


def _labelled(field: str) -> Value:
    return lambda r: getattr(r.metrics, field) if r.metrics.labelled else None


def _ranked(field: str) -> Value:
    """Unset (not measured) without references or below the run's top_k (ADR 0052)."""
    return lambda r: getattr(r.metrics, field) if r.metrics.labelled and r.metrics.HasField(field) else None


def _judged(field: str) -> Value:
    def value(r: pb.QuestionResult) -> float | None:
        score = getattr(r.judge, field)
        return score.value if score.measured else None

    return value


def _metric(
    name: str, label: str, unit: int, value: Value, group: str, description: str, higher_is_better: bool = True
) -> Metric:
    return Metric(
        pb.MetricInfo(
            name=name, label=label, unit=unit, higher_is_better=higher_is_better, group=group, description=description
        ),
        value,
    )


PERCENT, RATIO, SCORE, COUNT = pb.METRIC_UNIT_PERCENT, pb.METRIC_UNIT_RATIO, pb.METRIC_UNIT_SCORE, pb.METRIC_UNIT_COUNT
EXPANDED = "on the expanded context (what the LLM sees)"
HITS = "on the hits only, before expansion"

# In the order people read them: the Chroma report's IoU first.
CATALOG: tuple[Metric, ...] = (
    _metric(
        "iou",
        "IoU",
        PERCENT,
        _labelled("iou"),
        "labelled",
        f"overlap of the retrieved tokens with the reference tokens, over their union, {EXPANDED}",
    ),
    _metric(
        "recall",
        "recall",
        PERCENT,
        _labelled("recall"),
        "labelled",
        f"share of the reference tokens that were retrieved, {EXPANDED}",
    ),
    _metric(
        "precision",
        "precision",
        PERCENT,
        _labelled("precision"),
        "labelled",
        f"share of the retrieved tokens that are reference tokens, {EXPANDED}",
    ),
    _metric(
        "hit_rate",
        "hit rate",
        PERCENT,
        _labelled("hit_rate"),
        "labelled",
        f"share of questions with any reference token retrieved, {EXPANDED}",
    ),
    _metric(
        "mrr",
        "MRR",
        RATIO,
        _labelled("mrr"),
        "labelled",
        "mean reciprocal rank of the first hit that touches a reference",
    ),
    _metric("iou_hits", "IoU (hits only)", PERCENT, _labelled("iou_hits"), "hits", f"IoU {HITS}"),
    _metric("recall_hits", "recall (hits only)", PERCENT, _labelled("recall_hits"), "hits", f"recall {HITS}"),
    _metric(
        "precision_hits", "precision (hits only)", PERCENT, _labelled("precision_hits"), "hits", f"precision {HITS}"
    ),
    _metric("mrr_hits", "MRR (hits only)", RATIO, _labelled("mrr_hits"), "hits", f"MRR {HITS}"),
    *(
        _metric(
            f"recall_at_{k}",
            f"recall@{k}",
            PERCENT,
            _ranked(f"recall_at_{k}"),
            "rank",
            f"share of the reference excerpts that one of the first {k} hits touches (with what it pulled in); "
            f"not measured when the run's top_k is below {k}",
        )
        for k in RECALL_CUTOFFS
    ),
    _metric(
        "ndcg",
        "NDCG@k",
        RATIO,
        _ranked("ndcg"),
        "rank",
        "normalised discounted cumulative gain of the hits down to the run's top_k: the excerpts each hit "
        "finds first, discounted by log2(rank + 1), over the best ordering",
    ),
    _metric(
        f"ndcg_at_{NDCG_CUTOFF}",
        f"NDCG@{NDCG_CUTOFF}",
        RATIO,
        _ranked(f"ndcg_at_{NDCG_CUTOFF}"),
        "rank",
        f"NDCG of the first {NDCG_CUTOFF} hits; not measured when the run's top_k is below {NDCG_CUTOFF}",
    ),
    _metric(
        "map",
        "MAP",
        RATIO,
        _ranked("map"),
        "rank",
        "mean average precision of the hits down to the run's top_k, the excerpts being the relevant items",
    ),
    _metric(
        "embedding_answer_similarity",
        "answer similarity (embeddings)",
        RATIO,
        lambda r: r.metrics.embedding_answer_similarity if r.metrics.embedding_answer_similarity >= 0 else None,
        "judge",
        "cosine similarity of the answer's and the expected answer's embeddings",
    ),
    _metric(
        "context_relevance",
        "context relevance",
        SCORE,
        _judged("context_relevance"),
        "judge",
        "the judge's 1-10 score of how relevant the retrieved context is to the question",
    ),
    _metric(
        "answer_similarity",
        "answer similarity (judge)",
        SCORE,
        _judged("answer_similarity"),
        "judge",
        "the judge's 1-10 score of how close the answer is to the expected one",
    ),
    _metric(
        "faithfulness",
        "faithfulness",
        SCORE,
        _judged("faithfulness"),
        "judge",
        "the judge's 1-10 score of how well the context supports the answer",
    ),
    _metric(
        "hallucination",
        "hallucination",
        PERCENT,
        _judged("hallucination"),
        "judge",
        "share of answers the judge found to state what the context does not",
        higher_is_better=False,
    ),
    _metric(
        "tokens_sent",
        "tokens sent",
        COUNT,
        lambda r: float(r.metrics.tokens_sent) if not r.error else None,
        "efficiency",
        "tokens of retrieved context the LLM is given per question",
        higher_is_better=False,
    ),
)

BY_NAME: dict[str, Metric] = {m.info.name: m for m in CATALOG}


def group(name: str) -> list[str]:
    """The names of one group, in the catalogue's order: what a table of that group shows."""
    return [m.info.name for m in CATALOG if m.info.group == name]


def list_metrics() -> pb.ListMetricsResponse:
    return pb.ListMetricsResponse(metrics=[m.info for m in CATALOG])
