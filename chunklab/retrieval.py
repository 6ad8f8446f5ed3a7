"""RetrievalOptions: its limits and its checks, in one place (ADR 0039).

The retriever refuses a Retrieve whose options break these; the evaluator
checks an experiment's options with the same function before anything runs
(so an experiment never starts and then fails on every question); clients
read the limits from RetrieverService.GetRetrievalLimits to build their
inputs. Changing a limit is one edit here.
"""

from __future__ import annotations

import math
import re

from chunklab.errors import InvalidArgument
from chunklab.v1 import common_pb2

LIMITS = common_pb2.RetrievalLimits(
    max_top_k=100,
    default_top_k=5,
    max_neighbors=10,
    max_window=20,
    max_recency_lambda=100.0,
    max_filter_values=1000,
)
MAX_FILTER_VALUE_CHARS = 256

_STRATEGY = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
_CONFIG_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
_COLLECTION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_LANGUAGE = re.compile(r"^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})*$")


def check_strategy(name: str) -> None:
    if not name:
        raise InvalidArgument("name a strategy to search, e.g. fixed_size")
    if not _STRATEGY.match(name):
        raise InvalidArgument(f"{name!r} is not a strategy name (lower_snake_case, e.g. fixed_size)")


def check_config_id(config_id: str) -> None:
    """Empty (the active set) or a configuration id: the chunker's are 16 hex digits
    (chunklab.knobs.config_id); IndexChunks takes up to 64 letters, digits, '.', '_' or '-'."""
    if config_id and not _CONFIG_ID.match(config_id):
        raise InvalidArgument(
            f"{config_id[:40]!r} is not a configuration id (e.g. 3f2a9c0d1e4b5a67, as ListIndexedSets shows them)"
        )


def check_collection(name: str) -> None:
    if not _COLLECTION.match(name or ""):
        raise InvalidArgument(
            f"{name!r} is not a collection name: use letters, digits, '.', '_' or '-' (up to 128)"
        )


def check_filter(flt: common_pb2.RetrievalFilter) -> None:
    for field, pattern, example in (
        ("document_ids", None, ""),
        ("collections", _COLLECTION, "e.g. news"),
        ("languages", _LANGUAGE, "e.g. en or pt-BR"),
    ):
        values = list(getattr(flt, field))
        if len(values) > LIMITS.max_filter_values:
            raise InvalidArgument(f"filter.{field} has {len(values)} values; at most {LIMITS.max_filter_values}")
        for value in values:
            if not value.strip():
                raise InvalidArgument(f"filter.{field} holds an empty value; leave the list empty for all")
            if len(value) > MAX_FILTER_VALUE_CHARS:
                raise InvalidArgument(
                    f"filter.{field} value {value[:40]!r}... is longer than {MAX_FILTER_VALUE_CHARS} characters"
                )
            if pattern is not None and not pattern.match(value):
                raise InvalidArgument(f"filter.{field} value {value!r} is malformed ({example})")


def check_options(options: common_pb2.RetrievalOptions, *, needs_strategy: bool = True) -> None:
    """Every bound of RetrievalOptions. `needs_strategy` is False for an
    experiment's shared options, where the grids name the strategies."""
    if needs_strategy:
        check_strategy(options.strategy)
        check_config_id(options.config_id)
    elif options.strategy or options.config_id:
        raise InvalidArgument(
            "an experiment's retrieval options name no strategy or config_id: its grids name the strategies"
        )
    if not 0 <= options.top_k <= LIMITS.max_top_k:
        raise InvalidArgument(f"top_k must be between 1 and {LIMITS.max_top_k}, got {options.top_k}")
    for name in ("neighbor_prev", "neighbor_next"):
        value = getattr(options, name)
        if not 0 <= value <= LIMITS.max_neighbors:
            raise InvalidArgument(f"{name} must be between 0 and {LIMITS.max_neighbors}, got {value}")
    if options.HasField("window") and not 0 <= options.window <= LIMITS.max_window:
        raise InvalidArgument(f"window must be between 0 and {LIMITS.max_window} sentences, got {options.window}")
    lam = options.recency_lambda
    if not math.isfinite(lam) or not 0 <= lam <= LIMITS.max_recency_lambda:
        raise InvalidArgument(
            f"recency_lambda must be between 0 and {LIMITS.max_recency_lambda:g} per day, got {lam}"
        )
    check_filter(options.filter)


def top_k(options: common_pb2.RetrievalOptions) -> int:
    """The options' top_k, with 0 meaning the default."""
    return options.top_k or LIMITS.default_top_k

