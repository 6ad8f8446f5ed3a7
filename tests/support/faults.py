"""What the fault tests share: a SQLite file held locked by another writer,
a client stream that never ends, a stack whose models are the fake OpenAI
server (so services start in seconds), and waiting for a condition."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from chunklab.knobs import to_spec
from chunklab.v1 import documents_pb2
from chunklab_app.stack import Stack
from tests.support.fake_openai import FakeOpenAI

WAIT_S = 60.0  # how long a test waits for a service to react: generous, never a measured time
EMBEDDING_MODEL = "openai:fake"
FIXED_16 = to_spec("fixed_size", {"chunk_size": 16, "chunk_overlap": 0})
FIXED_24 = to_spec("fixed_size", {"chunk_size": 24, "chunk_overlap": 0})


@contextmanager
def locked(database: Path) -> Iterator[sqlite3.Connection]:
    """Another writer holding the database: BEGIN EXCLUSIVE until the block ends
    (in WAL mode readers go on, writers wait for the lock)."""
    holder = sqlite3.connect(database, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        yield holder
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def held_open(*messages) -> tuple[Iterator, threading.Event]:
    """A client stream that sends these messages, then nothing until the event is set."""
    release = threading.Event()

    def stream():
        yield from messages
        release.wait(WAIT_S * 10)

    return stream(), release


def wait_for(condition, what: str, timeout_s: float = WAIT_S) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.05)


def upload(lab, data: bytes, name: str, collection: str) -> documents_pb2.Document:
    return lab.upload_document(data, name=name, collection=collection, language="en").document


def fixed_size_sets(lab, document_id: str) -> list[tuple[str, bool, int]]:
    """The document's fixed_size index sets as (config_id, active, points)."""
    return sorted(
        (s.config_id, s.active, s.points) for s in lab.list_indexed_sets("fixed_size", document_id, EMBEDDING_MODEL)
    )


def fake_model_stack(data_dir: Path, embedder: FakeOpenAI, llm: FakeOpenAI | None = None, **env: str) -> Stack:
    """A stack that embeds with `embedder` (16 dimensions) and, if given, chats with `llm`."""
    extra = {
        "CHUNKLAB_EMBEDDING_BASE_URL": embedder.base_url,
        "CHUNKLAB_EMBEDDING_MODEL": EMBEDDING_MODEL,
        "CHUNKLAB_SHUTDOWN_GRACE_S": "1",
        "CHUNKLAB_SWEEP_INTERVAL_S": "0",
        **env,
    }
    if llm is not None:
        extra.update(CHUNKLAB_LLM_BASE_URL=llm.base_url, CHUNKLAB_LLM_MODEL="fake")
    return Stack(data_dir=data_dir, extra_env=extra)
