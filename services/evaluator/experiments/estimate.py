"""A dry run's numbers: calls, tokens and cost from sizes alone, the runs that cannot
run, and the time from this machine's measured speeds (ADR 0088). Nothing is processed,
retrieved or asked: the retriever is only asked which index sets are there already.

The time is, per run, each index set it must process (its document's characters at the
strategy's measured speed; a set already there costs nothing) plus its questions at the
measured speed of the experiment's mode (speeds.py: the evaluator's finished runs, else a
calibration of the embedding model). What is not known is left out and said in a note.
"""

from __future__ import annotations

from statistics import median

from chunklab import experiment_state
from chunklab.errors import ServiceError
from chunklab.knobs import python_value
from chunklab.text import tokens
from chunklab.v1 import chunker_pb2, common_pb2, evaluator_pb2
from services.evaluator.experiments import speeds
from services.evaluator.experiments.ask import expected_answer
from services.evaluator.experiments.grid import Cell
from services.evaluator.experiments.plan import Plan
from services.evaluator.judging import pricing

PAST_EXPERIMENTS = 50  # the newest finished experiments the speeds are read from
CHARS_PER_TOKEN = 4  # for the context an extractive answer embeds, from its token estimate

# Rough sizes for estimates, in tokens.
ANSWER_OVERHEAD, ANSWER_COMPLETION = 80, 150
JUDGE_OVERHEAD, JUDGE_COMPLETION = 120, 40


def finished_experiments(repository) -> list[evaluator_pb2.Experiment]:
    """The newest experiments that ran to their end (succeeded or partial: their finished runs were timed)."""
    experiments, _ = repository.list_experiments(PAST_EXPERIMENTS, "")
    return [e for e in experiments if e.state in experiment_state.ENDED]


def estimate(plan: Plan, repository, peers) -> evaluator_pb2.ExperimentEstimate:
    """Calls, tokens and cost from sizes alone; warnings for runs that cannot run; the time
    from measured speeds. Nothing is processed, retrieved or asked."""
    questions = plan.question_set.questions
    estimate = evaluator_pb2.ExperimentEstimate(
        questions=len(questions), runs=len(plan.cells), documents=len(plan.documents)
    )
    cost = 0.0
    for cell in plan.cells:
        cost = _count_calls(plan, cell, estimate, cost)
    estimate.estimated_cost_usd = cost
    _add_notes(plan, estimate)
    to_process = _sets_to_process(plan, peers, estimate)
    estimate.warnings.extend(cannot_run(plan, peers, to_process))
    _add_time(plan, estimate, to_process, speeds.Measured.of(finished_experiments(repository)))
    return estimate


def _sets_to_process(plan: Plan, peers, estimate: evaluator_pb2.ExperimentEstimate) -> dict[str, list[str]]:
    """run_key -> the documents whose index set of the run's configuration is not there yet."""
    model = plan.provider.name
    missing: dict[str, list[str]] = {}
    unknown = False
    for cell in plan.cells:
        for document_id in plan.documents:
            try:
                there = peers.indexed_set(model, document_id, cell.spec.name, cell.config_id) is not None
            except ServiceError:  # out of reach: counted as to process, and said
                there, unknown = False, True
            if there:
                estimate.index_sets_reused += 1
            else:
                missing.setdefault(cell.run_key, []).append(document_id)
                estimate.index_sets_to_process += 1
    if unknown:
        estimate.notes.append("the retriever did not say which index sets exist: every set is counted as to process")
    return missing


def cannot_run(plan: Plan, peers, to_process: dict[str, list[str]]) -> list[str]:
    """What would fail or quietly run otherwise than asked, before anything starts: a strategy
    that needs an LLM to chunk when the chunker has none (unless its sets are all there), an
    answer or judge model named without an endpoint to call it at."""
    warnings = []
    needing = [c for c in plan.cells if c.info.requires_llm and to_process.get(c.run_key)]
    if needing and not peers.chunker_llm():
        warnings += [
            f"{cell.run_key} cannot run: it needs an LLM to chunk, and the chunker has no LLM endpoint "
            "configured (set CHUNKLAB_LLM_BASE_URL and CHUNKLAB_LLM_MODEL for the chunker, or leave this "
            "strategy out); the other runs would still run"
            for cell in needing
        ]
    config = plan.config
    if not config.retrieval_only:
        for role, requested, endpoint, off, instead in (
            ("answer", plan.requested_answer, plan.answer, "extractive", "answers would be extractive"),
            ("judge", plan.requested_judge, plan.judge, "none", "judge scores would not be measured"),
        ):
            named = requested.model.strip()
            if named and named.lower() != off and endpoint is None:
                warnings.append(
                    f"the {role} model {named!r} has no endpoint: no base URL was given and none is configured "
                    f"(CHUNKLAB_LLM_BASE_URL); {instead}"
                )
    return warnings


def _process_seconds(cell: Cell, plan: Plan, measured: speeds.Measured) -> float | None:
    """Seconds per character for this run's strategy: measured, else the calibration scaled by how
    far the measured runs were from theirs; None for an LLM strategy no run has timed."""
    known = measured.process_s_per_char.get(cell.spec.name)
    if known is not None:
        return known
    if cell.info.requires_llm:
        return None
    calibration = speeds.calibrate(plan.provider)
    scales = [
        per_char / (calibration.embed_s_per_char * _passes(plan.infos[spec.name], spec))
        for spec, per_char in measured.processed
        if spec.name in plan.infos and not plan.infos[spec.name].requires_llm
    ]
    scale = median(scales) if scales else 1.0
    return calibration.embed_s_per_char * _passes(cell.info, cell.spec) * scale


def _passes(info: chunker_pb2.StrategyInfo, spec: common_pb2.StrategySpec) -> float:
    """How many times a strategy embeds a document's text: once, more by its overlap, twice as
    much when it embeds to find its cuts."""
    knobs = {name: python_value(value) for name, value in spec.knobs.items()}
    overlap = 1.0
    if knobs.get("chunk_size") and knobs.get("chunk_overlap"):
        overlap += float(knobs["chunk_overlap"]) / float(knobs["chunk_size"])
    return overlap * (2.0 if info.requires_embeddings_to_chunk else 1.0)


def _question_seconds(plan: Plan, cell: Cell, measured: speeds.Measured) -> float | None:
    """Seconds one question takes in this experiment's mode: measured, else put together."""
    asked = speeds.mode(plan.config)
    if asked in measured.question_s:
        return measured.question_s[asked]
    calibration = speeds.calibrate(plan.provider)
    seconds = measured.retrieve_s if measured.retrieve_s is not None else 2 * calibration.query_s
    answers, judged = asked
    if answers == "extractive":
        # The answer embeds its context's sentences; the sentence cache embeds each once for every
        # run (the runs' chunkings cut the same sentences), so each run bears its share.
        context_chars = context_tokens(cell, plan.config) * CHARS_PER_TOKEN
        seconds += context_chars * calibration.embed_s_per_char / len(plan.cells)
    elif answers == "llm":
        if measured.answer_s is None:
            return None
        seconds += measured.answer_s
    if judged:
        if measured.judge_s is None:
            return None
        seconds += measured.judge_s
    return seconds


def _add_time(
    plan: Plan, estimate: evaluator_pb2.ExperimentEstimate, to_process: dict[str, list[str]], measured: speeds.Measured
) -> None:
    processing, asking, unknown = 0.0, 0.0, []
    for cell in plan.cells:
        documents = to_process.get(cell.run_key, [])
        if documents:
            per_char = _process_seconds(cell, plan, measured)
            if per_char is None:
                unknown.append(f"processing for {cell.run_key} (an LLM strategy no run has timed yet)")
            else:
                processing += per_char * sum(plan.records[d].character_count for d in documents)
        per_question = _question_seconds(plan, cell, measured)
        if per_question is None:
            unknown.append(f"the questions of {cell.run_key} (no run has timed its answer or judge model yet)")
        else:
            asking += per_question * len(plan.question_set.questions)
    estimate.processing_seconds, estimate.questions_seconds = processing, asking
    estimate.estimated_seconds = processing + asking
    estimate.notes.append(
        "time: this machine's speeds, measured by its finished runs (else by timing the embedding model "
        f"here): {estimate.index_sets_to_process} index set(s) to process, {estimate.index_sets_reused} "
        "already there, then each question"
    )
    if unknown:
        estimate.notes.append("time leaves out what nothing has measured yet: " + "; ".join(dict.fromkeys(unknown)))


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
