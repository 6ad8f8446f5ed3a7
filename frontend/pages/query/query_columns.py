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

from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, replace

from chunklab import metrics
from chunklab.client import ClientError
from chunklab.v1 import common_pb2, evaluator_pb2, retriever_pb2
from chunklab.views import numbers, retrieval_view
from chunklab.views.metric_format import MetricFormat
from chunklab.views.render import render
from chunklab_app import recommended
from frontend.pages.query import answer_html, coverage
from frontend.views.formatting import set_knobs
from frontend.views.retrieval_html import NO_CHUNKS, hits_phrase

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
    active sets first where it has any (named by their knobs where every document's active set
    has the same), then each configuration it is indexed with, newest first (an experiment's
    among them: searched by its config_id, it need not be active)."""
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
        if active:
            choices.append((f"{strategy} · {summary} · {embedding_model}", configuration_value(strategy, "")))
        newest = sorted(by_config.values(), key=lambda group: -max(s.indexed_at.seconds for s in group))
        for group in newest:
            choices.append(
                (
                    f"{strategy} · {set_knobs(group[0])} · {group[0].config_id} · {embedding_model}",
                    configuration_value(strategy, group[0].config_id),
                )
            )
    return choices


# Columns the page opens with: the strategies the UI starts from, then a few more to compare.
FIRST_COLUMNS = 4


def default_configurations(choices: Sequence[tuple[str, str]]) -> list[str]:
    """The columns the page opens on, one per strategy: its active sets, or, for a strategy
    that has none (only an experiment's sets), its newest configuration. The strategies the
    UI starts from first (chunklab_app.recommended.FIRST_STRATEGIES, which the Process form
    ticks), then other processed strategies in the list's order, FIRST_COLUMNS in all."""
    per_strategy: dict[str, str] = {}
    for _, value in choices:
        strategy, _, config_id = value.partition("/")
        if strategy not in per_strategy or (not config_id and per_strategy[strategy].partition("/")[2]):
            per_strategy[strategy] = value
    first = [name for name in recommended.FIRST_STRATEGIES if name in per_strategy]
    ordered = first + [name for name in per_strategy if name not in first]
    return [per_strategy[name] for name in ordered[:FIRST_COLUMNS]]


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
        raise ValueError(
            "Nothing is indexed with this embedding model yet: process a document on the Documents "
            "tab, then search side by side."
        )
    if not configurations:
        raise ValueError("Pick at least one configuration to search.")
    if len(configurations) > MAX_COLUMNS:
        raise ValueError(
            f"{len(configurations)} configurations are picked; at most {MAX_COLUMNS} fit side by side: remove some."
        )


@dataclass(frozen=True)
class Column:
    """One configuration's retrieval: its response, or why there is none; then its answer
    (None until it is asked), or why it could not be answered."""

    configuration: Configuration
    response: retriever_pb2.RetrieveResponse | None
    error: str = ""
    answer: answer_html.AnswerStream | None = None
    answer_error: str = ""


def error_sentence(exc: ClientError) -> str:
    """A failed search in one sentence: the service's own words when it answered (its status
    code left out), the client's sentence (which names the service and its address) when not."""
    raw = f"{exc.service} service: {exc.code.name}: {exc.details}" if exc.code is not None else ""
    reason = exc.details if exc.message == raw else exc.message
    reason = reason.strip().rstrip(".")
    return f"This configuration could not be searched: {reason}."


def search(gateway, question: str, options: common_pb2.RetrievalOptions, configuration: Configuration) -> Column:
    """One column: options with the configuration's strategy and index set."""
    request = common_pb2.RetrievalOptions()
    request.CopyFrom(options)
    request.strategy, request.config_id = configuration.strategy, configuration.config_id
    try:
        return Column(configuration, gateway.retrieve(question, request))
    except ClientError as exc:
        return Column(configuration, None, error_sentence(exc))


def search_all(
    gateway, question: str, options: common_pb2.RetrievalOptions, configurations: Sequence[Configuration]
) -> list[Column]:
    """Every column, searched concurrently (at most WORKERS at once), in the order picked."""
    with ThreadPoolExecutor(max_workers=min(WORKERS, len(configurations)) or 1) as pool:
        futures = [pool.submit(search, gateway, question, options, c) for c in configurations]
        return [future.result() for future in futures]


def answer(
    gateway,
    question: str,
    options: common_pb2.RetrievalOptions,
    column: Column,
    answer_model: evaluator_pb2.ModelEndpoint | None,
) -> Column:
    """The column with its answer (EvaluatorService.Answer on the column's configuration:
    the configured LLM's, else extractive), or why there is none."""
    request = evaluator_pb2.AnswerRequest(question=question)
    request.retrieval.CopyFrom(options)
    request.retrieval.strategy = column.configuration.strategy
    request.retrieval.config_id = column.configuration.config_id
    if answer_model is not None:
        request.answer_model.CopyFrom(answer_model)
    stream = answer_html.AnswerStream()
    try:
        for event in gateway.answer(request):
            stream.add(event)
    except ClientError as exc:
        return replace(column, answer=stream, answer_error=error_sentence(exc).replace("searched", "answered"))
    return replace(column, answer=stream)


def answer_all(
    gateway,
    question: str,
    options: common_pb2.RetrievalOptions,
    columns: Sequence[Column],
    answer_model: evaluator_pb2.ModelEndpoint | None = None,
) -> Iterator[list[Column]]:
    """The columns again each time one more is answered (those that were searched), so the
    page shows every answer as soon as it is written."""
    current = list(columns)
    asked = [i for i, column in enumerate(current) if column.response is not None]
    if not asked:
        return
    with ThreadPoolExecutor(max_workers=min(WORKERS, len(asked))) as pool:
        futures = {pool.submit(answer, gateway, question, options, current[i], answer_model): i for i in asked}
        for future in as_completed(futures):
            current[futures[future]] = future.result()
            yield list(current)


@dataclass(frozen=True)
class Found:
    """A column's measures for a labelled question: the evaluator's recall and IoU on the
    context, and how many of the question's excerpts the context touches."""

    recall: float
    iou: float
    found: int
    excerpts: int


def found(retrieved: Sequence[common_pb2.RetrievedChunk], references: Sequence[evaluator_pb2.Reference]) -> Found:
    on_context = metrics.context_overlap(retrieved, references)
    spans = [metrics.chunk_span(item.chunk) for item in retrieved]
    touched = sum(1 for reference in metrics.reference_spans(references) if metrics.touches(reference, spans))
    return Found(on_context.recall, on_context.iou, touched, len(references))


EXPANSION_NOTES = {
    common_pb2.EXPANSION_KIND_NEIGHBORS: "chunks added before and after each hit",
    common_pb2.EXPANSION_KIND_WINDOW: "no effect: {strategy} adds its sentence window (the window box)",
    common_pb2.EXPANSION_KIND_PARENT: "no effect: {strategy} returns each hit's parent",
    common_pb2.EXPANSION_KIND_NONE: "no effect: {strategy} returns its hits only",
}


def neighbour_note(info) -> str:
    """What the neighbour inputs do for a strategy, from the expansion kind it declares."""
    note = EXPANSION_NOTES.get(info.expansion, EXPANSION_NOTES[common_pb2.EXPANSION_KIND_NONE])
    return note.format(strategy=info.name)


def ignored_neighbours(options: common_pb2.RetrievalOptions, info) -> str:
    """For a column whose strategy does not expand by neighbours while the options ask for
    some: that they are ignored, and what the strategy does instead; else ""."""
    if info is None or not (options.neighbor_prev or options.neighbor_next):
        return ""
    if info.expansion == common_pb2.EXPANSION_KIND_NEIGHBORS:
        return ""
    return f"neighbor_prev {options.neighbor_prev} / neighbor_next {options.neighbor_next}: " + neighbour_note(info)


def answer_view(column: Column) -> dict | None:
    """The column's answer for the template: who wrote it, its pieces each with the chunk it
    came from (extractive answers), or why it is missing; None before it is asked."""
    stream = column.answer
    if stream is None:
        return None
    result = stream.result
    if column.answer_error or result is None:
        return {
            "state": "failed",
            "error": column.answer_error or "The evaluator ended the answer without its result; see its log.",
            "pieces": [],
            "cited": False,
            "extractive": False,
            "model": "",
        }
    retrieved = stream.context.retrieved_chunks if stream.context is not None else []
    # An extractive answer of an empty context is the evaluator's own sentence: nothing to cite.
    cited = answer_html.cited_pieces(result.answer, retrieved) if result.extractive else []
    pieces = cited or [answer_html.Cited(result.answer, None)]
    return {
        "state": "done",
        "error": "",
        "cited": bool(cited),
        "extractive": result.extractive,
        "model": result.model,
        "pieces": [{"text": p.text, "cite": p.cite} for p in pieces],
        "latency": numbers.milliseconds(result.latency_ms),
    }


def column_view(
    column: Column,
    references: Sequence[evaluator_pb2.Reference],
    formats: MetricFormat,
    options: common_pb2.RetrievalOptions | None = None,
    strategies: Mapping[str, object] | None = None,
    names: Mapping[str, str] | None = None,
) -> dict:
    """What the template draws for one column. `strategies` (StrategyInfo by name) tells which
    expand by neighbours, so that a column whose strategy ignores them says so."""
    configuration = column.configuration
    info = (strategies or {}).get(configuration.strategy)
    view = {
        "label": configuration.label,
        "strategy": configuration.strategy,
        "config_id": configuration.config_id,
        "error": column.error,
        "neighbours_note": ignored_neighbours(options or common_pb2.RetrievalOptions(), info),
        "answer": answer_view(column),
    }
    response = column.response
    if response is None:
        return view
    spans = metrics.reference_spans(references)
    retrieved = response.retrieved_chunks
    view.update(
        missing=coverage.missing(configuration.strategy, response.uncovered_documents, names or {}),
        passages=retrieval_view.passage_view(retrieved, references=spans),
        nodes=retrieval_view.tree_view(response.expansion_tree, references=spans),
        empty=NO_CHUNKS,
        chunk_count=len(retrieved),
        hits_text=hits_phrase(retrieved, response.expansion_tree),
        tokens_sent=numbers.count(sum(item.chunk.token_count for item in retrieved)),
        # As the answer box writes its latency.
        latency=numbers.milliseconds(response.timings.total_ms),
        reranker=response.reranker,
        measures=None,
    )
    if references:
        measured = found(retrieved, references)
        view["measures"] = {
            "recall": measured.recall,
            "iou": measured.iou,
            "found": measured.found,
            "excerpts": measured.excerpts,
            "recall_text": f"{formats.label('recall')} {formats.value('recall', measured.recall)}",
            "iou_text": f"{formats.label('iou')} {formats.value('iou', measured.iou)}",
        }
    return view


def columns_html(
    columns: Sequence[Column],
    question: evaluator_pb2.Question | None,
    formats: MetricFormat,
    note: str = "",
    options: common_pb2.RetrievalOptions | None = None,
    strategies: Mapping[str, object] | None = None,
    names: Mapping[str, str] | None = None,
) -> str:
    """The columns side by side; with a question from a set, its excerpts marked in each;
    `names` the documents' names by id, for those the retriever does not know."""
    references = list(question.references) if question is not None else []
    return render(
        "frontend",
        "query_columns.html.j2",
        columns=[column_view(c, references, formats, options, strategies, names) for c in columns],
        question_id=question.question_id if question is not None else "",
        excerpts=len(references),
        note=note,
    )


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


def picked_question(
    question_set: evaluator_pb2.QuestionSet | None, question_id: str, text: str
) -> tuple[evaluator_pb2.Question | None, str]:
    """The question whose excerpts the columns mark, and a note when the picked one does not
    apply: it left the set, or the question box no longer holds its text."""
    if question_set is None or not question_id:
        return None, ""
    question = next((q for q in question_set.questions if q.question_id == question_id), None)
    if question is None:
        return None, f"The picked question is no longer in {question_set.name}: no excerpts are marked."
    if question.text.strip() != text.strip():
        return None, (
            f"The question box no longer holds the question picked from {question_set.name}: "
            "its excerpts are not marked."
        )
    return question, ""
