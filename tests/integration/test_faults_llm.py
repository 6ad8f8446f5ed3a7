"""An LLM endpoint that fails: 429, 500, too slow, garbage, a cut stream
(issue 14, item 6; docs/reliability.md).

The evaluator runs in this process behind a real gRPC server (its peers
faked: one retrieved chunk, documents indexed already); its models are the
fake OpenAI server over real HTTP. Answers retry what the openai client
retries (429, 5xx, timeouts: CHUNKLAB_LLM_MAX_RETRIES, 1 here) and then fail
with a sentence naming the endpoint; judges retry any failure or unusable
reply themselves and then record "not measured" with the last problem. An
experiment counts every question, failed or not (some failed: it is partial), and its stream ends.

Its other peers fail too (issue 26, item 5): only a retriever's NOT_FOUND means a
document has no index set of a configuration; a retriever out of reach stops the
experiment, saying so, and nothing is processed again; an unexpected error
reaches the client as a sentence with an incident id, its text only in the log."""

from __future__ import annotations

import json
import logging
from concurrent import futures

import grpc
import pytest

from chunklab.errors import Unavailable
from chunklab.settings import Settings
from chunklab.v1 import common_pb2, evaluator_pb2, retriever_pb2, retriever_pb2_grpc
from services.evaluator.judging import judge
from services.evaluator.peers import GrpcPeers
from tests.support.evaluator_server import FakePeers, serve_evaluator
from tests.support.fake_openai import FakeOpenAI

ANSWER = "Chunking cuts documents into pieces that fit the model"
CUT = "Chunking cuts documents into"  # what a truncated stream sends: the first half of the words
UNFINISHED = "without saying it was finished (the connection was cut, or the endpoint does not stream chat completions)"
TIMEOUT_S = 1.0
DEADLINE_S = 60.0  # every call the test makes ends before this, or the test fails


class IndexedPeers(FakePeers):
    """FakePeers whose documents are indexed with every configuration already."""

    def indexed_set(self, model, document_id, strategy, config_id):
        return retriever_pb2.IndexedSet(
            embedding_model=model, document_id=document_id, strategy=strategy, config_id=config_id, points=1
        )


@pytest.fixture
def models():
    with FakeOpenAI() as answers, FakeOpenAI() as judges:
        answers.responder = lambda messages, model: ANSWER
        answers.delay_s = 5 * TIMEOUT_S
        yield answers, judges


@pytest.fixture
def evaluator(tmp_path):
    with serve_evaluator(
        IndexedPeers(),
        f"sqlite:///{tmp_path / 'evaluator.sqlite3'}",
        TIMEOUT_S,
        max_retries=1,
        judge_attempts=3,
        judge_backoff_s=0.01,
    ) as stub:
        yield stub


def answer(stub, fake: FakeOpenAI) -> tuple[list[evaluator_pb2.AnswerEvent], grpc.RpcError | None]:
    events: list[evaluator_pb2.AnswerEvent] = []
    request = evaluator_pb2.AnswerRequest(
        question="What is chunking?",
        retrieval=common_pb2.RetrievalOptions(strategy="fixed_size"),
        answer_model=evaluator_pb2.ModelEndpoint(base_url=fake.base_url, model="fake"),
    )
    try:
        for event in stub.Answer(request, timeout=DEADLINE_S):
            events.append(event)
    except grpc.RpcError as exc:
        return events, exc
    return events, None


def test_an_answer_retries_a_rate_limit_and_a_crash_once_then_succeeds(evaluator, models):
    fake, _ = models
    for failure in ("rate_limit", "error"):
        fake.calls.clear()
        fake.script = [failure, "good"]
        events, error = answer(evaluator, fake)
        assert error is None and events[-1].result.answer == ANSWER
        assert [c["behaviour"] for c in fake.calls] == [failure, "good"]


@pytest.mark.parametrize(
    "behaviour, calls, problem",
    [
        ("rate_limit", 2, "refused: rate limited after 1 retries"),
        ("error", 2, "answered HTTP 500 (an error on its side); its reply is in the service log"),
        ("slow", 2, f"did not answer within {TIMEOUT_S:g}s"),
        (
            "truncated",
            1,
            f"stopped before the end of its reply: the stream ended after {len(CUT)} characters {UNFINISHED}",
        ),
        ("garbage", 1, f"stopped before the end of its reply: the stream ended after 0 characters {UNFINISHED}"),
    ],
)
def test_an_answer_the_model_cannot_give_fails_unavailable_in_a_sentence_and_is_not_stored(
    evaluator, models, behaviour, calls, problem
):
    fake, _ = models
    fake.behaviour = behaviour
    events, error = answer(evaluator, fake)
    assert error is not None and error.code() == grpc.StatusCode.UNAVAILABLE
    assert error.details() == f"the answer model failed: the LLM (fake at {fake.base_url}) {problem}"
    assert len(fake.calls) == calls
    assert "".join(e.delta for e in events) == (CUT if behaviour == "truncated" else "")
    (context,) = [e.context for e in events if e.HasField("context")]
    assert not any(e.HasField("result") for e in events)
    with pytest.raises(grpc.RpcError) as unknown:  # an answer nobody got is not a query
        evaluator.SubmitFeedback(
            evaluator_pb2.SubmitFeedbackRequest(query_id=context.query_id, thumbs_up=True), timeout=DEADLINE_S
        )
    assert unknown.value.code() == grpc.StatusCode.NOT_FOUND


def verdicts(messages: list[dict], model: str) -> str:
    """Context relevance gets prose, not JSON; the other judges a valid verdict."""
    prompt = messages[-1]["content"]
    if prompt.startswith("Rate how relevant"):
        return "I would say 8 out of 10."
    if '"hallucination"' in prompt:
        return json.dumps({"hallucination": "no", "reason": "every claim is in the context"})
    return json.dumps({"score": 9, "reason": "supported by the context"})


def test_an_experiment_counts_every_question_and_says_why_each_failed(evaluator, models):
    answers, judges = models
    questions = ["What is chunking?", "Why chunk?", "How big is a chunk?", "Who chunks?"]
    answers.script = [
        "rate_limit",
        "good",  # question 1: answered on the retry
        "error",
        "error",  # question 2: the model crashes twice
        "truncated",  # question 3: the stream is cut
        "slow",
        "slow",
    ]  # question 4: no reply within the timeout, twice
    judges.responder = verdicts
    judges.script = ["rate_limit", "garbage"]  # question 1's context relevance: a 429, then a non-JSON body
    question_set = evaluator.CreateQuestionSet(
        evaluator_pb2.CreateQuestionSetRequest(
            name="chunking", questions=[evaluator_pb2.Question(text=q) for q in questions]
        ),
        timeout=DEADLINE_S,
    )
    config = evaluator_pb2.ExperimentConfig(
        question_set_id=question_set.question_set_id,
        strategies=[evaluator_pb2.StrategyGrid(strategy="fixed_size")],
        retrieval=common_pb2.RetrievalOptions(filter=common_pb2.RetrievalFilter(document_ids=["d-1"])),
        answer_model=evaluator_pb2.ModelEndpoint(base_url=answers.base_url, model="fake"),
        judge_model=evaluator_pb2.ModelEndpoint(base_url=judges.base_url, model="judge"),
    )
    events = list(evaluator.RunExperiment(evaluator_pb2.RunExperimentRequest(config=config), timeout=DEADLINE_S))
    done = events[-1].experiment
    # Three of its questions failed: the experiment is partial, its run saying how many and why (ADR 0087).
    assert done.state == evaluator_pb2.EXPERIMENT_STATE_PARTIAL, done.error
    assert done.questions_done == done.questions_total == 4
    assert done.runs[0].questions_failed == 3 and "3 of 4 questions failed (the first: the answer model" in done.error
    results = evaluator.GetExperiment(
        evaluator_pb2.GetExperimentRequest(experiment_id=done.experiment_id), timeout=DEADLINE_S
    ).results
    where = f"the answer model failed: the LLM (fake at {answers.base_url})"
    assert [(r.question, r.error) for r in results] == [
        ("What is chunking?", ""),
        ("Why chunk?", f"{where} answered HTTP 500 (an error on its side); its reply is in the service log"),
        (
            "How big is a chunk?",
            f"{where} stopped before the end of its reply: the stream ended after {len(CUT)} characters {UNFINISHED}",
        ),
        ("Who chunks?", f"{where} did not answer within {TIMEOUT_S:g}s"),
    ]
    assert results[0].answer == ANSWER and [r.answer for r in results[1:]] == ["", "", ""]
    scores = results[0].judge
    assert not scores.context_relevance.measured
    assert scores.context_relevance.reason == (
        "not measured after 3 attempts: unusable judge reply: not JSON (unreadable at character 0)"
    )
    assert (scores.faithfulness.measured, scores.faithfulness.value) == (True, 9.0)
    assert (scores.hallucination.measured, scores.hallucination.value) == (True, 0.0)
    assert [c["behaviour"] for c in judges.calls[:3]] == ["rate_limit", "garbage", "good"]
    for failed in results[1:]:
        assert {getattr(failed.judge, m).reason for m in judge.MEASURES} == {"no answer to judge"}
        assert failed.usage.llm_calls == 1
    (run,) = done.runs
    assert run.questions_done == 4 and run.mean_judge.faithfulness.reason == "1 of 4 questions measured"


class Retriever(retriever_pb2_grpc.RetrieverServiceServicer):
    """A retriever whose GetIndexedSet answers with `code`."""

    code = grpc.StatusCode.NOT_FOUND

    def GetIndexedSet(self, request, context):
        context.abort(
            self.code,
            "no index set of that configuration"
            if self.code == grpc.StatusCode.NOT_FOUND
            else "the index is being opened",
        )


def test_only_the_retrievers_not_found_means_no_index_set():
    retriever = Retriever()
    server = grpc.server(futures.ThreadPoolExecutor(2))
    retriever_pb2_grpc.add_RetrieverServiceServicer_to_server(retriever, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    peers = GrpcPeers(Settings(retriever_address=f"127.0.0.1:{port}", rpc_timeout_s=2.0))
    key = ("hashed", "d-1", "fixed_size", "c1")
    try:
        assert peers.indexed_set(*key) is None
        retriever.code = grpc.StatusCode.UNAVAILABLE
        with pytest.raises(Unavailable, match=r"^the retriever service is unreachable or too slow"):
            peers.indexed_set(*key)
    finally:
        server.stop(None)
    with pytest.raises(Unavailable, match=r"^the retriever service is unreachable or too slow"):
        peers.indexed_set(*key)  # nothing listens any more


class RetrieverAway(IndexedPeers):
    """Peers whose retriever is out of reach, as GrpcPeers reports it; processing is only counted."""

    def __init__(self) -> None:
        super().__init__()
        self.processed: list[str] = []

    def indexed_set(self, model, document_id, strategy, config_id):
        raise Unavailable(
            "the retriever service is unreachable or too slow (UNAVAILABLE): failed to connect to "
            "all addresses; last error: UNKNOWN: ipv4:127.0.0.1:50053: Connection refused"
        )

    def process(self, document_id, spec, embedding_model):
        self.processed.append(document_id)
        return iter(())


class RetrieverBroken(IndexedPeers):
    """Peers whose retrieval fails in a way nobody planned for."""

    def retrieve(self, request):
        raise RuntimeError("secret detail: /srv/chunklab/keys.txt is unreadable")


def retrieval_only_experiment(stub) -> evaluator_pb2.Experiment:
    question_set = stub.CreateQuestionSet(
        evaluator_pb2.CreateQuestionSetRequest(
            name="chunking", questions=[evaluator_pb2.Question(text="What is chunking?")]
        ),
        timeout=DEADLINE_S,
    )
    config = evaluator_pb2.ExperimentConfig(
        question_set_id=question_set.question_set_id,
        strategies=[evaluator_pb2.StrategyGrid(strategy="fixed_size")],
        retrieval=common_pb2.RetrievalOptions(filter=common_pb2.RetrievalFilter(document_ids=["d-1"])),
        retrieval_only=True,
    )
    events = list(stub.RunExperiment(evaluator_pb2.RunExperimentRequest(config=config), timeout=DEADLINE_S))
    return events[-1].experiment


def test_a_retriever_out_of_reach_stops_the_experiment_and_is_never_read_as_a_deleted_set(tmp_path):
    peers = RetrieverAway()
    with serve_evaluator(peers, f"sqlite:///{tmp_path / 'evaluator.sqlite3'}", TIMEOUT_S) as stub:
        done = retrieval_only_experiment(stub)
    assert done.state == evaluator_pb2.EXPERIMENT_STATE_FAILED
    assert done.error == (
        "the retriever is out of reach or too slow, so it is not known whether d-1.md already has an index set of "
        f"{done.runs[0].run_key}; nothing was processed again. Start the retriever (or check "
        "CHUNKLAB_RETRIEVER_ADDRESS), then resume the experiment"
    )
    assert peers.processed == [] and not done.runs[0].error  # not processed again, not a run skipped


def test_an_unexpected_error_reaches_the_client_as_a_sentence_its_text_only_in_the_log(tmp_path, caplog):
    with caplog.at_level(logging.ERROR, logger="chunklab.evaluator"):
        with serve_evaluator(RetrieverBroken(), f"sqlite:///{tmp_path / 'evaluator.sqlite3'}", TIMEOUT_S) as stub:
            done = retrieval_only_experiment(stub)
            stored = stub.GetExperiment(
                evaluator_pb2.GetExperimentRequest(experiment_id=done.experiment_id), timeout=DEADLINE_S
            )
    assert done.state == stored.state == evaluator_pb2.EXPERIMENT_STATE_FAILED
    assert done.error == stored.error
    assert done.error.startswith("the experiment stopped on an internal error (incident ")
    assert done.error.endswith(
        "the evaluator's log has the details; continue it with Resume on the Experiments "
        "page (or `chunklab resume <experiment id>`)"
    )
    assert "secret" not in done.error and "RuntimeError" not in done.error
    incident = done.error.split("(incident ")[1].split(")")[0]
    (logged,) = [r for r in caplog.records if incident in r.getMessage()]
    assert "secret detail" in logged.exc_text
