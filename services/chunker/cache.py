"""A content-hash cache of embeddings: an unchanged text is never embedded twice.

Key: sha256(model + "\\0" + text), where "model" is the provider's cache
namespace (its name, plus the endpoint for remote models). In front, an
in-memory LRU; behind it, SQLite under the data folder, one table per model,
vectors as float32 bytes, each row with when it was last used: written, read
from disk, or (at most every TOUCH_EVERY_S, in one statement per call) found in
the memory tier, so that a vector kept hot in memory does not age out on disk.
With a size limit, the rows used longest ago are deleted (down to 90% of the
limit) whenever a write takes the live data past it; SQLite reuses the freed
pages, so the file stays about the size of the limit.

It is a cache, not state: deleting the file only costs time, and a file that
cannot be read or written is set aside and the cache carries on in memory.
Only document embeddings (passages) go through it; the retriever keeps its
own cache of query embeddings.
"""

from __future__ import annotations

import hashlib
import logging
import sqlite3
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from chunklab.db.sessions import is_busy
from chunklab.embeddings.base import EmbeddingProvider
from chunklab.settings import DB_BUSY_TIMEOUT_S

log = logging.getLogger("chunklab.chunker.cache")

# 50,000 vectors of 384 float32 are about 77 MB.
MEMORY_ITEMS = 50_000
# Texts per call to the model between two progress reports. Misses are
# embedded in order of length, so each call pads little.
EMBED_GROUP = 256
# Keys per SELECT (SQLite's limit on bound parameters is far above this).
LOOKUP_BATCH = 500
# A vector found in memory has its disk row marked used again at most this often.
TOUCH_EVERY_S = 600.0
# Past the size limit, delete down to this share of it (so that eviction runs
# once in a while, not on every write).
EVICT_TO = 0.9


@dataclass
class Embedded:
    vectors: np.ndarray  # one unit-length float32 row per text, in order
    cached: int  # texts whose vector came from the cache
    tokens: int  # tokens the model was paid for (cached texts cost none)


def content_key(namespace: str, text: str) -> bytes:
    return hashlib.sha256(f"{namespace}\0{text}".encode("utf-8", "surrogatepass")).digest()


class _Disk:
    """The SQLite store: a table per model namespace, (key BLOB, vector BLOB,
    used INTEGER: microseconds since the epoch of the last write or read)."""

    def __init__(self, path: Path, max_bytes: int = 0, busy_timeout_s: float = DB_BUSY_TIMEOUT_S) -> None:
        self.path = path
        self.max_bytes = max_bytes
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None, timeout=busy_timeout_s)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS models (namespace TEXT PRIMARY KEY, tbl TEXT NOT NULL)")
        self._tables: dict[str, str] = {}

    def table(self, namespace: str) -> str:
        tbl = self._tables.get(namespace)
        if tbl is None:
            tbl = "v_" + hashlib.sha256(namespace.encode()).hexdigest()[:16]
            self._db.execute(
                f"CREATE TABLE IF NOT EXISTS {tbl} "
                "(key BLOB PRIMARY KEY, vector BLOB NOT NULL, used INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID"
            )
            columns = {row[1] for row in self._db.execute(f"PRAGMA table_info({tbl})")}
            if "used" not in columns:  # a cache file from before the size limit
                self._db.execute(f"ALTER TABLE {tbl} ADD COLUMN used INTEGER NOT NULL DEFAULT 0")
            self._db.execute("INSERT OR IGNORE INTO models VALUES (?, ?)", (namespace, tbl))
            self._tables[namespace] = tbl
        return tbl

    def get(self, namespace: str, keys: list[bytes]) -> dict[bytes, bytes]:
        tbl = self.table(namespace)
        found: dict[bytes, bytes] = {}
        for start in range(0, len(keys), LOOKUP_BATCH):
            part = keys[start : start + LOOKUP_BATCH]
            marks = ",".join("?" * len(part))
            found.update(self._db.execute(f"SELECT key, vector FROM {tbl} WHERE key IN ({marks})", part))
        if found and self.max_bytes:
            self._touch(tbl, list(found))
        return found

    def touch(self, namespace: str, keys: list[bytes]) -> None:
        """Marks rows used now (rows that are not there are left alone)."""
        if keys and self.max_bytes:
            self._touch(self.table(namespace), keys)

    def put(self, namespace: str, items: list[tuple[bytes, bytes]]) -> None:
        tbl = self.table(namespace)
        now = _now_us()
        with self._transaction():
            self._db.executemany(f"INSERT OR REPLACE INTO {tbl} VALUES (?, ?, ?)", [(k, v, now) for k, v in items])
        if self.max_bytes and self.live_bytes() > self.max_bytes:
            self._evict()

    def live_bytes(self) -> int:
        """Bytes of the pages in use (freed pages, which SQLite reuses, not counted)."""
        pages = self._db.execute("PRAGMA page_count").fetchone()[0]
        free = self._db.execute("PRAGMA freelist_count").fetchone()[0]
        return (pages - free) * self._db.execute("PRAGMA page_size").fetchone()[0]

    def _touch(self, tbl: str, keys: list[bytes]) -> None:
        now = _now_us()
        with self._transaction():
            for start in range(0, len(keys), LOOKUP_BATCH):
                part = keys[start : start + LOOKUP_BATCH]
                self._db.execute(f"UPDATE {tbl} SET used = ? WHERE key IN ({','.join('?' * len(part))})", [now, *part])

    def _evict(self) -> None:
        """Deletes the rows used longest ago, across every model's table, until
        the live data is at most EVICT_TO of the limit."""
        tables = [row[0] for row in self._db.execute("SELECT tbl FROM models")]
        for _ in range(4):  # rows differ in size: a second round corrects the estimate
            live = self.live_bytes()
            if live <= self.max_bytes * EVICT_TO or not tables:
                return
            rows = sum(self._db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables)
            if not rows:
                return
            surplus = min(rows, max(1, int(rows * (live - self.max_bytes * EVICT_TO) / live) + 1))
            union = " UNION ALL ".join(f"SELECT used FROM {t}" for t in tables)
            (threshold,) = self._db.execute(
                f"SELECT used FROM ({union}) ORDER BY used LIMIT 1 OFFSET ?", (surplus - 1,)
            ).fetchone()
            with self._transaction():
                for t in tables:
                    self._db.execute(f"DELETE FROM {t} WHERE used <= ?", (threshold,))
            log.info("embedding cache over %d bytes: forgot the %d vectors used longest ago", self.max_bytes, surplus)

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        self._db.execute("BEGIN")
        try:
            yield
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise

    def close(self) -> None:
        self._db.close()


def _now_us() -> int:
    return time.time_ns() // 1000


class EmbeddingCache:
    def __init__(
        self,
        path: Path | None,
        memory_items: int = MEMORY_ITEMS,
        max_bytes: int = 0,
        clock: Callable[[], float] = time.monotonic,
        busy_timeout_s: float = DB_BUSY_TIMEOUT_S,
    ) -> None:
        """max_bytes: the most vector data kept on disk (0: no limit); busy_timeout_s:
        how long a read or write waits for another writer's lock before it skips the disk."""
        self._memory: OrderedDict[bytes, np.ndarray] = OrderedDict()
        # When each vector in memory last had its disk row marked used.
        self._marked: dict[bytes, float] = {}
        self._clock = clock
        self._memory_items = memory_items
        self._lock = threading.Lock()
        self._disk: _Disk | None = None
        if path is not None:
            self._disk = self._open(path, max_bytes, busy_timeout_s)

    @staticmethod
    def _open(path: Path, max_bytes: int, busy_timeout_s: float) -> _Disk | None:
        for attempt in range(2):
            try:
                return _Disk(path, max_bytes, busy_timeout_s)
            except sqlite3.DatabaseError as exc:
                if attempt:
                    log.warning("embedding cache %s unusable (%s); caching in memory only", path, exc)
                    return None
                aside = path.with_name(f"{path.name}.broken-{int(time.time())}")
                log.warning("embedding cache %s unreadable (%s); moved to %s, starting empty", path, exc, aside)
                try:
                    path.replace(aside)
                    for journal in ("-wal", "-shm"):  # a stale journal must not be replayed into the new file
                        path.with_name(path.name + journal).unlink(missing_ok=True)
                except OSError:
                    return None
        return None

    # -- the two tiers ----------------------------------------------------

    def _lookup(self, namespace: str, keys: list[bytes], dimension: int | None) -> dict[bytes, np.ndarray]:
        found: dict[bytes, np.ndarray] = {}
        with self._lock:
            now = self._clock()
            stale: list[bytes] = []
            for key in keys:
                vector = self._memory.get(key)
                if vector is not None:
                    self._memory.move_to_end(key)
                    found[key] = vector
                    if now - self._marked.get(key, -TOUCH_EVERY_S) >= TOUCH_EVERY_S:
                        stale.append(key)
            if stale and self._disk is not None:
                try:
                    self._disk.touch(namespace, stale)
                    self._marked.update(dict.fromkeys(stale, now))
                except sqlite3.Error as exc:
                    self._disk_failed(exc)
            missing = [k for k in keys if k not in found]
            if missing and self._disk is not None:
                try:
                    stored = self._disk.get(namespace, missing)
                except sqlite3.Error as exc:
                    self._disk_failed(exc)
                    stored = {}
                for key, blob in stored.items():
                    vector = np.frombuffer(blob, dtype=np.float32)
                    if dimension is not None and vector.shape[0] != dimension:
                        continue  # written by another model of the same name: a miss
                    found[key] = vector
                    self._remember(key, vector, now)
        return found

    def _store(self, namespace: str, items: dict[bytes, np.ndarray]) -> None:
        with self._lock:
            now = self._clock()
            for key, vector in items.items():
                self._remember(key, vector, now)
            if self._disk is not None and items:
                try:
                    self._disk.put(
                        namespace, [(k, np.ascontiguousarray(v, dtype=np.float32).tobytes()) for k, v in items.items()]
                    )
                except sqlite3.Error as exc:
                    self._disk_failed(exc)

    def _remember(self, key: bytes, vector: np.ndarray, marked: float) -> None:
        """Keeps a vector in memory; its disk row was marked used at `marked`."""
        self._memory[key] = vector
        self._memory.move_to_end(key)
        self._marked[key] = marked
        while len(self._memory) > self._memory_items:
            self._marked.pop(self._memory.popitem(last=False)[0], None)

    def _disk_failed(self, exc: Exception) -> None:
        """A lock another writer held too long skips this one lookup or store;
        any other failure leaves the disk tier for the rest of the process."""
        if is_busy(exc):
            log.warning("embedding cache on disk is locked by another writer (%s); this read or write skipped it", exc)
            return
        log.warning("embedding cache on disk failed (%s); caching in memory only", exc)
        try:
            self._disk.close()
        except sqlite3.Error:
            pass  # closing a store already given up on: its failure was logged just above, nothing more is lost
        self._disk = None

    def clear_memory(self) -> None:
        """Forgets the in-memory tier (the disk tier stays): a fresh process, for benchmarks."""
        with self._lock:
            self._memory.clear()
            self._marked.clear()

    def close(self) -> None:
        with self._lock:
            if self._disk is not None:
                self._disk.close()
                self._disk = None

    # -- what callers use -------------------------------------------------

    def embed(
        self,
        provider: EmbeddingProvider,
        texts: list[str],
        progress: Callable[[int, int], None] | None = None,
    ) -> Embedded:
        """Vectors for texts as passages: from the cache where known, else from the model.

        A text that appears twice is embedded once. progress(done, total) is
        called after each call to the model, counting texts.
        """
        if not texts:
            return Embedded(np.zeros((0, provider.known_dimension() or 0), dtype=np.float32), 0, 0)
        namespace = provider.cache_namespace
        keys = [content_key(namespace, text) for text in texts]
        uses = Counter(keys)
        text_of = dict(zip(keys, texts))
        found = self._lookup(namespace, list(uses), provider.known_dimension())
        misses = sorted((k for k in uses if k not in found), key=lambda k: len(text_of[k]))
        cached = len(texts) - sum(uses[k] for k in misses)
        done, used = cached, 0
        for start in range(0, len(misses), EMBED_GROUP):
            group = misses[start : start + EMBED_GROUP]
            vectors, group_tokens = provider.embed_documents_counted([text_of[k] for k in group])
            used += group_tokens
            fresh = dict(zip(group, vectors))
            self._store(namespace, fresh)
            found.update(fresh)
            done += sum(uses[k] for k in group)
            if progress is not None:
                progress(done, len(texts))
        return Embedded(np.stack([found[k] for k in keys]), cached, used)
