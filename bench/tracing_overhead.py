"""What tracing costs a Retrieve: the same call with tracing off and on, side by side.

Two stand-alone retriever servers built by chunklab.rpc.server.serve (the
interceptors every service has), each a process of its own answering a
canned top-5 ±1/1 RetrieveResponse (bench/grpc_idle.py's, about 46 kB): one
with no OTLP endpoint (tracing off: no interceptor, nothing of the SDK
loaded), one exporting to a real OTLP receiver in this process. This process
calls both through chunklab.rpc.channels channels, untraced and traced, in
alternating blocks, so that both see the same machine load. The call itself is
cheap here (no query embedding, no search): the ratio is an upper bound on what
tracing adds to a real Retrieve, whose embedding alone takes milliseconds.

    .venv/bin/python bench/tracing_overhead.py [--calls 2000] [--block 100]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from grpc_idle import Answering  # noqa: E402 - bench/ is this script's folder

from chunklab.rpc import channels, tracing  # noqa: E402
from chunklab.rpc.server import serve  # noqa: E402
from chunklab.settings import load_settings, settings_from  # noqa: E402
from chunklab.v1 import common_pb2, retriever_pb2, retriever_pb2_grpc  # noqa: E402
from tests.support.otlp_receiver import Receiver  # noqa: E402


def serve_canned() -> None:
    settings = load_settings()
    tracing.start("retriever", settings)
    serve(
        "retriever",
        "127.0.0.1:0",
        lambda server: retriever_pb2_grpc.add_RetrieverServiceServicer_to_server(Answering(), server),
        [retriever_pb2.DESCRIPTOR.services_by_name["RetrieverService"].full_name],
        settings=settings,
    )


def start_server(env: dict[str, str]) -> tuple[subprocess.Popen, str]:
    process = subprocess.Popen([sys.executable, __file__, "--serve"], env=env, stdout=subprocess.PIPE, text=True)
    line = process.stdout.readline()
    if "listening on" not in line:
        process.kill()
        raise SystemExit(f"the bench's server did not start: {line!r}")
    return process, line.rsplit(" ", 1)[-1].strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=2000, help="calls with tracing off, and as many on")
    parser.add_argument("--block", type=int, default=100, help="calls in a row before switching")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve_canned()
        return
    with tempfile.TemporaryDirectory() as data_dir, Receiver() as receiver:
        base = {**os.environ, "CHUNKLAB_DATA_DIR": data_dir, "OTEL_EXPORTER_OTLP_ENDPOINT": ""}
        traced_env = {**base, "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint}
        servers = {"off": start_server(base), "on": start_server(traced_env)}
        try:
            off_settings, on_settings = settings_from(base), settings_from(traced_env)
            stubs = {"off": channels.retriever(servers["off"][1], off_settings)}  # made before tracing starts
            tracing.start("bench", on_settings)
            stubs["on"] = channels.retriever(servers["on"][1], on_settings)
            request = retriever_pb2.RetrieveRequest(
                query="what do rivers carry?",
                options=common_pb2.RetrievalOptions(strategy="fixed_size", top_k=5, neighbor_prev=1, neighbor_next=1),
            )
            took: dict[str, list[float]] = {"off": [], "on": []}
            for stub in stubs.values():  # warm both up: connections, caches
                for _ in range(100):
                    stub.Retrieve(request, timeout=10)
            for _ in range(max(1, args.calls // args.block)):
                for mode, stub in stubs.items():
                    for _ in range(args.block):
                        started = time.perf_counter()
                        stub.Retrieve(request, timeout=10)
                        took[mode].append((time.perf_counter() - started) * 1e3)
            tracing.stop()
        finally:
            for process, _ in servers.values():
                process.terminate()
                process.wait(timeout=30)
        (off50, off95), (on50, on95) = (np.percentile(took[m], [50, 95]) for m in ("off", "on"))
        calls = len(took["on"])
        print(f"Retrieve over loopback gRPC, a canned 46 kB answer, {calls} calls each, ms (p50 / p95)")
        print(f"  tracing off  {off50:6.3f} / {off95:6.3f}")
        print(f"  tracing on   {on50:6.3f} / {on95:6.3f}   (+{(on50 - off50) * 1e3:.0f} us a call at p50)")
        print(f"  ratio on/off x{on50 / off50:.2f} at p50, x{on95 / off95:.2f} at p95")
        # Each traced call is two spans (the client's and the server's), plus the warm-up's 100.
        print(f"  spans received by the OTLP receiver: {len(receiver.spans)} (expected {2 * (calls + 100)})")


if __name__ == "__main__":
    main()
