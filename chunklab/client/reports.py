"""Reports from the evaluator, written to disk piece by piece, at any size.

GetReport streams a header (file name, content type, view), then the file's
bytes (evaluator.proto). Each piece is written as it comes and dropped, so a
report is never held whole; it goes to `<name>.part` beside its target and
takes its name only once the stream has ended OK, so a failed or cancelled
download never leaves half a report where the report should be.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Self

from chunklab.client.errors import ClientError
from chunklab.v1 import evaluator_pb2


def report_path(target: str | os.PathLike, file_name: str) -> Path:
    """Where a report goes: into a folder when the target is one, ends with a slash or has no
    .html ending (made if missing, the file named as the evaluator names it), else that file."""
    text = os.fspath(target)
    path = Path(text)
    if path.is_dir() or text.endswith(("/", "\\")) or path.suffix.lower() not in (".html", ".htm"):
        return path / file_name
    return path


@dataclass(frozen=True)
class SavedReport:
    """A report on disk: where, what the evaluator said it is, its size and in how many pieces it came."""

    path: Path
    report: evaluator_pb2.Report
    size_bytes: int
    pieces: int


class ReportDownload:
    """A GetReport stream whose header is read: `report` says what follows, `data()` yields the
    file's bytes as they come and `save(path)` writes them. Closing it (or leaving its `with`
    block) before the end cancels the call."""

    def __init__(self, report: evaluator_pb2.Report, messages: Iterator[evaluator_pb2.ReportPiece]) -> None:
        self.report = report
        self._messages = messages

    def data(self) -> Iterator[bytes]:
        for message in self._messages:
            if message.WhichOneof("piece") != "data":
                raise ClientError("the evaluator sent a second header in the middle of a report", service="evaluator")
            yield message.data

    def save(self, path: str | os.PathLike) -> SavedReport:
        """Writes the rest of the stream to path (its folder made if missing), piece by piece."""
        path = Path(path)
        partial = path.with_name(path.name + ".part")
        size = count = 0
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(partial, "wb") as file:
                for data in self.data():
                    file.write(data)
                    size += len(data)
                    count += 1
            os.replace(partial, path)
        except OSError as exc:
            _remove(partial)
            raise ClientError(
                f"cannot write the report to {path}: {exc.strerror or 'the file system refused it'}"
            ) from None
        except BaseException:
            _remove(partial)
            raise
        return SavedReport(path, self.report, size, count)

    def close(self) -> None:
        close = getattr(self._messages, "close", None)
        if close is not None:
            close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _remove(partial: Path) -> None:
    with contextlib.suppress(OSError):
        partial.unlink(missing_ok=True)


def opened(messages: Iterator[evaluator_pb2.ReportPiece]) -> ReportDownload:
    """The download of a GetReport stream, once its first message (the header) is read; a
    refusal (unknown or unfinished experiment) is raised here, before any file is made."""
    first = next(messages, None)
    if first is None or first.WhichOneof("piece") != "header":
        close = getattr(messages, "close", None)
        if close is not None:
            close()
        raise ClientError("the evaluator's report did not start with its header", service="evaluator")
    return ReportDownload(first.header, messages)
