"""What a study optimises (ADR 0113): a trial's scores, whether they meet the objective's
constraints, the one number the sampler maximises, the best trial and the Pareto front.

RECALL_AT_TOKENS ranks feasible trials (mean tokens sent within the cap) by recall; recalls within
RECALL_TIE of the best are a tie that IoU breaks. An infeasible trial scores below every feasible
one, the further over the cap the lower, so the sampler learns where the cap lies.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from chunklab.pareto import front
from chunklab.v1 import evaluator_pb2 as pb

# Recall within one percentage point of the best is a tie, broken by IoU.
RECALL_TIE = 0.01


@dataclass(frozen=True)
class Scores:
    """A trial's means over the questions it was asked."""

    recall: float
    iou: float
    tokens: float
    questions: int


def scores(results: Sequence[pb.QuestionResult]) -> Scores:
    labelled = [r.metrics for r in results if r.metrics.labelled and not r.error]
    if not labelled:
        return Scores(0.0, 0.0, 0.0, 0)
    n = len(labelled)
    return Scores(
        recall=sum(m.recall for m in labelled) / n,
        iou=sum(m.iou for m in labelled) / n,
        tokens=sum(m.tokens_sent for m in labelled) / n,
        questions=n,
    )


def kind(objective: pb.StudyObjective) -> int:
    return objective.kind or pb.STUDY_OBJECTIVE_KIND_RECALL_AT_TOKENS


def is_pareto(objective: pb.StudyObjective) -> bool:
    return kind(objective) == pb.STUDY_OBJECTIVE_KIND_PARETO


# PARETO's sampler optimises the three measures at once (ADR 0146): recall and IoU up, tokens down.
PARETO_DIRECTIONS = ("maximize", "maximize", "minimize")


def values(s: Scores, objective: pb.StudyObjective) -> float | list[float]:
    """What the sampler is told of a trial: PARETO's three measures, else `value`."""
    if is_pareto(objective):
        return [s.recall, s.iou, s.tokens]
    return value(s, objective)


def over_cap(s: Scores, objective: pb.StudyObjective) -> float:
    """Tokens per question over the cap (0 within it): PARETO's constraint for its sampler."""
    return max(0.0, s.tokens - objective.max_tokens) if objective.max_tokens else 0.0


def deciding_metric(objective: pb.StudyObjective) -> str:
    return "iou" if kind(objective) == pb.STUDY_OBJECTIVE_KIND_IOU_AT_RECALL else "recall"


def feasible(s: Scores, objective: pb.StudyObjective) -> bool:
    if objective.max_tokens and s.tokens > objective.max_tokens:
        return False
    if kind(objective) == pb.STUDY_OBJECTIVE_KIND_IOU_AT_RECALL and s.recall < objective.min_recall:
        return False
    return s.questions > 0


def tie_margin(objective: pb.StudyObjective) -> float:
    """How far below the best a trial's deciding measure may be and still tie it."""
    return 0.0 if kind(objective) == pb.STUDY_OBJECTIVE_KIND_IOU_AT_RECALL else RECALL_TIE


def value(s: Scores, objective: pb.StudyObjective) -> float:
    """The number the sampler maximises: the deciding measure (plus a little IoU) when feasible,
    else below -1 by how far the trial misses its constraints."""
    if feasible(s, objective):
        if kind(objective) == pb.STUDY_OBJECTIVE_KIND_IOU_AT_RECALL:
            return s.iou
        return s.recall + RECALL_TIE * s.iou
    miss = 0.0
    if objective.max_tokens and s.tokens > objective.max_tokens:
        miss += (s.tokens - objective.max_tokens) / objective.max_tokens
    if kind(objective) == pb.STUDY_OBJECTIVE_KIND_IOU_AT_RECALL:
        miss += max(0.0, objective.min_recall - s.recall)
    return -1.0 - miss


def best(trials: Sequence[tuple[str, Scores]], objective: pb.StudyObjective, reference: str = "") -> str:
    """The run key of the best feasible trial ("" when none is): the highest deciding measure,
    and for recall the highest IoU among the recalls that tie with the best. With a feasible
    reference trial (the static recommendation), only trials at least as good as it on both
    recall and IoU may win, the reference itself included (ADR 0134): a study offers nothing
    else (ADR 0116), so nothing else is worth confirming."""
    ok = [(key, s) for key, s in trials if feasible(s, objective)]
    ref = next((s for key, s in ok if key == reference), None)
    if ref is not None:
        ok = [(key, s) for key, s in ok if key == reference or (s.recall >= ref.recall and s.iou >= ref.iou)]
    if not ok:
        return ""
    if kind(objective) == pb.STUDY_OBJECTIVE_KIND_IOU_AT_RECALL:
        return max(ok, key=lambda t: (t[1].iou, t[1].recall, -t[1].tokens))[0]
    top = max(s.recall for _, s in ok)
    tied = [(key, s) for key, s in ok if s.recall >= top - RECALL_TIE]
    return max(tied, key=lambda t: (t[1].iou, t[1].recall, -t[1].tokens))[0]


def pareto(trials: Sequence[tuple[str, Scores]]) -> list[str]:
    """The run keys no other trial beats on recall, IoU and tokens at once (higher, higher, fewer)."""
    return front([(key, (s.recall, s.iou, s.tokens)) for key, s in trials], (True, True, False))


def spread(on_front: Sequence[tuple[str, Scores]], most: int) -> list[str]:
    """At most `most` of the front's run keys, spread evenly from the fewest tokens to the most."""
    ordered = sorted(on_front, key=lambda t: (t[1].tokens, -t[1].recall, t[0]))
    if len(ordered) <= most:
        return [key for key, _ in ordered]
    step = (len(ordered) - 1) / (most - 1)
    return [ordered[round(i * step)][0] for i in range(most)]


def smallest_tokens(trials: Sequence[tuple[str, Scores]]) -> tuple[str, float] | None:
    """The trial that sent the fewest tokens per question, for a cap no trial met."""
    measured = [(key, s.tokens) for key, s in trials if s.questions]
    return min(measured, key=lambda t: t[1]) if measured else None
