"""JSON replies from an OpenAI-compatible chat endpoint (ADR 0136, 0137).

`complete_json` asks for a reply shaped by a JSON schema through
`response_format`, in the forms endpoints take, most precise first:

- {"type": "json_schema", "json_schema": {...}}: OpenAI, vLLM, Ollama, llama.cpp's own server;
- {"type": "json_object", "schema": {...}}: llama-cpp-python's server (a grammar from the schema);
- {"type": "json_object"}: JSON mode without a schema;
- no response_format: the prompt alone says what to write.

An endpoint that answers 400 or 422 to one form (or 500 naming response_format,
as llama-cpp-python's server does for a value it does not know) is asked with the next; once
a plainer form was answered, the refused ones are remembered for that endpoint
(base URL and model) for the life of the process, so later calls skip them.
A 400 that the plain request gets too is no refusal of the format: it is the
caller's error, and nothing is remembered. `structured_output="off"` on the
endpoint never sends a response_format (the prompt-and-parse path).

`read_json` reads what real models send: JSON inside a code fence (closed or
not), amid prose, after a chat template's leftovers; a reply cut at
max_tokens says so. What it cannot read is UnreadableJson with the reason.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass

from chunklab.llm import ChatClient, ChatEndpoint, ChatResult, LLMError

STRUCTURED_MODES = ("auto", "off")
# HTTP statuses by which an endpoint refuses a request it cannot parse (FastAPI servers say 422).
REFUSED = (400, 422)
PLAIN = "none"


def refused_format(exc: LLMError) -> bool:
    """Whether an error may be the endpoint refusing the response_format: a 400 or 422, or a
    500 whose text names response_format (llama-cpp-python turns its validation error into one).
    Only a plainer form then answered proves it (complete_json)."""
    if exc.status_code in REFUSED:
        return True
    return exc.status_code == 500 and exc.names_format


class UnreadableJson(ValueError):
    """A reply with no JSON value to read; the message says why, in our words."""


@dataclass
class JsonReply:
    result: ChatResult
    form: str  # the response_format form answered: json_schema, json_object+schema, json_object or none


def forms(name: str, schema: dict) -> list[tuple[str, dict | None]]:
    """(form, response_format) in the order they are tried."""
    return [
        ("json_schema", {"type": "json_schema", "json_schema": {"name": name, "strict": True, "schema": schema}}),
        ("json_object+schema", {"type": "json_object", "schema": schema}),
        ("json_object", {"type": "json_object"}),
        (PLAIN, None),
    ]


class _Refusals:
    """The forms each endpoint refused, process-wide."""

    def __init__(self) -> None:
        self._refused: dict[tuple[str, str], set[str]] = {}
        self._lock = threading.Lock()

    @staticmethod
    def _key(endpoint: ChatEndpoint) -> tuple[str, str]:
        return endpoint.base_url.rstrip("/"), endpoint.model

    def of(self, endpoint: ChatEndpoint) -> set[str]:
        with self._lock:
            return set(self._refused.get(self._key(endpoint), ()))

    def add(self, endpoint: ChatEndpoint, refused: list[str]) -> None:
        with self._lock:
            self._refused.setdefault(self._key(endpoint), set()).update(refused)


REFUSALS = _Refusals()


def complete_json(
    client: ChatClient,
    messages: list[dict],
    *,
    name: str,
    schema: dict,
    max_tokens: int | None = None,
    temperature: float = 0.0,
) -> JsonReply:
    """One reply, asked for in the most precise form the endpoint takes; LLMError as
    ChatClient.complete raises it (the last one, when every form was refused)."""
    endpoint = client.endpoint
    tried = [(PLAIN, None)] if endpoint.structured_output == "off" else forms(name, schema)
    skipped = REFUSALS.of(endpoint)
    tried = [(form, fmt) for form, fmt in tried if form not in skipped]
    refused: list[str] = []
    for form, fmt in tried:
        try:
            result = client.complete(messages, max_tokens=max_tokens, temperature=temperature, response_format=fmt)
        except LLMError as exc:
            if fmt is not None and refused_format(exc):
                refused.append(form)
                continue
            raise
        if refused:
            REFUSALS.add(endpoint, refused)
        return JsonReply(result, form)
    raise AssertionError("the plain form is always tried last")  # pragma: no cover


_FENCE_OPEN = re.compile(r"```[A-Za-z0-9_-]*[ \t]*\n?")


def _candidates(text: str) -> list[str]:
    """Where the JSON may be: each fenced block (an unclosed one runs to the end), then the whole text."""
    found = []
    for match in _FENCE_OPEN.finditer(text):
        body = text[match.end() :]
        close = body.find("```")
        found.append(body if close < 0 else body[:close])
        if close < 0:
            break
    return [*found, text]


def first_json(text: str):
    """The first JSON object or array in the text (the whole of it where it is JSON), or None."""
    decoder = json.JSONDecoder()
    body = text.strip().lstrip("\ufeff")
    try:
        return json.loads(body)
    except ValueError:
        pass
    for match in re.finditer(r"[\[{]", body):
        try:
            return decoder.raw_decode(body, match.start())[0]
        except ValueError:
            continue  # not JSON from this bracket on: the next one is tried
    return None


def read_json(text: str, finish_reason: str = "", max_tokens: int | None = None):
    """The JSON value in a model's reply, or UnreadableJson saying why there is none."""
    for candidate in _candidates(text):
        value = first_json(candidate)
        if value is not None:
            return value
    if finish_reason == "length":
        limit = f" of {max_tokens} tokens" if max_tokens else ""
        raise UnreadableJson(f"the reply was cut at its limit{limit} before its JSON ended")
    if not text.strip():
        raise UnreadableJson("an empty reply")
    return _not_json(text)


def _not_json(text: str):
    try:
        json.loads(text.strip())
    except json.JSONDecodeError as exc:
        raise UnreadableJson(f"not JSON (unreadable at character {exc.pos})") from None
    raise UnreadableJson("not a JSON object or list")
