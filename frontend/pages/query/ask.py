"""The Query page's Ask part: one question of one strategy, answered as it is written, with
both shapes of its context and thumbs up/down below; and what keeps the form's lists
current (strategies, index sets, documents, filters, embedding models).

One call does it all: EvaluatorService.Answer retrieves (its first event is the context:
`retrieved_chunks` and `expansion_tree`), then streams the answer. `Ask.ask` is a
generator, so the page redraws after every event. Thumbs go to SubmitFeedback with the
answer's query_id.
"""

from __future__ import annotations

from dataclasses import dataclass

import gradio as gr

from chunklab.client import ChunkLab, ClientError
from chunklab_app import recommended
from frontend.errors import said_as_info, said_in_place, told_as_sentence, told_html, told_sentence, user_error
from frontend.forms import experiment_config
from frontend.forms.pickers import document_dropdown_update
from frontend.pages.query import answer_html, query_columns
from frontend.pages.query.query_form import (
    ACTIVE_SETS,
    MODEL_AT,
    configuration_choices,
    default_strategy,
    filter_choices,
    form_options,
)
from frontend.views import retrieval_html
from frontend.views.formatting import message_html


@dataclass(frozen=True)
class AnswerArea:
    """Where an answer goes: the answer, the thumbs and their comment, the feedback line,
    the context's summary and its two shapes."""

    answer: gr.HTML
    thumbs_up: gr.Button
    thumbs_down: gr.Button
    comment: gr.Textbox
    feedback: gr.HTML
    summary: gr.HTML
    flat: gr.HTML
    tree: gr.HTML


def answer_section() -> AnswerArea:
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
    return AnswerArea(answer, thumbs_up, thumbs_down, comment, feedback, summary, flat, tree)


class Ask:
    """The handlers of the Ask part and of the form's lists, for one gateway."""

    def __init__(self, gateway: ChunkLab):
        self.gateway = gateway

    def options(self, current_strategy, current_documents, current_collections, current_languages, current_model):
        gateway = self.gateway
        try:
            catalog = gateway.strategy_catalog()
            names = [info.name for info in catalog.strategies]
            indexed = (
                set()
                if current_strategy in names
                else {
                    name
                    for name in recommended.STRATEGIES
                    if name in names and gateway.list_indexed_sets(name, embedding_model=current_model or "")
                }
            )
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
            strategy_update,
            document_dropdown_update(gateway, current_documents or [], listed),
            gr.update(choices=known_collections, value=current_collections or []),
            gr.update(choices=known_languages, value=current_languages or []),
            model_update,
            message,
        )

    def configurations(self, strategy_name, current, model_name):
        """The strategy's index sets, keeping the chosen one while it is there, and what
        the neighbour inputs do for it."""
        if not strategy_name:
            return gr.update(choices=[(ACTIVE_SETS, "")], value=""), gr.update(), gr.update()
        try:
            sets = self.gateway.list_indexed_sets(strategy_name, embedding_model=model_name or "")
            choices = configuration_choices(sets)
            infos = {info.name: info for info in self.gateway.list_strategies()}
        except ClientError as exc:  # the dropdown keeps its choice and says why under it
            return said_as_info(exc), gr.skip(), gr.skip()
        values = [value for _, value in choices]
        note = query_columns.neighbour_note(infos[strategy_name]) if strategy_name in infos else ""
        return (
            gr.update(choices=choices, value=current if current in values else ""),
            gr.update(info=note),
            gr.update(info=note),
        )

    def current_documents(self, selection: list[str] | None):
        with told_as_sentence():
            return document_dropdown_update(self.gateway, selection or [])

    def ask(self, question_text, strategy_name, config_id, document_ids, *values):
        """values: QueryForm.options' after the documents, then the answer model's base URL, model and key."""
        options, (base_url, chat_model, api_key) = values[:-3], values[-3:]
        model_name = options[MODEL_AT - 1]

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
                question_text,
                strategy_name,
                **form_options(document_ids, *options),
                answer_model=experiment_config.endpoint(base_url, chat_model, api_key),
                config_id=config_id or "",
            )
        except ValueError as exc:
            yield refused(str(exc))
            return
        yield from self._answered(request, strategy_name, model_name)

    def _answered(self, request, strategy_name: str, model_name: str | None):
        """The answer as it streams, the context once it comes, then the thumbs unlocked."""
        stream = answer_html.AnswerStream()
        locked = gr.update(interactive=False)
        yield "", answer_html.answer_html(stream), "", "", "", "", "", locked, locked
        try:
            for event in self.gateway.answer(request):
                stream.add(event)
                if event.WhichOneof("event") == "context":
                    yield (
                        gr.skip(),
                        answer_html.answer_html(stream),
                        stream.context.query_id,
                        gr.skip(),
                        *self._context_views(stream.context, strategy_name, model_name),
                        gr.skip(),
                        gr.skip(),
                    )
                else:
                    yield (gr.skip(), answer_html.answer_html(stream), *[gr.skip()] * 7)
            if stream.result is None:
                raise ClientError("The evaluator ended the answer without its result; see its log.")
        except ClientError as exc:
            # Keep what was written, marked as cut short, and say why.
            yield (
                gr.skip(),
                answer_html.answer_html(stream, error=told_sentence(exc)),
                *[gr.skip()] * 5,
                *[gr.update(interactive=False)] * 2,
            )
            return
        unlocked = gr.update(interactive=True)
        yield (gr.skip(), answer_html.answer_html(stream), stream.query_id, *[gr.skip()] * 4, unlocked, unlocked)

    def _context_views(self, context, strategy_name: str, model_name: str | None) -> tuple[str, str, str]:
        """The context's summary, its flat list and its expansion tree."""
        empty = retrieval_html.NO_CHUNKS
        if not context.retrieved_chunks and not self.gateway.list_indexed_sets(
            strategy_name, embedding_model=model_name or ""
        ):
            empty = retrieval_html.nothing_indexed(strategy_name, model_name or self.gateway.settings.embedding_model)
        return (
            retrieval_html.context_summary_html(context, strategy_name, model_name),
            retrieval_html.flat_list_html(context, empty),
            retrieval_html.expansion_tree_html(context),
        )

    def rate(self, thumbs: bool):
        @said_in_place(outputs=1)
        def submit(current_query_id: str, text: str):
            if not current_query_id:
                raise user_error("Ask a question first: feedback is about one answer.")
            with told_as_sentence():
                recorded = self.gateway.submit_feedback(current_query_id, thumbs, text or "")
                tally = self.gateway.summarize_feedback()
            return answer_html.feedback_html(recorded, tally)

        return submit
