"""Experiments: plan (validate and expand the grid), estimate, run, summarize.

A run is one grid cell: a strategy with fixed knob values, that is one
configuration. Each run indexes its own index set per document (beside the
active one, which it never changes) unless the set is there already, and
searches that set by its config_id (ADR 0038); so nothing has to be put back
afterwards, and experiments can run side by side. Each finished question is
saved at once, so a restart loses at most the question in flight; `run`
skips the questions already saved, which is how a resumed experiment
continues.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
import uuid
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field

from chunklab import retrieval, tokens
from chunklab.embeddings.base import EmbeddingProvider
from chunklab.errors import Cancelled, FailedPrecondition, InvalidArgument, ServiceError, Unavailable
from chunklab.knobs import python_value
from chunklab.llm import ChatClient, ChatEndpoint, LLMError
from chunklab.timeutil import to_proto, utcnow
from chunklab.v1 import common_pb2, documents_pb2, evaluator_pb2
from services.evaluator import answers, durations, judge, models, pricing, validation, verdict
from services.evaluator.grid import Cell, expand
from chunklab.metrics import cosine
from services.evaluator.peers import retrieve_request
from services.evaluator.repository import Repository
from services.evaluator.scoring import mean_metrics, retrieval_metrics

# How a person continues an interrupted experiment: the UI's button or the CLI's command.
RESUME_HINT = "continue it with Resume on the Experiments page (or `chunklab resume <experiment id>`)"
log = logging.getLogger("chunklab.evaluator")

# Rough sizes for estimates, in tokens.
ANSWER_OVERHEAD, ANSWER_COMPLETION = 80, 150
JUDGE_OVERHEAD, JUDGE_COMPLETION = 120, 40

Publish = Callable[[evaluator_pb2.ExperimentEvent], None]


class Interrupted(Exception):
    """The service is stopping, or the experiment was cancelled: it is marked interrupted."""

    def __init__(self, cancelled: bool = False) -> None:
        super().__init__("cancelled" if cancelled else "stopping")
        self.cancelled = cancelled


@dataclass
class Plan:
    """A validated experiment, ready to run."""

    config: evaluator_pb2.ExperimentConfig
    question_set: evaluator_pb2.QuestionSet
    cells: list[Cell]
    documents: list[str]
    answer: ChatEndpoint | None
    judge: ChatEndpoint | None
    provider: EmbeddingProvider
    # Each document's record (BASIC view): its name for progress, its hash for provenance.
    records: dict[str, documents_pb2.Document]


@dataclass
class RunnerDeps:
    repository: Repository
    peers: object  # GrpcPeers or a fake with the same methods
    provider_for: Callable[[str], EmbeddingProvider]
    defaults: models.ModelDefaults
    default_embedding_model: str
    code_version: str
    judge_attempts: int = 3
    judge_backoff_s: float = 0.5
    sentence_cache: answers.SentenceEmbeddings = field(default_factory=answers.SentenceEmbeddings)


def _check_config(config: evaluator_pb2.ExperimentConfig) -> None:
    """The same checks as the retriever's (chunklab.retrieval), before anything runs."""
    if not config.question_set_id:
        raise InvalidArgument("name the question set to run (question_set_id)")
    retrieval.check_options(config.retrieval, needs_strategy=False)
    config.retrieval.top_k = retrieval.top_k(config.retrieval)
    validation.check(config.validation)


def referenced_documents(question_set: evaluator_pb2.QuestionSet) -> list[str]:
    seen: dict[str, None] = {}
    for question in question_set.questions:
        for reference in question.references:
            seen.setdefault(reference.document_id, None)
    return list(seen)


def expected_answer(question: evaluator_pb2.Question) -> str:
    """The expected answer, or the reference excerpts joined when there is none."""
    if question.expected_answer:
        return question.expected_answer
    return "\n".join(r.content for r in question.references)


class ExperimentRunner:
    def __init__(self, deps: RunnerDeps, cancelled: Collection[str] = frozenset()) -> None:
        """cancelled: ids of experiments asked to stop (the worker's set, which it clears
        when a run ends); the running one stops before its next question."""
        self._deps = deps
        self._stopping = threading.Event()
        self._cancelled = cancelled
        # One lock per (document, strategy, config_id, model) being processed: two
        # experiments that need the same set process it once, the second reuses it.
        self._sets_lock = threading.Lock()
        self._set_locks: dict[tuple[str, str, str, str], threading.Lock] = {}

    @property
    def stopping(self) -> threading.Event:
        """Set once the service is stopping."""
        return self._stopping

    def stop(self) -> None:
        self._stopping.set()

    # -- planning ---------------------------------------------------------

    def plan(self, config: evaluator_pb2.ExperimentConfig, cancelled: threading.Event | None = None) -> Plan:
        """Validates a config (nothing is processed, retrieved or asked); `cancelled`
        (the call ended) stops it between the documents it looks up."""
        config = _copy(config)
        _check_config(config)
        question_set = self._deps.repository.get_question_set(config.question_set_id)
        if not question_set.questions:
            raise InvalidArgument(f"question set {question_set.name!r} has no questions")
        options = config.retrieval
        window = options.window if options.HasField("window") else None
        cells = expand(list(config.strategies), self._deps.peers.list_strategies(), window)
        documents = list(options.filter.document_ids) or referenced_documents(question_set)
        if not documents:
            raise InvalidArgument(
                f"question set {question_set.name!r} has no reference excerpts, so it names no documents; "
                "list the documents to search in filter.document_ids"
            )
        records = {}
        for document_id in documents:
            if cancelled is not None and cancelled.is_set():
                raise Cancelled("the experiment was not planned: its call ended while its documents were looked up")
            records[document_id] = self._deps.peers.get_document(document_id, False)
        provider = self._deps.provider_for(options.embedding_model or self._deps.default_embedding_model)
        options.embedding_model = provider.name
        answer = models.resolve(config.answer_model, self._deps.defaults, models.EXTRACTIVE)
        judge_endpoint = models.resolve(config.judge_model, self._deps.defaults, models.NO_JUDGE, max_retries=0)
        if config.retrieval_only:
            answer = judge_endpoint = None
        config.answer_model.CopyFrom(models.public(answer, models.EXTRACTIVE))
        config.judge_model.CopyFrom(models.public(judge_endpoint, models.NO_JUDGE))
        if not config.name:
            config.name = f"{question_set.name}: {', '.join(dict.fromkeys(g.strategy for g in config.strategies))}"
        return Plan(config, question_set, cells, documents, answer, judge_endpoint, provider, records)

    def with_keys(self, plan: Plan, keys: evaluator_pb2.ExperimentConfig) -> Plan:
        """The plan with API keys supplied again (they are never stored)."""
        plan.answer = models.resolve(_with_key(plan.config.answer_model, keys.answer_model.api_key),
                                     self._deps.defaults, models.EXTRACTIVE)
        plan.judge = models.resolve(_with_key(plan.config.judge_model, keys.judge_model.api_key),
                                    self._deps.defaults, models.NO_JUDGE, max_retries=0)
        if plan.config.retrieval_only:
            plan.answer = plan.judge = None
        return plan

    def estimate(self, plan: Plan) -> evaluator_pb2.ExperimentEstimate:
        """Calls, tokens and cost from sizes alone, the time from finished runs' speeds: nothing is called."""
        config = plan.config
        questions = plan.question_set.questions
        estimate = evaluator_pb2.ExperimentEstimate(
            questions=len(questions), runs=len(plan.cells), documents=len(plan.documents)
        )
        question_tokens = sum(tokens.count(q.text) for q in questions)
        expected_tokens = sum(tokens.count(expected_answer(q)) for q in questions)
        with_expected = sum(1 for q in questions if expected_answer(q))
        cost = 0.0
        for cell in plan.cells:
            context = self._context_tokens(cell, config)
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
        estimate.estimated_cost_usd = cost
        for endpoint in (plan.answer, plan.judge):
            if endpoint is not None and pricing.price_note(endpoint.model):
                note = pricing.price_note(endpoint.model)
                if note not in estimate.notes:
                    estimate.notes.append(note)
        if plan.answer is None and not config.retrieval_only:
            estimate.notes.append("no answer model: answers are extractive (no LLM calls)")
        if plan.judge is None and not config.retrieval_only:
            estimate.notes.append("no judge model: judge scores will be recorded as not measured")
        estimate.notes.append(
            "token counts are estimates: context = top_k x the strategy's chunk size (+ neighbours for fixed_size)"
        )
        seconds = durations.Speeds.of(durations.finished_experiments(self._deps.repository)).seconds(
            len(plan.cells), len(plan.documents), len(questions), plan.answer is not None, plan.judge is not None)
        if seconds is None:
            estimate.notes.append("time: no experiment has finished on this evaluator yet, so there is no speed "
                                  "to estimate it from")
        else:
            estimate.estimated_seconds = seconds
            estimate.notes.append("time: the median speeds of this evaluator's finished runs, scaled to this plan "
                                  "(processing each document per run, then each question)")
        return estimate

    @staticmethod
    def _context_tokens(cell: Cell, config: evaluator_pb2.ExperimentConfig) -> int:
        knobs = {name: python_value(value) for name, value in cell.spec.knobs.items()}
        size = knobs.get("chunk_size") or knobs.get("max_tokens") or 200
        per_hit = int(size)
        options = config.retrieval
        if cell.info.expansion == common_pb2.EXPANSION_KIND_NEIGHBORS:
            per_hit *= 1 + options.neighbor_prev + options.neighbor_next
        return options.top_k * per_hit

    # -- provenance -------------------------------------------------------

    def new_experiment(self, plan: Plan) -> evaluator_pb2.Experiment:
        experiment = evaluator_pb2.Experiment(
            experiment_id=str(uuid.uuid4()),
            config=plan.config,
            state=evaluator_pb2.EXPERIMENT_STATE_PENDING,
            question_set_hash=plan.question_set.content_hash,
            created_at=to_proto(utcnow()),
            questions_total=len(plan.cells) * len(plan.question_set.questions),
        )
        experiment.provenance.CopyFrom(self.provenance(plan))
        for cell in plan.cells:
            experiment.runs.add(
                run_key=cell.run_key, retrieval=self._run_options(cell, plan), spec=cell.spec,
                expansion=cell.info.expansion, config_id=cell.config_id,
                questions_total=len(plan.question_set.questions),
            )
        return experiment

    def provenance(self, plan: Plan) -> evaluator_pb2.ExperimentProvenance:
        hashes = {document_id: plan.records[document_id].content_hash for document_id in plan.documents}
        return evaluator_pb2.ExperimentProvenance(
            question_set_hash=plan.question_set.content_hash,
            embedding_model=plan.provider.name,
            answer_model=models.describe(plan.answer, "retrieval only (no answers)" if plan.config.retrieval_only
                                         else "extractive (no LLM)"),
            judge_model=models.describe(plan.judge, "none (judge scores not measured)"),
            judge_prompt_version=judge.prompt_version(),
            code_version=self._deps.code_version,
            document_hashes=hashes,
            extractive_method=(answers.EXTRACTIVE_METHOD if plan.answer is None and not plan.config.retrieval_only
                               else ""),
        )

    @staticmethod
    def _run_options(cell: Cell, plan: Plan) -> common_pb2.RetrievalOptions:
        """The experiment's options for one run: its strategy, its own set, its documents."""
        options = common_pb2.RetrievalOptions()
        options.CopyFrom(plan.config.retrieval)
        options.strategy = cell.spec.name
        options.config_id = cell.config_id
        del options.filter.document_ids[:]
        options.filter.document_ids.extend(plan.documents)
        if cell.window is not None:
            options.window = cell.window
        return options

    # -- running ----------------------------------------------------------

    def run(self, experiment: evaluator_pb2.Experiment, plan: Plan, publish: Publish) -> evaluator_pb2.Experiment:
        """Runs every question not yet done; returns the experiment in its final state."""
        repo = self._deps.repository
        experiment_id = experiment.experiment_id
        experiment.state = evaluator_pb2.EXPERIMENT_STATE_RUNNING
        experiment.error = ""
        experiment.ClearField("finished_at")
        done = repo.done_keys(experiment.experiment_id)
        experiment.questions_done = len(done)
        repo.save_experiment(experiment)
        questions = list(plan.question_set.questions)
        total = experiment.questions_total
        progressed = len(done)

        def progress(message: str, run_key: str = "", **processing) -> None:
            """processing: document_name, documents_done, documents_total while documents are processed."""
            publish(evaluator_pb2.ExperimentEvent(progress=evaluator_pb2.ExperimentProgress(
                experiment_id=experiment.experiment_id, questions_done=progressed, questions_total=total,
                message=message, run_key=run_key, **processing,
            )))

        progress("resuming: %d of %d questions already done" % (progressed, total) if done else "started")
        answer_client = ChatClient(plan.answer) if plan.answer is not None else None
        judge_runner = (
            judge.Judge(ChatClient(plan.judge), attempts=self._deps.judge_attempts,
                        backoff_s=self._deps.judge_backoff_s)
            if plan.judge is not None else None
        )
        try:
            self._check_stop(experiment_id)
            for cell, run in zip(plan.cells, experiment.runs):
                remaining = [(i, q) for i, q in enumerate(questions) if (cell.run_key, q.question_id) not in done]
                if not remaining:
                    continue
                self._check_stop(experiment_id)
                try:
                    self._ensure_processed(cell, plan, run, functools.partial(progress, run_key=cell.run_key),
                                           functools.partial(self._check_stop, experiment_id))
                except Unavailable:
                    raise
                except ServiceError as exc:
                    run.error = exc.message
                    progressed += len(remaining)
                    repo.save_experiment(experiment)
                    progress(f"{cell.run_key} skipped: {exc.message}", cell.run_key)
                    continue
                repo.save_experiment(experiment)
                for position, question in remaining:
                    self._check_stop(experiment_id)
                    result = self._question(cell, run, question, plan, answer_client, judge_runner)
                    repo.save_result(experiment.experiment_id, position, result)
                    progressed += 1
                    experiment.questions_done += 1
                    repo.save_experiment(experiment)
                    progress(f"{cell.run_key}: {question.text[:80]}", cell.run_key)
                self.summarize(experiment, repo.results(experiment.experiment_id), validated=False)
                repo.save_experiment(experiment)
        except Interrupted as stop:
            experiment.state = evaluator_pb2.EXPERIMENT_STATE_INTERRUPTED
            experiment.error = (
                f"cancelled on request; {RESUME_HINT}" if stop.cancelled
                else f"interrupted: the evaluator stopped; {RESUME_HINT}"
            )
        except ServiceError as exc:
            experiment.state = evaluator_pb2.EXPERIMENT_STATE_FAILED
            experiment.error = exc.message
        except Exception as exc:  # noqa: BLE001 - the experiment must end in a state, whatever happened
            log.exception("experiment %s failed", experiment.experiment_id)
            experiment.state = evaluator_pb2.EXPERIMENT_STATE_FAILED
            experiment.error = f"{type(exc).__name__}: {exc}"
        else:
            failed = [r for r in experiment.runs if r.error]
            if failed and len(failed) == len(experiment.runs):
                experiment.state = evaluator_pb2.EXPERIMENT_STATE_FAILED
                experiment.error = "every run failed: " + "; ".join(f"{r.run_key}: {r.error}" for r in failed)
            else:
                experiment.state = evaluator_pb2.EXPERIMENT_STATE_SUCCEEDED
        experiment.finished_at.CopyFrom(to_proto(utcnow()))
        self.summarize(experiment, repo.results(experiment.experiment_id))
        repo.save_experiment(experiment)
        return experiment

    def _check_stop(self, experiment_id: str) -> None:
        if self._stopping.is_set():
            raise Interrupted()
        if experiment_id in self._cancelled:
            raise Interrupted(cancelled=True)

    def _ensure_processed(self, cell: Cell, plan: Plan, run: evaluator_pb2.ExperimentRun,
                          progress: Callable[..., None], check_stop: Callable[[], None]) -> None:
        """Every document has an index set of this cell's configuration and
        embedding model: one already there (the user's, or an earlier
        experiment's) is reused; any other document is processed into a set of
        its own beside the active one, which stays as it is (ADR 0038). Each
        document processed is told by name, with how many are done."""
        model = plan.provider.name
        run.chunk_count = 0
        run.processing_seconds = 0.0
        run.ClearField("processing_phases")
        reused = 0
        total = len(plan.documents)
        for done, document_id in enumerate(plan.documents):
            with self._set_lock((document_id, cell.spec.name, cell.config_id, model)):
                indexed = self._deps.peers.indexed_set(model, document_id, cell.spec.name, cell.config_id)
                if indexed is not None:
                    reused += 1
                    run.chunk_count += indexed.points
                    continue
                name = plan.records[document_id].name
                told = functools.partial(progress, document_name=name, documents_done=done, documents_total=total)
                step = f"processing {name} with {cell.run_key} ({done + 1}/{total})"
                self._process(document_id, name, cell, model, run, step, told, check_stop)
        run.index_reused = reused == len(plan.documents)

    def _set_lock(self, key: tuple[str, str, str, str]) -> threading.Lock:
        with self._sets_lock:
            return self._set_locks.setdefault(key, threading.Lock())

    def _process(self, document_id: str, name: str, cell: Cell, model: str, run: evaluator_pb2.ExperimentRun,
                 step: str, progress: Callable[[str], None], check_stop: Callable[[], None]) -> None:
        """Indexes the run's own set of one document (never the active one), telling the
        step when it starts and then the chunker's progress at most once a second.
        A stop or cancel seen between the chunker's events ends the call, and with
        it the chunker's work."""
        progress(step)
        result = None
        last_report = 0.0
        events = self._deps.peers.process(document_id, cell.spec, model)
        try:
            for event in events:
                check_stop()
                if event.HasField("result"):
                    result = event.result
                elif time.monotonic() - last_report > 1.0:
                    last_report = time.monotonic()
                    progress(f"{step}: {event.progress.message}")
        finally:
            getattr(events, "close", lambda: None)()  # a generator's close ends the call it streams
        if result is None:
            raise Unavailable("the chunker ended processing without a result")
        if result.strategies_failed:
            reason = result.strategies_failed[0].reason
            raise FailedPrecondition(f"{cell.spec.name} could not process {name}: {reason}")
        outcome = result.strategies_completed[0]
        run.chunk_count += outcome.chunk_count
        run.processing_seconds += outcome.seconds
        for phase in ("chunk_seconds", "embed_seconds", "index_seconds"):
            setattr(run.processing_phases, phase, getattr(run.processing_phases, phase) + getattr(outcome.phases, phase))
        if outcome.config_id:
            run.config_id = run.retrieval.config_id = cell.config_id = outcome.config_id

    def _question(self, cell: Cell, run: evaluator_pb2.ExperimentRun, question: evaluator_pb2.Question, plan: Plan,
                  answer_client: ChatClient | None, judge_runner: judge.Judge | None) -> evaluator_pb2.QuestionResult:
        request = retrieve_request(question.text, run.retrieval)
        top_k = retrieval.top_k(run.retrieval)
        result = evaluator_pb2.QuestionResult(
            question_id=question.question_id, question=question.text, run_key=cell.run_key
        )
        started = time.perf_counter()
        try:
            response = self._deps.peers.retrieve(request)
        except Unavailable:
            raise
        except ServiceError as exc:
            result.error = f"retrieval failed: {exc.message}"
            result.metrics.CopyFrom(retrieval_metrics([], common_pb2.ExpansionTree(), question.references, top_k))
            return result
        retrieve_ms = (time.perf_counter() - started) * 1e3
        result.retrieved_chunks.extend(response.retrieved_chunks)
        result.expansion_tree.CopyFrom(response.expansion_tree)
        metrics = retrieval_metrics(response.retrieved_chunks, response.expansion_tree, question.references, top_k)
        metrics.retrieve_ms = retrieve_ms
        result.metrics.CopyFrom(metrics)
        if plan.config.retrieval_only:
            return result

        answer = self._answer(question, response.retrieved_chunks, plan, answer_client, result)
        if answer is None:
            return result
        result.answer, result.extractive = answer.text, answer.extractive
        result.metrics.answer_ms = answer.latency_ms
        usage = result.usage
        usage.prompt_tokens += answer.prompt_tokens
        usage.completion_tokens += answer.completion_tokens
        if not answer.extractive:
            usage.llm_calls += 1
            usage.estimated_cost_usd += pricing.cost_usd(answer.model, answer.prompt_tokens, answer.completion_tokens)
        expected = expected_answer(question)
        if expected and answer.text:
            vectors = plan.provider.embed_documents([answer.text, expected])
            result.metrics.embedding_answer_similarity = max(0.0, cosine(vectors[0], vectors[1]))
        if judge_runner is None:
            reason = "no judge model configured"
            result.judge.CopyFrom(evaluator_pb2.JudgeScores(
                prompt_version=judge.prompt_version(),
                **{m: judge.not_measured(reason) for m in judge.MEASURES},
            ))
            return result
        outcome = judge_runner.score(judge.JudgeInput(
            question=question.text, context=answers.context_text(response.retrieved_chunks),
            answer=answer.text, expected=expected,
        ))
        result.judge.CopyFrom(outcome.scores)
        result.metrics.judge_ms = outcome.elapsed_ms
        usage.prompt_tokens += outcome.prompt_tokens
        usage.completion_tokens += outcome.completion_tokens
        usage.llm_calls += outcome.calls
        usage.estimated_cost_usd += pricing.cost_usd(judge_runner.model, outcome.prompt_tokens,
                                                     outcome.completion_tokens)
        return result

    def _answer(self, question, retrieved, plan: Plan, client: ChatClient | None,
                result: evaluator_pb2.QuestionResult) -> answers.Answer | None:
        if client is None:
            return answers.extractive_answer(plan.provider, question.text, retrieved, self._deps.sentence_cache)
        try:
            final = None
            for piece in answers.stream_llm_answer(client, question.text, retrieved, self._stopping):
                if isinstance(piece, answers.Answer):
                    final = piece
            return final
        except Cancelled:
            raise Interrupted() from None
        except LLMError as exc:
            result.error = f"the answer model failed: {exc}"
            result.usage.llm_calls += 1
            result.judge.CopyFrom(evaluator_pb2.JudgeScores(
                prompt_version=judge.prompt_version(),
                **{m: judge.not_measured("no answer to judge") for m in judge.MEASURES},
            ))
            return None

    # -- summaries --------------------------------------------------------

    @staticmethod
    def summarize(experiment: evaluator_pb2.Experiment, results: Sequence[evaluator_pb2.QuestionResult],
                  validated: bool = True) -> None:
        """Fills each run's means, usage and count from the finished questions,
        and (when `validated`) the winner's validation (validation.py) and the verdict (verdict.py)."""
        by_run: dict[str, list[evaluator_pb2.QuestionResult]] = {}
        for result in results:
            by_run.setdefault(result.run_key, []).append(result)
        experiment.questions_done = len(results)
        for run in experiment.runs:
            items = by_run.get(run.run_key, [])
            run.questions_done = len(items)
            run.mean_metrics.CopyFrom(mean_metrics([r.metrics for r in items]))
            run.mean_judge.CopyFrom(mean_judge([r.judge for r in items if r.HasField("judge")]))
            usage = common_pb2.TokenUsage()
            for r in items:
                usage.prompt_tokens += r.usage.prompt_tokens
                usage.completion_tokens += r.usage.completion_tokens
                usage.llm_calls += r.usage.llm_calls
                usage.estimated_cost_usd += r.usage.estimated_cost_usd
            run.usage.CopyFrom(usage)
        if validated:
            experiment.validation.CopyFrom(validation.validate(experiment, results))
            experiment.verdict.CopyFrom(verdict.decide(experiment, results))


def mean_judge(items: Sequence[evaluator_pb2.JudgeScores]) -> evaluator_pb2.JudgeScores:
    """Means over the measured scores only; the reason says how many were."""
    mean = evaluator_pb2.JudgeScores()
    if items:
        mean.judge_model = items[0].judge_model
        mean.prompt_version = items[0].prompt_version
    for measure in judge.MEASURES:
        scores = [getattr(j, measure) for j in items]
        measured = [s.value for s in scores if s.measured]
        target = getattr(mean, measure)
        target.measured = bool(measured)
        target.value = sum(measured) / len(measured) if measured else 0.0
        target.reason = f"{len(measured)} of {len(scores)} questions measured"
    return mean


def _copy(config: evaluator_pb2.ExperimentConfig) -> evaluator_pb2.ExperimentConfig:
    copy = evaluator_pb2.ExperimentConfig()
    copy.CopyFrom(config)
    return copy


def _with_key(endpoint: evaluator_pb2.ModelEndpoint, key: str) -> evaluator_pb2.ModelEndpoint:
    copy = evaluator_pb2.ModelEndpoint()
    copy.CopyFrom(endpoint)
    if key:
        copy.api_key = key
    return copy

