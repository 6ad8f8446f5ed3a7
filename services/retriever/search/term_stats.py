"""BM25 statistics scoped to what a query searches (ADR 0044).

A chunk's sparse vector holds its BM25 term weights without IDF (Qdrant's
Bm25 model: term frequency, k, b and a fixed average length). The IDF is
applied here, on the query side, from the statistics of exactly the index
sets the query searches: how many searchable chunks they hold (N) and in how
many of them each query term occurs (n), idf = ln(1 + (N - n + 0.5) / (n + 0.5)),
Qdrant's own formula. So a hybrid ranking depends only on the sets searched,
never on other strategies, configurations, collections or deleted points in
the same index.

Each set's counts are computed when it is indexed and written with its record
(`RetrieverStore.record_set`); a query sums the counts of the sets its filter
selects, which it can decide per set because every filter field (document,
strategy, configuration, active state, collection, language, publication
time) is the same on every point of a set.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from services.retriever.index.payloads import Sparse

# Decoded counts kept in memory, least recently used dropped first.
CACHE_BYTES = 128 * 1024**2


@dataclass(frozen=True)
class TermCounts:
    """One set's statistics: its searchable chunks and, for every term that
    occurs in them, in how many (terms sorted)."""

    chunks: int
    terms: np.ndarray  # int64, sorted, unique
    frequencies: np.ndarray  # int64, one per term

    @classmethod
    def of(cls, vectors: Iterable[Sparse | None]) -> TermCounts:
        """From the sparse vectors of a set's points (None: a lookup-only point)."""
        chunks = 0
        held: list[np.ndarray] = []
        for vector in vectors:
            if vector is None:
                continue
            chunks += 1
            held.append(np.unique(np.asarray(vector.indices, dtype=np.int64)))
        if not held:
            return cls(chunks, np.zeros(0, np.int64), np.zeros(0, np.int64))
        terms, frequencies = np.unique(np.concatenate(held), return_counts=True)
        return cls(chunks, terms, frequencies.astype(np.int64))

    def to_bytes(self) -> bytes:
        return np.concatenate([self.terms, self.frequencies]).astype("<i8").tobytes()

    @classmethod
    def from_bytes(cls, chunks: int, data: bytes) -> TermCounts:
        values = np.frombuffer(data, dtype="<i8").astype(np.int64)
        half = len(values) // 2
        return cls(chunks, values[:half], values[half:])

    def frequencies_of(self, terms: np.ndarray) -> np.ndarray:
        """In how many of the set's chunks each of `terms` occurs."""
        if not len(self.terms):
            return np.zeros(len(terms), np.int64)
        at = np.searchsorted(self.terms, terms).clip(max=len(self.terms) - 1)
        return np.where(self.terms[at] == terms, self.frequencies[at], 0)

    @property
    def nbytes(self) -> int:
        return int(self.terms.nbytes + self.frequencies.nbytes)


def idf(chunks: int, frequency: int) -> float:
    return math.log(1.0 + (chunks - frequency + 0.5) / (frequency + 0.5))


def weighted_query(query: Sparse, counts: Iterable[TermCounts]) -> Sparse:
    """The query's terms weighted by their IDF over `counts` (the searched
    sets); terms no searched chunk holds are left out (they match nothing)."""
    terms = np.asarray(query.indices, dtype=np.int64)
    chunks = 0
    frequencies = np.zeros(len(terms), np.int64)
    for set_counts in counts:
        chunks += set_counts.chunks
        frequencies += set_counts.frequencies_of(terms)
    kept = [(int(t), idf(chunks, int(n))) for t, n in zip(terms, frequencies) if n > 0]
    return Sparse(tuple(t for t, _ in kept), tuple(w for _, w in kept))


class CountsCache:
    """Decoded counts by (set key, indexed_at): a set indexed again is a new
    entry, so no replica ever reads another's stale counts."""

    def __init__(self, max_bytes: int = CACHE_BYTES) -> None:
        self._max = max_bytes
        self._held = 0
        self._items: OrderedDict[tuple, TermCounts] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple) -> TermCounts | None:
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
            return found

    def put(self, key: tuple, counts: TermCounts) -> None:
        with self._lock:
            if key in self._items:
                return
            self._items[key] = counts
            self._held += counts.nbytes
            while self._held > self._max and len(self._items) > 1:
                _, dropped = self._items.popitem(last=False)
                self._held -= dropped.nbytes
