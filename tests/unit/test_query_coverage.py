"""Fair Query columns (ADR 0083) on hand-built replies: a column whose strategy did not search
some asked-for documents says which and why, offers "Process with this configuration" for
those processing would add, and processes them with the column's own configuration; a
strategy whose only sets came from an experiment opens on its configuration, not on an
empty "active sets" column."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from chunklab.v1 import common_pb2, retriever_pb2
from chunklab.views.metric_format import MetricFormat
from frontend.pages.query import coverage, query_columns
from frontend.pages.query.query_columns import Column, Configuration


def uncovered(document_id: str, name: str, gap: int) -> retriever_pb2.UncoveredDocument:
    return retriever_pb2.UncoveredDocument(document_id=document_id, document_name=name, gap=gap)


def indexed(strategy: str, config_id: str, active: bool, seconds: int = 1, **knobs) -> retriever_pb2.IndexedSet:
    spec = common_pb2.StrategySpec(name=strategy)
    for name, value in knobs.items():
        spec.knobs[name].int_value = value
    found = retriever_pb2.IndexedSet(strategy=strategy, config_id=config_id, active=active, spec=spec)
    found.indexed_at.seconds = seconds
    return found


def test_a_column_names_each_document_it_did_not_search_and_offers_to_process_them():
    response = retriever_pb2.RetrieveResponse(
        uncovered_documents=[
            uncovered("r1", "report.pdf", retriever_pb2.COVERAGE_GAP_NOT_PROCESSED),
            uncovered("p1", "", retriever_pb2.COVERAGE_GAP_NO_ACTIVE_SET),
            uncovered("s1", "old.md", retriever_pb2.COVERAGE_GAP_ARCHIVED),
        ]
    )
    column = Column(Configuration("fixed_size", "", "fixed_size · active sets"), response)
    html = query_columns.columns_html([column], None, MetricFormat([]), names={"p1": "page.html"})
    root = ET.fromstring(html)
    missing = root.find(".//div[@class='cl-column-missing']")
    assert missing.get("data-missing") == "3"
    assert "does not cover 3 of the documents asked for" in "".join(missing.find("p").itertext())
    assert ["".join(li.itertext()) for li in missing.iter("li")] == [
        "fixed_size has not processed 'report.pdf'.",
        "fixed_size has index sets of 'page.html' (made by an experiment) but none is active: pick one of its "
        "configurations, or process it.",
        "'old.md' was archived by a freshness sweep.",
    ]
    button = missing.find("button")
    assert button.text == "Process with this configuration"
    # The swept document is not offered: processing does not bring it back.
    assert (button.get("data-strategy"), button.get("data-config-id"), button.get("data-documents")) == (
        "fixed_size",
        "",
        "r1 p1",
    )


def test_a_column_that_searched_every_document_says_nothing_about_coverage():
    column = Column(Configuration("fixed_size", "", "fixed_size"), retriever_pb2.RetrieveResponse())
    root = ET.fromstring(query_columns.columns_html([column], None, MetricFormat([])))
    assert root.find(".//div[@class='cl-column-missing']") is None
    assert coverage.missing("fixed_size", [], {}) is None


def test_processing_uses_the_columns_configuration_or_the_active_sets_shared_one_else_the_defaults():
    sets = [
        indexed("fixed_size", "small", True, chunk_size=64),
        indexed("fixed_size", "large", False, chunk_size=512),
        indexed("recursive", "r", True, chunk_size=128),
    ]
    assert coverage.spec_for("fixed_size", "large", sets).knobs["chunk_size"].int_value == 512
    assert coverage.spec_text(coverage.spec_for("fixed_size", "", sets)) == "fixed_size · chunk_size=64"
    two_active = [*sets, indexed("fixed_size", "other", True, chunk_size=32)]
    assert coverage.spec_for("fixed_size", "", two_active) == common_pb2.StrategySpec(name="fixed_size")
    assert coverage.spec_for("semantic", "", sets) == common_pb2.StrategySpec(name="semantic")
    with pytest.raises(ValueError, match="^No fixed_size index set has the configuration gone any more"):
        coverage.spec_for("fixed_size", "gone", sets)


def test_a_strategy_with_only_an_experiments_sets_opens_on_its_newest_configuration():
    sets = [
        indexed("fixed_size", "f", True),
        indexed("sentence_window", "old", False, seconds=1, window=1),
        indexed("sentence_window", "new", False, seconds=5, window=3),
    ]
    choices = query_columns.configuration_choices(sets, "m")
    # No "active sets" entry for a strategy that has none: it would search nothing.
    assert [value for _, value in choices] == [
        "fixed_size/",
        "fixed_size/f",
        "sentence_window/new",
        "sentence_window/old",
    ]
    assert query_columns.default_configurations(choices) == ["fixed_size/", "sentence_window/new"]
