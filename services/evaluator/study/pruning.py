"""When a trial stops early (ADR 0133): only when it cannot win even at the top of its 95%
interval on the selection questions it has answered so far. Two ways it cannot:

- it cannot meet the token cap: the lowest tokens per question its interval allows is over the cap;
- it cannot reach the best so far (not for PARETO, whose front holds trials that trade one measure
  for another): on the same questions, the paired difference of the deciding
  measure (recall, or IoU for IOU_AT_RECALL), at the top of its interval, stays below the margin
  within which the objective calls two trials a tie (objective.tied). For IOU_AT_RECALL, also a
  recall whose interval stays below the floor.

The interval is the paired bootstrap the confirmation uses (reports.compare.bootstrap_ci, seeded),
so the same rule that says "the lead may be a tie" after the search keeps a trial in it during the
search. Few questions make wide intervals: early rungs prune only the clearly hopeless."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from chunklab.v1 import evaluator_pb2 as pb
from services.evaluator.reports import compare
from services.evaluator.study import objective

BOOTSTRAP_SAMPLES = 1000


def _labelled(results: Sequence[pb.QuestionResult]) -> dict[str, pb.RetrievalMetrics]:
    return {r.question_id: r.metrics for r in results if r.metrics.labelled and not r.error}


def top_of(values: np.ndarray) -> float:
    """The top of the 95% interval of the values' mean."""
    return compare.bootstrap_ci(values, BOOTSTRAP_SAMPLES)[1] if len(values) else 0.0


def bottom_of(values: np.ndarray) -> float:
    return compare.bootstrap_ci(values, BOOTSTRAP_SAMPLES)[0] if len(values) else 0.0


def cannot_win(
    trial: Sequence[pb.QuestionResult], best: Sequence[pb.QuestionResult] | None, goal: pb.StudyObjective
) -> bool:
    """True when the trial, at the top of its interval on the questions it answered, can neither
    meet the objective's constraints nor tie the best trial so far (None: no best yet)."""
    mine = _labelled(trial)
    if not mine:
        return False
    tokens = np.array([m.tokens_sent for m in mine.values()], dtype=float)
    if goal.max_tokens and bottom_of(tokens) > goal.max_tokens:
        return True
    iou_goal = objective.kind(goal) == pb.STUDY_OBJECTIVE_KIND_IOU_AT_RECALL
    if iou_goal and top_of(np.array([m.recall for m in mine.values()], dtype=float)) < goal.min_recall:
        return True
    if not best or objective.is_pareto(goal):
        return False  # on the Pareto front, a trial that sends fewer tokens may belong with less recall
    theirs = _labelled(best)
    shared = [q for q in mine if q in theirs]
    if not shared:
        return False
    metric = objective.deciding_metric(goal)
    differences = np.array([getattr(mine[q], metric) - getattr(theirs[q], metric) for q in shared], dtype=float)
    return top_of(differences) < -objective.tie_margin(goal)
