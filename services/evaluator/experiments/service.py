"""The experiment RPCs' logic: RunExperiment (plan, estimate, queue, stream),
CancelExperiment, GetExperiment, ListExperiments, and marking at start-up the
experiments a previous process left running."""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Iterator

from chunklab import experiment_state
from chunklab.errors import FailedPrecondition, InvalidArgument, NotFound, ServiceError
from chunklab.rpc import limits
from chunklab.timeutil import to_proto, utcnow
from chunklab.v1 import evaluator_pb2
from services.evaluator.deps import RunnerDeps
from services.evaluator.experiments import record
from services.evaluator.experiments.estimate import estimate
from services.evaluator.experiments.plan import Plan, Planner
from services.evaluator.experiments.run import RESUME_HINT, Runner
from services.evaluator.experiments.summary import summarize
from services.evaluator.experiments.worker import ExperimentWorker
from services.evaluator.leases import Leases, Renewer
from services.evaluator.study import setup
from services.evaluator.study.runner import StudyRunner

log = logging.getLogger("chunklab.evaluator")

# How often a RunExperiment stream with nothing to send looks whether its caller is still there.
WATCH_S = 1.0


class ExperimentService:
    def __init__(self, deps: RunnerDeps, leases: Leases) -> None:
        """leases: where this replica claims the experiments it runs (ADR 0065)."""
        self._deps = deps
        self._repo = deps.repository
        self._worker = ExperimentWorker()
        self._planner = Planner(deps)
        self._runner = Runner(deps, self._worker.cancelled)
        self._studies = StudyRunner(deps, self._worker.cancelled, self._runner.stopping)
        self._leases = leases
        self._renewer = Renewer(self._leases, lambda: set(self._worker.active), self._stop_leased)

    # -- start-up and shutdown ----------------------------------------------

    def recover(self) -> list[str]:
        """Marks experiments a previous process left RUNNING or PENDING as
        interrupted (but not one another live replica holds the lease of): a
        resume continues them. Returns the ids marked. Nothing else needs mending, since
        experiments never change the active index sets (ADR 0038)."""
        ids = [
            *self._repo.experiment_ids_in_state(evaluator_pb2.EXPERIMENT_STATE_RUNNING),
            *self._repo.experiment_ids_in_state(evaluator_pb2.EXPERIMENT_STATE_PENDING),
        ]
        marked = []
        for experiment_id in ids:
            lease = self._leases.elsewhere(experiment_id)
            if lease is not None:
                log.info("experiment %s runs on evaluator replica %s", experiment_id, lease.replica)
                continue
            self._leases.release(experiment_id)
            self._mark_interrupted(experiment_id, "interrupted: the evaluator restarted mid-run")
            log.warning("experiment %s was interrupted by a restart", experiment_id)
            marked.append(experiment_id)
        return marked

    def _mark_interrupted(self, experiment_id: str, why: str) -> evaluator_pb2.Experiment:
        """Stores an experiment no runner holds as interrupted, saying why: Resume continues it."""
        experiment = self._repo.experiment(experiment_id)
        experiment.state = evaluator_pb2.EXPERIMENT_STATE_INTERRUPTED
        experiment.error = f"{why}; finished questions are kept, {RESUME_HINT}"
        experiment.finished_at.CopyFrom(to_proto(utcnow()))
        summarize(experiment, self._repo.results(experiment_id))
        self._repo.save_experiment(experiment)
        return experiment

    def _stop_leased(self, experiment_id: str, why: str) -> None:
        """The renewer's word on an experiment running here: cancelled elsewhere, or its lease lost."""
        if why == "lost":
            log.error(
                "experiment %s: replica %s lost its lease (the database was out of reach for longer "
                "than the lease); stopping it so that it does not run twice",
                experiment_id,
                self._leases.replica,
            )
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

    # -- RPCs ---------------------------------------------------------------

    def run(
        self, request: evaluator_pb2.RunExperimentRequest, cancelled: threading.Event | None = None
    ) -> Iterator[evaluator_pb2.ExperimentEvent]:
        """Plans, estimates and (unless a dry run) queues the experiment, then streams
        its events. `cancelled` (the call ended) stops the planning; a queued
        experiment runs on without its caller (ADR 0027: CancelExperiment stops
        it) and the stream just stops watching it."""
        cancelled = cancelled or threading.Event()
        if request.resume_experiment_id:
            experiment, plan = self._resume_plan(request, cancelled)
        else:
            plan = self._planner.plan(request.config, cancelled)
            experiment = None
        study = setup.prepare(plan, self._deps.peers, self._repo) if plan.config.HasField("study") else None
        yield evaluator_pb2.ExperimentEvent(estimate=self._estimate(plan, study))
        if request.dry_run:
            yield evaluator_pb2.ExperimentEvent(experiment=record.preview(plan))
            return
        if experiment is None:
            experiment = record.new_experiment(plan, self._deps.code_version)
            if study is not None:
                experiment.study.notes.extend(study[1])
            self._repo.add_experiment(experiment)
        self._leases.claim(experiment.experiment_id)  # refused while another replica holds it
        self._renewer.start()
        events: queue.Queue = queue.Queue()
        ended: list[evaluator_pb2.Experiment] = []

        def finished() -> None:  # the stream always ends, once the experiment can be resumed
            events.put(evaluator_pb2.ExperimentEvent(experiment=ended[0] if ended else experiment))

        self._worker.submit(
            experiment.experiment_id,
            lambda: ended.append(self._job(experiment, plan, events, study[0] if study else None)),
            finished,
        )
        yield evaluator_pb2.ExperimentEvent(
            progress=evaluator_pb2.ExperimentProgress(
                experiment_id=experiment.experiment_id,
                questions_total=experiment.questions_total,
                questions_done=experiment.questions_done,
                message="queued",
            )
        )
        while not cancelled.is_set():
            try:
                event = events.get(timeout=WATCH_S)
            except queue.Empty:
                continue  # no event yet: a wait that timed out, not a failure; the loop looks at `cancelled` again
            yield event
            if event.HasField("experiment"):
                return

    def _estimate(
        self, plan: Plan, study: tuple[setup.StudyPlan, list[str]] | None
    ) -> evaluator_pb2.ExperimentEstimate:
        """An experiment's estimate; a study's says its questions, documents, what its space left out,
        and how long one trial takes here (its trials are not known before the search)."""
        if study is None:
            return estimate(plan, self._repo, self._deps.peers)
        found = evaluator_pb2.ExperimentEstimate(
            questions=len(plan.question_set.questions), documents=len(plan.documents), warnings=study[1]
        )
        one = setup.one_evaluation(plan, study[0], self._deps.peers, self._repo)
        if one is not None:
            found.notes.append(f"one trial takes about {one:.0f} s on this machine (the first processes the documents)")
        budget = plan.config.study.budget
        found.notes.append(
            f"budget: {budget.trials or ''}{' trials' if budget.trials else ''}"
            f"{' or ' if budget.trials and budget.seconds else ''}{f'{budget.seconds:.0f} s' if budget.seconds else ''}"
            if budget.trials or budget.seconds
            else f"budget: {setup.DEFAULT_TRIALS} trials"
        )
        return found

    def _job(
        self,
        experiment: evaluator_pb2.Experiment,
        plan: Plan,
        events: queue.Queue,
        study: setup.StudyPlan | None = None,
    ) -> evaluator_pb2.Experiment:
        """One experiment's run on the worker; its progress goes to `events`, and it returns the
        experiment as it ended (the stream's last event, sent once the worker has let it go)."""
        experiment_id = experiment.experiment_id

        def publish(event: evaluator_pb2.ExperimentEvent) -> None:
            if event.HasField("progress"):
                self._worker.progress[experiment_id] = event.progress  # GetExperiment shows it mid-run
            events.put(event)

        try:
            if study is not None:
                final = self._studies.run(experiment, plan, study, publish)
            else:
                final = self._runner.run(experiment, plan, publish)
        except ServiceError as exc:  # its end could not be stored: the stream still ends, saying so
            experiment.state = evaluator_pb2.EXPERIMENT_STATE_FAILED
            experiment.error = (
                f"{experiment.error + '; ' if experiment.error else ''}its end could not be "
                f"stored ({exc.message}); {RESUME_HINT}"
            )
            final = experiment
        finally:
            try:
                self._leases.release(experiment_id)
            except ServiceError as exc:  # e.g. a locked database: the lease runs out by itself
                log.warning("the lease of experiment %s was not released: %s", experiment_id, exc.message)
        return final

    def cancel(self, request: evaluator_pb2.CancelExperimentRequest) -> evaluator_pb2.CancelExperimentResponse:
        experiment_id = request.experiment_id
        if not experiment_id:
            raise InvalidArgument("experiment_id is empty")
        experiment = self._repo.experiment(experiment_id)  # NOT_FOUND for an unknown id
        held = self._worker.cancel(experiment_id) or self._leases.request_cancel(experiment_id) is not None
        if not held and experiment.state in experiment_state.ACTIVE:
            experiment = self._orphan_stopped(experiment_id)
        elif not experiment_state.cancellable(experiment.state, held):
            raise FailedPrecondition(
                f"experiment {experiment_id} is {experiment_state.name(experiment.state, '?')}: "
                "only a queued or running experiment can be cancelled"
            )
        return evaluator_pb2.CancelExperimentResponse(experiment_id=experiment_id, state=experiment.state)

    def _orphan_stopped(self, experiment_id: str) -> evaluator_pb2.Experiment:
        """A Cancel of an experiment stored as queued or running that no runner holds (the
        evaluator that ran it died, or could not store its end): it is stored as interrupted, so
        Resume continues it. The lease is taken meanwhile, so no replica resumes it half-way."""
        self._leases.claim(experiment_id)  # refused, naming the holder, if a replica took it since
        try:
            return self._mark_interrupted(experiment_id, "interrupted: no evaluator was running it any more")
        finally:
            self._leases.release(experiment_id)

    def _resume_plan(
        self, request: evaluator_pb2.RunExperimentRequest, cancelled: threading.Event
    ) -> tuple[evaluator_pb2.Experiment, Plan]:
        experiment_id = request.resume_experiment_id
        experiment = self._repo.experiment(experiment_id)
        if experiment_id in self._worker.active:
            raise FailedPrecondition(f"experiment {experiment_id} is running now; there is nothing to resume")
        self._leases.check_free(experiment_id)  # running on another replica
        # Held by no runner (the two checks above): one stored as queued or running resumes too.
        if not experiment_state.resumable(experiment.state, held=False):
            raise FailedPrecondition(
                f"experiment {experiment_id} is {experiment_state.name(experiment.state, '?')}; "
                f"only {experiment_state.names(experiment_state.STOPPED)} experiments resume"
            )
        plan = self._planner.with_keys(self._planner.plan(experiment.config, cancelled), request.config)
        if plan.question_set.content_hash != experiment.question_set_hash:
            raise FailedPrecondition("the experiment's question set changed since it started; start a new experiment")
        if not plan.config.HasField("study") and [c.run_key for c in plan.cells] != [
            r.run_key for r in experiment.runs
        ]:
            raise FailedPrecondition(
                "the chunker's strategies changed since the experiment started (its runs no longer expand the "
                "same way); start a new experiment"
            )
        return experiment, plan

    def get(self, request: evaluator_pb2.GetExperimentRequest) -> evaluator_pb2.Experiment:
        experiment = self._repo.experiment(request.experiment_id)
        results = self._repo.results(experiment.experiment_id)
        if request.run_key and request.run_key not in {r.run_key for r in experiment.runs}:
            raise NotFound(
                f"experiment {experiment.experiment_id} has no run {limits.excerpt(request.run_key)!r}; its runs are "
                f"{limits.excerpt(', '.join(r.run_key for r in experiment.runs) or 'none yet', 400)}"
            )
        summarize(experiment, results)
        latest = self._worker.progress.get(experiment.experiment_id)
        if latest is not None and experiment.state in experiment_state.ACTIVE:
            experiment.progress.CopyFrom(latest)
        if not request.without_results:
            experiment.results.extend(r for r in results if not request.run_key or r.run_key == request.run_key)
        return experiment

    def list(self, request) -> evaluator_pb2.ListExperimentsResponse:
        experiments, token = self._repo.list_experiments(request.page_size, request.page_token)
        return evaluator_pb2.ListExperimentsResponse(experiments=experiments, next_page_token=token)
