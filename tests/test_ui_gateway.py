"""The gateway's calls to the evaluator and the retriever's freshness RPCs,
against fake stubs: what is sent, with which deadline, and how a failure
reads (no server, no browser)."""

from __future__ import annotations

import grpc
import pytest

from chunklab.v1 import evaluator_pb2, retriever_pb2
from frontend.freshness_html import parse_as_of
from frontend.gateway import UPLOAD_PIECE_BYTES, Gateway, GatewayError
from tests.test_frontend_logic import FakeRpcError, settings


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

    def GetReport(self, request, timeout):
        raise FakeRpcError(grpc.StatusCode.FAILED_PRECONDITION, "experiment e-1 is still running")

    def CancelExperiment(self, request, timeout):
        self.calls.append(("CancelExperiment", request, timeout))
        raise FakeRpcError(grpc.StatusCode.FAILED_PRECONDITION,
                           f"experiment {request.experiment_id} is succeeded: only a queued or running experiment "
                           "can be cancelled")

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
                documents=[retriever_pb2.SweptDocument(document_id="a")], next_page_token="p2")
        return retriever_pb2.ListArchivedDocumentsResponse(documents=[retriever_pb2.SweptDocument(document_id="b")])


def gateway_with(**stubs) -> Gateway:
    gateway = Gateway(settings())
    gateway._stubs.update(stubs)
    return gateway


def test_a_question_file_is_streamed_with_its_format_and_document_mapping(tmp_path):
    path = tmp_path / "questions.csv"
    data = b"question\n" + b"x" * (UPLOAD_PIECE_BYTES + 5)
    path.write_bytes(data)
    fake = FakeEvaluator()
    imported = gateway_with(evaluator=fake).import_question_set(str(path), "", {"sotu": "d-1"})
    (_, messages, timeout), = fake.calls
    header, *pieces = messages
    assert header.header.name == "questions.csv" == imported.name
    assert header.header.format == evaluator_pb2.QUESTION_SET_FORMAT_CSV
    assert dict(header.header.document_ids) == {"sotu": "d-1"}
    assert b"".join(p.data for p in pieces) == data and len(pieces) == 2
    assert timeout == 700  # references are located in long documents: the long deadline


def test_an_answer_that_fails_midway_keeps_what_came_and_then_reads_as_a_sentence():
    fake = FakeEvaluator()
    events = gateway_with(evaluator=fake).answer(evaluator_pb2.AnswerRequest(question="why?"))
    assert next(events).context.query_id == "q"
    assert next(events).delta == "Fog "
    with pytest.raises(GatewayError, match=r"^evaluator service: UNAVAILABLE: the answer model failed: 503$"):
        next(events)
    assert fake.calls[0][2] == 700


def test_a_dry_run_takes_the_short_deadline_and_a_run_the_long_one():
    fake = FakeEvaluator()
    gateway = gateway_with(evaluator=fake)
    list(gateway.run_experiment(evaluator_pb2.ExperimentConfig(name="x"), dry_run=True))
    list(gateway.run_experiment(evaluator_pb2.ExperimentConfig(name="x")))
    assert [(c[1].dry_run, c[2]) for c in fake.calls] == [(True, 7), (False, 700)]


def test_a_resume_names_the_experiment_and_carries_only_the_keys_it_is_given():
    fake = FakeEvaluator()
    gateway = gateway_with(evaluator=fake)
    list(gateway.resume_experiment("e-1", answer_api_key=" sk-a ", judge_api_key=""))
    (name, request, timeout), = fake.calls
    assert (name, request.resume_experiment_id, timeout) == ("RunExperiment", "e-1", 700)
    assert request.config.answer_model.api_key == "sk-a" and not request.config.HasField("judge_model")
    assert not request.config.question_set_id and not request.config.strategies  # the stored config applies


def test_cancelling_a_finished_experiment_reads_as_the_evaluators_reason():
    fake = FakeEvaluator()
    with pytest.raises(GatewayError) as caught:
        gateway_with(evaluator=fake).cancel_experiment("e-1")
    assert (fake.calls[0][1].experiment_id, fake.calls[0][2]) == ("e-1", 7)
    assert caught.value.message.endswith("only a queued or running experiment can be cancelled")


def test_deleting_a_question_set_in_use_reads_as_the_evaluators_reason():
    fake = FakeEvaluator()
    with pytest.raises(GatewayError) as caught:
        gateway_with(evaluator=fake).delete_question_set("qs-1")
    assert fake.calls[0][1].question_set_id == "qs-1" and fake.calls[0][2] == 7
    assert "is used by experiment(s) e-1" in caught.value.message


def test_how_a_document_is_indexed_is_asked_with_the_configured_model_and_none_when_it_is_not():
    fake = FakeRetriever()
    gateway = gateway_with(retriever=fake)
    assert gateway.indexed_set("d-1", "fixed_size").config_id == "c1"
    assert gateway.indexed_set("d-1", "recursive") is None
    assert [c[1].key.embedding_model for c in fake.calls] == [gateway.settings.embedding_model] * 2
    assert [c[1].key.config_id for c in fake.calls] == ["", ""]  # the active set


def test_a_report_that_is_not_ready_says_why():
    with pytest.raises(GatewayError) as caught:
        gateway_with(evaluator=FakeEvaluator()).get_report("e-1", evaluator_pb2.REPORT_VIEW_BOTH)
    assert caught.value.message == "evaluator service: FAILED_PRECONDITION: experiment e-1 is still running"


def test_sweeps_pass_the_dry_run_and_as_of_and_archived_lists_follow_pages():
    fake = FakeRetriever()
    gateway = gateway_with(retriever=fake)
    assert gateway.sweep(dry_run=True, as_of=parse_as_of("2030-01-31")).dry_run
    gateway.sweep(dry_run=False)
    (_, dry, _), (_, real, timeout) = fake.calls
    assert dry.dry_run and dry.HasField("as_of") and not real.dry_run and not real.HasField("as_of")
    assert timeout == 700
    assert [d.document_id for d in gateway.list_archived_documents()] == ["a", "b"]


class PagedEvaluator:
    """Two pages of experiments and one of question sets."""

    def __init__(self):
        self.tokens: list[str] = []

    def ListExperiments(self, request, timeout):
        self.tokens.append(request.page_token)
        if not request.page_token:
            return evaluator_pb2.ListExperimentsResponse(
                experiments=[evaluator_pb2.Experiment(experiment_id="e1")], next_page_token="next")
        return evaluator_pb2.ListExperimentsResponse(experiments=[evaluator_pb2.Experiment(experiment_id="e2")])

    def ListQuestionSets(self, request, timeout):
        return evaluator_pb2.ListQuestionSetsResponse(question_sets=[evaluator_pb2.QuestionSet(name="qs")])


def test_lists_follow_every_page():
    evaluator = PagedEvaluator()
    gateway = gateway_with(evaluator=evaluator)
    assert [e.experiment_id for e in gateway.list_experiments()] == ["e1", "e2"]
    assert evaluator.tokens == ["", "next"]
    assert [q.name for q in gateway.list_question_sets()] == ["qs"]
