"""Calls for question sets beyond import and listing (chunklab.client.evaluation):
validating a file (every excerpt located, nothing stored), creating a set from
questions written by hand, generating a set
from documents, the review's edits, and exporting a set as JSONL."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from chunklab.client.core import UPLOAD_PIECE_BYTES, Calls, Source, client_stream, read_source
from chunklab.v1 import evaluator_pb2

QUESTION_FORMATS = {
    ".jsonl": evaluator_pb2.QUESTION_SET_FORMAT_JSONL,
    ".ndjson": evaluator_pb2.QUESTION_SET_FORMAT_JSONL,
    ".csv": evaluator_pb2.QUESTION_SET_FORMAT_CSV,
}


def import_header(
    file_name: str,
    name: str = "",
    document_ids: dict[str, str] | None = None,
    excerpt_check: int = evaluator_pb2.EXCERPT_CHECK_UNSPECIFIED,
) -> evaluator_pb2.ImportHeader:
    """The header of an import or a validation: the format follows the file name's extension."""
    header = evaluator_pb2.ImportHeader(
        name=name.strip() or file_name, document_ids=document_ids or {}, excerpt_check=excerpt_check
    )
    fmt = QUESTION_FORMATS.get(os.path.splitext(file_name)[1].lower())
    if fmt is not None:
        header.format = fmt
    return header


@dataclass(frozen=True)
class GenerationOutcome:
    """What a GenerateQuestionSet stream ended with: the estimate, and the
    generation (None for a dry run, or a stream that ended early)."""

    estimate: evaluator_pb2.GenerationEstimate | None
    generation: evaluator_pb2.Generation | None
    generation_id: str


def generation_outcome(
    events: Iterable[evaluator_pb2.GenerationEvent],
    on_progress: Callable[[evaluator_pb2.GenerationProgress], None] | None = None,
) -> GenerationOutcome:
    estimate = generation = None
    generation_id = ""
    for event in events:
        kind = event.WhichOneof("event")
        if kind == "estimate":
            estimate = event.estimate
        elif kind == "progress":
            generation_id = event.progress.generation_id
            if on_progress is not None:
                on_progress(event.progress)
        elif kind == "generation":
            generation = event.generation
            generation_id = generation.generation_id
    return GenerationOutcome(estimate, generation, generation_id)


def export_records(question_set: evaluator_pb2.QuestionSet) -> Iterator[dict]:
    """The set's questions as JSONL records that ImportQuestionSet reads back as they are."""
    for question in question_set.questions:
        record: dict = {"question": question.text}
        if question.expected_answer:
            record["expected_answer"] = question.expected_answer
        record["references"] = [
            {"document_id": r.document_id, "start_char": r.start_char, "end_char": r.end_char, "content": r.content}
            for r in question.references
        ]
        if question.metadata:
            record["metadata"] = dict(sorted(question.metadata.items()))
        yield record


class QuestionCalls(Calls):
    def validate_question_set(
        self,
        source: Source,
        name: str = "",
        document_ids: dict[str, str] | None = None,
        excerpt_check: int = evaluator_pb2.EXCERPT_CHECK_UNSPECIFIED,
        piece_bytes: int = UPLOAD_PIECE_BYTES,
    ) -> evaluator_pb2.QuestionSetValidation:
        """Every excerpt of a JSONL or CSV file located, every problem with its fix; nothing stored."""
        data, file_name, _ = read_source(source, name, "question file")
        header = import_header(file_name, name, document_ids, excerpt_check)
        return self._call(
            "evaluator",
            "ValidateQuestionSet",
            client_stream(evaluator_pb2.ImportQuestionSetRequest, header, data, piece_bytes),
            long=True,
        )

    def generate_question_set(
        self, request: evaluator_pb2.GenerateQuestionSetRequest
    ) -> Iterator[evaluator_pb2.GenerationEvent]:
        """Yields GenerateQuestionSet's events: the estimate, progress per passage, and last the
        generation. Closing the iterator ends the call, which interrupts the generation
        (resume it with resume_generation_id)."""
        return self._stream("evaluator", "GenerateQuestionSet", request, long=not request.dry_run)

    def get_generation(self, generation_id: str) -> evaluator_pb2.Generation:
        request = evaluator_pb2.GetGenerationRequest(generation_id=generation_id)
        return self._call("evaluator", "GetGeneration", request)

    def create_question_set(
        self,
        name: str,
        questions: Iterable[evaluator_pb2.Question],
        description: str = "",
        excerpt_check: int = evaluator_pb2.EXCERPT_CHECK_STRICT,
    ) -> evaluator_pb2.QuestionSet:
        """A new set of these questions, each excerpt located (strictly unless told)."""
        request = evaluator_pb2.CreateQuestionSetRequest(
            name=name, description=description, questions=list(questions), excerpt_check=excerpt_check
        )
        return self._call("evaluator", "CreateQuestionSet", request)

    def add_question(self, question_set_id: str, question: evaluator_pb2.Question) -> evaluator_pb2.QuestionSet:
        request = evaluator_pb2.AddQuestionRequest(question_set_id=question_set_id, question=question)
        return self._call("evaluator", "AddQuestion", request)

    def update_question(self, question_set_id: str, question: evaluator_pb2.Question) -> evaluator_pb2.QuestionSet:
        request = evaluator_pb2.UpdateQuestionRequest(question_set_id=question_set_id, question=question)
        return self._call("evaluator", "UpdateQuestion", request)

    def delete_question(self, question_set_id: str, question_id: str) -> evaluator_pb2.QuestionSet:
        request = evaluator_pb2.DeleteQuestionRequest(question_set_id=question_set_id, question_id=question_id)
        return self._call("evaluator", "DeleteQuestion", request)

    def export_question_set(self, question_set_id: str) -> str:
        """The set as JSONL text (one question a line, references with their exact ranges)."""
        question_set = self._call(
            "evaluator", "GetQuestionSet", evaluator_pb2.GetQuestionSetRequest(question_set_id=question_set_id)
        )
        return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in export_records(question_set))
