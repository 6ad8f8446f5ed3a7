"""An experiment whose runs went to their end says what happened (issue 27, item 4; ADR 0087):
succeeded when every run answered every question, partial when some runs (or some of their
questions) failed, each naming its reason, failed when no run has a result; Resume retries
a partial experiment's failed runs and questions, and nothing else.

And its dry run (ADR 0088) warns about the runs that cannot run before anything starts, and
estimates a time that grows with the work.

The evaluator runs in this process behind a real gRPC server; its peers are faked: a
strategy can be made to fail to process, a question to be refused by the retriever."""

from __future__ import annotations

import grpc
import pytest

from chunklab import experiment_state
from chunklab.errors import FailedPrecondition
from chunklab.v1 import chunker_pb2, common_pb2, evaluator_pb2, retriever_pb2
from tests.support.evaluator_server import FakePeers, serve_evaluator
from tests.support.status import status_of

DEADLINE_S = 60.0
QUESTIONS = ("What is chunking?", "Why chunk?", "How big is a chunk?")
SEMANTIC_FAILS = "semantic could not process d-1.md: the document has no sentences to compare"


class FlakyPeers(FakePeers):
    """Documents indexed with fixed_size only; other strategies are processed, and fail while
    their name is in `failing`; a question in `refused` is refused by the retriever."""

    def __init__(self) -> None:
        super().__init__()
        self.failing: set[str] = set()
        self.refused: set[str] = set()
        self.processed: list[str] = []
        self.llm = ""

    def indexed_set(self, model, document_id, strategy, config_id):
        if strategy != "fixed_size" and strategy not in self.processed:
            return None
        return retriever_pb2.IndexedSet(
            embedding_model=model, document_id=document_id, strategy=strategy, config_id=config_id, points=1
        )

    def chunker_llm(self) -> str:
        return self.llm

    def get_document(self, document_id, full=False):
        document = super().get_document(document_id, full)
        document.character_count = 40_000
        return document

    def process(self, document_id, spec, embedding_model):
        if spec.name in self.failing:
            failure = chunker_pb2.StrategyFailure(strategy=spec.name, reason="the document has no sentences to compare")
            yield chunker_pb2.ProcessDocumentEvent(
                result=chunker_pb2.ProcessDocumentResult(strategies_failed=[failure])
            )
            return
        self.processed.append(spec.name)
        outcome = chunker_pb2.StrategyOutcome(strategy=spec.name, chunk_count=3, seconds=0.5)
        yield chunker_pb2.ProcessDocumentEvent(result=chunker_pb2.ProcessDocumentResult(strategies_completed=[outcome]))

    def retrieve(self, request):
        if request.query in self.refused:
            raise FailedPrecondition("the index set is being rebuilt")
        return super().retrieve(request)


@pytest.fixture
def peers():
    return FlakyPeers()


@pytest.fixture
def evaluator(tmp_path, peers):
    with serve_evaluator(peers, f"sqlite:///{tmp_path / 'evaluator.db'}", DEADLINE_S) as stub:
        yield stub


def config(
    stub, strategies=("fixed_size", "semantic"), questions=QUESTIONS, **fields
) -> evaluator_pb2.ExperimentConfig:
    question_set = stub.CreateQuestionSet(
        evaluator_pb2.CreateQuestionSetRequest(
            name="chunking", questions=[evaluator_pb2.Question(text=q) for q in questions]
        ),
        timeout=DEADLINE_S,
    )
    return evaluator_pb2.ExperimentConfig(
        question_set_id=question_set.question_set_id,
        strategies=[evaluator_pb2.StrategyGrid(strategy=s) for s in strategies],
        retrieval=common_pb2.RetrievalOptions(filter=common_pb2.RetrievalFilter(document_ids=["d-1"])),
        **({"retrieval_only": True} | fields),
    )


def run(stub, request: evaluator_pb2.RunExperimentRequest) -> list[evaluator_pb2.ExperimentEvent]:
    return list(stub.RunExperiment(request, timeout=DEADLINE_S))


def finished(stub, request) -> evaluator_pb2.Experiment:
    done = run(stub, request)[-1].experiment
    return stub.GetExperiment(evaluator_pb2.GetExperimentRequest(experiment_id=done.experiment_id), timeout=DEADLINE_S)


def runs(experiment) -> dict[str, tuple[str, int, int]]:
    return {r.spec.name: (r.error, r.questions_done, r.questions_failed) for r in experiment.runs}


def test_a_failed_run_makes_the_experiment_partial_and_resume_retries_it(evaluator, peers):
    peers.failing = {"semantic"}
    done = finished(evaluator, evaluator_pb2.RunExperimentRequest(config=config(evaluator)))
    assert done.state == evaluator_pb2.EXPERIMENT_STATE_PARTIAL
    assert experiment_state.name(done.state) == "partial"
    assert runs(done) == {"fixed_size": ("", 3, 0), "semantic": (SEMANTIC_FAILS, 0, 0)}
    semantic_key = done.runs[1].run_key
    assert done.error == f"1 of 2 runs did not finish every question: {semantic_key}: {SEMANTIC_FAILS}"
    assert {r.run_key for r in done.results} == {done.runs[0].run_key}  # the finished run's results are kept
    assert experiment_state.resumable(done.state)

    peers.failing = set()  # the cause is fixed: Resume retries the failed run, and only it
    again = finished(evaluator, evaluator_pb2.RunExperimentRequest(resume_experiment_id=done.experiment_id))
    assert again.state == evaluator_pb2.EXPERIMENT_STATE_SUCCEEDED, again.error
    assert again.error == "" and runs(again) == {"fixed_size": ("", 3, 0), "semantic": ("", 3, 0)}
    assert peers.processed == ["semantic"] and len(again.results) == 6


def test_failed_questions_make_it_partial_each_run_saying_how_many_and_resume_asks_them_again(evaluator, peers):
    peers.refused = {"Why chunk?"}
    done = finished(evaluator, evaluator_pb2.RunExperimentRequest(config=config(evaluator, ("fixed_size",))))
    assert done.state == evaluator_pb2.EXPERIMENT_STATE_PARTIAL
    (only,) = done.runs
    reason = "retrieval failed: the index set is being rebuilt"
    assert (only.questions_done, only.questions_failed, only.question_error) == (3, 1, reason)
    assert experiment_state.failure(only) == f"1 of 3 questions failed (the first: {reason})"
    assert done.error == f"1 of 1 runs did not finish every question: {only.run_key}: 1 of 3 questions failed " + (
        f"(the first: {reason})"
    )

    peers.refused = set()
    again = finished(evaluator, evaluator_pb2.RunExperimentRequest(resume_experiment_id=done.experiment_id))
    assert again.state == evaluator_pb2.EXPERIMENT_STATE_SUCCEEDED, again.error
    assert sorted(r.question for r in again.results) == sorted(QUESTIONS)  # each asked once more, none twice
    assert not any(r.error for r in again.results)


def test_an_experiment_whose_every_run_failed_is_failed(evaluator, peers):
    peers.failing = {"semantic", "recursive"}
    done = finished(evaluator, evaluator_pb2.RunExperimentRequest(config=config(evaluator, ("semantic", "recursive"))))
    assert done.state == evaluator_pb2.EXPERIMENT_STATE_FAILED
    assert done.error.startswith("every run failed: ")
    assert SEMANTIC_FAILS in done.error


def estimate_of(stub, cfg) -> evaluator_pb2.ExperimentEstimate:
    events = run(stub, evaluator_pb2.RunExperimentRequest(config=cfg, dry_run=True))
    return events[0].estimate


def test_the_dry_run_warns_about_runs_that_cannot_run_before_anything_starts(evaluator, peers):
    cfg = config(
        evaluator,
        ("fixed_size", "contextual_retrieval"),
        retrieval_only=False,
        answer_model=evaluator_pb2.ModelEndpoint(model="gpt-4o-mini"),
        judge_model=evaluator_pb2.ModelEndpoint(model="judge-model"),
    )
    estimate = estimate_of(evaluator, cfg)
    contextual = [w for w in estimate.warnings if w.startswith("contextual_retrieval")]
    assert len(contextual) == 1 and "needs an LLM to chunk, and the chunker has no LLM endpoint" in contextual[0]
    assert "CHUNKLAB_LLM_BASE_URL" in contextual[0]
    assert any(w.startswith("the answer model 'gpt-4o-mini' has no endpoint") for w in estimate.warnings)
    assert any("judge scores would not be measured" in w for w in estimate.warnings)
    assert (estimate.index_sets_to_process, estimate.index_sets_reused) == (1, 1)
    assert (
        peers.processed == []
        and evaluator.ListExperiments(evaluator_pb2.ListExperimentsRequest(), timeout=DEADLINE_S).experiments == []
    )  # nothing ran, nothing was stored

    peers.llm = "model-x at http://llm.local/v1"  # the chunker has an LLM: the strategy can run
    assert not [w for w in estimate_of(evaluator, cfg).warnings if w.startswith("contextual_retrieval")]


def test_the_estimated_time_is_split_and_grows_with_the_work(evaluator, peers):
    small = estimate_of(evaluator, config(evaluator, ("semantic",), questions=QUESTIONS[:1]))
    more_questions = estimate_of(evaluator, config(evaluator, ("semantic",)))
    more_runs = estimate_of(evaluator, config(evaluator, ("semantic", "recursive", "fixed_size")))
    for estimate in (small, more_questions, more_runs):
        assert estimate.HasField("estimated_seconds") and estimate.estimated_seconds > 0
        assert estimate.estimated_seconds == pytest.approx(estimate.processing_seconds + estimate.questions_seconds)
        assert any(n.startswith("time: this machine's speeds") for n in estimate.notes)
    assert more_questions.questions_seconds > small.questions_seconds
    assert more_questions.processing_seconds == pytest.approx(small.processing_seconds)  # the same sets to process
    assert more_runs.estimated_seconds > more_questions.estimated_seconds
    assert (more_runs.index_sets_to_process, more_runs.index_sets_reused) == (2, 1)  # fixed_size is there


def test_an_unknown_run_key_is_not_found_naming_it_and_the_experiments_runs(evaluator, peers):
    done = finished(evaluator, evaluator_pb2.RunExperimentRequest(config=config(evaluator)))
    keys = [r.run_key for r in done.runs]
    one = evaluator.GetExperiment(
        evaluator_pb2.GetExperimentRequest(experiment_id=done.experiment_id, run_key=keys[0]), timeout=DEADLINE_S
    )
    assert {r.run_key for r in one.results} == {keys[0]} and len(one.results) == 3
    code, message = status_of(
        lambda: evaluator.GetExperiment(
            evaluator_pb2.GetExperimentRequest(experiment_id=done.experiment_id, run_key="no-such-run"),
            timeout=DEADLINE_S,
        )
    )
    assert code == grpc.StatusCode.NOT_FOUND
    assert message.startswith(f"experiment {done.experiment_id} has no run 'no-such-run'; its runs are ")
    assert all(key in message for key in keys)
