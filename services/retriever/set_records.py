"""The index set records one query reads (ADR 0144): a single read of the store serves
both the sets whose BM25 statistics weight a hybrid query's terms and the coverage
(the asked-for documents the strategy's sets do not cover)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from services.retriever.index.payloads import ACTIVE, INACTIVE, SET_STATE_FIELD, TIME_FIELD
from services.retriever.search.coverage import SetRow


@dataclass(frozen=True)
class SetRecord(SetRow):
    """One index set's record as a query reads it: what coverage reads (a SetRow), and when
    the set's document was published and the set indexed."""

    published_ts: float | None
    indexed_at: datetime


def searched_of(records: Sequence[SetRecord], strategy: str, config_id: str) -> list[dict]:
    """The sets a query of one strategy may search: not archived, the configuration's (or the
    active ones when config_id is empty), by document and configuration; each with the fields
    a query's filter reads (as a point's payload names them), when it was indexed, and
    `language` None when it has no statistics yet."""
    chosen = [
        r
        for r in records
        if r.strategy == strategy and not r.archived and (r.config_id == config_id if config_id else r.active)
    ]
    return [
        {
            "document_id": r.document_id,
            "strategy": strategy,
            "config_id": r.config_id,
            "collection": r.collection,
            TIME_FIELD: r.published_ts,
            SET_STATE_FIELD: ACTIVE if r.active else INACTIVE,
            "indexed_at": r.indexed_at,
            "language": r.language,
        }
        for r in sorted(chosen, key=lambda r: (r.document_id, r.config_id))
    ]
