"""From a retrieval result and a question's references to RetrievalMetrics.

Hit-only measures read `expansion_tree.hits` (the top-k hits, whatever the
strategy); expanded measures read `retrieved_chunks` (what the LLM sees: for
parent-child strategies that is the parents).
"""

from __future__ import annotations

from collections.abc import Sequence

from chunklab.metrics import chunk_span, context_overlap, overlap, reciprocal_rank, reference_spans, touches
from chunklab.v1 import common_pb2, evaluator_pb2
from services.evaluator.judging.rank import RANK_FIELDS, rank_measures


def node_chunks(node: common_pb2.ExpansionNode) -> list[common_pb2.Chunk]:
    """The hit and everything it pulled in."""
    pulled = [e.chunk for e in (*node.neighbors_prev, *node.neighbors_next, *node.window)]
    if node.HasField("parent"):
        pulled.append(node.parent.chunk)
    return [node.hit.chunk, *pulled]


def retrieval_metrics(
    retrieved: Sequence[common_pb2.RetrievedChunk],
    tree: common_pb2.ExpansionTree,
    references: Sequence[evaluator_pb2.Reference],
    top_k: int,
) -> evaluator_pb2.RetrievalMetrics:
    """Labelled measures (when there are references) and what is sent to the LLM;
    rank measures down to the run's `top_k` (rank.py)."""
    metrics = evaluator_pb2.RetrievalMetrics(
        chunks_sent=len(retrieved),
        tokens_sent=sum(r.chunk.token_count for r in retrieved),
        embedding_answer_similarity=-1.0,
        questions=1,
    )
    refs = reference_spans(references)
    if not refs:
        return metrics
    metrics.labelled = True
    metrics.questions_labelled = 1
    hits = [chunk_span(node.hit.chunk) for node in tree.hits]
    expanded = [chunk_span(r.chunk) for r in retrieved]

    on_hits = overlap(refs, hits)
    metrics.recall_hits, metrics.precision_hits, metrics.iou_hits = on_hits.recall, on_hits.precision, on_hits.iou
    metrics.hit_rate_hits = 1.0 if any(touches(s, refs) for s in hits) else 0.0
    metrics.mrr_hits = reciprocal_rank([[s] for s in hits], refs)

    on_context = context_overlap(retrieved, references)
    metrics.recall, metrics.precision, metrics.iou = on_context.recall, on_context.precision, on_context.iou
    metrics.hit_rate = 1.0 if any(touches(s, refs) for s in expanded) else 0.0
    groups = [[chunk_span(c) for c in node_chunks(n)] for n in tree.hits]
    metrics.mrr = reciprocal_rank(groups, refs)
    for name, value in rank_measures(groups, refs, top_k).items():
        setattr(metrics, name, value)
    return metrics


LABELLED_FIELDS = (
    "recall_hits",
    "precision_hits",
    "iou_hits",
    "hit_rate_hits",
    "mrr_hits",
    "recall",
    "precision",
    "iou",
    "hit_rate",
    "mrr",
)
ALWAYS_FIELDS = ("chunks_sent", "tokens_sent", "retrieve_ms", "answer_ms", "judge_ms")


def mean_metrics(items: Sequence[evaluator_pb2.RetrievalMetrics]) -> evaluator_pb2.RetrievalMetrics:
    """Means over questions: labelled measures over labelled questions only,
    rank measures over the questions that have them, embedding similarity over
    questions that had an expected answer."""
    mean = evaluator_pb2.RetrievalMetrics(questions=len(items), embedding_answer_similarity=-1.0)
    if not items:
        return mean
    labelled = [m for m in items if m.labelled]
    mean.questions_labelled = len(labelled)
    mean.labelled = bool(labelled)
    for name in LABELLED_FIELDS:
        if labelled:
            setattr(mean, name, sum(getattr(m, name) for m in labelled) / len(labelled))
    for name in RANK_FIELDS:
        ranked = [getattr(m, name) for m in labelled if m.HasField(name)]
        if ranked:
            setattr(mean, name, sum(ranked) / len(ranked))
    for name in ALWAYS_FIELDS:
        value = sum(getattr(m, name) for m in items) / len(items)
        setattr(mean, name, round(value) if name in ("chunks_sent", "tokens_sent") else value)
    similar = [m.embedding_answer_similarity for m in items if m.embedding_answer_similarity >= 0]
    if similar:
        mean.embedding_answer_similarity = sum(similar) / len(similar)
    return mean
