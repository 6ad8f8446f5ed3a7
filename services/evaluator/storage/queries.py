"""The Query page's answered queries and the feedback on them."""

from __future__ import annotations

from sqlalchemy import func, select

from chunklab.errors import NotFound
from services.evaluator.storage.base import Store
from services.evaluator.storage.tables import FeedbackRow, QueryRow


class QueryStore(Store):
    def add_query(self, row: QueryRow) -> None:
        with self._sessions.begin() as session:
            session.add(row)

    def query(self, query_id: str) -> QueryRow:
        with self._sessions() as session:
            row = session.get(QueryRow, query_id)
            if row is None:
                raise NotFound(
                    f"no answered query {query_id}; feedback rates a question asked on the Query page (or an Answer call)"
                )
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
                    select(FeedbackRow.strategy, FeedbackRow.thumbs_up, func.count()).group_by(
                        FeedbackRow.strategy, FeedbackRow.thumbs_up
                    )
                ).all()
            ]
