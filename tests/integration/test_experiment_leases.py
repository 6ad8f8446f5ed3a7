"""Experiment leases in the evaluator's shared database (ADR 0065): two
replicas on one SQLite file, a clock the test moves. One holds the lease, the
other is refused by name; once the holder stops renewing and the lease runs out,
the first claim wins and the second is refused; a start-up leaves another
replica's running experiment alone."""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest
from sqlalchemy import event
from sqlalchemy.orm import Session

from chunklab import experiment_state
from chunklab.db.sessions import make_sessionmaker
from chunklab.errors import FailedPrecondition
from chunklab.timeutil import to_proto, utcnow
from chunklab.v1 import evaluator_pb2
from services.evaluator.leases import Leases, Renewer
from services.evaluator.storage.repository import Repository
from services.evaluator.storage.tables import Base


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def shared(tmp_path):
    """A repository with one running experiment, and each replica's leases over its database."""
    repository = Repository(make_sessionmaker(f"sqlite:///{tmp_path / 'evaluator.sqlite3'}", Base))
    repository.add_experiment(
        evaluator_pb2.Experiment(
            experiment_id="exp-1",
            state=evaluator_pb2.EXPERIMENT_STATE_RUNNING,
            created_at=to_proto(utcnow()),
            config=evaluator_pb2.ExperimentConfig(name="lease me", question_set_id="set-1"),
        )
    )
    clock = Clock()
    replicas = {
        name: Leases(repository.sessions, name, lease_s=30.0, clock=clock) for name in ("evaluator-a", "evaluator-b")
    }
    return repository, clock, replicas


def test_a_live_lease_refuses_the_other_replica_by_name_until_it_runs_out(shared):
    _, clock, replicas = shared
    a, b = replicas["evaluator-a"], replicas["evaluator-b"]
    a.claim("exp-1")
    clock.now += 25
    assert a.renew() == {"exp-1": False}  # renewed: 30 s from now
    clock.now += 25
    for refused in (lambda: b.claim("exp-1"), lambda: b.check_free("exp-1")):
        with pytest.raises(FailedPrecondition) as caught:
            refused()
        assert caught.value.message.startswith(
            "experiment exp-1 is being run by evaluator replica evaluator-a, which holds its lease "
            "(renewed while it runs, 5s left): it cannot be run here too"
        )
    a.check_free("exp-1")  # its own lease does not stop the holder
    assert b.holder("exp-1").replica == "evaluator-a"

    clock.now += 6  # a died at its last renewal: the lease ran out
    assert b.holder("exp-1") is None
    b.claim("exp-1")
    with pytest.raises(FailedPrecondition) as caught:
        a.claim("exp-1")  # the dead replica's comeback, or a second resume: refused
    assert "evaluator replica evaluator-b" in caught.value.message
    assert a.renew() == {} and b.renew() == {"exp-1": False}


def test_a_lease_whose_holder_is_a_gone_process_of_this_machine_is_taken_at_once(shared):
    repository, clock, replicas = shared
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    dead = Leases(repository.sessions, f"{socket.gethostname()}:{ended.pid}", lease_s=30.0, clock=clock)
    dead.claim("exp-1")  # then it was killed: its lease has 30 s left
    b = replicas["evaluator-b"]
    assert b.holder("exp-1") is None
    b.claim("exp-1")
    assert b.holder("exp-1").replica == "evaluator-b"


def test_a_cancel_on_another_replica_reaches_the_holder_at_its_next_renewal(shared):
    _, clock, replicas = shared
    a, b = replicas["evaluator-a"], replicas["evaluator-b"]
    assert b.request_cancel("exp-1") is None  # nobody runs it: nothing to cancel
    a.claim("exp-1")
    assert b.request_cancel("exp-1").replica == "evaluator-a"
    assert a.renew() == {"exp-1": True}
    b.release("exp-1")  # not b's: stays
    assert a.holder("exp-1").replica == "evaluator-a"
    a.release("exp-1")
    assert a.holder("exp-1") is None and b.renew() == {}


def test_the_renewer_renews_only_what_runs_here_so_a_lease_an_ended_experiment_kept_runs_out(shared):
    """An experiment whose end could not release its lease (its database was locked) holds
    it no longer than the lease: the renewer outlives it, but renews only what runs here."""
    _, clock, replicas = shared
    a, b = replicas["evaluator-a"], replicas["evaluator-b"]
    active, stopped = {"exp-1"}, []
    renewer = Renewer(a, lambda: set(active), lambda experiment_id, why: stopped.append((experiment_id, why)))
    a.claim("exp-1")
    clock.now += 20
    renewer.renew_once()
    assert a.holder("exp-1").expires_at == clock.now + 30  # renewed while it runs
    active.clear()  # it ended, and its lease was not released
    clock.now += 20
    renewer.renew_once()
    assert b.holder("exp-1").expires_at == clock.now + 10  # no longer renewed
    clock.now += 11
    renewer.renew_once()
    b.claim("exp-1")  # another replica resumes it once the lease ran out
    assert b.holder("exp-1").replica == "evaluator-b" and stopped == []


def test_a_resume_of_an_experiment_that_kept_its_lease_is_not_refused_by_a_renewal_in_between(shared):
    """Its end could not release the lease (a locked database) and nothing runs here any more: a
    renewal between the resume's claim reading the lease and taking it over made the replica refuse
    itself ("being run by evaluator replica <itself> ... 30s left")."""
    _, clock, replicas = shared
    a = replicas["evaluator-a"]
    renewer = Renewer(a, lambda: set(), lambda experiment_id, why: None)
    a.claim("exp-1")
    armed = [True]

    def renewal_in_between(state) -> None:
        if armed[0] and state.is_update:  # the claim's conditional update, about to run
            armed[0] = False
            clock.now += 1
            renewer.renew_once()

    event.listen(Session, "do_orm_execute", renewal_in_between)
    try:
        a.claim("exp-1")
    finally:
        event.remove(Session, "do_orm_execute", renewal_in_between)
    assert not armed[0] and a.holder("exp-1").replica == "evaluator-a"


def evaluator_on(repository, leases):
    from services.evaluator.deps import RunnerDeps
    from services.evaluator.judging.models import ModelDefaults
    from services.evaluator.service import EvaluatorService

    deps = RunnerDeps(
        repository=repository,
        peers=None,
        provider_for=lambda name: None,
        defaults=ModelDefaults(base_url="", api_key="", model="", timeout_s=1, max_retries=0),
        default_embedding_model="hashed",
        code_version="test",
    )
    return EvaluatorService(deps, 1_000_000, 1 << 20, leases)


def test_a_starting_replica_marks_interrupted_only_what_no_live_replica_holds(shared, tmp_path):
    repository, clock, replicas = shared
    repository.add_experiment(
        evaluator_pb2.Experiment(
            experiment_id="exp-2",
            state=evaluator_pb2.EXPERIMENT_STATE_RUNNING,
            created_at=to_proto(utcnow()),
            config=evaluator_pb2.ExperimentConfig(name="orphan", question_set_id="set-1"),
        )
    )
    replicas["evaluator-a"].claim("exp-1")  # a runs exp-1; exp-2's replica died without a lease left
    starting = evaluator_on(repository, replicas["evaluator-b"])
    assert starting.recover() == ["exp-2"]
    assert repository.experiment("exp-1").state == evaluator_pb2.EXPERIMENT_STATE_RUNNING
    orphan = repository.experiment("exp-2")
    assert orphan.state == evaluator_pb2.EXPERIMENT_STATE_INTERRUPTED and "continue it with Resume" in orphan.error


def test_cancel_of_a_running_experiment_whose_runner_died_stores_it_interrupted_so_resume_continues_it(shared):
    """The Experiments page shows it running, and its runner is gone: Cancel is what a person
    presses, and it must leave the experiment resumable, not refuse "running: only a ... running
    experiment can be cancelled"."""
    repository, clock, replicas = shared
    a = replicas["evaluator-a"]
    b = evaluator_on(repository, replicas["evaluator-b"]).experiments
    a.claim("exp-1")
    cancel = evaluator_pb2.CancelExperimentRequest(experiment_id="exp-1")
    assert b.cancel(cancel).state == evaluator_pb2.EXPERIMENT_STATE_RUNNING  # a runs it: told at its renewal
    assert a.renew() == {"exp-1": True}
    clock.now += 31  # a died: its lease ran out, and the experiment is still stored as running
    answer = b.cancel(cancel)
    stored = repository.experiment("exp-1")
    assert answer.state == stored.state == evaluator_pb2.EXPERIMENT_STATE_INTERRUPTED
    assert "no evaluator was running it" in stored.error and "continue it with Resume" in stored.error
    assert experiment_state.resumable(stored.state)
    assert replicas["evaluator-b"].holder("exp-1") is None  # its lease is not kept: any replica may resume it
    with pytest.raises(FailedPrecondition, match="exp-1 is interrupted: only a queued or running experiment"):
        b.cancel(cancel)


def test_a_question_generation_is_leased_too_so_no_second_replica_runs_it_or_marks_it_interrupted(shared):
    """Two replicas: a writes questions for generation gen-1. b, restarting, leaves it running;
    a resume sent to b is refused naming a. Once a's lease has run out, b's start-up marks the
    generation interrupted, and a resume may take it up."""
    repository, clock, replicas = shared
    repository.save_generation(
        evaluator_pb2.Generation(
            generation_id="gen-1",
            state=evaluator_pb2.GENERATION_STATE_RUNNING,
            created_at=to_proto(utcnow()),
            request=evaluator_pb2.GenerateQuestionSetRequest(document_ids=["d1"], question_count=3),
        )
    )
    a = evaluator_on(repository, replicas["evaluator-a"]).generator
    b = evaluator_on(repository, replicas["evaluator-b"]).generator
    a._leases.claim("gen-1")  # as a's generate() does when it starts
    b.recover()
    assert repository.generation("gen-1").state == evaluator_pb2.GENERATION_STATE_RUNNING
    resume = evaluator_pb2.GenerateQuestionSetRequest(resume_generation_id="gen-1")
    with pytest.raises(FailedPrecondition) as caught:
        next(b.generate(resume))
    assert caught.value.message.startswith("generation gen-1 is being run by evaluator replica evaluator-a")
    clock.now += 31  # a died: its lease ran out
    b.recover()
    stopped = repository.generation("gen-1")
    assert stopped.state == evaluator_pb2.GENERATION_STATE_INTERRUPTED and "resume it" in stopped.error
    assert replicas["evaluator-b"].holder("gen-1") is None
