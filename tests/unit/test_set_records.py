"""The sets a hybrid query's BM25 statistics are taken over, chosen from the set records the
query reads once (services/retriever/set_records.py, ADR 0144): the strategy's configuration
asked for by id, or its active sets; never an archived one; by document."""

from __future__ import annotations

from datetime import UTC, datetime

from services.retriever.set_records import SetRecord, searched_of

WHEN = datetime(2026, 12, 3, tzinfo=UTC)


def record(document: str, strategy: str, config: str, *, active=True, archived=False, language="en"):
    return SetRecord(document, f"{document}.md", strategy, config, active, archived, "", language, 0.0, WHEN)


RECORDS = [
    record("speech", "fixed_size", "f2", active=False),  # an experiment's set
    record("speech", "fixed_size", "f1"),
    record("report", "fixed_size", "f1", language=None),  # no statistics yet
    record("report", "recursive", "r1"),
    record("swept", "fixed_size", "f1", archived=True, active=False),
    record("archived-active", "fixed_size", "f2", archived=True),
]


def chosen(strategy: str, config_id: str = "") -> list[tuple[str, str, str, str | None]]:
    return [
        (s["document_id"], s["config_id"], s["set_state"], s["language"])
        for s in searched_of(RECORDS, strategy, config_id)
    ]


def test_the_active_sets_of_the_strategy_by_document_when_no_configuration_is_named():
    assert chosen("fixed_size") == [("report", "f1", "active", None), ("speech", "f1", "active", "en")]


def test_a_configuration_asked_for_by_id_is_searched_whether_active_or_not_but_never_archived():
    assert chosen("fixed_size", "f2") == [("speech", "f2", "inactive", "en")]
    assert chosen("recursive", "r9") == []
