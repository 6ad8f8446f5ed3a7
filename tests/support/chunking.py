"""Chunking under test: strategies run in process on hand-built documents, with a
cheap hashed embedding and a scripted chat model, and the checks every strategy's
chunks must pass (exact slices, coverage, parent-child families)."""

from __future__ import annotations

import hashlib
import re

import numpy as np
from hypothesis import strategies as st

from chunklab import ids
from chunklab.text import tokens
from chunklab.v1 import common_pb2, documents_pb2
from services.chunker.strategies import REGISTRY, SourceDocument, offline_context
from services.ingest.readers.markdown import parse
from tests.support.repo import FIXTURES

REGULATION = (FIXTURES / "regulation.md").read_text()


def hashed_embed(texts: list[str]) -> np.ndarray:
    """A cheap deterministic embedding: hashed bag of words, unit length."""
    out = np.zeros((len(texts), 64), dtype=np.float32)
    for i, text in enumerate(texts):
        for word in re.findall(r"\w+", text.lower()):
            out[i, int(hashlib.md5(word.encode()).hexdigest(), 16) % 64] += 1
    return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)


class FakeChat:
    """chat_many that answers one context per request and records prompts."""

    def __init__(self, fail: Exception | None = None, reply: str | None = None) -> None:
        self.requests: list[list[dict]] = []
        self.fail, self.reply = fail, reply

    def __call__(self, requests: list[list[dict]], **options) -> list[str]:
        self.requests += requests
        self.options = options
        if self.fail:
            raise self.fail
        return [self.reply if self.reply is not None else f"Context {i}." for i in range(len(requests))]


def context(chat=None):
    ctx = offline_context(hashed_embed)
    if chat is not None:
        ctx.chat_many = chat
    return ctx


def document(text: str, fmt=documents_pb2.DOCUMENT_FORMAT_MARKDOWN, name="regulation.md") -> SourceDocument:
    return SourceDocument(
        documents_pb2.Document(
            document_id="doc-1",
            name=name,
            text=text,
            language="en",
            collection="default",
            format=fmt,
            tree=parse(text, fmt),
        )
    )


def knob(value) -> common_pb2.KnobValue:
    if isinstance(value, str):
        return common_pb2.KnobValue(string_value=value)
    if isinstance(value, float):
        return common_pb2.KnobValue(double_value=value)
    return common_pb2.KnobValue(int_value=value)


def run(name: str, source: SourceDocument, ctx=None, **knobs):
    strategy = REGISTRY.build(common_pb2.StrategySpec(name=name, knobs={k: knob(v) for k, v in knobs.items()}))
    chunks = strategy.chunk(source, ctx or context(FakeChat()))
    check_exact(source, strategy, chunks)
    return chunks


def check_exact(source: SourceDocument, strategy, chunks) -> None:
    """What every strategy promises about every chunk."""
    text = source.text
    per_role: dict[str, int] = {}
    for chunk in chunks:
        assert text[chunk.start_char : chunk.end_char] == chunk.content
        assert chunk.token_count == tokens.count(chunk.content)
        assert chunk.character_count == len(chunk.content)
        assert chunk.strategy == strategy.name and chunk.config_id == strategy.config_id
        assert chunk.chunk_index == per_role.get(chunk.role, 0)
        per_role[chunk.role] = chunk.chunk_index + 1
        assert chunk.chunk_id == ids.chunk_id("doc-1", strategy.name, strategy.config_id, chunk.chunk_index, chunk.role)


def covered_non_blank(text: str, chunks) -> bool:
    covered = [False] * len(text)
    for chunk in chunks:
        covered[chunk.start_char : chunk.end_char] = [True] * (chunk.end_char - chunk.start_char)
    return all(covered[i] or text[i].isspace() for i in range(len(text)))


SPEC_NAMES = [
    "fixed_size",
    "recursive",
    "semantic",
    "sentence_window",
    "markdown_structure",
    "parent_child",
    "semantic_parent_child",
    "contextual_retrieval",
    "contextual_structure",
    "hybrid_semantic_recursive",
    "cluster_semantic",
    "cluster_parent_child",
]


def families(chunks):
    parents = {c.chunk_id: c for c in chunks if ids.role_name(c.role) == "parent"}
    out = []
    for parent in [c for c in chunks if ids.role_name(c.role) == "parent"]:
        children = [c for c in chunks if ids.role_name(c.role) == "child" and c.parent_id == parent.chunk_id]
        assert all(parent.start_char <= c.start_char and c.end_char <= parent.end_char for c in children)
        out.append((parent.content.split("\n")[0], [c.content[:20] for c in children]))
    assert all(c.parent_id in parents for c in chunks if ids.role_name(c.role) == "child")
    return out


words = st.sampled_from(
    ["alpha", "beta", "gamma", "the", "data", "Dr.", "3.14", "é", "日本語", "🎉", "Ωμέγα", "—", "e.g.", "x" * 40]
)
separators = st.sampled_from(
    [" ", " ", " ", ". ", "! ", "\n", "\n\n", "\r\n", "\n# ", "\n## ", "\n- ", "\n| ", "。", "\t"]
)
random_text = st.lists(st.tuples(words, separators), max_size=120).map(lambda parts: "".join(w + s for w, s in parts))


def cluster_parent_child_through_service(cache_path, provider, text: str, context_vectors: str) -> list:
    """`text` (harbour.md) processed by a ChunkerService with cluster_parent_child (child 12
    tokens, one piece of context, `context_vectors`) embedding with `provider`; the chunks it
    sent to the index, after checking that no strategy failed."""
    from chunklab.llm import ChatEndpoint
    from chunklab.v1 import chunker_pb2
    from services.chunker.cache import EmbeddingCache
    from services.chunker.llm import LLMPool
    from services.chunker.service import ChunkerService

    source = documents_pb2.Document(
        document_id="doc-1",
        name="harbour.md",
        text=text,
        language="en",
        collection="default",
        format=documents_pb2.DOCUMENT_FORMAT_MARKDOWN,
        tree=parse(text, documents_pb2.DOCUMENT_FORMAT_MARKDOWN),
    )
    indexed = []
    cache = EmbeddingCache(cache_path)
    service = ChunkerService(
        lambda _id: source,
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
    return indexed
