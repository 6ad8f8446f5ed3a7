"""kill -9 of each service mid-work loses no record it acknowledged and leaves
nothing half-written (issue 14, item 6; docs/reliability.md).

One stack, its services as processes, their models the fake OpenAI server:
`embedder` always answers, `llm` is told to hang where the test wants a
service caught mid-work. Each test kills one service with SIGKILL (nothing
flushed, nothing closed), starts it again on the same data folder, checks
that every acknowledged record is there and whole, and does the interrupted
work again. The retriever is caught between its two stores by another
writer holding its database (so the kill lands there every time, not by
luck of timing)."""

from __future__ import annotations

import json
import threading
from concurrent import futures

import grpc
import pytest

from chunklab.client import ClientError
from chunklab.rpc import channels
from chunklab.v1 import chunker_pb2, common_pb2, evaluator_pb2, ingest_pb2
from services.evaluator.judging import judge
from tests.support.fake_openai import FakeOpenAI, default_responder
from tests.support.faults import (
    EMBEDDING_MODEL,
    FIXED_16,
    FIXED_24,
    WAIT_S,
    fake_model_stack,
    fixed_size_sets,
    held_open,
    locked,
    upload,
    wait_for,
)

pytestmark = pytest.mark.e2e

SLOW_S = 600  # a reply this slow never comes while the test runs
CONTEXTUAL = common_pb2.StrategySpec(name="contextual_retrieval")


def note(number: int, topic: str = "harbour") -> bytes:
    return (
        f"# Note {number}\n\nThe {topic} opens at {number % 12 + 1} o'clock. Boats moor at quay {number}.\n\n"
        f"## Fees\n\nA night costs {number + 3} euros, paid at the office by the {topic} gate.\n"
    ).encode()


def replies(messages: list[dict], model: str) -> str:
    """Judge prompts get a valid verdict, anything else the default reply."""
    if messages and messages[0]["content"] == judge.SYSTEM:
        if '"hallucination"' in messages[-1]["content"]:
            return json.dumps({"hallucination": "no", "reason": "every claim is in the context"})
        return json.dumps({"score": 8, "reason": "close to the context"})
    return default_responder(messages, model)


@pytest.fixture(scope="module")
def models():
    with FakeOpenAI() as embedder, FakeOpenAI() as llm:
        llm.responder = replies
        llm.delay_s = SLOW_S
        yield embedder, llm


@pytest.fixture(scope="module")
def stack(tmp_path_factory, models):
    embedder, llm = models
    running = fake_model_stack(
        tmp_path_factory.mktemp("kill"),
        embedder,
        llm,
        CHUNKLAB_LLM_TIMEOUT_S="900",
        CHUNKLAB_LLM_MAX_RETRIES="0",
        CHUNKLAB_DB_BUSY_TIMEOUT_S="120",
    ).start()
    yield running
    llm.behaviour = "good"
    running.stop()


def test_ingest_killed_mid_upload_keeps_every_acknowledged_document_whole(stack):
    lab = stack.client()
    sent: dict[str, bytes] = {}
    acknowledged: dict[str, str] = {}  # name -> document id, once CreateDocument answered
    for number in range(4):
        name = f"before-{number}.md"
        sent[name] = note(number)
        acknowledged[name] = upload(lab, sent[name], name, "kill-ingest").document_id

    stop = threading.Event()

    def keep_uploading() -> None:
        for number in range(100, 400):
            name = f"during-{number}.md"
            sent[name] = note(number)
            try:
                acknowledged[name] = upload(lab, sent[name], name, "kill-ingest").document_id
            except ClientError:
                return
            if stop.is_set():
                return

    uploader = threading.Thread(target=keep_uploading)
    uploader.start()
    wait_for(lambda: len(acknowledged) >= 10, "uploads to go on while ingest is killed")
    unfinished = note(999, "lighthouse")
    stream, release = held_open(
        ingest_pb2.CreateDocumentRequest(
            header=ingest_pb2.UploadHeader(name="unfinished.md", collection="kill-ingest", size_bytes=len(unfinished))
        ),
        ingest_pb2.CreateDocumentRequest(data=unfinished[:40]),
    )
    cut = channels.ingest(stack.addresses["ingest"]).CreateDocument.future(stream, timeout=WAIT_S)
    stack.kill("ingest")
    stop.set()
    release.set()
    uploader.join(WAIT_S)
    assert cut.exception(timeout=WAIT_S).code() == grpc.StatusCode.UNAVAILABLE

    stack.restart("ingest")
    stored = {d.name: d for d in lab.list_documents(collection="kill-ingest")}
    for name, document_id in acknowledged.items():
        assert stored[name].document_id == document_id
    for name, document in stored.items():  # acknowledged or not, what is stored is whole
        assert lab.get_document_text(document.document_id).text == sent[name].decode()
    assert "unfinished.md" not in stored
    again = lab.upload_document(unfinished, name="unfinished.md", collection="kill-ingest")
    assert not again.already_existed and lab.get_document_text(again.document.document_id).text == unfinished.decode()


def test_chunker_killed_mid_processing_and_mid_bulk_load_keeps_what_was_indexed_and_goes_on(stack, models):
    _, llm = models
    lab = stack.client()
    processed = upload(lab, note(1), "processed.md", "kill-chunker")
    loaded = upload(lab, note(2), "loaded.md", "kill-chunker")
    llm.behaviour = "slow"  # the contextual strategy's first LLM call never answers
    events = lab.process_document(processed.document_id, [FIXED_16, CONTEXTUAL])
    completed = next(e.progress for e in events if e.progress.phase == chunker_pb2.STRATEGY_PHASE_COMPLETED)
    assert completed.strategy == "fixed_size" and completed.chunk_count > 0
    bulk_load = lab.submit_bulk_load([loaded.document_id], [CONTEXTUAL])
    wait_for(
        lambda: all(any(f"quay {n}." in json.dumps(c["body"]) for c in llm.calls) for n in (1, 2)),
        "the call and the bulk job to wait on the LLM",
    )
    stack.kill("chunker")
    with pytest.raises(ClientError):
        list(events)

    llm.behaviour = "good"
    stack.restart("chunker")
    fixed = lab.indexed_set(processed.document_id, "fixed_size", EMBEDDING_MODEL)
    assert fixed.active and fixed.points == completed.chunk_count  # acknowledged: indexed whole
    assert lab.indexed_set(processed.document_id, "contextual_retrieval", EMBEDDING_MODEL) is None
    (outcome,) = lab.process(processed.document_id, [CONTEXTUAL]).strategies_completed
    assert lab.indexed_set(processed.document_id, "contextual_retrieval", EMBEDDING_MODEL).points == outcome.chunk_count

    *_, load = lab.follow_bulk_load(bulk_load.bulk_load_id, timeout=WAIT_S)  # the job is delivered again at once
    assert load.jobs_total == 1 and (load.jobs_finished, load.jobs_failed) == (1, 0)
    (result,) = load.results
    assert result.deliveries == 2 and not result.error
    (done,) = result.result.strategies_completed
    assert lab.indexed_set(loaded.document_id, "contextual_retrieval", EMBEDDING_MODEL).points == done.chunk_count


def test_retriever_killed_between_the_points_and_the_record_of_a_set_shows_neither(stack):
    lab = stack.client()
    document = upload(lab, note(3), "indexed.md", "kill-retriever")
    lab.process(document.document_id, [FIXED_16])
    before, total = fixed_size_sets(lab, document.document_id), lab.index_stats().total_points
    ((active_config, _, points),) = before
    with futures.ThreadPoolExecutor(1) as pool, locked(stack.data_dir / "retriever.sqlite3"):
        # The new set's points are written; its record waits for the lock.
        processing = pool.submit(lab.process, document.document_id, [FIXED_24])
        wait_for(lambda: lab.index_stats().total_points > total, "the new set's points to be written")
        stack.kill("retriever")
        (failed,) = processing.result(timeout=WAIT_S).strategies_failed
    assert failed.strategy == "fixed_size" and "retriever" in failed.reason and "UNAVAILABLE" in failed.reason

    stack.restart("retriever")
    assert fixed_size_sets(lab, document.document_id) == before
    assert lab.index_stats().total_points == total  # the unrecorded points are gone
    hits = lab.retrieve(
        "When does the harbour open?",
        common_pb2.RetrievalOptions(
            strategy="fixed_size",
            embedding_model=EMBEDDING_MODEL,
            top_k=10,
            filter=common_pb2.RetrievalFilter(document_ids=[document.document_id]),
        ),
    ).retrieved_chunks
    assert hits and {h.chunk.config_id for h in hits} == {active_config}
    again = lab.process(document.document_id, [FIXED_24])
    assert not again.strategies_failed, again.strategies_failed  # the chunker finds the restarted retriever
    (outcome,) = again.strategies_completed
    after = fixed_size_sets(lab, document.document_id)
    assert after == sorted([(active_config, False, points), (outcome.config_id, True, outcome.chunk_count)])


def test_retriever_killed_mid_sweep_takes_the_archive_back_and_sweeps_it_again(stack):
    lab = stack.client()
    old = b"---\ndate: 2020-01-06\n---\n# Storm\n\nThe storm closed the harbour for two days in January.\n"
    document = upload(lab, old, "storm.md", "news")  # news keeps 7 days: long expired
    (outcome,) = lab.process(document.document_id, [FIXED_16]).strategies_completed
    before = lab.indexed_set(document.document_id, "fixed_size", EMBEDDING_MODEL)
    with futures.ThreadPoolExecutor(1) as pool, locked(stack.data_dir / "retriever.sqlite3"):
        # The archive is written; marking the records archived waits for the lock.
        sweeping = pool.submit(lab.sweep, False)
        wait_for(lambda: lab.index_stats().archived_documents == 1, "the archive to be written")
        stack.kill("retriever")
        assert isinstance(sweeping.exception(timeout=WAIT_S), ClientError)

    stack.restart("retriever")
    assert lab.index_stats().archived_documents == 0 and lab.list_archived_documents() == []
    assert lab.indexed_set(document.document_id, "fixed_size", EMBEDDING_MODEL) == before
    swept = lab.sweep(False)
    assert [d.document_id for d in swept.documents] == [document.document_id]
    assert swept.chunks_archived == outcome.chunk_count
    assert lab.indexed_set(document.document_id, "fixed_size", EMBEDDING_MODEL) is None
    assert lab.restore_document(document.document_id).chunks_restored == outcome.chunk_count
    assert lab.indexed_set(document.document_id, "fixed_size", EMBEDDING_MODEL).points == before.points


def test_evaluator_killed_mid_judging_keeps_finished_questions_and_acknowledged_answers(stack, models):
    _, llm = models
    lab = stack.client()
    document = upload(lab, note(4), "judged.md", "kill-evaluator")
    lab.process(document.document_id, [FIXED_16])
    endpoint = evaluator_pb2.ModelEndpoint(base_url=llm.base_url, model="fake")
    retrieval = common_pb2.RetrievalOptions(
        embedding_model=EMBEDDING_MODEL, filter=common_pb2.RetrievalFilter(document_ids=[document.document_id])
    )
    asked = common_pb2.RetrievalOptions(strategy="fixed_size")
    asked.MergeFrom(retrieval)
    llm.behaviour = "good"
    answered = [
        e
        for e in lab.answer(
            evaluator_pb2.AnswerRequest(question="When does the harbour open?", retrieval=asked, answer_model=endpoint)
        )
    ][-1].result
    evaluator = channels.evaluator(stack.addresses["evaluator"])
    question_set = evaluator.CreateQuestionSet(
        evaluator_pb2.CreateQuestionSetRequest(
            name="harbour",
            questions=[
                evaluator_pb2.Question(text=t) for t in ("When does the harbour open?", "What does a night cost?")
            ],
        ),
        timeout=WAIT_S,
    )
    llm.calls.clear()
    # Question 1: its answer and three judges; question 2: its answer, then the first judge hangs.
    llm.script = ["good"] * 5 + ["slow"]
    config = evaluator_pb2.ExperimentConfig(
        name="killed mid-judging",
        question_set_id=question_set.question_set_id,
        strategies=[evaluator_pb2.StrategyGrid(strategy="fixed_size")],
        retrieval=retrieval,
        answer_model=endpoint,
        judge_model=endpoint,
    )
    stream = lab.run_experiment(config)
    experiment_id = next(e.progress.experiment_id for e in stream if e.HasField("progress"))
    wait_for(lambda: len(llm.calls) >= 6, "the second question's first judge to be asked")
    stack.kill("evaluator")
    stream.close()

    llm.behaviour = "good"
    stack.restart("evaluator")
    interrupted = lab.get_experiment(experiment_id)
    assert interrupted.state == evaluator_pb2.EXPERIMENT_STATE_INTERRUPTED
    (kept,) = interrupted.results
    assert interrupted.questions_done == 1 and kept.question == "When does the harbour open?"
    assert [getattr(kept.judge, m).measured for m in judge.MEASURES] == [True, False, True, True]  # no expected answer
    assert lab.submit_feedback(answered.query_id, True).answer == answered.answer  # the answer was stored
    assert lab.get_question_set(question_set.question_set_id).question_count == 2

    done = list(lab.resume_experiment(experiment_id))[-1].experiment
    assert done.state == evaluator_pb2.EXPERIMENT_STATE_SUCCEEDED, done.error
    final = lab.get_experiment(experiment_id)
    assert final.questions_done == 2 and final.results[0].SerializeToString() == kept.SerializeToString()
