"""The evaluator service's gRPC wiring: `python -m services.evaluator`.

On start-up, experiments that a previous process left running are marked
interrupted (their finished questions stay); on SIGTERM the running
experiment stops at its next step and is marked interrupted.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import chunklab
from chunklab import embeddings
from chunklab.db.sessions import make_sessionmaker
from chunklab.embeddings import get_provider, warm_up_in_background
from chunklab.errors import InvalidArgument
from chunklab.rpc import cancellation, limits, tracing
from chunklab.rpc.replicas import replica_name
from chunklab.rpc.server import configure_logging, serve
from chunklab.settings import Settings, load_settings
from chunklab.v1 import evaluator_pb2, evaluator_pb2_grpc
from services.evaluator.deps import RunnerDeps
from services.evaluator.experiments import grid, speeds
from services.evaluator.judging import answers, metric_catalog
from services.evaluator.judging.models import ModelDefaults
from services.evaluator.leases import Leases
from services.evaluator.limits import LIMITS
from services.evaluator.peers import GrpcPeers
from services.evaluator.service import EvaluatorService
from services.evaluator.storage.repository import Repository
from services.evaluator.storage.tables import Base

SERVICE = evaluator_pb2.DESCRIPTOR.services_by_name["EvaluatorService"]


# An experiment's runs are counted from its grids' shape before its request is even
# walked: a grid of a million cells is refused at once, whatever its size on the wire.
@limits.bounded(SERVICE, first={"RunExperiment": lambda request: grid.check_size(request.config.strategies)})
class EvaluatorServicer(evaluator_pb2_grpc.EvaluatorServiceServicer):
    def __init__(self, service: EvaluatorService) -> None:
        self._service = service

    def CreateQuestionSet(self, request, context):
        return self._service.sets.create(request)

    def ImportQuestionSet(self, request_iterator, context):
        return self._service.sets.import_file(*_header_and_pieces(request_iterator))

    def ValidateQuestionSet(self, request_iterator, context):
        return self._service.sets.validate(*_header_and_pieces(request_iterator))

    def GenerateQuestionSet(self, request, context):
        yield from self._service.generator.generate(request, cancellation.ended(context))

    def GetGeneration(self, request, context):
        return self._service.generator.get(request.generation_id)

    def AddQuestion(self, request, context):
        return self._service.sets.add_question(request)

    def UpdateQuestion(self, request, context):
        return self._service.sets.update_question(request)

    def DeleteQuestion(self, request, context):
        return self._service.sets.delete_question(request)

    def GetQuestionSet(self, request, context):
        return self._service.sets.get(request.question_set_id)

    def ListQuestionSets(self, request, context):
        return self._service.sets.list(request)

    def DeleteQuestionSet(self, request, context):
        self._service.sets.delete(request.question_set_id)
        return evaluator_pb2.DeleteQuestionSetResponse()

    def Answer(self, request, context):
        yield from self._service.queries.answer(request, cancellation.ended(context))

    def RunExperiment(self, request, context):
        yield from self._service.experiments.run(request, cancellation.ended(context))

    def CancelExperiment(self, request, context):
        return self._service.experiments.cancel(request)

    def GetExperiment(self, request, context):
        return self._service.experiments.get(request)

    def ListExperiments(self, request, context):
        return self._service.experiments.list(request)

    def CompareExperiments(self, request, context):
        return self._service.reports.compare(request)

    def GetReport(self, request, context):
        yield from self._service.reports.report(request)

    def SubmitFeedback(self, request, context):
        return self._service.queries.submit_feedback(request)

    def SummarizeFeedback(self, request, context):
        return self._service.queries.summarize_feedback()

    def ListMetrics(self, request, context):
        return metric_catalog.list_metrics()

    def GetEvaluatorLimits(self, request, context):
        return LIMITS


def _header_and_pieces(request_iterator):
    """An import's header and an iterator over its data pieces."""
    first = next(request_iterator, None)
    if first is None or first.WhichOneof("part") != "header":
        raise InvalidArgument("an import starts with a header message (name, format, document_ids)")

    def pieces():
        for message in request_iterator:
            if message.WhichOneof("part") != "data":
                raise InvalidArgument("only the first message of an import may be a header")
            yield message.data

    return first.header, pieces()


def code_version() -> str:
    """The package version, with the git commit when the code runs from a checkout."""
    version = f"chunklab {getattr(chunklab, '__version__', '0.1.0')}"
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=Path(__file__).resolve().parent,
            capture_output=True,
            text=True,
            timeout=2,
            check=False,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit = ""
    return f"{version} (git {commit})" if commit else version


def build_service(settings: Settings) -> EvaluatorService:
    repository = Repository(make_sessionmaker(settings.database_url_for("evaluator"), Base, settings.db_busy_timeout_s))
    deps = RunnerDeps(
        repository=repository,
        peers=GrpcPeers(settings),
        provider_for=get_provider,
        defaults=ModelDefaults.from_settings(settings),
        default_embedding_model=settings.embedding_model,
        code_version=code_version(),
        judge_attempts=settings.llm_max_retries + 1,
    )
    leases = Leases(repository.sessions, replica_name(settings.replica_name), settings.experiment_lease_s)
    return EvaluatorService(deps, int(settings.max_upload_mb * 1_000_000), settings.report_piece_bytes, leases)


def warm_up(provider) -> None:
    """At start-up, off the request path: the first extractive answer, and this machine's
    calibration for the dry run's estimate (speeds.py), which the first experiment would
    otherwise measure while its caller waits (ADR 0143)."""
    answers.warm_up(provider)
    speeds.calibrate(provider)


def main() -> None:
    configure_logging()
    settings = load_settings()
    tracing.start("evaluator", settings)  # before any channel or server is made
    embeddings.configure(settings)  # "openai:" models learn their endpoint
    warm_up_in_background(settings.embedding_model, then=warm_up)
    service = build_service(settings)
    service.recover()
    servicer = EvaluatorServicer(service)
    serve(
        "evaluator",
        settings.evaluator_address,
        lambda server: evaluator_pb2_grpc.add_EvaluatorServiceServicer_to_server(servicer, server),
        [SERVICE.full_name],
        settings=settings,
        workers=settings.grpc_workers,
        grace_s=settings.shutdown_grace_s,
        on_signal=service.begin_stop,
        on_stop=service.stop,
    )
