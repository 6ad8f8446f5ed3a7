"""Notes of writes in flight, so that a killed retriever leaves nothing half-written.

A write that touches both the vector index and the retriever's records (an
index set's points and its record, an archive and the swept document's
points) cannot be one transaction: the two live in different stores. So
before it starts, a note saying what it is about to do is made durable
under <data_dir>/retriever/journal/, and it is removed once both stores
hold the result. A note still there when the retriever starts belongs to a
write the process did not finish (kill -9, power loss, a store that failed
midway): the retriever settles it, undoing or finishing the write, before it
serves (RetrieverService.settle, Sweeper.settle).
"""

from __future__ import annotations

import errno
import json
import logging
import os
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from chunklab.errors import FailedPrecondition, ResourceExhausted, ServiceError

log = logging.getLogger("chunklab.retriever.journal")


@dataclass(frozen=True)
class Note:
    path: Path | None
    kind: str  # "index" or "archive"
    fields: dict
    started_at: float  # seconds since the epoch, when the note was made


class Journal:
    """The notes in one folder; with no folder (services built in a test's
    process) nothing is noted and nothing is pending."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder
        if folder is not None:
            folder.mkdir(parents=True, exist_ok=True)

    def begin(self, kind: str, **fields) -> Note:
        """Makes a note durable (written, fsync'd, renamed, folder fsync'd) before the write it tells of."""
        started_at = time.time()
        if self.folder is None:
            return Note(None, kind, fields, started_at)
        path = self.folder / f"{kind}-{uuid.uuid4().hex}.json"
        with durable_file(path, "the retriever's write journal", "nothing was written", "try again") as out:
            out.write(json.dumps({"kind": kind, "started_at": started_at, **fields}).encode())
        return Note(path, kind, fields, started_at)

    def end(self, note: Note) -> None:
        """The write is whole in both stores: its note goes."""
        if note.path is not None:
            note.path.unlink(missing_ok=True)
            fsync_folder(self.folder)

    def pending(self, kind: str) -> list[Note]:
        """Notes of this kind left by writes that did not end, oldest first.
        Half-written notes (a temporary file) stand for writes that never began."""
        if self.folder is None:
            return []
        for stray in self.folder.glob(".*.tmp"):
            stray.unlink(missing_ok=True)
        notes = []
        for path in self.folder.glob(f"{kind}-*.json"):
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                log.warning("write note %s is unreadable (%s); it is left for an operator", path, exc)
                continue
            started_at = float(data.pop("started_at", 0.0))
            data.pop("kind", None)
            notes.append(Note(path, kind, data, started_at))
        return sorted(notes, key=lambda n: n.started_at)


@contextmanager
def durable_file(path: Path, what: str, kept: str, retry: str) -> Iterator[BinaryIO]:
    """Writes the file at `path` whole or not at all: under a temporary name,
    fsync'd, renamed into place, the folder fsync'd. A write the file system
    refuses leaves no file and raises `write_failed` (what, kept, retry: its words)."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(temporary, "wb") as raw:
            yield raw
            raw.flush()
            os.fsync(raw.fileno())
        os.replace(temporary, path)
        fsync_folder(path.parent)
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        raise write_failed(what, path.parent, exc, kept, retry) from None


def write_failed(what: str, folder: Path, exc: OSError, kept: str, retry: str) -> ServiceError:
    """A write under `folder` that the file system refused, as a person can act on
    it: RESOURCE_EXHAUSTED when the disk (or a quota, or a size limit) is full,
    FAILED_PRECONDITION otherwise (a folder it may not write, a read-only disk)."""
    reason = f"{exc.strerror or 'the file system refused it'} ({errno.errorcode.get(exc.errno, 'OSError')})"
    said = f"{what} could not be written to {folder}: {reason}; {kept}"
    if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        return ResourceExhausted(f"{said}: free space there and {retry}")
    return FailedPrecondition(f"{said}: let the retriever write there and {retry}")


def fsync_folder(folder: Path) -> None:
    """Makes a rename or removal in the folder durable."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
