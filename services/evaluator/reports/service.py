"""The reading RPCs over finished experiments: CompareExperiments and GetReport."""

from __future__ import annotations

from collections.abc import Iterator

from chunklab import experiment_state
from chunklab.errors import FailedPrecondition, InvalidArgument, NotFound
from chunklab.v1 import evaluator_pb2
from services.evaluator.experiments.summary import summarize
from services.evaluator.reports import compare, report, winner
from services.evaluator.storage.repository import Repository


class ReportService:
    def __init__(self, repository: Repository, report_piece_bytes: int) -> None:
        self._repo = repository
        self._report_piece = report_piece_bytes

    def compare(self, request: evaluator_pb2.CompareExperimentsRequest) -> evaluator_pb2.CompareExperimentsResponse:
        ids = list(dict.fromkeys(request.experiment_ids))
        # A study (ADR 0112) is compared alone too: each trial against its first, the static
        # recommendation (ADR 0116).
        if len(ids) < 2 and not (len(ids) == 1 and self._repo.experiment(ids[0]).config.HasField("study")):
            raise InvalidArgument("name at least two different experiments to compare (or one study)")
        samples = request.bootstrap_samples or compare.DEFAULT_SAMPLES
        if not 100 <= samples <= compare.MAX_SAMPLES:
            raise InvalidArgument(f"bootstrap_samples must be between 100 and {compare.MAX_SAMPLES}, got {samples}")
        experiments, results = [], {}
        for experiment_id in ids:
            experiment = self._repo.experiment(experiment_id)
            results[experiment_id] = self._repo.results(experiment_id)
            summarize(experiment, results[experiment_id])
            experiments.append(experiment)
        deciding = winner.headline_metric([r for e in experiments for r in e.runs if r.questions_done])
        return evaluator_pb2.CompareExperimentsResponse(
            experiments=experiments,
            warnings=compare.warnings(experiments, self._set_names(experiments))
            + compare.left_out(experiments, results),
            differences=compare.differences(experiments, results, samples),
            wins=compare.wins(experiments, results, deciding),
        )

    def _set_names(self, experiments: list[evaluator_pb2.Experiment]) -> dict[str, str]:
        """Question-set id -> name, for the sets still stored (a warning names them as the UI does)."""
        names = {}
        for set_id in {e.config.question_set_id for e in experiments}:
            try:
                names[set_id] = self._repo.get_question_set(set_id, with_questions=False).name
            except NotFound:  # deleted since: the warning says so; a database out of reach is raised
                continue
        return names

    def report(self, request: evaluator_pb2.GetReportRequest) -> Iterator[evaluator_pb2.ReportPiece]:
        """GetReport's stream: the header, then the file in pieces, rendered as they are sent.
        Nothing is sent before the experiment is found finished, so a refusal is the stream's status."""
        experiment = self._repo.experiment(request.experiment_id)
        if experiment.state in experiment_state.ACTIVE:
            raise FailedPrecondition(
                f"experiment {experiment.experiment_id} is still {experiment_state.name(experiment.state)}; "
                "its report is written once it ends"
            )
        results = self._repo.results(experiment.experiment_id)
        summarize(experiment, results)
        question_set = self._repo.get_question_set(experiment.config.question_set_id)
        yield evaluator_pb2.ReportPiece(
            header=evaluator_pb2.Report(
                experiment_id=experiment.experiment_id,
                file_name=report.file_name(experiment),
                content_type=report.CONTENT_TYPE,
                view=report.shown_view(request.view),
            )
        )
        for data in report.pieces(experiment, question_set, results, request.view, self._report_piece):
            yield evaluator_pb2.ReportPiece(data=data)
