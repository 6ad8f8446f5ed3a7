"""An experiment run: every question not yet done, run by run.

A run is one grid cell: a strategy with fixed knob values, that is one
configuration. Each run indexes its own index set per document (beside the
active one, which it never changes) unless the set is there already, and
searches that set by its config_id (ADR 0038); so nothing has to be put back
afterwards, and experiments can run side by side. Each finished question is
saved at once with the experiment when an LLM answered it (a restart loses
at most the question in flight); a retrieval-only question, cheap to ask
again, within SAVE_EVERY_S (ADR 0121). `run` skips the questions already
saved, which is how a resumed experiment continues.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Collection, Iterator
from concurrent.futures import ThreadPoolExecutor

from chunklab import experiment_state
from chunklab.errors import ServiceError, Unavailable, logged
from chunklab.llm import ChatClient
from chunklab.rpc import tracing
from chunklab.timeutil import to_proto, utcnow
from chunklab.v1 import evaluator_pb2
from services.evaluator.deps import RunnerDeps
from services.evaluator.experiments.ask import Asker, Interrupted
from services.evaluator.experiments.grid import Cell
from services.evaluator.experiments.index_sets import IndexSets
from services.evaluator.experiments.plan import Plan
from services.evaluator.experiments.summary import summarize
from services.evaluator.judging import judge

# How a person continues an interrupted experiment: the UI's button or the CLI's command.
RESUME_HINT = "continue it with Resume on the Experiments page (or `chunklab resume <experiment id>`)"
log = logging.getLogger("chunklab.evaluator")
# Finished retrieval-only questions are written together at most this long after the first of them
# started: one transaction per question made such a run spend a third of its time committing.
SAVE_EVERY_S = 0.5
# Retrieval-only questions asked at once (ADR 0143): while the evaluator scores and saves one,
# the retriever answers the next. Each is answered as it would be alone; results are taken in order.
QUESTIONS_IN_FLIGHT = 2


def in_order(
    items: list[tuple[int, evaluator_pb2.Question]],
    ask: Callable[[evaluator_pb2.Question], evaluator_pb2.QuestionResult],
    check_stop: Callable[[], None],
    in_flight: int,
) -> Iterator[tuple[int, evaluator_pb2.Question, evaluator_pb2.QuestionResult]]:
    """(position, question, its result) in the items' order, with up to `in_flight` questions
    asked at once; check_stop() before each question is asked. A question still in flight when
    the consumer stops is dropped (never saved, so Resume asks it again)."""
    if in_flight < 2:
        for position, question in items:
            check_stop()
            yield position, question, ask(question)
        return
    pending: deque = deque()
    waiting = iter(items)
    with ThreadPoolExecutor(in_flight, thread_name_prefix="ask") as pool:
        try:
            while True:
                while len(pending) < in_flight and (item := next(waiting, None)) is not None:
                    check_stop()
                    pending.append((item, pool.submit(tracing.carried(ask), item[1])))
                if not pending:
                    return
                (position, question), future = pending.popleft()
                yield position, question, future.result()
        finally:
            for _, future in pending:
                future.cancel()


Publish = Callable[[evaluator_pb2.ExperimentEvent], None]


class Runner:
    def __init__(self, deps: RunnerDeps, cancelled: Collection[str] = frozenset()) -> None:
        """cancelled: ids of experiments asked to stop (the worker's set, which it clears
        when a run ends); the running one stops before its next question."""
        self._deps = deps
        self._stopping = threading.Event()
        self._cancelled = cancelled
        self._sets = IndexSets(deps.peers)
        self._asker = Asker(deps, self._stopping)

    @property
    def stopping(self) -> threading.Event:
        """Set once the service is stopping."""
        return self._stopping

    def stop(self) -> None:
        self._stopping.set()

    def run(self, experiment: evaluator_pb2.Experiment, plan: Plan, publish: Publish) -> evaluator_pb2.Experiment:
        """Runs every question not yet done; returns the experiment in its final state."""
        repo = self._deps.repository
        experiment.state = evaluator_pb2.EXPERIMENT_STATE_RUNNING
        experiment.error = ""
        experiment.ClearField("finished_at")
        _retry_failed(experiment, repo)
        done = repo.done_keys(experiment.experiment_id)
        experiment.questions_done = len(done)
        repo.save_experiment(experiment)
        progress = _Progress(experiment, publish, len(done))
        progress(f"resuming: {len(done)} of {experiment.questions_total} questions already done" if done else "started")
        ran_to_end = False
        try:
            self._run_cells(experiment, plan, done, progress)
            ran_to_end = True
        except Interrupted as stop:
            experiment.state = evaluator_pb2.EXPERIMENT_STATE_INTERRUPTED
            experiment.error = (
                f"cancelled on request; {RESUME_HINT}"
                if stop.cancelled
                else f"interrupted: the evaluator stopped; {RESUME_HINT}"
            )
        except ServiceError as exc:
            experiment.state = evaluator_pb2.EXPERIMENT_STATE_FAILED
            experiment.error = exc.message
        except Exception:  # the experiment must end in a state, whatever happened
            # The exception's text is for the log, not for the person reading the experiment (ADR 0050).
            incident = logged(log, f"experiment {experiment.experiment_id} failed")
            experiment.state = evaluator_pb2.EXPERIMENT_STATE_FAILED
            experiment.error = (
                f"the experiment stopped on an internal error (incident {incident}); the evaluator's "
                f"log has the details; {RESUME_HINT}"
            )
        experiment.finished_at.CopyFrom(to_proto(utcnow()))
        summarize(experiment, repo.results(experiment.experiment_id))
        if ran_to_end:  # every run went to its end: which of them failed decides
            experiment.state, experiment.error = experiment_state.ended(experiment.runs)
        repo.save_experiment(experiment)
        return experiment

    def _run_cells(
        self, experiment: evaluator_pb2.Experiment, plan: Plan, done: set[tuple[str, str]], progress: _Progress
    ) -> None:
        answer_client = ChatClient(plan.answer) if plan.answer is not None else None
        judge_runner = (
            judge.Judge(
                ChatClient(plan.judge), attempts=self._deps.judge_attempts, backoff_s=self._deps.judge_backoff_s
            )
            if plan.judge is not None
            else None
        )
        questions = list(plan.question_set.questions)
        self._check_stop(experiment.experiment_id)
        for cell, run in zip(plan.cells, experiment.runs):
            remaining = [(i, q) for i, q in enumerate(questions) if (cell.run_key, q.question_id) not in done]
            if not remaining:
                continue
            self._check_stop(experiment.experiment_id)
            if self._processed(experiment, cell, plan, run, progress, len(remaining)):
                self._run_questions(experiment, cell, run, remaining, plan, progress, answer_client, judge_runner)

    def _processed(
        self,
        experiment: evaluator_pb2.Experiment,
        cell: Cell,
        plan: Plan,
        run: evaluator_pb2.ExperimentRun,
        progress: _Progress,
        remaining: int,
    ) -> bool:
        """Whether the run's index sets are ready; a run whose sets cannot be made is
        skipped (its error says why) and the others go on."""
        repo = self._deps.repository
        try:
            self._sets.ensure(
                cell,
                plan,
                run,
                functools.partial(progress, run_key=cell.run_key),
                functools.partial(self._check_stop, experiment.experiment_id),
            )
        except Unavailable:
            raise
        except ServiceError as exc:
            run.error = exc.message
            progress.done += remaining
            repo.save_experiment(experiment)
            progress(f"{cell.run_key} skipped: {exc.message}", cell.run_key)
            return False
        repo.save_experiment(experiment)
        return True

    def _run_questions(
        self,
        experiment: evaluator_pb2.Experiment,
        cell: Cell,
        run: evaluator_pb2.ExperimentRun,
        remaining: list[tuple[int, evaluator_pb2.Question]],
        plan: Plan,
        progress: _Progress,
        answer_client: ChatClient | None,
        judge_runner: judge.Judge | None,
    ) -> None:
        repo = self._deps.repository
        unsaved: list[tuple[int, evaluator_pb2.QuestionResult]] = []
        first_unsaved = 0.0
        asked = in_order(
            remaining,
            lambda question: self._asker.ask(cell, run, question, plan, answer_client, judge_runner),
            functools.partial(self._check_stop, experiment.experiment_id),
            QUESTIONS_IN_FLIGHT if plan.config.retrieval_only else 1,
        )
        try:
            started = time.perf_counter()
            for position, question, result in asked:
                unsaved.append((position, result))
                progress.done += 1
                experiment.questions_done += 1
                # What the estimate's question speed reads: the wall seconds of asking, question by question.
                now = time.perf_counter()
                run.asking_seconds += now - started
                first_unsaved, started = first_unsaved or started, now
                if not plan.config.retrieval_only or time.perf_counter() - first_unsaved >= SAVE_EVERY_S:
                    repo.save_progress(experiment, unsaved)
                    unsaved, first_unsaved = [], 0.0
                progress(f"{cell.run_key}: {question.text[:80]}", cell.run_key)
        finally:  # what was asked before a stop or a failure is kept
            asked.close()
            if unsaved:
                repo.save_progress(experiment, unsaved)
        summarize(experiment, repo.results(experiment.experiment_id), validated=False)
        repo.save_experiment(experiment)

    def _check_stop(self, experiment_id: str) -> None:
        if self._stopping.is_set():
            raise Interrupted()
        if experiment_id in self._cancelled:
            raise Interrupted(cancelled=True)


class _Progress:
    """Publishes the experiment's progress: `done` questions of its total, and a message."""

    def __init__(self, experiment: evaluator_pb2.Experiment, publish: Publish, done: int) -> None:
        self._experiment = experiment
        self._publish = publish
        self.done = done

    def __call__(self, message: str, run_key: str = "", **processing) -> None:
        """processing: document_name, documents_done, documents_total while documents are processed."""
        self._publish(
            evaluator_pb2.ExperimentEvent(
                progress=evaluator_pb2.ExperimentProgress(
                    experiment_id=self._experiment.experiment_id,
                    questions_done=self.done,
                    questions_total=self._experiment.questions_total,
                    message=message,
                    run_key=run_key,
                    **processing,
                )
            )
        )


def _retry_failed(experiment: evaluator_pb2.Experiment, repo) -> None:
    """A resumed experiment retries what failed (ADR 0087): a run that could not run loses its
    error (its index sets are made again), and each failed question's result is forgotten, so
    that it is asked again."""
    for run in experiment.runs:
        run.error = ""
    repo.forget_failed_results(experiment.experiment_id)
