"""Leases: at most one evaluator replica runs an experiment (ADR 0065) or a question
generation (ADR 0153); each kind of work has its own table, and `kind` names it in what is said.

The replicas share one database (compose: PostgreSQL). The replica that
starts or resumes an experiment claims it there for `lease_s` seconds and
renews every lease it holds while the experiment is queued or running; it
drops the lease when the run ends. Another replica refuses to resume (or to
mark interrupted at its start-up) an experiment whose lease is live, naming
the holder. A replica that dies stops renewing: once its lease has run out
(at once when the holder's `host:pid` name is a process of this machine that
is gone, as for an evaluator restarted in place), any replica may resume the
experiment, and the first claim wins, so it continues exactly once. A claim is one conditional UPDATE (or an INSERT that
a racing claim turns into a key conflict), the same on SQLite and PostgreSQL.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass

from sqlalchemy import delete, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import sessionmaker

from chunklab.errors import FailedPrecondition
from chunklab.rpc.replicas import process_gone
from services.evaluator.storage.tables import ExperimentLeaseRow, GenerationLeaseRow

log = logging.getLogger("chunklab.evaluator")

# Each kind of leased work has its table, whose rows all name the work `work_id`.
TABLES = {"experiment": ExperimentLeaseRow, "generation": GenerationLeaseRow}
# Renewals come at most this far apart (and at least three per lease).
RENEW_S = 2.0


@dataclass(frozen=True)
class Lease:
    work_id: str
    replica: str
    expires_at: float
    cancel_requested: bool


class Leases:
    def __init__(
        self,
        sessions: sessionmaker,
        replica: str,
        lease_s: float,
        clock: Callable[[], float] = time.time,
        kind: str = "experiment",
    ) -> None:
        """kind: what is leased, as the refusals name it ("experiment", "generation")."""
        self._sessions = sessions
        self.replica = replica
        self.lease_s = lease_s
        self._clock = clock
        self.kind = kind
        self._row = TABLES[kind]

    def of(self, kind: str) -> Leases:
        """The same replica's leases on another kind of work (its own table)."""
        return Leases(self._sessions, self.replica, self.lease_s, self._clock, kind)

    def holder(self, work_id: str) -> Lease | None:
        """The live lease on an experiment: None when there is none, it ran out, or its
        holder is a process of this machine that is gone (a restarted evaluator)."""
        with self._sessions() as session:
            row = session.get(self._row, work_id)
            if row is None or not self._live(row):
                return None
            return Lease(row.work_id, row.replica, row.expires_at, row.cancel_requested)

    def _live(self, row) -> bool:
        return row.expires_at >= self._clock() and not process_gone(row.replica)

    def refusal(self, lease: Lease) -> FailedPrecondition:
        left = max(0.0, lease.expires_at - self._clock())
        return FailedPrecondition(
            f"{self.kind} {lease.work_id} is being run by evaluator replica {lease.replica}, which holds "
            f"its lease (renewed while it runs, {left:.0f}s left): it cannot be run here too; wait for it to "
            f"end, or cancel it; if that replica died, resume it once the lease runs out (at most "
            f"{self.lease_s:g}s after its last renewal)"
        )

    def elsewhere(self, work_id: str) -> Lease | None:
        """The live lease another replica holds on the work (it runs there), else None."""
        lease = self.holder(work_id)
        return lease if lease is not None and lease.replica != self.replica else None

    def check_free(self, work_id: str) -> None:
        """Raises FailedPrecondition naming the replica holding a live lease held by another replica."""
        lease = self.elsewhere(work_id)
        if lease is not None:
            raise self.refusal(lease)

    def claim(self, work_id: str, attempts: int = 3) -> None:
        """Takes the lease for this replica, or raises FailedPrecondition naming its live holder.
        Taking over a lease that ran out is a compare-and-set on its holder and expiry, so of
        two replicas claiming at once one wins."""
        values = {"replica": self.replica, "expires_at": self._clock() + self.lease_s, "cancel_requested": False}
        try:
            with self._sessions.begin() as session:
                row = session.get(self._row, work_id)
                if row is None:
                    session.add(self._row(work_id=work_id, **values))
                    return
                if row.replica == self.replica or not self._live(row):
                    taken = session.execute(
                        update(self._row)
                        .where(
                            self._row.work_id == work_id,
                            self._row.replica == row.replica,
                            self._row.expires_at == row.expires_at,
                        )
                        .values(**values)
                    ).rowcount
                    if taken:
                        return
        except IntegrityError:
            pass  # another replica's claim came first
        lease = self.holder(work_id)
        if lease is None and attempts > 1:  # it changed hands and ran out meanwhile
            return self.claim(work_id, attempts - 1)
        if lease is None:
            raise FailedPrecondition(f"{self.kind} {work_id} changed hands while this replica claimed it; try again")
        raise self.refusal(lease)

    def renew(self, only: Collection[str] | None = None) -> dict[str, bool]:
        """Extends every lease this replica holds (`only`: of these experiments); returns
        them, each with whether CancelExperiment asked (on another replica) for it to stop."""
        mine = [self._row.replica == self.replica]
        if only is not None:
            mine.append(self._row.work_id.in_(list(only)))
        with self._sessions.begin() as session:
            session.execute(update(self._row).where(*mine).values(expires_at=self._clock() + self.lease_s))
            rows = session.execute(select(self._row.work_id, self._row.cancel_requested).where(*mine)).all()
        return {work_id: cancel for work_id, cancel in rows}

    def request_cancel(self, work_id: str) -> Lease | None:
        """Asks the live holder to stop the experiment; returns its lease (None: nobody holds it)."""
        with self._sessions.begin() as session:
            changed = session.execute(
                update(self._row)
                .where(self._row.work_id == work_id, self._row.expires_at >= self._clock())
                .values(cancel_requested=True)
            ).rowcount
        return self.holder(work_id) if changed else None

    def release(self, work_id: str) -> None:
        """Drops the lease if it is this replica's, or has run out."""
        with self._sessions.begin() as session:
            session.execute(
                delete(self._row).where(
                    self._row.work_id == work_id,
                    or_(self._row.replica == self.replica, self._row.expires_at < self._clock()),
                )
            )


class Renewer:
    """Renews this replica's leases on a daemon thread (started with the first
    claim) and tells `stop` about an active experiment whose lease it lost, or
    that CancelExperiment on another replica asked to stop."""

    def __init__(self, leases: Leases, active: Callable[[], Collection[str]], stop: Callable[[str, str], None]) -> None:
        self._leases = leases
        self._active = active
        self._stop = stop
        self._every_s = min(RENEW_S, leases.lease_s / 3)
        self._closed = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def start(self) -> None:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name=f"{self._leases.kind}-leases", daemon=True)
                self._thread.start()

    def close(self) -> None:
        self._closed.set()

    def _loop(self) -> None:
        while not self._closed.wait(self._every_s):
            try:
                self.renew_once()
            except Exception:  # the database may be back at the next renewal
                log.exception("renewing the %s leases of replica %s failed", self._leases.kind, self._leases.replica)

    def renew_once(self) -> None:
        """Renews the leases of the experiments queued or running here, and no other: the
        lease of one that ended without releasing it (its database was locked) runs out."""
        active = set(self._active())
        if not active:
            return
        held = self._leases.renew(active)
        for work_id in active & set(self._active()):  # not one that ended meanwhile
            if work_id not in held:
                self._stop(work_id, "lost")
            elif held[work_id]:
                self._stop(work_id, "cancel")
