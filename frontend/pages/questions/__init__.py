"""Question sets (issue 16, ADR 0059): generate a set from documents through an
OpenAI-compatible chat endpoint (dry run, live progress, cancel, resume),
import a file after validating it (strict or lenient), and review a set
question by question with its excerpts marked in the document, editing,
removing and adding questions before an experiment uses it.

The handlers are in frontend/question_sets.py; this module lays out the page
and wires them.
"""

from __future__ import annotations

import uuid

import gradio as gr

from chunklab.client import ChunkLab
from chunklab.v1 import evaluator_pb2
from frontend.errors import said_in_place, told_as_sentence, user_error
from frontend.forms.pickers import document_dropdown_update, question_set_update
from frontend.pages.questions import question_sets as handlers
from frontend.pages.questions.question_sets import QUESTION_TYPES
from frontend.views.formatting import message_html


# -- the page -------------------------------------------------------------------

def build(gateway: ChunkLab) -> gr.Blocks:
    with gr.Blocks() as page:
        generation_id = gr.State("")
        run_token = gr.State("")
        held_set = gr.State(b"")

        gr.Markdown("### Generate a question set from documents")
        with gr.Row():
            documents = gr.Dropdown(label="Documents", choices=[], multiselect=True, scale=3, elem_id="gen-documents")
            count = gr.Number(label="Number of questions", value=10, precision=0, minimum=1, maximum=500,
                              elem_id="gen-count")
            seed = gr.Number(label="Seed", value=0, precision=0, elem_id="gen-seed",
                             info="the same seed asks about the same passages")
            name = gr.Textbox(label="Name (optional)", placeholder="generated from the first document",
                              elem_id="gen-name")
        with gr.Accordion("Chat endpoint (empty: the stack's configured one)", open=False):
            with gr.Row():
                base_url = gr.Textbox(label="Base URL", elem_id="gen-base-url",
                                      placeholder=gateway.settings.llm_base_url or "CHUNKLAB_LLM_BASE_URL")
                model = gr.Textbox(label="Model", elem_id="gen-model", placeholder=gateway.settings.llm_model)
                api_key = gr.Textbox(label="API key", type="password", elem_id="gen-api-key")
        generator = gr.Markdown(elem_id="gen-generator")
        with gr.Row():
            dry = gr.Button("Dry run", elem_id="gen-dry-run")
            start = gr.Button("Generate", variant="primary", elem_id="gen-start")
            cancel = gr.Button("Cancel", variant="stop", interactive=False, elem_id="gen-cancel")
            resume_id = gr.Textbox(label="Interrupted generation", placeholder="its id", scale=2,
                                   elem_id="gen-resume-id")
            resume = gr.Button("Resume", elem_id="gen-resume")
        status = gr.HTML(elem_id="gen-status")
        cancel_status = gr.HTML(elem_id="gen-cancel-status")

        gr.Markdown("### Import a question set (JSONL or CSV), validated first")
        with gr.Row():
            file = gr.File(label="Questions file", file_types=QUESTION_TYPES, elem_id="qimport-file")
            with gr.Column():
                import_name = gr.Textbox(label="Name (optional)", placeholder="the file name", elem_id="qimport-name")
                mapping = gr.Textbox(label="Corpus ids to document ids (optional)", lines=2, elem_id="qimport-mapping",
                                     placeholder="corpus_id=document_id, one a line; unmapped ids match document names")
                lenient = gr.Checkbox(label="Lenient: import the located questions, leave out the others",
                                      value=True, elem_id="qimport-lenient")
                with gr.Row():
                    validate = gr.Button("Validate", elem_id="qimport-validate")
                    do_import = gr.Button("Import", variant="primary", elem_id="qimport-import")
        import_status = gr.HTML(elem_id="qimport-status")
        report = gr.HTML(elem_id="qimport-report")

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
            excerpt_box = gr.Textbox(label="Excerpts (the document's exact words; several separated by a --- line)",
                                     lines=3, elem_id="review-excerpts")
            with gr.Row():
                document = gr.Dropdown(label="Document of a new excerpt", choices=[], scale=3,
                                       elem_id="review-document")
                save = gr.Button("Save changes", elem_id="review-save")
                remove = gr.Button("Remove question", variant="stop", elem_id="review-remove")
                add = gr.Button("Add as a new question", elem_id="review-add")
        review_status = gr.HTML(elem_id="review-status")

        # -- wiring ---------------------------------------------------------------
        def load(current: list[str] | None, current_set: str | None):
            with told_as_sentence():
                listed = gateway.list_documents()
            return (document_dropdown_update(gateway, current or [], listed),
                    document_dropdown_update(gateway, None, listed),
                    question_set_update(gateway, current_set))

        page.load(load, inputs=[documents, chosen], outputs=[documents, document, chosen], show_progress="hidden")

        def generator_line(url: str, name: str) -> str:
            return f"Generator: {handlers.configured_generator(gateway, url, name)}"

        for event in (base_url.change, model.change, page.load):
            event(generator_line, inputs=[base_url, model], outputs=generator, show_progress="hidden")
        # Documents uploaded since this page loaded show up on opening either list.
        def current_documents(current):
            with told_as_sentence():
                return document_dropdown_update(gateway, current)

        for box in (documents, document):
            box.focus(current_documents, inputs=box, outputs=box, show_progress="hidden")

        form = [documents, count, seed, name, base_url, model, api_key]

        @said_in_place(outputs=1)
        def estimate(*values):
            request = handlers.generation_request(*values, dry_run=True)
            return handlers.dry_run(gateway, request, handlers.configured_generator(gateway, values[4], values[5]))

        dry.click(estimate, inputs=form, outputs=status)

        @said_in_place(outputs=5)
        def run(*values, resume_from: str = ""):
            request = handlers.generation_request(*values[:7], resume_id=resume_from)
            if not resume_from:
                handlers.require_endpoint(gateway, values[4])
            label = handlers.configured_generator(gateway, values[4], values[5])
            token = uuid.uuid4().hex
            for html, gen_id in handlers.follow_generation(gateway, request, label, token):
                yield html, gen_id, gr.update(interactive=True), gen_id, token
            yield gr.skip(), gr.skip(), gr.update(interactive=False), gr.skip(), ""

        @said_in_place(outputs=5)
        def run_resumed(*values):
            if not (values[7] or "").strip():
                raise user_error("Give the id of the interrupted generation to resume (it shows above once one stops).")
            yield from run(*values[:7], resume_from=values[7])

        def finished(gen_id: str, current: str | None):
            """Cancel off again; a stored set becomes the one under review, and only a
            generation that can go on stays offered to Resume."""
            if not gen_id:
                return gr.update(interactive=False), question_set_update(gateway, current), gr.skip(), ""
            with told_as_sentence():
                generation = gateway.get_generation(gen_id)
            ended = generation.state in (evaluator_pb2.GENERATION_STATE_SUCCEEDED,
                                         evaluator_pb2.GENERATION_STATE_FAILED)
            stored = generation.question_set_id or current
            return gr.update(interactive=False), question_set_update(gateway, stored), "" if ended else gen_id, ""

        outputs = [status, generation_id, cancel, resume_id, run_token]
        started = start.click(run, inputs=form, outputs=outputs, concurrency_limit=None)
        resumed = resume.click(run_resumed, inputs=[*form, resume_id], outputs=outputs, concurrency_limit=None)
        for event in (started, resumed):
            event.then(finished, inputs=[generation_id, chosen], outputs=[cancel, chosen, resume_id, cancel_status],
                       show_progress="hidden")

        @said_in_place(outputs=1)
        def do_cancel(token: str):
            if not token:
                raise user_error("Nothing is generating: start a generation first.")
            handlers.cancel(token)
            return message_html("Cancelling: the generation stops after the passage in flight; Resume continues it.")

        cancel.click(do_cancel, inputs=run_token, outputs=cancel_status)

        import_form = [file, import_name, mapping, lenient]
        validate.click(said_in_place(outputs=1)(lambda *values: handlers.validate_file(gateway, *values)),
                       inputs=import_form, outputs=report)

        @said_in_place(outputs=3)
        def imported(*values):
            message, report_html, set_id = handlers.import_file(gateway, *values)
            return message, report_html, question_set_update(gateway, set_id)

        do_import.click(imported, inputs=import_form, outputs=[import_status, report, chosen])

        review = [held_set, question, view, text, answer, excerpt_box]
        chosen.focus(lambda current: question_set_update(gateway, current), inputs=chosen, outputs=chosen,
                     show_progress="hidden")
        chosen.change(lambda set_id: handlers.review_outputs(gateway, handlers.open_set(gateway, set_id), None),
                      inputs=chosen, outputs=review)
        question.input(lambda data, qid: handlers.review_outputs(gateway, handlers.held(data), qid),
                       inputs=[held_set, question], outputs=review)
        for button, by in ((prev, -1), (nxt, 1)):
            button.click(lambda data, qid, by=by: handlers.moved(gateway, data, qid, by),
                         inputs=[held_set, question], outputs=review)
        in_review_status = said_in_place(outputs=len(review) + 1, at=len(review))
        save.click(in_review_status(lambda *values: handlers.save(gateway, *values)),
                   inputs=[held_set, question, text, answer, excerpt_box, document], outputs=[*review, review_status])
        remove.click(in_review_status(lambda *values: handlers.remove(gateway, *values)), inputs=[held_set, question],
                     outputs=[*review, review_status])
        add.click(in_review_status(lambda *values: handlers.add(gateway, *values)),
                  inputs=[held_set, text, answer, excerpt_box, document], outputs=[*review, review_status])
    return page
