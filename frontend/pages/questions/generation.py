"""The Question sets page's generation: a set generated from documents through an
OpenAI-compatible chat endpoint, with a dry run, live progress, Cancel and Resume. The
handlers' logic is in question_sets.py; this module lays the section out and wires it."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import gradio as gr

from chunklab.client import ChunkLab
from chunklab.v1 import evaluator_pb2
from frontend.errors import said_in_place, told_as_sentence, user_error
from frontend.forms.pickers import question_set_update
from frontend.pages.questions import question_sets as handlers
from frontend.views.formatting import message_html


@dataclass(frozen=True)
class GenerationForm:
    """The section's components; `form` lists generation_request's inputs in its order."""

    documents: gr.Dropdown
    count: gr.Number
    seed: gr.Number
    name: gr.Textbox
    base_url: gr.Textbox
    model: gr.Textbox
    api_key: gr.Textbox
    generator: gr.Markdown
    dry: gr.Button
    start: gr.Button
    cancel: gr.Button
    resume_id: gr.Textbox
    resume: gr.Button
    status: gr.HTML
    cancel_status: gr.HTML

    @property
    def form(self) -> list:
        return [self.documents, self.count, self.seed, self.name, self.base_url, self.model, self.api_key]


def generation_section(gateway: ChunkLab) -> GenerationForm:
    gr.Markdown("### Generate a question set from documents")
    with gr.Row():
        documents = gr.Dropdown(label="Documents", choices=[], multiselect=True, scale=3, elem_id="gen-documents")
        count = gr.Number(
            label="Number of questions", value=10, precision=0, minimum=1, elem_id="gen-count"
        )  # its maximum: the evaluator's, on load
        seed = gr.Number(
            label="Seed", value=0, precision=0, elem_id="gen-seed", info="the same seed asks about the same passages"
        )
        name = gr.Textbox(label="Name (optional)", placeholder="generated from the first document", elem_id="gen-name")
    with gr.Accordion("Chat endpoint (empty: the stack's configured one)", open=False):
        with gr.Row():
            base_url = gr.Textbox(
                label="Base URL",
                elem_id="gen-base-url",
                placeholder=gateway.settings.llm_base_url or "CHUNKLAB_LLM_BASE_URL",
            )
            model = gr.Textbox(label="Model", elem_id="gen-model", placeholder=gateway.settings.llm_model)
            api_key = gr.Textbox(label="API key", type="password", elem_id="gen-api-key")
    generator = gr.Markdown(elem_id="gen-generator")
    with gr.Row():
        dry = gr.Button("Dry run", elem_id="gen-dry-run")
        start = gr.Button("Generate", variant="primary", elem_id="gen-start")
        cancel = gr.Button("Cancel", variant="stop", interactive=False, elem_id="gen-cancel")
        resume_id = gr.Textbox(label="Interrupted generation", placeholder="its id", scale=2, elem_id="gen-resume-id")
        resume = gr.Button("Resume", elem_id="gen-resume")
    status = gr.HTML(elem_id="gen-status")
    cancel_status = gr.HTML(elem_id="gen-cancel-status")
    return GenerationForm(
        documents,
        count,
        seed,
        name,
        base_url,
        model,
        api_key,
        generator,
        dry,
        start,
        cancel,
        resume_id,
        resume,
        status,
        cancel_status,
    )


class Generation:
    """The section's handlers for one gateway."""

    def __init__(self, gateway: ChunkLab):
        self.gateway = gateway

    def generator_line(self, url: str, name: str) -> str:
        return f"Generator: {handlers.configured_generator(self.gateway, url, name)}"

    @said_in_place(outputs=1)
    def estimate(self, *values):
        request = handlers.generation_request(*values, dry_run=True)
        return handlers.dry_run(
            self.gateway, request, handlers.configured_generator(self.gateway, values[4], values[5])
        )

    @said_in_place(outputs=5)
    def run(self, *values, resume_from: str = ""):
        request = handlers.generation_request(*values[:7], resume_id=resume_from)
        if not resume_from:
            handlers.require_endpoint(self.gateway, values[4])
        label = handlers.configured_generator(self.gateway, values[4], values[5])
        token = uuid.uuid4().hex
        for html, gen_id in handlers.follow_generation(self.gateway, request, label, token):
            yield html, gen_id, gr.update(interactive=True), gen_id, token
        yield gr.skip(), gr.skip(), gr.update(interactive=False), gr.skip(), ""

    @said_in_place(outputs=5)
    def run_resumed(self, *values):
        if not (values[7] or "").strip():
            raise user_error("Give the id of the interrupted generation to resume (it shows above once one stops).")
        yield from self.run(*values[:7], resume_from=values[7])

    def finished(self, gen_id: str, current: str | None):
        """Cancel off again; a stored set becomes the one under review, and only a
        generation that can go on stays offered to Resume."""
        if not gen_id:
            return gr.update(interactive=False), question_set_update(self.gateway, current), gr.skip(), ""
        with told_as_sentence():
            generation = self.gateway.get_generation(gen_id)
        ended = generation.state in (evaluator_pb2.GENERATION_STATE_SUCCEEDED, evaluator_pb2.GENERATION_STATE_FAILED)
        stored = generation.question_set_id or current
        return gr.update(interactive=False), question_set_update(self.gateway, stored), "" if ended else gen_id, ""

    @staticmethod
    @said_in_place(outputs=1)
    def do_cancel(token: str):
        if not token:
            raise user_error("Nothing is generating: start a generation first.")
        handlers.cancel(token)
        return message_html("Cancelling: the generation stops after the passage in flight; Resume continues it.")


def wire(
    gateway: ChunkLab, parts: GenerationForm, chosen: gr.Dropdown, generation_id: gr.State, run_token: gr.State
) -> None:
    """Dry run, Generate and Resume (a stored set then opens in the review), and Cancel."""
    generation = Generation(gateway)
    parts.dry.click(generation.estimate, inputs=parts.form, outputs=parts.status)
    outputs = [parts.status, generation_id, parts.cancel, parts.resume_id, run_token]
    started = parts.start.click(generation.run, inputs=parts.form, outputs=outputs, concurrency_limit=None)
    resumed = parts.resume.click(
        generation.run_resumed, inputs=[*parts.form, parts.resume_id], outputs=outputs, concurrency_limit=None
    )
    for event in (started, resumed):
        event.then(
            generation.finished,
            inputs=[generation_id, chosen],
            outputs=[parts.cancel, chosen, parts.resume_id, parts.cancel_status],
            show_progress="hidden",
        )
    parts.cancel.click(generation.do_cancel, inputs=run_token, outputs=parts.cancel_status)
