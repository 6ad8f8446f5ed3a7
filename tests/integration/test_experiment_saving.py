"""Retrieval-only questions are saved a few at a time (ADR 0121), and none that was asked is lost:
an experiment cancelled while the retriever holds its fourth question keeps the first three, in
the order they were asked, and Resume asks only the rest.

The evaluator runs in this process behind a real gRPC server; its peers are faked."""

from __future__ import annotations

import threading

import pytest

from chunklab.v1 import common_pb2, evaluator_pb2, retriever_pb2
from tests.support.evaluator_server import FakePeers, serve_evaluator
from tests.support.waiting import WAIT_S

DEADLINE_S = 60.0
QUESTIONS = tuple(f"Which river is number {n}?" for n in range(1, 7))


class HoldingPeers(FakePeers):
    """The retriever answers at once, except the question in `hold`, which waits for `go`."""

    def __init__(self) -> None:
        super().__init__()
        self.hold = ""
        self.held = threading.Event()
        self.go = threading.Event()
        self.asked: list[str] = []

    def indexed_set(self, model, document_id, strategy, config_id):
        return retriever_pb2.IndexedSet(
            embedding_model=model, document_id=document_id, strategy=strategy, config_id=config_id, points=1
        )

    def retrieve(self, request):
        self.asked.append(request.query)
        if request.query == self.hold:
            self.held.set()
            self.go.wait(WAIT_S)
        return super().retrieve(request)


@pytest.fixture
def peers():
    return HoldingPeers()


@pytest.fixture
def evaluator(tmp_path, peers):
    with serve_evaluator(peers, f"sqlite:///{tmp_path / 'evaluator.db'}", DEADLINE_S) as stub:
        yield stub


def test_a_cancelled_retrieval_only_experiment_keeps_every_question_it_asked(evaluator, peers):
    question_set = evaluator.CreateQuestionSet(
        evaluator_pb2.CreateQuestionSetRequest(
            name="rivers", questions=[evaluator_pb2.Question(text=q) for q in QUESTIONS]
        ),
        timeout=DEADLINE_S,
    )
    config = evaluator_pb2.ExperimentConfig(
        question_set_id=question_set.question_set_id,
        strategies=[evaluator_pb2.StrategyGrid(strategy="fixed_size")],
        retrieval=common_pb2.RetrievalOptions(filter=common_pb2.RetrievalFilter(document_ids=["d-1"])),
        retrieval_only=True,
    )
    peers.hold = QUESTIONS[3]
    stream = evaluator.RunExperiment(evaluator_pb2.RunExperimentRequest(config=config), timeout=DEADLINE_S)
    experiment_id = next(e.progress.experiment_id for e in stream if e.progress.experiment_id)
    assert peers.held.wait(WAIT_S)
    evaluator.CancelExperiment(evaluator_pb2.CancelExperimentRequest(experiment_id=experiment_id), timeout=DEADLINE_S)
    peers.go.set()
    last = list(stream)[-1].experiment
    assert last.state == evaluator_pb2.EXPERIMENT_STATE_INTERRUPTED

    stored = evaluator.GetExperiment(evaluator_pb2.GetExperimentRequest(experiment_id=experiment_id), timeout=30)
    asked = [r.question for r in stored.results]
    assert asked == list(QUESTIONS[: len(asked)]) and len(asked) >= 3  # the three before the held one, at least
    assert stored.questions_done == len(asked) and stored.runs[0].questions_done == len(asked)

    peers.asked.clear()
    resumed = list(evaluator.RunExperiment(evaluator_pb2.RunExperimentRequest(resume_experiment_id=experiment_id)))
    done = resumed[-1].experiment
    assert done.state == evaluator_pb2.EXPERIMENT_STATE_SUCCEEDED, done.error
    assert peers.asked == list(QUESTIONS[len(asked) :])  # the saved ones were not asked again
    final = evaluator.GetExperiment(evaluator_pb2.GetExperimentRequest(experiment_id=experiment_id), timeout=30)
    assert sorted(r.question for r in final.results) == sorted(QUESTIONS)
