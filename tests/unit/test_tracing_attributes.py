"""The ids a span carries (chunklab.rpc.tracing_grpc.message_attributes): exact
attributes for hand-built requests and replies, nothing for text, and every
message of every contract readable without an error (a tracing bug must
never fail a call)."""

from __future__ import annotations

import pytest

from chunklab.rpc.tracing_grpc import message_attributes
from chunklab.v1 import (
    chunker_pb2,
    common_pb2,
    documents_pb2,
    evaluator_pb2,
    ingest_pb2,
    retriever_pb2,
)

pytestmark = pytest.mark.unit

CONTRACTS = (chunker_pb2, common_pb2, documents_pb2, evaluator_pb2, ingest_pb2, retriever_pb2)


def spec(name: str) -> common_pb2.StrategySpec:
    return common_pb2.StrategySpec(name=name, knobs={"chunk_size": common_pb2.KnobValue(int_value=64)})


def test_a_retrieve_carries_its_strategy_and_configuration_but_never_its_query():
    request = retriever_pb2.RetrieveRequest(
        query="what is the secret plan?",
        options=common_pb2.RetrievalOptions(
            strategy="fixed_size", config_id="cfg1", top_k=5, filter=common_pb2.RetrievalFilter(document_ids=["d1"])
        ),
    )
    assert message_attributes(request) == {"chunklab.strategy": "fixed_size", "chunklab.config_id": "cfg1"}


def test_processing_carries_the_document_and_every_strategy_a_preview_its_one_strategy():
    process = chunker_pb2.ProcessDocumentRequest(document_id="d1", strategies=[spec("fixed_size"), spec("recursive")])
    assert message_attributes(process) == {
        "chunklab.document_id": "d1",
        "chunklab.strategies": ["fixed_size", "recursive"],
    }
    preview = chunker_pb2.PreviewChunksRequest(document_id="d2", strategy=spec("semantic"))
    assert message_attributes(preview) == {"chunklab.document_id": "d2", "chunklab.strategy": "semantic"}


def test_a_header_a_key_and_a_reply_give_their_ids_one_level_down():
    header = retriever_pb2.IndexChunksRequest(
        header=retriever_pb2.IndexHeader(
            document_id="d1", strategy="fixed_size", config_id="c1", embedding_model="all-MiniLM-L6-v2", dimension=384
        )
    )
    assert message_attributes(header) == {
        "chunklab.document_id": "d1",
        "chunklab.strategy": "fixed_size",
        "chunklab.config_id": "c1",
        "chunklab.embedding_model": "all-MiniLM-L6-v2",
    }
    key = retriever_pb2.GetIndexedSetRequest(key=retriever_pb2.IndexedSetKey(document_id="d3", strategy="recursive"))
    assert message_attributes(key) == {"chunklab.document_id": "d3", "chunklab.strategy": "recursive"}
    created = ingest_pb2.CreateDocumentResponse(
        document=documents_pb2.Document(document_id="d4", collection="news", text="the whole document's text")
    )
    assert message_attributes(created) == {"chunklab.document_id": "d4", "chunklab.collection": "news"}


def test_an_empty_message_carries_nothing_and_text_fields_never_count():
    assert message_attributes(retriever_pb2.RetrieveRequest()) == {}
    assert message_attributes(ingest_pb2.CreateDocumentRequest(data=b"secret bytes")) == {}
    assert message_attributes(evaluator_pb2.AnswerRequest(question="a question")) == {}


def test_every_message_of_every_contract_can_be_read():
    for module in CONTRACTS:
        for descriptor in module.DESCRIPTOR.message_types_by_name.values():
            message = getattr(module, descriptor.name)()
            assert message_attributes(message) == {}, descriptor.full_name
