"""Query side by side, wired: the question asked of several configurations at once, each
column searched then answered, and the page's first minute (frontend/first_minute.py): the
sample's first question filled in on load, or as soon as the background load is done.

The layout is the Query page's (frontend/pages/query.py); this module holds the handlers of
its side-by-side part and wires them to the page's components (`Parts`).
"""

from __future__ import annotations

from dataclasses import dataclass

import gradio as gr

from chunklab.client import ChunkLab
from chunklab.metric_format import MetricFormat
from frontend import answer_html, experiment_config, experiments_html, first_minute, query_columns, rerank_form
from frontend.formatting import message_html
from frontend.pages.common import said_in_place, told_as_sentence, user_error


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


@dataclass(frozen=True)
class Parts:
    """The Query page's components the side-by-side part reads and writes. `form`: the
    inputs of form_options (documents … embedding model, the four reranking boxes), then the
    answer model's base URL, model and key."""

    page: gr.Blocks
    question: gr.Textbox
    question_set: gr.Dropdown
    picked: gr.Dropdown
    configurations: gr.Dropdown
    embedding: gr.Dropdown
    button: gr.Button
    columns: gr.HTML
    timer: gr.Timer
    form: list


def wire(gateway: ChunkLab, parts: Parts) -> None:
    """The side-by-side handlers, wired to the page's parts."""

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

    parts.question_set.input(questions_of, inputs=parts.question_set, outputs=parts.picked,
                             show_progress="hidden")
    parts.picked.input(question_text, inputs=[parts.question_set, parts.picked], outputs=parts.question,
                       show_progress="hidden")
    # Strategies processed on the Documents tab since the page loaded show up on opening the list.
    parts.configurations.focus(fresh_configurations, inputs=parts.embedding, outputs=parts.configurations,
                               show_progress="hidden")
    parts.embedding.change(configuration_update, inputs=[parts.configurations, parts.embedding],
                           outputs=parts.configurations)
    parts.button.click(side_by_side, inputs=[parts.question, parts.configurations, parts.question_set, parts.picked,
                                             *parts.form], outputs=parts.columns)
    opening_inputs = [parts.question_set, parts.question, parts.configurations, *parts.form]
    opening_outputs = [parts.question_set, parts.picked, parts.question, parts.configurations, parts.columns,
                       parts.timer]
    parts.page.load(opening(False), inputs=opening_inputs, outputs=opening_outputs, show_progress="hidden")
    parts.timer.tick(opening(True), inputs=opening_inputs, outputs=opening_outputs, show_progress="hidden")
