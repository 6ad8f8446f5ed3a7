"""Question sets (issue 16, ADR 0059): generate a set from documents through an
OpenAI-compatible chat endpoint (dry run, live progress, cancel, resume),
import a file after validating it (strict or lenient), and review a set
question by question with its excerpts marked in the document, editing,
removing and adding questions before an experiment uses it.

Pure handlers first (each takes the gateway and plain values, returns what
the page shows), the Gradio wiring last in build().
"""

from __future__ import annotations

from collections.abc import Iterator

import gradio as gr

from chunklab import excerpts
from chunklab.client import ChunkLab
from chunklab.v1 import evaluator_pb2
from frontend import experiment_config, questions_html
from frontend.formatting import message_html
from frontend.pages.common import document_dropdown_update, told_as_sentence, user_error
from frontend.pages.experiment_form import QUESTION_TYPES, question_set_update

# Between excerpts in the review's excerpt box.
EXCERPT_SEPARATOR = "\n---\n"
LENIENT, STRICT = evaluator_pb2.EXCERPT_CHECK_LENIENT, evaluator_pb2.EXCERPT_CHECK_STRICT

# Generations this process was asked to cancel: the running handler stops its
# stream after the passage in flight, and the evaluator marks it interrupted.
_cancelling: set[str] = set()


# -- generate -------------------------------------------------------------------

def configured_generator(gateway: ChunkLab, base_url: str, model: str) -> str:
    settings = gateway.settings
    if (base_url or "").strip():
        return questions_html.generator_label(base_url.strip(), (model or "").strip() or settings.llm_model)
    return questions_html.generator_label(settings.llm_base_url, settings.llm_model)


def generation_request(document_ids: list[str] | None, count, seed, name: str, base_url: str, model: str,
                       api_key: str, dry_run: bool = False, resume_id: str = ""
                       ) -> evaluator_pb2.GenerateQuestionSetRequest:
    """The request for the form's values; gr.Error names what is missing."""
    resume_id = (resume_id or "").strip()
    if not resume_id and not document_ids:
        raise user_error("Choose at least one document to generate questions from.")
    try:
        request = evaluator_pb2.GenerateQuestionSetRequest(
            name=(name or "").strip(), document_ids=document_ids or [], dry_run=dry_run,
            question_count=experiment_config.whole(count, 10), seed=experiment_config.whole(seed, 0),
            resume_generation_id=resume_id)
    except ValueError as exc:
        raise user_error(f"Number of questions and seed are whole numbers: {exc}.") from None
    endpoint = experiment_config.endpoint(base_url, model, api_key)
    if endpoint is not None:
        request.generator_model.CopyFrom(endpoint)
    return request


def dry_run(gateway: ChunkLab, request: evaluator_pb2.GenerateQuestionSetRequest, generator: str) -> str:
    with told_as_sentence():
        outcome = next((e for e in gateway.generate_question_set(request) if e.HasField("estimate")), None)
    if outcome is None:
        raise user_error("The evaluator ended the dry run without an estimate; see its log.")
    return questions_html.estimate_html(outcome.estimate, generator)


def follow_generation(gateway: ChunkLab, request: evaluator_pb2.GenerateQuestionSetRequest,
                      generator: str) -> Iterator[tuple[str, str]]:
    """Yields (progress HTML, generation id) per event of a GenerateQuestionSet stream;
    stops the stream after the passage in flight once its generation is cancelled."""
    events = gateway.generate_question_set(request)
    generation_id = request.resume_generation_id
    yield message_html("Starting: the evaluator samples the passages…"), generation_id
    try:
        with told_as_sentence():
            for event in events:
                kind = event.WhichOneof("event")
                if kind == "progress":
                    view = questions_html.progress_view(event.progress)
                    generation_id = view.generation_id
                    if generation_id in _cancelling:
                        _cancelling.discard(generation_id)
                        stopped = questions_html.GenerationView(**{**view.__dict__, "state": "interrupted",
                                                                   "message": "cancelled"})
                        yield questions_html.progress_html(stopped, generator), generation_id
                        return
                    yield questions_html.progress_html(view, generator), generation_id
                elif kind == "generation":
                    generation = event.generation
                    yield questions_html.progress_html(
                        questions_html.generation_view(generation), generator,
                        questions_html.passage_problems(generation)), generation.generation_id
    finally:
        events.close()


# -- import ---------------------------------------------------------------------

def _import_inputs(path: str | None, mapping_text: str) -> dict[str, str]:
    if not path:
        raise user_error("Choose a .jsonl or .csv file of questions first.")
    try:
        return experiment_config.document_mapping(mapping_text)
    except ValueError as exc:
        raise user_error(f"In the box Corpus ids to document ids: {exc}") from None


def validate_file(gateway: ChunkLab, path: str | None, name: str, mapping_text: str, lenient: bool) -> str:
    document_ids = _import_inputs(path, mapping_text)
    with told_as_sentence():
        validation = gateway.validate_question_set(path, name or "", document_ids, LENIENT if lenient else STRICT)
    return questions_html.validation_html(validation)


def import_file(gateway: ChunkLab, path: str | None, name: str, mapping_text: str,
                lenient: bool) -> tuple[str, str, str]:
    """(message, report HTML, the new set's id)."""
    document_ids = _import_inputs(path, mapping_text)
    with told_as_sentence():
        imported = gateway.import_question_set(path, name or "", document_ids,
                                               excerpt_check=LENIENT if lenient else STRICT)
    report = questions_html.validation_html(imported.validation) if imported.validation.problems else ""
    return message_html(questions_html.import_message(imported), "ok"), report, imported.question_set_id


# -- review ---------------------------------------------------------------------

def open_set(gateway: ChunkLab, question_set_id: str | None) -> evaluator_pb2.QuestionSet:
    if not question_set_id:
        return evaluator_pb2.QuestionSet()
    with told_as_sentence():
        return gateway.get_question_set(question_set_id)


def show_question(gateway: ChunkLab, question_set: evaluator_pb2.QuestionSet, question_id: str | None) -> str:
    """The question with its excerpts marked in their documents' text."""
    ids = [q.question_id for q in question_set.questions]
    if question_id not in ids:
        return ""
    question = question_set.questions[ids.index(question_id)]
    texts, names = {}, {}
    with told_as_sentence():
        for document_id in {r.document_id for r in question.references}:
            document = gateway.get_document_text(document_id)
            texts[document_id], names[document_id] = document.text, document.name
    windows = questions_html.excerpt_windows(texts, question.references, names)
    return questions_html.question_html(question, ids.index(question_id) + 1, len(ids), windows)


def step(question_set: evaluator_pb2.QuestionSet, question_id: str | None, by: int) -> str | None:
    """The question `by` places from the current one, staying within the set."""
    ids = [q.question_id for q in question_set.questions]
    if not ids:
        return None
    here = ids.index(question_id) if question_id in ids else 0
    return ids[min(max(here + by, 0), len(ids) - 1)]


def edited_question(current: evaluator_pb2.Question, text: str, answer: str, excerpt_text: str,
                    document_id: str | None) -> evaluator_pb2.Question:
    """The question as edited: each excerpt keeps its reference's document (a new one
    takes the chosen document) and is located again by the evaluator."""
    pieces = [p.strip() for p in (excerpt_text or "").split(EXCERPT_SEPARATOR.strip()) if p.strip()]
    if not (text or "").strip():
        raise user_error("A question needs its text.")
    if not pieces:
        raise user_error("A question needs at least one excerpt that answers it.")
    documents = [r.document_id for r in current.references]
    references = []
    for i, piece in enumerate(pieces):
        document = documents[i] if i < len(documents) else (document_id or (documents[0] if documents else ""))
        if not document:
            raise user_error("Choose the document the excerpt comes from.")
        references.append(evaluator_pb2.Reference(document_id=document, content=piece))
    # Every field is replaced by UpdateQuestion, so the metadata is carried over.
    return evaluator_pb2.Question(question_id=current.question_id, text=text.strip(),
                                  expected_answer=(answer or "").strip(), references=references,
                                  metadata=current.metadata)


def located_excerpt(gateway: ChunkLab, document_id: str, excerpt: str) -> tuple[evaluator_pb2.Reference, str]:
    """The excerpt located in the document (exactly, or snapped to the closest span):
    the reference to store and a sentence saying how it was found."""
    with told_as_sentence():
        document = gateway.get_document_text(document_id)
    found = excerpts.locate(document.text, excerpt.strip())
    if found is None:
        raise user_error("Paste the excerpt that answers the question.")
    if not found.located:
        raise user_error(f"The excerpt is not in {document.name}: the closest span, {found.similarity:.0%} alike, "
                         f"is “{found.span}”; paste the document's own words.")
    how = "found exactly" if found.exact else f"snapped to the closest span ({found.similarity:.0%} alike)"
    reference = evaluator_pb2.Reference(document_id=document_id, start_char=found.start, end_char=found.end,
                                        content=found.span)
    return reference, f"Excerpt {how} in {document.name}, characters {found.start}–{found.end}."


def located(gateway: ChunkLab, question: evaluator_pb2.Question) -> tuple[evaluator_pb2.Question, str]:
    """The question with every excerpt located (chunklab.excerpts, the evaluator's own rule),
    and how each was found; a gr.Error says which excerpt is not in its document and its closest span."""
    references, sentences = [], []
    for reference in question.references:
        found, how = located_excerpt(gateway, reference.document_id, reference.content)
        references.append(found)
        sentences.append(how)
    placed = evaluator_pb2.Question()
    placed.CopyFrom(question)
    del placed.references[:]
    placed.references.extend(references)
    return placed, " ".join(sentences)


def review_outputs(gateway: ChunkLab, question_set: evaluator_pb2.QuestionSet, question_id: str | None) -> tuple:
    """(set bytes, question dropdown, view HTML, question, answer, excerpts) for a set and a question."""
    choices = questions_html.question_choices(question_set)
    ids = [value for _, value in choices]
    question_id = question_id if question_id in ids else (ids[0] if ids else None)
    question = question_set.questions[ids.index(question_id)] if question_id else evaluator_pb2.Question()
    return (
        question_set.SerializeToString(), gr.update(choices=choices, value=question_id),
        show_question(gateway, question_set, question_id), question.text, question.expected_answer,
        EXCERPT_SEPARATOR.join(r.content for r in question.references),
    )


# -- the page -------------------------------------------------------------------

def build(gateway: ChunkLab) -> gr.Blocks:
    with gr.Blocks() as page:
        generation_id = gr.State("")
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
        for box in (base_url, model):
            box.change(lambda b, m: f"Generator: {configured_generator(gateway, b, m)}", inputs=[base_url, model],
                       outputs=generator, show_progress="hidden")
        page.load(lambda b, m: f"Generator: {configured_generator(gateway, b, m)}", inputs=[base_url, model],
                  outputs=generator, show_progress="hidden")
        documents.focus(lambda current: document_dropdown_update(gateway, current or []), inputs=documents,
                        outputs=documents, show_progress="hidden")

        form = [documents, count, seed, name, base_url, model, api_key]
        dry.click(lambda *v: dry_run(gateway, generation_request(*v, dry_run=True),
                                     configured_generator(gateway, v[4], v[5])), inputs=form, outputs=status)

        def run(*values, resume_from: str = ""):
            request = generation_request(*values[:7], resume_id=resume_from)
            label = configured_generator(gateway, values[4], values[5])
            for html, gen_id in follow_generation(gateway, request, label):
                yield html, gen_id, gr.update(interactive=True), gen_id
            yield gr.skip(), gr.skip(), gr.update(interactive=False), gr.skip()

        def run_resumed(*values):
            if not (values[7] or "").strip():
                raise user_error("Give the id of the interrupted generation to resume (it shows above once one stops).")
            yield from run(*values[:7], resume_from=values[7])

        def finished(gen_id: str, current: str | None):
            """Cancel off again; a stored set becomes the one under review."""
            stored = ""
            if gen_id:
                with told_as_sentence():
                    stored = gateway.get_generation(gen_id).question_set_id
            return gr.update(interactive=False), question_set_update(gateway, stored or current)

        outputs = [status, generation_id, cancel, resume_id]
        started = start.click(run, inputs=form, outputs=outputs, concurrency_limit=None)
        resumed = resume.click(run_resumed, inputs=[*form, resume_id], outputs=outputs, concurrency_limit=None)
        for event in (started, resumed):
            event.then(finished, inputs=[generation_id, chosen], outputs=[cancel, chosen], show_progress="hidden")

        def do_cancel(gen_id: str):
            if not gen_id:
                raise user_error("Nothing is generating: start a generation first.")
            _cancelling.add(gen_id)
            return message_html("Cancelling: the generation stops after the passage in flight; Resume continues it.")

        cancel.click(do_cancel, inputs=generation_id, outputs=cancel_status)

        validate.click(lambda p, n, m, l: validate_file(gateway, p, n, m, l),
                       inputs=[file, import_name, mapping, lenient], outputs=report)

        def imported(path, set_name, mapping_text, keep_located):
            message, report_html, set_id = import_file(gateway, path, set_name, mapping_text, keep_located)
            return message, report_html, question_set_update(gateway, set_id)

        do_import.click(imported, inputs=[file, import_name, mapping, lenient],
                        outputs=[import_status, report, chosen])

        review = [held_set, question, view, text, answer, excerpt_box]
        chosen.focus(lambda current: question_set_update(gateway, current), inputs=chosen, outputs=chosen,
                     show_progress="hidden")
        chosen.change(lambda set_id: review_outputs(gateway, open_set(gateway, set_id), None), inputs=chosen,
                      outputs=review)

        def held(data: bytes) -> evaluator_pb2.QuestionSet:
            return evaluator_pb2.QuestionSet.FromString(data or b"")

        question.input(lambda data, qid: review_outputs(gateway, held(data), qid), inputs=[held_set, question],
                       outputs=review)
        for button, by in ((prev, -1), (nxt, 1)):
            button.click(lambda data, qid, by=by: review_outputs(gateway, held(data), step(held(data), qid, by)),
                         inputs=[held_set, question], outputs=review)

        def current_question(data: bytes, qid: str | None) -> evaluator_pb2.Question:
            found = [q for q in held(data).questions if q.question_id == qid]
            if not found:
                raise user_error("Choose a question set and a question first.")
            return found[0]

        def do_save(data, qid, q_text, q_answer, q_excerpts, doc):
            edited, how = located(gateway, edited_question(current_question(data, qid), q_text, q_answer,
                                                           q_excerpts, doc))
            with told_as_sentence():
                changed = gateway.update_question(held(data).question_set_id, edited)
            return (*review_outputs(gateway, changed, qid), message_html(f"Saved. {how}", "ok"))

        def do_remove(data, qid):
            current_question(data, qid)
            with told_as_sentence():
                changed = gateway.delete_question(held(data).question_set_id, qid)
            return (*review_outputs(gateway, changed, step(held(data), qid, 1)),
                    message_html(f"Removed; the set has {len(changed.questions)} questions.", "ok"))

        def do_add(data, q_text, q_answer, q_excerpt, doc):
            question_set = held(data)
            if not question_set.question_set_id:
                raise user_error("Choose the question set to add to first.")
            if not doc:
                raise user_error("Choose the document the new question's excerpts come from.")
            new, how = located(gateway, edited_question(evaluator_pb2.Question(), q_text, q_answer, q_excerpt, doc))
            with told_as_sentence():
                changed = gateway.add_question(question_set.question_set_id, new)
            return (*review_outputs(gateway, changed, changed.questions[-1].question_id),
                    message_html(f"Added as question {len(changed.questions)}. {how}", "ok"))

        edit_inputs = [held_set, question, text, answer, excerpt_box, document]
        save.click(do_save, inputs=edit_inputs, outputs=[*review, review_status])
        remove.click(do_remove, inputs=[held_set, question], outputs=[*review, review_status])
        add.click(do_add, inputs=[held_set, text, answer, excerpt_box, document], outputs=[*review, review_status])
    return page

