"""What every aggregate's store shares: the sessions, paging, a stored message by key.

Each write is its own short transaction, so a finished question is on disk
the moment it is saved (a restart keeps it).
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import sessionmaker

from chunklab.errors import InvalidArgument, NotFound
from chunklab.rpc.paging import check_page_size, decode_offset, encode_token


def page_bounds(page_size: int, page_token: str) -> tuple[int, int]:
    return check_page_size(page_size), decode_offset(page_token)


def next_token(offset: int, size: int, returned: int, total: int) -> str:
    end = offset + returned
    return encode_token(end) if returned == size and end < total else ""


class Store:
    def __init__(self, sessions: sessionmaker) -> None:
        self._sessions = sessions

    @property
    def sessions(self) -> sessionmaker:
        """The database's sessions, for the experiment leases (leases.py) that share it."""
        return self._sessions

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
