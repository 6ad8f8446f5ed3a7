"""Storage that fails under a service: a database another writer holds
locked, and a full disk under the retriever's archive (issue 14, item 6;
docs/reliability.md).

A locked SQLite file: writes wait CHUNKLAB_DB_BUSY_TIMEOUT_S (1 s here) and
succeed when the lock goes in time; past it the call fails UNAVAILABLE
(which clients retry) with a sentence that names the file, nothing is
half-written, and the same call succeeds once the lock is gone. The calls
that must fail are made on channels without retries, so each attempt's
status is what the test sees. A full disk: the retriever process may write
no file past 4 kB (RLIMIT_FSIZE, set on the running process with prlimit),
so its archive cannot be written; the sweep fails RESOURCE_EXHAUSTED and
deletes nothing."""

from __future__ import annotations

import resource
import threading
import time
from concurrent import futures

import grpc
import pytest

from chunklab.v1 import (
    chunker_pb2,
    chunker_pb2_grpc,
    common_pb2,
    evaluator_pb2,
    evaluator_pb2_grpc,
    ingest_pb2,
    ingest_pb2_grpc,
    retriever_pb2,
    retriever_pb2_grpc,
)
from services.chunker.cache import EmbeddingCache
from tests.support.fake_openai import FakeOpenAI
from tests.support.faults import (
    EMBEDDING_MODEL,
    FIXED_16,
    FIXED_24,
    WAIT_S,
    fake_model_stack,
    fixed_size_sets,
    locked,
    upload,
)
from tests.support.providers import HashedProvider

pytestmark = pytest.mark.e2e

HOLD_S = 0.3  # a lock held this long is waited for (the busy timeout is 1 s)


def locked_message(name: str) -> str:
    return (
        f"the database {name} stayed locked by another writer for over 1s (CHUNKLAB_DB_BUSY_TIMEOUT_S), "
        "so this change was not saved; try again"
    )


def note(number: int, date: str = "") -> bytes:
    front = f"---\ndate: {date}\n---\n" if date else ""
    return (
        f"{front}# Note {number}\n\nThe ferry leaves at {number % 12 + 1}. Tickets cost {number + 2} euros.\n\n"
        f"## Luggage\n\nBikes ride free on ferry {number}; dogs pay one euro.\n"
    ).encode()


@pytest.fixture(scope="module")
def llm():
    with FakeOpenAI() as embedder, FakeOpenAI() as chat:
        chat.responder = lambda messages, model: "The ferry leaves at nine from the east quay every day"
        yield embedder, chat


@pytest.fixture(scope="module")
def stack(tmp_path_factory, llm):
    embedder, chat = llm
    running = fake_model_stack(
        tmp_path_factory.mktemp("storage"), embedder, chat, CHUNKLAB_DB_BUSY_TIMEOUT_S="1", CHUNKLAB_LLM_MAX_RETRIES="0"
    ).start()
    yield running
    running.stop()


def unretried(stub_class, address: str):
    """A stub on a channel without retries: the caller sees each attempt's status."""
    return stub_class(grpc.insecure_channel(address))


def test_ingest_waits_for_a_short_lock_and_refuses_a_long_one_storing_nothing(stack):
    lab = stack.client()
    database = stack.data_dir / "ingest.sqlite3"
    with futures.ThreadPoolExecutor(1) as pool:
        with locked(database):
            waiting = pool.submit(upload, lab, note(1), "waited.md", "locked-ingest")
            time.sleep(HOLD_S)
        assert lab.get_document_text(waiting.result(timeout=WAIT_S).document_id).text == note(1).decode()

    ingest = unretried(ingest_pb2_grpc.IngestServiceStub, stack.addresses["ingest"])
    data = note(2)

    def request():
        yield ingest_pb2.CreateDocumentRequest(
            header=ingest_pb2.UploadHeader(name="refused.md", collection="locked-ingest", size_bytes=len(data))
        )
        yield ingest_pb2.CreateDocumentRequest(data=data)

    with locked(database), pytest.raises(grpc.RpcError) as refused:
        ingest.CreateDocument(request(), timeout=WAIT_S)
    assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
    assert refused.value.details() == locked_message("ingest.sqlite3")
    assert [d.name for d in lab.list_documents(collection="locked-ingest")] == ["waited.md"]
    assert not ingest.CreateDocument(request(), timeout=WAIT_S).already_existed


def test_retriever_under_a_long_lock_indexes_no_half_set_and_archives_nothing(stack):
    lab = stack.client()
    document = upload(lab, note(3), "indexed.md", "locked-retriever")
    expired = upload(lab, note(4, date="2020-02-03"), "old-news.md", "news")
    for document_id in (document.document_id, expired.document_id):
        lab.process(document_id, [FIXED_16])
    before, total = fixed_size_sets(lab, document.document_id), lab.index_stats().total_points
    ((active_config, _, _),) = before
    retriever = unretried(retriever_pb2_grpc.RetrieverServiceStub, stack.addresses["retriever"])
    with locked(stack.data_dir / "retriever.sqlite3"):
        # The chunker's every attempt finds the set's record locked, until it gives up.
        (failed,) = lab.process(document.document_id, [FIXED_24]).strategies_failed
        with pytest.raises(grpc.RpcError) as refused:
            retriever.Sweep(retriever_pb2.SweepRequest(), timeout=WAIT_S)
    assert (
        failed.reason == f"the retriever service is unreachable or too slow (UNAVAILABLE): "
        f"{locked_message('retriever.sqlite3')}"
    )
    assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
    assert refused.value.details() == locked_message("retriever.sqlite3")
    assert fixed_size_sets(lab, document.document_id) == before and lab.index_stats().total_points == total
    assert (
        lab.index_stats().archived_documents == 0
        and lab.indexed_set(expired.document_id, "fixed_size", EMBEDDING_MODEL) is not None
    )
    hits = lab.retrieve(
        "When does the ferry leave?",
        common_pb2.RetrievalOptions(
            strategy="fixed_size",
            embedding_model=EMBEDDING_MODEL,
            top_k=5,
            filter=common_pb2.RetrievalFilter(document_ids=[document.document_id]),
        ),
    ).retrieved_chunks
    assert hits and {h.chunk.config_id for h in hits} == {active_config}

    (outcome,) = lab.process(document.document_id, [FIXED_24]).strategies_completed
    assert lab.indexed_set(document.document_id, "fixed_size", EMBEDDING_MODEL).config_id == outcome.config_id
    assert [d.document_id for d in lab.sweep(False).documents] == [expired.document_id]


def test_an_activation_the_records_could_not_store_leaves_the_index_searching_the_set_they_name(stack):
    """ActivateIndexedSet writes the index twice and the records once: with the records locked,
    the index is put back, so queries keep searching the set the records call active."""
    lab = stack.client()
    document = upload(lab, note(5), "switched.md", "locked-activation")
    (first,) = lab.process(document.document_id, [FIXED_16]).strategies_completed
    (second,) = lab.process(document.document_id, [FIXED_24]).strategies_completed  # now the active one
    retriever = unretried(retriever_pb2_grpc.RetrieverServiceStub, stack.addresses["retriever"])
    key = retriever_pb2.IndexedSetKey(
        embedding_model=EMBEDDING_MODEL,
        document_id=document.document_id,
        strategy="fixed_size",
        config_id=first.config_id,
    )
    with locked(stack.data_dir / "retriever.sqlite3"), pytest.raises(grpc.RpcError) as refused:
        retriever.ActivateIndexedSet(retriever_pb2.ActivateIndexedSetRequest(key=key), timeout=WAIT_S)
    assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
    assert refused.value.details() == locked_message("retriever.sqlite3")
    assert lab.indexed_set(document.document_id, "fixed_size", EMBEDDING_MODEL).config_id == second.config_id
    options = common_pb2.RetrievalOptions(
        strategy="fixed_size",
        embedding_model=EMBEDDING_MODEL,
        top_k=5,
        filter=common_pb2.RetrievalFilter(document_ids=[document.document_id]),
    )
    hits = lab.retrieve("Do bikes ride free?", options).retrieved_chunks
    assert hits and {h.chunk.config_id for h in hits} == {second.config_id}
    lab.activate_indexed_set(document.document_id, "fixed_size", first.config_id, EMBEDDING_MODEL)  # the lock gone
    hits = lab.retrieve("Do bikes ride free?", options).retrieved_chunks
    assert hits and {h.chunk.config_id for h in hits} == {first.config_id}


def test_evaluator_refuses_under_a_long_lock_and_an_experiment_it_stopped_resumes(stack, llm):
    _, chat = llm
    lab = stack.client(stack.settings().model_copy(update={"long_rpc_timeout_s": WAIT_S}))  # a hang fails the test
    database = stack.data_dir / "evaluator.sqlite3"
    evaluator = unretried(evaluator_pb2_grpc.EvaluatorServiceStub, stack.addresses["evaluator"])
    questions = [
        evaluator_pb2.Question(text=t) for t in ("When does the ferry leave?", "What do tickets cost?", "Do bikes pay?")
    ]
    request = evaluator_pb2.CreateQuestionSetRequest(name="ferry", questions=questions)
    with locked(database), pytest.raises(grpc.RpcError) as refused:
        evaluator.CreateQuestionSet(request, timeout=WAIT_S)
    assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
    assert refused.value.details() == locked_message("evaluator.sqlite3")
    assert [s.name for s in lab.list_question_sets()] == []
    question_set = evaluator.CreateQuestionSet(request, timeout=WAIT_S)

    document = upload(lab, note(5), "ferry.md", "locked-evaluator")
    # The first answer comes at once, the next once the lock is taken: the lock comes while one is written.
    answer, locking, first = chat.responder, threading.Event(), len(chat.calls) + 1

    def answer_after_the_first(messages, model):
        assert len(chat.calls) == first or locking.wait(WAIT_S), "the lock never came"
        return answer(messages, model)

    chat.responder = answer_after_the_first
    config = evaluator_pb2.ExperimentConfig(
        name="stopped by a lock",
        question_set_id=question_set.question_set_id,
        strategies=[evaluator_pb2.StrategyGrid(strategy="fixed_size")],
        retrieval=common_pb2.RetrievalOptions(
            embedding_model=EMBEDDING_MODEL, filter=common_pb2.RetrievalFilter(document_ids=[document.document_id])
        ),
        answer_model=evaluator_pb2.ModelEndpoint(base_url=chat.base_url, model="fake"),
        judge_model=evaluator_pb2.ModelEndpoint(model="none"),
    )
    events = lab.run_experiment(config)
    experiment_id = next(e.progress.experiment_id for e in events if e.progress.questions_done == 1)
    with locked(database):
        locking.set()
        final = [e for e in events if e.HasField("experiment")][-1].experiment  # the stream ends, never hangs
    chat.responder = answer
    assert final.state == evaluator_pb2.EXPERIMENT_STATE_FAILED
    assert final.error == (
        f"{locked_message('evaluator.sqlite3')}; its end could not be stored "
        f"({locked_message('evaluator.sqlite3')}); continue it with Resume on the Experiments page "
        "(or `chunklab resume <experiment id>`)"
    )
    (kept,) = lab.get_experiment(experiment_id).results
    done = list(lab.resume_experiment(experiment_id))[-1].experiment
    assert done.state == evaluator_pb2.EXPERIMENT_STATE_SUCCEEDED, done.error
    results = lab.get_experiment(experiment_id).results
    assert [r.question for r in results] == [q.text for q in questions] and not any(r.error for r in results)
    assert results[0].SerializeToString() == kept.SerializeToString()


def test_chunker_refuses_a_bulk_load_under_a_locked_queue_and_runs_it_once_the_lock_goes(stack):
    lab = stack.client()
    document = upload(lab, note(6), "queued.md", "locked-chunker")
    chunker = unretried(chunker_pb2_grpc.ChunkerServiceStub, stack.addresses["chunker"])
    request = chunker_pb2.SubmitBulkLoadRequest(document_ids=[document.document_id], strategies=[FIXED_16])
    before = [b.bulk_load_id for b in lab.list_bulk_loads()]
    with locked(stack.data_dir / "broker" / "queue.sqlite3"), pytest.raises(grpc.RpcError) as refused:
        chunker.SubmitBulkLoad(request, timeout=WAIT_S)
    assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
    queue = stack.data_dir / "broker" / "queue.sqlite3"
    assert refused.value.details() == locked_message(f"of the message broker (embedded queue ({queue}))")
    assert [b.bulk_load_id for b in lab.list_bulk_loads()] == before
    submitted = chunker.SubmitBulkLoad(request, timeout=WAIT_S)
    *_, load = lab.follow_bulk_load(submitted.bulk_load_id, timeout=WAIT_S)
    assert (load.jobs_finished, load.jobs_failed) == (1, 0)


def test_the_embedding_cache_skips_a_locked_disk_once_and_keeps_using_it(tmp_path):
    path = tmp_path / "embeddings.sqlite3"
    provider = HashedProvider()
    cache = EmbeddingCache(path, busy_timeout_s=0.2)
    with locked(path):
        assert cache.embed(provider, ["ferry times", "ticket prices"]).cached == 0  # stored in memory only
    cache.embed(provider, ["bike rules"])  # the lock is gone: this one reaches the disk
    cache.close()
    reopened = EmbeddingCache(path)
    assert reopened.embed(provider, ["ferry times", "ticket prices", "bike rules"]).cached == 1


def test_a_full_disk_under_the_archive_fails_the_sweep_and_deletes_nothing(stack):
    lab = stack.client()
    log = "".join(f"Line {i}: the ferry log for day {i}.\n\n" for i in range(60))
    text = note(7, date="2020-03-04") + log.encode()  # its archive is well over 4 kB
    document = upload(lab, text, "full-disk.md", "news")
    (outcome,) = lab.process(document.document_id, [FIXED_16]).strategies_completed
    before, total = lab.indexed_set(document.document_id, "fixed_size", EMBEDDING_MODEL), lab.index_stats().total_points
    archive = stack.data_dir / "retriever" / "archive"
    archived = sorted(archive.iterdir())
    pid = stack.processes["retriever"].pid
    limits = resource.prlimit(pid, resource.RLIMIT_FSIZE)
    retriever = unretried(retriever_pb2_grpc.RetrieverServiceStub, stack.addresses["retriever"])
    resource.prlimit(pid, resource.RLIMIT_FSIZE, (4096, limits[1]))  # no file of the retriever's past 4 kB
    try:
        with pytest.raises(grpc.RpcError) as refused:
            retriever.Sweep(retriever_pb2.SweepRequest(), timeout=WAIT_S)
    finally:
        resource.prlimit(pid, resource.RLIMIT_FSIZE, limits)
    assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert refused.value.details() == (
        f"the archive of document {document.document_id} could not be written to {archive}: File too large "
        "(EFBIG); none of its chunks was deleted from the index: free space there and sweep again"
    )
    assert sorted(archive.iterdir()) == archived  # no half-written archive left behind
    assert lab.indexed_set(document.document_id, "fixed_size", EMBEDDING_MODEL) == before
    assert lab.index_stats().total_points == total

    swept = lab.sweep(False)
    assert [d.document_id for d in swept.documents] == [document.document_id]
    assert swept.chunks_archived == outcome.chunk_count
    assert lab.index_stats().archived_documents == len(archived) + 1
