"""cluster_parent_child with context_vectors=pooled through the chunker's processing: the
children's windows are never sent to the model, and what is indexed for each child is the
mean of its window's piece vectors (ADR 0120)."""

from __future__ import annotations

import numpy as np

from chunklab.v1 import common_pb2
from tests.support.chunking import cluster_parent_child_through_service
from tests.support.providers import HashedProvider

TEXT = (
    "# Harbour\n\nShips sail at dawn from the old harbour. The pilot boards at the breakwater.\n\n"
    "Fishing boats come back at noon with their catch. Gulls follow them into the basin.\n\n"
    "# Market\n\nThe fish market opens when the boats are in. Buyers bid for the morning's catch."
)


class Recording(HashedProvider):
    def __init__(self) -> None:
        super().__init__()
        self.asked: list[str] = []

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        self.asked += texts
        return super().embed_documents(texts)


def process(tmp_path, context_vectors: str) -> tuple[Recording, list]:
    provider = Recording()
    return provider, cluster_parent_child_through_service(
        tmp_path / f"{context_vectors}.sqlite3", provider, TEXT, context_vectors
    )


def test_pooled_children_are_indexed_with_their_windows_mean_and_no_window_is_embedded(tmp_path):
    encoded_model, encoded = process(tmp_path, "encoded")
    pooled_model, pooled = process(tmp_path, "pooled")
    children = [i for i in pooled if i.chunk.role == common_pb2.CHUNK_ROLE_CHILD]
    pieces = [i.chunk.content for i in children]
    windows = [i.chunk.enriched_content for i in children]
    assert len(children) >= 4
    # The same chunks either way; parents carry no vector either way.
    assert [i.chunk.content for i in pooled] == [i.chunk.content for i in encoded]
    assert all(not i.vector for i in pooled if i.chunk.role == common_pb2.CHUNK_ROLE_PARENT)
    # Encoded embeds the pieces (to cluster them) and then every window; pooled the pieces only.
    assert set(windows) - set(pieces) <= set(encoded_model.asked)
    assert sorted(pooled_model.asked) == sorted(set(pieces))
    piece_vectors = HashedProvider().embed_documents(pieces)
    for k, child in enumerate(children):
        window = piece_vectors[max(k - 1, 0) : k + 2].sum(axis=0)
        np.testing.assert_allclose(child.vector, window / np.linalg.norm(window), atol=1e-5)
