"""Sentence groups by embedding similarity, shared by the semantic strategies."""

from __future__ import annotations

import numpy as np

from services.chunker.strategies.base import ChunkingContext
from services.chunker.strategies.spans import NEWLINE, Spans


def embedded_sentences(index: Spans, context: ChunkingContext) -> tuple[list[tuple[int, int]], np.ndarray]:
    """Sentence spans (as the document's tree blocks them: Spans.sentences) and the cosine
    similarity of each adjacent pair (len(spans) - 1 values; the embeddings are unit rows)."""
    text = index.text
    spans = index.sentences()
    if len(spans) < 2:
        return spans, np.zeros(0, dtype=np.float32)
    vectors = np.asarray(context.embed([text[a:b] for a, b in spans]), dtype=np.float32)
    return spans, np.einsum("ij,ij->i", vectors[:-1], vectors[1:])


def cut_groups(similarities: np.ndarray, threshold: float, min_sentences: int = 1) -> list[tuple[int, int]]:
    """Sentence index ranges [i, j): a cut after sentence k where the
    similarity of k and k+1 is below the threshold and the group already
    holds min_sentences (the boundary sentence stays with the group before
    the cut). A short last group joins the one before it."""
    count = len(similarities) + 1
    groups: list[tuple[int, int]] = []
    start = 0
    for k, similarity in enumerate(similarities):
        if similarity < threshold and k + 1 - start >= min_sentences:
            groups.append((start, k + 1))
            start = k + 1
    groups.append((start, count))
    if len(groups) > 1 and groups[-1][1] - groups[-1][0] < min_sentences:
        last = groups.pop()
        groups[-1] = (groups[-1][0], last[1])
    return groups


def bounded(
    index: Spans, spans: list[tuple[int, int]], similarities: np.ndarray, group: tuple[int, int], max_tokens: int
) -> list[tuple[int, int, int, int]]:
    """A group as pieces of at most max_tokens: (start, end, tokens, last
    sentence index). Too big, it is cut at its least similar adjacent pair,
    recursively; a single sentence too big goes through the separator
    cascade from newlines down."""
    i, j = group
    start, end = spans[i][0], spans[j - 1][1]
    count = index.exact(start, end)
    if count <= max_tokens:
        return [(start, end, count, j - 1)]
    if j - i == 1:
        return [(a, b, n, i) for a, b, n in index.split(start, end, max_tokens, level=NEWLINE)]
    k = i + int(np.argmin(similarities[i : j - 1]))
    return bounded(index, spans, similarities, (i, k + 1), max_tokens) + bounded(
        index, spans, similarities, (k + 1, j), max_tokens
    )
