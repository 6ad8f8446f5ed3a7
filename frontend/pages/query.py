"""Query: ask one question of several configurations side by side, and of one
strategy for an answer read as it is written, with both shapes of its context.

Side by side, each picked configuration (a strategy and an index set) is a
column (frontend/query_columns.py), all searched with the same retrieval
options; a question picked from a question set has its reference excerpts
marked in every column, with that column's recall and IoU for it.

One call does it all: EvaluatorService.Answer retrieves (its first event is
the context: `retrieved_chunks` and `expansion_tree`), then streams the answer.
The handler is a generator, so the page redraws after every event. Below the
answer, thumbs up/down go to SubmitFeedback with the answer's query_id.
"""

from __future__ import annotations

import gradio as gr

from chunklab import recommended
from chunklab.client import ChunkLab, ClientError
from chunklab.knobs import label

from frontend import answer_html, experiment_config, first_minute, knobs, query_columns, retrieval_html
from frontend.formatting import message_html
from frontend.pages import query_side_by_side
from frontend.pages.common import (
    document_dropdown_update, hybrid_checkbox, rerank_inputs, retrieval_limit_updates, said_as_info, said_in_place,
    told_as_sentence, told_html, told_sentence, user_error,
)
from frontend.pages.query_side_by_side import form_options


def default_strategy(names: list[str], current: str | None, indexed: set[str] | frozenset = frozenset()) -> str | None:
    """Keeps the user's choice; otherwise the strategy docs/benchmarks.md recommends
    (chunklab.recommended) where it has an index set (`indexed`: a question of a strategy
    not processed yet would only fail), else the baseline, fixed_size, where it exists."""
    if current in names:
        return current
    for name in recommended.STRATEGIES:
        if name in names and name in indexed:
            return name
    if knobs.BASELINE in names:
        return knobs.BASELINE
    return names[0] if names else None


ACTIVE_SETS = "active set of each document"


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


def build(gateway: ChunkLab) -> gr.Blocks:
    with gr.Blocks() as page:
        query_id = gr.State("")
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
        rerank = rerank_inputs("query")
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
        status = gr.HTML(elem_id="query-status")
        gr.Markdown("#### Side by side: the question asked of several configurations")
        with gr.Row(equal_height=True):
            column_configurations = gr.Dropdown(
                label=f"Configurations (strategy · knobs · model), up to {query_columns.MAX_COLUMNS}", choices=[],
                multiselect=True, max_choices=query_columns.MAX_COLUMNS, scale=4, elem_id="query-configurations",
            )
            side_by_side_button = gr.Button("Search side by side", scale=0, elem_id="side-by-side-button")
        columns = gr.HTML(elem_id="query-columns")
        # Looks for the sample while `make up` is still loading it; stopped once the page is filled.
        sample_timer = gr.Timer(first_minute.POLL_SECONDS, active=False)
        gr.Markdown("#### Answer")
        answer = gr.HTML(elem_id="answer")
        with gr.Row(equal_height=True):
            thumbs_up = gr.Button("👍 Helpful", scale=0, interactive=False, elem_id="thumbs-up")
            thumbs_down = gr.Button("👎 Not helpful", scale=0, interactive=False, elem_id="thumbs-down")
            comment = gr.Textbox(label="Comment (optional)", scale=3, elem_id="feedback-comment")
        feedback = gr.HTML(elem_id="feedback-status")
        summary = gr.HTML(elem_id="retrieve-summary")
        with gr.Row():
            with gr.Column():
                gr.Markdown("#### What the LLM sees: the retrieved chunks, in document order")
                flat = gr.HTML(elem_id="flat-list")
            with gr.Column():
                gr.Markdown("#### The expansion tree: hits in score order, with what each pulled in")
                tree = gr.HTML(elem_id="expansion-tree")

        def options(current_strategy, current_documents, current_collections, current_languages, current_model):
            try:
                catalog = gateway.strategy_catalog()
                names = [info.name for info in catalog.strategies]
                indexed = set() if current_strategy in names else {
                    name for name in recommended.STRATEGIES
                    if name in names and gateway.list_indexed_sets(name, embedding_model=current_model or "")
                }
                strategy_update = gr.update(choices=names, value=default_strategy(names, current_strategy, indexed))
                models = list(catalog.embedding_models)
                model_update = gr.update(choices=models, value=current_model or None)
                message = ""
            except ClientError as exc:
                strategy_update, model_update, message = gr.update(), gr.update(), told_html(exc)
            try:
                listed = gateway.list_documents()
            except ClientError as exc:  # the lists keep what they show; the status says why
                return strategy_update, said_as_info(exc), gr.skip(), gr.skip(), model_update, message or told_html(exc)
            known_collections, known_languages = filter_choices(listed)
            return (
                strategy_update, document_dropdown_update(gateway, current_documents or [], listed),
                gr.update(choices=known_collections, value=current_collections or []),
                gr.update(choices=known_languages, value=current_languages or []),
                model_update, message,
            )

        def configurations(strategy_name, current, model_name):
            """The strategy's index sets, keeping the chosen one while it is there, and what
            the neighbour inputs do for it."""
            if not strategy_name:
                return gr.update(choices=[(ACTIVE_SETS, "")], value=""), gr.update(), gr.update()
            try:
                choices = configuration_choices(gateway.list_indexed_sets(strategy_name, embedding_model=model_name or ""))
                infos = {info.name: info for info in gateway.list_strategies()}
            except ClientError as exc:  # the dropdown keeps its choice and says why under it
                return said_as_info(exc), gr.skip(), gr.skip()
            values = [value for _, value in choices]
            note = query_columns.neighbour_note(infos[strategy_name]) if strategy_name in infos else ""
            return (gr.update(choices=choices, value=current if current in values else ""),
                    gr.update(info=note), gr.update(info=note))

        def ask(question_text, strategy_name, config_id, document_ids, k, prev, nxt, window_value, lam, use_hybrid,
                collection_names, language_codes, model_name, rerank_kind, rerank_depth, rerank_model, rerank_url,
                base_url, chat_model, api_key):
            # Refusals and failures are one sentence in the answer area, not "Error" pills over the page.
            def refused(sentence: str):
                return (gr.skip(), message_html(sentence, "error"), *[gr.skip()] * 7)

            if not (question_text or "").strip():
                yield refused("Type a question first.")
                return
            if not strategy_name:
                yield refused("Choose a strategy (none is loaded: see the Health tab).")
                return
            try:
                request = answer_html.answer_request(
                    question_text, strategy_name,
                    **form_options(document_ids, k, prev, nxt, window_value, lam, use_hybrid, collection_names,
                                   language_codes, model_name, rerank_kind, rerank_depth, rerank_model, rerank_url),
                    answer_model=experiment_config.endpoint(base_url, chat_model, api_key),
                    config_id=config_id or "",
                )
            except ValueError as exc:
                yield refused(str(exc))
                return
            stream = answer_html.AnswerStream()
            locked = gr.update(interactive=False)
            yield "", answer_html.answer_html(stream), "", "", "", "", "", locked, locked
            try:
                for event in gateway.answer(request):
                    stream.add(event)
                    if event.WhichOneof("event") == "context":
                        context = stream.context
                        empty = retrieval_html.NO_CHUNKS
                        if not context.retrieved_chunks and not gateway.list_indexed_sets(
                                strategy_name, embedding_model=model_name or ""):
                            empty = retrieval_html.nothing_indexed(
                                strategy_name, model_name or gateway.settings.embedding_model)
                        yield (
                            gr.skip(), answer_html.answer_html(stream), context.query_id, gr.skip(),
                            retrieval_html.context_summary_html(context, strategy_name, model_name),
                            retrieval_html.flat_list_html(context, empty), retrieval_html.expansion_tree_html(context),
                            gr.skip(), gr.skip(),
                        )
                    else:
                        yield (gr.skip(), answer_html.answer_html(stream), *[gr.skip()] * 7)
                if stream.result is None:
                    raise ClientError("The evaluator ended the answer without its result; see its log.")
            except ClientError as exc:
                # Keep what was written, marked as cut short, and say why.
                yield (gr.skip(), answer_html.answer_html(stream, error=told_sentence(exc)), *[gr.skip()] * 5,
                       *[gr.update(interactive=False)] * 2)
                return
            unlocked = gr.update(interactive=True)
            yield (gr.skip(), answer_html.answer_html(stream), stream.query_id, *[gr.skip()] * 4, unlocked, unlocked)

        def rate(thumbs: bool):
            @said_in_place(outputs=1)
            def submit(current_query_id: str, text: str):
                if not current_query_id:
                    raise user_error("Ask a question first: feedback is about one answer.")
                with told_as_sentence():
                    recorded = gateway.submit_feedback(current_query_id, thumbs, text or "")
                    tally = gateway.summarize_feedback()
                return answer_html.feedback_html(recorded, tally)

            return submit

        query_side_by_side.wire(gateway, query_side_by_side.Parts(
            page=page, question=question, question_set=question_set, picked=picked,
            configurations=column_configurations, embedding=embedding, button=side_by_side_button, columns=columns,
            timer=sample_timer, form=[documents, top_k, neighbor_prev, neighbor_next, window, recency, hybrid,
                                      collections, languages, embedding, *rerank, answer_base_url, answer_model,
                                      answer_key]))

        option_outputs = [strategy, documents, collections, languages, embedding, status]
        option_inputs = [strategy, documents, collections, languages, embedding]
        page.load(options, inputs=option_inputs, outputs=option_outputs)
        page.load(lambda: retrieval_limit_updates(gateway),
                  outputs=[top_k, neighbor_prev, neighbor_next, window, recency], show_progress="hidden")
        refresh_button.click(options, inputs=option_inputs, outputs=option_outputs)
        configuration_inputs = [strategy, configuration, embedding]
        configuration_outputs = [configuration, neighbor_prev, neighbor_next]
        strategy.change(configurations, inputs=configuration_inputs, outputs=configuration_outputs)
        embedding.change(configurations, inputs=configuration_inputs, outputs=configuration_outputs)
        configuration.focus(configurations, inputs=configuration_inputs, outputs=configuration_outputs,
                            show_progress="hidden")

        def current_documents(selection: list[str] | None):
            with told_as_sentence():
                return document_dropdown_update(gateway, selection or [])

        # Documents uploaded on the other tab since this page loaded show up on opening the list.
        documents.focus(current_documents, inputs=documents, outputs=documents, show_progress="hidden")
        ask_inputs = [
            question, strategy, configuration, documents, top_k, neighbor_prev, neighbor_next, window, recency, hybrid,
            collections, languages, embedding, *rerank, answer_base_url, answer_model, answer_key,
        ]
        ask_outputs = [feedback, answer, query_id, status, summary, flat, tree, thumbs_up, thumbs_down]
        ask_button.click(ask, inputs=ask_inputs, outputs=ask_outputs)
        question.submit(ask, inputs=ask_inputs, outputs=ask_outputs)
        thumbs_up.click(rate(True), inputs=[query_id, comment], outputs=feedback)
        thumbs_down.click(rate(False), inputs=[query_id, comment], outputs=feedback)
    return page
