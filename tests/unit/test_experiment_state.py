"""An experiment's states have one owner (chunklab.experiment_state, ADR 0078): the UI, the
command line and the evaluator name them, and accept Resume and Cancel, alike for every
value of the contract's enum."""

from __future__ import annotations

import gradio as gr
import pytest

from chunklab import experiment_state
from chunklab.errors import FailedPrecondition
from chunklab.v1 import evaluator_pb2
from chunklab_app.cli import terminal
from frontend.pages.experiments.detail import action_updates
from frontend.views import experiments_html
from services.evaluator.experiments.service import ExperimentService
from services.evaluator.reports import report_technical

STATES = [v.number for v in evaluator_pb2.ExperimentState.DESCRIPTOR.values if v.number]


class Accepted(Exception):
    """The evaluator went past its state check (to plan the resume)."""


class Repo:
    def __init__(self, state: int):
        self.state = state

    def experiment(self, experiment_id: str) -> evaluator_pb2.Experiment:
        return evaluator_pb2.Experiment(experiment_id=experiment_id, state=self.state)

    def results(self, experiment_id: str) -> list:
        return []

    def save_experiment(self, experiment: evaluator_pb2.Experiment) -> None:
        self.state = experiment.state


class Worker:
    """A worker running `held` ids."""

    def __init__(self, held: bool):
        self.active = {"e1"} if held else set()

    def cancel(self, experiment_id: str) -> bool:
        return experiment_id in self.active


class Leases:
    def check_free(self, experiment_id: str) -> None:
        pass

    def request_cancel(self, experiment_id: str):
        return None

    def claim(self, experiment_id: str) -> None:
        pass

    def release(self, experiment_id: str) -> None:
        pass


class Planner:
    def plan(self, *_):
        return None

    def with_keys(self, *_):
        raise Accepted


def evaluator(state: int, held: bool) -> ExperimentService:
    service = ExperimentService.__new__(ExperimentService)
    service._repo, service._worker, service._leases, service._planner = Repo(state), Worker(held), Leases(), Planner()
    return service


def evaluator_resumes(state: int) -> bool:
    """Whether the evaluator resumes an experiment stored in `state` that nothing runs."""
    request = evaluator_pb2.RunExperimentRequest(resume_experiment_id="e1")
    try:
        evaluator(state, held=False)._resume_plan(request, None)
    except Accepted:
        return True
    except FailedPrecondition:
        return False
    raise AssertionError("the resume neither planned nor was refused")


def evaluator_cancels(state: int, held: bool) -> bool:
    try:
        evaluator(state, held).cancel(evaluator_pb2.CancelExperimentRequest(experiment_id="e1"))
    except FailedPrecondition:
        return False
    return True


@pytest.mark.parametrize("state", STATES, ids=experiment_state.name)
def test_the_ui_offers_resume_and_cancel_where_the_evaluator_accepts_them(state):
    # The UI knows the stored state only: queued or running means a runner holds it.
    held = state in experiment_state.ACTIVE
    resume, cancel = action_updates(state)
    assert resume == gr.update(interactive=experiment_state.resumable(state))
    assert cancel == gr.update(interactive=experiment_state.cancellable(state))
    assert experiment_state.resumable(state) == (evaluator_resumes(state) and not held)
    assert experiment_state.cancellable(state) == evaluator_cancels(state, held)


@pytest.mark.parametrize("state", STATES, ids=experiment_state.name)
def test_one_that_nothing_runs_resumes_whatever_its_stored_state_unless_it_ended(state):
    """A queued or running experiment whose evaluator died (or could not store its end)
    resumes, and Cancel stores it interrupted; a succeeded one never resumes; a held one is
    cancelled, not resumed."""
    assert experiment_state.resumable(state, held=False) == evaluator_resumes(state)
    assert evaluator_resumes(state) == (state != evaluator_pb2.EXPERIMENT_STATE_SUCCEEDED)
    assert not experiment_state.resumable(state, held=True)
    assert experiment_state.cancellable(state, held=True) and evaluator_cancels(state, held=True)
    orphan = state in experiment_state.ACTIVE
    assert experiment_state.cancellable(state, held=False) == evaluator_cancels(state, held=False) == orphan


@pytest.mark.parametrize("state", STATES, ids=experiment_state.name)
def test_the_ui_the_command_line_and_the_reports_name_a_state_alike(state):
    name = evaluator_pb2.ExperimentState.Name(state).removeprefix("EXPERIMENT_STATE_").lower()
    experiment = evaluator_pb2.Experiment(experiment_id="e1", state=state)
    assert experiments_html.state_name(experiment) == name
    assert experiment_state.name(state) == name
    assert report_technical.experiment_state.name(state, "?") == name
    assert terminal.experiment_state.name(state, "?") == name


def test_a_state_outside_the_enum_is_unknown_and_the_refusals_name_the_stopped_states():
    assert experiment_state.name(0) == "unknown"
    assert experiment_state.name(99, "?") == "?"
    assert experiment_state.names(experiment_state.STOPPED) == "interrupted, failed or partial"
    assert not experiment_state.resumable(0) and not experiment_state.cancellable(0)


def run(key: str, done: int = 4, failed: int = 0, error: str = "", total: int = 4) -> evaluator_pb2.ExperimentRun:
    first = "retrieval failed: the index set is being rebuilt" if failed else ""
    return evaluator_pb2.ExperimentRun(
        run_key=key,
        questions_done=done,
        questions_total=total,
        questions_failed=failed,
        question_error=first,
        error=error,
    )


def test_an_experiment_that_ran_to_its_end_is_succeeded_partial_or_failed_by_its_runs():
    """ADR 0087: every run answered every question: succeeded; some runs (or questions) failed:
    partial, naming each with its reason; no run has a result: failed."""
    ended = experiment_state.ended
    assert ended([run("a"), run("b")]) == (evaluator_pb2.EXPERIMENT_STATE_SUCCEEDED, "")
    state, error = ended([run("a"), run("b", done=0, error="b could not process x.md: no LLM")])
    assert state == evaluator_pb2.EXPERIMENT_STATE_PARTIAL
    assert error == "1 of 2 runs did not finish every question: b: b could not process x.md: no LLM"
    state, error = ended([run("a"), run("b", failed=1)])
    assert state == evaluator_pb2.EXPERIMENT_STATE_PARTIAL
    assert error.endswith("b: 1 of 4 questions failed (the first: retrieval failed: the index set is being rebuilt)")
    state, error = ended([run("a", done=0, error="no LLM"), run("b", failed=4)])  # every question of b failed
    assert state == evaluator_pb2.EXPERIMENT_STATE_FAILED
    assert error.startswith("every run failed: a: no LLM; b: 4 of 4 questions failed")
    assert ended([run("a", done=3)])[0] == evaluator_pb2.EXPERIMENT_STATE_PARTIAL  # one question never asked


def test_a_partial_experiment_has_ended_and_resumes_while_an_interrupted_one_has_not_ended():
    partial, interrupted = evaluator_pb2.EXPERIMENT_STATE_PARTIAL, evaluator_pb2.EXPERIMENT_STATE_INTERRUPTED
    assert partial in experiment_state.ENDED and evaluator_pb2.EXPERIMENT_STATE_SUCCEEDED in experiment_state.ENDED
    assert (
        interrupted not in experiment_state.ENDED
        and evaluator_pb2.EXPERIMENT_STATE_FAILED not in experiment_state.ENDED
    )
    assert experiment_state.resumable(partial) and not experiment_state.cancellable(partial)
    assert experiment_state.resumable(interrupted)  # a cancelled one is interrupted: Resume continues it
    assert experiment_state.failure(run("a")) == "" and not experiment_state.incomplete_run(run("a"))
