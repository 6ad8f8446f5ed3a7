"""Each service's standard grpc.health.v1 answer, for the health page and for scripts."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from chunklab.client.core import SERVICES, Calls
from chunklab.errors import said_by_grpc
from chunklab.rpc import channels


@dataclass(frozen=True)
class ServiceHealth:
    """One service's answer."""

    service: str
    address: str
    status: str  # SERVING, NOT_SERVING, ... or UNREACHABLE
    detail: str = ""


class HealthCalls(Calls):
    def service_health(self) -> list[ServiceHealth]:
        """Each service's health for the whole server (a fresh channel per service)."""
        rows = []
        for service in SERVICES:
            address = self.address(service)
            # A fresh channel each time: a cached one could report a server
            # that has gone away as still connected for a while.
            with channels.channel(address, self.settings) as channel:
                try:
                    reply = health_pb2_grpc.HealthStub(channel).Check(
                        health_pb2.HealthCheckRequest(service=""), timeout=min(self.settings.rpc_timeout_s, 5.0)
                    )
                    status = health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)
                    rows.append(ServiceHealth(service, address, status))
                except grpc.RpcError as exc:
                    rows.append(ServiceHealth(service, address, "UNREACHABLE", _why(exc)))
        return rows


def _why(exc: grpc.RpcError) -> str:
    """Why a health check failed, in our words (gRPC's own go to the log, ADR 0079)."""
    code, details = exc.code(), exc.details() or ""
    if said_by_grpc(code, details):
        logging.getLogger("chunklab.client").info("health check: %s: %s", code.name, details)
        return f"{code.name}: not reached in time; check that it is running and that the address is right"
    return f"{code.name}: {details}"  # the service answered: its own sentence
