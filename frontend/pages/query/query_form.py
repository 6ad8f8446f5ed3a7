"""The Query page's form: what its dropdowns offer (pure functions first), then the inputs
themselves, laid out top to bottom (question, question set, strategy and configuration,
retrieval options, reranking, filters and the answer model)."""

from __future__ import annotations

from dataclasses import dataclass

import gradio as gr

from chunklab_app import recommended
from chunklab.knobs import label
from frontend.forms import experiment_config, knobs
from frontend.forms.rerank import rerank_inputs, rerank_options
from frontend.forms.retrieval import hybrid_checkbox

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


def form_options(document_ids, k, prev, nxt, window_value, lam, use_hybrid, collection_names, language_codes,
                 model_name, rerank_kind=None, rerank_depth=None, rerank_model=None, rerank_url=None) -> dict:
    """The form's retrieval options as answer_html.retrieval_options takes them; ValueError
    names an input that holds no whole number, or reranking boxes the retriever would refuse."""
    top_k = experiment_config.whole(k, 5)
    return {
        "top_k": top_k,
        "rerank": rerank_options(rerank_kind, rerank_depth, rerank_model, rerank_url, top_k),
        "neighbor_prev": experiment_config.whole(prev, 0),
        "neighbor_next": experiment_config.whole(nxt, 0),
        "window": experiment_config.optional_whole(window_value, "window"),
        "hybrid": bool(use_hybrid), "recency_lambda": float(lam or 0.0),
        "document_ids": document_ids, "collections": collection_names, "languages": language_codes,
        "embedding_model": model_name or "",
    }


@dataclass(frozen=True)
class QueryForm:
    """The form's inputs. `options` lists form_options' inputs in its order (documents …
    embedding model, the four reranking boxes); `answer_model` the answer model's base URL,
    model and key."""

    question: gr.Textbox
    ask_button: gr.Button
    question_set: gr.Dropdown
    picked: gr.Dropdown
    strategy: gr.Dropdown
    configuration: gr.Dropdown
    documents: gr.Dropdown
    refresh_button: gr.Button
    top_k: gr.Number
    neighbor_prev: gr.Number
    neighbor_next: gr.Number
    window: gr.Textbox
    recency: gr.Number
    hybrid: gr.Checkbox
    rerank: tuple[gr.Dropdown, gr.Number, gr.Textbox, gr.Textbox]
    collections: gr.Dropdown
    languages: gr.Dropdown
    embedding: gr.Dropdown
    answer_model: tuple[gr.Textbox, gr.Textbox, gr.Textbox]
    status: gr.HTML

    @property
    def options(self) -> list:
        return [self.documents, self.top_k, self.neighbor_prev, self.neighbor_next, self.window, self.recency,
                self.hybrid, self.collections, self.languages, self.embedding, *self.rerank]

    @property
    def limited(self) -> list:
        """The inputs whose bounds come from the retriever (forms.retrieval.retrieval_limit_updates)."""
        return [self.top_k, self.neighbor_prev, self.neighbor_next, self.window, self.recency]


def _question_rows() -> tuple[gr.Textbox, gr.Button, gr.Dropdown, gr.Dropdown]:
    with gr.Row(equal_height=True):
        question = gr.Textbox(
            label="Question", placeholder="What does the document say about …?", scale=4, elem_id="query-text"
        )
        ask_button = gr.Button("Ask", variant="primary", scale=0, elem_id="ask-button")
    with gr.Row():
        question_set = gr.Dropdown(label="Question set (optional)", choices=[], scale=2,
                                   elem_id="query-question-set")
        picked = gr.Dropdown(label="Question from the set: its excerpts are marked side by side", choices=[],
                             scale=3, elem_id="query-question-pick")
    return question, ask_button, question_set, picked


def _strategy_row() -> tuple[gr.Dropdown, gr.Dropdown, gr.Dropdown, gr.Button]:
    with gr.Row():
        strategy = gr.Dropdown(label="Strategy", choices=[], elem_id="query-strategy")
        configuration = gr.Dropdown(
            label="Configuration (index set)", choices=[(ACTIVE_SETS, "")], value="",
            info="several configurations of one strategy are indexed side by side",
            elem_id="query-configuration",
        )
        documents = gr.Dropdown(
            label="Documents (empty = all)", choices=[], multiselect=True, elem_id="query-documents"
        )
        refresh_button = gr.Button("↻", scale=0, min_width=40, elem_id="query-refresh")
    return strategy, configuration, documents, refresh_button


def _retrieval_row() -> tuple[gr.Number, gr.Number, gr.Number, gr.Textbox, gr.Number, gr.Checkbox]:
    with gr.Row():
        # Bounds come from the retriever (GetRetrievalLimits) when the page loads.
        top_k = gr.Number(label="top_k", value=5, precision=0, elem_id="query-top-k")
        neighbor_prev = gr.Number(
            label="neighbor_prev", value=0, precision=0, info="strategies that expand by neighbours (fixed_size)",
            elem_id="query-neighbor-prev",
        )
        neighbor_next = gr.Number(
            label="neighbor_next", value=0, precision=0, info="strategies that expand by neighbours (fixed_size)",
            elem_id="query-neighbor-next",
        )
        # A Textbox, not a Number: empty ("as indexed") differs from 0, and gr.Number shows 0 for empty.
        window = gr.Textbox(
            label="window", placeholder="as indexed", max_lines=1,
            info="sentence_window only: units each side", elem_id="query-window",
        )
        recency = gr.Number(
            label="recency λ per day", value=0, step=0.01, info="score × exp(−λ·age); 0 = off",
            elem_id="query-recency",
        )
        hybrid = hybrid_checkbox("query-hybrid")
    return top_k, neighbor_prev, neighbor_next, window, recency, hybrid


def _more_accordion() -> tuple[gr.Dropdown, gr.Dropdown, gr.Dropdown, tuple[gr.Textbox, gr.Textbox, gr.Textbox]]:
    """Filters, the embedding model and the answer model, folded."""
    with gr.Accordion("Filters, embedding model and answer model", open=False, elem_id="query-more"):
        with gr.Row():
            collections = gr.Dropdown(
                label="Collections (empty = all)", choices=[], multiselect=True, allow_custom_value=True,
                elem_id="query-collections",
            )
            languages = gr.Dropdown(
                label="Languages (empty = all)", choices=[], multiselect=True, allow_custom_value=True,
                elem_id="query-languages",
            )
            embedding = gr.Dropdown(
                label="Embedding model (empty = default)", choices=[], allow_custom_value=True,
                elem_id="query-embedding-model",
            )
        gr.Markdown(
            "Answer model: an OpenAI-compatible chat endpoint. Left empty, the stack's configured model "
            "answers, or, with none configured, the answer is **extractive** (the context sentences closest "
            'to the question). Model "extractive" always asks for an extractive answer.'
        )
        with gr.Row():
            answer_base_url = gr.Textbox(label="Base URL", placeholder="http://localhost:11434/v1", elem_id="answer-base-url")
            answer_model = gr.Textbox(label="Model", placeholder="e.g. gpt-4o-mini or extractive", elem_id="answer-model")
            answer_key = gr.Textbox(label="API key", type="password", elem_id="answer-api-key")
    return collections, languages, embedding, (answer_base_url, answer_model, answer_key)


def form_section() -> QueryForm:
    """The form, then the page's status line under it."""
    question, ask_button, question_set, picked = _question_rows()
    strategy, configuration, documents, refresh_button = _strategy_row()
    top_k, neighbor_prev, neighbor_next, window, recency, hybrid = _retrieval_row()
    rerank = rerank_inputs("query")
    collections, languages, embedding, answer_model = _more_accordion()
    status = gr.HTML(elem_id="query-status")
    return QueryForm(
        question=question, ask_button=ask_button, question_set=question_set, picked=picked, strategy=strategy,
        configuration=configuration, documents=documents, refresh_button=refresh_button, top_k=top_k,
        neighbor_prev=neighbor_prev, neighbor_next=neighbor_next, window=window, recency=recency, hybrid=hybrid,
        rerank=rerank, collections=collections, languages=languages, embedding=embedding,
        answer_model=answer_model, status=status,
    )
