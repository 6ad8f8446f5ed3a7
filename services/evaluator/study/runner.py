"""A study from start (or resume) to its end state, as experiments/run.py takes an experiment:
running, then succeeded, interrupted (cancelled or stopped: resume continues it from its stored
trials) or failed, saying why."""

from __future__ import annotations

import logging
import threading
from collections.abc import Collection

from chunklab.errors import ServiceError, logged
from chunklab.timeutil import to_proto, utcnow
from chunklab.v1 import evaluator_pb2 as pb
from services.evaluator.deps import RunnerDeps
from services.evaluator.experiments.ask import Asker, Interrupted
from services.evaluator.experiments.index_sets import IndexSets
from services.evaluator.experiments.plan import Plan
from services.evaluator.experiments.run import RESUME_HINT, Publish
from services.evaluator.experiments.summary import summarize
from services.evaluator.study.search import Search
from services.evaluator.study.setup import StudyPlan

log = logging.getLogger("chunklab.evaluator")


class StudyRunner:
    def __init__(self, deps: RunnerDeps, cancelled: Collection[str], stopping: threading.Event) -> None:
        self._deps = deps
        self._cancelled = cancelled
        self._stopping = stopping
        self._sets = IndexSets(deps.peers)
        self._asker = Asker(deps, stopping)

    def run(self, experiment: pb.Experiment, plan: Plan, study: StudyPlan, publish: Publish) -> pb.Experiment:
        repo = self._deps.repository
        experiment.state = pb.EXPERIMENT_STATE_RUNNING
        experiment.error = ""
        experiment.ClearField("finished_at")
        experiment.study.finished = False
        repo.save_experiment(experiment)
        search = Search(self._deps, self._sets, self._asker, experiment, plan, study)

        def check_stop() -> None:
            if self._stopping.is_set():
                raise Interrupted()
            if experiment.experiment_id in self._cancelled:
                raise Interrupted(cancelled=True)

        try:
            search.run(publish, check_stop)
            experiment.state = pb.EXPERIMENT_STATE_SUCCEEDED
        except Interrupted as stop:
            experiment.state = pb.EXPERIMENT_STATE_INTERRUPTED
            why = "cancelled on request" if stop.cancelled else "interrupted: the evaluator stopped"
            experiment.error = f"{why}; its finished trials are kept, {RESUME_HINT}"
        except ServiceError as exc:
            experiment.state = pb.EXPERIMENT_STATE_FAILED
            experiment.error = f"{exc.message}; {RESUME_HINT}"
        except Exception:  # the study must end in a state, whatever happened
            incident = logged(log, f"study {experiment.experiment_id} failed")
            experiment.state = pb.EXPERIMENT_STATE_FAILED
            experiment.error = (
                f"the study stopped on an internal error (incident {incident}); the evaluator's log has "
                f"the details; {RESUME_HINT}"
            )
        search.update() if not experiment.study.finished else None
        experiment.finished_at.CopyFrom(to_proto(utcnow()))
        summarize(experiment, repo.results(experiment.experiment_id))
        repo.save_experiment(experiment)
        return experiment
