"""Bulk loads through the message broker (SPEC section 7, ADR 0037): jobs
on the queue, chunker workers that run them through ProcessDocument, a job
whose worker stopped delivered again, and the whole path through gRPC and
the command line, with the embedded queue and with a real Redis and two
chunker replicas."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

import grpc
import pytest
from support.providers import HashedProvider

from chunklab.errors import InvalidArgument, NotFound, Unavailable
from chunklab.llm import ChatEndpoint
from chunklab.rpc import channels
from chunklab.settings import Settings
from chunklab.v1 import chunker_pb2, common_pb2, documents_pb2, retriever_pb2
from chunklab_app.stack import REPO, Stack, wait_serving
from services.chunker.broker import EmbeddedBroker
from services.chunker.bulk import BulkLoads, Worker
from services.chunker.cache import EmbeddingCache
from services.chunker.llm import LLMPool
from services.chunker.service import ChunkerService
from services.ingest.readers.markdown import parse
from tests.support.redis_server import RedisServer

NOTES = {
    "harbour.md": "# Harbour\n\nBoats moor at the east quay. The harbour master keeps the tide tables.\n\n"
    "## Fees\n\nMooring costs four euros a night. Fees are paid at the office.\n",
    "lighthouse.md": "# Lighthouse\n\nThe keeper logs the weather at six. Storm warnings go up below 990 hPa.\n\n"
    "## Supplies\n\nWater comes by boat on Tuesdays. Lamp oil is ordered monthly.\n",
}


def document(document_id: str, text: str) -> documents_pb2.Document:
    return documents_pb2.Document(
        document_id=document_id,
        name=f"{document_id}.md",
        text=text,
        language="en",
        collection="default",
        format=documents_pb2.DOCUMENT_FORMAT_MARKDOWN,
        tree=parse(text, documents_pb2.DOCUMENT_FORMAT_MARKDOWN),
    )


class Harness:
    """Bulk loads over the embedded queue, with a real ChunkerService on an
    in-memory ingest and index; `hold` makes fetching a document wait."""

    def __init__(self, tmp_path) -> None:
        self.documents = {f"doc-{i}": document(f"doc-{i}", text) for i, text in enumerate(NOTES.values())}
        self.indexed: dict[tuple[str, str], int] = {}
        self.hold: dict[str, threading.Event] = {}
        self.fetching = threading.Event()
        self.ingest_down = 0  # this many fetches fail as if ingest were down
        self.fetches: Counter = Counter()  # document id -> times a worker fetched it to process it
        self.broker = EmbeddedBroker(tmp_path / "queue.sqlite3")
        self.service = ChunkerService(
            self._fetch,
            self._index,
            lambda name: HashedProvider(),
            "hashed-64",
            EmbeddingCache(tmp_path / "cache.sqlite3"),
            LLMPool(ChatEndpoint("", "", "none", 1.0, 0), 1),
        )
        self.bulk = BulkLoads(self.service, self.broker, self._exists)

    def _exists(self, document_id: str) -> None:
        if document_id not in self.documents:
            raise NotFound(f"no document {document_id}")

    def _fetch(self, document_id: str) -> documents_pb2.Document:
        self.fetching.set()
        self.fetches[document_id] += 1
        if self.ingest_down:
            self.ingest_down -= 1
            raise Unavailable("ingest at 127.0.0.1:50051 is unreachable")
        if document_id in self.hold:
            self.hold[document_id].wait(30)
        self._exists(document_id)
        return self.documents[document_id]

    def _index(self, header, chunks) -> tuple[int, int]:
        self.indexed[(header.document_id, header.strategy)] = len(chunks)
        return len(chunks), 0

    def submit(self, *document_ids: str) -> str:
        request = chunker_pb2.SubmitBulkLoadRequest(
            document_ids=list(document_ids),
            strategies=[
                common_pb2.StrategySpec(
                    name="fixed_size",
                    knobs={
                        "chunk_size": common_pb2.KnobValue(int_value=16),
                        "chunk_overlap": common_pb2.KnobValue(int_value=0),
                    },
                ),
                common_pb2.StrategySpec(name="sentence_window"),
            ],
        )
        return self.bulk.submit(request).bulk_load_id

    def wait(self, bulk_load_id: str, timeout_s: float = 30) -> chunker_pb2.BulkLoad:
        deadline = time.monotonic() + timeout_s
        while True:
            load = self.bulk.get(bulk_load_id)
            if len(load.results) >= load.jobs_total or time.monotonic() > deadline:
                return load
            time.sleep(0.05)


@contextmanager
def running(harness: Harness, name: str, **options):
    """A worker taking the harness's jobs until the block ends."""
    worker = Worker(harness.service, harness.broker, name=name, **options).start()
    try:
        yield worker
    finally:
        worker.stop()
        worker.join(10)


@pytest.fixture
def harness(tmp_path):
    made = Harness(tmp_path)
    yield made
    made.broker.close()


def test_a_worker_runs_every_job_of_a_bulk_load_through_process_document(harness):
    bulk_load_id = harness.submit("doc-0", "doc-1")
    with running(harness, "w1"):
        load = harness.wait(bulk_load_id)
    assert load.jobs_total == 2 and len(load.results) == 2
    assert sorted(r.document_id for r in load.results) == ["doc-0", "doc-1"]
    for result in load.results:
        assert not result.error and result.deliveries == 1 and result.worker == "w1"
        assert [o.strategy for o in result.result.strategies_completed] == ["fixed_size", "sentence_window"]
        for outcome in result.result.strategies_completed:
            assert harness.indexed[(result.document_id, outcome.strategy)] == outcome.chunk_count > 0
    assert harness.broker.queued() == 0


def test_recent_bulk_loads_come_newest_first_with_how_far_each_is(harness):
    first = harness.submit("doc-0", "doc-1")
    with running(harness, "w"):
        harness.wait(first)
    del harness.documents["doc-1"]
    second = harness.submit("doc-0")
    listed = harness.bulk.recent(0).bulk_loads
    assert [load.bulk_load_id for load in listed] == [second, first]
    assert [(load.jobs_total, load.jobs_finished, load.jobs_failed) for load in listed] == [(1, 0, 0), (2, 2, 0)]
    assert all(not load.results for load in listed)  # the list is a summary
    harness.documents["doc-1"] = document("doc-1", "# Gone\n\nSoon.\n")
    third = harness.submit("doc-1")
    del harness.documents["doc-1"]
    with running(harness, "w"):
        harness.wait(third)
    assert harness.bulk.get(third).jobs_failed == 1
    assert [load.bulk_load_id for load in harness.bulk.recent(1).bulk_loads] == [third]
    with pytest.raises(InvalidArgument):
        harness.bulk.recent(101)


def test_a_job_whose_worker_stops_midway_goes_back_and_is_finished_by_another(harness):
    harness.hold["doc-0"] = threading.Event()
    bulk_load_id = harness.submit("doc-0")
    first = Worker(harness.service, harness.broker, name="stopped").start()
    assert harness.fetching.wait(10)
    first.stop()  # as on SIGTERM: cut short and given back, not finished
    harness.hold["doc-0"].set()
    first.join(10)
    assert harness.bulk.get(bulk_load_id).results == [] and harness.broker.queued() == 1
    with running(harness, "second"):  # at once: no lease has to run out first
        load = harness.wait(bulk_load_id, timeout_s=20)
    (result,) = load.results
    assert result.worker == "second" and result.deliveries == 1 and not result.error
    assert len(result.result.strategies_completed) == 2


def test_a_job_whose_peer_is_down_is_tried_again_after_its_lease_not_failed(harness):
    harness.ingest_down = 1
    bulk_load_id = harness.submit("doc-0")
    with running(harness, "w", lease_s=0.3):
        load = harness.wait(bulk_load_id)
    (result,) = load.results
    assert not result.error and result.deliveries == 2 and len(result.result.strategies_completed) == 2


class DiesBeforeAck:
    """The broker as a worker sees it that dies between storing its result and acknowledging the job."""

    def __init__(self, broker) -> None:
        self._broker = broker

    def ack(self, delivery) -> None:
        pass

    def __getattr__(self, name):
        return getattr(self._broker, name)


def test_a_job_finished_by_a_worker_that_died_before_acknowledging_it_is_not_run_again(harness):
    bulk_load_id = harness.submit("doc-0")
    dying = Worker(harness.service, DiesBeforeAck(harness.broker), name="died", lease_s=0.2)
    dying.handle(harness.broker.receive("died", lease_s=0.2, wait_s=1))
    assert harness.broker.queued() == 1 and harness.fetches["doc-0"] == 1
    with running(harness, "next", lease_s=0.2):  # takes it once the lease ran out
        while harness.broker.queued():
            time.sleep(0.05)
    (result,) = harness.bulk.get(bulk_load_id).results
    assert result.worker == "died" and not result.error and len(result.result.strategies_completed) == 2
    assert harness.fetches["doc-0"] == 1  # processed once


def test_a_job_that_keeps_stopping_its_workers_is_given_up_and_said_so(harness):
    bulk_load_id = harness.submit("doc-1")
    for _ in range(2):  # two workers took it and died without a word
        assert harness.broker.receive("died", lease_s=0.2, wait_s=1) is not None
        time.sleep(0.3)
    with running(harness, "w", lease_s=0.2, max_deliveries=2):
        load = harness.wait(bulk_load_id)
    (result,) = load.results
    assert result.deliveries == 3 and "given up" in result.error and "load the document again" in result.error
    assert "a service it needs was unreachable" in result.error
    assert ("doc-1", "fixed_size") not in harness.indexed and harness.broker.queued() == 0


def test_a_cancelled_bulk_load_runs_none_of_the_jobs_not_yet_started(harness):
    bulk_load_id = harness.submit("doc-0", "doc-1")
    assert harness.bulk.cancel(bulk_load_id).cancelled
    with running(harness, "w"):
        load = harness.wait(bulk_load_id)
    assert load.cancelled and len(load.results) == 2
    assert {r.error for r in load.results} == {"cancelled before it ran (CancelBulkLoad)"}
    assert harness.indexed == {} and harness.broker.queued() == 0


def test_a_document_deleted_after_it_was_queued_is_reported_not_retried(harness):
    bulk_load_id = harness.submit("doc-0")
    del harness.documents["doc-0"]
    with running(harness, "w"):
        load = harness.wait(bulk_load_id)
    (result,) = load.results
    assert result.error == "no document doc-0" and result.deliveries == 1
    assert harness.broker.queued() == 0


class _UnreadableDocuments(dict):
    def __getitem__(self, document_id):
        raise RuntimeError(f"page 7 of /srv/secret-volume/{document_id} is unreadable")


def test_a_job_that_fails_unexpectedly_reports_an_incident_not_the_exception(harness, caplog):
    """ADR 0050: the job's error names the job and an incident id to look up
    in the chunker's log; the exception's text stays in that log."""
    harness.documents = _UnreadableDocuments(harness.documents)
    bulk_load_id = harness.submit("doc-0")
    with running(harness, "w"):
        load = harness.wait(bulk_load_id)
    (result,) = load.results
    assert re.fullmatch(
        r"bulk job \S+ on document doc-0 failed with an internal error \(incident [0-9a-f]{12}\); "
        r"the chunker log has the details\. Try again, and report the incident if it fails again",
        result.error,
    ), result.error
    assert "secret-volume" not in result.error and result.deliveries == 1 and harness.broker.queued() == 0
    incident = re.search(r"incident ([0-9a-f]{12})", result.error).group(1)
    (logged,) = [r for r in caplog.records if incident in r.getMessage()]
    assert logged.exc_info and "secret-volume" in str(logged.exc_info[1])


# -- through gRPC and the command line ------------------------------------------


def cli(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "chunklab_app.cli", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.fixture
def note_files(tmp_path):
    paths = []
    for name, text in NOTES.items():
        path = tmp_path / name
        path.write_text(text)
        paths.append(str(path))
    return paths


@pytest.mark.e2e
def test_chunklab_load_uploads_queues_and_reports_every_document(stack, note_files):
    done = cli(
        stack.env(),
        "load",
        *note_files,
        "--strategy",
        "fixed_size",
        "--knob",
        "fixed_size.chunk_size=24",
        "--knob",
        "fixed_size.chunk_overlap=4",
        "--strategy",
        "sentence_window",
        "--collection",
        "policies",
        "--json",
    )
    assert done.returncode == 0, done.stderr
    outcome = json.loads(done.stdout)
    assert outcome["jobs_total"] == outcome["jobs_finished"] == 2
    assert outcome["broker"].startswith("embedded queue (")
    retriever = channels.retriever(stack.addresses["retriever"])
    for row in outcome["documents"]:
        assert row["document"] in NOTES and not row["error"] and not row["failed"]
        for completed in row["completed"]:
            indexed = retriever.GetIndexedSet(
                retriever_pb2.GetIndexedSetRequest(
                    key=retriever_pb2.IndexedSetKey(
                        embedding_model=Settings().embedding_model,
                        document_id=row["document_id"],
                        strategy=completed["strategy"],
                    )
                ),
                timeout=30,
            )
            assert indexed.points == completed["chunks"] > 0 and indexed.active  # a bulk load is a user's
        assert {c["strategy"] for c in row["completed"]} == {"fixed_size", "sentence_window"}
    assert "queued on embedded queue" in done.stderr and "2/2 documents done" in done.stderr
    chunker = channels.chunker(stack.addresses["chunker"])
    newest = chunker.ListBulkLoads(chunker_pb2.ListBulkLoadsRequest(limit=1), timeout=30).bulk_loads[0]
    assert newest.bulk_load_id == outcome["bulk_load_id"] and (newest.jobs_finished, newest.jobs_failed) == (2, 0)


@pytest.mark.e2e
def test_bad_bulk_loads_get_a_precise_status_and_usage_errors_a_readable_line(stack, note_files):
    chunker = channels.chunker(stack.addresses["chunker"])
    fixed = [common_pb2.StrategySpec(name="fixed_size")]
    cases = [
        (
            chunker_pb2.SubmitBulkLoadRequest(strategies=fixed),
            grpc.StatusCode.INVALID_ARGUMENT,
            "at least one document",
        ),
        (chunker_pb2.SubmitBulkLoadRequest(document_ids=["nope"], strategies=fixed), grpc.StatusCode.NOT_FOUND, "nope"),
        (
            chunker_pb2.SubmitBulkLoadRequest(document_ids=["a", "a"], strategies=fixed),
            grpc.StatusCode.INVALID_ARGUMENT,
            "repeated: a",
        ),
        (
            chunker_pb2.SubmitBulkLoadRequest(document_ids=["a"], strategies=[common_pb2.StrategySpec(name="magic")]),
            grpc.StatusCode.INVALID_ARGUMENT,
            "magic",
        ),
        (
            chunker_pb2.SubmitBulkLoadRequest(
                document_ids=["a"], strategies=fixed, llm=chunker_pb2.LLMChoice(api_key="sk-secret")
            ),
            grpc.StatusCode.INVALID_ARGUMENT,
            "CHUNKLAB_LLM_API_KEY",
        ),
    ]
    for request, code, words in cases:
        with pytest.raises(grpc.RpcError) as caught:
            chunker.SubmitBulkLoad(request, timeout=30)
        assert caught.value.code() == code and words in caught.value.details()
    for call, request, code in (
        (chunker.GetBulkLoad, chunker_pb2.GetBulkLoadRequest(bulk_load_id="0" * 32), grpc.StatusCode.NOT_FOUND),
        (chunker.CancelBulkLoad, chunker_pb2.CancelBulkLoadRequest(bulk_load_id="0" * 32), grpc.StatusCode.NOT_FOUND),
        (chunker.CancelBulkLoad, chunker_pb2.CancelBulkLoadRequest(), grpc.StatusCode.INVALID_ARGUMENT),
        (chunker.ListBulkLoads, chunker_pb2.ListBulkLoadsRequest(limit=101), grpc.StatusCode.INVALID_ARGUMENT),
    ):
        with pytest.raises(grpc.RpcError) as caught:
            call(request, timeout=30)
        assert caught.value.code() == code and (
            "bulk load" in caught.value.details() or "between 0 and 100" in caught.value.details()
        )
    wrong_knob = cli(stack.env(), "load", *note_files, "--strategy", "fixed_size", "--knob", "fixed_size.size=3")
    assert wrong_knob.returncode == 2 and "fixed_size has no knob 'size'" in wrong_knob.stderr
    two_values = cli(
        stack.env(), "load", *note_files, "--strategy", "fixed_size", "--knob", "fixed_size.chunk_size=16,32"
    )
    assert two_values.returncode == 2 and "give one value" in two_values.stderr
    missing = cli(stack.env(), "load", "no-such-file.md", "--strategy", "fixed_size")
    assert missing.returncode == 2 and "no such file: no-such-file.md" in missing.stderr


@pytest.mark.e2e
def test_with_redis_the_jobs_are_shared_by_the_workers_of_two_chunker_replicas(tmp_path, note_files):
    redis_server = RedisServer(tmp_path)
    stack = Stack(
        data_dir=tmp_path / "stack", extra_env={"CHUNKLAB_BROKER_URL": redis_server.url, "CHUNKLAB_BULK_WORKERS": "0"}
    )
    try:
        stack.start()
        replicas = []
        for i in range(2):  # chunker replicas that take bulk-load jobs; the first chunker takes none
            env = stack.env()
            env.update(CHUNKLAB_CHUNKER_ADDRESS="127.0.0.1:0", CHUNKLAB_BULK_WORKERS="1")
            address = stack._spawn(f"chunker-replica-{i}", "services.chunker", env, "listening on", 120)
            wait_serving(address, 120)
            replicas.append(stack.processes[f"chunker-replica-{i}"].pid)
        ingest_env = stack.env()
        ids = []
        for name in note_files:
            for copy in range(3):  # six documents
                path = tmp_path / f"{copy}-{os.path.basename(name)}"
                path.write_text(Path(name).read_text() + f"\nCopy {copy}.\n")
                ids.append(str(path))
        done = cli(ingest_env, "load", *ids, "--strategy", "fixed_size", "--json")
        assert done.returncode == 0, done.stderr
        outcome = json.loads(done.stdout)
        assert outcome["broker"] == f"Redis at 127.0.0.1:{redis_server.port}/0"
        assert outcome["jobs_finished"] == 6
        pids = {int(row["worker"].split(":")[1]) for row in outcome["documents"]}
        assert pids <= set(replicas) and len(pids) == 2, pids
    finally:
        stack.stop()
        redis_server.stop()
