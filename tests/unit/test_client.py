"""The client library against fake stubs: what each call sends, with which
deadline, how uploads and imports are streamed, how pages and streams are
followed, and how a failure reads (no server, no browser)."""

from __future__ import annotations

import grpc
import pytest
from google.protobuf.timestamp_pb2 import Timestamp

from chunklab.client import UPLOAD_PIECE_BYTES, ChunkLab, ClientError, experiment_outcome
from chunklab.v1 import chunker_pb2, common_pb2, documents_pb2, evaluator_pb2, ingest_pb2, retriever_pb2
from tests.support.fake_stubs import FakeRpcError, settings


class FakeIngest:
    def __init__(self):
        self.messages: list = []
        self.timeout = None

    def CreateDocument(self, requests, timeout):
        self.messages = list(requests)
        self.timeout = timeout
        header = self.messages[0].header
        return ingest_pb2.CreateDocumentResponse(document=documents_pb2.Document(name=header.name))

    def DeleteDocument(self, request, timeout):
        raise FakeRpcError(grpc.StatusCode.NOT_FOUND, f"no document {request.document_id!r}")


def test_upload_streams_a_header_then_pieces_of_at_most_one_mib(tmp_path):
    path = tmp_path / "big.md"
    data = b"x" * (2 * UPLOAD_PIECE_BYTES + 10)
    path.write_bytes(data)
    client = ChunkLab(settings())
    fake = client._stubs["ingest"] = FakeIngest()
    client.upload_document(str(path), " hr ")  # the collection second, as the Documents page passes it
    header, *pieces = fake.messages
    assert header.WhichOneof("part") == "header"
    assert (header.header.name, header.header.collection, header.header.size_bytes) == ("big.md", "hr", len(data))
    assert [len(p.data) for p in pieces] == [UPLOAD_PIECE_BYTES, UPLOAD_PIECE_BYTES, 10]
    assert b"".join(p.data for p in pieces) == data
    assert fake.timeout == 700  # a long PDF takes its time to read: the long deadline


def test_a_failed_call_becomes_a_readable_client_error():
    client = ChunkLab(settings())
    client._stubs["ingest"] = FakeIngest()
    with pytest.raises(ClientError) as caught:
        client.delete_document("nope")
    assert caught.value.message == "ingest service: NOT_FOUND: no document 'nope'"
    assert caught.value.code == grpc.StatusCode.NOT_FOUND


def test_a_stream_that_fails_midway_becomes_a_client_error_after_its_events():
    class FakeChunker:
        def ProcessDocument(self, request, timeout):
            assert timeout == 700  # processing takes the long deadline
            yield chunker_pb2.ProcessDocumentEvent(progress=chunker_pb2.StrategyProgress(strategy="fixed_size"))
            raise FakeRpcError(grpc.StatusCode.UNAVAILABLE, "retriever went away")

    client = ChunkLab(settings())
    client._stubs["chunker"] = FakeChunker()
    events = client.process_document("d1", [common_pb2.StrategySpec(name="fixed_size")])
    assert next(events).progress.strategy == "fixed_size"
    with pytest.raises(ClientError, match=r"^chunker service: UNAVAILABLE: retriever went away$"):
        next(events)


REACH = "check that it is running and that the address is right"


def test_unavailable_names_the_address_only_when_the_service_itself_is_not_reached():
    lost = FakeRpcError(grpc.StatusCode.UNAVAILABLE, "failed to connect to all addresses; Connection refused")
    slow = FakeRpcError(grpc.StatusCode.DEADLINE_EXCEEDED, "Deadline Exceeded")
    behind = FakeRpcError(grpc.StatusCode.UNAVAILABLE, "the answer model failed: the LLM is unreachable")
    messages = [ClientError.from_rpc_error("evaluator", "h:1", e).message for e in (lost, slow, behind)]
    assert messages == [
        f"The evaluator service at h:1 is unreachable or too slow (UNAVAILABLE): {REACH}",
        f"The evaluator service at h:1 is unreachable or too slow (DEADLINE_EXCEEDED): {REACH}",
        "evaluator service: UNAVAILABLE: the answer model failed: the LLM is unreachable",
    ]


def test_a_service_that_is_not_there_is_named_with_its_address():
    client = ChunkLab(settings().model_copy(update={"rpc_timeout_s": 0.3}))
    with pytest.raises(ClientError, match=r"^The ingest service at 127\.0\.0\.1:1 is unreachable or too slow"):
        client.list_documents()


class FakeEvaluator:
    def __init__(self):
        self.calls: list[tuple[str, object, float]] = []

    def ImportQuestionSet(self, requests, timeout):
        messages = list(requests)
        self.calls.append(("ImportQuestionSet", messages, timeout))
        return evaluator_pb2.QuestionSet(name=messages[0].header.name, question_count=2)

    def Answer(self, request, timeout):
        self.calls.append(("Answer", request, timeout))
        yield evaluator_pb2.AnswerEvent(context=evaluator_pb2.AnswerContext(query_id="q"))
        yield evaluator_pb2.AnswerEvent(delta="Fog ")
        raise FakeRpcError(grpc.StatusCode.UNAVAILABLE, "the answer model failed: 503")

    def RunExperiment(self, request, timeout):
        self.calls.append(("RunExperiment", request, timeout))
        yield evaluator_pb2.ExperimentEvent(estimate=evaluator_pb2.ExperimentEstimate(questions=2))

    def CancelExperiment(self, request, timeout):
        self.calls.append(("CancelExperiment", request, timeout))
        raise FakeRpcError(
            grpc.StatusCode.FAILED_PRECONDITION,
            f"experiment {request.experiment_id} is succeeded: only a queued or running experiment can be cancelled",
        )

    def DeleteQuestionSet(self, request, timeout):
        self.calls.append(("DeleteQuestionSet", request, timeout))
        raise FakeRpcError(grpc.StatusCode.FAILED_PRECONDITION, "question set 'storms' is used by experiment(s) e-1")


class FakeRetriever:
    def __init__(self):
        self.calls: list[tuple[str, object, float]] = []

    def GetIndexedSet(self, request, timeout):
        self.calls.append(("GetIndexedSet", request, timeout))
        if request.key.strategy != "fixed_size":
            raise FakeRpcError(grpc.StatusCode.NOT_FOUND, "not indexed")
        return retriever_pb2.IndexedSet(document_id=request.key.document_id, strategy="fixed_size", config_id="c1")

    def Sweep(self, request, timeout):
        self.calls.append(("Sweep", request, timeout))
        return retriever_pb2.SweepResponse(dry_run=request.dry_run)

    def ListArchivedDocuments(self, request, timeout):
        self.calls.append(("ListArchivedDocuments", request, timeout))
        if not request.page_token:
            return retriever_pb2.ListArchivedDocumentsResponse(
                documents=[retriever_pb2.SweptDocument(document_id="a")], next_page_token="p2"
            )
        return retriever_pb2.ListArchivedDocumentsResponse(documents=[retriever_pb2.SweptDocument(document_id="b")])


def client_with(**stubs) -> ChunkLab:
    client = ChunkLab(settings())
    client._stubs.update(stubs)
    return client


def test_a_question_file_is_streamed_with_its_format_and_document_mapping(tmp_path):
    path = tmp_path / "questions.csv"
    data = b"question\n" + b"x" * (UPLOAD_PIECE_BYTES + 5)
    path.write_bytes(data)
    fake = FakeEvaluator()
    imported = client_with(evaluator=fake).import_question_set(str(path), "", {"sotu": "d-1"})
    ((_, messages, timeout),) = fake.calls
    header, *pieces = messages
    assert header.header.name == "questions.csv" == imported.name
    assert header.header.format == evaluator_pb2.QUESTION_SET_FORMAT_CSV
    assert dict(header.header.document_ids) == {"sotu": "d-1"}
    assert b"".join(p.data for p in pieces) == data and len(pieces) == 2
    assert timeout == 700  # references are located in long documents: the long deadline


def test_an_answer_that_fails_midway_keeps_what_came_and_then_reads_as_a_sentence():
    fake = FakeEvaluator()
    events = client_with(evaluator=fake).answer(evaluator_pb2.AnswerRequest(question="why?"))
    assert next(events).context.query_id == "q"
    assert next(events).delta == "Fog "
    with pytest.raises(ClientError, match=r"^evaluator service: UNAVAILABLE: the answer model failed: 503$"):
        next(events)
    assert fake.calls[0][2] == 700


def test_a_dry_run_takes_the_short_deadline_and_a_run_the_long_one():
    fake = FakeEvaluator()
    client = client_with(evaluator=fake)
    list(client.run_experiment(evaluator_pb2.ExperimentConfig(name="x"), dry_run=True))
    list(client.run_experiment(evaluator_pb2.ExperimentConfig(name="x")))
    assert [(c[1].dry_run, c[2]) for c in fake.calls] == [(True, 7), (False, 700)]


def test_a_resume_names_the_experiment_and_carries_only_the_keys_it_is_given():
    fake = FakeEvaluator()
    client = client_with(evaluator=fake)
    list(client.resume_experiment("e-1", answer_api_key=" sk-a ", judge_api_key=""))
    ((name, request, timeout),) = fake.calls
    assert (name, request.resume_experiment_id, timeout) == ("RunExperiment", "e-1", 700)
    assert request.config.answer_model.api_key == "sk-a" and not request.config.HasField("judge_model")
    assert not request.config.question_set_id and not request.config.strategies  # the stored config applies


def test_cancelling_a_finished_experiment_reads_as_the_evaluators_reason():
    fake = FakeEvaluator()
    with pytest.raises(ClientError) as caught:
        client_with(evaluator=fake).cancel_experiment("e-1")
    assert (fake.calls[0][1].experiment_id, fake.calls[0][2]) == ("e-1", 7)
    assert caught.value.message.endswith("only a queued or running experiment can be cancelled")


class StoppingEvaluator:
    """An experiment stored as running for its first `running` reads, then as interrupted."""

    def __init__(self, running: int):
        self.running, self.reads = running, []

    def GetExperiment(self, request, timeout):
        self.reads.append(request)
        stopped = len(self.reads) > self.running
        state = evaluator_pb2.EXPERIMENT_STATE_INTERRUPTED if stopped else evaluator_pb2.EXPERIMENT_STATE_RUNNING
        return evaluator_pb2.Experiment(experiment_id=request.experiment_id, state=state)


def test_a_cancelled_study_is_read_until_it_has_stopped_and_no_longer_than_told():
    fake = StoppingEvaluator(running=2)
    reads = list(client_with(evaluator=fake).follow_until_stopped("e-1", interval_s=0))
    states = [r.state for r in reads]
    assert states == [evaluator_pb2.EXPERIMENT_STATE_RUNNING] * 2 + [evaluator_pb2.EXPERIMENT_STATE_INTERRUPTED]
    assert all(r.without_results for r in fake.reads)  # its results are not read
    slow = StoppingEvaluator(running=1_000)
    (still,) = client_with(evaluator=slow).follow_until_stopped("e-2", timeout=0, interval_s=0)
    assert still.state == evaluator_pb2.EXPERIMENT_STATE_RUNNING and len(slow.reads) == 1


def test_deleting_a_question_set_in_use_reads_as_the_evaluators_reason():
    fake = FakeEvaluator()
    with pytest.raises(ClientError) as caught:
        client_with(evaluator=fake).delete_question_set("qs-1")
    assert fake.calls[0][1].question_set_id == "qs-1" and fake.calls[0][2] == 7
    assert "is used by experiment(s) e-1" in caught.value.message


def test_how_a_document_is_indexed_is_asked_with_the_configured_model_and_none_when_it_is_not():
    fake = FakeRetriever()
    client = client_with(retriever=fake)
    assert client.indexed_set("d-1", "fixed_size").config_id == "c1"
    assert client.indexed_set("d-1", "recursive") is None
    assert [c[1].key.embedding_model for c in fake.calls] == [client.settings.embedding_model] * 2
    assert [c[1].key.config_id for c in fake.calls] == ["", ""]  # the active set


def test_sweeps_pass_the_dry_run_and_as_of_and_archived_lists_follow_pages():
    fake = FakeRetriever()
    client = client_with(retriever=fake)
    assert client.sweep(dry_run=True, as_of=Timestamp(seconds=1_896_048_000)).dry_run
    client.sweep(dry_run=False)
    (_, dry, _), (_, real, timeout) = fake.calls
    assert dry.dry_run and dry.HasField("as_of") and not real.dry_run and not real.HasField("as_of")
    assert timeout == 700
    assert [d.document_id for d in client.list_archived_documents()] == ["a", "b"]


class PagedEvaluator:
    """Two pages of experiments and one of question sets."""

    def __init__(self):
        self.tokens: list[str] = []

    def ListExperiments(self, request, timeout):
        self.tokens.append(request.page_token)
        if not request.page_token:
            return evaluator_pb2.ListExperimentsResponse(
                experiments=[evaluator_pb2.Experiment(experiment_id="e1")], next_page_token="next"
            )
        return evaluator_pb2.ListExperimentsResponse(experiments=[evaluator_pb2.Experiment(experiment_id="e2")])

    def ListQuestionSets(self, request, timeout):
        return evaluator_pb2.ListQuestionSetsResponse(question_sets=[evaluator_pb2.QuestionSet(name="qs")])


def test_lists_follow_every_page():
    evaluator = PagedEvaluator()
    client = client_with(evaluator=evaluator)
    assert [e.experiment_id for e in client.list_experiments()] == ["e1", "e2"]
    assert evaluator.tokens == ["", "next"]
    assert [q.name for q in client.list_question_sets()] == ["qs"]


# -- the calls callers share: bytes, paging, following streams ---------------------


def test_bytes_upload_under_their_name_in_the_pieces_asked_for_and_nameless_bytes_are_refused():
    fake = FakeIngest()
    client = client_with(ingest=fake)
    client.upload_document(b"hello world", name="notes.md", language=" EN ", piece_bytes=4)
    header, *pieces = fake.messages
    assert (header.header.name, header.header.language, header.header.size_bytes) == ("notes.md", "en", 11)
    assert [p.data for p in pieces] == [b"hell", b"o wo", b"rld"]
    fake.messages = []
    with pytest.raises(ClientError) as caught:
        client.upload_document(b"hello")
    assert caught.value.message == "give the uploaded file a file name (e.g. notes.md): bytes carry none"
    with pytest.raises(ClientError, match=r"^pieces are 1 to 1048576 bytes \(the contract's limit\), not 0$"):
        client.upload_document(b"hello", name="notes.md", piece_bytes=0)
    assert fake.messages == []  # nothing was sent


def test_a_file_that_is_not_there_is_refused_before_any_call(tmp_path):
    fake = FakeEvaluator()
    client = client_with(evaluator=fake, ingest=FakeIngest())
    with pytest.raises(ClientError) as caught:
        client.upload_document(tmp_path / "gone.md")
    assert caught.value.message == "cannot read the uploaded file 'gone.md': No such file or directory"
    with pytest.raises(ClientError) as caught:
        client.import_question_set(tmp_path)
    assert caught.value.message == f"cannot read the question file {tmp_path.name!r}: it is not a file"
    assert fake.calls == []


def test_a_question_set_named_apart_from_its_file_keeps_the_files_format(tmp_path):
    path = tmp_path / "storms.jsonl"
    path.write_bytes(b'{"question": "why?"}\n')
    fake = FakeEvaluator()
    client = client_with(evaluator=fake)
    client.import_question_set(path, name="storm questions")
    client.import_question_set(b"question\nwhy?\n", name="inline.csv", piece_bytes=5)
    (_, from_path, _), (_, from_bytes, _) = fake.calls
    assert (from_path[0].header.name, from_path[0].header.format) == (
        "storm questions",
        evaluator_pb2.QUESTION_SET_FORMAT_JSONL,
    )
    assert (from_bytes[0].header.name, from_bytes[0].header.format) == (
        "inline.csv",
        evaluator_pb2.QUESTION_SET_FORMAT_CSV,
    )
    assert [m.data for m in from_bytes[1:]] == [b"quest", b"ion\nw", b"hy?\n"]


def test_a_client_at_a_stacks_addresses_keeps_the_other_settings():
    client = ChunkLab.at({"ingest": "127.0.0.1:7001", "evaluator": "127.0.0.1:7004"}, settings())
    assert [client.address(s) for s in ("ingest", "chunker", "retriever", "evaluator")] == [
        "127.0.0.1:7001",
        "127.0.0.1:2",
        "127.0.0.1:3",
        "127.0.0.1:7004",
    ]
    assert client.settings.rpc_timeout_s == 7 and client._stubs == {}
    with pytest.raises(ClientError) as caught:
        ChunkLab.at({"ui": "127.0.0.1:7860"}, settings())
    assert caught.value.message == "no ChunkLab service is called ui; they are ingest, chunker, retriever, evaluator"


def test_document_lists_follow_every_page_with_their_filters():
    class PagedIngest:
        def __init__(self):
            self.requests = []

        def ListDocuments(self, request, timeout):
            self.requests.append(request)
            number = len(self.requests)
            return ingest_pb2.ListDocumentsResponse(
                documents=[documents_pb2.Document(document_id=f"d{number}")],
                next_page_token="" if number == 3 else f"after-{number}",
            )

    fake = PagedIngest()
    assert [d.document_id for d in client_with(ingest=fake).list_documents(collection="hr")] == ["d1", "d2", "d3"]
    assert [(r.collection, r.page_size, r.page_token) for r in fake.requests] == [
        ("hr", 1000, ""),
        ("hr", 1000, "after-1"),
        ("hr", 1000, "after-2"),
    ]


class FakeChunker:
    """ProcessDocument with or without its result; a bulk load of two jobs that
    finishes one job per poll."""

    def __init__(self, with_result: bool = True):
        self.with_result = with_result
        self.polls = 0

    def ProcessDocument(self, request, timeout):
        yield chunker_pb2.ProcessDocumentEvent(progress=chunker_pb2.StrategyProgress(strategy="fixed_size"))
        if self.with_result:
            outcome = chunker_pb2.StrategyOutcome(strategy="fixed_size", chunk_count=3)
            yield chunker_pb2.ProcessDocumentEvent(
                result=chunker_pb2.ProcessDocumentResult(
                    document_id=request.document_id, strategies_completed=[outcome]
                )
            )

    def GetBulkLoad(self, request, timeout):
        done = min(self.polls, 2)
        self.polls += 1
        return chunker_pb2.BulkLoad(
            bulk_load_id=request.bulk_load_id,
            jobs_total=2,
            results=[chunker_pb2.BulkLoadJobResult(document_id=f"d{i}") for i in range(done)],
        )


def test_processing_returns_the_result_and_a_stream_without_one_reads_as_a_sentence():
    spec = [common_pb2.StrategySpec(name="fixed_size")]
    result = client_with(chunker=FakeChunker()).process("d1", spec)
    assert (result.document_id, [(o.strategy, o.chunk_count) for o in result.strategies_completed]) == (
        "d1",
        [("fixed_size", 3)],
    )
    with pytest.raises(ClientError) as caught:
        client_with(chunker=FakeChunker(with_result=False)).process("d1", spec)
    assert caught.value.message == "The chunker ended the processing stream without a result; see its log."


def test_following_a_bulk_load_polls_until_every_job_has_finished_or_the_time_is_up():
    fake = FakeChunker()
    seen = [len(load.results) for load in client_with(chunker=fake).follow_bulk_load("b1", interval_s=0)]
    assert seen == [0, 1, 2] and fake.polls == 3
    assert [len(load.results) for load in client_with(chunker=FakeChunker()).follow_bulk_load("b1", timeout=0)] == [0]


def test_an_experiments_outcome_keeps_its_estimate_and_experiment_and_tells_each_progress():
    events = [
        evaluator_pb2.ExperimentEvent(estimate=evaluator_pb2.ExperimentEstimate(questions=2, runs=1)),
        evaluator_pb2.ExperimentEvent(progress=evaluator_pb2.ExperimentProgress(questions_done=1, questions_total=2)),
        evaluator_pb2.ExperimentEvent(progress=evaluator_pb2.ExperimentProgress(questions_done=2, questions_total=2)),
        evaluator_pb2.ExperimentEvent(experiment=evaluator_pb2.Experiment(experiment_id="e-9")),
    ]
    progress: list[tuple[int, int]] = []
    outcome = experiment_outcome(events, lambda p: progress.append((p.questions_done, p.questions_total)))
    assert (outcome.estimate.questions, outcome.experiment.experiment_id) == (2, "e-9")
    assert progress == [(1, 2), (2, 2)]
    assert experiment_outcome(events[:1]).experiment is None


def test_index_sets_are_activated_pinned_and_deleted_by_their_whole_key():
    class SetRetriever:
        def __init__(self):
            self.calls = []

        def ActivateIndexedSet(self, request, timeout):
            self.calls.append(("activate", request.key))
            return retriever_pb2.IndexedSet(config_id=request.key.config_id, active=True)

        def PinIndexedSet(self, request, timeout):
            self.calls.append(("pin" if request.pinned else "unpin", request.key))
            return retriever_pb2.IndexedSet(config_id=request.key.config_id, pinned=request.pinned)

        def DeleteIndexedSet(self, request, timeout):
            self.calls.append(("delete", request.key))
            return retriever_pb2.DeleteIndexedSetResponse(chunks_deleted=12)

    fake = SetRetriever()
    client = client_with(retriever=fake)
    assert client.activate_indexed_set("d1", "fixed_size", "c256").active
    assert client.pin_indexed_set("d1", "fixed_size", "c256").pinned
    assert not client.pin_indexed_set("d1", "fixed_size", "c256", pinned=False).pinned
    assert client.delete_indexed_set("d1", "fixed_size", "c512", embedding_model="multilingual-e5-small") == 12
    model = client.settings.embedding_model
    assert [(verb, k.embedding_model, k.document_id, k.strategy, k.config_id) for verb, k in fake.calls] == [
        ("activate", model, "d1", "fixed_size", "c256"),
        ("pin", model, "d1", "fixed_size", "c256"),
        ("unpin", model, "d1", "fixed_size", "c256"),
        ("delete", "multilingual-e5-small", "d1", "fixed_size", "c512"),
    ]
