"""Which asked-for documents a strategy's index sets do not cover (services/retriever/search/
coverage.py, ADR 0083): computed from the retriever's own set records, as the Retrieve reply
names them, for a strategy that never processed a document, one whose only sets came from an
experiment, a configuration asked for by its id, a document filter and a swept document."""

from __future__ import annotations

from chunklab.v1 import common_pb2, retriever_pb2
from services.retriever.search.coverage import SetRow, uncovered
from services.retriever.store import RetrieverStore

MODEL = "all-MiniLM-L6-v2"


def row(document: str, strategy: str, config: str, *, active=True, archived=False, collection="", language="en"):
    return SetRow(document, f"{document}.md", strategy, config, active, archived, collection, language)


ROWS = [
    row("speech", "fixed_size", "f1"),
    row("speech", "sentence_window", "w1", active=False),  # from an experiment: not active
    row("speech", "recursive", "r1"),
    row("report", "fixed_size", "f1"),
    row("report", "fixed_size", "f2", active=False),
    row("page", "fixed_size", "f1", collection="web", language="de"),
    row("swept", "fixed_size", "f1", archived=True, active=False),
]


def gaps(strategy: str, config_id: str = "", **filter_fields) -> dict[str, str]:
    found = uncovered(ROWS, strategy, config_id, common_pb2.RetrievalFilter(**filter_fields))
    return {d.document_id: retriever_pb2.CoverageGap.Name(d.gap).removeprefix("COVERAGE_GAP_") for d in found}


def test_a_strategy_that_processed_every_document_covers_them_all():
    assert gaps("fixed_size") == {}


def test_documents_a_strategy_never_processed_are_named_as_not_processed():
    assert gaps("recursive") == {"page": "NOT_PROCESSED", "report": "NOT_PROCESSED"}


def test_a_set_from_an_experiment_is_there_but_not_active_and_is_covered_when_asked_for_by_its_id():
    assert gaps("sentence_window", document_ids=["speech"]) == {"speech": "NO_ACTIVE_SET"}
    assert gaps("sentence_window", "w1", document_ids=["speech"]) == {}
    # A configuration only one document has leaves the others out, and says which.
    assert gaps("fixed_size", "f2") == {"page": "OTHER_CONFIGURATION", "speech": "OTHER_CONFIGURATION"}


def test_the_filter_decides_which_documents_are_asked_for():
    # Named documents are asked for even when the retriever never indexed them (no name then).
    found = uncovered(ROWS, "fixed_size", "", common_pb2.RetrievalFilter(document_ids=["report", "new"]))
    assert [(d.document_id, d.document_name, d.gap) for d in found] == [
        ("new", "", retriever_pb2.COVERAGE_GAP_NOT_PROCESSED)
    ]
    assert gaps("recursive", collections=["web"]) == {"page": "NOT_PROCESSED"}
    assert gaps("recursive", languages=["en"]) == {"report": "NOT_PROCESSED"}
    # A swept document is asked for only by name, and said to be archived.
    assert gaps("fixed_size", document_ids=["swept"]) == {"swept": "ARCHIVED"}


def test_the_store_hands_coverage_every_set_record_of_the_model(tmp_path):
    store = RetrieverStore(f"sqlite:///{tmp_path / 'retriever.sqlite3'}")
    common = dict(embedding_model=MODEL, dimension=8, spec={}, expansion=0, points=3)
    store.record_set(
        document_id="speech", document_name="speech.md", strategy="fixed_size", config_id="f1", active=True, **common
    )
    store.record_set(
        document_id="report", document_name="report.pdf", strategy="recursive", config_id="r1", active=True, **common
    )
    rows = store.coverage_rows(MODEL)
    assert {(r.document_id, r.strategy, r.active) for r in rows} == {
        ("speech", "fixed_size", True),
        ("report", "recursive", True),
    }
    found = uncovered(rows, "fixed_size", "", common_pb2.RetrievalFilter())
    assert [(d.document_id, d.document_name) for d in found] == [("report", "report.pdf")]
    assert store.coverage_rows("another-model") == []
    # A filter that names documents reads only their records, and covers the same.
    named = store.coverage_rows(MODEL, ["report"])
    assert [(r.document_id, r.strategy) for r in named] == [("report", "recursive")]
    found = uncovered(named, "fixed_size", "", common_pb2.RetrievalFilter(document_ids=["report"]))
    assert [(d.document_id, d.document_name, d.gap) for d in found] == [
        ("report", "report.pdf", retriever_pb2.COVERAGE_GAP_NOT_PROCESSED)
    ]
