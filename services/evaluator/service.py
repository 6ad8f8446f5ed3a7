"""The evaluator's logic behind its RPCs, one object per group: question sets
(and their generation), experiments, reports, the Query page's answers and
feedback. Knows nothing of gRPC: peers come as an object with plain methods
(services.evaluator.peers.GrpcPeers in the server, a fake in unit tests)."""

from __future__ import annotations

from chunklab.rpc.replicas import replica_name
from services.evaluator.deps import RunnerDeps
from services.evaluator.experiments.service import ExperimentService
from services.evaluator.leases import Leases
from services.evaluator.queries import QueryService
from services.evaluator.questions.generation import Generator
from services.evaluator.questions.service import QuestionSetService
from services.evaluator.reports.service import ReportService


class EvaluatorService:
    def __init__(
        self, deps: RunnerDeps, max_upload_bytes: int, report_piece_bytes: int, leases: Leases | None = None
    ) -> None:
        """leases: where this replica claims the experiments it runs (ADR 0065), and its
        question generations (ADR 0153); by default a 30 s lease in the repository's database
        under this process's name."""
        self._repo = deps.repository
        leases = leases or Leases(self._repo.sessions, replica_name(""), 30.0)
        self.sets = QuestionSetService(deps.repository, deps.peers, max_upload_bytes)
        self.generator = Generator(deps, leases.of("generation"))
        self.experiments = ExperimentService(deps, leases)
        self.reports = ReportService(deps.repository, report_piece_bytes)
        self.queries = QueryService(deps)

    def recover(self) -> list[str]:
        """Marks the generations and experiments a previous process left running as
        interrupted; returns the experiments' ids (ExperimentService.recover)."""
        self.generator.recover()
        return self.experiments.recover()

    def begin_stop(self) -> None:
        """Tells the running experiments to stop at their next step."""
        self.experiments.begin_stop()

    def stop(self, timeout: float = 2.0) -> None:
        """Stops the running experiments, waiting for them at most `timeout`."""
        self.generator.close()
        self.experiments.stop(timeout)
