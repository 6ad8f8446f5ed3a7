"""Question sets and their questions, in protobuf terms."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence

from sqlalchemy import delete, func, select

from chunklab.errors import FailedPrecondition, InvalidArgument, NotFound
from chunklab.timeutil import to_proto, utcnow
from chunklab.v1 import evaluator_pb2
from services.evaluator.storage.base import Store, next_token, page_bounds
from services.evaluator.storage.tables import ExperimentRow, QuestionRow, QuestionSetProvenanceRow, QuestionSetRow

_NAMESPACE = uuid.UUID("0b7e4f2a-6c1d-4e8b-9a3f-5d2c1b0a9e87")


def question_id(question_set_id: str, position: int) -> str:
    return str(uuid.uuid5(_NAMESPACE, f"{question_set_id}/{position}"))


class QuestionSetStore(Store):
    def add_question_set(
        self,
        name: str,
        description: str,
        questions: Sequence[evaluator_pb2.Question],
        content_hash: str,
        provenance: evaluator_pb2.QuestionSetProvenance | None = None,
    ) -> evaluator_pb2.QuestionSet:
        set_id = str(uuid.uuid4())
        now = utcnow()
        stored = []
        provenance = provenance or evaluator_pb2.QuestionSetProvenance()
        with self._sessions.begin() as session:
            session.add(
                QuestionSetRow(
                    question_set_id=set_id,
                    name=name,
                    description=description,
                    content_hash=content_hash,
                    question_count=len(questions),
                    created_at=now,
                )
            )
            session.flush()
            session.add(QuestionSetProvenanceRow(question_set_id=set_id, message=provenance.SerializeToString()))
            for position, question in enumerate(questions):
                q = evaluator_pb2.Question()
                q.CopyFrom(question)
                q.question_id = question_id(set_id, position)
                stored.append(q)
                session.add(
                    QuestionRow(
                        question_id=q.question_id,
                        question_set_id=set_id,
                        position=position,
                        message=q.SerializeToString(),
                    )
                )
        return evaluator_pb2.QuestionSet(
            question_set_id=set_id,
            name=name,
            description=description,
            content_hash=content_hash,
            question_count=len(stored),
            created_at=to_proto(now),
            questions=stored,
            provenance=provenance,
        )

    @staticmethod
    def _set_message(session, row: QuestionSetRow) -> evaluator_pb2.QuestionSet:
        message = evaluator_pb2.QuestionSet(
            question_set_id=row.question_set_id,
            name=row.name,
            description=row.description,
            content_hash=row.content_hash,
            question_count=row.question_count,
            created_at=to_proto(row.created_at),
        )
        provenance = session.get(QuestionSetProvenanceRow, row.question_set_id)
        if provenance is not None:
            message.provenance.ParseFromString(provenance.message)
        return message

    @staticmethod
    def _changeable(session, set_id: str, change: str) -> QuestionSetRow:
        """The set's row, to change or delete: refused while an experiment uses the set
        (`change` says what to do instead)."""
        if not set_id:
            raise InvalidArgument("question_set_id is empty")
        row = session.get(QuestionSetRow, set_id)
        if row is None:
            raise NotFound(f"no question set {set_id}; the Questions page lists the stored ones")
        users = session.scalars(
            select(ExperimentRow.experiment_id).where(ExperimentRow.question_set_id == row.question_set_id).limit(5)
        ).all()
        if users:
            raise FailedPrecondition(
                f"question set {row.name!r} is used by experiment(s) {', '.join(users)}; {change} "
                "so that they remain reproducible"
            )
        return row

    def change_questions(
        self,
        set_id: str,
        change: Callable[[list[evaluator_pb2.Question]], list[evaluator_pb2.Question]],
        hash_of: Callable[[list[evaluator_pb2.Question]], str],
    ) -> evaluator_pb2.QuestionSet:
        """Rewrites a set's questions in one transaction: `change` gets them in order and
        returns the new list; a question keeps its id (and place), one without an id is
        added at the end with its own. Refused while an experiment uses the set."""
        with self._sessions.begin() as session:
            row = self._changeable(session, set_id, "copy it (export and import) to change it: it stays as it is")
            rows = {
                q.question_id: q
                for q in session.scalars(select(QuestionRow).where(QuestionRow.question_set_id == set_id))
            }
            current = [
                evaluator_pb2.Question.FromString(r.message) for r in sorted(rows.values(), key=lambda r: r.position)
            ]
            changed = change(current)
            last = max((r.position for r in rows.values()), default=-1)
            kept = set()
            for question in changed:
                if question.question_id in rows:
                    rows[question.question_id].message = question.SerializeToString()
                else:
                    last += 1
                    question.question_id = question_id(set_id, last)
                    session.add(
                        QuestionRow(
                            question_id=question.question_id,
                            question_set_id=set_id,
                            position=last,
                            message=question.SerializeToString(),
                        )
                    )
                kept.add(question.question_id)
            for gone in set(rows) - kept:
                session.delete(rows[gone])
            row.content_hash, row.question_count = hash_of(changed), len(changed)
            session.flush()
            message = self._set_message(session, row)
            message.questions.extend(changed)
            return message

    def get_question_set(self, set_id: str, with_questions: bool = True) -> evaluator_pb2.QuestionSet:
        if not set_id:
            raise InvalidArgument("question_set_id is empty")
        with self._sessions() as session:
            row = session.get(QuestionSetRow, set_id)
            if row is None:
                raise NotFound(f"no question set {set_id}; the Questions page lists the stored ones")
            message = self._set_message(session, row)
            if with_questions:
                rows = session.scalars(
                    select(QuestionRow).where(QuestionRow.question_set_id == set_id).order_by(QuestionRow.position)
                )
                for q in rows:
                    message.questions.add().ParseFromString(q.message)
            return message

    def question_set_with_hash(self, content_hash: str) -> evaluator_pb2.QuestionSet | None:
        """The newest stored set whose questions hash to content_hash (with its questions), or None."""
        with self._sessions() as session:
            set_id = session.scalar(
                select(QuestionSetRow.question_set_id)
                .where(QuestionSetRow.content_hash == content_hash)
                .order_by(QuestionSetRow.created_at.desc())
                .limit(1)
            )
        return self.get_question_set(set_id) if set_id else None

    def list_question_sets(self, page_size: int, page_token: str) -> tuple[list[evaluator_pb2.QuestionSet], str]:
        size, offset = page_bounds(page_size, page_token)
        with self._sessions() as session:
            total = session.scalar(select(func.count()).select_from(QuestionSetRow))
            rows = session.scalars(
                select(QuestionSetRow)
                .order_by(QuestionSetRow.created_at.desc(), QuestionSetRow.question_set_id)
                .offset(offset)
                .limit(size)
            ).all()
            return [self._set_message(session, r) for r in rows], next_token(offset, size, len(rows), total)

    def delete_question_set(self, set_id: str) -> None:
        with self._sessions.begin() as session:
            row = self._changeable(session, set_id, "it stays")
            session.execute(delete(QuestionRow).where(QuestionRow.question_set_id == set_id))
            session.execute(delete(QuestionSetProvenanceRow).where(QuestionSetProvenanceRow.question_set_id == set_id))
            session.delete(row)
