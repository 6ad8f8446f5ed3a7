"""Container healthcheck: exits 0 when the target is serving, 1 otherwise.

    python healthcheck.py 127.0.0.1:50051         gRPC: grpc.health.v1 Check("") is SERVING
    python healthcheck.py http://127.0.0.1:7860/  HTTP: the page answers 2xx or 3xx (the UI)

It uses only grpcio and grpcio-health-checking (both in the image) and no
ChunkLab module, so it still answers when the service's own code cannot load.
"""

from __future__ import annotations

import argparse
import sys
import urllib.error
import urllib.request

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc


def grpc_serving(address: str, service: str, timeout: float) -> tuple[bool, str]:
    with grpc.insecure_channel(address) as channel:
        try:
            reply = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service=service), timeout=timeout
            )
        except grpc.RpcError as exc:
            return False, f"{exc.code().name}: {exc.details()}"
    status = health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)
    return reply.status == health_pb2.HealthCheckResponse.SERVING, status


def http_ok(url: str, timeout: float) -> tuple[bool, str]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status < 400, f"HTTP {response.status}"
    except urllib.error.HTTPError as exc:
        return False, f"HTTP {exc.code}"
    except (urllib.error.URLError, OSError) as exc:
        return False, str(getattr(exc, "reason", exc))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("target", help="host:port of a gRPC server, or an http:// URL")
    parser.add_argument("--service", default="", help='gRPC service name to check ("" = the whole server)')
    parser.add_argument("--timeout", type=float, default=3.0, help="seconds to wait for the answer")
    args = parser.parse_args(argv)
    if args.target.startswith(("http://", "https://")):
        healthy, detail = http_ok(args.target, args.timeout)
    else:
        healthy, detail = grpc_serving(args.target, args.service, args.timeout)
    print(f"{args.target}: {detail}", file=sys.stdout if healthy else sys.stderr)
    return 0 if healthy else 1


if __name__ == "__main__":
    sys.exit(main())
