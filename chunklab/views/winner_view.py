"""How an experiment's winner holds up on questions it was not chosen on
(WinnerValidation, ADR 0046), in words and a small table: the evaluator's
report, the UI's Experiments and Compare pages and the CLI all say it alike.
Plain data out; the callers lay it out."""

from __future__ import annotations

from chunklab.v1 import evaluator_pb2 as pb
from chunklab.views.metric_format import MetricFormat


def _interval(metrics: MetricFormat, name: str, score: pb.ValidatedScore) -> str:
    return f"{metrics.value(name, score.ci_low)} to {metrics.value(name, score.ci_high)}"


def winner_view(found: pb.WinnerValidation, metrics: MetricFormat) -> dict | None:
    """One sentence, and the winner's measures where it was chosen, where it was
    confirmed and over every question; None when the experiment has no validation."""
    if not found.metric and not found.unavailable:
        return None
    if found.unavailable:
        return {"text": f"The winner could not be checked on held-out questions: {found.unavailable}.", "rows": []}
    label = metrics.label(found.metric)
    total = found.selection_questions + (
        found.confirmation_questions if found.mode == pb.VALIDATION_MODE_HOLDOUT else 0
    )
    head = found.scores[0]
    if found.mode == pb.VALIDATION_MODE_NONE:
        text = (
            f"{found.winner_run_key} was chosen and scored on the same {found.selection_questions} questions, "
            "which flatters it: run the experiment with holdout or k-fold validation to see how it holds up "
            "on questions it was not chosen on."
        )
    elif found.mode == pb.VALIDATION_MODE_HOLDOUT:
        text = (
            f"{found.winner_run_key} was chosen on {found.selection_questions} of the {total} questions "
            f"(seed {found.seed}) and scores {label} {metrics.value(found.metric, head.confirmation_mean)} "
            f"(95% interval {_interval(metrics, found.metric, head)}) on the other {found.confirmation_questions}, "
            f"against {metrics.value(found.metric, head.selection_mean)} on the questions that chose it."
        )
    else:
        folds = len(found.fold_winners)
        text = (
            f"In {folds}-fold validation (seed {found.seed}), {found.winner_run_key} was chosen in "
            f"{list(found.fold_winners).count(found.winner_run_key)} of {folds} folds. Choosing the best "
            f"configuration this way scores {label} {metrics.value(found.metric, head.confirmation_mean)} "
            f"(95% interval {_interval(metrics, found.metric, head)}) on questions it was not chosen on, against "
            f"{metrics.value(found.metric, head.selection_mean)} on the questions that chose it."
        )
    if found.all_questions_winner_run_key and found.all_questions_winner_run_key != found.winner_run_key:
        text += (
            f" On every question at once {found.all_questions_winner_run_key} looks best: part of such a "
            "lead is luck on the questions it is measured on."
        )
    confirmed = found.mode != pb.VALIDATION_MODE_NONE
    rows = [
        {
            "metric": metrics.label(s.metric),
            "selection": metrics.value(s.metric, s.selection_mean),
            "confirmation": (
                f"{metrics.value(s.metric, s.confirmation_mean)} ({_interval(metrics, s.metric, s)})"
                if confirmed
                else "not confirmed"
            ),
            "all": metrics.value(s.metric, s.all_mean),
        }
        for s in found.scores
    ]
    return {"text": text, "rows": rows}
