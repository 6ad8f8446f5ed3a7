"""Taking a configuration home through the stack: ListIndexedChunks pages
through a set, `chunklab export chunks` writes what the retriever holds, and
the ChunkLab snippet runs as pasted against the running services."""

from __future__ import annotations

import json

import grpc
import pytest

from chunklab import knobs
from chunklab.rpc import channels
from chunklab.v1 import common_pb2, retriever_pb2
from chunklab_app import export
from chunklab_app.cli import export_cli
from chunklab_app.cli import main as cli
from tests.support.status import status_of

TEXT = (
    "# Export handbook\n\n## Harbours\n\nThe export pilot boards every tanker at the outer buoy and stays "
    "on the bridge until the ship is moored.\n\nTugs push from the port side while the lines go ashore.\n\n"
    "## Customs\n\nEach container is sealed, weighed and scanned before it leaves the quay for the "
    "export yard.\n"
)
FIXED = knobs.to_spec("fixed_size", {"chunk_size": 16, "chunk_overlap": 4})


@pytest.fixture(scope="module")
def lab(stack):
    return stack.client()


@pytest.fixture(scope="module")
def document(lab):
    uploaded = lab.upload_document(TEXT.encode(), name="export-handbook.md", collection="export").document
    result = lab.process(uploaded.document_id, [FIXED, knobs.to_spec("parent_child", {"child_max_tokens": 16})])
    assert not result.strategies_failed
    return lab.get_document_text(uploaded.document_id)


@pytest.fixture
def stack_env(stack, monkeypatch):
    """Settings() in this process (the CLI's, a pasted snippet's) name the stack."""
    for name, value in stack.env().items():
        if name.startswith("CHUNKLAB_") or name == "TIKTOKEN_CACHE_DIR":
            monkeypatch.setenv(name, value)


def test_list_indexed_chunks_pages_through_children_then_parents(stack, lab, document):
    stub = channels.retriever(stack.addresses["retriever"], stack.settings())
    key = retriever_pb2.IndexedSetKey(
        embedding_model=lab.settings.embedding_model, document_id=document.document_id, strategy="parent_child"
    )
    pages, token = [], ""
    while True:
        page = stub.ListIndexedChunks(
            retriever_pb2.ListIndexedChunksRequest(key=key, page_size=2, page_token=token), timeout=10
        )
        pages.append([(c.role, c.chunk_index) for c in page.chunks])
        token = page.next_page_token
        if not token:
            break
    every = lab.indexed_chunks(document.document_id, "parent_child")
    assert [item for page in pages for item in page] == [(c.role, c.chunk_index) for c in every]
    children = [c for c in every if c.role == common_pb2.CHUNK_ROLE_CHILD]
    parents = [c for c in every if c.role == common_pb2.CHUNK_ROLE_PARENT]
    assert every == children + parents  # by role, then chunk_index
    assert [c.chunk_index for c in children] == list(range(len(children)))
    assert all(len(page) <= 2 for page in pages) and len(pages) >= 3
    assert {c.parent_id for c in children} == {p.chunk_id for p in parents}
    for chunk in every:
        assert document.text[chunk.start_char : chunk.end_char] == chunk.content

    assert (
        status_of(
            lambda: stub.ListIndexedChunks(
                retriever_pb2.ListIndexedChunksRequest(key=key, page_token="bm90IG91cnM="), timeout=10
            )
        )[0]
        == grpc.StatusCode.INVALID_ARGUMENT
    )
    missing = retriever_pb2.IndexedSetKey(
        embedding_model=key.embedding_model,
        document_id=document.document_id,
        strategy="parent_child",
        config_id="00000000deadbeef",
    )
    code, message = status_of(
        lambda: stub.ListIndexedChunks(retriever_pb2.ListIndexedChunksRequest(key=missing), timeout=10)
    )
    assert code == grpc.StatusCode.NOT_FOUND and "the Documents page lists each document’s index sets" in message


def test_the_cli_exports_the_set_the_retriever_holds(lab, document, stack_env, tmp_path, capsys):
    documents = pytest.importorskip("langchain_core.documents")
    code = cli.main(
        [
            "export",
            "chunks",
            "--document",
            "export-handbook.md",
            "--strategy",
            "fixed_size",
            "--format",
            "langchain",
            "-o",
            f"{tmp_path}/",
        ]
    )
    assert code == 0
    (written,) = tmp_path.iterdir()
    config_id = lab.indexed_set(document.document_id, "fixed_size").config_id
    assert written.name == f"export-handbook.fixed_size.{config_id}.langchain.jsonl"
    loaded = [documents.Document(**json.loads(line)) for line in written.read_text(encoding="utf-8").splitlines()]
    stored = lab.indexed_chunks(document.document_id, "fixed_size")
    assert [d.page_content for d in loaded] == [c.content for c in stored]
    assert capsys.readouterr().err == f"{len(stored)} chunks written to {written}\n"
    for item in loaded:
        start, end = item.metadata["start_index"], item.metadata["end_index"]
        assert document.text[start:end] == item.page_content
        assert item.metadata["knobs"] == "chunk_overlap=4, chunk_size=16"

    assert (
        cli.main(
            [
                "export",
                "chunks",
                "--document",
                document.document_id,
                "--strategy",
                "fixed_size",
                "--config-id",
                "00000000deadbeef",
                "-o",
                str(tmp_path / "none.jsonl"),
            ]
        )
        == 2
    )
    assert capsys.readouterr().err == (
        f"chunklab: document {document.document_id} has no fixed_size index set with configuration "
        "00000000deadbeef; process it first, or pick one of its sets (the Documents page lists them)\n"
    )


def test_the_chunklab_snippet_runs_as_pasted_against_the_stack(lab, stack_env, tmp_path, monkeypatch):
    code = export_cli.snippet_for_strategy(lab, "fixed_size", ["chunk_size=24", "chunk_overlap=0"], ["chunklab"])
    expected = knobs.config_id(
        "fixed_size",
        knobs.from_info(next(i for i in lab.list_strategies() if i.name == "fixed_size")),
        {"chunk_size": 24, "chunk_overlap": 0},
    )
    text = "Snippet check: the lighthouse keeper logs every passing ship, its flag and its cargo, in ink.\n" * 3
    (tmp_path / export.DOCUMENT_PLACEHOLDER).write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    scope: dict = {}
    exec(compile(code, "snippet", "exec"), scope)
    assert scope["config_id"] == expected
    assert f"# {expected}" in code
    stored = lab.get_document_text(scope["document"].document_id).text
    assert [c.token_count <= 24 for c in scope["chunks"]] == [True] * len(scope["chunks"])
    assert "".join(c.content for c in scope["chunks"]) == stored  # no overlap: the chunks tile the text
    assert scope["context"] and all(item.chunk.config_id == expected for item in scope["context"])


def test_a_snippet_for_an_unknown_knob_names_the_strategys_knobs(lab, stack_env, capsys):
    assert cli.main(["export", "snippet", "--strategy", "fixed_size", "--knob", "size=3"]) == 2
    assert capsys.readouterr().err == (
        "chunklab: --knob 'size=3': fixed_size has no knob 'size'; its knobs are chunk_size, chunk_overlap\n"
    )


def test_a_snippet_takes_the_knob_syntax_of_every_command_and_refuses_another_strategys_knob(lab, stack_env, capsys):
    """`--knob strategy.knob=value`, as `load` takes it (ADR 0075); a knob of another strategy is refused."""
    assert (
        cli.main(
            [
                "export",
                "snippet",
                "--strategy",
                "fixed_size",
                "--knob",
                "fixed_size.chunk_size=24",
                "--knob",
                "fixed_size.chunk_overlap=0",
                "--library",
                "chunklab",
            ]
        )
        == 0
    )
    assert "spec = to_spec('fixed_size', {'chunk_overlap': 0, 'chunk_size': 24})" in capsys.readouterr().out
    assert cli.main(["export", "snippet", "--strategy", "fixed_size", "--knob", "recursive.chunk_size=24"]) == 2
    assert capsys.readouterr().err == (
        "chunklab: --knob 'recursive.chunk_size=24': the command names --strategy fixed_size, not recursive\n"
    )
