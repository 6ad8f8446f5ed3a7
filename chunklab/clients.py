"""Channels and stubs for calling ChunkLab services.

Every call carries a deadline (callers pass `timeout=`); the channel retries
only UNAVAILABLE, through gRPC's service config.
"""

from __future__ import annotations

import json

import grpc

from chunklab.server import CHANNEL_OPTIONS
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
                "retryPolicy": {
                    "maxAttempts": 4,
                    "initialBackoff": "0.2s",
                    "maxBackoff": "2s",
                    "backoffMultiplier": 2,
                    "retryableStatusCodes": ["UNAVAILABLE"],
                },
            }
        ]
    }
)


def channel(address: str) -> grpc.Channel:
    return grpc.insecure_channel(
        address,
        options=[*CHANNEL_OPTIONS, ("grpc.service_config", _RETRY_CONFIG), ("grpc.enable_retries", 1)],
    )


def ingest(address: str) -> ingest_pb2_grpc.IngestServiceStub:
    return ingest_pb2_grpc.IngestServiceStub(channel(address))


def chunker(address: str) -> chunker_pb2_grpc.ChunkerServiceStub:
    return chunker_pb2_grpc.ChunkerServiceStub(channel(address))


def retriever(address: str) -> retriever_pb2_grpc.RetrieverServiceStub:
    return retriever_pb2_grpc.RetrieverServiceStub(channel(address))


def evaluator(address: str) -> evaluator_pb2_grpc.EvaluatorServiceStub:
    return evaluator_pb2_grpc.EvaluatorServiceStub(channel(address))
