"""Which documents a query asked for that its strategy's index sets do not cover (ADR 0083).

A Query column of a strategy that never processed a document, or whose only sets of it
came from an experiment (not active), searches the other documents only. The retriever
says so in its reply (RetrieveResponse.uncovered_documents), so that no client has to
guess it: the documents asked for are those the filter names, or, when it names none,
every document indexed with the embedding model (within the filter's collections and
languages); each one without a set to search is named with why. Pure functions over the
set records (RetrieverStore.coverage_rows).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from chunklab.v1 import common_pb2, retriever_pb2


@dataclass(frozen=True)
class SetRow:
    """What coverage reads of one index set's record (any strategy) of the embedding model."""

    document_id: str
    document_name: str
    strategy: str
    config_id: str
    active: bool
    archived: bool
    collection: str
    language: str | None  # None: the set has no term statistics yet


def _asked(rows: Sequence[SetRow], flt: common_pb2.RetrievalFilter) -> list[str]:
    """The documents the filter asks for: those it names, else every document with a set
    that is not archived, in the filter's collections and languages where it names some."""
    if flt.document_ids:
        return list(dict.fromkeys(flt.document_ids))
    asked: dict[str, None] = {}
    for row in rows:
        if row.archived:
            continue
        if flt.collections and row.collection not in flt.collections:
            continue
        if flt.languages and row.language is not None and row.language not in flt.languages:
            continue
        asked[row.document_id] = None
    return list(asked)


def _gap(own: Sequence[SetRow], config_id: str) -> int:
    """Why a document's sets of the strategy (`own`) do not serve the query, or 0 when they do."""
    live = [row for row in own if not row.archived]
    if config_id:
        if any(row.config_id == config_id for row in live):
            return 0
    elif any(row.active for row in live):
        return 0
    if live:
        return retriever_pb2.COVERAGE_GAP_OTHER_CONFIGURATION if config_id else retriever_pb2.COVERAGE_GAP_NO_ACTIVE_SET
    if own:
        return retriever_pb2.COVERAGE_GAP_ARCHIVED
    return retriever_pb2.COVERAGE_GAP_NOT_PROCESSED


def uncovered(
    rows: Iterable[SetRow], strategy: str, config_id: str, flt: common_pb2.RetrievalFilter
) -> list[retriever_pb2.UncoveredDocument]:
    """The asked-for documents the strategy's sets (config_id's, or the active ones when it
    is empty) do not cover, in the order asked (the filter's, else by document id)."""
    rows = sorted(rows, key=lambda row: row.document_id)
    names = {row.document_id: row.document_name for row in rows if row.document_name}
    by_document: dict[str, list[SetRow]] = {}
    for row in rows:
        if row.strategy == strategy:
            by_document.setdefault(row.document_id, []).append(row)
    found = []
    for document_id in _asked(rows, flt):
        gap = _gap(by_document.get(document_id, []), config_id)
        if gap:
            found.append(
                retriever_pb2.UncoveredDocument(
                    document_id=document_id, document_name=names.get(document_id, ""), gap=gap
                )
            )
    return found
