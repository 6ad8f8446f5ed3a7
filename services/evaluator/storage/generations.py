"""Question generations and their passages' outcomes, in protobuf terms."""

from __future__ import annotations

from sqlalchemy import select

from chunklab.timeutil import utcnow
from chunklab.v1 import evaluator_pb2
from services.evaluator.storage.base import Store
from services.evaluator.storage.tables import GenerationRow, PassageOutcomeRow


class GenerationStore(Store):
    def save_generation(self, generation: evaluator_pb2.Generation) -> None:
        """Adds or replaces a generation's record (without its outcomes, its key never stored)."""
        stored = evaluator_pb2.Generation()
        stored.CopyFrom(generation)
        stored.ClearField("outcomes")
        stored.request.generator_model.api_key = ""
        with self._sessions.begin() as session:
            row = session.get(GenerationRow, generation.generation_id)
            if row is None:
                session.add(
                    GenerationRow(
                        generation_id=generation.generation_id,
                        state=generation.state,
                        created_at=generation.created_at.ToDatetime(tzinfo=utcnow().tzinfo),
                        message=stored.SerializeToString(),
                    )
                )
            else:
                row.state, row.message = generation.state, stored.SerializeToString()

    def generation(self, generation_id: str) -> evaluator_pb2.Generation:
        """The stored generation without its outcomes."""
        return self._stored(
            GenerationRow,
            generation_id,
            "generation",
            "a generation's id is shown as it starts (its first progress line) and kept in the provenance of "
            "the question set it made",
            evaluator_pb2.Generation,
        )

    def generation_ids_in_state(self, state: int) -> list[str]:
        return self._ids_in_state(GenerationRow.generation_id, GenerationRow.state, state)

    def save_outcome(self, generation_id: str, outcome: evaluator_pb2.PassageOutcome) -> None:
        with self._sessions.begin() as session:
            session.add(
                PassageOutcomeRow(
                    generation_id=generation_id,
                    passage_number=outcome.passage_number,
                    message=outcome.SerializeToString(),
                )
            )

    def outcomes(self, generation_id: str) -> list[evaluator_pb2.PassageOutcome]:
        """Every finished passage, in passage order."""
        with self._sessions() as session:
            rows = session.scalars(
                select(PassageOutcomeRow)
                .where(PassageOutcomeRow.generation_id == generation_id)
                .order_by(PassageOutcomeRow.passage_number)
            ).all()
            return [evaluator_pb2.PassageOutcome.FromString(r.message) for r in rows]
