"""Question sets (issue 16, ADR 0059): write a set by hand, selecting each question's passage
in a document's text (ADR 0092, no LLM needed; open while no set exists), generate a set from
documents through an OpenAI-compatible chat endpoint (dry run, live progress, cancel, resume),
import a file after validating it (strict or lenient), and review a set
question by question with its excerpts marked in the document, editing,
removing and adding questions before an experiment uses it.

The handlers are in question_sets.py (views in questions_html.py); the hand-written set is
hand_section.py (its rules by_hand.py), the generation section generation.py, the review review.py; this module lays out the page,
the import section between them, and wires what they share.
"""

from __future__ import annotations

import gradio as gr

from chunklab.client import ChunkLab
from frontend.errors import said_in_place, told_as_sentence
from frontend.forms import limits
from frontend.forms.pickers import document_dropdown_update, question_set_update
from frontend.pages.questions import generation, hand_section, review
from frontend.pages.questions import question_sets as handlers
from frontend.pages.questions.generation import GenerationForm
from frontend.pages.questions.question_sets import QUESTION_TYPES
from frontend.pages.questions.review import Review


def build(gateway: ChunkLab, opened=None, secret: str | None = None) -> gr.Blocks:
    """`opened`: the event of the tab being opened (frontend/app.py), when the page reads the
    stack (ADR 0165; without one, on load); `secret`: the key of the draft the browser keeps
    (frontend/browser_secret.py)."""
    with gr.Blocks() as page:
        generation_id = gr.State("")
        run_token = gr.State("")
        held_set = gr.State(b"")
        writing = hand_section.hand_section(secret)
        generating = generation.generation_section(gateway)
        importing = _import_section()
        reviewing = review.review_section()
        _wire_lists(gateway, opened or page.load, generating, reviewing)
        generation.wire(gateway, generating, reviewing.chosen, generation_id, run_token)
        _wire_import(gateway, *importing, reviewing.chosen)
        review.wire(gateway, reviewing, held_set)
        hand_section.wire(gateway, page, writing, reviewing.chosen, opened)
    return page


def _import_section() -> tuple[list, gr.Button, gr.Button, gr.HTML, gr.HTML]:
    """The import form (file, name, mapping, lenient), its two buttons, its status and report."""
    gr.Markdown("### Import a question set (JSONL or CSV), validated first")
    with gr.Row():
        file = gr.File(label="Questions file", file_types=QUESTION_TYPES, elem_id="qimport-file")
        with gr.Column():
            import_name = gr.Textbox(label="Name (optional)", placeholder="the file name", elem_id="qimport-name")
            mapping = gr.Textbox(
                label="Corpus ids to document ids (optional)",
                lines=2,
                elem_id="qimport-mapping",
                placeholder="corpus_id=document_id, one a line; unmapped ids match document names",
            )
            lenient = gr.Checkbox(
                label="Lenient: import the located questions, leave out the others",
                value=True,
                elem_id="qimport-lenient",
            )
            with gr.Row():
                validate = gr.Button("Validate", elem_id="qimport-validate")
                do_import = gr.Button("Import", variant="primary", elem_id="qimport-import")
    import_status = gr.HTML(elem_id="qimport-status")
    report = gr.HTML(elem_id="qimport-report")
    return [file, import_name, mapping, lenient], validate, do_import, import_status, report


def _wire_lists(gateway: ChunkLab, opened, generating: GenerationForm, reviewing: Review) -> None:
    """The document and question-set lists filled when the page is opened and kept current,
    and the line naming the generator the endpoint boxes give."""
    documents, document, chosen = generating.documents, reviewing.document, reviewing.chosen

    def load(current: list[str] | None, current_set: str | None):
        with told_as_sentence():
            listed = gateway.list_documents()
        return (
            document_dropdown_update(gateway, current or [], listed),
            document_dropdown_update(gateway, None, listed),
            question_set_update(gateway, current_set),
        )

    opened(load, inputs=[documents, chosen], outputs=[documents, document, chosen], show_progress="hidden")
    opened(lambda: limits.question_count_update(gateway), outputs=generating.count, show_progress="hidden")
    line = generation.Generation(gateway).generator_line
    for event in (generating.base_url.change, generating.model.change, opened):
        event(
            line, inputs=[generating.base_url, generating.model], outputs=generating.generator, show_progress="hidden"
        )

    # Documents uploaded since this page loaded show up on opening either list.
    def current_documents(current):
        with told_as_sentence():
            return document_dropdown_update(gateway, current)

    for box in (documents, document):
        box.focus(current_documents, inputs=box, outputs=box, show_progress="hidden")


def _wire_import(
    gateway: ChunkLab,
    import_form: list,
    validate: gr.Button,
    do_import: gr.Button,
    import_status: gr.HTML,
    report: gr.HTML,
    chosen: gr.Dropdown,
) -> None:
    validate.click(
        said_in_place(outputs=1)(lambda *values: handlers.validate_file(gateway, *values)),
        inputs=import_form,
        outputs=report,
    )

    @said_in_place(outputs=3)
    def imported(*values):
        message, report_html, set_id = handlers.import_file(gateway, *values)
        return message, report_html, question_set_update(gateway, set_id)

    do_import.click(imported, inputs=import_form, outputs=[import_status, report, chosen])
