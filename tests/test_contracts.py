"""The contracts compile, the committed stubs are what `make stubs` makes, and
the protos follow the layout the design asks for."""

from __future__ import annotations

import filecmp
import re

from chunklab import gen_stubs
from chunklab.v1 import chunker_pb2, evaluator_pb2, ingest_pb2, retriever_pb2

REPO = gen_stubs.REPO


def test_protos_compile_and_the_committed_stubs_are_not_stale(tmp_path):
    written = gen_stubs.generate(tmp_path)
    committed = REPO / "chunklab" / "v1"
    names = sorted(p.name for p in written)
    assert names == sorted(p.name for p in committed.iterdir() if p.is_file() and p.suffix in {".py", ".pyi"})
    _, mismatch, errors = filecmp.cmpfiles(tmp_path / "chunklab" / "v1", committed, names, shallow=False)
    assert not mismatch and not errors, f"stale stubs, run `make stubs`: {mismatch or errors}"
    # .pyi types come with every message module.
    assert {n for n in names if n.endswith("_pb2.pyi")} == {n[:-3] + ".pyi" for n in names if n.endswith("_pb2.py")}


def test_every_proto_is_in_package_chunklab_v1_under_its_directory():
    for proto in gen_stubs.proto_files():
        assert proto.parent == REPO / "protos" / "chunklab" / "v1"
        assert re.search(r"^package chunklab\.v1;$", proto.read_text(), re.M), proto


def test_each_service_has_its_own_file_and_every_rpc_documents_its_errors():
    services = {
        "ingest.proto": (ingest_pb2, "IngestService"),
        "chunker.proto": (chunker_pb2, "ChunkerService"),
        "retriever.proto": (retriever_pb2, "RetrieverService"),
        "evaluator.proto": (evaluator_pb2, "EvaluatorService"),
    }
    for file_name, (module, service) in services.items():
        assert module.DESCRIPTOR.name == f"chunklab/v1/{file_name}"
        assert service in module.DESCRIPTOR.services_by_name


def test_the_slice_contracts_carry_the_spec_fields():
    from chunklab.v1 import common_pb2

    chunk_fields = set(common_pb2.Chunk.DESCRIPTOR.fields_by_name)
    assert {
        "document_id", "document_name", "chunk_id", "strategy", "chunk_index", "token_count",
        "character_count", "start_char", "end_char", "heading_path", "parent_id", "enriched_content",
        "language", "collection", "published_at", "ingested_at",
    } <= chunk_fields
    retrieve = set(common_pb2.RetrievalOptions.DESCRIPTOR.fields_by_name)
    assert {"strategy", "config_id", "top_k", "neighbor_prev", "neighbor_next", "filter"} <= retrieve
    assert retriever_pb2.RetrieveRequest.DESCRIPTOR.fields_by_name["options"].message_type.name == "RetrievalOptions"
    response = set(retriever_pb2.RetrieveResponse.DESCRIPTOR.fields_by_name)
    assert {"retrieved_chunks", "expansion_tree"} <= response
    node = set(common_pb2.ExpansionNode.DESCRIPTOR.fields_by_name)
    assert {"hit", "neighbors_prev", "neighbors_next"} <= node
    result = set(chunker_pb2.ProcessDocumentResult.DESCRIPTOR.fields_by_name)
    assert {"strategies_completed", "strategies_failed"} <= result
