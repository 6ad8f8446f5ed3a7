"""Fair Query columns (ADR 0083): what a column did not search, in words, and the one click
that processes those documents with the column's configuration.

The retriever names the asked-for documents a column's strategy has no set of
(RetrieveResponse.uncovered_documents); this module says why for each in a sentence, and
works out the configuration "Process with this configuration" uses: the column's own
(config_id), or, for a column of active sets, the one every covered document's active set
has (the strategy's defaults when they differ or there is none). No Gradio here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from chunklab.v1 import common_pb2, retriever_pb2
from frontend.views.formatting import set_knobs

# Gaps that processing the document with the column's configuration closes (an archived
# document is brought back by its freshness window, not by processing it again).
PROCESSABLE = (
    retriever_pb2.COVERAGE_GAP_NOT_PROCESSED,
    retriever_pb2.COVERAGE_GAP_NO_ACTIVE_SET,
    retriever_pb2.COVERAGE_GAP_OTHER_CONFIGURATION,
)


def gap_sentence(strategy: str, name: str, gap: int) -> str:
    """Why a column did not search one document, naming both."""
    if gap == retriever_pb2.COVERAGE_GAP_NO_ACTIVE_SET:
        return (
            f"{strategy} has index sets of '{name}' (made by an experiment) but none is active: "
            "pick one of its configurations, or process it"
        )
    if gap == retriever_pb2.COVERAGE_GAP_OTHER_CONFIGURATION:
        return f"{strategy} has not processed '{name}' with this configuration"
    if gap == retriever_pb2.COVERAGE_GAP_ARCHIVED:
        return f"'{name}' was archived by a freshness sweep"
    return f"{strategy} has not processed '{name}'"


@dataclass(frozen=True)
class Missing:
    """A column's documents left out: one sentence each, and those processing would add."""

    sentences: list[str]
    processable: list[str]  # document ids
    headline: str


def missing(
    strategy: str, uncovered: Sequence[retriever_pb2.UncoveredDocument], names: Mapping[str, str]
) -> Missing | None:
    """What a column says about the documents it did not search; None when it searched all."""
    if not uncovered:
        return None
    sentences = [
        gap_sentence(strategy, d.document_name or names.get(d.document_id, d.document_id), d.gap) for d in uncovered
    ]
    count = len(uncovered)
    headline = (
        f"This column does not cover {count} of the documents asked for: "
        "its answer and measures come from the others only."
        if count > 1
        else "This column does not cover one of the documents asked for: "
        "its answer and measures come from the others only."
    )
    return Missing(sentences, [d.document_id for d in uncovered if d.gap in PROCESSABLE], headline)


def spec_for(strategy: str, config_id: str, sets: Iterable[retriever_pb2.IndexedSet]) -> common_pb2.StrategySpec:
    """The configuration "Process with this configuration" uses: the set config_id names,
    or, for a column of active sets (config_id ""), the active sets' one when they all
    share it, else the strategy's defaults."""
    own = [s for s in sets if s.strategy == strategy]
    if config_id:
        chosen = next((s for s in own if s.config_id == config_id), None)
        if chosen is None:
            raise ValueError(f"No {strategy} index set has the configuration {config_id} any more: search again.")
        return chosen.spec
    active = {s.config_id: s for s in own if s.active}
    if len(active) == 1:
        return next(iter(active.values())).spec
    return common_pb2.StrategySpec(name=strategy)


def spec_text(spec: common_pb2.StrategySpec) -> str:
    """The configuration as the column's label writes it: "fixed_size · chunk_size=256"."""
    return f"{spec.name} · {set_knobs(retriever_pb2.IndexedSet(spec=spec))}"


def processed_sentence(spec: common_pb2.StrategySpec, names: Sequence[str]) -> str:
    quoted = ", ".join(f"'{name}'" for name in names)
    return f"Processing {quoted} with {spec_text(spec)}; the columns are searched again once it is done."
