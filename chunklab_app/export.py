"""Taking a configuration home (ADR 0060): an index set's chunks in the shapes
RAG code loads, and a configuration as code to paste.

One owner for both mappings, used by the CLI (`chunklab export`) and the UI:

- Chunks, one JSON object a line, in three shapes: ChunkLab's own record
  (`jsonl`: offsets, roles, knobs and provenance), LangChain's Document
  (`langchain`: `Document(**obj)`) and LlamaIndex's TextNode (`llamaindex`:
  `TextNode(**obj)`, with source, neighbour and parent relationships).
- A configuration as ChunkLab's client call, and as the nearest LangChain and
  LlamaIndex splitter settings where one exists; where none does, a comment
  says so rather than inventing one.

The chunks come from the retriever (ListIndexedSets, ListIndexedChunks) as
they were indexed, so an export is the set that was measured.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from chunklab import ids, knobs
from chunklab.settings import ENV_PREFIX, Settings, variable
from chunklab.v1 import common_pb2, evaluator_pb2

FORMATS = ("jsonl", "langchain", "llamaindex")
# Every format is JSON Lines: one object a line, read line by line at any size.
SUFFIX = ".jsonl"
# The file a pasted snippet reads; the user replaces it with theirs.
DOCUMENT_PLACEHOLDER = "your_document.md"
# LlamaIndex's NodeRelationship values as its JSON spells them.
SOURCE, PREVIOUS, NEXT, PARENT, CHILD = "1", "2", "3", "4", "5"
# ChunkLab's embedding models by the names LangChain's and LlamaIndex's Hugging Face classes load.
# The ONNX variants are the same weights (ADR 0062): a splitter that embeds loads the original.
HUGGING_FACE_NAMES = {
    "all-MiniLM-L6-v2": "sentence-transformers/all-MiniLM-L6-v2",
    "all-MiniLM-L6-v2-onnx": "sentence-transformers/all-MiniLM-L6-v2",
    "all-MiniLM-L6-v2-onnx-int8": "sentence-transformers/all-MiniLM-L6-v2",
    "multilingual-e5-small": "intfloat/multilingual-e5-small",
}


class ExportError(ValueError):
    """A request that cannot be exported; the message says what to do instead."""


# -- chunks ----------------------------------------------------------------------


def knob_values(spec: common_pb2.StrategySpec) -> dict[str, Any]:
    """A spec's knobs as Python values, by name."""
    return {name: knobs.python_value(spec.knobs[name]) for name in sorted(spec.knobs)}


def chunk_record(chunk: common_pb2.Chunk, knob_values: Mapping[str, Any]) -> dict:
    """ChunkLab's own line: content is canonical_text[start_char:end_char]."""
    record = {
        "chunk_id": chunk.chunk_id,
        "document_id": chunk.document_id,
        "document_name": chunk.document_name,
        "strategy": chunk.strategy,
        "config_id": chunk.config_id,
        "knobs": dict(knob_values),
        "chunk_index": chunk.chunk_index,
        "role": ids.role_name(chunk.role),
        "parent_id": chunk.parent_id if chunk.HasField("parent_id") else None,
        "start_char": chunk.start_char,
        "end_char": chunk.end_char,
    }
    if chunk.first_page:
        record.update(first_page=chunk.first_page, last_page=chunk.last_page)
    record.update(
        heading_path=list(chunk.heading_path),
        content=chunk.content,
        token_count=chunk.token_count,
        embedding_model=chunk.embedding_model,
    )
    if chunk.HasField("enriched_content"):
        record["enriched_content"] = chunk.enriched_content
    return record


def flat_metadata(chunk: common_pb2.Chunk, knob_values: Mapping[str, Any]) -> dict:
    """The metadata of the LangChain and LlamaIndex shapes: scalars only (vector
    stores such as Chroma refuse lists and nulls), headings joined by " > "."""
    metadata = {
        "source": chunk.document_name,
        "document_id": chunk.document_id,
        "chunk_id": chunk.chunk_id,
        "strategy": chunk.strategy,
        "config_id": chunk.config_id,
        "knobs": ", ".join(f"{k}={knobs.label(v)}" for k, v in sorted(knob_values.items())),
        "chunk_index": chunk.chunk_index,
        "role": ids.role_name(chunk.role),
        "start_index": chunk.start_char,
        "end_index": chunk.end_char,
        "token_count": chunk.token_count,
        "embedding_model": chunk.embedding_model,
    }
    if chunk.HasField("parent_id"):
        metadata["parent_id"] = chunk.parent_id
    if chunk.first_page:
        metadata.update(first_page=chunk.first_page, last_page=chunk.last_page)
    if chunk.heading_path:
        metadata["heading_path"] = " > ".join(chunk.heading_path)
    return metadata


def langchain_document(chunk: common_pb2.Chunk, knob_values: Mapping[str, Any]) -> dict:
    """`langchain_core.documents.Document(**obj)`; start_index is the key LangChain's
    splitters write with add_start_index."""
    return {"id": chunk.chunk_id, "page_content": chunk.content, "metadata": flat_metadata(chunk, knob_values)}


def _related(node_id: str) -> dict:
    # node_type is left out: LlamaIndex renumbered ObjectType between versions.
    return {"node_id": node_id}


def llamaindex_nodes(chunks: list[common_pb2.Chunk], knob_values: Mapping[str, Any]) -> Iterator[dict]:
    """`llama_index.core.schema.TextNode(**obj)` for each chunk: SOURCE the
    document, PREVIOUS/NEXT the chunks of the same role before and after it,
    PARENT its parent and CHILD a parent's children. Every metadata key is kept
    out of the embedded and the LLM's text, so LlamaIndex embeds what ChunkLab did."""
    by_position = {(c.role, c.chunk_index): c.chunk_id for c in chunks}
    children: dict[str, list[str]] = {}
    for chunk in chunks:
        if chunk.HasField("parent_id"):
            children.setdefault(chunk.parent_id, []).append(chunk.chunk_id)
    for chunk in chunks:
        metadata = flat_metadata(chunk, knob_values)
        relationships: dict[str, Any] = {
            SOURCE: {**_related(chunk.document_id), "metadata": {"source": chunk.document_name}}
        }
        for key, step in ((PREVIOUS, -1), (NEXT, 1)):
            if (found := by_position.get((chunk.role, chunk.chunk_index + step))) is not None:
                relationships[key] = _related(found)
        if chunk.HasField("parent_id"):
            relationships[PARENT] = _related(chunk.parent_id)
        if chunk.chunk_id in children:
            relationships[CHILD] = [_related(child) for child in children[chunk.chunk_id]]
        yield {
            "id_": chunk.chunk_id,
            "text": chunk.content,
            "metadata": metadata,
            "excluded_embed_metadata_keys": list(metadata),
            "excluded_llm_metadata_keys": list(metadata),
            "relationships": relationships,
            "start_char_idx": chunk.start_char,
            "end_char_idx": chunk.end_char,
        }


def export_lines(chunks: Iterable[common_pb2.Chunk], spec: common_pb2.StrategySpec, fmt: str) -> Iterator[str]:
    """The chunks as JSON lines (each ending in a newline) in one of FORMATS."""
    if fmt not in FORMATS:
        raise ExportError(f"export as {', '.join(FORMATS)}, not {fmt!r}")
    values = knob_values(spec)
    chunks = list(chunks)
    if fmt == "jsonl":
        objects: Iterable[dict] = (chunk_record(c, values) for c in chunks)
    elif fmt == "langchain":
        objects = (langchain_document(c, values) for c in chunks)
    else:
        objects = llamaindex_nodes(chunks, values)
    for obj in objects:
        yield json.dumps(obj, ensure_ascii=False) + "\n"


def file_name(document_name: str, strategy: str, config_id: str, fmt: str) -> str:
    """e.g. handbook.fixed_size.3f2a9c0d1e4b5a67.langchain.jsonl (the name made safe for any file system)."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", Path(document_name).stem).strip("._") or "document"
    return f"{stem}.{strategy}.{config_id}.{fmt}{SUFFIX}"


def write_export(
    lab, document_id: str, strategy: str, fmt: str, target: str | Path, config_id: str = "", embedding_model: str = ""
) -> tuple[Path, int]:
    """Writes one index set's chunks (the active one unless config_id names
    another) to a file, or into a folder under file_name(); returns the path
    and how many chunks it holds."""
    if fmt not in FORMATS:
        raise ExportError(f"export as {', '.join(FORMATS)}, not {fmt!r}")
    found = lab.indexed_set(document_id, strategy, embedding_model=embedding_model, config_id=config_id)
    if found is None:
        which = f"configuration {config_id}" if config_id else "an active set"
        raise ExportError(
            f"document {document_id} has no {strategy} index set with {which}; process it first, "
            "or pick one of its sets (the Documents page lists them)"
        )
    chunks = lab.indexed_chunks(document_id, strategy, config_id=found.config_id, embedding_model=found.embedding_model)
    path = Path(target)
    if path.is_dir() or str(target).endswith(("/", "\\")):
        path.mkdir(parents=True, exist_ok=True)
        path = path / file_name(found.document_name or document_id, strategy, found.config_id, fmt)
    with open(path, "w", encoding="utf-8") as out:
        out.writelines(export_lines(chunks, found.spec, fmt))
    return path, len(chunks)


# -- configurations as code --------------------------------------------------------


def _literal(message, first: Mapping[str, str] | None = None, skip: tuple[str, ...] = ()) -> str:
    """A common_pb2 message as the Python that builds it: `first` written as
    given (names, not values), then every set field but `skip`; enums by name."""
    first = first or {}
    parts = [f"{name}={code}" for name, code in first.items()]
    for field, value in message.ListFields():
        if field.name in skip or field.name in first:
            continue
        if field.message_type is not None:
            code = _literal(value)
        elif field.enum_type is not None:
            code = f"common_pb2.{field.enum_type.values_by_number[value].name}"
        else:
            code = repr(value)
        parts.append(f"{field.name}={code}")
    return f"common_pb2.{message.DESCRIPTOR.name}({', '.join(parts)})"


def chunklab_snippet(
    spec: common_pb2.StrategySpec, config_id: str = "", retrieval: common_pb2.RetrievalOptions | None = None
) -> str:
    """ChunkLab's client: process a document with the configuration, read its
    chunks back, and search it with the same retrieval settings."""
    values = knob_values(spec)
    retrieval = retrieval if retrieval is not None else common_pb2.RetrievalOptions()
    model = retrieval.embedding_model
    # The experiment's documents are not the user's: its filter stays behind.
    shown = _literal(retrieval, {"strategy": repr(spec.name), "config_id": "config_id"}, skip=("filter",))
    expected = f"  # {config_id}" if config_id else ""
    return (
        "\n".join(
            [
                "from chunklab.client import ChunkLab",
                "from chunklab.knobs import to_spec",
                "from chunklab.settings import Settings",
                "from chunklab.v1 import common_pb2",
                "",
                f"lab = ChunkLab(Settings())  # the stack at {ENV_PREFIX}*_ADDRESS, with {variable('auth_token')} "
                "if it has one",
                f"spec = to_spec({spec.name!r}, {values!r})",
                f"document = lab.upload_document({DOCUMENT_PLACEHOLDER!r}).document",
                f"result = lab.process(document.document_id, [spec]{f', embedding_model={model!r}' if model else ''})",
                "if result.strategies_failed:",
                "    raise SystemExit(result.strategies_failed[0].reason)",
                f"config_id = result.strategies_completed[0].config_id{expected}",
                f"chunks = lab.indexed_chunks(document.document_id, {spec.name!r}, config_id=config_id"
                f"{f', embedding_model={model!r}' if model else ''})",
                f"options = {shown}",
                'context = lab.retrieve("your question", options).retrieved_chunks',
            ]
        )
        + "\n"
    )


def _read_text() -> str:
    return f'text = open({DOCUMENT_PLACEHOLDER!r}, encoding="utf-8").read()'


def _read_documents() -> list[str]:
    return [
        "from llama_index.core import Document",
        "",
        f'documents = [Document(text=open({DOCUMENT_PLACEHOLDER!r}, encoding="utf-8").read())]',
    ]


CL100K = 'tiktoken.get_encoding("cl100k_base").encode'


def _hugging_face(model: str) -> str:
    return HUGGING_FACE_NAMES.get(model, model)


def _fixed_size(v: Mapping, model: str) -> tuple[list[str], list[str]]:
    size, overlap = v["chunk_size"], v["chunk_overlap"]
    return (
        [
            "from langchain_text_splitters import TokenTextSplitter",
            "",
            _read_text(),
            "# Token windows over cl100k_base, cut as ChunkLab's fixed_size cuts them.",
            f'splitter = TokenTextSplitter(encoding_name="cl100k_base", chunk_size={size}, chunk_overlap={overlap})',
            "chunks = splitter.split_text(text)",
        ],
        [
            "import tiktoken",
            "from llama_index.core.node_parser import TokenTextSplitter",
            *_read_documents(),
            "# The same token sizes over cl100k_base; LlamaIndex cuts at spaces first, so boundaries differ a little.",
            f"parser = TokenTextSplitter(chunk_size={size}, chunk_overlap={overlap}, tokenizer={CL100K})",
            "nodes = parser.get_nodes_from_documents(documents)",
        ],
    )


def _recursive(v: Mapping, model: str) -> tuple[list[str], list[str]]:
    size, overlap = v["chunk_size"], v["chunk_overlap"]
    return (
        [
            "from langchain_text_splitters import RecursiveCharacterTextSplitter",
            "",
            _read_text(),
            "# ChunkLab splits at Markdown headers before blank lines, and its chunk_size is a hard maximum;",
            "# here a part without separators can stay longer than chunk_size.",
            "splitter = RecursiveCharacterTextSplitter.from_tiktoken_encoder(",
            f'    encoding_name="cl100k_base", chunk_size={size}, chunk_overlap={overlap})',
            "chunks = splitter.split_text(text)",
        ],
        [
            "import tiktoken",
            "from llama_index.core.node_parser import SentenceSplitter",
            *_read_documents(),
            "# The nearest: paragraphs, then sentences, then words, merged up to chunk_size tokens.",
            f"parser = SentenceSplitter(chunk_size={size}, chunk_overlap={overlap}, tokenizer={CL100K})",
            "nodes = parser.get_nodes_from_documents(documents)",
        ],
    )


def _sentence_window(v: Mapping, model: str) -> tuple[list[str], list[str]]:
    window = v["window"]
    if window < 1:
        llama = [
            "# No equivalent: SentenceWindowNodeParser needs window_size of at least 1 (this configuration has 0)."
        ]
    else:
        llama = [
            "from llama_index.core.node_parser import SentenceWindowNodeParser",
            "from llama_index.core.postprocessor import MetadataReplacementPostProcessor",
            *_read_documents(),
            "# One sentence a node, the sentences around it in its metadata.",
            f'parser = SentenceWindowNodeParser.from_defaults(window_size={window}, window_metadata_key="window",',
            '                                                 original_text_metadata_key="original_text")',
            "nodes = parser.get_nodes_from_documents(documents)",
            "# At query time a hit is replaced by its window, as ChunkLab's retriever expands it:",
            'postprocessor = MetadataReplacementPostProcessor(target_metadata_key="window")',
        ]
    if v.get("sentences_per_unit", 1) != 1:
        llama.append(f"# No setting puts {v['sentences_per_unit']} sentences in one node (sentences_per_unit).")
    llama.append(f"# No setting caps a sentence at max_tokens={v['max_tokens']}.")
    return ["# No equivalent: LangChain has no sentence-window splitter."], llama


def _semantic(v: Mapping, model: str) -> tuple[list[str], list[str]]:
    caveat = (
        f"# Cuts at a percentile of the distances between sentences, not at ChunkLab's similarity "
        f"threshold {knobs.label(v['threshold'])},"
    )
    limits = f"# and has no min_sentences ({v['min_sentences']}) or max_tokens ({v['max_tokens']}): tune the amount."
    return (
        [
            "from langchain_experimental.text_splitter import SemanticChunker",
            "from langchain_huggingface import HuggingFaceEmbeddings",
            "",
            _read_text(),
            caveat,
            limits,
            f"embeddings = HuggingFaceEmbeddings(model_name={_hugging_face(model)!r})",
            'splitter = SemanticChunker(embeddings, breakpoint_threshold_type="percentile",',
            "                           breakpoint_threshold_amount=95.0)",
            "chunks = splitter.split_text(text)",
        ],
        [
            "from llama_index.core.node_parser import SemanticSplitterNodeParser",
            "from llama_index.embeddings.huggingface import HuggingFaceEmbedding",
            *_read_documents(),
            caveat,
            limits,
            f"embed_model = HuggingFaceEmbedding(model_name={_hugging_face(model)!r})",
            "parser = SemanticSplitterNodeParser(buffer_size=1, breakpoint_percentile_threshold=95,",
            "                                    embed_model=embed_model)",
            "nodes = parser.get_nodes_from_documents(documents)",
        ],
    )


def _parent_child(v: Mapping, model: str) -> tuple[list[str], list[str]]:
    parent, child = v["parent_max_tokens"], v["child_max_tokens"]
    caveat = (
        f"# Parents by size only: ChunkLab's parents follow the headings (parent_level={v['parent_level']}), "
        "its children the paragraphs."
    )
    return (
        [
            "from langchain_text_splitters import RecursiveCharacterTextSplitter",
            "",
            caveat,
            "# LangChain's ParentDocumentRetriever takes these two splitters (and a vector store and a docstore).",
            "parent_splitter = RecursiveCharacterTextSplitter.from_tiktoken_encoder(",
            f'    encoding_name="cl100k_base", chunk_size={parent}, chunk_overlap=0)',
            "child_splitter = RecursiveCharacterTextSplitter.from_tiktoken_encoder(",
            f'    encoding_name="cl100k_base", chunk_size={child}, chunk_overlap=0)',
        ],
        [
            "from llama_index.core.node_parser import HierarchicalNodeParser, get_leaf_nodes",
            *_read_documents(),
            caveat,
            f"parser = HierarchicalNodeParser.from_defaults(chunk_sizes=[{parent}, {child}], chunk_overlap=0)",
            "nodes = parser.get_nodes_from_documents(documents)",
            "leaves = get_leaf_nodes(nodes)  # index these; AutoMergingRetriever returns their parents",
        ],
    )


def _markdown_structure(v: Mapping, model: str) -> tuple[list[str], list[str]]:
    most = v["max_tokens"]
    return (
        [
            "from langchain_text_splitters import MarkdownHeaderTextSplitter, RecursiveCharacterTextSplitter",
            "",
            _read_text(),
            'headers = [("#" * level, f"h{level}") for level in range(1, 7)]',
            "sections = MarkdownHeaderTextSplitter(headers_to_split_on=headers).split_text(text)",
            "splitter = RecursiveCharacterTextSplitter.from_tiktoken_encoder(",
            f'    encoding_name="cl100k_base", chunk_size={most}, chunk_overlap=0)',
            "chunks = splitter.split_documents(sections)",
        ],
        [
            "import tiktoken",
            "from llama_index.core.node_parser import MarkdownNodeParser, SentenceSplitter",
            *_read_documents(),
            "sections = MarkdownNodeParser().get_nodes_from_documents(documents)",
            f"nodes = SentenceSplitter(chunk_size={most}, chunk_overlap=0, tokenizer={CL100K})(sections)",
        ],
    )


# Strategy name -> its nearest (LangChain lines, LlamaIndex lines). A strategy not
# listed has no equivalent in either, and its snippet says so.
SPLITTERS: dict[str, Callable[[Mapping, str], tuple[list[str], list[str]]]] = {
    "fixed_size": _fixed_size,
    "recursive": _recursive,
    "sentence_window": _sentence_window,
    "semantic": _semantic,
    "parent_child": _parent_child,
    "markdown_structure": _markdown_structure,
}


def splitter_snippets(spec: common_pb2.StrategySpec, embedding_model: str = "") -> dict[str, str]:
    """{"langchain": code, "llamaindex": code}: the nearest splitter settings, or a
    comment saying there is none. Expects every knob's value (knobs.resolve)."""
    build = SPLITTERS.get(spec.name)
    if build is None:
        none = f"# No equivalent: {spec.name} has no counterpart in %s; use ChunkLab's client (above) or its export."
        return {"langchain": none % "LangChain" + "\n", "llamaindex": none % "LlamaIndex" + "\n"}
    langchain, llama = build(knob_values(spec), embedding_model or Settings().embedding_model)
    return {"langchain": "\n".join(langchain) + "\n", "llamaindex": "\n".join(llama) + "\n"}


LIBRARIES = ("chunklab", "langchain", "llamaindex")
_HEADINGS = {"chunklab": "ChunkLab", "langchain": "LangChain (nearest)", "llamaindex": "LlamaIndex (nearest)"}


def snippets(
    spec: common_pb2.StrategySpec, config_id: str = "", retrieval: common_pb2.RetrievalOptions | None = None
) -> dict[str, str]:
    """Each library's code on its own, every one runnable as pasted: ChunkLab's
    call, then LangChain's and LlamaIndex's nearest settings."""
    model = retrieval.embedding_model if retrieval is not None else ""
    return {"chunklab": chunklab_snippet(spec, config_id, retrieval), **splitter_snippets(spec, model)}


def snippet(
    spec: common_pb2.StrategySpec,
    config_id: str = "",
    retrieval: common_pb2.RetrievalOptions | None = None,
    title: str = "",
    libraries: Iterable[str] = LIBRARIES,
) -> str:
    """The libraries' snippets under one title, each under its heading (paste one of them)."""
    code = snippets(spec, config_id, retrieval)
    parts = [f"# {title or knobs.run_key(spec.name, knob_values(spec))}\n"]
    for library in libraries:
        if library not in code:
            raise ExportError(f"snippets are for {', '.join(LIBRARIES)}, not {library!r}")
        parts.append(f"\n# -- {_HEADINGS[library]} " + "-" * (72 - len(_HEADINGS[library])) + "\n" + code[library])
    return "".join(parts)


def resolved_spec(info, given: Mapping[str, Any]) -> tuple[common_pb2.StrategySpec, str]:
    """A strategy's spec with every knob (the given ones checked, the others at their
    defaults, from its StrategyInfo) and its config id; knobs.KnobError when a value cannot be used."""
    declared = knobs.from_info(info)
    values = knobs.resolve(info.name, declared, given)
    return knobs.to_spec(info.name, values), knobs.config_id(info.name, declared, values)


def winner_run(experiment: evaluator_pb2.Experiment, run_key: str = "") -> evaluator_pb2.ExperimentRun:
    """The run named run_key, or the experiment's winner (its verdict's, by the evaluator's
    one winner rule, ADR 0080); ExportError saying why when there is none (several runs
    share the lead: they are named)."""
    wanted = run_key or experiment.verdict.winner_run_key
    if not wanted:
        leaders = list(experiment.verdict.leaders)
        why = (
            f"{', '.join(leaders)} share the lead and none beats another on every measure"
            if len(leaders) > 1
            else experiment.verdict.unavailable or experiment.validation.unavailable or "it has no winner yet"
        )
        keys = ", ".join(r.run_key for r in experiment.runs) or "none"
        raise ExportError(
            f"experiment {experiment.experiment_id} names no winner ({why}); choose one of its runs: {keys}"
        )
    for run in experiment.runs:
        if run.run_key == wanted:
            return run
    keys = ", ".join(r.run_key for r in experiment.runs) or "none"
    raise ExportError(f"experiment {experiment.experiment_id} has no run {wanted!r}; its runs are {keys}")
