"""SIGTERM ends every service within its grace period, even mid-work (ADR 0049).

The stack's LLM is the fake OpenAI server told to take ten minutes per reply,
so work that waits on it cannot finish and cannot be interrupted where it
waits (a socket read): the evaluator answering and running an experiment, the
chunker processing a contextual strategy in a call and in a bulk load. The
ingest and the retriever are mid-upload: a client stream that sends its header
and then nothing. Each service is then sent SIGTERM and must exit: its calls
get the grace period, and whatever still runs after it does not hold the
process (grace + a few seconds to close, asserted as "has exited" with a
generous wait, never as a time)."""

from __future__ import annotations

import signal
import threading

import pytest

from chunklab.rpc import channels
from chunklab.v1 import (
    chunker_pb2,
    common_pb2,
    evaluator_pb2,
    ingest_pb2,
    retriever_pb2,
)
from chunklab_app import sample_loader
from chunklab_app.stack import Stack
from services.evaluator.judging.answers import SYSTEM as ANSWER_PROMPT
from tests.support.fake_openai import FakeOpenAI

pytestmark = pytest.mark.e2e

GRACE_S = 2
EXIT_WAIT_S = GRACE_S + 10
CONTEXTUAL = common_pb2.StrategySpec(name="contextual_retrieval")


@pytest.fixture(scope="module")
def llm():
    with FakeOpenAI() as server:
        server.behaviour = "slow"
        server.delay_s = 600
        yield server


@pytest.fixture(scope="module")
def busy_stack(tmp_path_factory, llm):
    stack = Stack(
        data_dir=tmp_path_factory.mktemp("shutdown"),
        extra_env={
            "CHUNKLAB_SHUTDOWN_GRACE_S": str(GRACE_S),
            "CHUNKLAB_LLM_BASE_URL": llm.base_url,
            "CHUNKLAB_LLM_MODEL": "fake",
            "CHUNKLAB_LLM_TIMEOUT_S": "900",
            "CHUNKLAB_LLM_MAX_RETRIES": "0",
        },
    ).start()
    lab = stack.client()
    document_ids = sample_loader.upload_and_process(lab, ["fixed_size"], log=lambda _line: None)
    sample_loader.question_set(lab, document_ids)
    document_id = document_ids[sample_loader.FIELD_GUIDE.stem]
    yield stack, document_id
    stack.stop()


@pytest.fixture
def held_open():
    """A client stream's messages: the first one, then nothing until the test ends."""
    release = threading.Event()

    def messages(first):
        yield first
        release.wait()

    yield messages
    release.set()


def answer_calls(llm) -> int:
    return sum(1 for call in llm.calls if call["body"]["messages"][0]["content"] == ANSWER_PROMPT)


def other_calls(llm) -> int:
    return sum(1 for call in llm.calls if call["body"]["messages"][0]["content"] != ANSWER_PROMPT)


def wait_for(condition, what: str) -> None:
    event = threading.Event()
    for _ in range(600):
        if condition():
            return
        event.wait(0.1)
    raise AssertionError(f"gave up waiting for {what}")


def assert_exits_on_sigterm(stack: Stack, service: str) -> None:
    process = stack.processes[service]
    assert process.poll() is None, f"{service} died before the test sent SIGTERM"
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=EXIT_WAIT_S) == 0
    log = (stack.data_dir / "logs" / f"{service}.log").read_text(errors="replace")
    assert f"{service}: signal 15, draining for up to {GRACE_S:.1f}s" in log


# The order keeps each service's peers alive while it is made busy: the
# evaluator answers through the retriever, the chunker reads from ingest.


def test_the_evaluator_exits_while_it_answers_and_runs_an_experiment(busy_stack, llm):
    stack, _ = busy_stack
    evaluator = channels.evaluator(stack.addresses["evaluator"])
    answer = evaluator.Answer(
        evaluator_pb2.AnswerRequest(
            question="What is chunking?",
            retrieval=common_pb2.RetrievalOptions(strategy="fixed_size"),
            answer_model=evaluator_pb2.ModelEndpoint(model="fake"),
        ),
        timeout=900,
    )
    question_set = stack.client().list_question_sets()[0]
    experiment = evaluator.RunExperiment(
        evaluator_pb2.RunExperimentRequest(
            config=evaluator_pb2.ExperimentConfig(
                question_set_id=question_set.question_set_id,
                strategies=[evaluator_pb2.StrategyGrid(strategy="fixed_size")],
                answer_model=evaluator_pb2.ModelEndpoint(model="fake"),
                judge_model=evaluator_pb2.ModelEndpoint(model="none"),
            )
        ),
        timeout=900,
    )
    wait_for(lambda: answer_calls(llm) == 2, "the answer and the experiment's first question to reach the LLM")

    assert_exits_on_sigterm(stack, "evaluator")
    answer.cancel()
    experiment.cancel()


def test_the_chunker_exits_while_it_processes_in_a_bulk_load_and_in_a_call(busy_stack, llm):
    stack, document_id = busy_stack
    stack.client().submit_bulk_load([document_id], [CONTEXTUAL])
    wait_for(lambda: other_calls(llm) >= 1, "the bulk worker's contextual strategy to reach the LLM")
    chunker = channels.chunker(stack.addresses["chunker"])
    processing = chunker.ProcessDocument(
        chunker_pb2.ProcessDocumentRequest(document_id=document_id, strategies=[CONTEXTUAL]), timeout=900
    )
    assert next(processing).progress.phase == chunker_pb2.STRATEGY_PHASE_STARTED

    assert_exits_on_sigterm(stack, "chunker")
    processing.cancel()


def test_the_retriever_exits_mid_index_stream(busy_stack, held_open):
    stack, document_id = busy_stack
    retriever = channels.retriever(stack.addresses["retriever"])
    header = retriever_pb2.IndexHeader(
        document_id=document_id, strategy="fixed_size", config_id="c", embedding_model="all-MiniLM-L6-v2", dimension=384
    )
    call = retriever.IndexChunks.future(held_open(retriever_pb2.IndexChunksRequest(header=header)), timeout=900)

    assert_exits_on_sigterm(stack, "retriever")
    assert call.exception(timeout=EXIT_WAIT_S) is not None


def test_ingest_exits_mid_upload(busy_stack, held_open):
    stack, _ = busy_stack
    ingest = channels.ingest(stack.addresses["ingest"])
    header = ingest_pb2.UploadHeader(name="never-finished.md", size_bytes=10)
    call = ingest.CreateDocument.future(held_open(ingest_pb2.CreateDocumentRequest(header=header)), timeout=900)

    assert_exits_on_sigterm(stack, "ingest")
    assert call.exception(timeout=EXIT_WAIT_S) is not None
