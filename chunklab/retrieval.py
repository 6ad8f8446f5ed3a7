"""RetrievalOptions: its limits, its settings and its checks, in one place (ADR 0039, ADR 0045).

The retriever refuses a Retrieve whose options break these; the evaluator
checks an experiment's options with the same function before anything runs
(so an experiment never starts and then fails on every question); clients
read the limits from RetrieverService.GetRetrievalLimits to build their
inputs. SETTINGS names every field a person sets, with what it does and its
bounds: the command line builds its flags from it and clients fill
RetrievalOptions through `options`. Changing a limit is one edit here, and a
new field of the contract is one row of SETTINGS.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from google.protobuf.descriptor import FieldDescriptor

from chunklab import endpoints
from chunklab.errors import InvalidArgument
from chunklab.rpc.limits import COLLECTION_NAME, NAME_CHARS, excerpt
from chunklab.v1 import common_pb2

LIMITS = common_pb2.RetrievalLimits(
    max_top_k=100,
    default_top_k=5,
    max_neighbors=10,
    max_window=20,
    max_recency_lambda=100.0,
    max_filter_values=1000,
    max_rerank_depth=100,
    default_rerank_depth=20,
    max_freshness_days=36500,  # the retriever's freshness windows (UpdateFreshnessWindow)
    max_fusion_k=1000,
    default_fusion_k=60,  # Cormack et al. 2009's constant
)
MAX_FILTER_VALUE_CHARS = NAME_CHARS

_STRATEGY = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
_CONFIG_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
_LANGUAGE = re.compile(r"^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})*$")


def check_strategy(name: str) -> None:
    if not name:
        raise InvalidArgument("name a strategy to search, e.g. fixed_size")
    if not _STRATEGY.match(name):
        raise InvalidArgument(f"{excerpt(name)!r} is not a strategy name (lower_snake_case, e.g. fixed_size)")


def check_config_id(config_id: str) -> None:
    """Empty (the active set) or a configuration id: the chunker's are 16 hex digits
    (chunklab.knobs.config_id); IndexChunks takes up to 64 letters, digits, '.', '_' or '-'."""
    if config_id and not _CONFIG_ID.match(config_id):
        raise InvalidArgument(
            f"{excerpt(config_id)!r} is not a configuration id (e.g. 3f2a9c0d1e4b5a67, as ListIndexedSets shows them)"
        )


def _filter_values(pattern: re.Pattern | None, example: str) -> Callable[[str, list[str]], None]:
    """The check of one filter list: how many values, none empty or too long, each well formed."""

    def check(path: str, values: list[str]) -> None:
        if len(values) > LIMITS.max_filter_values:
            raise InvalidArgument(f"{path} has {len(values)} values; at most {LIMITS.max_filter_values}")
        for value in values:
            if not value.strip():
                raise InvalidArgument(f"{path} holds an empty value; leave the list empty for all")
            if len(value) > MAX_FILTER_VALUE_CHARS:
                raise InvalidArgument(
                    f"{path} value {excerpt(value, 40)!r} is longer than {MAX_FILTER_VALUE_CHARS} characters"
                )
            if pattern is not None and not pattern.match(value):
                raise InvalidArgument(f"{path} value {excerpt(value)!r} is malformed ({example})")

    return check


_KINDS = {
    FieldDescriptor.CPPTYPE_INT32: int,
    FieldDescriptor.CPPTYPE_DOUBLE: float,
    FieldDescriptor.CPPTYPE_BOOL: bool,
    FieldDescriptor.CPPTYPE_STRING: str,
    FieldDescriptor.CPPTYPE_ENUM: str,
}  # an enum is set by its short name, e.g. "cross_encoder"


def check_url(url: str) -> None:
    """rerank.base_url: an http(s) URL with a host; the allow-list is the service's to check
    (chunklab.endpoints, ADR 0126)."""
    endpoints.check_url(url, "rerank.base_url")


@dataclass(frozen=True)
class Setting:
    """One field of RetrievalOptions as a person sets it: its path in the message, what it
    does, its bounds and its check. Its type, and whether unset differs from 0, are the
    contract's own (read from the message's descriptor)."""

    path: str  # e.g. "top_k", "filter.collections"
    help: str
    low: float | None = None
    limit: str = ""  # the field of RetrievalLimits (LIMITS, GetRetrievalLimits) that is its upper bound
    unit: str = ""  # after the bounds in messages, e.g. "sentences"
    zero_is_default: bool = False  # 0 means "the default" (top_k), outside the bounds
    default: str = ""  # what it is when left out, as a person reads it (zero_is_default and optional settings)
    names_a_set: bool = False  # strategy and config_id: a query names them, an experiment's grids do
    validate: Callable | None = None  # (value) for text, (path, values) for lists

    @property
    def high(self) -> float | None:
        """Its upper bound, as LIMITS (and so GetRetrievalLimits) states it; None for unbounded settings."""
        return getattr(LIMITS, self.limit) if self.limit else None

    @property
    def descriptor(self) -> FieldDescriptor:
        message = common_pb2.RetrievalOptions.DESCRIPTOR
        *parents, name = self.path.split(".")
        for parent in parents:
            message = message.fields_by_name[parent].message_type
        return message.fields_by_name[name]

    @property
    def kind(self) -> type:
        """int, float, bool, str, or list (of strings)."""
        field = self.descriptor
        return list if field.is_repeated else _KINDS[field.cpp_type]

    @property
    def choices(self) -> dict[str, int] | None:
        """An enum's values by short name ("cross_encoder" for RERANKER_KIND_CROSS_ENCODER),
        its UNSPECIFIED (off) left out; None for other fields."""
        enum = self.descriptor.enum_type
        if enum is None:
            return None
        prefix = enum.values[0].name.removesuffix("UNSPECIFIED")
        return {v.name.removeprefix(prefix).lower(): v.number for v in enum.values if v.number}

    @property
    def optional(self) -> bool:
        """Unset differs from 0 (proto3 `optional`, e.g. window: as indexed)."""
        return self.descriptor.has_presence

    def bounds(self, joined_by: str = "to") -> str:
        """ "1 to 100", "0 to 20 sentences"; empty for unbounded settings."""
        if self.high is None:
            return ""
        return f"{self.low:g} {joined_by} {self.high:g}" + (f" {self.unit}" if self.unit else "")

    def check(self, value) -> None:
        """Raises InvalidArgument, in the contract's words, for a value out of bounds or malformed."""
        if self.high is not None:
            if self.zero_is_default and value == 0:
                return
            if not math.isfinite(value) or not self.low <= value <= self.high:
                raise InvalidArgument(f"{self.path} must be between {self.bounds('and')}, got {value}")
        elif self.choices is not None:
            if value and value not in self.choices:
                raise InvalidArgument(f"{self.path} must be one of {', '.join(self.choices)}, got {excerpt(value)!r}")
        elif self.validate is not None:
            if self.kind is list:
                self.validate(self.path, list(value))
            else:
                self.validate(value)

    def check_typed(self, value, leave: str = "leave it out") -> None:
        """check, for a value a person typed (a form's box, a command line flag): there 0
        does not stand for the default, which only a field left unset in the contract means
        (ADR 0090), so a typed 0 of a zero_is_default setting is refused with the default named."""
        if self.zero_is_default and value == 0:
            raise InvalidArgument(
                f"{self.path} must be between {self.bounds('and')}, got 0; {leave} for the default, {self.default}"
            )
        self.check(value)

    def get(self, options: common_pb2.RetrievalOptions):
        """The setting's value in options (None when an optional field is unset)."""
        *parents, name = self.path.split(".")
        for parent in parents:
            options = getattr(options, parent)
        if self.optional and not options.HasField(name):
            return None
        value = getattr(options, name)
        if self.choices is not None:  # by short name; "" when unset
            return {n: k for k, n in self.choices.items()}.get(value, "" if not value else str(value))
        return value


SETTINGS: tuple[Setting, ...] = (
    Setting("strategy", "the strategy to search, e.g. fixed_size", names_a_set=True, validate=check_strategy),
    Setting(
        "config_id",
        "which index set of the strategy (a configuration id, as ListIndexedSets shows "
        "it); empty: each document's active set",
        names_a_set=True,
        validate=check_config_id,
    ),
    Setting(
        "top_k",
        f"hits per question (default {LIMITS.default_top_k})",
        1,
        "max_top_k",
        zero_is_default=True,
        default=str(LIMITS.default_top_k),
    ),
    Setting("neighbor_prev", "chunks before each hit (strategies that expand by neighbours)", 0, "max_neighbors"),
    Setting("neighbor_next", "chunks after each hit (strategies that expand by neighbours)", 0, "max_neighbors"),
    Setting(
        "window",
        "sentence_window: sentences each side of a hit (default: as indexed)",
        0,
        "max_window",
        unit="sentences",
    ),
    Setting(
        "filter.document_ids",
        "search only these documents (ids); empty: every document",
        validate=_filter_values(None, ""),
    ),
    Setting(
        "filter.collections",
        "search only these collections; empty: every collection",
        validate=_filter_values(COLLECTION_NAME, "e.g. news"),
    ),
    Setting(
        "filter.languages",
        "search only documents in these languages; empty: every language",
        validate=_filter_values(_LANGUAGE, "e.g. en or pt-BR"),
    ),
    Setting("embedding_model", "the embedding model to search with (default: the stack's configured model)"),
    Setting("hybrid", "fuse a lexical (BM25) ranking with the dense one"),
    Setting(
        "fusion_k",
        f"hybrid: reciprocal rank fusion's k, score = sum of 1/(k + rank) (default {LIMITS.default_fusion_k}); "
        "a smaller k trusts each ranking's first hits more",
        1,
        "max_fusion_k",
        default=str(LIMITS.default_fusion_k),
    ),
    Setting(
        "recency_lambda",
        "recency decay λ per day: score × exp(−λ·age in days); 0: none",
        0,
        "max_recency_lambda",
        unit="per day",
    ),
    Setting(
        "rerank.kind",
        "rerank the first candidates with a cross-encoder folder, an HTTP rerank endpoint "
        "(Cohere/Jina shape, or TEI's), or the chat LLM; empty: no reranking",
    ),
    Setting(
        "rerank.depth",
        f"candidates the reranker scores (default {LIMITS.default_rerank_depth}, at least top_k)",
        1,
        "max_rerank_depth",
        zero_is_default=True,
        default=f"the larger of {LIMITS.default_rerank_depth} and top_k",
    ),
    Setting(
        "rerank.model",
        "cross_encoder: the model's folder on the retriever's machine; http, tei, llm: the "
        "model to ask for (default: the retriever's configured one)",
    ),
    Setting(
        "rerank.base_url",
        "http, tei: the rerank endpoint's URL; llm: the chat endpoint's base URL "
        "(default: the retriever's configured one)",
        validate=check_url,
    ),
)
BY_PATH = {setting.path: setting for setting in SETTINGS}


def options(values: Mapping[str, object]) -> common_pb2.RetrievalOptions:
    """RetrievalOptions from {setting path: value}, e.g. {"top_k": 5, "filter.languages": ["en"]};
    None leaves a field unset (window: as indexed). A path that names no setting is a
    programming error (KeyError)."""
    out = common_pb2.RetrievalOptions()
    for path, value in values.items():
        setting = BY_PATH[path]
        if value is None or (setting.kind is list and not value):  # an empty list: no filter, nothing set
            continue
        if setting.choices is not None:
            value = setting.choices[value] if value else 0
        *parents, name = path.split(".")
        target = out
        for parent in parents:
            target = getattr(target, parent)
        if setting.kind is list:
            getattr(target, name).extend(value)
        else:
            setattr(target, name, value)
    return out


def check_options(options: common_pb2.RetrievalOptions, *, needs_strategy: bool = True) -> None:
    """Every bound of RetrievalOptions, as SETTINGS states them. `needs_strategy` is False
    for an experiment's shared options, where the grids name the strategies."""
    if not needs_strategy and (options.strategy or options.config_id):
        raise InvalidArgument(
            "an experiment's retrieval options name no strategy or config_id: its grids name the strategies"
        )
    for setting in SETTINGS:
        if setting.names_a_set and not needs_strategy:
            continue
        value = setting.get(options)
        if value is not None:
            setting.check(value)
    if options.HasField("fusion_k") and not options.hybrid:
        raise InvalidArgument(
            "fusion_k weighs the dense and lexical rankings of hybrid retrieval: set hybrid, or leave fusion_k unset"
        )
    _check_rerank(options)


def _check_rerank(options: common_pb2.RetrievalOptions) -> None:
    rerank = options.rerank
    if not rerank.kind:
        given = [f"rerank.{name}" for name in ("depth", "model", "base_url") if getattr(rerank, name)]
        if given:
            raise InvalidArgument(f"{', '.join(given)} set without rerank.kind: name a reranker, or leave them unset")
        return
    if rerank.depth and rerank.depth < top_k(options):
        raise InvalidArgument(
            f"rerank.depth is {rerank.depth}, below top_k ({top_k(options)}): the reranker must see at least "
            "the hits it keeps"
        )
    if rerank.kind == common_pb2.RERANKER_KIND_CROSS_ENCODER and rerank.base_url:
        raise InvalidArgument(
            "rerank.base_url is for http, tei and llm rerankers; a cross_encoder is a folder named by rerank.model"
        )


def top_k(options: common_pb2.RetrievalOptions) -> int:
    """The options' top_k, with 0 meaning the default."""
    return options.top_k or LIMITS.default_top_k


def fusion_k(options: common_pb2.RetrievalOptions) -> int:
    """The options' reciprocal rank fusion k, unset meaning the default."""
    return options.fusion_k if options.HasField("fusion_k") else LIMITS.default_fusion_k


def rerank_depth(options: common_pb2.RetrievalOptions) -> int:
    """How many candidates the reranker scores (0 when the options do not rerank)."""
    if not options.rerank.kind:
        return 0
    return options.rerank.depth or max(LIMITS.default_rerank_depth, top_k(options))
