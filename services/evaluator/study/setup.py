"""A study checked before any work starts (ADR 0112): its space built from the chunker's
strategies, its questions dealt, and every request that cannot give an answer refused with what
to change (too few questions, a budget below one evaluation, an empty space, a token cap below
any chunk)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from chunklab import knobs, retrieval
from chunklab.errors import InvalidArgument
from chunklab.rpc.limits import excerpt
from chunklab.settings import Settings
from chunklab.v1 import common_pb2, evaluator_pb2
from chunklab.views import numbers
from services.evaluator.experiments.estimate import estimate
from services.evaluator.experiments.grid import Cell
from services.evaluator.experiments.plan import Plan
from services.evaluator.study import space as spaces
from services.evaluator.study import split as splits

# Both budgets unset: this many trials.
DEFAULT_TRIALS = 30
MAX_TRIALS = 200


@dataclass
class StudyPlan:
    space: spaces.Space
    split: splits.Split
    trials: int  # 0: no trial budget
    seconds: float  # 0: no time budget


def reranker_kind(settings: Settings) -> int:
    if settings.rerank_cross_encoder:
        return common_pb2.RERANKER_KIND_CROSS_ENCODER
    if settings.rerank_url:
        return common_pb2.RERANKER_KIND_HTTP
    return 0


def cell(candidate: spaces.Candidate, info) -> Cell:
    """The experiment cell (the run's chunking) of a candidate."""
    declared = knobs.from_info(info)
    window = candidate.values.get("window") if any(k.name == "window" and k.query_time for k in declared) else None
    return Cell(
        candidate.run_key,
        knobs.to_spec(candidate.strategy, candidate.values),
        info,
        int(window) if window is not None else None,
        knobs.config_id(candidate.strategy, declared, candidate.values),
    )


def _budget(study: evaluator_pb2.Study) -> tuple[int, float]:
    trials, seconds = study.budget.trials, study.budget.seconds
    if trials < 0 or seconds < 0:
        raise InvalidArgument("study.budget: trials and seconds must be positive (0 means not set)")
    if trials > MAX_TRIALS:
        raise InvalidArgument(f"study.budget.trials is {trials}; at most {MAX_TRIALS}")
    if not trials and not seconds:
        trials = DEFAULT_TRIALS
    return trials, seconds


def _check_names(study: evaluator_pb2.Study, plan: Plan) -> None:
    unknown = [n for n in study.space.strategies if n not in plan.infos]
    if unknown:
        raise InvalidArgument(
            f"study.space names unknown strategies: {', '.join(excerpt(n) for n in unknown)}; "
            f"available: {', '.join(plan.infos)}"
        )
    top = retrieval.LIMITS.max_fusion_k
    wrong = [k for k in study.space.fusion_k if not 1 <= k <= top]
    if wrong:
        raise InvalidArgument(
            f"study.space.fusion_k holds {', '.join(map(str, wrong))}; each must be between 1 and {top}"
        )
    if study.space.fusion_k and False in study.space.hybrid and True not in study.space.hybrid:
        raise InvalidArgument("study.space.fusion_k is for hybrid trials, but study.space.hybrid allows only dense")
    if study.objective.min_recall and not 0.0 < study.objective.min_recall <= 1.0:
        raise InvalidArgument(f"study.objective.min_recall must be between 0 and 1, got {study.objective.min_recall}")
    if study.objective.max_tokens < 0:
        raise InvalidArgument("study.objective.max_tokens must be positive (0: no cap)")


def _check_cap(space: spaces.Space) -> None:
    """A cap below the smallest chunk any strategy of the space can make cannot be met."""
    if not space.token_cap:
        return
    floors = [
        int(k.min_value or 0)
        for name in space.infos
        for _, k in space.knob_params(name)
        if spaces.token_knob(k) and k.name in ("chunk_size", "max_tokens", "child_max_tokens")
    ]
    smallest = min(floors) if floors else 0
    if smallest and space.token_cap < smallest:
        raise InvalidArgument(
            f"no configuration can send at most {space.token_cap} tokens per question: the smallest chunk "
            f"any strategy of the space makes is {smallest} tokens; raise study.objective.max_tokens"
        )


def prepare(plan: Plan, peers, repository) -> tuple[StudyPlan, list[str]]:
    """The study's plan and its notes (strategies left out, with why); InvalidArgument first."""
    study = plan.config.study
    _check_names(study, plan)
    trials, seconds = _budget(study)
    space = spaces.build(study, list(plan.infos.values()), bool(peers.chunker_llm()), reranker_kind(Settings()))
    if not space.infos:
        raise InvalidArgument(f"the study has no strategy to search: {'; '.join(space.notes) or 'none named'}")
    _check_cap(space)
    dealt = splits.deal(plan.question_set.questions, plan.config.validation)
    found = StudyPlan(space, dealt, trials, seconds)
    if seconds:
        minimum = one_evaluation(plan, found, peers, repository)
        if minimum is not None and seconds < minimum:
            raise InvalidArgument(
                f"a budget of {numbers.duration(seconds)} is below one evaluation: the first trial (processing "
                f"the documents and asking {len(dealt.selection)} questions) takes about "
                f"{numbers.duration(minimum)} on this machine; give at least {numbers.duration(minimum)}, "
                "or a number of trials"
            )
    return found, list(space.notes)


def one_evaluation(plan: Plan, study: StudyPlan, peers, repository) -> float | None:
    """Seconds the first trial (the recommendation, else any start) takes here, by the estimate's
    measured speeds; None when nothing measures them yet."""
    starts = spaces.starting_points(study.space)
    if not starts:
        return None
    params = starts[0][1]
    info = study.space.infos[params["strategy"]]
    declared = knobs.from_info(info)
    values = {k.name: k.default for k in declared}
    first = spaces.Candidate(params["strategy"], values, params["top_k"], params["hybrid"])
    selection = evaluator_pb2.QuestionSet()
    selection.CopyFrom(plan.question_set)
    del selection.questions[:]
    selection.questions.extend(study.split.selection)
    one = dataclasses.replace(plan, cells=[cell(first, info)], question_set=selection)
    found = estimate(one, repository, peers)
    return found.estimated_seconds if found.HasField("estimated_seconds") else None
