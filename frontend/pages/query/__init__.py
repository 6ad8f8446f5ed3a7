"""Query: ask one question of several configurations side by side, and of one
strategy for an answer read as it is written, with both shapes of its context.

Side by side (side_by_side.py), each picked configuration (a strategy and an index set)
is a column (query_columns.py), all searched with the same retrieval options; a question
picked from a question set has its reference excerpts marked in every column, with that
column's recall and IoU for it. The Ask part (ask.py) streams one answer
(EvaluatorService.Answer) below them. The form is query_form.py; this module lays the
parts out and wires them.
"""

from __future__ import annotations

import gradio as gr

from chunklab.client import ChunkLab
from frontend.forms.retrieval import retrieval_limit_updates
from frontend.pages.query import side_by_side
from frontend.pages.query.ask import AnswerArea, Ask, answer_section
from frontend.pages.query.query_form import QueryForm, form_section


def build(gateway: ChunkLab) -> gr.Blocks:
    with gr.Blocks() as page:
        query_id = gr.State("")
        form = form_section()
        configurations, button, columns, timer = side_by_side.section()
        answer = answer_section()
        side_by_side.wire(
            gateway,
            side_by_side.Parts(
                page=page,
                question=form.question,
                question_set=form.question_set,
                picked=form.picked,
                configurations=configurations,
                embedding=form.embedding,
                button=button,
                columns=columns,
                timer=timer,
                form=[*form.options, *form.answer_model],
            ),
        )
        handlers = Ask(gateway)
        _wire_form(gateway, handlers, page, form)
        _wire_ask(handlers, form, answer, query_id)
    return page


def _wire_form(gateway: ChunkLab, handlers: Ask, page: gr.Blocks, form: QueryForm) -> None:
    """The form's lists filled on load and kept current; its bounds from the retriever."""
    option_outputs = [form.strategy, form.documents, form.collections, form.languages, form.embedding, form.status]
    option_inputs = [form.strategy, form.documents, form.collections, form.languages, form.embedding]
    page.load(handlers.options, inputs=option_inputs, outputs=option_outputs)
    page.load(lambda: retrieval_limit_updates(gateway), outputs=form.limited, show_progress="hidden")
    form.refresh_button.click(handlers.options, inputs=option_inputs, outputs=option_outputs)
    configuration_inputs = [form.strategy, form.configuration, form.embedding]
    configuration_outputs = [form.configuration, form.retrieval["neighbor_prev"], form.retrieval["neighbor_next"]]
    form.strategy.change(handlers.configurations, inputs=configuration_inputs, outputs=configuration_outputs)
    form.embedding.change(handlers.configurations, inputs=configuration_inputs, outputs=configuration_outputs)
    form.configuration.focus(
        handlers.configurations, inputs=configuration_inputs, outputs=configuration_outputs, show_progress="hidden"
    )
    # Documents uploaded on the other tab since this page loaded show up on opening the list.
    form.documents.focus(
        handlers.current_documents, inputs=form.documents, outputs=form.documents, show_progress="hidden"
    )


def _wire_ask(handlers: Ask, form: QueryForm, answer: AnswerArea, query_id: gr.State) -> None:
    """Ask (the button or Enter) and the thumbs."""
    ask_inputs = [form.question, form.strategy, form.configuration, *form.options, *form.answer_model]
    ask_outputs = [
        answer.feedback,
        answer.answer,
        query_id,
        form.status,
        answer.summary,
        answer.flat,
        answer.tree,
        answer.thumbs_up,
        answer.thumbs_down,
    ]
    form.ask_button.click(handlers.ask, inputs=ask_inputs, outputs=ask_outputs)
    form.question.submit(handlers.ask, inputs=ask_inputs, outputs=ask_outputs)
    answer.thumbs_up.click(handlers.rate(True), inputs=[query_id, answer.comment], outputs=answer.feedback)
    answer.thumbs_down.click(handlers.rate(False), inputs=[query_id, answer.comment], outputs=answer.feedback)
