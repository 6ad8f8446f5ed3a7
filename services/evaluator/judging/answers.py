"""Answers: streamed from an OpenAI-compatible chat model, or extractive.

With no chat endpoint the answer is the few sentences of the retrieved
context closest to the question by embeddings (the run's embedding model),
in reading order, labelled extractive so nobody mistakes it for an LLM's.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from chunklab.embeddings.base import EmbeddingProvider
from chunklab.llm import ChatClient, ChatResult
from chunklab.text import markdown, pages, sentences
from chunklab.v1 import common_pb2

EXTRACTIVE_SENTENCES = 3
EXTRACTIVE_METHOD = f"top {EXTRACTIVE_SENTENCES} context sentences by embedding cosine to the question"

SYSTEM = (
    "You answer questions using only the provided context. Quote facts from it; if the context "
    "does not contain the answer, say that it does not."
)


def context_text(retrieved: Sequence[common_pb2.RetrievedChunk]) -> str:
    """The context as the LLM sees it: each chunk with its document, page (paged formats) and position."""
    parts = []
    for number, item in enumerate(retrieved, start=1):
        chunk = item.chunk
        where = " > ".join(chunk.heading_path)
        page = pages.page_label(chunk.first_page, chunk.last_page)
        head = f"[{number}] {chunk.document_name}" + (f", {page}" if page else "") + (f" ({where})" if where else "")
        parts.append(f"{head}\n{chunk.content}")
    return "\n\n".join(parts)


def answer_messages(question: str, retrieved: Sequence[common_pb2.RetrievedChunk]) -> list[dict]:
    return [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": f"Context:\n{context_text(retrieved)}\n\nQuestion: {question}"},
    ]


@dataclass
class Answer:
    text: str
    extractive: bool
    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_ms: float = 0.0


def stream_llm_answer(
    client: ChatClient,
    question: str,
    retrieved: Sequence[common_pb2.RetrievedChunk],
    cancelled: threading.Event | None = None,
) -> Iterator[str | Answer]:
    """Yields the answer's pieces as the model writes them, then the Answer;
    raises Cancelled (and the model stops writing) once `cancelled` is set."""
    for piece in client.stream(answer_messages(question, retrieved), cancelled=cancelled):
        if isinstance(piece, ChatResult):
            yield Answer(
                text=piece.text,
                extractive=False,
                model=client.endpoint.model,
                prompt_tokens=piece.prompt_tokens,
                completion_tokens=piece.completion_tokens,
                latency_ms=piece.latency_ms,
            )
        else:
            yield piece


class SentenceEmbeddings:
    """Embeddings of context sentences by (model, text), so that questions that
    retrieve the same chunks do not embed the same sentences again."""

    def __init__(self, size: int = 20000) -> None:
        self._size = size
        self._items: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def embed(self, provider: EmbeddingProvider, texts: list[str]) -> np.ndarray:
        with self._lock:
            missing = [t for t in dict.fromkeys(texts) if (provider.name, t) not in self._items]
        if missing:
            vectors = provider.embed_documents(missing)
            with self._lock:
                for text, vector in zip(missing, vectors):
                    self._items[(provider.name, text)] = vector
                while len(self._items) > self._size:
                    self._items.popitem(last=False)
        with self._lock:
            rows = [self._items.get((provider.name, t)) for t in texts]
        if any(r is None for r in rows):  # evicted meanwhile: embed what is missing now
            rows = [r if r is not None else provider.embed_documents([t])[0] for r, t in zip(rows, texts)]
        return np.vstack(rows) if rows else np.zeros((0, provider.dimension), dtype=np.float32)


def extractive_answer(
    provider: EmbeddingProvider,
    question: str,
    retrieved: Sequence[common_pb2.RetrievedChunk],
    cache: SentenceEmbeddings,
    count: int = EXTRACTIVE_SENTENCES,
) -> Answer:
    """The context sentences closest to the question, in reading order.

    Markdown headings and lines without a letter or digit are not answers
    (unless the context has nothing else); a sentence's line breaks and runs
    of white space read as one space; sentences that do not follow one
    another in their chunk are joined by " … "."""
    started = time.perf_counter()
    found: list[tuple[int, str]] = []  # (chunk position, sentence text), in reading order
    seen: set[str] = set()
    for position, item in enumerate(retrieved):
        content = item.chunk.content
        for start, end in sentences.split(content, item.chunk.language or "en"):
            text = content[start:end]
            if text not in seen:
                seen.add(text)
                found.append((position, text))
    if not found:
        return Answer("The retrieved context is empty: there is nothing to answer from.", True, "extractive")
    candidates = [i for i, (_, text) in enumerate(found) if _answers(text)] or list(range(len(found)))
    vectors = cache.embed(provider, [found[i][1] for i in candidates])
    scores = vectors @ provider.embed_query(question)
    best = sorted(candidates[k] for k in np.argsort(-scores, kind="stable")[:count])
    parts = []
    for previous, i in zip([None, *best], best):
        if previous is not None:
            parts.append(" " if i == previous + 1 and found[i][0] == found[previous][0] else " … ")
        parts.append(" ".join(found[i][1].split()))
    return Answer("".join(parts), True, "extractive", latency_ms=(time.perf_counter() - started) * 1e3)


WARM_UP_CONTEXT = "A lighthouse guides ships home. Its keeper trims the wick every four hours."


def warm_up(provider: EmbeddingProvider) -> None:
    """One extractive answer on a fixed context, at start-up: the sentence splitter and the
    model's first batch of documents are ready before the first person asks."""
    retrieved = [common_pb2.RetrievedChunk(chunk=common_pb2.Chunk(content=WARM_UP_CONTEXT, language="en"))]
    extractive_answer(provider, "What does a keeper do?", retrieved, SentenceEmbeddings())


def _answers(sentence: str) -> bool:
    """Whether a sentence can stand in an answer: not a heading (by the one Markdown
    scanner's rule), not bare markup."""
    return markdown.heading_lines(sentence)[:1] != [0] and any(ch.isalnum() for ch in sentence)
