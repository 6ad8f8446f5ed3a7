"""Hybrid retrieval: a BM25 ranking fused with the dense one by reciprocal
rank fusion (Cormack et al. 2009, k = 60 unless RetrievalOptions.fusion_k
says otherwise, ADR 0139).

The sparse BM25 vectors are made here, with Qdrant Edge's own Bm25 model
(term frequencies with k, b and length normalization on the document side,
one entry per unique term on the query side), and stored beside the dense
vector of each point, so the lexical index is written in the same upsert as
the dense one and can never lag behind it. The stores apply no IDF of their
own: the query's terms carry the IDF of the sets it searches
(services/retriever/search/term_stats.py, ADR 0044).

Fusion happens here rather than in the store so that Edge and a Qdrant
server give the same fused scores (their built-in RRFs count ranks from
different origins).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

from qdrant_edge import Bm25, Bm25Config, TokenizerType

from chunklab import retrieval
from services.retriever.index.payloads import Sparse

RRF_K = retrieval.LIMITS.default_fusion_k

# The stopwords and stemmer of each language a document may be in (ISO 639-1,
# as ingest detects it). Chinese and Japanese write no spaces between words:
# Qdrant's multilingual tokenizer cuts them into words. English, and any
# language not listed, keeps the default model (English stopwords, English
# stemmer), which is what every point was indexed with before languages counted.
LANGUAGE_NAMES = {
    "de": "german",
    "fr": "french",
    "es": "spanish",
    "pt": "portuguese",
    "it": "italian",
    "nl": "dutch",
    "id": "indonesian",
    "ru": "russian",
    "ar": "arabic",
    "zh": "chinese",
    "ja": "japanese",
}
_WORDS_WITHOUT_SPACES = frozenset({"zh", "ja"})
DEFAULT = "en"

_models: dict[str, Bm25] = {}
_models_lock = threading.Lock()


def _bm25(language: str) -> Bm25:
    key = language if language in LANGUAGE_NAMES else DEFAULT
    with _models_lock:
        model = _models.get(key)
        if model is None:
            if key == DEFAULT:
                model = Bm25()
            else:
                tokenizer = TokenizerType.Multilingual if key in _WORDS_WITHOUT_SPACES else None
                model = Bm25(Bm25Config(language=LANGUAGE_NAMES[key], tokenizer=tokenizer))
            _models[key] = model
        return model


def document_vector(text: str, language: str = DEFAULT) -> Sparse:
    """BM25 term weights of a chunk, with its language's words, stopwords and stems."""
    vector = _bm25(language).embed_document(text)
    return Sparse(tuple(vector.indices), tuple(vector.values))


def query_vector(text: str, languages: Iterable[str] = ()) -> Sparse:
    """The question's terms as each of `languages` cuts and stems them (every
    known language when none is given), one weight per distinct term: a chunk
    matches the terms of its own language. English is always among them."""
    chosen = {DEFAULT, *(languages or [*LANGUAGE_NAMES])}
    terms: set[int] = set()
    for language in sorted(chosen):
        terms.update(_bm25(language).embed_query(text).indices)
    ordered = tuple(sorted(terms))
    return Sparse(ordered, (1.0,) * len(ordered))


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
