"""ListIndexedChunks' paging on a real embedded index (services/retriever/lifecycle/sets.py):
roles in ChunkRole order, chunk_index within a role, pages cut by count and by
bytes, and tokens that are not the service's refused."""

from __future__ import annotations

import numpy as np
import pytest

from chunklab import ids
from chunklab.errors import InvalidArgument
from chunklab.rpc.paging import encode_token
from chunklab.v1 import common_pb2, retriever_pb2
from services.retriever.index.edge import EdgeIndex
from services.retriever.index.payloads import IndexPoint, chunk_to_payload, unit_vector
from services.retriever.lifecycle import sets
from services.retriever.lifecycle.sets import IndexSets

DIM = 8
MODEL = "all-MiniLM-L6-v2"
CHILD, PARENT = common_pb2.CHUNK_ROLE_CHILD, common_pb2.CHUNK_ROLE_PARENT


def chunk(role: int, index: int, content: str, config: str = "cfg") -> common_pb2.Chunk:
    return common_pb2.Chunk(
        chunk_id=ids.chunk_id("doc", "parent_child", config, index, role),
        document_id="doc",
        strategy="parent_child",
        config_id=config,
        chunk_index=index,
        role=role,
        content=content,
    )


class Store:
    def __init__(self, points: int) -> None:
        self.points = points
        self.filters: list[tuple[str, str, str]] = []

    def list_sets(self, model: str = "", document_id: str = "", strategy: str = "", **_page) -> list[dict]:
        self.filters.append((model, document_id, strategy))
        return []

    def indexed_set(self, key):
        model, document_id, strategy, config_id = key
        if config_id not in ("", "cfg") or document_id != "doc":
            return None
        return {"embedding_model": model, "dimension": DIM, "config_id": "cfg", "points": self.points}


class Registry:
    def __init__(self, index: EdgeIndex) -> None:
        self.index = index

    def get(self, model: str, dimension: int):
        return self.index


class Service:
    def __init__(self, index: EdgeIndex, points: int) -> None:
        self.store, self.registry = Store(points), Registry(index)


@pytest.fixture(scope="module")
def listed(tmp_path_factory):
    """A parent_child set of five children and two parents (another configuration beside it); read only."""
    index = EdgeIndex(tmp_path_factory.mktemp("set-chunks") / "shard", DIM)
    chunks = [chunk(CHILD, i, f"child {i}") for i in range(5)] + [chunk(PARENT, i, "parent " * 200) for i in range(2)]
    rng = np.random.default_rng(0)
    points = [
        IndexPoint(
            c.chunk_id, chunk_to_payload(c, True), None if c.role == PARENT else unit_vector(rng.standard_normal(DIM))
        )
        for c in chunks
    ]
    index.replace("doc", "parent_child", "cfg", points, True)
    other = chunk(CHILD, 0, "other configuration", config="cfg2")
    index.replace(
        "doc",
        "parent_child",
        "cfg2",
        [IndexPoint(other.chunk_id, chunk_to_payload(other, False), unit_vector(rng.standard_normal(DIM)))],
        False,
    )
    yield IndexSets(Service(index, len(points)))
    index.close()


def pages(found: IndexSets, page_size: int, config_id: str = "") -> list[list[tuple[str, int]]]:
    key = retriever_pb2.IndexedSetKey(
        embedding_model=MODEL, document_id="doc", strategy="parent_child", config_id=config_id
    )
    out, token = [], ""
    while True:
        page = found.chunks(retriever_pb2.ListIndexedChunksRequest(key=key, page_size=page_size, page_token=token))
        out.append([(ids.role_name(c.role), c.chunk_index) for c in page.chunks])
        token = page.next_page_token
        if not token:
            return out


def test_pages_hold_page_size_chunks_children_first_then_parents(listed):
    assert pages(listed, 2) == [
        [("child", 0), ("child", 1)],
        [("child", 2), ("child", 3)],
        [("child", 4), ("parent", 0)],
        [("parent", 1)],
    ]
    assert pages(listed, 5) == [[("child", i) for i in range(5)], [("parent", 0), ("parent", 1)]]
    assert pages(listed, 0, config_id="cfg") == [[("child", i) for i in range(5)] + [("parent", 0), ("parent", 1)]]


def test_a_page_ends_once_its_chunks_pass_the_byte_budget(listed, monkeypatch):
    parent_bytes = chunk(PARENT, 0, "parent " * 200).ByteSize()
    monkeypatch.setattr(sets, "CHUNK_PAGE_BYTES", parent_bytes + 100)
    assert pages(listed, 10) == [[("child", i) for i in range(5)], [("parent", 0)], [("parent", 1)]]


@pytest.mark.parametrize("token", [encode_token("9.0"), encode_token("3"), encode_token("3.x"), "not-a-token"])
def test_a_token_the_service_did_not_give_is_refused(listed, token):
    key = retriever_pb2.IndexedSetKey(embedding_model=MODEL, document_id="doc", strategy="parent_child")
    with pytest.raises(InvalidArgument, match="page_token is not one this service gave out"):
        listed.chunks(retriever_pb2.ListIndexedChunksRequest(key=key, page_token=token))


@pytest.mark.parametrize("strategy", ["../etc", "Fixed Size", "fixed-size"])
def test_a_strategy_filter_no_set_can_have_is_refused_before_the_store_is_read(listed, strategy):
    listed.service.store.filters.clear()
    with pytest.raises(InvalidArgument, match=f"{strategy!r} is not a strategy name \\(lower_snake_case"):
        listed.list(retriever_pb2.ListIndexedSetsRequest(strategy=strategy))
    assert listed.service.store.filters == []
    listed.list(retriever_pb2.ListIndexedSetsRequest(strategy="parent_child"))
    assert listed.service.store.filters == [("", "", "parent_child")]
