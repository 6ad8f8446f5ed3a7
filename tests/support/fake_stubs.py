"""What tests give the client library in place of a server: a failed call
and settings whose deadlines (7 s, 700 s) show which one a call took."""

from __future__ import annotations

import grpc

from chunklab.settings import Settings


class FakeRpcError(grpc.RpcError):
    def __init__(self, code: grpc.StatusCode, details: str):
        self._code, self._details = code, details

    def code(self):
        return self._code

    def details(self):
        return self._details


def settings() -> Settings:
    return Settings(
        ingest_address="127.0.0.1:1",
        chunker_address="127.0.0.1:2",
        retriever_address="127.0.0.1:3",
        evaluator_address="127.0.0.1:4",
        rpc_timeout_s=7,
        long_rpc_timeout_s=700,
    )
