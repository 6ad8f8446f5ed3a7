"""Experiments and their per-question results, in protobuf terms (API keys never stored)."""

from __future__ import annotations

from sqlalchemy import delete, func, select, update

from chunklab.timeutil import utcnow
from chunklab.v1 import evaluator_pb2
from services.evaluator.storage.base import Store, next_token, page_bounds
from services.evaluator.storage.tables import ExperimentRow, QuestionResultRow


class ExperimentStore(Store):
    def add_experiment(self, experiment: evaluator_pb2.Experiment) -> None:
        with self._sessions.begin() as session:
            session.add(
                ExperimentRow(
                    experiment_id=experiment.experiment_id,
                    name=experiment.config.name,
                    question_set_id=experiment.config.question_set_id,
                    state=experiment.state,
                    created_at=experiment.created_at.ToDatetime(tzinfo=utcnow().tzinfo),
                    error=experiment.error,
                    message=_without_results(experiment),
                )
            )

    def save_experiment(self, experiment: evaluator_pb2.Experiment) -> None:
        with self._sessions.begin() as session:
            self._update_experiment(session, experiment)

    def save_progress(
        self, experiment: evaluator_pb2.Experiment, results: list[tuple[int, evaluator_pb2.QuestionResult]]
    ) -> None:
        """Finished questions ((position, result) each) and the experiment, in one transaction."""
        with self._sessions.begin() as session:
            session.add_all(
                QuestionResultRow(
                    experiment_id=experiment.experiment_id,
                    run_key=result.run_key,
                    question_id=result.question_id,
                    position=position,
                    message=result.SerializeToString(),
                )
                for position, result in results
            )
            self._update_experiment(session, experiment)

    @staticmethod
    def _update_experiment(session, experiment: evaluator_pb2.Experiment) -> None:
        finished = (
            experiment.finished_at.ToDatetime(tzinfo=utcnow().tzinfo) if experiment.HasField("finished_at") else None
        )
        session.execute(
            update(ExperimentRow)
            .where(ExperimentRow.experiment_id == experiment.experiment_id)
            .values(
                state=experiment.state,
                error=experiment.error,
                finished_at=finished,
                message=_without_results(experiment),
            )
        )

    def experiment(self, experiment_id: str) -> evaluator_pb2.Experiment:
        """The stored experiment without its per-question results."""
        return self._stored(
            ExperimentRow,
            experiment_id,
            "experiment",
            "the Experiments page lists the stored ones",
            evaluator_pb2.Experiment,
        )

    def list_experiments(self, page_size: int, page_token: str) -> tuple[list[evaluator_pb2.Experiment], str]:
        size, offset = page_bounds(page_size, page_token)
        with self._sessions() as session:
            total = session.scalar(select(func.count()).select_from(ExperimentRow))
            rows = session.scalars(
                select(ExperimentRow)
                .order_by(ExperimentRow.created_at.desc(), ExperimentRow.experiment_id)
                .offset(offset)
                .limit(size)
            ).all()
            return [evaluator_pb2.Experiment.FromString(r.message) for r in rows], next_token(
                offset, size, len(rows), total
            )

    def experiment_ids_in_state(self, state: int) -> list[str]:
        return self._ids_in_state(ExperimentRow.experiment_id, ExperimentRow.state, state)

    def save_result(self, experiment_id: str, position: int, result: evaluator_pb2.QuestionResult) -> None:
        with self._sessions.begin() as session:
            session.add(
                QuestionResultRow(
                    experiment_id=experiment_id,
                    run_key=result.run_key,
                    question_id=result.question_id,
                    position=position,
                    message=result.SerializeToString(),
                )
            )

    def results(self, experiment_id: str) -> list[evaluator_pb2.QuestionResult]:
        """Every finished question, in run order then question order."""
        with self._sessions() as session:
            rows = session.scalars(
                select(QuestionResultRow)
                .where(QuestionResultRow.experiment_id == experiment_id)
                .order_by(QuestionResultRow.result_id)
            ).all()
            return [evaluator_pb2.QuestionResult.FromString(r.message) for r in rows]

    def forget_failed_results(self, experiment_id: str) -> int:
        """Deletes the results that carry an error (a resume asks those questions again);
        returns how many."""
        with self._sessions.begin() as session:
            rows = session.execute(
                select(QuestionResultRow.result_id, QuestionResultRow.message).where(
                    QuestionResultRow.experiment_id == experiment_id
                )
            ).all()
            failed = [r[0] for r in rows if evaluator_pb2.QuestionResult.FromString(r[1]).error]
            if failed:
                session.execute(delete(QuestionResultRow).where(QuestionResultRow.result_id.in_(failed)))
            return len(failed)

    def done_keys(self, experiment_id: str) -> set[tuple[str, str]]:
        with self._sessions() as session:
            rows = session.execute(
                select(QuestionResultRow.run_key, QuestionResultRow.question_id).where(
                    QuestionResultRow.experiment_id == experiment_id
                )
            ).all()
            return {(r[0], r[1]) for r in rows}


def _without_results(experiment: evaluator_pb2.Experiment) -> bytes:
    stored = evaluator_pb2.Experiment()
    stored.CopyFrom(experiment)
    stored.ClearField("results")
    for endpoint in (stored.config.answer_model, stored.config.judge_model):
        endpoint.api_key = ""
    return stored.SerializeToString()
