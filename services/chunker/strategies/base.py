"""The small base every strategy stands on, and the registry of strategies.

A strategy is one class in one file: a name, a one-line description, its
knobs, and `chunk(document) -> list[Chunk]`. Knob values arrive validated.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from functools import cached_property
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from chunklab import ids, tokens
from chunklab.errors import InvalidArgument
from chunklab.v1 import chunker_pb2, common_pb2, documents_pb2
from services.chunker.token_map import TokenMap


@dataclass(frozen=True)
class Knob:
    name: str
    type: int  # chunker_pb2.KnobType
    default: Any
    description: str
    min_value: float | None = None
    max_value: float | None = None
    choices: tuple[str, ...] = ()
    query_time: bool = False

    def to_proto(self) -> chunker_pb2.KnobSpec:
        spec = chunker_pb2.KnobSpec(
            name=self.name,
            description=self.description,
            type=self.type,
            default_value=knob_value(self.default),
            choices=list(self.choices),
            query_time=self.query_time,
        )
        if self.min_value is not None:
            spec.min_value = self.min_value
        if self.max_value is not None:
            spec.max_value = self.max_value
        return spec

    def coerce(self, strategy: str, value: common_pb2.KnobValue) -> Any:
        kind = value.WhichOneof("kind")
        raw = getattr(value, kind) if kind else None
        where = f"{strategy}.{self.name}"
        if self.type == chunker_pb2.KNOB_TYPE_INT:
            if kind == "double_value" and float(raw).is_integer():
                raw = int(raw)
            if not isinstance(raw, int) or isinstance(raw, bool):
                raise InvalidArgument(f"{where} takes a whole number, got {raw!r}")
        elif self.type == chunker_pb2.KNOB_TYPE_DOUBLE:
            if kind not in ("double_value", "int_value"):
                raise InvalidArgument(f"{where} takes a number, got {raw!r}")
            raw = float(raw)
        elif self.type == chunker_pb2.KNOB_TYPE_BOOL:
            if kind != "bool_value":
                raise InvalidArgument(f"{where} takes true or false, got {raw!r}")
        else:
            if kind != "string_value":
                raise InvalidArgument(f"{where} takes text, got {raw!r}")
            if self.choices and raw not in self.choices:
                raise InvalidArgument(f"{where} must be one of {', '.join(self.choices)}, got {raw!r}")
        if self.min_value is not None and raw < self.min_value:
            raise InvalidArgument(f"{where} must be at least {self.min_value:g}, got {raw}")
        if self.max_value is not None and raw > self.max_value:
            raise InvalidArgument(f"{where} must be at most {self.max_value:g}, got {raw}")
        return raw


def knob_value(value: Any) -> common_pb2.KnobValue:
    if isinstance(value, bool):
        return common_pb2.KnobValue(bool_value=value)
    if isinstance(value, int):
        return common_pb2.KnobValue(int_value=value)
    if isinstance(value, float):
        return common_pb2.KnobValue(double_value=value)
    return common_pb2.KnobValue(string_value=str(value))


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
    chat_many: one chat completion per message list, run with bounded
        concurrency; returns the reply texts in order, or raises (NoLLM when
        no endpoint is configured, chunklab.llm.LLMError when a call fails).
        A strategy that needs it fails as a whole when it raises.
    report: progress inside chunking, (fraction 0..1, message).
    """

    embed: Callable[[list[str]], np.ndarray]
    chat_many: Callable[[list[list[dict]]], list[str]]
    report: Callable[[float, str], None] = lambda fraction, message: None


def offline_context(embed: Callable[[list[str]], np.ndarray] | None = None) -> ChunkingContext:
    """A context without an LLM (and, unless given, without embeddings)."""

    def no_embeddings(texts: list[str]) -> np.ndarray:
        raise RuntimeError("this context has no embedding model")

    def no_llm(requests: list[list[dict]]) -> list[str]:
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
        known = {k.name: k for k in cls.knobs}
        unknown = sorted(set(spec.knobs) - set(known))
        if unknown:
            raise InvalidArgument(
                f"{cls.name} has no knob {', '.join(unknown)}; its knobs are {', '.join(known) or 'none'}"
            )
        values = {k.name: k.default for k in cls.knobs}
        for name, value in spec.knobs.items():
            values[name] = known[name].coerce(cls.name, value)
        strategy = cls(values)
        strategy.validate()
        return strategy

    def validate(self) -> None:
        """Checks that involve more than one knob; raises InvalidArgument."""

    @cached_property
    def config_id(self) -> str:
        return ids.config_id(self.name, {k.name: self.values[k.name] for k in self.knobs if not k.query_time})

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

    def make_chunk(
        self, source: SourceDocument, index: int, start: int, end: int, token_count: int | None = None,
        *, role: int = common_pb2.CHUNK_ROLE_CHUNK, heading_path: list[str] | None = None,
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
