"""The evaluator's logic behind its RPCs. Knows nothing of gRPC: peers come as
an object with plain methods (services.evaluator.peers.GrpcPeers in the
server, a fake in unit tests)."""

from __future__ import annotations

import logging
import queue
import threading
import time
import uuid
from collections.abc import Iterator

from chunklab import retrieval, tracing
from chunklab.errors import Cancelled, FailedPrecondition, InvalidArgument, ServiceError, Unavailable
from chunklab.llm import ChatClient, LLMError
from chunklab.replicas import replica_name
from chunklab.timeutil import to_proto, utcnow
from chunklab.v1 import common_pb2, evaluator_pb2
from services.evaluator import answers, compare, grid, models, pricing, report, validation
from services.evaluator.experiments import RESUME_HINT, ExperimentRunner, Plan, RunnerDeps
from services.evaluator.generation import Generator
from services.evaluator.leases import Leases, Renewer
from services.evaluator.peers import retrieve_request
from services.evaluator.set_service import QuestionSetService
from services.evaluator.store import FeedbackRow, QueryRow

log = logging.getLogger("chunklab.evaluator")

# Experiments that run at once; more wait their turn. Each run searches its own
# index sets (ADR 0038), so they do not disturb each other or the active sets.
CONCURRENT_EXPERIMENTS = 2

# How often a RunExperiment stream with nothing to send looks whether its caller is still there.
WATCH_S = 1.0


class ExperimentWorker:
    """Runs experiments on a few threads of its own (CONCURRENT_EXPERIMENTS at
    once), in the order started.

    A run does not depend on the caller staying connected: events go to a
    queue that the RPC drains while it can.
    """

    def __init__(self, concurrency: int = CONCURRENT_EXPERIMENTS) -> None:
        self._jobs: queue.Queue = queue.Queue()
        self._concurrency = concurrency
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()
        self._busy = 0
        self._idle = threading.Condition(self._lock)
        self.active: set[str] = set()
        self.cancelled: set[str] = set()  # queued or running ones asked to stop
        # The latest progress event of each queued or running experiment (GetExperiment's `progress`).
        self.progress: dict[str, evaluator_pb2.ExperimentProgress] = {}

    def submit(self, experiment_id: str, job, finished=None) -> None:
        """Queues `job`; `finished` is called once the experiment has left `active`
        (then a resume, or a look at its lease, sees it ended)."""
        with self._lock:
            self.active.add(experiment_id)
            self._busy += 1
            if len(self._threads) < self._concurrency:
                thread = threading.Thread(target=self._loop, name=f"experiments-{len(self._threads)}", daemon=True)
                self._threads.append(thread)
                thread.start()

        def traced() -> None:
            with tracing.span("run experiment", experiment_id=experiment_id):
                job()

        # The run's calls (processing, retrieval) belong to the trace of the call that started it.
        self._jobs.put((experiment_id, tracing.carried(traced), finished))

    def _loop(self) -> None:
        while True:
            experiment_id, job, finished = self._jobs.get()
            try:
                job()
            except Exception:  # noqa: BLE001 - the runner records failures; never kill the worker
                log.exception("experiment %s crashed", experiment_id)
            finally:
                with self._lock:
                    self.active.discard(experiment_id)
                    self.cancelled.discard(experiment_id)
                    self.progress.pop(experiment_id, None)
                    self._busy -= 1
                    self._idle.notify_all()
                if finished is not None:
                    finished()

    def cancel(self, experiment_id: str) -> bool:
        """Asks a queued or running experiment to stop; False when it is neither."""
        with self._lock:
            if experiment_id not in self.active:
                return False
            self.cancelled.add(experiment_id)
            return True

    def wait_idle(self, timeout: float) -> bool:
        with self._lock:
            return self._idle.wait_for(lambda: self._busy == 0, timeout)


class EvaluatorService:
    def __init__(self, deps: RunnerDeps, max_upload_bytes: int, report_piece_bytes: int,
                 leases: Leases | None = None) -> None:
        """leases: where this replica claims the experiments it runs (ADR 0065); by
        default a 30 s lease in the repository's database under this process's name."""
        self._deps = deps
        self._repo = deps.repository
        self._peers = deps.peers
        self._worker = ExperimentWorker()
        self._runner = ExperimentRunner(deps, self._worker.cancelled)
        self._leases = leases or Leases(self._repo.sessions, replica_name(""), 30.0)
        self._renewer = Renewer(self._leases, lambda: set(self._worker.active), self._stop_leased)
        self._report_piece = report_piece_bytes
        self.sets = QuestionSetService(deps.repository, deps.peers, max_upload_bytes)
        self.generator = Generator(deps)

    # -- start-up and shutdown ----------------------------------------------

    def recover(self) -> list[str]:
        """Marks experiments a previous process left RUNNING or PENDING as
        interrupted (but not one another live replica holds the lease of): a
        resume continues them. Returns the ids marked. Nothing else needs mending, since
        experiments never change the active index sets (ADR 0038)."""
        self.generator.recover()
        ids = [*self._repo.experiment_ids_in_state(evaluator_pb2.EXPERIMENT_STATE_RUNNING),
               *self._repo.experiment_ids_in_state(evaluator_pb2.EXPERIMENT_STATE_PENDING)]
        marked = []
        for experiment_id in ids:
            lease = self._leases.holder(experiment_id)
            if lease is not None and lease.replica != self._leases.replica:
                log.info("experiment %s runs on evaluator replica %s", experiment_id, lease.replica)
                continue
            self._leases.release(experiment_id)
            experiment = self._repo.experiment(experiment_id)
            experiment.state = evaluator_pb2.EXPERIMENT_STATE_INTERRUPTED
            experiment.error = ("interrupted: the evaluator restarted mid-run; finished questions are kept, "
                                f"{RESUME_HINT}")
            experiment.finished_at.CopyFrom(to_proto(utcnow()))
            ExperimentRunner.summarize(experiment, self._repo.results(experiment_id))
            self._repo.save_experiment(experiment)
            log.warning("experiment %s was interrupted by a restart", experiment_id)
            marked.append(experiment_id)
        return marked

    def _stop_leased(self, experiment_id: str, why: str) -> None:
        """The renewer's word on an experiment running here: cancelled elsewhere, or its lease lost."""
        if why == "lost":
            log.error("experiment %s: replica %s lost its lease (the database was out of reach for longer "
                      "than the lease); stopping it so that it does not run twice", experiment_id,
                      self._leases.replica)
        self._worker.cancel(experiment_id)

    def begin_stop(self) -> None:
        """Tells the running experiments to stop at their next step (the next
        question, or the next event of a document being processed)."""
        self._runner.stop()

    def stop(self, timeout: float = 2.0) -> None:
        """Stops the running experiments (marked interrupted), waiting for them at
        most `timeout`; queued ones stay pending and are marked at next start, as
        is one that did not stop in time."""
        self._runner.stop()
        self._worker.wait_idle(timeout)
        self._renewer.close()

    # -- question sets ------------------------------------------------------

    def create_question_set(self, request: evaluator_pb2.CreateQuestionSetRequest) -> evaluator_pb2.QuestionSet:
        return self.sets.create(request)

    def import_question_set(self, header: evaluator_pb2.ImportHeader, pieces: Iterator[bytes]) -> evaluator_pb2.QuestionSet:
        return self.sets.import_file(header, pieces)

    def get_question_set(self, set_id: str) -> evaluator_pb2.QuestionSet:
        return self._repo.get_question_set(set_id)

    def list_question_sets(self, request) -> evaluator_pb2.ListQuestionSetsResponse:
        sets, token = self._repo.list_question_sets(request.page_size, request.page_token)
        return evaluator_pb2.ListQuestionSetsResponse(question_sets=sets, next_page_token=token)

    def delete_question_set(self, set_id: str) -> None:
        self._repo.delete_question_set(set_id)

    # -- answers ------------------------------------------------------------

    def answer(self, request: evaluator_pb2.AnswerRequest,
               cancelled: threading.Event | None = None) -> Iterator[evaluator_pb2.AnswerEvent]:
        """The context, the answer as it is written, then the result, stored as a
        query. Once `cancelled` is set (the call ended) the model stops writing,
        nothing is stored and Cancelled is raised."""
        cancelled = cancelled or threading.Event()
        question = request.question.strip()
        if not question:
            raise InvalidArgument("the question is empty: ask something")
        settings = common_pb2.RetrievalOptions()
        settings.CopyFrom(request.retrieval)
        retrieval.check_options(settings)
        grid.strategy_info(settings.strategy, self._peers.list_strategies())  # not an empty answer for a typo
        provider = self._deps.provider_for(settings.embedding_model or self._deps.default_embedding_model)
        settings.embedding_model = provider.name
        settings.top_k = retrieval.top_k(settings)
        endpoint = models.resolve(request.answer_model, self._deps.defaults, models.EXTRACTIVE)
        response = self._peers.retrieve(retrieve_request(question, settings))
        if cancelled.is_set():
            raise Cancelled("the question was not answered: its call ended during retrieval")
        query_id = str(uuid.uuid4())
        context = evaluator_pb2.AnswerContext(
            query_id=query_id, retrieved_chunks=response.retrieved_chunks, expansion_tree=response.expansion_tree
        )
        yield evaluator_pb2.AnswerEvent(context=context)
        started = time.perf_counter()
        if endpoint is None:
            answer = answers.extractive_answer(provider, question, response.retrieved_chunks, self._deps.sentence_cache)
            yield evaluator_pb2.AnswerEvent(delta=answer.text)
        else:
            answer = None
            try:
                for piece in answers.stream_llm_answer(ChatClient(endpoint), question, response.retrieved_chunks,
                                                       cancelled):
                    if isinstance(piece, answers.Answer):
                        answer = piece
                    else:
                        yield evaluator_pb2.AnswerEvent(delta=piece)
            except LLMError as exc:
                raise Unavailable(f"the answer model failed: {exc}") from None
        latency = (time.perf_counter() - started) * 1e3
        usage = common_pb2.TokenUsage(
            prompt_tokens=answer.prompt_tokens, completion_tokens=answer.completion_tokens,
            llm_calls=0 if answer.extractive else 1,
            estimated_cost_usd=0.0 if answer.extractive else pricing.cost_usd(
                answer.model, answer.prompt_tokens, answer.completion_tokens),
        )
        self._repo.add_query(QueryRow(
            query_id=query_id, question=question, strategy=settings.strategy, answer=answer.text,
            extractive=answer.extractive, model=answer.model, latency_ms=latency, created_at=utcnow(),
            context=context.SerializeToString(), settings=settings.SerializeToString(),
        ))
        yield evaluator_pb2.AnswerEvent(result=evaluator_pb2.AnswerResult(
            query_id=query_id, answer=answer.text, extractive=answer.extractive, model=answer.model,
            usage=usage, latency_ms=latency,
        ))

    # -- experiments --------------------------------------------------------

    def run_experiment(self, request: evaluator_pb2.RunExperimentRequest,
                       cancelled: threading.Event | None = None) -> Iterator[evaluator_pb2.ExperimentEvent]:
        """Plans, estimates and (unless a dry run) queues the experiment, then streams
        its events. `cancelled` (the call ended) stops the planning; a queued
        experiment runs on without its caller (ADR 0027: CancelExperiment stops
        it) and the stream just stops watching it."""
        cancelled = cancelled or threading.Event()
        if request.resume_experiment_id:
            experiment, plan = self._resume_plan(request, cancelled)
        else:
            plan = self._runner.plan(request.config, cancelled)
            experiment = None
        estimate = self._runner.estimate(plan)
        yield evaluator_pb2.ExperimentEvent(estimate=estimate)
        if request.dry_run:
            preview = evaluator_pb2.Experiment(config=plan.config, state=evaluator_pb2.EXPERIMENT_STATE_PENDING,
                                               question_set_hash=plan.question_set.content_hash,
                                               questions_total=len(plan.cells) * len(plan.question_set.questions))
            for cell in plan.cells:
                preview.runs.add(run_key=cell.run_key, config_id=cell.config_id, spec=cell.spec,
                                 expansion=cell.info.expansion, questions_total=len(plan.question_set.questions))
            yield evaluator_pb2.ExperimentEvent(experiment=preview)
            return
        if experiment is None:
            experiment = self._runner.new_experiment(plan)
            self._repo.add_experiment(experiment)
        self._leases.claim(experiment.experiment_id)  # refused while another replica holds it
        self._renewer.start()
        events: queue.Queue = queue.Queue()
        experiment_id = experiment.experiment_id

        def publish(event: evaluator_pb2.ExperimentEvent) -> None:
            if event.HasField("progress"):
                self._worker.progress[experiment_id] = event.progress  # GetExperiment shows it mid-run
            events.put(event)

        ended: list[evaluator_pb2.Experiment] = []

        def job() -> None:
            try:
                final = self._runner.run(experiment, plan, publish)
            except ServiceError as exc:  # its end could not be stored: the stream still ends, saying so
                experiment.state = evaluator_pb2.EXPERIMENT_STATE_FAILED
                experiment.error = (f"{experiment.error + '; ' if experiment.error else ''}its end could not be "
                                    f"stored ({exc.message}); {RESUME_HINT}")
                final = experiment
            finally:
                try:
                    self._leases.release(experiment.experiment_id)
                except ServiceError as exc:  # e.g. a locked database: the lease runs out by itself
                    log.warning("the lease of experiment %s was not released: %s", experiment.experiment_id,
                                exc.message)
            ended.append(final)

        def finished() -> None:  # the stream always ends, once the experiment can be resumed
            events.put(evaluator_pb2.ExperimentEvent(experiment=ended[0] if ended else experiment))

        self._worker.submit(experiment.experiment_id, job, finished)
        yield evaluator_pb2.ExperimentEvent(progress=evaluator_pb2.ExperimentProgress(
            experiment_id=experiment.experiment_id, questions_total=experiment.questions_total,
            questions_done=experiment.questions_done, message="queued",
        ))
        while not cancelled.is_set():
            try:
                event = events.get(timeout=WATCH_S)
            except queue.Empty:
                continue
            yield event
            if event.HasField("experiment"):
                return

    def cancel_experiment(self, request: evaluator_pb2.CancelExperimentRequest) -> evaluator_pb2.CancelExperimentResponse:
        experiment_id = request.experiment_id
        if not experiment_id:
            raise InvalidArgument("experiment_id is empty")
        experiment = self._repo.experiment(experiment_id)  # NOT_FOUND for an unknown id
        if not self._worker.cancel(experiment_id) and self._leases.request_cancel(experiment_id) is None:
            raise FailedPrecondition(
                f"experiment {experiment_id} is {report.STATE.get(experiment.state, '?')}: "
                "only a queued or running experiment can be cancelled"
            )
        return evaluator_pb2.CancelExperimentResponse(experiment_id=experiment_id, state=experiment.state)

    def _resume_plan(self, request: evaluator_pb2.RunExperimentRequest,
                     cancelled: threading.Event) -> tuple[evaluator_pb2.Experiment, Plan]:
        experiment_id = request.resume_experiment_id
        experiment = self._repo.experiment(experiment_id)
        if experiment_id in self._worker.active:
            raise FailedPrecondition(f"experiment {experiment_id} is running now; there is nothing to resume")
        self._leases.check_free(experiment_id)  # running on another replica
        # Stored as pending or running, yet not on the worker: a run whose end could not be stored.
        if experiment.state not in (evaluator_pb2.EXPERIMENT_STATE_INTERRUPTED, evaluator_pb2.EXPERIMENT_STATE_FAILED,
                                    evaluator_pb2.EXPERIMENT_STATE_PENDING, evaluator_pb2.EXPERIMENT_STATE_RUNNING):
            raise FailedPrecondition(
                f"experiment {experiment_id} is {report.STATE.get(experiment.state, '?')}; "
                "only interrupted or failed experiments resume"
            )
        plan = self._runner.with_keys(self._runner.plan(experiment.config, cancelled), request.config)
        if plan.question_set.content_hash != experiment.question_set_hash:
            raise FailedPrecondition("the experiment's question set changed since it started; start a new experiment")
        if [c.run_key for c in plan.cells] != [r.run_key for r in experiment.runs]:
            raise FailedPrecondition(
                "the chunker's strategies changed since the experiment started (its runs no longer expand the "
                "same way); start a new experiment"
            )
        return experiment, plan

    def get_experiment(self, request: evaluator_pb2.GetExperimentRequest) -> evaluator_pb2.Experiment:
        experiment = self._repo.experiment(request.experiment_id)
        results = self._repo.results(experiment.experiment_id)
        ExperimentRunner.summarize(experiment, results)
        latest = self._worker.progress.get(experiment.experiment_id)
        if latest is not None and experiment.state in (evaluator_pb2.EXPERIMENT_STATE_PENDING,
                                                       evaluator_pb2.EXPERIMENT_STATE_RUNNING):
            experiment.progress.CopyFrom(latest)
        if not request.without_results:
            experiment.results.extend(r for r in results if not request.run_key or r.run_key == request.run_key)
        return experiment

    def list_experiments(self, request) -> evaluator_pb2.ListExperimentsResponse:
        experiments, token = self._repo.list_experiments(request.page_size, request.page_token)
        return evaluator_pb2.ListExperimentsResponse(experiments=experiments, next_page_token=token)

    def compare(self, request: evaluator_pb2.CompareExperimentsRequest) -> evaluator_pb2.CompareExperimentsResponse:
        ids = list(dict.fromkeys(request.experiment_ids))
        if len(ids) < 2:
            raise InvalidArgument("name at least two different experiments to compare")
        samples = request.bootstrap_samples or compare.DEFAULT_SAMPLES
        if not 100 <= samples <= compare.MAX_SAMPLES:
            raise InvalidArgument(f"bootstrap_samples must be between 100 and {compare.MAX_SAMPLES}, got {samples}")
        experiments, results = [], {}
        for experiment_id in ids:
            experiment = self._repo.experiment(experiment_id)
            results[experiment_id] = self._repo.results(experiment_id)
            ExperimentRunner.summarize(experiment, results[experiment_id])
            experiments.append(experiment)
        deciding = validation.headline_metric([r for e in experiments for r in e.runs if r.questions_done])
        return evaluator_pb2.CompareExperimentsResponse(
            experiments=experiments,
            warnings=compare.warnings(experiments, self._set_names(experiments)) + compare.left_out(experiments, results),
            differences=compare.differences(experiments, results, samples),
            wins=compare.wins(experiments, results, deciding),
        )

    def _set_names(self, experiments: list[evaluator_pb2.Experiment]) -> dict[str, str]:
        """Question-set id -> name, for the sets still stored (a warning names them as the UI does)."""
        names = {}
        for set_id in {e.config.question_set_id for e in experiments}:
            try:
                names[set_id] = self._repo.get_question_set(set_id, with_questions=False).name
            except ServiceError:
                continue
        return names

    def report(self, request: evaluator_pb2.GetReportRequest) -> Iterator[evaluator_pb2.ReportPiece]:
        """GetReport's stream: the header, then the file in pieces, rendered as they are sent.
        Nothing is sent before the experiment is found finished, so a refusal is the stream's status."""
        experiment = self._repo.experiment(request.experiment_id)
        if experiment.state in (evaluator_pb2.EXPERIMENT_STATE_PENDING, evaluator_pb2.EXPERIMENT_STATE_RUNNING):
            raise FailedPrecondition(
                f"experiment {experiment.experiment_id} is still {report.STATE[experiment.state]}; "
                "its report is written once it ends"
            )
        results = self._repo.results(experiment.experiment_id)
        ExperimentRunner.summarize(experiment, results)
        question_set = self._repo.get_question_set(experiment.config.question_set_id)
        yield evaluator_pb2.ReportPiece(header=evaluator_pb2.Report(
            experiment_id=experiment.experiment_id, file_name=report.file_name(experiment),
            content_type=report.CONTENT_TYPE, view=report.shown_view(request.view),
        ))
        for data in report.pieces(experiment, question_set, results, request.view, self._report_piece):
            yield evaluator_pb2.ReportPiece(data=data)

    # -- feedback -----------------------------------------------------------

    def submit_feedback(self, request: evaluator_pb2.SubmitFeedbackRequest) -> evaluator_pb2.Feedback:
        if not request.query_id:
            raise InvalidArgument("query_id is empty: rate the query_id an Answer returned")
        query = self._repo.query(request.query_id)
        now = utcnow()
        row = FeedbackRow(
            feedback_id=str(uuid.uuid4()), query_id=query.query_id, thumbs_up=request.thumbs_up,
            comment=request.comment, strategy=query.strategy, created_at=now,
        )
        self._repo.add_feedback(row)
        context = evaluator_pb2.AnswerContext.FromString(query.context)
        return evaluator_pb2.Feedback(
            feedback_id=row.feedback_id, query_id=query.query_id, thumbs_up=row.thumbs_up, comment=row.comment,
            strategy=row.strategy, created_at=to_proto(now), question=query.question, answer=query.answer,
            retrieved_chunks=context.retrieved_chunks,
        )

    def summarize_feedback(self) -> evaluator_pb2.SummarizeFeedbackResponse:
        totals: dict[str, list[int]] = {}
        for strategy, up, count in self._repo.feedback_counts():
            totals.setdefault(strategy, [0, 0])[0 if up else 1] += count
        return evaluator_pb2.SummarizeFeedbackResponse(strategies=[
            evaluator_pb2.FeedbackSummary(strategy=s, thumbs_up=u, thumbs_down=d)
            for s, (u, d) in sorted(totals.items())
        ])

