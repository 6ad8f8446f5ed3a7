"""cluster_parent_child with context_vectors=pooled through the chunker's processing: the
children's windows are never sent to the model, and what is indexed for each child is the
mean of its window's piece vectors (ADR 0120)."""

from __future__ import annotations

import numpy as np

from chunklab.llm import ChatEndpoint
from chunklab.v1 import chunker_pb2, common_pb2, documents_pb2
from services.chunker.cache import EmbeddingCache
from services.chunker.llm import LLMPool
from services.chunker.service import ChunkerService
from services.ingest.readers.markdown import parse
from tests.support.chunking import knob
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
    document = documents_pb2.Document(
        document_id="doc-1",
        name="harbour.md",
        text=TEXT,
        language="en",
        collection="default",
        format=documents_pb2.DOCUMENT_FORMAT_MARKDOWN,
        tree=parse(TEXT, documents_pb2.DOCUMENT_FORMAT_MARKDOWN),
    )
    provider, indexed = Recording(), []
    cache = EmbeddingCache(tmp_path / f"{context_vectors}.sqlite3")
    service = ChunkerService(
        lambda _id: document,
        lambda header, chunks: (indexed.extend(chunks), (len(chunks), 0))[1],
        lambda _name: provider,
        provider.name,
        cache,
        LLMPool(ChatEndpoint("", "", ""), 1),
    )
    spec = common_pb2.StrategySpec(
        name="cluster_parent_child",
        knobs={"child_max_tokens": knob(12), "context_pieces": knob(1), "context_vectors": knob(context_vectors)},
    )
    events = list(service.process(chunker_pb2.ProcessDocumentRequest(document_id="doc-1", strategies=[spec])))
    cache.close()
    assert not events[-1].result.strategies_failed, events[-1].result
    return provider, indexed


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
