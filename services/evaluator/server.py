"""The evaluator service's gRPC wiring: `python -m services.evaluator`.

Question sets, answers, judges, experiments, comparisons and reports arrive
with issue 6; until then every RPC answers UNIMPLEMENTED and says so, while
the server already stands with health, reflection and graceful shutdown.
"""

from __future__ import annotations

from chunklab.errors import Unimplemented
from chunklab.server import configure_logging, serve
from chunklab.settings import load_settings
from chunklab.v1 import evaluator_pb2, evaluator_pb2_grpc

SERVICE = evaluator_pb2.DESCRIPTOR.services_by_name["EvaluatorService"]


def _deferred(method: str):
    def handler(self, request, context):
        raise Unimplemented(f"EvaluatorService.{method} arrives with issue 6 (evaluator); it is not built yet")

    handler.__name__ = method
    return handler


EvaluatorServicer = type(
    "EvaluatorServicer",
    (evaluator_pb2_grpc.EvaluatorServiceServicer,),
    {m.name: _deferred(m.name) for m in SERVICE.methods},
)


def main() -> None:
    configure_logging()
    settings = load_settings()
    servicer = EvaluatorServicer()
    serve(
        "evaluator",
        settings.evaluator_address,
        lambda server: evaluator_pb2_grpc.add_EvaluatorServiceServicer_to_server(servicer, server),
        [SERVICE.full_name],
        workers=settings.grpc_workers,
        grace_s=settings.shutdown_grace_s,
    )
