"""What the UI's "Find the best configuration" page and `chunklab tune` share (ADR 0116): the
study's winner made the active index set of every document the study searched, and the result
as JSON. The study itself runs in the evaluator; the views are chunklab.views.study_view."""

from __future__ import annotations

from chunklab.client import ChunkLab
from chunklab.v1 import evaluator_pb2
from chunklab.views import study_view
from chunklab.views.metric_format import MetricFormat


class NothingToActivate(ValueError):
    """The study has no run to activate; the message says why."""


def winner_run(experiment: evaluator_pb2.Experiment, run_key: str = "") -> evaluator_pb2.ExperimentRun:
    """The configuration the study offers to take home (its winner, or the recommendation where the
    winner falls below it on the confirmation questions: study_view.take_home), or run_key's run."""
    wanted = run_key or study_view.take_home(experiment)[0]
    if not wanted:
        raise NothingToActivate(experiment.study.summary or "the study has no winner yet")
    found = next((run for run in experiment.runs if run.run_key == wanted), None)
    if found is None:
        raise NothingToActivate(f"the study has no run {wanted}")
    return found


def make_active(client: ChunkLab, experiment: evaluator_pb2.Experiment, run_key: str = "") -> list[str]:
    """The winner's index set made the active one of each document the study used (queries
    without a config_id search it from then on); returns the documents' ids. Its retrieval
    settings (hybrid, top_k, neighbours) are no index state: "copy as code" carries them."""
    run = winner_run(experiment, run_key)
    documents = sorted(experiment.provenance.document_hashes)
    if not documents:
        raise NothingToActivate("the study has not processed any document yet")
    model = experiment.provenance.embedding_model
    for document_id in documents:
        client.activate_indexed_set(document_id, run.spec.name, run.config_id, embedding_model=model)
    return documents


def _intervals(candidate: evaluator_pb2.StudyCandidate) -> dict:
    return {m.metric: {"mean": m.mean, "ci_low": m.ci_low, "ci_high": m.ci_high} for m in candidate.means}


def result_json(experiment: evaluator_pb2.Experiment, metrics: MetricFormat) -> dict:
    """`chunklab tune --json`: the winner beside the baseline and the recommendation on the
    confirmation questions (raw values, fractions as fractions), and every trial."""
    result = experiment.study
    return {
        "study_id": experiment.experiment_id,
        "state": evaluator_pb2.ExperimentState.Name(experiment.state).removeprefix("EXPERIMENT_STATE_").lower(),
        "summary": result.summary,
        "objective": study_view.objective_text(experiment.config.study.objective, metrics),
        "trials_done": result.trials_done,
        "trials_pruned": result.trials_pruned,
        "trials_failed": result.trials_failed,
        "seconds_used": round(result.seconds_used, 1),
        "selection_questions": result.selection_questions,
        "confirmation_questions": result.confirmation_questions,
        "confirmation": [
            {"role": c.role, "run_key": c.run_key, "feasible": c.feasible, **_intervals(c)} for c in result.confirmation
        ],
        "lead": {
            "metric": result.deciding_metric,
            "difference": result.lead,
            "ci_low": result.lead_ci_low,
            "ci_high": result.lead_ci_high,
            "tie": result.tie,
        },
        "take_home": dict(zip(("run_key", "role"), study_view.take_home(experiment), strict=True)),
        "notes": list(result.notes),
        "pareto": list(result.pareto_run_keys),
        "trials": [
            {
                "number": run.trial.number,
                "run_key": run.run_key,
                "origin": run.trial.origin,
                "state": run.trial.state,
                "questions": run.trial.questions,
                "recall": run.trial.recall,
                "iou": run.trial.iou,
                "tokens_sent": run.trial.tokens_sent,
                "feasible": run.trial.feasible,
                "pareto": run.trial.pareto,
                "error": run.error,
            }
            for run in experiment.runs
            if run.HasField("trial")
        ],
    }
