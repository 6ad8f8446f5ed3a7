"""The Question sets page's review: a set read question by question with its excerpts marked
in the document, and questions edited, removed or added before an experiment uses it. The
handlers' logic is in question_sets.py; this module lays the section out and wires it."""

from __future__ import annotations

from dataclasses import dataclass

import gradio as gr

from chunklab.client import ChunkLab
from frontend.errors import said_in_place
from frontend.forms.pickers import question_set_update
from frontend.pages.questions import question_sets as handlers


@dataclass(frozen=True)
class Review:
    """The section's components."""

    chosen: gr.Dropdown
    question: gr.Dropdown
    prev: gr.Button
    nxt: gr.Button
    view: gr.HTML
    text: gr.Textbox
    answer: gr.Textbox
    excerpt_box: gr.Textbox
    document: gr.Dropdown
    save: gr.Button
    remove: gr.Button
    add: gr.Button
    status: gr.HTML


def review_section() -> Review:
    gr.Markdown("### Review a question set")
    with gr.Row(equal_height=True):
        chosen = gr.Dropdown(label="Question set", choices=[], scale=3, elem_id="review-set")
        question = gr.Dropdown(label="Question", choices=[], scale=4, elem_id="review-question")
        prev = gr.Button("◀ Previous", scale=0, min_width=100, elem_id="review-prev")
        nxt = gr.Button("Next ▶", scale=0, min_width=100, elem_id="review-next")
    view = gr.HTML(elem_id="review-view")
    with gr.Accordion("Edit, remove or add", open=True):
        text = gr.Textbox(label="Question", elem_id="review-text")
        answer = gr.Textbox(label="Expected answer", elem_id="review-answer")
        excerpt_box = gr.Textbox(
            label="Excerpts (the document's exact words; several separated by a --- line)",
            lines=3,
            elem_id="review-excerpts",
        )
        with gr.Row():
            document = gr.Dropdown(label="Document of a new excerpt", choices=[], scale=3, elem_id="review-document")
            save = gr.Button("Save changes", elem_id="review-save")
            remove = gr.Button("Remove question", variant="stop", elem_id="review-remove")
            add = gr.Button("Add as a new question", elem_id="review-add")
    status = gr.HTML(elem_id="review-status")
    return Review(chosen, question, prev, nxt, view, text, answer, excerpt_box, document, save, remove, add, status)


def wire(gateway: ChunkLab, parts: Review, held_set: gr.State) -> None:
    """Opening a set, moving between its questions, and Save, Remove and Add, each answered
    in the review's status line."""
    review = [held_set, parts.question, parts.view, parts.text, parts.answer, parts.excerpt_box]
    parts.chosen.focus(
        lambda current: question_set_update(gateway, current),
        inputs=parts.chosen,
        outputs=parts.chosen,
        show_progress="hidden",
    )
    parts.chosen.change(
        lambda set_id: handlers.review_outputs(gateway, handlers.open_set(gateway, set_id), None),
        inputs=parts.chosen,
        outputs=review,
    )
    parts.question.input(
        lambda data, qid: handlers.review_outputs(gateway, handlers.held(data), qid),
        inputs=[held_set, parts.question],
        outputs=review,
    )
    for button, by in ((parts.prev, -1), (parts.nxt, 1)):
        button.click(
            lambda data, qid, by=by: handlers.moved(gateway, data, qid, by),
            inputs=[held_set, parts.question],
            outputs=review,
        )
    in_review_status = said_in_place(outputs=len(review) + 1, at=len(review))
    edited = [parts.text, parts.answer, parts.excerpt_box, parts.document]
    parts.save.click(
        in_review_status(lambda *values: handlers.save(gateway, *values)),
        inputs=[held_set, parts.question, *edited],
        outputs=[*review, parts.status],
    )
    parts.remove.click(
        in_review_status(lambda *values: handlers.remove(gateway, *values)),
        inputs=[held_set, parts.question],
        outputs=[*review, parts.status],
    )
    parts.add.click(
        in_review_status(lambda *values: handlers.add(gateway, *values)),
        inputs=[held_set, *edited],
        outputs=[*review, parts.status],
    )
