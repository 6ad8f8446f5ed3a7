"""Taking a configuration home (chunklab_app/export.py, ADR 0060): exact export
lines for a small processed document, the LangChain and LlamaIndex shapes as
their libraries load them, and the splitter snippets run as pasted."""

from __future__ import annotations

import json

import gradio as gr
import pytest

from chunklab import knobs
from chunklab.text import tokens
from chunklab.v1 import common_pb2, documents_pb2, evaluator_pb2, retriever_pb2
from chunklab_app import export
from chunklab_app.cli import export_cli
from frontend.forms import export as export_page
from services.chunker.strategies import REGISTRY, SourceDocument, offline_context

TEXT = "# Tides\n\nThe moon pulls the sea.\n\nTwice a day it rises.\n"
FIXED = knobs.to_spec("fixed_size", {"chunk_size": 8, "chunk_overlap": 2})
FIXED_CONFIG = "005612def688f107"


def processed(spec: common_pb2.StrategySpec, text: str = TEXT) -> list[common_pb2.Chunk]:
    """The chunks the chunker makes of the text, as the retriever stores them (with their model)."""
    source = SourceDocument(
        documents_pb2.Document(document_id="doc-1", name="tides.md", text=text, collection="default")
    )
    chunks = REGISTRY.build(spec).chunk(source, offline_context())
    for chunk in chunks:
        chunk.embedding_model = "all-MiniLM-L6-v2"
    return chunks


def test_jsonl_lines_are_exact_and_their_offsets_slice_the_canonical_text():
    lines = list(export.export_lines(processed(FIXED), FIXED, "jsonl"))
    common = {
        "document_id": "doc-1",
        "document_name": "tides.md",
        "strategy": "fixed_size",
        "config_id": FIXED_CONFIG,
        "knobs": {"chunk_overlap": 2, "chunk_size": 8},
    }
    expected = [
        {
            "chunk_id": "4ed48341-ffb1-52aa-9fe0-acd9558a8956",
            **common,
            "chunk_index": 0,
            "role": "chunk",
            "parent_id": None,
            "start_char": 0,
            "end_char": 27,
            "heading_path": [],
            "content": "# Tides\n\nThe moon pulls the",
            "token_count": 8,
            "embedding_model": "all-MiniLM-L6-v2",
        },
        {
            "chunk_id": "67dbebd9-409f-59a5-a4b0-971bc38b8592",
            **common,
            "chunk_index": 1,
            "role": "chunk",
            "parent_id": None,
            "start_char": 17,
            "end_char": 45,
            "heading_path": [],
            "content": " pulls the sea.\n\nTwice a day",
            "token_count": 8,
            "embedding_model": "all-MiniLM-L6-v2",
        },
        {
            "chunk_id": "760f61a2-d799-5dce-9e8e-dab6a05409f3",
            **common,
            "chunk_index": 2,
            "role": "chunk",
            "parent_id": None,
            "start_char": 39,
            "end_char": 56,
            "heading_path": [],
            "content": " a day it rises.\n",
            "token_count": 5,
            "embedding_model": "all-MiniLM-L6-v2",
        },
    ]
    assert lines == [json.dumps(record, ensure_ascii=False) + "\n" for record in expected]
    for record in map(json.loads, lines):
        assert TEXT[record["start_char"] : record["end_char"]] == record["content"]
        assert tokens.count(record["content"]) == record["token_count"]


def test_pages_and_enriched_text_appear_only_where_a_chunk_has_them():
    chunk = processed(FIXED)[0]
    chunk.first_page, chunk.last_page = 3, 4
    chunk.enriched_content = "About tides: # Tides"
    record = export.chunk_record(chunk, {})
    assert (record["first_page"], record["last_page"], record["enriched_content"]) == (3, 4, "About tides: # Tides")
    assert list(record).index("first_page") == list(record).index("end_char") + 1
    assert "first_page" not in export.chunk_record(processed(FIXED)[0], {})


def test_langchain_lines_load_as_documents_with_flat_metadata():
    documents = pytest.importorskip("langchain_core.documents")
    lines = list(export.export_lines(processed(FIXED), FIXED, "langchain"))
    loaded = [documents.Document(**json.loads(line)) for line in lines]
    assert [d.page_content for d in loaded] == [
        "# Tides\n\nThe moon pulls the",
        " pulls the sea.\n\nTwice a day",
        " a day it rises.\n",
    ]
    assert loaded[1].id == "67dbebd9-409f-59a5-a4b0-971bc38b8592"
    assert loaded[1].metadata == {
        "source": "tides.md",
        "document_id": "doc-1",
        "chunk_id": "67dbebd9-409f-59a5-a4b0-971bc38b8592",
        "strategy": "fixed_size",
        "config_id": FIXED_CONFIG,
        "knobs": "chunk_overlap=2, chunk_size=8",
        "chunk_index": 1,
        "role": "chunk",
        "start_index": 17,
        "end_index": 45,
        "token_count": 8,
        "embedding_model": "all-MiniLM-L6-v2",
    }
    for document in loaded:
        start, end = document.metadata["start_index"], document.metadata["end_index"]
        assert TEXT[start:end] == document.page_content


def test_llamaindex_nodes_link_children_to_their_parent_and_to_each_other():
    spec = knobs.to_spec("parent_child", {})
    nodes = [json.loads(line) for line in export.export_lines(processed(spec), spec, "llamaindex")]
    parent, *children = nodes
    assert parent["text"] == TEXT.rstrip("\n") and parent["metadata"]["role"] == "parent"
    assert [c["text"] for c in children] == ["# Tides", "The moon pulls the sea.", "Twice a day it rises."]
    assert [(c["start_char_idx"], c["end_char_idx"]) for c in children] == [(0, 7), (9, 32), (34, 55)]
    ids = [c["id_"] for c in children]
    assert parent["relationships"] == {
        "1": {"node_id": "doc-1", "metadata": {"source": "tides.md"}},
        "5": [{"node_id": i} for i in ids],
    }
    assert children[1]["relationships"] == {
        "1": {"node_id": "doc-1", "metadata": {"source": "tides.md"}},
        "2": {"node_id": ids[0]},
        "3": {"node_id": ids[2]},
        "4": {"node_id": parent["id_"]},
    }
    assert "2" not in children[0]["relationships"] and "3" not in children[2]["relationships"]
    # LlamaIndex embeds text and metadata together: every key is kept out, so it embeds what ChunkLab did.
    assert children[1]["excluded_embed_metadata_keys"] == list(children[1]["metadata"])


def test_an_unknown_format_is_refused_with_the_formats_there_are():
    with pytest.raises(export.ExportError, match=r"^export as jsonl, langchain, llamaindex, not 'csv'$"):
        list(export.export_lines([], FIXED, "csv"))


def test_file_names_carry_document_strategy_configuration_and_format():
    assert (
        export.file_name("Q3 report (final).pdf", "fixed_size", FIXED_CONFIG, "langchain")
        == f"Q3_report_final.fixed_size.{FIXED_CONFIG}.langchain.jsonl"
    )


def run_snippet(code: str, tmp_path, monkeypatch, text: str) -> dict:
    """Executes a snippet as pasted, in a folder holding the document it reads."""
    (tmp_path / export.DOCUMENT_PLACEHOLDER).write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    scope: dict = {}
    exec(compile(code, "snippet", "exec"), scope)
    return scope


def test_the_fixed_size_langchain_snippet_runs_and_cuts_what_chunklab_cuts(tmp_path, monkeypatch):
    pytest.importorskip("langchain_text_splitters")
    text = " ".join(f"word{i}" for i in range(60)) + "\n"
    spec = knobs.to_spec("fixed_size", {"chunk_size": 16, "chunk_overlap": 4})
    code = export.splitter_snippets(spec)["langchain"]
    assert 'TokenTextSplitter(encoding_name="cl100k_base", chunk_size=16, chunk_overlap=4)' in code
    chunks = run_snippet(code, tmp_path, monkeypatch, text)["chunks"]
    encoding = tokens.encoding()
    sizes = [len(encoding.encode(chunk)) for chunk in chunks]
    assert sizes[:-1] == [16] * (len(chunks) - 1) and 0 < sizes[-1] <= 16
    for before, after in zip(chunks, chunks[1:]):
        assert encoding.encode(before)[-4:] == encoding.encode(after)[:4]  # chunk_overlap tokens shared
    assert chunks == [c.content for c in processed(spec, text)]


@pytest.mark.parametrize("strategy", sorted(REGISTRY.names()))
def test_every_strategys_snippets_are_python_with_every_knob(strategy):
    spec = knobs.to_spec(strategy, {k.name: k.default for k in REGISTRY.get(strategy).knobs})
    code = export.snippet(spec, "0123456789abcdef")
    compile(code, strategy, "exec")
    assert f"spec = to_spec({strategy!r}, {export.knob_values(spec)!r})" in code
    if strategy not in export.SPLITTERS:
        assert f"# No equivalent: {strategy} has no counterpart in LangChain" in code
        assert f"# No equivalent: {strategy} has no counterpart in LlamaIndex" in code


def test_sentence_window_says_langchain_has_none_and_maps_the_window_for_llamaindex():
    spec = knobs.to_spec("sentence_window", {"window": 3, "sentences_per_unit": 2, "max_tokens": 256})
    snippets = export.splitter_snippets(spec)
    assert snippets["langchain"] == "# No equivalent: LangChain has no sentence-window splitter.\n"
    assert "SentenceWindowNodeParser.from_defaults(window_size=3," in snippets["llamaindex"]
    assert "# No setting puts 2 sentences in one node (sentences_per_unit)." in snippets["llamaindex"]


def experiment() -> evaluator_pb2.Experiment:
    runs = [
        evaluator_pb2.ExperimentRun(
            run_key=f"fixed_size[chunk_size={size}]",
            config_id=f"cfg{size}",
            spec=knobs.to_spec("fixed_size", {"chunk_size": size, "chunk_overlap": 0}),
            retrieval=common_pb2.RetrievalOptions(
                strategy="fixed_size",
                config_id=f"cfg{size}",
                top_k=3,
                neighbor_next=1,
                filter=common_pb2.RetrievalFilter(document_ids=["d1"]),
                rerank=common_pb2.RerankOptions(kind=common_pb2.RERANKER_KIND_CROSS_ENCODER, depth=20),
            ),
        )
        for size in (128, 256)
    ]
    return evaluator_pb2.Experiment(
        experiment_id="e1",
        runs=runs,
        verdict=evaluator_pb2.Verdict(
            metric="recall", winner_run_key="fixed_size[chunk_size=256]", leaders=["fixed_size[chunk_size=256]"]
        ),
    )


class FakeLab:
    def __init__(self, found: evaluator_pb2.Experiment) -> None:
        self.found = found

    def get_experiment(self, experiment_id: str, run_key: str = "", without_results: bool = False):
        return self.found


def test_the_winners_snippet_carries_its_knobs_configuration_and_retrieval_settings():
    code = export_cli.snippet_for_experiment(FakeLab(experiment()), "e1")
    assert code.startswith("# fixed_size[chunk_size=256]: the winner of experiment e1\n")
    assert "spec = to_spec('fixed_size', {'chunk_overlap': 0, 'chunk_size': 256})" in code
    assert "config_id = result.strategies_completed[0].config_id  # cfg256" in code
    # The experiment's documents are not the user's: the filter stays behind.
    assert (
        "options = common_pb2.RetrievalOptions(strategy='fixed_size', config_id=config_id, top_k=3, "
        "neighbor_next=1, rerank=common_pb2.RerankOptions(kind=common_pb2.RERANKER_KIND_CROSS_ENCODER, "
        "depth=20))"
    ) in code
    line = next(line for line in code.splitlines() if line.startswith("options = "))
    scope = {"common_pb2": common_pb2, "config_id": "cfg256"}
    exec(line, scope)
    expected = common_pb2.RetrievalOptions()
    expected.CopyFrom(experiment().runs[1].retrieval)
    expected.ClearField("filter")
    assert scope["options"] == expected
    assert 'TokenTextSplitter(encoding_name="cl100k_base", chunk_size=256, chunk_overlap=0)' in code


def test_an_experiment_without_a_winner_says_why_and_names_its_runs():
    found = experiment()
    found.verdict.Clear()
    found.verdict.unavailable = "one run only"
    with pytest.raises(export_cli.ExportUsage) as caught:
        export_cli.snippet_for_experiment(FakeLab(found), "e1")
    assert str(caught.value) == (
        "experiment e1 names no winner (one run only); choose one of its runs: "
        "fixed_size[chunk_size=128], fixed_size[chunk_size=256]"
    )
    found.verdict.leaders.extend(["fixed_size[chunk_size=128]", "fixed_size[chunk_size=256]"])  # a shared lead
    with pytest.raises(export_cli.ExportUsage) as caught:
        export_cli.snippet_for_experiment(FakeLab(found), "e1")
    assert str(caught.value).startswith(
        "experiment e1 names no winner (fixed_size[chunk_size=128], fixed_size[chunk_size=256] share the lead "
        "and none beats another on every measure); choose one of its runs:"
    )
    chosen = export_cli.snippet_for_experiment(FakeLab(found), "e1", "fixed_size[chunk_size=128]")
    assert chosen.startswith("# fixed_size[chunk_size=128]: a run of experiment e1\n")


class FakeSets(FakeLab):
    """A gateway holding one fixed_size set of the tides document."""

    def __init__(self) -> None:
        super().__init__(experiment())

    def indexed_set(self, document_id: str, strategy: str, embedding_model: str = "", config_id: str = ""):
        if config_id not in ("", FIXED_CONFIG):
            return None
        return retriever_pb2.IndexedSet(
            document_id=document_id,
            strategy=strategy,
            config_id=FIXED_CONFIG,
            spec=FIXED,
            document_name="tides.md",
            embedding_model="all-MiniLM-L6-v2",
        )

    def indexed_chunks(self, document_id: str, strategy: str, config_id: str = "", embedding_model: str = ""):
        return processed(FIXED)


def test_the_export_button_writes_the_chosen_set_as_a_file_to_download():
    path = export_page.export_chunks(FakeSets(), "doc-1", f"fixed_size/{FIXED_CONFIG}", "llamaindex")
    assert path.endswith(f"/tides.fixed_size.{FIXED_CONFIG}.llamaindex.jsonl")
    with open(path, encoding="utf-8") as written:
        assert written.read() == "".join(export.export_lines(processed(FIXED), FIXED, "llamaindex"))
    with pytest.raises(gr.Error, match="no fixed_size index set with configuration 00000000deadbeef; process it"):
        export_page.export_chunks(FakeSets(), "doc-1", "fixed_size/00000000deadbeef", "jsonl")
    with pytest.raises(gr.Error, match="Select a document and one of its index sets to export."):
        export_page.export_chunks(FakeSets(), "doc-1", None, "jsonl")


def test_the_experiment_detail_shows_the_winners_code_per_library():
    note, chunklab, langchain, llama = export_page.winner_code(FakeLab(experiment()), "e1")
    assert "fixed_size[chunk_size=256] won" in note
    assert "spec = to_spec('fixed_size', {'chunk_overlap': 0, 'chunk_size': 256})" in chunklab
    assert langchain.startswith("from langchain_text_splitters import TokenTextSplitter\n")
    assert "TokenTextSplitter(chunk_size=256, chunk_overlap=0, tokenizer=" in llama
    found = experiment()
    found.verdict.Clear()
    note, *code = export_page.winner_code(FakeLab(found), "e1")
    assert "names no winner" in note and code == ["", "", ""]


@pytest.mark.parametrize(
    ("strategy", "values"),
    [("recursive", {"chunk_size": 24, "chunk_overlap": 4}), ("markdown_structure", {"max_tokens": 24})],
)
def test_the_other_langchain_splitter_snippets_run_as_pasted(strategy, values, tmp_path, monkeypatch):
    pytest.importorskip("langchain_text_splitters")
    code = export.splitter_snippets(knobs.to_spec(strategy, values))["langchain"]
    chunks = run_snippet(code, tmp_path, monkeypatch, TEXT * 3)["chunks"]
    texts = [getattr(chunk, "page_content", chunk) for chunk in chunks]
    assert texts and all(0 < tokens.count(text) <= 24 for text in texts)  # short lines: none is over the size


def test_a_semantic_snippet_names_the_original_weights_for_every_variant_of_the_bundled_model():
    """The default model is the int8 ONNX export (ADR 0071); LangChain and LlamaIndex load the
    same weights from Hugging Face under the original name."""
    spec = knobs.to_spec("semantic", {k.name: k.default for k in REGISTRY.get("semantic").knobs})
    for model in ("", "all-MiniLM-L6-v2", "all-MiniLM-L6-v2-onnx", "all-MiniLM-L6-v2-onnx-int8"):
        snippets = export.splitter_snippets(spec, model)
        assert "HuggingFaceEmbeddings(model_name='sentence-transformers/all-MiniLM-L6-v2')" in snippets["langchain"], (
            model
        )
        assert "sentence-transformers/all-MiniLM-L6-v2" in snippets["llamaindex"], model
