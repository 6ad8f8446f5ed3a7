"""The message broker that bulk loads go through (SPEC section 7, ADR 0037).

A bulk load puts one job per document on a queue; chunker workers, in any
chunker replica, take jobs off it, process them and report a result per
job. Two brokers stand behind one small interface, chosen by configuration
only (the same code runs both ways):

- `RedisBroker` (CHUNKLAB_BROKER_URL=redis://host:port/db): a Redis stream
  with one consumer group, so every job goes to one worker at a time;
  results are a list per bulk load.
- `EmbeddedBroker` (no URL): a SQLite file under the data folder, for one
  machine, as SQLite stands in for PostgreSQL and Qdrant Edge for a Qdrant
  server.

Both deliver at least once. A worker leases the job it takes for `lease_s`
seconds and renews the lease while it works (`renew`); a job whose lease
runs out (its worker died) is delivered again, to any worker, with its
delivery count. A worker that stops gives its job back (`release`): it is
delivered again at once, uncounted. `ack` ends a job. Processing a document again
replaces its chunks, so a second delivery does no harm. The embedded queue
also hands out at once, counted, a job whose worker's process on this
machine is gone (killed): a chunker started again goes on with it without
waiting for the lease (consumer names say `host:pid:`, `local_consumer`).
"""

from __future__ import annotations

import logging
import os
import socket
import sqlite3
import threading
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path

from chunklab.db.sessions import busy_error, is_busy
from chunklab.errors import Unavailable, logged
from chunklab.rpc.replicas import process_gone
from chunklab.settings import DB_BUSY_TIMEOUT_S

log = logging.getLogger(__name__)

# Bulk loads and their results are kept this long after they are submitted.
KEEP_S = 7 * 24 * 3600.0


def local_consumer(tag: str) -> str:
    """A consumer name that says which process of which machine it is."""
    return f"{socket.gethostname()}:{os.getpid()}:{tag}"


@dataclass(frozen=True)
class Delivery:
    message_id: str
    payload: bytes
    # 1 the first time the job is handed out, 2 after one lease ran out, ...
    deliveries: int


@dataclass(frozen=True)
class Batch:
    jobs_total: int
    submitted_at: float
    cancelled: bool = False


class Broker(ABC):
    """A queue of jobs with leases, and the results of each batch of jobs."""

    describe: str

    @abstractmethod
    def submit(self, batch_id: str, payloads: list[bytes]) -> None:
        """Records the batch and queues its jobs, all or none."""

    @abstractmethod
    def batch(self, batch_id: str) -> Batch | None:
        """The batch, or None if it is unknown or older than KEEP_S."""

    @abstractmethod
    def recent_batches(self, limit: int) -> list[tuple[str, Batch]]:
        """The batches submitted last, newest first (only those kept: KEEP_S)."""

    @abstractmethod
    def cancel(self, batch_id: str) -> None:
        """Marks the batch cancelled (workers then skip its jobs)."""

    @abstractmethod
    def receive(self, consumer: str, lease_s: float, wait_s: float) -> Delivery | None:
        """The next job, leased to `consumer` for `lease_s`: one whose lease
        ran out first, else a new one. Waits up to `wait_s` for one; None if
        none came. Every worker uses the same lease: with Redis, a lease runs
        out when the job has been idle that long for the worker asking."""

    @abstractmethod
    def renew(self, delivery: Delivery, consumer: str, lease_s: float) -> None:
        """Restarts the lease of a job the consumer still holds and works on."""

    @abstractmethod
    def ack(self, delivery: Delivery) -> None:
        """The job is done: it is never delivered again."""

    @abstractmethod
    def release(self, delivery: Delivery, consumer: str) -> None:
        """Gives back a job the consumer holds and will not finish (it is
        stopping): delivered again at once, and not counted as a delivery."""

    @abstractmethod
    def put_result(self, batch_id: str, payload: bytes) -> None:
        """Adds one job's result to its batch."""

    @abstractmethod
    def results(self, batch_id: str) -> list[bytes]:
        """Every result of the batch, in the order they came in."""

    @abstractmethod
    def queued(self) -> int:
        """Jobs not yet acknowledged, leased or not."""

    def close(self) -> None:  # noqa: B027 - optional: only a broker with connections has any to release
        """Releases connections."""


# -- Redis streams --------------------------------------------------------------


class RedisBroker(Broker):
    STREAM = "chunklab:jobs"
    GROUP = "chunkers"
    BATCHES = "chunklab:batches"  # batch ids scored by submission time

    def __init__(self, url: str) -> None:
        import redis

        self._redis = redis.Redis.from_url(url, socket_timeout=30, socket_connect_timeout=5)
        parsed = self._redis.connection_pool.connection_kwargs
        self.describe = f"Redis at {parsed.get('host', '?')}:{parsed.get('port', '?')}/{parsed.get('db', 0)}"
        self._errors, self._refused = redis.RedisError, redis.ResponseError
        self._unreachable = (redis.ConnectionError, redis.TimeoutError)
        self._grouped = False

    def _guard(self, call, *args):
        """Runs a call against Redis (the consumer group made first, once);
        a broker that is down or refuses becomes UNAVAILABLE."""
        try:
            if not self._grouped:
                try:
                    self._redis.xgroup_create(self.STREAM, self.GROUP, id="0", mkstream=True)
                except self._refused as exc:
                    if "BUSYGROUP" not in str(exc):
                        raise
                self._grouped = True
            return call(*args)
        except self._errors as exc:
            if "NOGROUP" in str(exc):  # Redis restarted without its data: make the group again next time
                self._grouped = False
                what = "lost its queue (Redis restarted without its data; it is set up again at the next call)"
            elif isinstance(exc, self._unreachable):
                what = "is unreachable or too slow"
            else:
                what = "refused a command"
            incident = logged(log, f"the message broker ({self.describe}) {what}")
            raise Unavailable(
                f"the message broker ({self.describe}) {what} (incident {incident}); the chunker "
                "log has the details. Check that Redis is running and reachable, then try again"
            ) from None

    def submit(self, batch_id: str, payloads: list[bytes]) -> None:
        def run() -> None:
            pipe = self._redis.pipeline(transaction=True)
            key = f"chunklab:batch:{batch_id}"
            now = time.time()
            pipe.hset(key, mapping={"jobs_total": len(payloads), "submitted_at": now})
            pipe.expire(key, int(KEEP_S))
            pipe.zadd(self.BATCHES, {batch_id: now})
            pipe.zremrangebyscore(self.BATCHES, 0, now - KEEP_S)
            for payload in payloads:
                pipe.xadd(self.STREAM, {"payload": payload})
            pipe.execute()

        self._guard(run)

    def batch(self, batch_id: str) -> Batch | None:
        return self._batch_from(self._guard(self._redis.hgetall, f"chunklab:batch:{batch_id}"))

    @staticmethod
    def _batch_from(found: dict) -> Batch | None:
        if not found:
            return None
        return Batch(int(found[b"jobs_total"]), float(found[b"submitted_at"]), found.get(b"cancelled") == b"1")

    def recent_batches(self, limit: int) -> list[tuple[str, Batch]]:
        def run() -> list[tuple[str, Batch]]:
            ids = [i.decode() for i in self._redis.zrevrange(self.BATCHES, 0, limit - 1)]
            pipe = self._redis.pipeline(transaction=False)
            for batch_id in ids:
                pipe.hgetall(f"chunklab:batch:{batch_id}")
            found = zip(ids, map(self._batch_from, pipe.execute()))
            return [(batch_id, batch) for batch_id, batch in found if batch is not None]

        return self._guard(run)

    def cancel(self, batch_id: str) -> None:
        self._guard(self._redis.hset, f"chunklab:batch:{batch_id}", "cancelled", "1")

    def receive(self, consumer: str, lease_s: float, wait_s: float) -> Delivery | None:
        return self._guard(self._receive, consumer, lease_s, wait_s)

    def _receive(self, consumer: str, lease_s: float, wait_s: float) -> Delivery | None:
        # A job whose lease ran out first: XAUTOCLAIM hands it to this consumer
        # and counts the delivery. It looks at a few pending entries per call,
        # so the scan goes on from its cursor until the pending list ends.
        cursor = "0-0"
        while True:
            cursor, claimed, _ = self._redis.xautoclaim(
                self.STREAM, self.GROUP, consumer, min_idle_time=int(lease_s * 1000), start_id=cursor, count=1
            )
            if claimed:
                message_id, fields = claimed[0]
                pending = self._redis.xpending_range(self.STREAM, self.GROUP, message_id, message_id, 1)
                deliveries = pending[0]["times_delivered"] if pending else 2
                return Delivery(message_id.decode(), fields[b"payload"], int(deliveries))
            if cursor in (b"0-0", "0-0"):
                break
        found = self._redis.xreadgroup(
            self.GROUP, consumer, {self.STREAM: ">"}, count=1, block=max(1, int(wait_s * 1000))
        )
        if not found:
            return None
        _, messages = found[0]
        message_id, fields = messages[0]
        return Delivery(message_id.decode(), fields[b"payload"], 1)

    def renew(self, delivery: Delivery, consumer: str, lease_s: float) -> None:
        # Claiming a job one holds resets its idle time (JUSTID: no new delivery
        # counted). A job another consumer took over is left to it: it must be
        # ours, and idle longer than a claim just made (renewals come every
        # quarter lease, so ours has been idle at least that long).
        def run() -> None:
            pending = self._redis.xpending_range(self.STREAM, self.GROUP, delivery.message_id, delivery.message_id, 1)
            if pending and pending[0]["consumer"].decode() == consumer:
                self._redis.xclaim(
                    self.STREAM, self.GROUP, consumer, int(lease_s * 1000 / 8), [delivery.message_id], justid=True
                )

        self._guard(run)

    def ack(self, delivery: Delivery) -> None:
        def run() -> None:
            pipe = self._redis.pipeline(transaction=True)
            pipe.xack(self.STREAM, self.GROUP, delivery.message_id)
            pipe.xdel(self.STREAM, delivery.message_id)
            pipe.execute()

        self._guard(run)

    def release(self, delivery: Delivery, consumer: str) -> None:
        # A stream entry's delivery count cannot be lowered: the job goes back
        # as a new entry, in the same transaction that removes the old one.
        def run() -> None:
            pending = self._redis.xpending_range(self.STREAM, self.GROUP, delivery.message_id, delivery.message_id, 1)
            if not pending or pending[0]["consumer"].decode() != consumer:
                return
            pipe = self._redis.pipeline(transaction=True)
            pipe.xack(self.STREAM, self.GROUP, delivery.message_id)
            pipe.xdel(self.STREAM, delivery.message_id)
            pipe.xadd(self.STREAM, {"payload": delivery.payload})
            pipe.execute()

        self._guard(run)

    def put_result(self, batch_id: str, payload: bytes) -> None:
        def run() -> None:
            pipe = self._redis.pipeline(transaction=True)
            key = f"chunklab:results:{batch_id}"
            pipe.rpush(key, payload)
            pipe.expire(key, int(KEEP_S))
            pipe.execute()

        self._guard(run)

    def results(self, batch_id: str) -> list[bytes]:
        return list(self._guard(self._redis.lrange, f"chunklab:results:{batch_id}", 0, -1))

    def queued(self) -> int:
        return int(self._guard(self._redis.xlen, self.STREAM))

    def close(self) -> None:
        self._redis.close()


# -- embedded: SQLite -----------------------------------------------------------


class EmbeddedBroker(Broker):
    """The same queue in one SQLite file (WAL), shared by the processes of one
    machine. Taking a job is one IMMEDIATE transaction, so two workers never
    lease the same job; waiting polls every POLL_S."""

    POLL_S = 0.2

    def __init__(self, path: Path, busy_timeout_s: float = DB_BUSY_TIMEOUT_S) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.describe = f"embedded queue ({path})"
        self._path = path
        self._busy_timeout_s = busy_timeout_s
        self._local = threading.local()
        self._connection().executescript(
            """
            CREATE TABLE IF NOT EXISTS jobs (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                payload BLOB NOT NULL,
                deliveries INTEGER NOT NULL DEFAULT 0,
                leased_until REAL NOT NULL DEFAULT 0,
                consumer TEXT
            );
            CREATE TABLE IF NOT EXISTS batches (
                id TEXT PRIMARY KEY, jobs_total INTEGER NOT NULL, submitted_at REAL NOT NULL,
                cancelled INTEGER NOT NULL DEFAULT 0
            );
            CREATE TABLE IF NOT EXISTS results (
                seq INTEGER PRIMARY KEY AUTOINCREMENT, batch_id TEXT NOT NULL, payload BLOB NOT NULL
            );
            CREATE INDEX IF NOT EXISTS results_by_batch ON results (batch_id, seq);
            """
        )

    def _connection(self) -> sqlite3.Connection:
        """This thread's connection, in autocommit mode (transactions are explicit)."""
        db = getattr(self._local, "db", None)
        if db is None:
            db = sqlite3.connect(
                self._path, timeout=self._busy_timeout_s, isolation_level=None, check_same_thread=False
            )
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            self._local.db = db
        return db

    def _db(self) -> _Transaction:
        return _Transaction(self._connection(), self.describe, self._busy_timeout_s)

    def submit(self, batch_id: str, payloads: list[bytes]) -> None:
        with self._db() as db:
            now = time.time()
            db.execute("DELETE FROM batches WHERE submitted_at < ?", (now - KEEP_S,))
            db.execute("DELETE FROM results WHERE batch_id NOT IN (SELECT id FROM batches)")
            db.execute(
                "INSERT INTO batches (id, jobs_total, submitted_at) VALUES (?, ?, ?)", (batch_id, len(payloads), now)
            )
            db.executemany("INSERT INTO jobs (payload) VALUES (?)", [(p,) for p in payloads])

    def batch(self, batch_id: str) -> Batch | None:
        with self._db() as db:
            row = db.execute(
                "SELECT jobs_total, submitted_at, cancelled FROM batches WHERE id = ? AND submitted_at >= ?",
                (batch_id, time.time() - KEEP_S),
            ).fetchone()
        return Batch(row[0], row[1], bool(row[2])) if row else None

    def recent_batches(self, limit: int) -> list[tuple[str, Batch]]:
        with self._db() as db:
            rows = db.execute(
                "SELECT id, jobs_total, submitted_at, cancelled FROM batches WHERE submitted_at >= ? "
                "ORDER BY submitted_at DESC, rowid DESC LIMIT ?",
                (time.time() - KEEP_S, limit),
            ).fetchall()
        return [(row[0], Batch(row[1], row[2], bool(row[3]))) for row in rows]

    def cancel(self, batch_id: str) -> None:
        with self._db() as db:
            db.execute("UPDATE batches SET cancelled = 1 WHERE id = ?", (batch_id,))

    def receive(self, consumer: str, lease_s: float, wait_s: float) -> Delivery | None:
        until = time.monotonic() + wait_s
        while True:
            with self._db() as db:
                now = time.time()
                row = db.execute(
                    "SELECT id, payload, deliveries FROM jobs WHERE leased_until < ? "
                    "ORDER BY leased_until > 0 DESC, id LIMIT 1",
                    (now,),
                ).fetchone() or self._orphaned(db, now)
                if row is not None:
                    db.execute(
                        "UPDATE jobs SET deliveries = deliveries + 1, leased_until = ?, consumer = ? WHERE id = ?",
                        (now + lease_s, consumer, row[0]),
                    )
                    return Delivery(str(row[0]), bytes(row[1]), row[2] + 1)
            if time.monotonic() >= until:
                return None
            time.sleep(min(self.POLL_S, max(0.0, until - time.monotonic())))

    @staticmethod
    def _orphaned(db: sqlite3.Connection, now: float) -> tuple | None:
        """A leased job whose worker's process is gone (chunklab.rpc.replicas.process_gone)."""
        for job_id, payload, deliveries, consumer in db.execute(
            "SELECT id, payload, deliveries, consumer FROM jobs WHERE leased_until >= ? ORDER BY id", (now,)
        ):
            if process_gone(consumer):
                return job_id, payload, deliveries
        return None

    def renew(self, delivery: Delivery, consumer: str, lease_s: float) -> None:
        with self._db() as db:
            db.execute(
                "UPDATE jobs SET leased_until = ? WHERE id = ? AND consumer = ?",
                (time.time() + lease_s, int(delivery.message_id), consumer),
            )

    def ack(self, delivery: Delivery) -> None:
        with self._db() as db:
            db.execute("DELETE FROM jobs WHERE id = ?", (int(delivery.message_id),))

    def release(self, delivery: Delivery, consumer: str) -> None:
        with self._db() as db:
            db.execute(
                "UPDATE jobs SET leased_until = 0, deliveries = deliveries - 1, consumer = NULL "
                "WHERE id = ? AND consumer = ?",
                (int(delivery.message_id), consumer),
            )

    def put_result(self, batch_id: str, payload: bytes) -> None:
        with self._db() as db:
            db.execute("INSERT INTO results (batch_id, payload) VALUES (?, ?)", (batch_id, payload))

    def results(self, batch_id: str) -> list[bytes]:
        with self._db() as db:
            rows = db.execute("SELECT payload FROM results WHERE batch_id = ? ORDER BY seq", (batch_id,)).fetchall()
        return [bytes(r[0]) for r in rows]

    def queued(self) -> int:
        with self._db() as db:
            return db.execute("SELECT COUNT(*) FROM jobs").fetchone()[0]

    def close(self) -> None:
        db = getattr(self._local, "db", None)
        if db is not None:
            db.close()
            self._local.db = None


class _Transaction:
    """`with` an IMMEDIATE transaction on a connection in autocommit mode; a
    failing database (locked too long, disk full) becomes UNAVAILABLE."""

    def __init__(self, db: sqlite3.Connection, describe: str, busy_timeout_s: float) -> None:
        self._db = db
        self._describe = describe
        self._busy_timeout_s = busy_timeout_s

    def _failed(self, exc: sqlite3.Error) -> Unavailable:
        if is_busy(exc):
            return busy_error(f"of the message broker ({self._describe})", self._busy_timeout_s)
        incident = logged(log, f"the message broker's database ({self._describe}) failed", exc)
        return Unavailable(
            f"the message broker's database ({self._describe}) failed (incident {incident}); the "
            "chunker log has the details. Check the data folder's disk, then try again"
        )

    def __enter__(self) -> sqlite3.Connection:
        try:
            self._db.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise self._failed(exc) from None
        return self._db

    def __exit__(self, kind, value, traceback) -> None:
        try:
            self._db.execute("COMMIT" if kind is None else "ROLLBACK")
        except sqlite3.Error as exc:
            raise self._failed(exc) from None
        if kind is not None and issubclass(kind, sqlite3.Error):
            raise self._failed(value) from None


def open_broker(url: str, data_dir: Path, busy_timeout_s: float = DB_BUSY_TIMEOUT_S) -> Broker:
    """Redis for a redis:// URL (checked by the settings); the embedded queue for none."""
    if url:
        return RedisBroker(url)
    return EmbeddedBroker(data_dir / "broker" / "queue.sqlite3", busy_timeout_s)
