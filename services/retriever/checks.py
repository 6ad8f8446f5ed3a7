"""Checks on retriever requests, each failing with a message a person can act on.

RetrievalOptions' bounds live in chunklab/retrieval.py (one owner, shared with
the evaluator and published by GetRetrievalLimits); what is checked here is
the rest of a RetrieveRequest and the freshness windows (their bound in
retrieval.LIMITS too, published with the others).
"""

from __future__ import annotations

from chunklab import retrieval
from chunklab.errors import InvalidArgument
from chunklab.v1 import retriever_pb2


def check_retrieve(request: retriever_pb2.RetrieveRequest) -> str:
    """Returns the query, stripped."""
    query = request.query.strip()
    if not query:
        raise InvalidArgument("the query is empty: ask a question")
    retrieval.check_options(request.options)
    if request.HasField("as_of") and request.as_of.seconds < 0:
        raise InvalidArgument("as_of is before 1970; leave it unset for now")
    return query


def check_window_days(days: int) -> None:
    most = retrieval.LIMITS.max_freshness_days
    if not 0 <= days <= most:
        raise InvalidArgument(f"max_age_days must be between 0 (unlimited) and {most}, got {days}")
