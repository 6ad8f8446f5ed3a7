"""A rerank endpoint that tests start themselves, in both common shapes.

    with FakeRerank() as server:
        server.cohere_url   # POST {model, query, documents, top_n} -> {results: [{index, relevance_score}]}
        server.tei_url      # POST {query, texts} -> [{index, score}]
        server.score = lambda query, text: 1.0   # how a passage scores
        server.behaviour = "good"                # or "error" (HTTP 500), "garbage" (not JSON), "short" (one result)

Both reply best first, as the real ones do, so a client must read the indexes.
A body of the other shape is refused with 422, as TEI and Cohere refuse it.
Each call is recorded in `server.calls` (path, body, authorization header).
"""

from __future__ import annotations

import json
from collections.abc import Callable

from tests.support.local_server import LocalServer, QuietHandler


class FakeRerank(LocalServer):
    def __init__(self) -> None:
        self.score: Callable[[str, str], float] = lambda query, text: float(len(set(query.split()) & set(text.split())))
        self.behaviour = "good"
        self.calls: list[dict] = []

    @property
    def cohere_url(self) -> str:
        return f"{self.root}/v1/rerank"

    @property
    def tei_url(self) -> str:
        return f"{self.root}/rerank"

    def start(self) -> FakeRerank:
        fake = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                fake.calls.append({"path": self.path, "body": body, "authorization": self.headers.get("Authorization")})
                if fake.behaviour == "error":
                    return self._send(500, b'{"error": "model not loaded"}')
                if fake.behaviour == "garbage":
                    return self._send(200, b"<html>not a ranking")
                tei = self.path == "/rerank"
                texts = body.get("texts" if tei else "documents")
                if not isinstance(texts, list) or "query" not in body or (not tei and "top_n" not in body):
                    return self._send(422, json.dumps({"error": "wrong request shape"}).encode())
                ranked = sorted(range(len(texts)), key=lambda i: -fake.score(body["query"], texts[i]))
                if fake.behaviour == "short":
                    ranked = ranked[:1]
                key = "score" if tei else "relevance_score"
                results = [{"index": i, key: fake.score(body["query"], texts[i])} for i in ranked]
                self._send(200, json.dumps(results if tei else {"id": "fake", "results": results}).encode())

            def _send(self, status: int, data: bytes) -> None:
                self._raw(status, data, "application/json")

        return self._listen(Handler)
