"""Question sets behind their RPCs: create, import and validate (every excerpt
located, ADR 0059), get, list and delete, and the review's edits (add, change,
remove a question). Knows nothing of gRPC."""

from __future__ import annotations

from collections.abc import Iterator

from chunklab.errors import InvalidArgument, NotFound
from chunklab.rpc import limits
from chunklab.v1 import evaluator_pb2
from services.evaluator.questions import question_sets, references
from services.evaluator.storage.repository import Repository


class QuestionSetService:
    def __init__(self, repository: Repository, peers, max_upload_bytes: int) -> None:
        self._repo = repository
        self._peers = peers
        self._max_upload = max_upload_bytes

    def resolver(self, mapping: dict[str, str] | None = None) -> question_sets.DocumentResolver:
        return question_sets.DocumentResolver(mapping or {}, self._peers.get_document, self._peers.list_documents)

    def _check(
        self, raw: list[question_sets.RawQuestion], mapping: dict[str, str], excerpt_check: int
    ) -> references.Checked:
        if not raw:
            raise InvalidArgument("a question set needs at least one question")
        question_sets.refuse_duplicate_ids(raw)
        for item in raw:  # a file's questions are bounded as a request's are: each is searched and embedded
            limits.check_string(item.text, "text", f"{item.where}: the question")
            limits.check_string(item.expected_answer, "expected_answer", f"{item.where}: the expected answer")
        return references.check(raw, self.resolver(mapping), excerpt_check)

    def _store(
        self,
        name: str,
        description: str,
        raw: list[question_sets.RawQuestion],
        mapping: dict[str, str],
        excerpt_check: int,
        origin: str,
    ) -> evaluator_pb2.QuestionSet:
        """Stores the checked questions as a new set; an import of questions that a stored set
        already holds (the same file imported again, e.g. by every CLI run) is that set."""
        if not name.strip():
            raise InvalidArgument("name the question set")
        checked = self._check(raw, mapping, excerpt_check)
        references.refuse(checked)
        content_hash = question_sets.content_hash(checked.questions)
        stored = self._repo.question_set_with_hash(content_hash) if origin == "imported" else None
        if stored is None:
            stored = self._repo.add_question_set(
                name.strip(),
                description,
                checked.questions,
                content_hash,
                evaluator_pb2.QuestionSetProvenance(origin=origin),
            )
        stored.validation.CopyFrom(checked.validation)
        return stored

    def create(self, request: evaluator_pb2.CreateQuestionSetRequest) -> evaluator_pb2.QuestionSet:
        return self._store(
            request.name,
            request.description,
            question_sets.from_messages(request.questions),
            {},
            request.excerpt_check,
            "created",
        )

    def _read(self, header: evaluator_pb2.ImportHeader, pieces: Iterator[bytes]) -> list[question_sets.RawQuestion]:
        data = bytearray()
        for piece in pieces:
            data += piece
            if len(data) > self._max_upload:
                raise InvalidArgument(
                    f"the question file is over {self._max_upload / 1e6:g} MB (CHUNKLAB_MAX_UPLOAD_MB); split it"
                )
        return question_sets.read_file(bytes(data), header.format, header.name)

    def import_file(self, header: evaluator_pb2.ImportHeader, pieces: Iterator[bytes]) -> evaluator_pb2.QuestionSet:
        return self._store(
            header.name, "", self._read(header, pieces), dict(header.document_ids), header.excerpt_check, "imported"
        )

    def validate(
        self, header: evaluator_pb2.ImportHeader, pieces: Iterator[bytes]
    ) -> evaluator_pb2.QuestionSetValidation:
        """The import's dry run: the report, nothing stored, excerpt problems never refused."""
        return self._check(self._read(header, pieces), dict(header.document_ids), header.excerpt_check).validation

    # -- review ---------------------------------------------------------------

    def _located(self, question: evaluator_pb2.Question, where: str) -> evaluator_pb2.Question:
        """The question with its references located strictly, or INVALID_ARGUMENT with the fix."""
        (raw,) = question_sets.from_messages([question])
        raw.where = where
        checked = self._check([raw], {}, references.STRICT)
        references.refuse(checked)
        (located,) = checked.questions
        located.question_id = question.question_id
        return located

    def get(self, set_id: str) -> evaluator_pb2.QuestionSet:
        return self._repo.get_question_set(set_id)

    def list(self, request: evaluator_pb2.ListQuestionSetsRequest) -> evaluator_pb2.ListQuestionSetsResponse:
        sets, token = self._repo.list_question_sets(request.page_size, request.page_token)
        return evaluator_pb2.ListQuestionSetsResponse(question_sets=sets, next_page_token=token)

    def delete(self, set_id: str) -> None:
        self._repo.delete_question_set(set_id)

    def add_question(self, request: evaluator_pb2.AddQuestionRequest) -> evaluator_pb2.QuestionSet:
        question = self._located(request.question, "the new question")
        given, question.question_id = request.question.question_id.strip(), ""

        def added(current: list[evaluator_pb2.Question]) -> list[evaluator_pb2.Question]:
            if given and any(q.question_id == given for q in current):
                raise InvalidArgument(
                    f"question set {request.question_set_id} already has a question {limits.quoted(given)}: "
                    "change it with UpdateQuestion, or add the new question without an id"
                )
            return [*current, question]

        return self._repo.change_questions(request.question_set_id, added, question_sets.content_hash)

    def update_question(self, request: evaluator_pb2.UpdateQuestionRequest) -> evaluator_pb2.QuestionSet:
        question_id = request.question.question_id
        if not question_id:
            raise InvalidArgument("question.question_id is empty: name the question to change")
        question = self._located(request.question, f"question {question_id}")

        def change(current: list[evaluator_pb2.Question]) -> list[evaluator_pb2.Question]:
            if not any(q.question_id == question_id for q in current):
                raise NotFound(f"question set {request.question_set_id} has no question {question_id}")
            return [question if q.question_id == question_id else q for q in current]

        return self._repo.change_questions(request.question_set_id, change, question_sets.content_hash)

    def delete_question(self, request: evaluator_pb2.DeleteQuestionRequest) -> evaluator_pb2.QuestionSet:
        if not request.question_id:
            raise InvalidArgument("question_id is empty: name the question to remove")

        def change(current: list[evaluator_pb2.Question]) -> list[evaluator_pb2.Question]:
            left = [q for q in current if q.question_id != request.question_id]
            if len(left) == len(current):
                raise NotFound(f"question set {request.question_set_id} has no question {request.question_id}")
            if not left:
                raise InvalidArgument("that is the set's last question: delete the set instead")
            return left

        return self._repo.change_questions(request.question_set_id, change, question_sets.content_hash)
