"""An experiment's summary from its finished questions: each run's means, usage,
count and per-document figures (per_document.py), then the winner's hold-out validation (holdout.py) and the verdict
(reports/verdict.py)."""

from __future__ import annotations

from collections.abc import Sequence

from chunklab.v1 import common_pb2, evaluator_pb2
from services.evaluator.experiments import holdout, per_document
from services.evaluator.judging import judge
from services.evaluator.judging.scoring import mean_metrics
from services.evaluator.reports import verdict


def summarize(
    experiment: evaluator_pb2.Experiment, results: Sequence[evaluator_pb2.QuestionResult], validated: bool = True
) -> None:
    """Fills each run's means, usage and count from the finished questions,
    and (when `validated`) the winner's hold-out validation and the verdict."""
    by_run: dict[str, list[evaluator_pb2.QuestionResult]] = {}
    for result in results:
        by_run.setdefault(result.run_key, []).append(result)
    experiment.questions_done = len(results)
    for run in experiment.runs:
        items = by_run.get(run.run_key, [])
        run.questions_done = len(items)
        failed = [r.error for r in items if r.error]
        run.questions_failed = len(failed)
        run.question_error = failed[0] if failed else ""
        run.mean_metrics.CopyFrom(mean_metrics([r.metrics for r in items]))
        run.mean_judge.CopyFrom(mean_judge([r.judge for r in items if r.HasField("judge")]))
        run.usage.CopyFrom(total_usage(items))
        per_document.fill(run, items, experiment.provenance)
    if validated and experiment.config.HasField("study"):
        _validate_study(experiment, results)
    elif validated:
        experiment.validation.CopyFrom(holdout.validate(experiment, results))
        experiment.verdict.CopyFrom(verdict.decide(experiment, results))


def _validate_study(experiment: evaluator_pb2.Experiment, results: Sequence[evaluator_pb2.QuestionResult]) -> None:
    """A study's hold-out and verdict are those of the runs it confirmed (the winner, the baseline
    and the recommendation, which answered every question); its other trials saw only part of the
    selection questions (ADR 0114)."""
    confirmed = {c.run_key for c in experiment.study.confirmation}
    view = evaluator_pb2.Experiment()
    view.CopyFrom(experiment)
    del view.runs[:]
    view.runs.extend(r for r in experiment.runs if r.run_key in confirmed)
    kept = [r for r in results if r.run_key in confirmed]
    experiment.validation.CopyFrom(holdout.validate(view, kept))
    experiment.verdict.CopyFrom(verdict.decide(view, kept))


def total_usage(results: Sequence[evaluator_pb2.QuestionResult]) -> common_pb2.TokenUsage:
    usage = common_pb2.TokenUsage()
    for r in results:
        usage.prompt_tokens += r.usage.prompt_tokens
        usage.completion_tokens += r.usage.completion_tokens
        usage.llm_calls += r.usage.llm_calls
        usage.estimated_cost_usd += r.usage.estimated_cost_usd
    return usage


def mean_judge(items: Sequence[evaluator_pb2.JudgeScores]) -> evaluator_pb2.JudgeScores:
    """Means over the measured scores only; the reason says how many were."""
    mean = evaluator_pb2.JudgeScores()
    if items:
        mean.judge_model = items[0].judge_model
        mean.prompt_version = items[0].prompt_version
    for measure in judge.MEASURES:
        scores = [getattr(j, measure) for j in items]
        measured = [s.value for s in scores if s.measured]
        target = getattr(mean, measure)
        target.measured = bool(measured)
        target.value = sum(measured) / len(measured) if measured else 0.0
        target.reason = f"{len(measured)} of {len(scores)} questions measured"
    return mean
