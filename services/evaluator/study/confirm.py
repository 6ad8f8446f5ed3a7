"""A study's result on the questions it did not see (ADR 0114): the winner, the fixed_size baseline
and the static recommendation scored on the same confirmation questions, each measure with its
bootstrap 95% interval, the winner's paired lead over the recommendation, and a sentence that says
what was found: a winner, a tie within the interval, or no configuration that meets the objective."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from chunklab.v1 import evaluator_pb2 as pb
from chunklab.views import numbers
from services.evaluator.reports import compare
from services.evaluator.study import objective

BOOTSTRAP_SAMPLES = 2000
MEASURES = ("recall", "iou", "tokens_sent")


def _value(result: pb.QuestionResult, metric: str) -> float:
    return float(getattr(result.metrics, metric))


def candidate(role: str, run_key: str, results: Sequence[pb.QuestionResult], goal: pb.StudyObjective):
    """One configuration's means on the confirmation questions (its results there)."""
    found = pb.StudyCandidate(role=role, run_key=run_key)
    for metric in MEASURES:
        values = np.array([_value(r, metric) for r in results], dtype=float)
        low, high = compare.bootstrap_ci(values, BOOTSTRAP_SAMPLES) if len(values) else (0.0, 0.0)
        found.means.add(
            run_key=run_key,
            metric=metric,
            mean=float(values.mean()) if len(values) else 0.0,
            ci_low=low,
            ci_high=high,
            questions=len(values),
        )
    found.feasible = objective.feasible(objective.scores(results), goal)
    return found


def fill(
    result: pb.StudyResult,
    roles: Mapping[str, str],
    by_run: Mapping[str, Sequence[pb.QuestionResult]],
    goal: pb.StudyObjective,
    front: Sequence[str] = (),
) -> None:
    """Fills the confirmation, the lead and the summary. roles: role -> run key ("" when the
    space lacked it); front: PARETO's other front trials confirmed (role "front", ADR 0146);
    by_run: each run's results on the confirmation questions."""
    del result.confirmation[:]
    for role in ("winner", "baseline", "recommendation"):
        if roles.get(role):
            result.confirmation.append(candidate(role, roles[role], by_run.get(roles[role], []), goal))
    for key in front:
        result.confirmation.append(candidate("front", key, by_run.get(key, []), goal))
    metric = objective.deciding_metric(goal)
    result.deciding_metric = metric
    winner, reference = roles.get("winner", ""), roles.get("recommendation", "")
    if winner and reference and winner != reference:
        a = {r.question_id: _value(r, metric) for r in by_run.get(winner, [])}
        b = {r.question_id: _value(r, metric) for r in by_run.get(reference, [])}
        shared = sorted(set(a) & set(b))
        differences = np.array([a[q] - b[q] for q in shared], dtype=float)
        result.lead = float(differences.mean()) if len(differences) else 0.0
        result.lead_ci_low, result.lead_ci_high = compare.bootstrap_ci(differences, BOOTSTRAP_SAMPLES)
        result.tie = result.lead_ci_low <= 0.0 <= result.lead_ci_high
    else:
        result.lead = result.lead_ci_low = result.lead_ci_high = 0.0
        result.tie = False
    result.summary = summary(result, roles)


def _mean(found: pb.StudyCandidate, metric: str) -> float:
    return next((m.mean for m in found.means if m.metric == metric), 0.0)


def summary(result: pb.StudyResult, roles: Mapping[str, str]) -> str:
    """What the study found, for a person."""
    by_role = {c.role: c for c in result.confirmation}
    win, rec = by_role.get("winner"), by_role.get("recommendation")
    if win is None:
        return "no configuration tried meets the objective on the selection questions" + (
            f"; {result.notes[-1]}" if result.notes else ""
        )
    head = (
        f"{win.run_key}: recall {numbers.percent(_mean(win, 'recall'))}, IoU {numbers.percent(_mean(win, 'iou'))}, "
        f"{numbers.count(_mean(win, 'tokens_sent'))} tokens per question on {result.confirmation_questions} "
        "confirmation questions it was not chosen on"
    )
    front = sum(1 for c in result.confirmation if c.role == "front")
    if front:
        head += f"; {numbers.counted(front, 'other configuration')} on the Pareto front confirmed beside it"
    if rec is None:
        return head
    if win.run_key == rec.run_key:
        return head + "; the search found nothing better than the static recommendation, which stays the answer"
    better = _mean(win, "recall") >= _mean(rec, "recall") and _mean(win, "iou") >= _mean(rec, "iou")
    lead = f"{numbers.points(result.lead)} {result.deciding_metric} over the recommendation (95% interval "
    lead += f"{numbers.points(result.lead_ci_low)} to {numbers.points(result.lead_ci_high)})"
    if not better:
        return (
            head + f"; {lead}; on these questions it is not at least as good as the recommendation on both "
            "recall and IoU: keep the recommendation"
        )
    if result.tie:
        return head + f"; {lead}: the interval holds 0, so its lead may be a tie"
    return head + f"; {lead}"
