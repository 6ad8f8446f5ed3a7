"""What a request may hold, checked before any work starts, for every service (ADR 0050).

One owner for the limits every service shares: how long a text, a name or an
id may be, which collection names are allowed, and that enum fields hold a
declared value, numbers are finite and timestamps are inside protobuf's range.
`check_message` walks a request by its descriptor and refuses the first field
that breaks a limit with INVALID_ARGUMENT naming the field's path; `bounded`
makes a servicer class do that for every request (and every message of a
client stream) before the method's body runs, so no RPC starts work on a 10 MB
id, an unknown DocumentFormat or a NaN knob. Rules that belong to one concept
(RetrievalOptions' bounds, knob bounds, the grid's run cap) stay with their
owners; these are the shape every request shares.

A string field's limit comes from its name (`STRING_LIMITS`; names ending in
`_id` or `_ids` are ids), so a new field with a known name is bounded without
an edit here, and tests/unit/test_limits.py fails on a request field whose name
has no limit yet.

Messages quote what a client sent only through `excerpt`, so a refusal is
never as large as the request it refuses.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Iterator, Mapping

from google.protobuf.descriptor import Descriptor, FieldDescriptor, ServiceDescriptor
from google.protobuf.message import Message

from chunklab.errors import InvalidArgument

TEXT_CHARS = 8_000  # a query, a question, an expected answer: what is embedded and searched
NAME_CHARS = 256  # a file name, a set's name, a strategy, model, collection or knob name
ID_CHARS = 128  # every id: as the services give them out (uuids, 16-hex config ids) or as indexed
NOTE_CHARS = 2_000  # a description or a feedback comment
SETTING_CHARS = 2_048  # a URL, an API key, a page token, a knob's text value, metadata
EXCERPT_CHARS = 80  # how much of a value a message quotes
MESSAGE_CHARS = 4_000  # how long a status message may be (gRPC trailers are capped at 16 KiB)
PIECE_BYTES = 1024 * 1024  # the most bytes one data message of a streamed file may carry (the contract's 1 MiB)

STRING_LIMITS: dict[str, int | None] = {
    **dict.fromkeys(("query", "question", "text", "expected_answer"), TEXT_CHARS),
    **dict.fromkeys(
        (
            "name",
            "strategy",
            "strategies",
            "embedding_model",
            "model",
            "collection",
            "collections",
            "language",
            "languages",
            "knob",
            "metric",
            "document_name",
            "key",
        ),
        NAME_CHARS,
    ),
    **dict.fromkeys(("description", "comment"), NOTE_CHARS),
    **dict.fromkeys(("base_url", "api_key", "page_token", "string_value", "run_key", "metadata"), SETTING_CHARS),
    # A chunk's text, its headings and a reference excerpt are as long as the document
    # makes them: the upload limit bounds them, and the message size bounds a request.
    **dict.fromkeys(("content", "enriched_content", "heading_path"), None),
}

# protobuf's Timestamp range: 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999999999Z.
MIN_SECONDS, MAX_SECONDS = -62_135_596_800, 253_402_300_799
_TIMESTAMP = "google.protobuf.Timestamp"

COLLECTION_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


def excerpt(value: object, limit: int = EXCERPT_CHARS) -> str:
    """The value as a message may quote it: whitespace runs as one space, cut to
    `limit` characters with "…" where it was cut. Only the value's head is read, so
    quoting 10 MB costs what quoting 80 characters does."""
    text = str(value)
    head = " ".join(text[: 4 * limit].split())
    if len(head) <= limit and len(text) <= 4 * limit:
        return head
    return head[: limit - 1] + "…"


def quoted(value: object, limit: int = EXCERPT_CHARS) -> str:
    """repr(value) for a message, a string cut by excerpt first: 'abc', 3, None."""
    return repr(excerpt(value, limit)) if isinstance(value, str) else excerpt(repr(value), limit)


def cut(message: str, limit: int = MESSAGE_CHARS) -> str:
    """A status message no longer than `limit` (its layout kept), "…" where it was cut."""
    return message if len(message) <= limit else message[: limit - 1] + "…"


def string_limit(field: str) -> int | None:
    """The most characters a string field of this name may hold (None: no limit of its own)."""
    if field.endswith(("_id", "_ids")):
        return ID_CHARS
    return STRING_LIMITS[field]


def check_collection(name: str) -> None:
    """A collection name every service accepts: it names folders and filters, so no
    path separators or dots first (`../../etc` is refused)."""
    if not COLLECTION_NAME.match(name or ""):
        raise InvalidArgument(
            f"{excerpt(name)!r} is not a collection name: use letters, digits, '.', '_' or '-' "
            "(up to 128, starting with a letter or digit)"
        )


def check_message(message: Message, path: str = "") -> None:
    """Refuses the first field of `message` (and of every message inside it) that
    breaks a shared limit: a string over its length, an enum value its enum does
    not declare, a NaN or infinite number, a timestamp outside protobuf's range."""
    stack: list[tuple[Message, str]] = [(message, path)]
    while stack:
        current, where = stack.pop()
        if current.DESCRIPTOR.full_name == _TIMESTAMP:
            _check_timestamp(current, where)
            continue
        for field, value in current.ListFields():
            name = f"{where}.{field.name}" if where else field.name
            if _is_map(field):
                _check_map(field, value, name, stack)
            elif field.is_repeated:
                _check_repeated(field, value, name, stack)
            elif field.type == FieldDescriptor.TYPE_MESSAGE:
                stack.append((value, name))
            else:
                _check_scalar(field, value, name)


def _is_map(field: FieldDescriptor) -> bool:
    return field.type == FieldDescriptor.TYPE_MESSAGE and field.message_type.GetOptions().map_entry


def _check_map(field: FieldDescriptor, value, name: str, stack: list) -> None:
    entry: Descriptor = field.message_type
    key_field, value_field = entry.fields_by_name["key"], entry.fields_by_name["value"]
    for key, item in value.items():
        if key_field.type == FieldDescriptor.TYPE_STRING:
            _check_string(key, NAME_CHARS, f"{name} key")
        where = f"{name}[{excerpt(key, 40)!r}]"
        if value_field.type == FieldDescriptor.TYPE_MESSAGE:
            stack.append((item, where))
        elif value_field.type == FieldDescriptor.TYPE_STRING:
            _check_string(item, string_limit(field.name), where)


def _check_repeated(field: FieldDescriptor, values, name: str, stack: list) -> None:
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        stack.extend((item, f"{name}[{i}]") for i, item in reversed(list(enumerate(values))))
    elif field.type in (FieldDescriptor.TYPE_FLOAT, FieldDescriptor.TYPE_DOUBLE):
        # One sum finds a NaN or an infinity among thousands of vector values; only
        # when it is not finite (or overflowed) are the values looked at one by one.
        if not math.isfinite(sum(values)):
            for i, value in enumerate(values):
                _check_scalar(field, value, f"{name}[{i}]")
    elif field.type in (FieldDescriptor.TYPE_STRING, FieldDescriptor.TYPE_ENUM):
        for i, value in enumerate(values):
            _check_scalar(field, value, f"{name}[{i}]")


def _check_scalar(field: FieldDescriptor, value, name: str) -> None:
    if field.type == FieldDescriptor.TYPE_STRING:
        _check_string(value, string_limit(field.name), name)
    elif field.type == FieldDescriptor.TYPE_ENUM:
        enum = field.enum_type
        if value not in enum.values_by_number:
            raise InvalidArgument(
                f"{name} is {value}, which {enum.name} does not declare; use one of "
                f"{', '.join(v.name for v in enum.values)}"
            )
    elif field.type in (FieldDescriptor.TYPE_FLOAT, FieldDescriptor.TYPE_DOUBLE) and not math.isfinite(value):
        raise InvalidArgument(f"{name} is {value}; give a finite number")


def check_string(value: str, field: str, where: str) -> None:
    """Refuses a string over the limit of fields called `field` (for text a service
    reads out of a file rather than a request field, e.g. an imported question);
    `where` names it in the message."""
    _check_string(value, string_limit(field), where)


def _check_string(value: str, limit: int | None, name: str) -> None:
    if limit is not None and len(value) > limit:
        raise InvalidArgument(
            f"{name} is {len(value):,} characters long, over its limit of {limit:,} (it starts {excerpt(value, 40)!r})"
        )
    check_no_nul(value, name)


def check_no_nul(value: str, name: str) -> None:
    """Refuses text holding U+0000: PostgreSQL cannot store it (SQLite can), so
    every service refuses it alike on both, before any work, instead of failing
    at the write on one database only."""
    at = value.find("\x00")
    if at >= 0:
        raise InvalidArgument(
            f"{name} holds a NUL character (U+0000) at character {at:,}: that is binary data, not text; "
            "remove it and send it again"
        )


def _check_timestamp(stamp: Message, name: str) -> None:
    if not MIN_SECONDS <= stamp.seconds <= MAX_SECONDS or not 0 <= stamp.nanos < 1_000_000_000:
        raise InvalidArgument(
            f"{name or 'the timestamp'} is outside 0001-01-01 to 9999-12-31 (seconds {stamp.seconds}, "
            f"nanos {stamp.nanos}); give a date in that range, or leave it unset"
        )


def _checked_stream(messages: Iterator[Message]) -> Iterator[Message]:
    for message in messages:
        check_message(message)
        yield message


def bounded(service: ServiceDescriptor, first: Mapping[str, Callable[[Message], None]] | None = None):
    """Class decorator for a servicer of `service`: every method checks its request
    (each message of a client stream as it arrives) with check_message before its
    body runs. `first` names checks that run before even that, by method name: a
    check that refuses in constant time what check_message would spend time
    walking (an experiment's grid of a million cells)."""
    first = dict(first or {})

    def decorate(cls: type) -> type:
        for method in service.methods:
            setattr(cls, method.name, _wrap(getattr(cls, method.name), method.client_streaming, first.get(method.name)))
        return cls

    return decorate


def _wrap(behavior: Callable, client_streaming: bool, first: Callable[[Message], None] | None) -> Callable:
    if client_streaming:

        @functools.wraps(behavior)
        def streamed(self, request_iterator, context):
            return behavior(self, _checked_stream(request_iterator), context)

        return streamed

    @functools.wraps(behavior)
    def unary(self, request, context):
        if first is not None:
            first(request)
        check_message(request)
        return behavior(self, request, context)

    return unary
