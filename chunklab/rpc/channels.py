"""Channels and stubs for calling ChunkLab services.

Every call carries a deadline (callers pass `timeout=`); the channel retries
only UNAVAILABLE, through gRPC's service config. Each channel speaks TLS and
carries the token as its settings say (chunklab.rpc.security; default: the
environment's settings, as the services read them), and is traced when the
process turned tracing on (chunklab.rpc.tracing).
"""

from __future__ import annotations

import json

import grpc

from chunklab.rpc import replicas, security, tracing
from chunklab.rpc.server import CHANNEL_OPTIONS
from chunklab.settings import Settings
from chunklab.v1 import (
    chunker_pb2_grpc,
    evaluator_pb2_grpc,
    ingest_pb2_grpc,
    retriever_pb2_grpc,
)

_RETRY_CONFIG = json.dumps(
    {
        # Spread calls over every address a name resolves to (scaled replicas).
        "loadBalancingConfig": [{"round_robin": {}}],
        "methodConfig": [
            {
                "name": [{}],
                # Retries span about 4 s (0.25 + 0.5 + 1 + 2), longer than the
                # reconnect backoff below: a service restarted meanwhile is reached.
                "retryPolicy": {
                    "maxAttempts": 5,
                    "initialBackoff": "0.25s",
                    "maxBackoff": "2s",
                    "backoffMultiplier": 2,
                    "retryableStatusCodes": ["UNAVAILABLE"],
                },
            }
        ],
    }
)


def channel(address: str, settings: Settings | None = None) -> grpc.Channel:
    """address: one host:port (a name may resolve to every replica) or a list of
    ip:port, one per replica (chunklab.rpc.replicas; calls go round robin)."""
    return tracing.traced_channel(
        security.open_channel(
            replicas.target(address),
            settings if settings is not None else Settings(),
            [
                *CHANNEL_OPTIONS,
                ("grpc.service_config", _RETRY_CONFIG),
                ("grpc.enable_retries", 1),
                # gRPC waits up to 120 s between reconnects to a peer that went away; a
                # restarted service should be found again within a second.
                ("grpc.initial_reconnect_backoff_ms", 250),
                ("grpc.min_reconnect_backoff_ms", 250),
                ("grpc.max_reconnect_backoff_ms", 1000),
            ],
        )
    )


def ingest(address: str, settings: Settings | None = None) -> ingest_pb2_grpc.IngestServiceStub:
    return ingest_pb2_grpc.IngestServiceStub(channel(address, settings))


def chunker(address: str, settings: Settings | None = None) -> chunker_pb2_grpc.ChunkerServiceStub:
    return chunker_pb2_grpc.ChunkerServiceStub(channel(address, settings))


def retriever(address: str, settings: Settings | None = None) -> retriever_pb2_grpc.RetrieverServiceStub:
    return retriever_pb2_grpc.RetrieverServiceStub(channel(address, settings))


def evaluator(address: str, settings: Settings | None = None) -> evaluator_pb2_grpc.EvaluatorServiceStub:
    return evaluator_pb2_grpc.EvaluatorServiceStub(channel(address, settings))
