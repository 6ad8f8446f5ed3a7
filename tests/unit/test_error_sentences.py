"""The cases ADR 0079 fixed: a person reads a sentence in our words, the log has the library's.

The general rule (no exception text of a library formatted outside the log) is
tests/contract/test_no_exception_text_to_clients.py; these are the behaviours behind it.
"""

from __future__ import annotations

import logging

import grpc
import pytest

from chunklab.errors import InvalidArgument, NotFound, ServiceError, Unavailable, from_rpc_error, logged
from chunklab.v1 import evaluator_pb2
from services.evaluator.questions import question_sets
from services.evaluator.reports.service import ReportService
from tests.support.fake_stubs import FakeRpcError


@pytest.mark.parametrize(
    "data, said, library",
    [
        (
            b"question\n" + b"x" * 200_000 + b"\n",
            "line 2: unreadable CSV (a field is over 131,072 characters)",
            "field larger than field limit",
        ),
    ],
)
def test_a_csv_the_csv_module_refuses_is_told_in_our_words_naming_the_line(data, said, library):
    with pytest.raises(InvalidArgument) as caught:
        question_sets.read_csv(data)
    assert caught.value.message == said
    assert library not in caught.value.message


def test_a_jsonl_line_that_is_not_json_names_the_line_and_column_not_the_parsers_words():
    with pytest.raises(InvalidArgument) as caught:
        question_sets.read_jsonl(b'{"question": "fine"}\n{"question": oops}\n')
    assert caught.value.message == "line 2: not a JSON object (not valid JSON at column 14)"


def test_a_peer_out_of_reach_is_said_in_our_words_and_grpcs_go_to_the_log(caplog):
    transport = (
        "failed to connect to all addresses; last error: UNKNOWN: ipv4:127.0.0.1:50053: "
        "Failed to connect to remote host: Connection refused"
    )
    with caplog.at_level(logging.WARNING, logger="chunklab.errors"):
        error = from_rpc_error(FakeRpcError(grpc.StatusCode.UNAVAILABLE, transport), "retriever")
        slow = from_rpc_error(FakeRpcError(grpc.StatusCode.DEADLINE_EXCEEDED, "Deadline Exceeded"), "retriever")
    assert isinstance(error, Unavailable) and isinstance(slow, Unavailable)
    assert error.message == (
        "the retriever service is unreachable or too slow (UNAVAILABLE): check that it is "
        "running and that its address is right, then try again"
    )
    assert "Deadline Exceeded" not in slow.message and "DEADLINE_EXCEEDED" in slow.message
    assert "Connection refused" in caplog.text and "Deadline Exceeded" in caplog.text


def test_a_peers_own_unavailable_sentence_is_kept_and_never_read_as_not_found():
    said = "the retriever's database is locked by another writer; try again"
    error = from_rpc_error(FakeRpcError(grpc.StatusCode.UNAVAILABLE, said), "retriever")
    assert type(error) is Unavailable and not isinstance(error, NotFound)
    assert error.message == f"the retriever service is unreachable or too slow (UNAVAILABLE): {said}"
    for code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
        assert not isinstance(from_rpc_error(FakeRpcError(code, "Deadline Exceeded"), "ingest"), NotFound)


def test_logged_puts_the_exception_under_an_incident_id(caplog):
    log = logging.getLogger("tests.errors")
    try:
        raise OSError("disk said something internal")
    except OSError:
        with caplog.at_level(logging.ERROR, logger="tests.errors"):
            incident = logged(log, "the store failed")
    assert len(incident) == 12 and int(incident, 16) >= 0
    assert f"the store failed (incident {incident})" in caplog.text and "disk said something internal" in caplog.text


class _Sets:
    def __init__(self, error: ServiceError | None) -> None:
        self.error = error

    def get_question_set(self, set_id: str, with_questions: bool = True):
        if self.error is not None:
            raise self.error
        return evaluator_pb2.QuestionSet(question_set_id=set_id, name="town")


def _experiments(*set_ids: str) -> list[evaluator_pb2.Experiment]:
    return [evaluator_pb2.Experiment(config=evaluator_pb2.ExperimentConfig(question_set_id=s)) for s in set_ids]


def test_a_report_reads_only_not_found_as_a_deleted_question_set():
    names = ReportService(_Sets(None), 1024)._set_names(_experiments("qs-1"))
    assert names == {"qs-1": "town"}
    assert ReportService(_Sets(NotFound("no question set 'qs-1'")), 1024)._set_names(_experiments("qs-1")) == {}
    with pytest.raises(Unavailable, match="locked"):  # a database out of reach is no deleted set
        ReportService(_Sets(Unavailable("the database is locked")), 1024)._set_names(_experiments("qs-1"))
