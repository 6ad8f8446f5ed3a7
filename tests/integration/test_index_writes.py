"""IndexChunks replaces a set only with a complete, valid stream (issue 31, ADR 0123).

A two-chunk set is indexed once through a real gRPC server in this process; then
each bad stream (a header and no batches, chunk_index -1, a gap, a chunk id of
another set, fewer chunks than the header promises, a parent that was not sent)
is refused with INVALID_ARGUMENT naming what is wrong, and the old set is still
there as it was: two chunks listed with their text, both found by a search.
"""

from __future__ import annotations

from concurrent import futures

import grpc
import pytest

from chunklab import ids
from chunklab.rpc import channels
from chunklab.rpc.server import ErrorMappingInterceptor
from chunklab.v1 import common_pb2 as pb
from chunklab.v1 import retriever_pb2 as rpb
from chunklab.v1 import retriever_pb2_grpc
from services.chunker.strategies import REGISTRY
from services.retriever.index.registry import IndexRegistry
from services.retriever.lifecycle.archive import ColdStorage
from services.retriever.lifecycle.sets import IndexSets
from services.retriever.lifecycle.sweeper import Sweeper
from services.retriever.server import RetrieverServicer
from services.retriever.service import RetrieverService
from services.retriever.store import RetrieverStore
from tests.support.providers import HashedProvider

PROVIDER = HashedProvider()
DOC, STRATEGY, CONFIG = "harbour", "parent_child", "cfg"
OLD = ["the harbour tides table for the north pier", "the lighthouse keepers logbook"]


@pytest.fixture(scope="module")
def retriever(tmp_path_factory):
    path = tmp_path_factory.mktemp("retriever")
    store = RetrieverStore(f"sqlite:///{path / 'retriever.sqlite3'}")
    service = RetrieverService(IndexRegistry(path / "edge", store), store, PROVIDER.name, lambda _: PROVIDER, {})
    sets = IndexSets(service)
    servicer = RetrieverServicer(service, Sweeper(service, ColdStorage(path / "archive"), sets), sets)
    server = grpc.server(futures.ThreadPoolExecutor(4), interceptors=[ErrorMappingInterceptor()])
    retriever_pb2_grpc.add_RetrieverServiceServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    stub = channels.retriever(f"127.0.0.1:{port}")
    reply = send(stub, header(), [child(i, text) for i, text in enumerate(OLD)] + [parent(0)])
    assert (reply.chunks_indexed, reply.active) == (3, True)
    yield stub
    server.stop(None)
    service.close()


def header(**changes) -> rpb.IndexHeader:
    made = rpb.IndexHeader(
        document_id=DOC,
        strategy=STRATEGY,
        config_id=CONFIG,
        embedding_model=PROVIDER.name,
        dimension=PROVIDER.dimension,
        spec=pb.StrategySpec(name=STRATEGY),
        expansion=REGISTRY.get(STRATEGY).expansion,
    )
    for field, value in changes.items():
        setattr(made, field, value)
    return made


def child(index: int, text: str = "a new text about harbours", **changes) -> rpb.IndexedChunk:
    chunk = pb.Chunk(
        chunk_id=ids.chunk_id(DOC, STRATEGY, CONFIG, index, pb.CHUNK_ROLE_CHILD),
        document_id=DOC,
        document_name="harbour.md",
        strategy=STRATEGY,
        chunk_index=index,
        role=pb.CHUNK_ROLE_CHILD,
        content=text,
        parent_id=ids.chunk_id(DOC, STRATEGY, CONFIG, 0, pb.CHUNK_ROLE_PARENT),
        collection="default",
    )
    for field, value in changes.items():
        setattr(chunk, field, value)
    return rpb.IndexedChunk(chunk=chunk, vector=PROVIDER.embed_query(text).tolist())


def parent(index: int) -> rpb.IndexedChunk:
    chunk = pb.Chunk(
        chunk_id=ids.chunk_id(DOC, STRATEGY, CONFIG, index, pb.CHUNK_ROLE_PARENT),
        document_id=DOC,
        document_name="harbour.md",
        strategy=STRATEGY,
        chunk_index=index,
        role=pb.CHUNK_ROLE_PARENT,
        content=" ".join(OLD),
        collection="default",
    )
    return rpb.IndexedChunk(chunk=chunk)


def send(stub, head: rpb.IndexHeader, chunks: list[rpb.IndexedChunk]) -> rpb.IndexChunksResponse:
    messages = [rpb.IndexChunksRequest(header=head)]
    messages += [
        rpb.IndexChunksRequest(batch=rpb.IndexChunkBatch(chunks=chunks[i : i + 2])) for i in range(0, len(chunks), 2)
    ]
    return stub.IndexChunks(iter(messages), timeout=30)


def refusal(stub, head: rpb.IndexHeader, chunks: list[rpb.IndexedChunk]) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.RpcError) as caught:
        send(stub, head, chunks)
    return caught.value.code(), caught.value.details()


def the_old_set_is_as_it_was(stub) -> None:
    """What a user checks: the set lists its two chunks with their text, and a search finds each."""
    key = rpb.IndexedSetKey(embedding_model=PROVIDER.name, document_id=DOC, strategy=STRATEGY, config_id=CONFIG)
    found = stub.GetIndexedSet(rpb.GetIndexedSetRequest(key=key), timeout=30)
    assert (found.points, found.active) == (3, True)
    listed = stub.ListIndexedChunks(rpb.ListIndexedChunksRequest(key=key, page_size=10), timeout=30).chunks
    children = sorted((c.chunk_index, c.content) for c in listed if c.role == pb.CHUNK_ROLE_CHILD)
    assert children == list(enumerate(OLD))
    for text in OLD:
        options = pb.RetrievalOptions(strategy=STRATEGY, top_k=1, embedding_model=PROVIDER.name)
        reply = stub.Retrieve(rpb.RetrieveRequest(query=text, options=options), timeout=30)
        assert [n.hit.chunk.content for n in reply.expansion_tree.hits] == [text]


BAD_STREAMS = {
    "a header and no batches": (header(), [], "has a header and no chunks"),
    "chunk_index -1": (header(), [child(-1), parent(0)], "chunk_index -1 (child) is negative"),
    "a gap after 0": (header(), [child(0), child(2), parent(0)], "chunk_index 1 of the child chunks is missing"),
    "a chunk id of another set": (
        header(),
        [child(0), child(1, chunk_id=ids.chunk_id("other", STRATEGY, CONFIG, 1, pb.CHUNK_ROLE_CHILD)), parent(0)],
        f"its id is {ids.chunk_id(DOC, STRATEGY, CONFIG, 1, pb.CHUNK_ROLE_CHILD)}",
    ),
    "a chunk of another configuration": (
        header(),
        [child(0), child(1, config_id="other"), parent(0)],
        "chunk 1 has config_id 'other', the header's set has 'cfg'",
    ),
    "fewer chunks than the header promises": (
        header(chunk_count=4),
        [child(0), child(1), parent(0)],
        "promises 4 chunks and the stream carried 3",
    ),
    "a parent that was not sent": (header(), [child(0), child(1)], "which is no parent chunk sent in this stream"),
    "a chunk of another document": (
        header(),
        [child(0), child(1, document_id="other"), parent(0)],
        "chunk 1 belongs to (other, parent_child)",
    ),
}


@pytest.mark.parametrize("case", list(BAD_STREAMS))
def test_a_bad_stream_is_refused_by_name_and_the_old_set_stays(retriever, case):
    head, chunks, says = BAD_STREAMS[case]
    code, message = refusal(retriever, head, chunks)
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert says in message
    the_old_set_is_as_it_was(retriever)


def test_a_complete_stream_replaces_another_set_whole(retriever):
    """The same checks let a whole set through: a second document's set, indexed twice, ends as the second stream."""
    other = header(document_id="tides", chunk_count=3)

    def made(index: int, text: str) -> rpb.IndexedChunk:
        item = child(index, text, document_id="tides")
        item.chunk.chunk_id = ids.chunk_id("tides", STRATEGY, CONFIG, index, pb.CHUNK_ROLE_CHILD)
        item.chunk.parent_id = ids.chunk_id("tides", STRATEGY, CONFIG, 0, pb.CHUNK_ROLE_PARENT)
        return item

    top = parent(0)
    top.chunk.document_id = "tides"
    top.chunk.chunk_id = ids.chunk_id("tides", STRATEGY, CONFIG, 0, pb.CHUNK_ROLE_PARENT)
    first = send(retriever, other, [made(0, "spring tides"), made(1, "neap tides"), top])
    again = send(retriever, other, [made(0, "storm tides"), made(1, "king tides"), top])
    assert (first.chunks_indexed, again.chunks_indexed, again.chunks_replaced) == (3, 3, 3)
    key = rpb.IndexedSetKey(embedding_model=PROVIDER.name, document_id="tides", strategy=STRATEGY, config_id=CONFIG)
    listed = retriever.ListIndexedChunks(rpb.ListIndexedChunksRequest(key=key, page_size=10), timeout=30).chunks
    assert sorted(c.content for c in listed if c.role == pb.CHUNK_ROLE_CHILD) == ["king tides", "storm tides"]
