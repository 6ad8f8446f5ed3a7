"""Calls to the evaluator: answers and feedback, question sets, experiments,
reports (written to disk as they stream, chunklab.client.reports) and the
metrics' catalogue."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from chunklab import experiment_state
from chunklab.client.core import UPLOAD_PIECE_BYTES, Calls, Source, client_stream, read_source
from chunklab.client.questions import import_header
from chunklab.client.reports import ReportDownload, SavedReport, opened, report_path
from chunklab.v1 import evaluator_pb2


@dataclass(frozen=True)
class ExperimentOutcome:
    """What a RunExperiment stream ended with: the estimate (a dry run) and the
    experiment (a run); None for what the stream did not carry."""

    estimate: evaluator_pb2.ExperimentEstimate | None
    experiment: evaluator_pb2.Experiment | None


def experiment_outcome(
    events: Iterable[evaluator_pb2.ExperimentEvent],
    on_progress: Callable[[evaluator_pb2.ExperimentProgress], None] | None = None,
) -> ExperimentOutcome:
    """Follows a RunExperiment stream (new or resumed) to its end, telling
    on_progress of each progress event."""
    estimate = experiment = None
    for event in events:
        kind = event.WhichOneof("event")
        if kind == "estimate":
            estimate = event.estimate
        elif kind == "progress" and on_progress is not None:
            on_progress(event.progress)
        elif kind == "experiment":
            experiment = event.experiment
    return ExperimentOutcome(estimate, experiment)


class EvaluationCalls(Calls):
    # -- answers and feedback ------------------------------------------------------

    def answer(self, request: evaluator_pb2.AnswerRequest) -> Iterator[evaluator_pb2.AnswerEvent]:
        """Yields the Answer stream: the context first, then pieces of the answer, then the result.

        The deadline covers a slow LLM writing a long answer, so it is the long one.
        """
        return self._stream("evaluator", "Answer", request)

    def submit_feedback(self, query_id: str, thumbs_up: bool, comment: str = "") -> evaluator_pb2.Feedback:
        request = evaluator_pb2.SubmitFeedbackRequest(query_id=query_id, thumbs_up=thumbs_up, comment=comment.strip())
        return self._call("evaluator", "SubmitFeedback", request)

    def summarize_feedback(self) -> list[evaluator_pb2.FeedbackSummary]:
        return list(self._call("evaluator", "SummarizeFeedback", evaluator_pb2.SummarizeFeedbackRequest()).strategies)

    # -- question sets -------------------------------------------------------------

    def import_question_set(
        self,
        source: Source,
        name: str = "",
        document_ids: dict[str, str] | None = None,
        piece_bytes: int = UPLOAD_PIECE_BYTES,
        excerpt_check: int = evaluator_pb2.EXCERPT_CHECK_UNSPECIFIED,
    ) -> evaluator_pb2.QuestionSet:
        """Streams a JSONL or CSV file (a path, or bytes named by `name`) to
        ImportQuestionSet; the format follows the file name's extension, and
        document_ids maps the file's corpus ids to documents. excerpt_check
        LENIENT keeps the questions whose excerpts are located and says (in
        the reply's validation) how many were left out; STRICT refuses."""
        data, file_name, _ = read_source(source, name, "question file")
        header = import_header(file_name, name, document_ids, excerpt_check)
        # References are located in the documents' text: large sets take a while.
        return self._call(
            "evaluator",
            "ImportQuestionSet",
            client_stream(evaluator_pb2.ImportQuestionSetRequest, header, data, piece_bytes),
            long=True,
        )

    def list_question_sets(self) -> list[evaluator_pb2.QuestionSet]:
        return self._every_page(
            "evaluator", "ListQuestionSets", evaluator_pb2.ListQuestionSetsRequest(), "question_sets"
        )

    def get_question_set(self, question_set_id: str) -> evaluator_pb2.QuestionSet:
        """The set with its questions and their references."""
        request = evaluator_pb2.GetQuestionSetRequest(question_set_id=question_set_id)
        return self._call("evaluator", "GetQuestionSet", request)

    def delete_question_set(self, question_set_id: str) -> None:
        """Refused (FAILED_PRECONDITION) while an experiment uses the set."""
        request = evaluator_pb2.DeleteQuestionSetRequest(question_set_id=question_set_id)
        self._call("evaluator", "DeleteQuestionSet", request)

    # -- experiments -----------------------------------------------------------------

    def run_experiment(
        self, config: evaluator_pb2.ExperimentConfig, dry_run: bool = False
    ) -> Iterator[evaluator_pb2.ExperimentEvent]:
        """Yields RunExperiment's events: the estimate, progress, and last the experiment."""
        request = evaluator_pb2.RunExperimentRequest(config=config, dry_run=dry_run)
        return self._stream("evaluator", "RunExperiment", request, long=not dry_run)

    def run_study(
        self,
        question_set_id: str,
        study: evaluator_pb2.Study,
        *,
        name: str = "",
        document_ids: Iterable[str] = (),
        collections: Iterable[str] = (),
        seed: int = 0,
        selection_share: float = 0.0,
        dry_run: bool = False,
    ) -> Iterator[evaluator_pb2.ExperimentEvent]:
        """Starts a tuning study (ADR 0112): an experiment whose runs are the trials a budgeted
        search adds, tuned on a seeded selection share of the questions (`seed`,
        `selection_share`, 0 meaning half) and confirmed on the rest. Yields RunExperiment's
        events (progress carries `study`); cancel and resume it as any experiment
        (cancel_experiment, resume_experiment); experiment_outcome follows it to its end."""
        config = evaluator_pb2.ExperimentConfig(
            name=name,
            question_set_id=question_set_id,
            retrieval_only=True,
            validation=evaluator_pb2.Validation(
                mode=evaluator_pb2.VALIDATION_MODE_HOLDOUT, seed=seed, selection_share=selection_share
            ),
            study=study,
        )
        config.retrieval.filter.document_ids.extend(document_ids)
        config.retrieval.filter.collections.extend(collections)
        return self.run_experiment(config, dry_run=dry_run)

    def resume_experiment(
        self, experiment_id: str, answer_api_key: str = "", judge_api_key: str = ""
    ) -> Iterator[evaluator_pb2.ExperimentEvent]:
        """Continues an interrupted experiment with its stored configuration; the
        API keys, which are never stored, are given again."""
        keys = evaluator_pb2.ExperimentConfig()
        if answer_api_key.strip():
            keys.answer_model.api_key = answer_api_key.strip()
        if judge_api_key.strip():
            keys.judge_model.api_key = judge_api_key.strip()
        request = evaluator_pb2.RunExperimentRequest(resume_experiment_id=experiment_id, config=keys)
        return self._stream("evaluator", "RunExperiment", request)

    def cancel_experiment(self, experiment_id: str) -> evaluator_pb2.CancelExperimentResponse:
        """Asks a queued or running experiment to stop before its next question; one no runner
        holds any more (its evaluator died) is stored as interrupted at once (the answer says so)."""
        request = evaluator_pb2.CancelExperimentRequest(experiment_id=experiment_id)
        return self._call("evaluator", "CancelExperiment", request)

    def follow_until_stopped(
        self, experiment_id: str, timeout: float | None = None, interval_s: float = 0.5
    ) -> Iterator[evaluator_pb2.Experiment]:
        """Yields the experiment (without its results) every interval_s until it is no longer
        queued or running (a Cancel took effect, or it ended) or `timeout` seconds (default: the
        long deadline) have passed; the last one yielded is how it is then. A caller that stops
        iterating stops the reads."""
        return self._polled(
            lambda: self.get_experiment(experiment_id, without_results=True),
            lambda experiment: experiment.state not in experiment_state.ACTIVE,
            timeout,
            interval_s,
        )

    def list_experiments(self) -> list[evaluator_pb2.Experiment]:
        return self._every_page("evaluator", "ListExperiments", evaluator_pb2.ListExperimentsRequest(), "experiments")

    def get_experiment(
        self, experiment_id: str, run_key: str = "", without_results: bool = False
    ) -> evaluator_pb2.Experiment:
        request = evaluator_pb2.GetExperimentRequest(
            experiment_id=experiment_id, run_key=run_key, without_results=without_results
        )
        return self._call("evaluator", "GetExperiment", request)

    def compare_experiments(self, experiment_ids: list[str]) -> evaluator_pb2.CompareExperimentsResponse:
        request = evaluator_pb2.CompareExperimentsRequest(experiment_ids=experiment_ids)
        return self._call("evaluator", "CompareExperiments", request)

    def open_report(self, experiment_id: str, view: int = evaluator_pb2.REPORT_VIEW_BOTH) -> ReportDownload:
        """Starts GetReport and reads its header: the download's `report` names the file, its
        `save(path)` writes the file piece by piece. Use it in a `with` block (or close it).
        A big report takes a while to render, so the call has the long deadline."""
        request = evaluator_pb2.GetReportRequest(experiment_id=experiment_id, view=view)
        return opened(self._stream("evaluator", "GetReport", request, long=True))

    def write_report(
        self, experiment_id: str, target: str | os.PathLike, view: int = evaluator_pb2.REPORT_VIEW_BOTH
    ) -> SavedReport:
        """Writes the report to target, a .html file or a folder (made if missing; the file then
        named as the evaluator names it), piece by piece: at any size, never held whole."""
        with self.open_report(experiment_id, view) as download:
            return download.save(report_path(target, download.report.file_name))

    def evaluator_limits(self) -> evaluator_pb2.EvaluatorLimits:
        """The bounds the evaluator enforces on what a person sets (e.g. questions to generate)."""
        return self._call("evaluator", "GetEvaluatorLimits", evaluator_pb2.GetEvaluatorLimitsRequest())

    def list_metrics(self) -> list[evaluator_pb2.MetricInfo]:
        """Every measure with its unit and whether higher is better, as the evaluator defines them."""
        return list(self._call("evaluator", "ListMetrics", evaluator_pb2.ListMetricsRequest()).metrics)
