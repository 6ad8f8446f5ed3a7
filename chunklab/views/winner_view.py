"""How an experiment's winner holds up on questions it was not chosen on
(WinnerValidation, ADR 0046), in words and a small table: the evaluator's
report, the UI's Experiments and Compare pages and the CLI all say it alike.
Plain data out; the callers lay it out."""

from __future__ import annotations

from chunklab.v1 import evaluator_pb2 as pb
from chunklab.views.metric_format import MetricFormat


def _interval(metrics: MetricFormat, name: str, score: pb.ValidatedScore) -> str:
    return f"{metrics.value(name, score.ci_low)} to {metrics.value(name, score.ci_high)}"


def _names(keys) -> str:
    keys = list(keys)
    return keys[0] if len(keys) == 1 else f"{', '.join(keys[:-1])} and {keys[-1]}"


def shared_lead(found: pb.WinnerValidation, metrics: MetricFormat, total: int) -> str:
    """No single winner where the winner is chosen: the leaders, and nothing to confirm."""
    label = metrics.label(found.metric)
    if found.mode == pb.VALIDATION_MODE_HOLDOUT:
        where = f"On the {found.selection_questions} of the {total} questions that choose (seed {found.seed})"
    else:
        every = found.confirmation_questions if found.mode == pb.VALIDATION_MODE_K_FOLD else found.selection_questions
        where = f"On all {every} questions"
    text = (
        f"{where}, {_names(found.leaders)} share the lead on {label} and "
        f"{'neither beats the other' if len(found.leaders) == 2 else 'none beats another'} on "
        "IoU or tokens sent: there is no single winner to confirm or to copy."
    )
    if found.mode == pb.VALIDATION_MODE_K_FOLD and found.scores:
        head = found.scores[0]
        text += (
            f" In {len(found.fold_winners)}-fold validation (seed {found.seed}), choosing this way scores {label} "
            f"{metrics.value(found.metric, head.confirmation_mean)} (95% interval "
            f"{_interval(metrics, found.metric, head)}) on questions it was not chosen on."
        )
    return text


def winner_view(found: pb.WinnerValidation, metrics: MetricFormat) -> dict | None:
    """One sentence, and the winner's measures where it was chosen, where it was
    confirmed and over every question; None when the experiment has no validation.
    Where several runs share the lead (ADR 0080) the sentence names them all and
    there is no table: there is no single winner to confirm."""
    if not found.metric and not found.unavailable:
        return None
    if found.unavailable:
        return {"text": f"The winner could not be checked on held-out questions: {found.unavailable}.", "rows": []}
    label = metrics.label(found.metric)
    total = found.selection_questions + (
        found.confirmation_questions if found.mode == pb.VALIDATION_MODE_HOLDOUT else 0
    )
    if not found.winner_run_key:
        return {"text": shared_lead(found, metrics, total), "rows": []}
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
            f"In {folds}-fold validation (seed {found.seed}), {found.winner_run_key} (the winner on every question) "
            f"was chosen in "
            f"{list(found.fold_winners).count(found.winner_run_key)} of {folds} folds. Choosing the best "
            f"configuration this way scores {label} {metrics.value(found.metric, head.confirmation_mean)} "
            f"(95% interval {_interval(metrics, found.metric, head)}) on questions it was not chosen on, against "
            f"{metrics.value(found.metric, head.selection_mean)} on the questions that chose it."
        )
    if found.mode == pb.VALIDATION_MODE_HOLDOUT and found.all_questions_winner_run_key != found.winner_run_key:
        everywhere = found.all_questions_winner_run_key
        text += (
            f" On every question at once {everywhere} wins: part of such a lead is luck on the questions it is "
            "measured on."
            if everywhere
            else " On every question at once several runs share the lead."
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
