"""The Qdrant server's REST API on loopback, answered by qdrant-client's local
mode: the stand-in for the `qdrant` container where there is no Qdrant
server (docs/adr/0069-qdrant-stand-in-for-the-compose-stack.md).

The retriever runs unchanged against it: `CHUNKLAB_QDRANT_URL=http://...`
gives it qdrant-client's REST client, whose requests (JSON bodies of
qdrant_client.http.models) are read here with those same models, handed to
`QdrantClient(":memory:")`, and its results sent back in the server's
envelope (`{"result": ..., "status": "ok", "time": ...}`). Only the routes
the retriever calls are answered; any other answers 501 with its method and
path, so a new call shows up as a failed test naming the route to add.
Query parameters (wait=, timeout=) need nothing: local mode applies each
call before it returns.
"""

from __future__ import annotations

import json
import re
import threading
import time
import warnings
from collections.abc import Callable
from urllib.parse import urlsplit

from pydantic import BaseModel
from qdrant_client import QdrantClient, models

from tests.support.local_server import LocalServer, QuietHandler

VERSION = "1.20.0"  # the image docker-compose.yml pins (qdrant/qdrant:v1.20.0)

Route = Callable[[QdrantClient, str, dict], object]


def _create_collection(client: QdrantClient, name: str, body: dict):
    request = models.CreateCollection.model_validate(body)
    return client.create_collection(name, vectors_config=request.vectors, sparse_vectors_config=request.sparse_vectors)


def _update_collection(client: QdrantClient, name: str, body: dict):
    request = models.UpdateCollection.model_validate(body)
    return client.update_collection(name, sparse_vectors_config=request.sparse_vectors)


def _create_index(client: QdrantClient, name: str, body: dict):
    request = models.CreateFieldIndex.model_validate(body)
    return client.create_payload_index(name, request.field_name, request.field_schema)


def _count(client: QdrantClient, name: str, body: dict):
    request = models.CountRequest.model_validate(body)
    return client.count(name, count_filter=request.filter, exact=bool(request.exact))


def _upsert(client: QdrantClient, name: str, body: dict):
    return client.upsert(name, models.PointsList.model_validate(body).points)


def _delete(client: QdrantClient, name: str, body: dict):
    selector = models.FilterSelector if "filter" in body else models.PointIdsList
    return client.delete(name, selector.model_validate(body))


def _set_payload(client: QdrantClient, name: str, body: dict):
    request = models.SetPayload.model_validate(body)
    return client.set_payload(name, request.payload, points=request.filter or request.points, key=request.key)


def _query(client: QdrantClient, name: str, body: dict):
    request = models.QueryRequest.model_validate(body)
    return client.query_points(
        name,
        query=request.query,
        using=request.using,
        query_filter=request.filter,
        limit=request.limit or 10,
        with_payload=request.with_payload,
        with_vectors=request.with_vector or False,
        search_params=request.params,
        score_threshold=request.score_threshold,
        offset=request.offset,
    )


def _retrieve(client: QdrantClient, name: str, body: dict):
    request = models.PointRequest.model_validate(body)
    return client.retrieve(
        name, request.ids, with_payload=request.with_payload, with_vectors=request.with_vector or False
    )


def _scroll(client: QdrantClient, name: str, body: dict):
    request = models.ScrollRequest.model_validate(body)
    points, offset = client.scroll(
        name,
        scroll_filter=request.filter,
        limit=request.limit or 10,
        offset=request.offset,
        with_payload=request.with_payload,
        with_vectors=request.with_vector or False,
        order_by=request.order_by,
    )
    return models.ScrollResult(points=points, next_page_offset=offset)


# (HTTP method, path under /collections/{name}) -> what local mode does.
ROUTES: dict[tuple[str, str], Route] = {
    ("GET", "/exists"): lambda client, name, _: models.CollectionExistence(exists=client.collection_exists(name)),
    ("GET", ""): lambda client, name, _: client.get_collection(name),
    ("PUT", ""): _create_collection,
    ("PATCH", ""): _update_collection,
    ("PUT", "/index"): _create_index,
    ("POST", "/points/count"): _count,
    ("PUT", "/points"): _upsert,
    ("POST", "/points/delete"): _delete,
    ("POST", "/points/payload"): _set_payload,
    ("POST", "/points/query"): _query,
    ("POST", "/points"): _retrieve,
    ("POST", "/points/scroll"): _scroll,
}
COLLECTION_PATH = re.compile(r"/collections/(?P<name>[^/]+)(?P<rest>(/[a-z_]+)*)")


def _jsonable(value):
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    return value


class QdrantShim(LocalServer):
    """`QdrantShim().start()`; `.root` is the URL to give CHUNKLAB_QDRANT_URL.
    One lock serialises the calls: local mode is not made for threads."""

    def __init__(self) -> None:
        self.client = QdrantClient(":memory:")
        self.calls: dict[tuple[str, str], int] = {}
        lock = threading.Lock()
        shim = self

        class Handler(QuietHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as the real server and httpx speak

            def _answer(self, method: str) -> None:
                url = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if url.path == "/":
                    return self._json(200, {"title": "qdrant - vector search engine", "version": VERSION})
                found = COLLECTION_PATH.fullmatch(url.path)
                route = ROUTES.get((method, found["rest"])) if found else None
                if route is None:
                    return self._json(
                        501,
                        {
                            "status": {
                                "error": f"the Qdrant stand-in has no route {method} "
                                f"{url.path} (tests/support/qdrant_shim.py)"
                            }
                        },
                    )
                started = time.monotonic()
                try:
                    # Local mode warns that payload indexes and search parameters do nothing
                    # in it; a server honours both, and the answers are the same either way.
                    with lock, warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        shim.calls[(method, found["rest"])] = shim.calls.get((method, found["rest"]), 0) + 1
                        result = route(shim.client, found["name"], body)
                except (ValueError, KeyError) as exc:  # local mode's "Collection ... not found" and bad bodies
                    status = 404 if "not found" in str(exc).lower() else 400
                    return self._json(status, {"status": {"error": str(exc)}})
                self._json(200, {"result": _jsonable(result), "status": "ok", "time": time.monotonic() - started})

            def _json(self, status: int, payload: dict) -> None:
                self._raw(status, json.dumps(payload).encode(), "application/json")

            def do_GET(self) -> None:
                self._answer("GET")

            def do_PUT(self) -> None:
                self._answer("PUT")

            def do_POST(self) -> None:
                self._answer("POST")

            def do_PATCH(self) -> None:
                self._answer("PATCH")

        self._handler = Handler

    def start(self) -> QdrantShim:
        return self._listen(self._handler)

    def stop(self) -> None:
        super().stop()
        self.client.close()
