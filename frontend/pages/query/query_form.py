"""The Query page's form: what its dropdowns offer (pure functions first), then the inputs
themselves, laid out top to bottom (question, question set, strategy and configuration,
retrieval options, reranking, filters and the answer model)."""

from __future__ import annotations

from dataclasses import dataclass

import gradio as gr

from chunklab.knobs import label
from chunklab_app import recommended
from frontend.forms import knobs
from frontend.forms.rerank import rerank_inputs, rerank_options
from frontend.forms.retrieval import ROW, RetrievalInputs, retrieval_inputs, row_values

ACTIVE_SETS = "active set of each document"


def default_strategy(names: list[str], current: str | None, indexed: set[str] | frozenset = frozenset()) -> str | None:
    """Keeps the user's choice; otherwise the strategy docs/benchmarks.md recommends
    (chunklab_app.recommended) where it has an index set (`indexed`: a question of a strategy
    not processed yet would only fail), else the baseline, fixed_size, where it exists."""
    if current in names:
        return current
    for name in recommended.STRATEGIES:
        if name in names and name in indexed:
            return name
    if knobs.BASELINE in names:
        return knobs.BASELINE
    return names[0] if names else None


def configuration_choices(sets) -> list[tuple[str, str]]:
    """The Configuration dropdown: each document's active set (""), then every
    configuration the strategy is indexed with, newest first, labelled by its
    knobs and how many documents have it (ListIndexedSets' rows)."""
    by_config: dict[str, list] = {}
    for indexed in sets:
        by_config.setdefault(indexed.config_id, []).append(indexed)
    choices = [(ACTIVE_SETS, "")]
    newest = sorted(by_config.values(), key=lambda group: -max(s.indexed_at.seconds for s in group))
    for group in newest:
        knob_text = ", ".join(f"{name}={label(value)}" for name, value in sorted(group[0].spec.knobs.items()))
        active = sum(1 for s in group if s.active)
        where = f"{len(group)} document{'s' if len(group) != 1 else ''}" + (f", active in {active}" if active else "")
        choices.append((f"{group[0].config_id} · {knob_text or 'defaults'} · {where}", group[0].config_id))
    return choices


def filter_choices(documents) -> tuple[list[str], list[str]]:
    """The collections and languages the uploaded documents have, for the filter dropdowns."""
    collections = sorted({d.collection for d in documents if d.collection})
    languages = sorted({d.language for d in documents if d.language})
    return collections, languages


# Where QueryForm.options puts the embedding model, and how many values it holds.
MODEL_AT = 1 + len(ROW) + 2
OPTIONS_COUNT = MODEL_AT + 1 + 4


def form_options(document_ids, *values) -> dict:
    """The form's retrieval options as answer_html.retrieval_options takes them, from
    QueryForm.options' values (documents, the retrieval row, collections, languages, the
    embedding model, the four reranking boxes, which may be left out); ValueError names an
    input that holds no whole number, or reranking boxes the retriever would refuse."""
    row = row_values(values[: len(ROW)])
    collection_names, language_codes, model_name, *rerank = values[len(ROW) :]
    rerank_kind, rerank_depth, rerank_model, rerank_url = (*rerank, None, None, None, None)[:4]
    return {
        **row,
        "rerank": rerank_options(rerank_kind, rerank_depth, rerank_model, rerank_url, row["top_k"]),
        "document_ids": document_ids,
        "collections": collection_names,
        "languages": language_codes,
        "embedding_model": model_name or "",
    }


@dataclass(frozen=True)
class QueryForm:
    """The form's inputs. `options` lists form_options' inputs in its order (documents, the
    retrieval row … embedding model, the four reranking boxes); `answer_model` the answer
    model's base URL, model and key."""

    question: gr.Textbox
    ask_button: gr.Button
    question_set: gr.Dropdown
    picked: gr.Dropdown
    strategy: gr.Dropdown
    configuration: gr.Dropdown
    documents: gr.Dropdown
    refresh_button: gr.Button
    retrieval: RetrievalInputs
    rerank: tuple[gr.Dropdown, gr.Number, gr.Textbox, gr.Textbox]
    collections: gr.Dropdown
    languages: gr.Dropdown
    embedding: gr.Dropdown
    answer_model: tuple[gr.Textbox, gr.Textbox, gr.Textbox]
    status: gr.HTML

    @property
    def options(self) -> list:
        return [self.documents, *self.retrieval.inputs, self.collections, self.languages, self.embedding, *self.rerank]

    @property
    def limited(self) -> list:
        """The inputs whose bounds come from the retriever (forms.retrieval.retrieval_limit_updates)."""
        return self.retrieval.bounded


def _question_rows() -> tuple[gr.Textbox, gr.Button, gr.Dropdown, gr.Dropdown]:
    with gr.Row(equal_height=True):
        question = gr.Textbox(
            label="Question", placeholder="What does the document say about …?", scale=4, elem_id="query-text"
        )
        ask_button = gr.Button("Ask", variant="primary", scale=0, elem_id="ask-button")
    with gr.Row():
        question_set = gr.Dropdown(label="Question set (optional)", choices=[], scale=2, elem_id="query-question-set")
        picked = gr.Dropdown(
            label="Question from the set: its excerpts are marked side by side",
            choices=[],
            scale=3,
            elem_id="query-question-pick",
        )
    return question, ask_button, question_set, picked


def _strategy_row() -> tuple[gr.Dropdown, gr.Dropdown, gr.Dropdown, gr.Button]:
    with gr.Row():
        strategy = gr.Dropdown(label="Strategy", choices=[], elem_id="query-strategy")
        configuration = gr.Dropdown(
            label="Configuration (index set)",
            choices=[(ACTIVE_SETS, "")],
            value="",
            info="several configurations of one strategy are indexed side by side",
            elem_id="query-configuration",
        )
        documents = gr.Dropdown(
            label="Documents (empty = all)", choices=[], multiselect=True, elem_id="query-documents"
        )
        refresh_button = gr.Button("↻", scale=0, min_width=40, elem_id="query-refresh")
    return strategy, configuration, documents, refresh_button


def _retrieval_row() -> RetrievalInputs:
    with gr.Row():
        # Bounds come from the retriever (GetRetrievalLimits) when the page loads.
        return retrieval_inputs("query")


def _more_accordion() -> tuple[gr.Dropdown, gr.Dropdown, gr.Dropdown, tuple[gr.Textbox, gr.Textbox, gr.Textbox]]:
    """Filters, the embedding model and the answer model, folded."""
    with gr.Accordion("Filters, embedding model and answer model", open=False, elem_id="query-more"):
        with gr.Row():
            collections = gr.Dropdown(
                label="Collections (empty = all)",
                choices=[],
                multiselect=True,
                allow_custom_value=True,
                elem_id="query-collections",
            )
            languages = gr.Dropdown(
                label="Languages (empty = all)",
                choices=[],
                multiselect=True,
                allow_custom_value=True,
                elem_id="query-languages",
            )
            embedding = gr.Dropdown(
                label="Embedding model (empty = default)",
                choices=[],
                allow_custom_value=True,
                elem_id="query-embedding-model",
            )
        gr.Markdown(
            "Answer model: an OpenAI-compatible chat endpoint. Left empty, the stack's configured model "
            "answers, or, with none configured, the answer is **extractive** (the context sentences closest "
            'to the question). Model "extractive" always asks for an extractive answer.'
        )
        with gr.Row():
            answer_base_url = gr.Textbox(
                label="Base URL", placeholder="http://localhost:11434/v1", elem_id="answer-base-url"
            )
            answer_model = gr.Textbox(
                label="Model", placeholder="e.g. gpt-4o-mini or extractive", elem_id="answer-model"
            )
            answer_key = gr.Textbox(label="API key", type="password", elem_id="answer-api-key")
    return collections, languages, embedding, (answer_base_url, answer_model, answer_key)


def form_section() -> QueryForm:
    """The form, then the page's status line under it."""
    question, ask_button, question_set, picked = _question_rows()
    strategy, configuration, documents, refresh_button = _strategy_row()
    retrieval = _retrieval_row()
    rerank = rerank_inputs("query")
    collections, languages, embedding, answer_model = _more_accordion()
    status = gr.HTML(elem_id="query-status")
    return QueryForm(
        question=question,
        ask_button=ask_button,
        question_set=question_set,
        picked=picked,
        strategy=strategy,
        configuration=configuration,
        documents=documents,
        refresh_button=refresh_button,
        retrieval=retrieval,
        rerank=rerank,
        collections=collections,
        languages=languages,
        embedding=embedding,
        answer_model=answer_model,
        status=status,
    )
