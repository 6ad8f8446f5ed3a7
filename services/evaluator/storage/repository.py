"""Reads and writes of the evaluator's tables, in protobuf terms.

Each write is its own short transaction, so a finished question is on disk
the moment it is saved (a restart keeps it).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence

from sqlalchemy import delete, func, select, update
from sqlalchemy.orm import sessionmaker

from chunklab.errors import FailedPrecondition, InvalidArgument, NotFound
from chunklab.paging import check_page_size, decode_offset, encode_token
from chunklab.timeutil import to_proto, utcnow
from chunklab.v1 import evaluator_pb2
from services.evaluator.storage.tables import (
    ExperimentRow, FeedbackRow, GenerationRow, PassageOutcomeRow, QueryRow, QuestionResultRow, QuestionRow,
    QuestionSetProvenanceRow, QuestionSetRow,
)

_NAMESPACE = uuid.UUID("0b7e4f2a-6c1d-4e8b-9a3f-5d2c1b0a9e87")


def page_bounds(page_size: int, page_token: str) -> tuple[int, int]:
    return check_page_size(page_size), decode_offset(page_token)


def next_token(offset: int, size: int, returned: int, total: int) -> str:
    end = offset + returned
    return encode_token(end) if returned == size and end < total else ""


def question_id(question_set_id: str, position: int) -> str:
    return str(uuid.uuid5(_NAMESPACE, f"{question_set_id}/{position}"))


class Repository:
    def __init__(self, sessions: sessionmaker) -> None:
        self._sessions = sessions

    @property
    def sessions(self) -> sessionmaker:
        """The database's sessions, for the experiment leases (leases.py) that share it."""
        return self._sessions

    # -- question sets ----------------------------------------------------

    def add_question_set(self, name: str, description: str, questions: Sequence[evaluator_pb2.Question],
                         content_hash: str, provenance: evaluator_pb2.QuestionSetProvenance | None = None,
                         ) -> evaluator_pb2.QuestionSet:
        set_id = str(uuid.uuid4())
        now = utcnow()
        stored = []
        provenance = provenance or evaluator_pb2.QuestionSetProvenance()
        with self._sessions.begin() as session:
            session.add(QuestionSetRow(
                question_set_id=set_id, name=name, description=description, content_hash=content_hash,
                question_count=len(questions), created_at=now,
            ))
            session.flush()
            session.add(QuestionSetProvenanceRow(question_set_id=set_id, message=provenance.SerializeToString()))
            for position, question in enumerate(questions):
                q = evaluator_pb2.Question()
                q.CopyFrom(question)
                q.question_id = question_id(set_id, position)
                stored.append(q)
                session.add(QuestionRow(
                    question_id=q.question_id, question_set_id=set_id, position=position,
                    message=q.SerializeToString(),
                ))
        return evaluator_pb2.QuestionSet(
            question_set_id=set_id, name=name, description=description, content_hash=content_hash,
            question_count=len(stored), created_at=to_proto(now), questions=stored, provenance=provenance,
        )

    @staticmethod
    def _set_message(session, row: QuestionSetRow) -> evaluator_pb2.QuestionSet:
        message = evaluator_pb2.QuestionSet(
            question_set_id=row.question_set_id, name=row.name, description=row.description,
            content_hash=row.content_hash, question_count=row.question_count, created_at=to_proto(row.created_at),
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
            raise NotFound(f"no question set {set_id}; ListQuestionSets shows the stored ones")
        users = session.scalars(
            select(ExperimentRow.experiment_id).where(ExperimentRow.question_set_id == row.question_set_id).limit(5)
        ).all()
        if users:
            raise FailedPrecondition(
                f"question set {row.name!r} is used by experiment(s) {', '.join(users)}; {change} "
                "so that they remain reproducible"
            )
        return row

    def change_questions(self, set_id: str, change: Callable[[list[evaluator_pb2.Question]], list[evaluator_pb2.Question]],
                         hash_of: Callable[[list[evaluator_pb2.Question]], str]) -> evaluator_pb2.QuestionSet:
        """Rewrites a set's questions in one transaction: `change` gets them in order and
        returns the new list; a question keeps its id (and place), one without an id is
        added at the end with its own. Refused while an experiment uses the set."""
        with self._sessions.begin() as session:
            row = self._changeable(session, set_id, "copy it (export and import) to change it: it stays as it is")
            rows = {q.question_id: q for q in session.scalars(
                select(QuestionRow).where(QuestionRow.question_set_id == set_id))}
            current = [evaluator_pb2.Question.FromString(r.message)
                       for r in sorted(rows.values(), key=lambda r: r.position)]
            changed = change(current)
            last = max((r.position for r in rows.values()), default=-1)
            kept = set()
            for question in changed:
                if question.question_id in rows:
                    rows[question.question_id].message = question.SerializeToString()
                else:
                    last += 1
                    question.question_id = question_id(set_id, last)
                    session.add(QuestionRow(question_id=question.question_id, question_set_id=set_id,
                                            position=last, message=question.SerializeToString()))
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
                raise NotFound(f"no question set {set_id}; ListQuestionSets shows the stored ones")
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
            set_id = session.scalar(select(QuestionSetRow.question_set_id)
                                    .where(QuestionSetRow.content_hash == content_hash)
                                    .order_by(QuestionSetRow.created_at.desc()).limit(1))
        return self.get_question_set(set_id) if set_id else None

    def list_question_sets(self, page_size: int, page_token: str) -> tuple[list[evaluator_pb2.QuestionSet], str]:
        size, offset = page_bounds(page_size, page_token)
        with self._sessions() as session:
            total = session.scalar(select(func.count()).select_from(QuestionSetRow))
            rows = session.scalars(
                select(QuestionSetRow).order_by(QuestionSetRow.created_at.desc(), QuestionSetRow.question_set_id)
                .offset(offset).limit(size)
            ).all()
            return [self._set_message(session, r) for r in rows], next_token(offset, size, len(rows), total)

    def delete_question_set(self, set_id: str) -> None:
        with self._sessions.begin() as session:
            row = self._changeable(session, set_id, "it stays")
            session.execute(delete(QuestionRow).where(QuestionRow.question_set_id == set_id))
            session.execute(delete(QuestionSetProvenanceRow).where(QuestionSetProvenanceRow.question_set_id == set_id))
            session.delete(row)

    # -- generations ------------------------------------------------------

    def save_generation(self, generation: evaluator_pb2.Generation) -> None:
        """Adds or replaces a generation's record (without its outcomes, its key never stored)."""
        stored = evaluator_pb2.Generation()
        stored.CopyFrom(generation)
        stored.ClearField("outcomes")
        stored.request.generator_model.api_key = ""
        with self._sessions.begin() as session:
            row = session.get(GenerationRow, generation.generation_id)
            if row is None:
                session.add(GenerationRow(
                    generation_id=generation.generation_id, state=generation.state,
                    created_at=generation.created_at.ToDatetime(tzinfo=utcnow().tzinfo),
                    message=stored.SerializeToString()))
            else:
                row.state, row.message = generation.state, stored.SerializeToString()

    def generation(self, generation_id: str) -> evaluator_pb2.Generation:
        """The stored generation without its outcomes."""
        return self._stored(GenerationRow, generation_id, "generation",
                            "GenerateQuestionSet's first progress names its id", evaluator_pb2.Generation)

    def generation_ids_in_state(self, state: int) -> list[str]:
        return self._ids_in_state(GenerationRow.generation_id, GenerationRow.state, state)

    def _stored(self, table, key: str, what: str, hint: str, message_type):
        """The message stored in `table`'s row `key`; INVALID_ARGUMENT when empty, NOT_FOUND when absent."""
        if not key:
            raise InvalidArgument(f"{what}_id is empty")
        with self._sessions() as session:
            row = session.get(table, key)
            if row is None:
                raise NotFound(f"no {what} {key}; {hint}")
            return message_type.FromString(row.message)

    def _ids_in_state(self, column, state_column, state: int) -> list[str]:
        with self._sessions() as session:
            return list(session.scalars(select(column).where(state_column == state)))

    def save_outcome(self, generation_id: str, outcome: evaluator_pb2.PassageOutcome) -> None:
        with self._sessions.begin() as session:
            session.add(PassageOutcomeRow(generation_id=generation_id, passage_number=outcome.passage_number,
                                          message=outcome.SerializeToString()))

    def outcomes(self, generation_id: str) -> list[evaluator_pb2.PassageOutcome]:
        """Every finished passage, in passage order."""
        with self._sessions() as session:
            rows = session.scalars(select(PassageOutcomeRow).where(PassageOutcomeRow.generation_id == generation_id)
                                   .order_by(PassageOutcomeRow.passage_number)).all()
            return [evaluator_pb2.PassageOutcome.FromString(r.message) for r in rows]

    # -- experiments ------------------------------------------------------

    def add_experiment(self, experiment: evaluator_pb2.Experiment) -> None:
        with self._sessions.begin() as session:
            session.add(ExperimentRow(
                experiment_id=experiment.experiment_id, name=experiment.config.name,
                question_set_id=experiment.config.question_set_id, state=experiment.state,
                created_at=experiment.created_at.ToDatetime(tzinfo=utcnow().tzinfo), error=experiment.error,
                message=_without_results(experiment),
            ))

    def save_experiment(self, experiment: evaluator_pb2.Experiment) -> None:
        finished = experiment.finished_at.ToDatetime(tzinfo=utcnow().tzinfo) if experiment.HasField("finished_at") else None
        with self._sessions.begin() as session:
            session.execute(
                update(ExperimentRow).where(ExperimentRow.experiment_id == experiment.experiment_id).values(
                    state=experiment.state, error=experiment.error, finished_at=finished,
                    message=_without_results(experiment),
                )
            )

    def experiment(self, experiment_id: str) -> evaluator_pb2.Experiment:
        """The stored experiment without its per-question results."""
        return self._stored(ExperimentRow, experiment_id, "experiment", "ListExperiments shows the stored ones",
                            evaluator_pb2.Experiment)

    def list_experiments(self, page_size: int, page_token: str) -> tuple[list[evaluator_pb2.Experiment], str]:
        size, offset = page_bounds(page_size, page_token)
        with self._sessions() as session:
            total = session.scalar(select(func.count()).select_from(ExperimentRow))
            rows = session.scalars(
                select(ExperimentRow).order_by(ExperimentRow.created_at.desc(), ExperimentRow.experiment_id)
                .offset(offset).limit(size)
            ).all()
            return [evaluator_pb2.Experiment.FromString(r.message) for r in rows], next_token(
                offset, size, len(rows), total
            )

    def experiment_ids_in_state(self, state: int) -> list[str]:
        return self._ids_in_state(ExperimentRow.experiment_id, ExperimentRow.state, state)

    def save_result(self, experiment_id: str, position: int, result: evaluator_pb2.QuestionResult) -> None:
        with self._sessions.begin() as session:
            session.add(QuestionResultRow(
                experiment_id=experiment_id, run_key=result.run_key, question_id=result.question_id,
                position=position, message=result.SerializeToString(),
            ))

    def results(self, experiment_id: str) -> list[evaluator_pb2.QuestionResult]:
        """Every finished question, in run order then question order."""
        with self._sessions() as session:
            rows = session.scalars(
                select(QuestionResultRow).where(QuestionResultRow.experiment_id == experiment_id)
                .order_by(QuestionResultRow.result_id)
            ).all()
            return [evaluator_pb2.QuestionResult.FromString(r.message) for r in rows]

    def done_keys(self, experiment_id: str) -> set[tuple[str, str]]:
        with self._sessions() as session:
            rows = session.execute(
                select(QuestionResultRow.run_key, QuestionResultRow.question_id)
                .where(QuestionResultRow.experiment_id == experiment_id)
            ).all()
            return {(r[0], r[1]) for r in rows}

    # -- queries and feedback ---------------------------------------------

    def add_query(self, row: QueryRow) -> None:
        with self._sessions.begin() as session:
            session.add(row)

    def query(self, query_id: str) -> QueryRow:
        with self._sessions() as session:
            row = session.get(QueryRow, query_id)
            if row is None:
                raise NotFound(f"no answered query {query_id}; feedback needs the query_id an Answer returned")
            session.expunge(row)
            return row

    def add_feedback(self, row: FeedbackRow) -> None:
        with self._sessions.begin() as session:
            session.add(row)

    def feedback_counts(self) -> list[tuple[str, bool, int]]:
        with self._sessions() as session:
            return [
                (r[0], bool(r[1]), int(r[2]))
                for r in session.execute(
                    select(FeedbackRow.strategy, FeedbackRow.thumbs_up, func.count())
                    .group_by(FeedbackRow.strategy, FeedbackRow.thumbs_up)
                ).all()
            ]


def _without_results(experiment: evaluator_pb2.Experiment) -> bytes:
    stored = evaluator_pb2.Experiment()
    stored.CopyFrom(experiment)
    stored.ClearField("results")
    for endpoint in (stored.config.answer_model, stored.config.judge_model):
        endpoint.api_key = ""
    return stored.SerializeToString()
