"""A question set written by hand, without an LLM (ADR 0092): the person selects the passage
that answers a question in the document's text, types the question, and adds it to a draft;
the draft is saved as a new set (CreateQuestionSet, every excerpt checked strictly).

The excerpt is the document's text between the selection's offsets, so it is exact by
construction: the browser tells the offsets in code points (what Python's str counts, not
JavaScript's UTF-16 units), and the selected text with them, which must be the text at those
offsets. The draft is plain data (a list of dicts) kept in the browser (hand_section.DRAFT_KEY) until it is saved.
Each function takes the form's plain values and raises gr.Error with a sentence that names
the field to fix.
"""

from __future__ import annotations

from dataclasses import dataclass

from chunklab.client import ChunkLab
from chunklab.v1 import evaluator_pb2
from frontend.errors import told_as_sentence, user_error

# The form's fields as the person reads them; each refusal names one.
QUESTION, PASSAGE, NAME, DOCUMENT = "Question", "Passage", "Set name", "Document"


@dataclass(frozen=True)
class Passage:
    """text[start:end] of the document, start and end in code points."""

    start: int
    end: int
    text: str


def _offset(value, what: str) -> int:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise user_error(f"{PASSAGE}: select the passage that answers the question in the document's text.") from None
    if number != int(number):
        raise user_error(f"{PASSAGE}: the {what} is a whole number of characters, not {number:g}.")
    return int(number)


def passage_at(text: str, start, end, selected: str = "") -> Passage:
    """The passage between the offsets, trimmed of the white space a selection picks up at its
    edges; `selected`, the text the browser selected, must be the text there (a document whose
    text the page shows otherwise, e.g. with line ends the browser rewrote, is refused)."""
    if start in (None, "") and end in (None, ""):
        raise user_error(f"{PASSAGE}: select the passage that answers the question in the document's text.")
    first, last = _offset(start, "start"), _offset(end, "end")
    if not 0 <= first < last <= len(text):
        raise user_error(
            f"{PASSAGE}: characters {first} to {last} are not a passage of this document "
            f"(it has {len(text):,} characters); select the passage again."
        )
    if selected and text[first:last] != selected:
        raise user_error(f"{PASSAGE}: the selection does not match the document's text there; select it again.")
    while first < last and text[first].isspace():
        first += 1
    while last > first and text[last - 1].isspace():
        last -= 1
    if first == last:
        raise user_error(f"{PASSAGE}: the selection is only white space; select the words that answer the question.")
    return Passage(first, last, text[first:last])


def _same(a: str, b: str) -> bool:
    return " ".join(a.casefold().split()) == " ".join(b.casefold().split())


def added(draft: list[dict] | None, question: str, answer: str, document_id: str | None, passage: Passage) -> list:
    """The draft with one more question: its text, its expected answer (optional) and its passage."""
    draft = list(draft or [])
    question = (question or "").strip()
    if not document_id:
        raise user_error(f"{DOCUMENT}: choose the document the passage comes from.")
    if not question:
        raise user_error(f"{QUESTION}: type the question the selected passage answers.")
    for number, held in enumerate(draft, 1):
        if _same(held["question"], question):
            raise user_error(f"{QUESTION}: “{question}” is already question {number} of this set; ask another.")
    item = {"question": question, "answer": (answer or "").strip(), "document_id": document_id}
    return [*draft, {**item, "start": passage.start, "end": passage.end, "excerpt": passage.text}]


def questions(draft: list[dict]) -> list[evaluator_pb2.Question]:
    """The draft as the contract's questions, each with its one exact reference."""
    return [
        evaluator_pb2.Question(
            text=item["question"],
            expected_answer=item["answer"],
            references=[
                evaluator_pb2.Reference(
                    document_id=item["document_id"],
                    start_char=item["start"],
                    end_char=item["end"],
                    content=item["excerpt"],
                )
            ],
        )
        for item in draft
    ]


def saved(gateway: ChunkLab, name: str, draft: list[dict] | None) -> evaluator_pb2.QuestionSet:
    """CreateQuestionSet with the draft, excerpts checked strictly: a document changed since
    the selection is refused with the evaluator's sentence."""
    if not draft:
        raise user_error(f"{QUESTION}: add at least one question before saving the set.")
    if not (name or "").strip():
        raise user_error(f"{NAME}: name the question set, e.g. after the documents it asks about.")
    with told_as_sentence():
        return gateway.create_question_set(name.strip(), questions(draft), description="written by hand in the UI")
