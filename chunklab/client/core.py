"""What every group of calls shares: the settings, lazily opened stubs, the
deadline on each call, failures turned into ClientError, paging and
client-streamed uploads."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Self

import grpc
from google.protobuf.message import Message

from chunklab.client.errors import ClientError
from chunklab.rpc import channels, limits
from chunklab.rpc.paging import MAX_PAGE_SIZE
from chunklab.settings import Settings

SERVICES = ("ingest", "chunker", "retriever", "evaluator")
# The contract's limit for one data message of an upload or an import.
UPLOAD_PIECE_BYTES = limits.PIECE_BYTES
# What an upload or an import reads: a file's path, or the bytes themselves.
Source = str | os.PathLike | bytes


class Calls:
    """The services' stubs with the deadlines of one Settings object.

    Channels open lazily on first use: building a client does no I/O. Every
    call carries `rpc_timeout_s`, or `long_rpc_timeout_s` where the work is
    long (processing, experiments, answers, imports, sweeps). Channels carry
    the settings' token and speak TLS as they say (ADR 0048)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._stubs: dict[str, Any] = {}

    @classmethod
    def at(cls, addresses: Mapping[str, str], settings: Settings | None = None) -> Self:
        """A client of the services at these addresses (e.g. a running Stack's),
        every other setting from `settings` (default: the environment)."""
        unknown = sorted(set(addresses) - set(SERVICES))
        if unknown:
            raise ClientError(f"no ChunkLab service is called {', '.join(unknown)}; they are {', '.join(SERVICES)}")
        base = settings if settings is not None else Settings()
        return cls(base.model_copy(update={f"{name}_address": a for name, a in addresses.items()}))

    def address(self, service: str) -> str:
        return getattr(self.settings, f"{service}_address")

    def _stub(self, service: str) -> Any:
        if service not in self._stubs:
            self._stubs[service] = getattr(channels, service)(self.address(service), self.settings)
        return self._stubs[service]

    def _deadline(self, long: bool) -> float:
        return self.settings.long_rpc_timeout_s if long else self.settings.rpc_timeout_s

    @contextmanager
    def _calling(self, service: str) -> Iterator[None]:
        try:
            yield
        except grpc.RpcError as exc:
            raise ClientError.from_rpc_error(service, self.address(service), exc) from None

    def _call(self, service: str, method: str, request: Any, long: bool = False) -> Any:
        """One unary (or client-streaming) call with its deadline."""
        with self._calling(service):
            return getattr(self._stub(service), method)(request, timeout=self._deadline(long))

    def _stream(self, service: str, method: str, request: Message, long: bool = True) -> Iterator[Any]:
        """A server stream's events as they come; a failure midway is raised
        after the events that came before it. Nothing is called until read,
        and closing the iterator early (or dropping it) cancels the call."""
        with self._calling(service):
            call = getattr(self._stub(service), method)(request, timeout=self._deadline(long))
            try:
                yield from call
            finally:
                if isinstance(call, grpc.Call):
                    call.cancel()

    def _polled(
        self, read: Callable[[], Message], finished: Callable[[Message], bool], timeout: float | None, interval_s: float
    ) -> Iterator[Message]:
        """Yields read() every interval_s until finished(it) or `timeout` seconds (default: the
        long deadline) have passed; the last one yielded is how it is then. A caller that stops
        iterating stops the reads."""
        deadline = time.monotonic() + (self.settings.long_rpc_timeout_s if timeout is None else timeout)
        while True:
            found = read()
            yield found
            if finished(found) or time.monotonic() >= deadline:
                return
            time.sleep(interval_s)

    def _every_page(self, service: str, method: str, request: Message, field: str) -> list:
        """Every item of a List RPC (AIP-158), page after page, in the service's order."""
        items: list = []
        page_request = type(request)()
        page_request.CopyFrom(request)
        page_request.page_size = page_request.page_size or MAX_PAGE_SIZE
        while True:
            page = self._call(service, method, page_request)
            items.extend(getattr(page, field))
            if not page.next_page_token:
                return items
            next_request = type(request)()
            next_request.CopyFrom(page_request)
            next_request.page_token = page.next_page_token
            page_request = next_request


def read_source(source: Source, name: str, what: str) -> tuple[Path | bytes, str, int]:
    """(what to stream, its file name, its size) for a path or for bytes. Bytes
    need `name` as their file name, which carries the format (e.g. "notes.md")."""
    if isinstance(source, bytes | bytearray):
        if not name.strip():
            raise ClientError(f"give the {what} a file name (e.g. notes.md): bytes carry none")
        return bytes(source), name.strip(), len(source)
    path = Path(source)
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise ClientError(f"cannot read the {what} {path.name!r}: {exc.strerror}") from None
    if not path.is_file():
        raise ClientError(f"cannot read the {what} {path.name!r}: it is not a file")
    return path, path.name, size


def client_stream(
    request_type: type, header: Message, source: Path | bytes, piece_bytes: int = UPLOAD_PIECE_BYTES
) -> Iterator[Message]:
    """A header message, then the bytes in data messages of at most piece_bytes
    (a file is read piece by piece, never whole)."""
    if not 0 < piece_bytes <= UPLOAD_PIECE_BYTES:
        raise ClientError(f"pieces are 1 to {UPLOAD_PIECE_BYTES} bytes (the contract's limit), not {piece_bytes}")
    return _messages(request_type, header, source, piece_bytes)


def _messages(request_type: type, header: Message, source: Path | bytes, piece_bytes: int) -> Iterator[Message]:
    yield request_type(header=header)
    if isinstance(source, bytes):
        for start in range(0, len(source), piece_bytes):
            yield request_type(data=source[start : start + piece_bytes])
        return
    with open(source, "rb") as file:
        while piece := file.read(piece_bytes):
            yield request_type(data=piece)
