"""A dry run's numbers: calls, tokens and cost from sizes alone, and the time
measured, not guessed. Nothing is called.

The evaluator keeps every finished run's timings (processing seconds, and per
question the mean milliseconds of retrieval, answer and judging). A new
experiment's time is the median of those, scaled to its size: per run its
documents processed (unless an index set is reused) plus its questions asked,
answered and judged as the plan says. With no finished run yet, there is
nothing to measure by, and the estimate says so rather than invent a speed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from statistics import median

from chunklab.knobs import python_value
from chunklab.text import tokens
from chunklab.v1 import common_pb2, evaluator_pb2
from services.evaluator.experiments.ask import expected_answer
from services.evaluator.experiments.grid import Cell
from services.evaluator.experiments.plan import Plan
from services.evaluator.judging import pricing

PAST_EXPERIMENTS = 50  # the newest finished experiments the speeds are read from

# Rough sizes for estimates, in tokens.
ANSWER_OVERHEAD, ANSWER_COMPLETION = 80, 150
JUDGE_OVERHEAD, JUDGE_COMPLETION = 120, 40


@dataclass(frozen=True)
class Speeds:
    """Medians over finished runs: seconds to process one document with a run's configuration,
    and milliseconds per question to retrieve, to answer (runs that answered with an LLM or
    extractively) and to judge (runs that were judged)."""

    process_s_per_document: float | None
    retrieve_ms: float | None
    answer_ms: float | None
    judge_ms: float | None

    @classmethod
    def of(cls, experiments: Iterable[evaluator_pb2.Experiment]) -> Speeds:
        process, retrieve, answer, judge = [], [], [], []
        for experiment in experiments:
            documents = max(1, len(experiment.provenance.document_hashes))
            for run in experiment.runs:
                if not run.questions_done:
                    continue
                if not run.index_reused and run.processing_seconds > 0:
                    process.append(run.processing_seconds / documents)
                m = run.mean_metrics
                retrieve.append(m.retrieve_ms)
                if m.answer_ms > 0:
                    answer.append(m.answer_ms)
                if m.judge_ms > 0:
                    judge.append(m.judge_ms)
        pick = lambda values: median(values) if values else None  # noqa: E731
        return cls(pick(process), pick(retrieve), pick(answer), pick(judge))

    def seconds(self, runs: int, documents: int, questions: int, answered: bool, judged: bool) -> float | None:
        """The estimate for `runs` runs over `documents` and `questions`; None without a finished run."""
        if self.retrieve_ms is None:
            return None
        per_question = self.retrieve_ms + (self.answer_ms or 0.0) * answered + (self.judge_ms or 0.0) * judged
        processing = (self.process_s_per_document or 0.0) * documents
        return runs * (processing + questions * per_question / 1000)


def finished_experiments(repository) -> list[evaluator_pb2.Experiment]:
    experiments, _ = repository.list_experiments(PAST_EXPERIMENTS, "")
    return [e for e in experiments if e.state == evaluator_pb2.EXPERIMENT_STATE_SUCCEEDED]


def estimate(plan: Plan, repository) -> evaluator_pb2.ExperimentEstimate:
    """Calls, tokens and cost from sizes alone, the time from finished runs' speeds: nothing is called."""
    questions = plan.question_set.questions
    estimate = evaluator_pb2.ExperimentEstimate(
        questions=len(questions), runs=len(plan.cells), documents=len(plan.documents)
    )
    cost = 0.0
    for cell in plan.cells:
        cost = _count_calls(plan, cell, estimate, cost)
    estimate.estimated_cost_usd = cost
    _add_notes(plan, estimate)
    seconds = Speeds.of(finished_experiments(repository)).seconds(
        len(plan.cells), len(plan.documents), len(questions), plan.answer is not None, plan.judge is not None
    )
    if seconds is None:
        estimate.notes.append(
            "time: no experiment has finished on this evaluator yet, so there is no speed to estimate it from"
        )
    else:
        estimate.estimated_seconds = seconds
        estimate.notes.append(
            "time: the median speeds of this evaluator's finished runs, scaled to this plan "
            "(processing each document per run, then each question)"
        )
    return estimate


def _count_calls(plan: Plan, cell: Cell, estimate: evaluator_pb2.ExperimentEstimate, cost: float) -> float:
    """Adds one run's LLM calls and tokens to the estimate; returns `cost` (USD) with theirs added."""
    questions = plan.question_set.questions
    question_tokens = sum(tokens.count(q.text) for q in questions)
    expected_tokens = sum(tokens.count(expected_answer(q)) for q in questions)
    with_expected = sum(1 for q in questions if expected_answer(q))
    context = context_tokens(cell, plan.config)
    if plan.answer is not None:
        prompt = len(questions) * (context + ANSWER_OVERHEAD) + question_tokens
        estimate.llm_calls += len(questions)
        estimate.prompt_tokens += prompt
        estimate.completion_tokens += len(questions) * ANSWER_COMPLETION
        cost += pricing.cost_usd(plan.answer.model, prompt, len(questions) * ANSWER_COMPLETION)
    if plan.judge is not None:
        answer_tokens = ANSWER_COMPLETION * len(questions)
        # relevance, faithfulness, hallucination read the context; similarity reads the expected answer.
        prompt = 3 * (len(questions) * (context + JUDGE_OVERHEAD) + answer_tokens) + (
            with_expected * JUDGE_OVERHEAD + expected_tokens + answer_tokens + question_tokens
        )
        calls = 3 * len(questions) + with_expected
        estimate.llm_calls += calls
        estimate.prompt_tokens += prompt
        estimate.completion_tokens += calls * JUDGE_COMPLETION
        cost += pricing.cost_usd(plan.judge.model, prompt, calls * JUDGE_COMPLETION)
    if cell.info.requires_llm:
        estimate.notes.append(
            f"{cell.run_key} needs the chunker's LLM to process {len(plan.documents)} document(s); "
            "those calls are made by the chunker with its own model and are not counted here"
        )
    return cost


def _add_notes(plan: Plan, estimate: evaluator_pb2.ExperimentEstimate) -> None:
    for endpoint in (plan.answer, plan.judge):
        if endpoint is not None and pricing.price_note(endpoint.model):
            note = pricing.price_note(endpoint.model)
            if note not in estimate.notes:
                estimate.notes.append(note)
    if plan.answer is None and not plan.config.retrieval_only:
        estimate.notes.append("no answer model: answers are extractive (no LLM calls)")
    if plan.judge is None and not plan.config.retrieval_only:
        estimate.notes.append("no judge model: judge scores will be recorded as not measured")
    estimate.notes.append(
        "token counts are estimates: context = top_k x the strategy's chunk size (+ neighbours for fixed_size)"
    )


def context_tokens(cell: Cell, config: evaluator_pb2.ExperimentConfig) -> int:
    knobs = {name: python_value(value) for name, value in cell.spec.knobs.items()}
    size = knobs.get("chunk_size") or knobs.get("max_tokens") or 200
    per_hit = int(size)
    options = config.retrieval
    if cell.info.expansion == common_pb2.EXPANSION_KIND_NEIGHBORS:
        per_hit *= 1 + options.neighbor_prev + options.neighbor_next
    return options.top_k * per_hit
