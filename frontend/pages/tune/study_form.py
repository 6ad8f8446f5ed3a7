"""The "Find the best configuration" form's values as a study (ADR 0116): what "best" means,
the budget and what to search. No Gradio here: the page hands the fields' values in, a
ValueError says in the form's words what is missing or wrong; the evaluator checks the rest
(a question set too small to split, a budget below one evaluation) before any work starts."""

from __future__ import annotations

from dataclasses import dataclass, field

from chunklab.v1 import evaluator_pb2

# The objective's choices as the form words them, the default first.
OBJECTIVES = {
    "Highest recall within a token budget (ties by IoU)": evaluator_pb2.STUDY_OBJECTIVE_KIND_RECALL_AT_TOKENS,
    "Highest IoU at a minimum recall": evaluator_pb2.STUDY_OBJECTIVE_KIND_IOU_AT_RECALL,
    "Pareto front of recall, IoU and tokens": evaluator_pb2.STUDY_OBJECTIVE_KIND_PARETO,
}
DEFAULT_OBJECTIVE = next(iter(OBJECTIVES))
IOU_AT_RECALL = evaluator_pb2.STUDY_OBJECTIVE_KIND_IOU_AT_RECALL
# study_request's arguments in the order the page hands its fields in.
FIELDS = (
    "question_set_id",
    "documents",
    "collection",
    "objective",
    "max_tokens",
    "min_recall_percent",
    "minutes",
    "trials",
    "strategies",
    "seed",
    "name",
)
DEFAULT_MAX_TOKENS = 800
DEFAULT_MIN_RECALL = 90  # percent
DEFAULT_MINUTES = 10
DEFAULT_TRIALS = 30


def _whole(value: float | None, what: str) -> int:
    if value is None:
        return 0
    if value < 0 or not float(value).is_integer():
        raise ValueError(f"{what} takes a whole number of 0 or more; you entered {value:g}.")
    return int(value)


@dataclass
class StudyRequest:
    """What the form asks: run_study's arguments."""

    question_set_id: str
    study: evaluator_pb2.Study
    name: str = ""
    document_ids: list[str] = field(default_factory=list)
    collections: list[str] = field(default_factory=list)
    seed: int = 0


def study_request(
    *,
    question_set_id: str | None,
    documents: list[str] | None,
    collection: str | None,
    objective: str | None,
    max_tokens: float | None,
    min_recall_percent: float | None,
    minutes: float | None,
    trials: float | None,
    strategies: list[str] | None,
    seed: float | None,
    name: str | None = "",
) -> StudyRequest:
    if not question_set_id:
        raise ValueError("Choose the question set the study tunes and confirms on (Question sets makes one).")
    kind = OBJECTIVES.get(objective or DEFAULT_OBJECTIVE)
    if kind is None:
        raise ValueError(f"Choose an objective: {', '.join(OBJECTIVES)}.")
    objective_message = evaluator_pb2.StudyObjective(kind=kind, max_tokens=_whole(max_tokens, "Tokens per question"))
    if kind == evaluator_pb2.STUDY_OBJECTIVE_KIND_IOU_AT_RECALL:
        if min_recall_percent is None or not 0 < min_recall_percent <= 100:
            raise ValueError("Minimum recall takes a percentage above 0 and at most 100, e.g. 90.")
        objective_message.min_recall = min_recall_percent / 100
    if minutes is not None and minutes < 0:
        raise ValueError(f"Minutes takes 0 or more; you entered {minutes:g}.")
    budget = evaluator_pb2.StudyBudget(seconds=(minutes or 0) * 60, trials=_whole(trials, "Trials"))
    return StudyRequest(
        question_set_id=question_set_id,
        study=evaluator_pb2.Study(
            objective=objective_message,
            budget=budget,
            space=evaluator_pb2.StudySpace(strategies=strategies or []),
            seed=_whole(seed, "Seed"),
        ),
        name=(name or "").strip(),
        document_ids=list(documents or []),
        collections=[collection.strip()] if collection and collection.strip() and not documents else [],
        seed=_whole(seed, "Seed"),
    )
