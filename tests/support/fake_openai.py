"""A small OpenAI-compatible server that tests start themselves.

It speaks /v1/chat/completions (plain and streamed) and /v1/embeddings, and
can be told to misbehave, so that tests exercise the real HTTP path of the
openai client against good, failing, slow and garbage replies.

    with FakeOpenAI() as server:           # server.base_url -> http://127.0.0.1:PORT/v1
        server.behaviour = "good"          # or "error", "rate_limit", "slow", "garbage", "empty", "truncated",
                                           # "bad_request" (400, as an endpoint that takes no response_format)
        server.script = ["garbage", "good"]  # per-call behaviours, consumed first
        server.responder = lambda messages, model: "a reply"
        server.word_delay_s = 0.2          # a streamed reply writes one word at a time, this far apart
        server.stream_usage = False        # a stream as llama.cpp's: a role-only first chunk, no usage
        server.finish_reason = "length"    # what a reply says it stopped for ("stop" by default)

Each call is recorded in `server.calls`; a streamed one also says how many
words it sent (`words_sent`) and whether it `finished` or was `cut` by the
client closing the connection. A streamed reply ends as OpenAI's do: a last
chunk with `finish_reason` "stop", one with the usage, then `[DONE]`;
"truncated" sends the first half of the words (or of a plain reply's bytes)
and closes the connection.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import deque
from collections.abc import Callable

import numpy as np

from tests.support.local_server import LocalServer, QuietHandler

BEHAVIOURS = (
    "good",
    "error",
    "rate_limit",
    "slow",
    "garbage",
    "empty",
    "truncated",
    "bad_request",
    "unprocessable",
    "format_error",
)


def default_responder(messages: list[dict], model: str) -> str:
    last = messages[-1]["content"] if messages else ""
    return f"Reply from {model} about: {last[:60]}"


class FakeOpenAI(LocalServer):
    def __init__(self, dimension: int = 16) -> None:
        self.behaviour = "good"
        self.script: deque[str] | list[str] = deque()
        self.responder: Callable[[list[dict], str], str] = default_responder
        self.delay_s = 5.0
        self.word_delay_s = 0.0
        self.stream_usage = True
        self.finish_reason = "stop"
        self.dimension = dimension
        self.calls: list[dict] = []
        self._lock = threading.Lock()

    # -- lifecycle --------------------------------------------------------

    @property
    def base_url(self) -> str:
        return f"{self.root}/v1"

    def start(self) -> FakeOpenAI:
        fake = self

        class Handler(QuietHandler):
            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    self._json(200, {"object": "list", "data": [{"id": "fake", "object": "model"}]})
                else:
                    self._json(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:
                record: dict = {}
                try:
                    self._post(record)
                except (BrokenPipeError, ConnectionResetError):
                    record["cut"] = True  # the client gave up (a timeout or a cancelled caller)

            def _post(self, record: dict) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                behaviour = fake._next_behaviour()
                record.update(path=self.path, body=body, behaviour=behaviour)
                with fake._lock:
                    fake.calls.append(record)
                if behaviour == "error":
                    return self._json(500, {"error": {"message": "the model crashed", "type": "server_error"}})
                if behaviour == "rate_limit":
                    return self._json(429, {"error": {"message": "rate limited", "type": "rate_limit"}})
                if behaviour == "bad_request":
                    return self._json(
                        400, {"error": {"message": "response_format is not supported", "type": "invalid_request_error"}}
                    )
                if behaviour == "unprocessable":  # a FastAPI server (llama-cpp-python's) refusing a field's value
                    return self._json(422, {"detail": [{"loc": ["body", "response_format"], "msg": "bad value"}]})
                if behaviour == "format_error":  # llama-cpp-python: its validation error as a 500
                    message = "1 validation error: ('body', 'response_format', 'type'): Input should be 'text'"
                    return self._json(500, {"error": {"message": message, "type": "internal_server_error"}})
                if behaviour == "slow":
                    time.sleep(fake.delay_s)
                if behaviour == "garbage":
                    return self._raw(200, b"this is not json {", "application/json")
                if self.path.endswith("/embeddings"):
                    return self._embeddings(body, behaviour)
                if self.path.endswith("/chat/completions"):
                    return self._chat(body, behaviour, record)
                self._json(404, {"error": {"message": f"no route {self.path}"}})

            def _embeddings(self, body: dict, behaviour: str) -> None:
                inputs = body.get("input", [])
                inputs = [inputs] if isinstance(inputs, str) else inputs
                data = (
                    []
                    if behaviour == "empty"
                    else [
                        {"object": "embedding", "index": i, "embedding": fake.embed(text)}
                        for i, text in enumerate(inputs)
                    ]
                )
                tokens = sum(len(t.split()) for t in inputs)
                self._json(
                    200,
                    {
                        "object": "list",
                        "data": data,
                        "model": body.get("model", ""),
                        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
                    },
                )

            def _chat(self, body: dict, behaviour: str, record: dict) -> None:
                messages, model = body.get("messages", []), body.get("model", "")
                text = "" if behaviour == "empty" else fake.responder(messages, model)
                prompt_tokens = sum(len(str(m.get("content", "")).split()) for m in messages)
                usage = {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": len(text.split()),
                    "total_tokens": prompt_tokens + len(text.split()),
                }
                if not body.get("stream"):
                    choices = (
                        []
                        if behaviour == "empty"
                        else [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": text},
                                "finish_reason": fake.finish_reason,
                            }
                        ]
                    )
                    reply = {
                        "id": "chatcmpl-fake",
                        "object": "chat.completion",
                        "created": 0,
                        "model": model,
                        "choices": choices,
                        "usage": usage,
                    }
                    if behaviour == "truncated":  # half the body it announces, then the connection closes
                        data = json.dumps(reply).encode()
                        return self._raw(200, data, "application/json", send=data[: len(data) // 2])
                    return self._json(200, reply)
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                words = text.split(" ")
                if behaviour == "truncated":
                    words = words[: max(1, len(words) // 2)]
                record["words_sent"] = 0
                if not fake.stream_usage:  # llama.cpp opens with the role alone
                    opening = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0, "model": model}
                    opening["choices"] = [{"index": 0, "delta": {"role": "assistant"}, "finish_reason": None}]
                    self.wfile.write(f"data: {json.dumps(opening)}\n\n".encode())
                for i, word in enumerate(words):
                    if i and fake.word_delay_s:
                        time.sleep(fake.word_delay_s)
                    piece = word if i == 0 else " " + word
                    chunk = {
                        "id": "chatcmpl-fake",
                        "object": "chat.completion.chunk",
                        "created": 0,
                        "model": model,
                        "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}],
                    }
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                    self.wfile.flush()
                    record["words_sent"] = i + 1
                if behaviour == "truncated":
                    return  # the connection closes mid-reply
                stop = {
                    "id": "chatcmpl-fake",
                    "object": "chat.completion.chunk",
                    "created": 0,
                    "model": model,
                    "choices": [{"index": 0, "delta": {}, "finish_reason": fake.finish_reason}],
                }
                final = {
                    "id": "chatcmpl-fake",
                    "object": "chat.completion.chunk",
                    "created": 0,
                    "model": model,
                    "choices": [],
                    "usage": usage,
                }
                ending = [stop, final] if fake.stream_usage else [stop]
                self.wfile.write("".join(f"data: {json.dumps(e)}\n\n" for e in ending).encode() + b"data: [DONE]\n\n")
                self.wfile.flush()
                record["finished"] = True

            def _json(self, status: int, payload: dict) -> None:
                self._raw(status, json.dumps(payload).encode(), "application/json")

        return self._listen(Handler)

    # -- behaviour --------------------------------------------------------

    def _next_behaviour(self) -> str:
        with self._lock:
            if self.script:
                if not isinstance(self.script, deque):
                    self.script = deque(self.script)
                return self.script.popleft()
            return self.behaviour

    def embed(self, text: str) -> list[float]:
        """A deterministic unit vector per text (equal texts, equal vectors)."""
        seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
        vector = np.random.default_rng(seed).standard_normal(self.dimension)
        return (vector / np.linalg.norm(vector)).tolist()
