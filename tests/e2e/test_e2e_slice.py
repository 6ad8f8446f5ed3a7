"""The walking skeleton end to end: upload through ingest, fixed_size through
the chunker, indexing and retrieval through the retriever, each service its
own process on a free port, talked to only through gRPC (the client library
for uploads, processing and retrieval)."""

from __future__ import annotations

import grpc
import pytest

from chunklab.rpc import channels
from chunklab.text import tokens
from chunklab.v1 import (
    chunker_pb2,
    common_pb2,
    documents_pb2,
    ingest_pb2,
    retriever_pb2,
)
from tests.support.repo import chroma_general
from tests.support.status import status_of
from tests.support.topics import CHUNK_SIZE, FIXTURE, expected_windows, fixed_size

pytestmark = pytest.mark.e2e

HIT, NEIGHBOR = common_pb2.CHUNK_LABEL_HIT, common_pb2.CHUNK_LABEL_NEIGHBOR


def upload(stack, name: str, data: bytes, collection: str = "") -> ingest_pb2.CreateDocumentResponse:
    # Many small pieces: the stream is reassembled in order.
    return stack.client().upload_document(data, name=name, collection=collection, piece_bytes=7)


def process(stack, document_id: str, *specs: common_pb2.StrategySpec) -> list[chunker_pb2.ProcessDocumentEvent]:
    return list(stack.client().process_document(document_id, specs))


def retrieve(stack, query: str, document_id: str, top_k: int, prev: int = 0, nxt: int = 0):
    return stack.client().retrieve(
        query,
        common_pb2.RetrievalOptions(
            strategy="fixed_size",
            top_k=top_k,
            neighbor_prev=prev,
            neighbor_next=nxt,
            filter=common_pb2.RetrievalFilter(document_ids=[document_id]),
        ),
    )


@pytest.fixture(scope="module")
def topics(stack):
    """The hand-built document, uploaded and processed with fixed_size."""
    response = upload(stack, "topics.md", FIXTURE.read_bytes())
    events = process(stack, response.document.document_id, fixed_size())
    result = events[-1].result
    assert [o.strategy for o in result.strategies_completed] == ["fixed_size"], result
    return response.document


def indexes(entries) -> list[int]:
    return [e.chunk.chunk_index for e in entries]


def test_upload_keeps_the_text_exactly_and_detects_a_reupload(stack, topics):
    full = channels.ingest(stack.addresses["ingest"]).GetDocument(
        ingest_pb2.GetDocumentRequest(document_id=topics.document_id, view=documents_pb2.DOCUMENT_VIEW_FULL),
        timeout=10,
    )
    assert full.text == FIXTURE.read_text(encoding="utf-8")
    assert full.content_hash and full.collection == "default"
    assert len(full.tree.root.children) == 8  # eight paragraphs, no headings: a flat tree
    again = upload(stack, "topics-copy.md", FIXTURE.read_bytes())
    assert again.already_existed and again.document.document_id == topics.document_id


def test_processing_streams_progress_and_the_chunks_are_the_token_windows(stack, topics):
    events = process(stack, topics.document_id, fixed_size())
    phases = [e.progress.phase for e in events if e.HasField("progress")]
    assert phases[0] == chunker_pb2.STRATEGY_PHASE_STARTED
    assert phases[-1] == chunker_pb2.STRATEGY_PHASE_COMPLETED
    outcome = events[-1].result.strategies_completed[0]
    text = FIXTURE.read_text(encoding="utf-8")
    windows = expected_windows(text, CHUNK_SIZE)
    assert outcome.chunk_count == len(windows) == 8

    preview = channels.chunker(stack.addresses["chunker"]).PreviewChunks(
        chunker_pb2.PreviewChunksRequest(document_id=topics.document_id, strategy=fixed_size()), timeout=30
    )
    assert [c.content for c in preview.chunks] == windows
    for chunk in preview.chunks:
        assert text[chunk.start_char : chunk.end_char] == chunk.content
        assert chunk.token_count == tokens.count(chunk.content) <= CHUNK_SIZE


def test_hits_come_in_score_order_with_neighbours_from_the_same_document(stack, topics):
    # A second document on the same topic, so that neighbours from the wrong
    # document would be possible if expansion ignored the document.
    other = upload(stack, "volcanoes.md", b"Volcanoes erupt lava and magma and ash.\n\nLava flows downhill.\n")
    process(stack, other.document.document_id, fixed_size(chunk_size=8))

    response = retrieve(stack, "volcano eruption magma lava", topics.document_id, top_k=2, prev=1, nxt=1)
    tree = response.expansion_tree.hits
    scores = [node.hit.score for node in tree]
    assert scores == sorted(scores, reverse=True)
    assert [node.hit.rank for node in tree] == [1, 2]
    assert sorted(indexes(node.hit for node in tree)) == [2, 4]  # the two volcano paragraphs
    for node in tree:
        assert node.hit.label == HIT
        i = node.hit.chunk.chunk_index
        assert indexes(node.neighbors_prev) == [i - 1]
        assert indexes(node.neighbors_next) == [i + 1]
        for neighbour in [*node.neighbors_prev, *node.neighbors_next]:
            assert neighbour.label == NEIGHBOR
            assert neighbour.chunk.document_id == topics.document_id
            assert not neighbour.HasField("score")


def test_a_chunk_between_two_hits_is_under_both_in_the_tree_and_once_in_the_flat_list(stack, topics):
    response = retrieve(stack, "volcano eruption magma lava", topics.document_id, top_k=2, prev=1, nxt=1)
    by_index = {node.hit.chunk.chunk_index: node for node in response.expansion_tree.hits}
    assert indexes(by_index[2].neighbors_next) == [3]
    assert indexes(by_index[4].neighbors_prev) == [3]

    flat = response.retrieved_chunks
    assert indexes(flat) == [1, 2, 3, 4, 5]  # deduplicated, in document order
    assert [e.label for e in flat] == [NEIGHBOR, HIT, NEIGHBOR, HIT, NEIGHBOR]
    assert len({e.chunk.chunk_id for e in flat}) == len(flat)
    hit_scores = {e.chunk.chunk_index: e.score for e in flat if e.label == HIT}
    assert hit_scores == {i: node.hit.score for i, node in by_index.items()}


@pytest.mark.parametrize(
    ("query", "edge_index", "missing_side"),
    [
        ("astronomers galaxies supernova brightness", 0, "neighbors_prev"),
        ("jazz musicians improvise solos drummer", 7, "neighbors_next"),
    ],
)
def test_missing_neighbours_at_document_edges_are_skipped(stack, topics, query, edge_index, missing_side):
    response = retrieve(stack, query, topics.document_id, top_k=1, prev=2, nxt=2)
    (node,) = response.expansion_tree.hits
    assert node.hit.chunk.chunk_index == edge_index
    assert len(getattr(node, missing_side)) == 0
    present = "neighbors_next" if missing_side == "neighbors_prev" else "neighbors_prev"
    expected = [1, 2] if edge_index == 0 else [5, 6]
    assert indexes(getattr(node, present)) == expected
    assert indexes(response.retrieved_chunks) == sorted([edge_index, *expected])


def test_expansion_zero_gives_the_hits_with_empty_neighbour_lists(stack, topics):
    response = retrieve(stack, "volcano eruption magma lava", topics.document_id, top_k=3)
    assert len(response.expansion_tree.hits) == 3
    for node in response.expansion_tree.hits:
        assert len(node.neighbors_prev) == 0 and len(node.neighbors_next) == 0
    assert all(e.label == HIT for e in response.retrieved_chunks)
    assert sorted(indexes(response.retrieved_chunks)) == indexes(response.retrieved_chunks)


def test_a_question_asked_again_is_not_embedded_again(stack, topics):
    first = retrieve(stack, "how do sailors trim a mainsail?", topics.document_id, top_k=1)
    second = retrieve(stack, "how do sailors trim a mainsail?", topics.document_id, top_k=1)
    assert not first.timings.query_embedding_cached
    assert second.timings.query_embedding_cached
    assert indexes(first.retrieved_chunks) == indexes(second.retrieved_chunks)
    assert "mainsail" in first.retrieved_chunks[0].chunk.content


def test_processing_another_configuration_makes_it_active_and_keeps_the_first_beside_it(stack, topics):
    first = retrieve(stack, "volcano eruption magma lava", topics.document_id, top_k=100)
    process(stack, topics.document_id, fixed_size(chunk_size=20))
    response = retrieve(stack, "volcano eruption magma lava", topics.document_id, top_k=100)
    text = FIXTURE.read_text(encoding="utf-8")
    assert len(response.retrieved_chunks) == len(expected_windows(text, 20))  # the new set, not both
    assert {e.chunk.token_count <= 20 for e in response.retrieved_chunks} == {True}
    process(stack, topics.document_id, fixed_size())  # back to the module's configuration: indexed already
    response = retrieve(stack, "volcano eruption magma lava", topics.document_id, top_k=100)
    assert indexes(response.retrieved_chunks) == list(range(8))
    assert [e.chunk.chunk_id for e in response.retrieved_chunks] == [e.chunk.chunk_id for e in first.retrieved_chunks]
    sets = stack.client().list_indexed_sets("fixed_size", document_id=topics.document_id)
    assert sorted((s.points, s.active) for s in sets) == [(8, True), (len(expected_windows(text, 20)), False)]


def test_two_configurations_of_fixed_size_answer_side_by_side_by_config_id(stack):
    """Issue 12's first "done when": 256/0 and 512/64 on one real document, each
    searched by its config_id with its own chunk sizes; the last processed is active."""
    path = chroma_general() / "corpora" / "state_of_the_union.md"
    # Bytes of its own: the same bytes would be the chroma corpus' upload again (one stack serves every module).
    document = upload(stack, "sotu-two-configs.md", b"# Two configurations\n\n" + path.read_bytes()).document
    config_ids = {}
    for size, overlap in ((256, 0), (512, 64)):
        result = process(stack, document.document_id, fixed_size(size, overlap))[-1].result
        (outcome,) = result.strategies_completed
        config_ids[size] = outcome.config_id
    question = "What did the president say about inflation?"

    def sizes(config_id: str = "") -> list[int]:
        response = stack.client().retrieve(
            question,
            common_pb2.RetrievalOptions(
                strategy="fixed_size",
                config_id=config_id,
                top_k=5,
                filter=common_pb2.RetrievalFilter(document_ids=[document.document_id]),
            ),
        )
        assert {e.chunk.config_id for e in response.retrieved_chunks} == {config_id or config_ids[512]}
        return [e.chunk.token_count for e in response.retrieved_chunks]

    small, large = sizes(config_ids[256]), sizes(config_ids[512])
    assert len(small) == len(large) == 5
    assert max(small) <= 256 < max(large) <= 512
    assert sizes() == large  # no config_id: the active set, the last one processed


def test_deleting_a_document_removes_its_chunks_from_the_index(stack):
    doc = upload(stack, "short-lived.md", b"Penguins huddle together through the antarctic winter.\n").document
    process(stack, doc.document_id, fixed_size(chunk_size=16))
    assert retrieve(stack, "penguins", doc.document_id, top_k=5).retrieved_chunks
    deleted = channels.ingest(stack.addresses["ingest"]).DeleteDocument(
        ingest_pb2.DeleteDocumentRequest(document_id=doc.document_id), timeout=30
    )
    assert deleted.chunks_deleted == 1
    assert not retrieve(stack, "penguins", doc.document_id, top_k=5).retrieved_chunks
    with pytest.raises(grpc.RpcError) as err:
        channels.ingest(stack.addresses["ingest"]).GetDocument(
            ingest_pb2.GetDocumentRequest(document_id=doc.document_id), timeout=10
        )
    assert err.value.code() == grpc.StatusCode.NOT_FOUND


def test_bad_input_gets_a_precise_status_and_a_readable_message(stack, topics):
    ingest = channels.ingest(stack.addresses["ingest"])
    chunker = channels.chunker(stack.addresses["chunker"])
    retriever = channels.retriever(stack.addresses["retriever"])

    code, message = status_of(lambda: upload(stack, "empty.md", b""))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "empty" in message
    code, message = status_of(lambda: upload(stack, "photo.png", b"\x89PNG"))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and ".md" in message
    code, message = status_of(lambda: upload(stack, "binary.txt", bytes(range(32)) * 8))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "binary" in message
    code, _ = status_of(lambda: ingest.GetDocument(ingest_pb2.GetDocumentRequest(document_id="no-such-id"), timeout=10))
    assert code == grpc.StatusCode.NOT_FOUND
    code, message = status_of(lambda: process(stack, topics.document_id, common_pb2.StrategySpec(name="magic")))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "fixed_size" in message
    code, message = status_of(lambda: process(stack, topics.document_id, fixed_size(chunk_size=10, chunk_overlap=10)))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "chunk_overlap" in message
    code, _ = status_of(lambda: process(stack, "no-such-id", fixed_size()))
    assert code == grpc.StatusCode.NOT_FOUND
    code, message = status_of(lambda: retrieve(stack, "anything", topics.document_id, top_k=-1))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "top_k" in message
    code, message = status_of(lambda: retrieve(stack, "  ", topics.document_id, top_k=3))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "query" in message
    code, message = status_of(
        lambda: retriever.Retrieve(
            retriever_pb2.RetrieveRequest(
                query="x", options=common_pb2.RetrievalOptions(strategy="fixed_size", top_k=1, embedding_model="nope")
            ),
            timeout=10,
        )
    )
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "nope" in message
    # Nothing was left behind by the refused uploads.
    assert not {"empty.md", "photo.png", "binary.txt"} & {d.name for d in stack.client().list_documents()}
    # The servers are still up.
    assert chunker.ListStrategies(chunker_pb2.ListStrategiesRequest(), timeout=10).strategies
