"""The small base every strategy stands on, and the registry of strategies.

A strategy is one class in one file: a name, a one-line description, its
knobs (chunklab.knobs.Knob declarations), and `chunk(document) -> list[Chunk]`.
Knob values arrive typed and checked by chunklab.knobs.resolve.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar

import numpy as np

from chunklab import ids
from chunklab import knobs as knob_codec
from chunklab.errors import InvalidArgument
from chunklab.knobs import Knob
from chunklab.text import pages, tokens
from chunklab.v1 import chunker_pb2, common_pb2, documents_pb2
from services.chunker.token_map import TokenMap


@dataclass
class SourceDocument:
    """What a strategy reads: the canonical text, its parse and its metadata."""

    document: documents_pb2.Document
    _bases: dict = field(default_factory=dict, init=False, repr=False)

    @cached_property
    def text(self) -> str:
        # Reading a string field of a message builds a new str every time
        # (a copy of the whole document): read it once.
        return self.document.text

    @property
    def tree(self) -> documents_pb2.DocumentTree:
        return self.document.tree

    @cached_property
    def token_map(self) -> TokenMap:
        """The text's cl100k_base tokenization, made once for every strategy
        run on this document (ProcessDocument runs them one after another)."""
        return TokenMap(self.text)

    def chunk_basis(self, strategy: str, config_id: str, role: int) -> tuple[common_pb2.Chunk, ids.ChunkIds]:
        """What every chunk of one strategy and role shares: a Chunk with the
        document's fields filled in, to copy, and the chunk id maker. Built
        once per document, not once per chunk."""
        key = (strategy, config_id, role)
        basis = self._bases.get(key)
        if basis is None:
            doc = self.document
            template = common_pb2.Chunk(
                document_id=doc.document_id,
                document_name=doc.name,
                strategy=strategy,
                config_id=config_id,
                language=doc.language,
                collection=doc.collection,
                published_at=doc.published_at,
                ingested_at=doc.ingested_at,
                role=role,
            )
            basis = self._bases[key] = (template, ids.ChunkIds(doc.document_id, strategy, config_id, role))
        return basis


class NoLLM(Exception):
    """Raised by ChunkingContext.chat_many when no LLM endpoint is configured."""


@dataclass
class ChunkingContext:
    """What a strategy may use besides the document.

    embed: unit-length float32 rows for texts with the run's embedding model
        (as passages); cached by content hash, so asking again is cheap.
    chat_many: one chat completion per message list (options: model,
        max_tokens), run with bounded concurrency; returns the reply texts in order, or raises (NoLLM when
        no endpoint is configured, chunklab.llm.LLMError when a call fails).
        A strategy that needs it fails as a whole when it raises.
    report: progress inside chunking, (fraction 0..1, message).
    vectors: what a strategy already knows of its own chunks' vectors
        (chunk_id -> unit-length row, e.g. a window's vector pooled from the
        vectors of the pieces it holds); the run indexes these and embeds
        only the chunks without one (ADR 0120).
    embed_spans: late chunking with the run's model, when it gives word-piece
        vectors (None: it does not): for each (text, [start, end) character
        spans in order), one row per span, the sum of its word pieces' vectors
        from passes over the whole text (chunklab.embeddings.late, ADR 0129).
    """

    embed: Callable[[list[str]], np.ndarray]
    chat_many: Callable[..., list[str]]
    report: Callable[[float, str], None] = lambda fraction, message: None
    vectors: dict[str, np.ndarray] = field(default_factory=dict)
    embed_spans: Callable[[list[tuple[str, list[tuple[int, int]]]]], list[np.ndarray]] | None = None


def offline_context(embed: Callable[[list[str]], np.ndarray] | None = None) -> ChunkingContext:
    """A context without an LLM (and, unless given, without embeddings)."""

    def no_embeddings(texts: list[str]) -> np.ndarray:
        raise RuntimeError("this context has no embedding model")

    def no_llm(requests: list[list[dict]], **options) -> list[str]:
        raise NoLLM("no LLM endpoint is configured (set CHUNKLAB_LLM_BASE_URL and CHUNKLAB_LLM_MODEL)")

    return ChunkingContext(embed=embed or no_embeddings, chat_many=no_llm)


@dataclass
class Strategy(ABC):
    name: ClassVar[str]
    description: ClassVar[str]
    knobs: ClassVar[tuple[Knob, ...]]
    requires_llm: ClassVar[bool] = False
    requires_embeddings_to_chunk: ClassVar[bool] = False
    # How the retriever expands this strategy's hits (it keeps the kind with
    # each index set and never looks at strategy names).
    expansion: ClassVar[int] = common_pb2.EXPANSION_KIND_NONE

    values: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_spec(cls, spec: common_pb2.StrategySpec) -> Strategy:
        return cls(knob_codec.resolve(cls.name, cls.knobs, spec.knobs))

    @cached_property
    def config_id(self) -> str:
        return knob_codec.config_id(self.name, self.knobs, self.values)

    @classmethod
    def info(cls) -> chunker_pb2.StrategyInfo:
        return chunker_pb2.StrategyInfo(
            name=cls.name,
            description=cls.description,
            knobs=[k.to_proto() for k in cls.knobs],
            requires_llm=cls.requires_llm,
            requires_embeddings_to_chunk=cls.requires_embeddings_to_chunk,
            expansion=cls.expansion,
        )

    @abstractmethod
    def chunk(self, source: SourceDocument, context: ChunkingContext) -> list[common_pb2.Chunk]:
        """The document's chunks in order, chunk_index from 0 per role."""

    def chunks_of(self, source: SourceDocument, context: ChunkingContext) -> list[common_pb2.Chunk]:
        """`chunk`, with each chunk's pages stamped from the document's page
        map (paged formats only), so no strategy has to know about pages."""
        chunks = self.chunk(source, context)
        starts = source.tree.page_starts
        if starts:
            for chunk in chunks:
                chunk.first_page, chunk.last_page = pages.page_span(starts, chunk.start_char, chunk.end_char)
        return chunks

    def make_chunk(
        self,
        source: SourceDocument,
        index: int,
        start: int,
        end: int,
        token_count: int | None = None,
        *,
        role: int = common_pb2.CHUNK_ROLE_CHUNK,
        heading_path: list[str] | None = None,
    ) -> common_pb2.Chunk:
        """A unified chunk that copies text[start:end]."""
        template, chunk_id = source.chunk_basis(self.name, self.config_id, role)
        content = source.text[start:end]
        chunk = common_pb2.Chunk()
        chunk.CopyFrom(template)
        chunk.chunk_id = chunk_id(index)
        chunk.chunk_index = index
        chunk.content = content
        chunk.token_count = tokens.count(content) if token_count is None else token_count
        chunk.character_count = len(content)
        chunk.start_char = start
        chunk.end_char = end
        if heading_path:
            chunk.heading_path.extend(heading_path)
        return chunk


class Registry:
    """Strategies by name; a second strategy with a taken name is refused."""

    def __init__(self) -> None:
        self._strategies: dict[str, type[Strategy]] = {}

    def register(self, cls: type[Strategy]) -> type[Strategy]:
        if cls.name in self._strategies:
            raise ValueError(f"a strategy named {cls.name!r} is already registered")
        knob_codec.resolve(cls.name, cls.knobs, {k.name: k.default for k in cls.knobs})  # declared defaults hold
        self._strategies[cls.name] = cls
        return cls

    def names(self) -> list[str]:
        return list(self._strategies)

    def get(self, name: str) -> type[Strategy]:
        if name not in self._strategies:
            raise InvalidArgument(f"unknown strategy {name!r}; available: {', '.join(self._strategies)}")
        return self._strategies[name]

    def build(self, spec: common_pb2.StrategySpec) -> Strategy:
        return self.get(spec.name).from_spec(spec)

    def infos(self) -> list[chunker_pb2.StrategyInfo]:
        return [cls.info() for cls in self._strategies.values()]


REGISTRY = Registry()
