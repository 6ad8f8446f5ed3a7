"""The Question sets page's handlers (frontend/pages/questions/ wires them):
each takes the gateway and the form's plain values and returns what the page
shows, raising gr.Error with a sentence for what a person must fix. Calls go
through chunklab.client; excerpts are located by chunklab.text.excerpts, the rule
the evaluator applies (ADR 0059), so an edit is snapped or refused with its
closest span before it is sent."""

from __future__ import annotations

from collections.abc import Iterator

import gradio as gr

from chunklab.client import ChunkLab
from chunklab.text import excerpts
from chunklab.v1 import evaluator_pb2
from chunklab.views import numbers
from frontend.errors import told_as_sentence, user_error
from frontend.forms import experiment_config
from frontend.pages.questions import questions_html
from frontend.views.formatting import message_html

# What the file pickers of this page and of the experiment form offer.
QUESTION_TYPES = [".jsonl", ".ndjson", ".csv"]
# Between excerpts in the review's excerpt box.
EXCERPT_SEPARATOR = "\n---\n"
LENIENT, STRICT = evaluator_pb2.EXCERPT_CHECK_LENIENT, evaluator_pb2.EXCERPT_CHECK_STRICT

# Runs (one per Generate or Resume click, named by a token) asked to cancel: the
# running handler stops its stream after the passage in flight, and the
# evaluator marks the generation interrupted. A token, not the generation id:
# Cancel works before the first passage has told the id.
_cancelling: set[str] = set()


def cancel(run_token: str) -> None:
    """Asks the run with this token to stop after the passage in flight."""
    _cancelling.add(run_token)


# -- generate -------------------------------------------------------------------


def configured_generator(gateway: ChunkLab, base_url: str, model: str) -> str:
    settings = gateway.settings
    if (base_url or "").strip():
        return questions_html.generator_label(base_url.strip(), (model or "").strip() or settings.llm_model)
    return questions_html.generator_label(settings.llm_base_url, settings.llm_model)


NO_ENDPOINT = (
    "No chat endpoint is configured to generate with: fill in its Base URL and Model under "
    "Chat endpoint, or start the stack with CHUNKLAB_LLM_BASE_URL set."
)


def require_endpoint(gateway: ChunkLab, base_url: str) -> None:
    """Generating needs a chat endpoint: the form's, else the stack's."""
    if not (base_url or "").strip() and not gateway.settings.llm_base_url:
        raise user_error(NO_ENDPOINT)


def generation_request(
    document_ids: list[str] | None,
    count,
    seed,
    name: str,
    base_url: str,
    model: str,
    api_key: str,
    dry_run: bool = False,
    resume_id: str = "",
) -> evaluator_pb2.GenerateQuestionSetRequest:
    """The request for the form's values; gr.Error names what is missing."""
    resume_id = (resume_id or "").strip()
    if not resume_id and not document_ids:
        raise user_error("Choose at least one document to generate questions from.")
    try:
        request = evaluator_pb2.GenerateQuestionSetRequest(
            name=(name or "").strip(),
            document_ids=document_ids or [],
            dry_run=dry_run,
            question_count=experiment_config.whole(count, 10),
            seed=experiment_config.whole(seed, 0),
            resume_generation_id=resume_id,
        )
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


def follow_generation(
    gateway: ChunkLab, request: evaluator_pb2.GenerateQuestionSetRequest, generator: str, run_token: str = ""
) -> Iterator[tuple[str, str]]:
    """Yields (progress HTML, generation id) per event of a GenerateQuestionSet stream;
    stops the stream after the passage in flight once the run is cancelled."""
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
                    if run_token and run_token in _cancelling:
                        _cancelling.discard(run_token)
                        stopped = questions_html.GenerationView(
                            **{**view.__dict__, "state": "interrupted", "message": "cancelled"}
                        )
                        yield questions_html.progress_html(stopped, generator), generation_id
                        return
                    yield questions_html.progress_html(view, generator), generation_id
                elif kind == "generation":
                    generation = event.generation
                    yield (
                        questions_html.progress_html(
                            questions_html.generation_view(generation),
                            generator,
                            questions_html.passage_problems(generation),
                        ),
                        generation.generation_id,
                    )
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


def import_file(
    gateway: ChunkLab, path: str | None, name: str, mapping_text: str, lenient: bool
) -> tuple[str, str, str]:
    """(message, report HTML, the new set's id)."""
    document_ids = _import_inputs(path, mapping_text)
    with told_as_sentence():
        imported = gateway.import_question_set(
            path, name or "", document_ids, excerpt_check=LENIENT if lenient else STRICT
        )
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


def edited_question(
    current: evaluator_pb2.Question, text: str, answer: str, excerpt_text: str, document_id: str | None
) -> evaluator_pb2.Question:
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
    return evaluator_pb2.Question(
        question_id=current.question_id,
        text=text.strip(),
        expected_answer=(answer or "").strip(),
        references=references,
        metadata=current.metadata,
    )


def located_excerpt(gateway: ChunkLab, document_id: str, excerpt: str) -> tuple[evaluator_pb2.Reference, str]:
    """The excerpt located in the document (exactly, or snapped to the closest span):
    the reference to store and a sentence saying how it was found."""
    with told_as_sentence():
        document = gateway.get_document_text(document_id)
    found = excerpts.locate(document.text, excerpt.strip())
    if found is None:
        raise user_error("Paste the excerpt that answers the question.")
    if not found.located:
        raise user_error(
            f"The excerpt is not in {document.name}: the closest span, {numbers.percent(found.similarity, 0)} alike, "
            f"is “{found.span}”; paste the document's own words."
        )
    how = (
        "found exactly"
        if found.exact
        else f"snapped to the closest span ({numbers.percent(found.similarity, 0)} alike)"
    )
    reference = evaluator_pb2.Reference(
        document_id=document_id, start_char=found.start, end_char=found.end, content=found.span
    )
    return reference, f"Excerpt {how} in {document.name}, characters {found.start}–{found.end}."


def located(gateway: ChunkLab, question: evaluator_pb2.Question) -> tuple[evaluator_pb2.Question, str]:
    """The question with every excerpt located (chunklab.text.excerpts, the evaluator's own rule),
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
        question_set.SerializeToString(),
        gr.update(choices=choices, value=question_id),
        show_question(gateway, question_set, question_id),
        question.text,
        question.expected_answer,
        EXCERPT_SEPARATOR.join(r.content for r in question.references),
    )


def held(data: bytes) -> evaluator_pb2.QuestionSet:
    """The set under review, kept serialised in the page's state."""
    return evaluator_pb2.QuestionSet.FromString(data or b"")


def moved(gateway: ChunkLab, data: bytes, question_id: str | None, by: int) -> tuple:
    question_set = held(data)
    return review_outputs(gateway, question_set, step(question_set, question_id, by))


def current_question(question_set: evaluator_pb2.QuestionSet, question_id: str | None) -> evaluator_pb2.Question:
    found = [q for q in question_set.questions if q.question_id == question_id]
    if not found:
        raise user_error("Choose a question set and a question first.")
    return found[0]


def save(
    gateway: ChunkLab,
    data: bytes,
    question_id: str | None,
    text: str,
    answer: str,
    excerpt_text: str,
    document_id: str | None,
) -> tuple:
    """UpdateQuestion with the edit, its excerpts located first; the review again and a sentence."""
    question_set = held(data)
    edited = edited_question(current_question(question_set, question_id), text, answer, excerpt_text, document_id)
    edited, how = located(gateway, edited)
    with told_as_sentence():
        changed = gateway.update_question(question_set.question_set_id, edited)
    return (*review_outputs(gateway, changed, question_id), message_html(f"Saved. {how}", "ok"))


def remove(gateway: ChunkLab, data: bytes, question_id: str | None) -> tuple:
    question_set = held(data)
    current_question(question_set, question_id)
    with told_as_sentence():
        changed = gateway.delete_question(question_set.question_set_id, question_id)
    return (
        *review_outputs(gateway, changed, step(question_set, question_id, 1)),
        message_html(f"Removed; the set has {len(changed.questions)} questions.", "ok"),
    )


def add(gateway: ChunkLab, data: bytes, text: str, answer: str, excerpt_text: str, document_id: str | None) -> tuple:
    """AddQuestion with the pasted excerpts located (snapped where close) in the chosen document."""
    question_set = held(data)
    if not question_set.question_set_id:
        raise user_error("Choose the question set to add to first.")
    if not document_id:
        raise user_error("Choose the document the new question's excerpts come from.")
    new, how = located(gateway, edited_question(evaluator_pb2.Question(), text, answer, excerpt_text, document_id))
    with told_as_sentence():
        changed = gateway.add_question(question_set.question_set_id, new)
    return (
        *review_outputs(gateway, changed, changed.questions[-1].question_id),
        message_html(f"Added as question {len(changed.questions)}. {how}", "ok"),
    )
