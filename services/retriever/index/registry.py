"""Which vector indexes exist and how to open them: one per (embedding
model, dimension), an Edge shard folder or a Qdrant collection (ADR 0020).
"""

from __future__ import annotations

import threading
from pathlib import Path

from services.retriever.index.edge import EdgeIndex
from services.retriever.index.vector_index import VectorIndex, index_name
from services.retriever.store import RetrieverStore

COLLECTION_PREFIX = "chunklab_"


class IndexRegistry:
    """Opens each index once per process. With `qdrant_client` set, indexes
    are collections of that Qdrant server (created with `replication_factor`
    copies of each shard, for a cluster); otherwise Edge shards under `root`."""

    def __init__(self, root: Path, store: RetrieverStore, qdrant_client=None, replication_factor: int = 1) -> None:
        self._root = root
        self._store = store
        self._client = qdrant_client
        self._replication_factor = replication_factor
        self._open: dict[str, VectorIndex] = {}
        self._models: dict[str, str] = {}
        self._lock = threading.Lock()
        self._known = {name: (model, dim) for name, model, dim in store.vector_indexes()}

    @property
    def backend(self) -> str:
        return "qdrant" if self._client is not None else "edge"

    def _make(self, name: str, dimension: int) -> VectorIndex:
        if self._client is not None:
            from services.retriever.index.qdrant_server import QdrantServerIndex

            return QdrantServerIndex(self._client, COLLECTION_PREFIX + name, dimension, self._replication_factor)
        return EdgeIndex(self._root / name, dimension)

    def get(self, model: str, dimension: int, create: bool = False) -> VectorIndex | None:
        name = index_name(model, dimension)
        with self._lock:
            index = self._open.get(name)
            if index is not None:
                return index
            if name not in self._known:
                if not create:
                    return None
                self._store.add_vector_index(name, model, dimension)
                self._known[name] = (model, dimension)
            index = self._open[name] = self._make(name, dimension)
            self._models[name] = model
            return index

    def dimensions(self, model: str) -> list[int]:
        """The dimensions the model has indexes of (usually one). Read from the
        store only when this process knows none (another replica made it)."""
        found = sorted(dim for m, dim in self._known.values() if m == model)
        if not found:
            for name, known_model, dimension in self._store.vector_indexes():
                self._known.setdefault(name, (known_model, dimension))
            found = sorted(dim for m, dim in self._known.values() if m == model)
        return found

    def by_name(self, name: str) -> VectorIndex | None:
        entry = self._known.get(name)
        return self.get(*entry) if entry else None

    def all(self) -> list[tuple[str, str, VectorIndex]]:
        """(name, embedding model, index) for every index there is."""
        for name, model, dimension in self._store.vector_indexes():
            self._known.setdefault(name, (model, dimension))
        return [(name, model, self.get(model, dim)) for name, (model, dim) in sorted(self._known.items())]

    def close(self) -> None:
        with self._lock:
            for index in self._open.values():
                index.close()
            self._open.clear()
            if self._client is not None:
                self._client.close()
