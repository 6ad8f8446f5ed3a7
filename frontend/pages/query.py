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

from chunklab.metric_format import MetricFormat
from frontend import (
    answer_html, experiment_config, experiments_html, first_minute, knobs, query_columns, rerank_form, retrieval_html,
)
from frontend.formatting import message_html
from frontend.pages.common import (
    document_dropdown_update, hybrid_checkbox, rerank_inputs, retrieval_limit_updates, said_in_place,
    told_as_sentence, told_html, told_sentence, user_error,
)


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


def form_options(document_ids, k, prev, nxt, window_value, lam, use_hybrid, collection_names, language_codes,
                 model_name, rerank_kind=None, rerank_depth=None, rerank_model=None, rerank_url=None) -> dict:
    """The form's retrieval options as answer_html.retrieval_options takes them; ValueError
    names an input that holds no whole number, or reranking boxes the retriever would refuse."""
    top_k = experiment_config.whole(k, 5)
    return {
        "top_k": top_k,
        "rerank": rerank_form.rerank_options(rerank_kind, rerank_depth, rerank_model, rerank_url, top_k),
        "neighbor_prev": experiment_config.whole(prev, 0),
        "neighbor_next": experiment_config.whole(nxt, 0),
        "window": experiment_config.optional_whole(window_value, "window"),
        "hybrid": bool(use_hybrid), "recency_lambda": float(lam or 0.0),
        "document_ids": document_ids, "collections": collection_names, "languages": language_codes,
        "embedding_model": model_name or "",
    }


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
            with told_as_sentence():
                listed = gateway.list_documents()
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
            with told_as_sentence():
                choices = configuration_choices(gateway.list_indexed_sets(strategy_name, embedding_model=model_name or ""))
                infos = {info.name: info for info in gateway.list_strategies()}
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
                            empty = retrieval_html.nothing_indexed(strategy_name)
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

        def question_set_update(sets, chosen):
            choices = [(experiments_html.question_set_label(s), s.question_set_id) for s in sets]
            return gr.update(choices=choices, value=chosen)

        def questions_of(set_id, question_id=None):
            if not set_id:
                return gr.update(choices=[], value=None)
            with told_as_sentence():
                choices = query_columns.question_choices(gateway.get_question_set(set_id))
            return gr.update(choices=choices, value=question_id)

        def question_text(set_id, question_id):
            """The picked question, written into the question box."""
            if not (set_id and question_id):
                return gr.skip()
            with told_as_sentence():
                found = [q for q in gateway.get_question_set(set_id).questions if q.question_id == question_id]
            return found[0].text if found else gr.skip()

        def column_choices(model_name):
            with told_as_sentence():
                sets = gateway.list_indexed_sets(embedding_model=model_name or "")
            return query_columns.configuration_choices(sets, model_name or gateway.settings.embedding_model)

        def configuration_update(current, model_name):
            """Every configuration indexed with the model, the picks that still exist kept, else
            the ones the page opens on (query_columns.default_configurations)."""
            choices = column_choices(model_name)
            values = {value for _, value in choices}
            kept = [value for value in current or [] if value in values]
            return gr.update(choices=choices, value=kept or query_columns.default_configurations(choices))

        def fresh_configurations(model_name):
            """The choices only: the picks stay as the user is making them."""
            return gr.update(choices=column_choices(model_name))

        def compared(text, question, note, picks, options, answer_model):
            """The columns' HTML: searched, then again each time one more column is answered."""
            with told_as_sentence():
                strategies = {info.name: info for info in gateway.list_strategies()}
                formats = MetricFormat(gateway.list_metrics() if question is not None else [])
            columns = query_columns.search_all(gateway, text, options, picks)
            yield query_columns.columns_html(columns, question, formats, note, options, strategies)
            for answered in query_columns.answer_all(gateway, text, options, columns, answer_model):
                yield query_columns.columns_html(answered, question, formats, note, options, strategies)

        def checked_options(form_values, answer_values):
            """The shared retrieval options and the answer model, or the input's refusal in place."""
            try:
                return (answer_html.retrieval_options("", **form_options(*form_values)),
                        experiment_config.endpoint(*answer_values))
            except ValueError as exc:
                raise user_error(str(exc)) from None

        @said_in_place(outputs=1)
        def side_by_side(question_text_value, picked_values, set_id, question_id, *form):
            if not (question_text_value or "").strip():
                raise user_error("Type a question first, or pick one from a question set.")
            try:
                offered = column_choices(form[9])
                picks = query_columns.chosen(picked_values or [], offered)
                query_columns.check_count(picks, offered)
            except ValueError as exc:
                raise user_error(str(exc)) from None
            options, answer_model = checked_options(form[:14], form[14:])
            with told_as_sentence():
                chosen_set = gateway.get_question_set(set_id) if set_id and question_id else None
            question, note = query_columns.picked_question(chosen_set, question_id or "", question_text_value)
            yield from compared(question_text_value.strip(), question, note, picks, options, answer_model)

        def opening(waiting: bool):
            """The page's first minute: the sample's first question asked of the configurations
            the page opens on, columns filled, before anyone types (frontend.first_minute).
            On loading the page (`waiting` False) the lists are filled whatever happens, and
            without the sample the columns say why; on the timer's tick (`waiting`) nothing
            changes until the sample is there. The timer stops once the page is filled or
            the user has typed a question."""
            @said_in_place(outputs=6, at=4)
            def handler(set_id, question_value, picks, *form):
                stop = gr.update(active=False)
                typed = bool((question_value or "").strip())
                if waiting and typed:
                    yield (*[gr.skip()] * 5, stop)
                    return
                with told_as_sentence():
                    sets = gateway.list_question_sets()
                sample_id = first_minute.sample_set_id(sets)
                if waiting and sample_id is None:
                    yield (*[gr.skip()] * 6,)
                    return
                offered = column_choices(form[9])
                with told_as_sentence():
                    view = None if typed or sample_id is None else first_minute.first_view(
                        gateway.get_question_set(sample_id), offered)
                if view is None:
                    if waiting:
                        yield (*[gr.skip()] * 6,)
                        return
                    ids = [s.question_set_id for s in sets]
                    chosen = set_id if set_id in ids else (sample_id or (ids[0] if ids else None))
                    kept = [value for value in picks or [] if value in {v for _, v in offered}]
                    yield (question_set_update(sets, chosen), questions_of(chosen), gr.skip(),
                           gr.update(choices=offered, value=kept or query_columns.default_configurations(offered)),
                           gr.skip() if typed else message_html(first_minute.WAITING, "info"),
                           gr.update(active=not typed))
                    return
                options, answer_model = checked_options(form[:14], form[14:])
                picks = query_columns.chosen(view.configurations, offered)
                filled = compared(view.question.text, view.question, "", picks, options, answer_model)
                yield (question_set_update(sets, view.question_set_id),
                       questions_of(view.question_set_id, view.question.question_id), view.question.text,
                       gr.update(choices=offered, value=view.configurations), next(filled), stop)
                for html in filled:
                    yield (*[gr.skip()] * 4, html, gr.skip())

            return handler

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

        question_set.input(questions_of, inputs=question_set, outputs=picked, show_progress="hidden")
        picked.input(question_text, inputs=[question_set, picked], outputs=question, show_progress="hidden")
        column_inputs = [column_configurations, embedding]
        # Strategies processed on the Documents tab since the page loaded show up on opening the list.
        column_configurations.focus(fresh_configurations, inputs=embedding, outputs=column_configurations,
                                    show_progress="hidden")
        embedding.change(configuration_update, inputs=column_inputs, outputs=column_configurations)
        form_inputs = [documents, top_k, neighbor_prev, neighbor_next, window, recency, hybrid, collections, languages,
                       embedding, *rerank, answer_base_url, answer_model, answer_key]
        side_by_side_button.click(side_by_side, inputs=[question, column_configurations, question_set, picked,
                                                        *form_inputs], outputs=columns)
        opening_inputs = [question_set, question, column_configurations, *form_inputs]
        opening_outputs = [question_set, picked, question, column_configurations, columns, sample_timer]
        page.load(opening(False), inputs=opening_inputs, outputs=opening_outputs, show_progress="hidden")
        sample_timer.tick(opening(True), inputs=opening_inputs, outputs=opening_outputs, show_progress="hidden")

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
