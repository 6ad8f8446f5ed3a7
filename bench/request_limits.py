"""How long a hostile request costs before it is refused, and what the checks cost the rest.

The four servicers are served as every ChunkLab server serves them (the
error-mapping interceptor, the message limits), each with no service behind
it: a request the shared checks (chunklab/rpc/limits.py, ADR 0050) did not refuse
would reach a missing service and come back INTERNAL, which this counts as a
failure. Side by side:

- each hostile request of issue 14, built before the clock starts: the round
  trip to its INVALID_ARGUMENT (serialising and sending 10 MB included) and the
  checks alone in process;
- a grid of 30,000 cells built cell by cell (what the evaluator did before it
  counted) against counted from its shape;
- the checks on requests that pass: an IndexChunks batch as the chunker sends
  it (256 chunks of 384 dimensions), a 276-question CreateQuestionSet and a
  Retrieve, in microseconds per message.

    .venv/bin/python bench/request_limits.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from concurrent import futures
from pathlib import Path

import grpc

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from chunklab import knobs
from chunklab.errors import InvalidArgument
from chunklab.rpc import channels, limits
from chunklab.rpc.server import CHANNEL_OPTIONS, ErrorMappingInterceptor
from chunklab.v1 import (
    chunker_pb2_grpc,
    common_pb2,
    evaluator_pb2,
    evaluator_pb2_grpc,
    ingest_pb2,
    ingest_pb2_grpc,
    retriever_pb2,
    retriever_pb2_grpc,
)
from services.chunker.server import ChunkerServicer
from services.chunker.strategies import REGISTRY
from services.evaluator.experiments import grid
from services.evaluator.server import EvaluatorServicer
from services.ingest.server import IngestServicer
from services.retriever.server import RetrieverServicer

TEN_MB = "x" * 10_000_000
WORDS = "word " * 2_000_000


def knob_values(start: int, count: int) -> list[common_pb2.KnobValue]:
    return [common_pb2.KnobValue(int_value=start + i) for i in range(count)]


def grid_request(*axes: tuple[str, int, int]) -> evaluator_pb2.RunExperimentRequest:
    strategy = evaluator_pb2.StrategyGrid(
        strategy="fixed_size",
        grid=[evaluator_pb2.KnobGrid(knob=knob, values=knob_values(start, count)) for knob, start, count in axes],
    )
    config = evaluator_pb2.ExperimentConfig(question_set_id="qs", strategies=[strategy])
    return evaluator_pb2.RunExperimentRequest(config=config, dry_run=True)


def hostile(stubs) -> list[tuple[str, object, object]]:
    """(what, the request, how to send it) for each hostile request."""
    ingest, _, retriever, evaluator = stubs
    options = common_pb2.RetrievalOptions(strategy="fixed_size")
    square = grid_request(("chunk_size", 100, 1000), ("chunk_overlap", 0, 1000))
    one_axis = grid_request(("chunk_size", 100, 1_000_000))
    query = retriever_pb2.RetrieveRequest(query=WORDS, options=options)
    question = evaluator_pb2.AnswerRequest(question=WORDS, retrieval=options)
    document = ingest_pb2.GetDocumentRequest(document_id=TEN_MB)
    named = evaluator_pb2.CreateQuestionSetRequest(name=TEN_MB, questions=[evaluator_pb2.Question(text="q?")])
    as_of = retriever_pb2.SweepRequest(as_of={"seconds": 10**15})
    return [
        ("grid 1000 x 1000 (10^6 cells)", square, lambda r: list(evaluator.RunExperiment(r, timeout=60))),
        ("grid of one axis, 10^6 values", one_axis, lambda r: list(evaluator.RunExperiment(r, timeout=60))),
        ("Retrieve, 10 MB query", query, lambda r: retriever.Retrieve(r, timeout=60)),
        ("Answer, 10 MB question", question, lambda r: list(evaluator.Answer(r, timeout=60))),
        ("GetDocument, 10 MB id", document, lambda r: ingest.GetDocument(r, timeout=60)),
        ("CreateQuestionSet, 10 MB name", named, lambda r: evaluator.CreateQuestionSet(r, timeout=60)),
        ("Sweep, as_of in year 31 million", as_of, lambda r: retriever.Sweep(r, timeout=60)),
    ]


def refused_in(send, request, rounds: int) -> float:
    """Median seconds from sending to INVALID_ARGUMENT; exits on any other outcome."""
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        try:
            send(request)
        except grpc.RpcError as exc:
            times.append(time.perf_counter() - started)
            if exc.code() != grpc.StatusCode.INVALID_ARGUMENT:
                sys.exit(f"{type(request).__name__} came back {exc.code().name}: {exc.details()}")
        else:
            sys.exit(f"{type(request).__name__} was accepted")
    return statistics.median(times)


def checked_in(request, rounds: int) -> float:
    """Median seconds of the checks alone (the door's grid count, then the walk)."""
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        try:
            if isinstance(request, evaluator_pb2.RunExperimentRequest):
                grid.check_size(request.config.strategies)
            limits.check_message(request)
        except InvalidArgument:
            pass
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def passing() -> list[tuple[str, object]]:
    chunks = [
        retriever_pb2.IndexedChunk(
            vector=[0.05] * 384,
            chunk=common_pb2.Chunk(
                chunk_id=f"{i:08d}-0000-5000-8000-000000000000",
                document_id="d",
                document_name="guide.md",
                strategy="fixed_size",
                config_id="3f2a9c0d1e4b5a67",
                chunk_index=i,
                content="word " * 100,
                heading_path=["Guide", "Part"],
                language="en",
                collection="default",
                published_at={"seconds": 1_700_000_000},
            ),
        )
        for i in range(256)
    ]
    batch = retriever_pb2.IndexChunksRequest(batch=retriever_pb2.IndexChunkBatch(chunks=chunks))
    questions = evaluator_pb2.CreateQuestionSetRequest(
        name="chroma-general",
        questions=[
            evaluator_pb2.Question(
                text="What does the state of the union say about jobs?",
                references=[
                    evaluator_pb2.Reference(document_id="d", start_char=10, end_char=400, content="text " * 80)
                ],
            )
            for _ in range(276)
        ],
    )
    retrieve = retriever_pb2.RetrieveRequest(
        query="How are chunks expanded?",
        options=common_pb2.RetrievalOptions(
            strategy="fixed_size",
            top_k=5,
            neighbor_prev=1,
            neighbor_next=1,
            hybrid=True,
            filter=common_pb2.RetrievalFilter(collections=["default"], languages=["en"]),
        ),
    )
    return [
        ("IndexChunks batch, 256 chunks x 384", batch),
        ("CreateQuestionSet, 276 questions", questions),
        ("Retrieve, a question", retrieve),
    ]


def built_cells(count: int) -> tuple[float, float]:
    """Seconds to build a grid's cells one by one, and to check their run keys for
    repeats pairwise, as the evaluator did before it counted them (the pairwise
    check is timed on a tenth of the keys and scaled by 100: it grows with the square)."""
    fixed = REGISTRY.get("fixed_size").knobs
    axes = [("chunk_size", [100 + i for i in range(count // 10)]), ("chunk_overlap", list(range(10)))]
    started = time.perf_counter()
    cells = knobs.combinations("fixed_size", fixed, axes)
    built = time.perf_counter() - started
    keys = [c.run_key for c in cells[: count // 10]]
    started = time.perf_counter()
    repeats = [k for k in keys if keys.count(k) > 1]
    pairwise = (time.perf_counter() - started) * 100
    assert len(cells) == count and not repeats
    return built, pairwise


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    server = grpc.server(
        futures.ThreadPoolExecutor(4), interceptors=[ErrorMappingInterceptor()], options=CHANNEL_OPTIONS
    )
    ingest_pb2_grpc.add_IngestServiceServicer_to_server(IngestServicer(None), server)
    chunker_pb2_grpc.add_ChunkerServiceServicer_to_server(ChunkerServicer(None, None), server)
    retriever_pb2_grpc.add_RetrieverServiceServicer_to_server(RetrieverServicer(None, None, None), server)
    evaluator_pb2_grpc.add_EvaluatorServiceServicer_to_server(EvaluatorServicer(None), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    address = f"127.0.0.1:{port}"
    stubs = (
        channels.ingest(address),
        channels.chunker(address),
        channels.retriever(address),
        channels.evaluator(address),
    )
    try:
        print(f"{'hostile request':36} {'on the wire':>12} {'round trip':>11} {'checks':>10}")
        for what, request, send in hostile(stubs):
            size = request.ByteSize() / 1e6
            print(
                f"{what:36} {size:10.2f}MB {refused_in(send, request, args.rounds) * 1e3:9.1f}ms "
                f"{checked_in(request, args.rounds) * 1e3:8.2f}ms"
            )
        cells = 30_000
        counted = checked_in(grid_request(("chunk_size", 100, 3000), ("chunk_overlap", 0, 10)), args.rounds)
        built, pairwise = built_cells(cells)
        print(
            f"\na grid of {cells:,} cells: built cell by cell {built:.1f}s and checked for repeats pairwise "
            f"{pairwise:.1f}s before; counted from its shape and walked {counted * 1e3:.2f}ms now"
        )
        print(f"\n{'passing request':36} {'on the wire':>12} {'checks':>10}")
        for what, request in passing():
            print(f"{what:36} {request.ByteSize() / 1e3:10.1f}kB {checked_in(request, args.rounds) * 1e6:8.0f}µs")
    finally:
        server.stop(0)


if __name__ == "__main__":
    main()
