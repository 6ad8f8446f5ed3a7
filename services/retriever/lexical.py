"""Hybrid retrieval: a BM25 ranking fused with the dense one by reciprocal
rank fusion (Cormack et al. 2009, k = 60).

The sparse BM25 vectors are made here, with Qdrant Edge's own Bm25 model
(term frequencies with k, b and length normalization on the document side,
one weight per unique term on the query side), and stored beside the dense
vector of each point; the index applies IDF over the points it holds
(Modifier.Idf), both in Edge and in a Qdrant server. So the lexical index is
written in the same upsert as the dense one and can never lag behind it.

Fusion happens here rather than in the store so that Edge and a Qdrant
server give the same fused scores (their built-in RRFs count ranks from
different origins).
"""

from __future__ import annotations

import threading

from qdrant_edge import Bm25

from services.retriever.payloads import Sparse

RRF_K = 60

_model: Bm25 | None = None
_model_lock = threading.Lock()


def _bm25() -> Bm25:
    global _model
    with _model_lock:
        if _model is None:
            _model = Bm25()
        return _model


def document_vector(text: str) -> Sparse:
    vector = _bm25().embed_document(text)
    return Sparse(tuple(vector.indices), tuple(vector.values))


def query_vector(text: str) -> Sparse:
    vector = _bm25().embed_query(text)
    return Sparse(tuple(vector.indices), tuple(vector.values))


def point_key(payload: dict) -> tuple:
    """What identifies a point across rankings, without decoding the chunk."""
    return (payload["document_id"], payload["strategy"], payload["config_id"], payload["role"], payload["chunk_index"])


def reciprocal_rank_fusion(*rankings: list[tuple[dict, float]], k: int = RRF_K) -> list[tuple[dict, float]]:
    """score(d) = sum over rankings of 1 / (k + rank of d), ranks from 1.

    Ties are broken by the point's key, so the order is the same whichever
    store ran the searches."""
    fused: dict[tuple, list] = {}
    for ranking in rankings:
        for rank, (payload, _score) in enumerate(ranking, start=1):
            entry = fused.setdefault(point_key(payload), [payload, 0.0])
            entry[1] += 1.0 / (k + rank)
    ordered = sorted(fused.items(), key=lambda item: (-item[1][1], item[0]))
    return [(payload, score) for _, (payload, score) in ordered]
