"""What a loopback gRPC call costs after the caller and server have been idle.

The retriever benchmark's Retrieve calls come about 12 ms apart (the question
is embedded in between), and a call's overhead there is larger than a
back-to-back call suggests. This measures the plain round trip side by side:
a stand-alone server (a thread pool, as every ChunkLab server) answering a
RetrieveResponse the size of a top-5 ±1/1 answer (15 chunks of 1.5 kB in the
flat list and again in the tree, about 46 kB), called back to back and after idle gaps of growing length (the client
sleeping, or spinning so that its core stays busy).

    .venv/bin/python bench/grpc_idle.py [--calls 300]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from concurrent import futures
from pathlib import Path

import grpc
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from chunklab.rpc.server import CHANNEL_OPTIONS
from chunklab.v1 import common_pb2, retriever_pb2, retriever_pb2_grpc

GAPS_MS = (0, 1, 2, 5, 10, 50)


def response() -> retriever_pb2.RetrieveResponse:
    answer = retriever_pb2.RetrieveResponse(embedding_model="all-MiniLM-L6-v2")
    chunks = [common_pb2.Chunk(chunk_id=f"{i:036d}", content="word " * 300, chunk_index=i) for i in range(15)]
    for chunk in chunks:
        answer.retrieved_chunks.add(chunk=chunk)
    for hit in range(5):  # the tree repeats them: each hit with a neighbour on either side
        node = answer.expansion_tree.hits.add(hit=common_pb2.RetrievedChunk(chunk=chunks[3 * hit + 1]))
        node.neighbors_prev.add(chunk=chunks[3 * hit])
        node.neighbors_next.add(chunk=chunks[3 * hit + 2])
    return answer


class Answering(retriever_pb2_grpc.RetrieverServiceServicer):
    def __init__(self) -> None:
        self.answer = response()

    def Retrieve(self, request, context):
        return self.answer


def serve() -> None:
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8), options=CHANNEL_OPTIONS)
    retriever_pb2_grpc.add_RetrieverServiceServicer_to_server(Answering(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    print(port, flush=True)
    server.wait_for_termination()


def spin(seconds: float) -> None:
    until = time.perf_counter() + seconds
    while time.perf_counter() < until:
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=300, help="calls per gap and kind")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve()
        return
    server = subprocess.Popen([sys.executable, __file__, "--serve"], stdout=subprocess.PIPE, text=True)
    try:
        port = int(server.stdout.readline())
        stub = retriever_pb2_grpc.RetrieverServiceStub(
            grpc.insecure_channel(f"127.0.0.1:{port}", options=CHANNEL_OPTIONS)
        )
        request = retriever_pb2.RetrieveRequest(
            query="q", options=common_pb2.RetrievalOptions(strategy="fixed_size", top_k=5)
        )
        size = stub.Retrieve(request, timeout=10).ByteSize()
        for _ in range(200):
            stub.Retrieve(request, timeout=10)
        print(f"loopback gRPC round trip, {size / 1000:.0f} kB answer, ms (p50 / p95)")
        print(f"{'idle gap':>10} {'client sleeps':>16} {'client spins':>16}")
        base = None
        for gap_ms in GAPS_MS:
            cells = []
            for wait in (time.sleep, spin):
                took = []
                for _ in range(args.calls):
                    if gap_ms:
                        wait(gap_ms / 1e3)
                    started = time.perf_counter()
                    stub.Retrieve(request, timeout=10)
                    took.append((time.perf_counter() - started) * 1e3)
                p50, p95 = np.percentile(took, [50, 95])
                base = base or p50
                cells.append(f"{p50:6.3f} / {p95:6.3f}")
            print(
                f"{gap_ms:>8} ms {cells[0]:>16} {cells[1]:>16}   (p50 x{float(cells[0].split('/')[0]) / base:.1f} "
                "of back to back)"
            )
    finally:
        server.kill()


if __name__ == "__main__":
    main()
