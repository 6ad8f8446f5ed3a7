"""Two replicas of the chunker and of the evaluator behind one client (ADR 0065).

Beside the session stack's chunker a second chunker process runs, and two
evaluator processes share one database. One client, given both addresses of
each (an `ipv4:` list), spreads its calls round robin: every reply names its
replica (`chunklab-replica` metadata), and both replicas answer. When one
replica is killed the same client goes on, served by the other. An experiment
runs on one evaluator replica under a lease: the other refuses to resume it,
naming the holder; once the holder is killed and its lease has run out, a
resume through the same client continues it, asking each unfinished question once.
"""

from __future__ import annotations

import socket
import time
from collections import Counter

import grpc
import pytest

from chunklab.client import ChunkLab, ClientError
from chunklab.rpc import channels, replicas
from chunklab.v1 import chunker_pb2, evaluator_pb2
from chunklab_app.stack import wait_serving
from tests.support.fake_openai import FakeOpenAI
from tests.support.rivers import DOCUMENT, QUESTIONS, asked, rivers_experiment, run_until_the_third_answer

pytestmark = pytest.mark.e2e

LEASE_S = 2


@pytest.fixture(scope="module")
def replica_set(stack, tmp_path_factory):
    """name -> address of the replicas this module starts (the stack's chunker is chunker-1)."""
    evaluator_data = tmp_path_factory.mktemp("evaluators")
    started = {"chunker-1": stack.addresses["chunker"]}
    spawned = []
    try:
        for name, module, extra in (
            (
                "chunker-2",
                "services.chunker",
                {"CHUNKLAB_CHUNKER_ADDRESS": "127.0.0.1:0", "CHUNKLAB_BULK_WORKERS": "0"},
            ),
            *(
                (
                    f"evaluator-{i}",
                    "services.evaluator",
                    {
                        "CHUNKLAB_EVALUATOR_ADDRESS": "127.0.0.1:0",
                        "CHUNKLAB_DATA_DIR": str(evaluator_data),
                        "CHUNKLAB_EXPERIMENT_LEASE_S": str(LEASE_S),
                        "CHUNKLAB_LLM_TIMEOUT_S": "300",
                    },
                )
                for i in (1, 2)
            ),
        ):
            env = stack.env()
            env.update(extra, CHUNKLAB_REPLICA_NAME=name)
            spawned.append(name)
            started[name] = stack._spawn(f"replica-{name}", module, env, "listening on", 120)
            wait_serving(started[name], 120)
        yield started
    finally:
        for name in spawned:
            process = stack.processes.pop(f"replica-{name}", None)
            if process is not None and process.poll() is None:
                process.kill()
                process.wait(timeout=30)


def kill(stack, name: str) -> None:
    process = stack.processes[f"replica-{name}"]
    process.kill()
    process.wait(timeout=30)


def landed(call, request, times: int) -> Counter:
    """Which replica answered each of `times` calls."""
    counts: Counter = Counter()
    for _ in range(times):
        _, answered = call.with_call(request, timeout=30)
        counts[replicas.replica_of(answered)] += 1
    return counts


def test_one_client_spreads_its_calls_over_both_replicas_and_the_survivor_serves_it_alone(stack, replica_set):
    chunker_1 = f"{socket.gethostname()}:{stack.processes['chunker'].pid}"  # the stack's own: host:pid
    chunker = channels.chunker(f"{replica_set['chunker-1']},{replica_set['chunker-2']}")
    evaluator = channels.evaluator(f"{replica_set['evaluator-1']},{replica_set['evaluator-2']}")
    strategies = landed(chunker.ListStrategies, chunker_pb2.ListStrategiesRequest(), 20)
    assert set(strategies) == {chunker_1, "chunker-2"} and sum(strategies.values()) == 20, strategies
    sets = landed(evaluator.ListQuestionSets, evaluator_pb2.ListQuestionSetsRequest(), 20)
    assert set(sets) == {"evaluator-1", "evaluator-2"} and sum(sets.values()) == 20, sets

    kill(stack, "chunker-2")
    after = landed(chunker.ListStrategies, chunker_pb2.ListStrategiesRequest(), 10)
    assert after == Counter({chunker_1: 10})  # none failed: a call that met the dead one was retried


def test_an_experiment_runs_once_the_other_replica_refuses_it_and_resumes_it_after_the_holder_died(stack, replica_set):
    lab = stack.client()
    document = lab.upload_document(DOCUMENT.encode(), name="rivers.md", collection="replica-test").document
    both = ChunkLab.at({"evaluator": f"{replica_set['evaluator-1']},{replica_set['evaluator-2']}"})
    first = ChunkLab.at({"evaluator": replica_set["evaluator-1"]})
    second = ChunkLab.at({"evaluator": replica_set["evaluator-2"]})
    with FakeOpenAI() as fake:
        config = rivers_experiment(replica_set["evaluator-1"], fake, document.document_id, "one runner")
        stream, experiment_id = run_until_the_third_answer(first, config, fake)  # on evaluator-1

        with pytest.raises(ClientError) as refused:
            list(second.resume_experiment(experiment_id))
        assert refused.value.code == grpc.StatusCode.FAILED_PRECONDITION
        assert (
            f"experiment {experiment_id} is being run by evaluator replica evaluator-1, which holds its lease"
            in refused.value.details
        )
        with pytest.raises(ClientError) as running_here:  # nor does evaluator-1 start it twice
            list(first.resume_experiment(experiment_id))
        assert "is running now" in running_here.value.details

        kill(stack, "evaluator-1")
        stream.close()
        assert [asked(c) for c in fake.calls] == QUESTIONS[:3]
        fake.calls.clear()
        fake.behaviour = "good"
        while True:  # the same client, both addresses: evaluator-2 serves it, once the lease ran out
            try:
                events = list(both.resume_experiment(experiment_id))
                break
            except ClientError as exc:
                assert exc.code == grpc.StatusCode.FAILED_PRECONDITION and "evaluator-1" in exc.details, exc.details
                time.sleep(0.2)
        done = events[-1].experiment
        assert done.state == evaluator_pb2.EXPERIMENT_STATE_SUCCEEDED, done.error
        assert [asked(c) for c in fake.calls] == QUESTIONS[2:]  # each unfinished question asked once
        with pytest.raises(ClientError) as again:
            list(both.resume_experiment(experiment_id))
        assert again.value.code == grpc.StatusCode.FAILED_PRECONDITION and "succeeded" in again.value.details
        final = channels.evaluator(replica_set["evaluator-2"]).GetExperiment(
            evaluator_pb2.GetExperimentRequest(experiment_id=experiment_id), timeout=30
        )
        assert sorted(r.question for r in final.results) == sorted(QUESTIONS)
        assert final.runs[0].questions_done == 5 and final.runs[0].usage.llm_calls == 5
