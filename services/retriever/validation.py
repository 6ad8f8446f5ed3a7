"""Checks on requests, each failing with a message a person can act on."""

from __future__ import annotations

import math
import re

from chunklab.errors import InvalidArgument
from chunklab.v1 import retriever_pb2

MAX_TOP_K = 100
MAX_NEIGHBORS = 10
MAX_WINDOW = 20
MAX_RECENCY_LAMBDA = 100.0
MAX_FILTER_VALUES = 1000
MAX_FRESHNESS_DAYS = 36500
ROLES = frozenset({"chunk", "sentence", "child", "parent"})
_STRATEGY = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
_COLLECTION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_LANGUAGE = re.compile(r"^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})*$")


def check_strategy(name: str) -> None:
    if not name:
        raise InvalidArgument("name a strategy to search, e.g. fixed_size")
    if not _STRATEGY.match(name):
        raise InvalidArgument(f"{name!r} is not a strategy name (lower_snake_case, e.g. fixed_size)")


def check_collection(name: str) -> None:
    if not _COLLECTION.match(name or ""):
        raise InvalidArgument(
            f"{name!r} is not a collection name: use letters, digits, '.', '_' or '-' (up to 128)"
        )


def check_filter(flt) -> None:
    for field, pattern, example in (
        ("document_ids", None, ""),
        ("collections", _COLLECTION, "e.g. news"),
        ("languages", _LANGUAGE, "e.g. en or pt-BR"),
    ):
        values = list(getattr(flt, field))
        if len(values) > MAX_FILTER_VALUES:
            raise InvalidArgument(f"filter.{field} has {len(values)} values; at most {MAX_FILTER_VALUES}")
        for value in values:
            if not value.strip():
                raise InvalidArgument(f"filter.{field} holds an empty value; leave the list empty for all")
            if pattern is not None and not pattern.match(value):
                raise InvalidArgument(f"filter.{field} value {value!r} is malformed ({example})")
            if len(value) > 256:
                raise InvalidArgument(f"filter.{field} value {value[:40]!r}... is longer than 256 characters")


def check_retrieve(request: retriever_pb2.RetrieveRequest) -> str:
    """Returns the query, stripped."""
    query = request.query.strip()
    if not query:
        raise InvalidArgument("the query is empty: ask a question")
    check_strategy(request.strategy)
    if not 1 <= request.top_k <= MAX_TOP_K:
        raise InvalidArgument(f"top_k must be between 1 and {MAX_TOP_K}, got {request.top_k}")
    for name in ("neighbor_prev", "neighbor_next"):
        value = getattr(request, name)
        if not 0 <= value <= MAX_NEIGHBORS:
            raise InvalidArgument(f"{name} must be between 0 and {MAX_NEIGHBORS}, got {value}")
    if request.HasField("window") and not 0 <= request.window <= MAX_WINDOW:
        raise InvalidArgument(f"window must be between 0 and {MAX_WINDOW} sentences, got {request.window}")
    lam = request.recency_lambda
    if not math.isfinite(lam) or not 0 <= lam <= MAX_RECENCY_LAMBDA:
        raise InvalidArgument(f"recency_lambda must be between 0 and {MAX_RECENCY_LAMBDA} per day, got {lam}")
    if request.HasField("as_of") and request.as_of.seconds < 0:
        raise InvalidArgument("as_of is before 1970; leave it unset for now")
    check_filter(request.filter)
    return query


def check_window_days(days: int) -> None:
    if not 0 <= days <= MAX_FRESHNESS_DAYS:
        raise InvalidArgument(f"max_age_days must be between 0 (unlimited) and {MAX_FRESHNESS_DAYS}, got {days}")
