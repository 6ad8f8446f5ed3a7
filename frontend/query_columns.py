"""Query side by side: one question asked of several configurations at once, one
column each.

A configuration is a strategy and one of its index sets (or each document's
active set of it), as ListIndexedSets lists them. The columns are searched
concurrently in a small pool; one that fails says why in its own column and the
others stand. When the question comes from a question set, each column marks
the reference excerpts inside its context and gives its recall and IoU for the
question, computed by chunklab.metrics as an experiment computes them. No Gradio
here: plain data in, the view data and the HTML out.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from chunklab import metrics, retrieval_view
from chunklab.client import ClientError
from chunklab.metric_format import MetricFormat
from chunklab.render import render
from chunklab.v1 import common_pb2, evaluator_pb2, retriever_pb2
from frontend.formatting import set_knobs
from frontend.retrieval_html import NO_CHUNKS

# More columns than this do not fit side by side on a screen.
MAX_COLUMNS = 6
# Retrieve calls in flight at once: the retriever embeds each query, and the stack shares its cores.
WORKERS = 3
ACTIVE = "active sets"


@dataclass(frozen=True)
class Configuration:
    """One column's strategy and index set (config_id "" = each document's active set)."""

    strategy: str
    config_id: str
    label: str


def configuration_value(strategy: str, config_id: str) -> str:
    """A choice's value: "strategy/config_id" ("strategy/" for the active sets)."""
    return f"{strategy}/{config_id}"


def configuration_choices(sets: Iterable[retriever_pb2.IndexedSet], embedding_model: str) -> list[tuple[str, str]]:
    """The Configurations multi-select, "strategy · knobs · model": per strategy its documents'
    active sets first (named by their knobs where every document's active set has the same),
    then each configuration it is indexed with, newest first."""
    by_strategy: dict[str, dict[str, list[retriever_pb2.IndexedSet]]] = {}
    for indexed in sets:
        by_strategy.setdefault(indexed.strategy, {}).setdefault(indexed.config_id, []).append(indexed)
    choices = []
    for strategy, by_config in sorted(by_strategy.items()):
        active = {s.config_id: s for group in by_config.values() for s in group if s.active}
        if len(active) == 1:
            summary = f"{ACTIVE}: {set_knobs(next(iter(active.values())))}"
        else:
            summary = f"{ACTIVE} ({len(active)} configurations)"
        choices.append((f"{strategy} · {summary} · {embedding_model}", configuration_value(strategy, "")))
        newest = sorted(by_config.values(), key=lambda group: -max(s.indexed_at.seconds for s in group))
        for group in newest:
            choices.append((f"{strategy} · {set_knobs(group[0])} · {group[0].config_id} · {embedding_model}",
                            configuration_value(strategy, group[0].config_id)))
    return choices


def default_configurations(choices: Sequence[tuple[str, str]]) -> list[str]:
    """The active sets of every processed strategy, at most MAX_COLUMNS of them."""
    return [value for _, value in choices if value.endswith("/")][:MAX_COLUMNS]


def chosen(values: Sequence[str], choices: Sequence[tuple[str, str]]) -> list[Configuration]:
    """The picked values as configurations, labelled as the multi-select shows them."""
    labels = {value: text for text, value in choices}
    picked = []
    for value in values:
        strategy, _, config_id = value.partition("/")
        picked.append(Configuration(strategy, config_id, labels.get(value, value)))
    return picked


def check_count(configurations: Sequence[Configuration], offered: Sequence[tuple[str, str]]) -> None:
    """Refuses no configuration and more than fit side by side, in words the user acts on."""
    if not offered:
        raise ValueError("Nothing is indexed with this embedding model yet: process a document on the Documents "
                         "tab, then search side by side.")
    if not configurations:
        raise ValueError("Pick at least one configuration to search.")
    if len(configurations) > MAX_COLUMNS:
        raise ValueError(f"{len(configurations)} configurations are picked; at most {MAX_COLUMNS} fit side by "
                         "side: remove some.")


@dataclass(frozen=True)
class Column:
    """One configuration's retrieval: its response, or why there is none."""

    configuration: Configuration
    response: retriever_pb2.RetrieveResponse | None
    error: str = ""


def error_sentence(exc: ClientError) -> str:
    """A failed search in one sentence: the service's own words when it answered (its status
    code left out), the client's sentence (which names the service and its address) when not."""
    raw = f"{exc.service} service: {exc.code.name}: {exc.details}" if exc.code is not None else ""
    reason = exc.details if exc.message == raw else exc.message
    reason = reason.strip().rstrip(".")
    return f"This configuration could not be searched: {reason}."


def search(gateway, question: str, options: common_pb2.RetrievalOptions,
           configuration: Configuration) -> Column:
    """One column: options with the configuration's strategy and index set."""
    request = common_pb2.RetrievalOptions()
    request.CopyFrom(options)
    request.strategy, request.config_id = configuration.strategy, configuration.config_id
    try:
        return Column(configuration, gateway.retrieve(question, request))
    except ClientError as exc:
        return Column(configuration, None, error_sentence(exc))


def search_all(gateway, question: str, options: common_pb2.RetrievalOptions,
               configurations: Sequence[Configuration]) -> list[Column]:
    """Every column, searched concurrently (at most WORKERS at once), in the order picked."""
    with ThreadPoolExecutor(max_workers=min(WORKERS, len(configurations)) or 1) as pool:
        futures = [pool.submit(search, gateway, question, options, c) for c in configurations]
        return [future.result() for future in futures]


@dataclass(frozen=True)
class Found:
    """A column's measures for a labelled question: the evaluator's recall and IoU on the
    context, and how many of the question's excerpts the context touches."""

    recall: float
    iou: float
    found: int
    excerpts: int


def found(retrieved: Sequence[common_pb2.RetrievedChunk],
          references: Sequence[evaluator_pb2.Reference]) -> Found:
    on_context = metrics.context_overlap(retrieved, references)
    spans = [metrics.chunk_span(item.chunk) for item in retrieved]
    touched = sum(1 for reference in metrics.reference_spans(references) if metrics.touches(reference, spans))
    return Found(on_context.recall, on_context.iou, touched, len(references))


def column_view(column: Column, references: Sequence[evaluator_pb2.Reference],
                formats: MetricFormat) -> dict:
    """What the template draws for one column."""
    configuration = column.configuration
    view = {"label": configuration.label, "strategy": configuration.strategy,
            "config_id": configuration.config_id, "error": column.error}
    response = column.response
    if response is None:
        return view
    spans = metrics.reference_spans(references)
    retrieved = response.retrieved_chunks
    view.update(
        chunks=retrieval_view.flat_view(retrieved, references=spans),
        nodes=retrieval_view.tree_view(response.expansion_tree, references=spans),
        empty=NO_CHUNKS,
        hits=sum(1 for item in retrieved if item.label == common_pb2.CHUNK_LABEL_HIT),
        tokens_sent=formats.value("tokens_sent", sum(item.chunk.token_count for item in retrieved)),
        # As the answer box writes its latency.
        latency=f"{response.timings.total_ms:.0f} ms",
        reranker=response.reranker,
        measures=None,
    )
    if references:
        measured = found(retrieved, references)
        view["measures"] = {
            "recall": measured.recall, "iou": measured.iou, "found": measured.found, "excerpts": measured.excerpts,
            "recall_text": f"{formats.label('recall')} {formats.value('recall', measured.recall)}",
            "iou_text": f"{formats.label('iou')} {formats.value('iou', measured.iou)}",
        }
    return view


def columns_html(columns: Sequence[Column], question: evaluator_pb2.Question | None, formats: MetricFormat,
                 note: str = "") -> str:
    """The columns side by side; with a question from a set, its excerpts marked in each."""
    references = list(question.references) if question is not None else []
    return render("frontend", "query_columns.html.j2",
                  columns=[column_view(c, references, formats) for c in columns],
                  question_id=question.question_id if question is not None else "",
                  excerpts=len(references), note=note)


QUESTION_CHARS = 90


def question_choices(question_set: evaluator_pb2.QuestionSet) -> list[tuple[str, str]]:
    """A set's questions for the Question dropdown: the text (cut to QUESTION_CHARS) and how
    many reference excerpts it has, valued by question_id."""
    choices = []
    for question in question_set.questions:
        text = question.text if len(question.text) <= QUESTION_CHARS else question.text[:QUESTION_CHARS] + "…"
        count = len(question.references)
        choices.append((f"{text} · {count} excerpt{'' if count == 1 else 's'}", question.question_id))
    return choices


def picked_question(question_set: evaluator_pb2.QuestionSet | None, question_id: str,
                    text: str) -> tuple[evaluator_pb2.Question | None, str]:
    """The question whose excerpts the columns mark, and a note when the picked one does not
    apply: it left the set, or the question box no longer holds its text."""
    if question_set is None or not question_id:
        return None, ""
    question = next((q for q in question_set.questions if q.question_id == question_id), None)
    if question is None:
        return None, f"The picked question is no longer in {question_set.name}: no excerpts are marked."
    if question.text.strip() != text.strip():
        return None, (f"The question box no longer holds the question picked from {question_set.name}: "
                      "its excerpts are not marked.")
    return question, ""
