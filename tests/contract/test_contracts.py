"""The contracts compile, the committed stubs are what `make stubs` makes, and
the protos follow the layout the design asks for."""

from __future__ import annotations

import filecmp
import re

from chunklab.v1 import chunker_pb2, evaluator_pb2, ingest_pb2, retriever_pb2
from tools import gen_stubs

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


def rpc_comments(proto_text: str) -> dict[str, str]:
    """Each `rpc` of a .proto file with the `//` comment block right above it
    (joined into one line; '' when a blank or other line comes between)."""
    found: dict[str, str] = {}
    block: list[str] = []
    for line in proto_text.splitlines():
        stripped = line.strip()
        if stripped.startswith("//"):
            block.append(stripped[2:].strip())
            continue
        rpc = re.match(r"rpc\s+(\w+)", stripped)
        if rpc:
            found[rpc.group(1)] = " ".join(block)
        block = []
    return found


def undocumented(comments: dict[str, str]) -> list[str]:
    """The rpcs whose comment does not say which errors they return."""
    return [name for name, comment in comments.items() if not re.search(r"\bErrors:\s*\S", comment)]


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
    missing = []
    for proto in gen_stubs.proto_files():
        comments = rpc_comments(proto.read_text(encoding="utf-8"))
        if proto.name in services:
            module, service = services[proto.name]
            # the parse found every method the compiler did, and no other
            assert sorted(comments) == sorted(module.DESCRIPTOR.services_by_name[service].methods_by_name), proto
        else:
            assert comments == {}, f"{proto.name} declares rpcs but is not a service's file"
        missing += [f"{proto.name}: rpc {name}" for name in undocumented(comments)]
    assert not missing, (
        "every rpc's comment block, right above it, says which errors it returns ('Errors: ...'): " + ", ".join(missing)
    )


def test_the_errors_check_reads_the_comment_right_above_each_rpc():
    """The check itself works on a hand-written service: a comment cut off by a
    blank line, one without `Errors:` and an empty `Errors:` are caught."""
    proto = """service Demo {
  // Gets one. Errors: NOT_FOUND.
  rpc Get(GetRequest) returns (Thing);
  // Lists them.
  // Errors: INVALID_ARGUMENT (bad page_size).
  rpc List(ListRequest)
      returns (ListResponse);
  // Errors: none.

  rpc Detached(Empty) returns (Empty);
  // Deletes one, quietly.
  rpc Delete(DeleteRequest) returns (Empty);
  // Errors:
  rpc Blank(Empty) returns (Empty);
}
"""
    comments = rpc_comments(proto)
    assert comments == {
        "Get": "Gets one. Errors: NOT_FOUND.",
        "List": "Lists them. Errors: INVALID_ARGUMENT (bad page_size).",
        "Detached": "",
        "Delete": "Deletes one, quietly.",
        "Blank": "Errors:",
    }
    assert undocumented(comments) == ["Detached", "Delete", "Blank"]


def test_the_slice_contracts_carry_the_spec_fields():
    from chunklab.v1 import common_pb2

    chunk_fields = set(common_pb2.Chunk.DESCRIPTOR.fields_by_name)
    assert {
        "document_id",
        "document_name",
        "chunk_id",
        "strategy",
        "chunk_index",
        "token_count",
        "character_count",
        "start_char",
        "end_char",
        "heading_path",
        "parent_id",
        "enriched_content",
        "language",
        "collection",
        "published_at",
        "ingested_at",
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
