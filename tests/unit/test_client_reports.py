"""Reports written by the client library as GetReport streams them, against a fake
evaluator: piece by piece to the file the caller names (or into a folder under the
evaluator's name), nothing under the report's name unless the whole stream came."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest

from chunklab.client import ChunkLab, ClientError, report_path
from chunklab.v1 import evaluator_pb2
from tests.support.fake_stubs import FakeRpcError, settings

HEADER = evaluator_pb2.Report(
    experiment_id="e-1",
    file_name="chunklab-storms-e1234567.html",
    content_type="text/html; charset=utf-8",
    view=evaluator_pb2.REPORT_VIEW_TECHNICAL,
)
FILE = "<!DOCTYPE html><p>Stürme und Böen</p>\n".encode()
# Cut inside the ü: the pieces are bytes, the file is their concatenation.
PIECES = [FILE[:21], FILE[21:30], FILE[30:]]


class FakeEvaluator:
    """GetReport as the evaluator streams it; `fail_after` pieces it breaks off (or, with no header, refuses)."""

    def __init__(self, messages: list[evaluator_pb2.ReportPiece], fail_after: int | None = None):
        self.messages = messages
        self.fail_after = fail_after
        self.calls: list[tuple[evaluator_pb2.GetReportRequest, float]] = []

    def GetReport(self, request, timeout):
        self.calls.append((request, timeout))
        for n, message in enumerate(self.messages):
            if n == self.fail_after:
                raise FakeRpcError(grpc.StatusCode.UNAVAILABLE, "the evaluator is stopping")
            yield message
        if self.fail_after == len(self.messages):
            raise FakeRpcError(grpc.StatusCode.FAILED_PRECONDITION, "experiment e-1 is still running")


def streamed(*pieces: bytes) -> list[evaluator_pb2.ReportPiece]:
    return [evaluator_pb2.ReportPiece(header=HEADER), *(evaluator_pb2.ReportPiece(data=p) for p in pieces)]


def client_with(fake: FakeEvaluator) -> ChunkLab:
    client = ChunkLab(settings())
    client._stubs["evaluator"] = fake
    return client


def test_a_report_target_that_is_a_folder_or_has_no_html_ending_is_a_folder(tmp_path):
    """The README's `--report reports/` writes reports/<name>.html, never a file called reports."""
    name = "chunklab-run-e1234567.html"
    assert report_path("reports/", name) == Path("reports") / name
    assert report_path("reports", name) == Path("reports") / name
    assert report_path(str(tmp_path), name) == tmp_path / name
    assert report_path(tmp_path / "mine.html", name) == tmp_path / "mine.html"


def test_a_report_is_written_piece_by_piece_into_a_folder_under_the_evaluators_name(tmp_path):
    fake = FakeEvaluator(streamed(*PIECES))
    saved = client_with(fake).write_report("e-1", f"{tmp_path}/out/", evaluator_pb2.REPORT_VIEW_TECHNICAL)
    assert saved.path == tmp_path / "out" / "chunklab-storms-e1234567.html"
    assert saved.path.read_bytes() == FILE
    assert saved.path.read_text(encoding="utf-8") == "<!DOCTYPE html><p>Stürme und Böen</p>\n"
    assert (saved.size_bytes, saved.pieces, saved.report.view) == (len(FILE), 3, evaluator_pb2.REPORT_VIEW_TECHNICAL)
    assert [p.name for p in saved.path.parent.iterdir()] == [saved.path.name]  # no .part left behind
    ((request, timeout),) = fake.calls
    assert (request.experiment_id, request.view, timeout) == ("e-1", evaluator_pb2.REPORT_VIEW_TECHNICAL, 700)


def test_a_report_that_breaks_off_leaves_the_file_that_was_there(tmp_path):
    target = tmp_path / "mine.html"
    target.write_text("the report of yesterday")
    fake = FakeEvaluator(streamed(*PIECES), fail_after=2)  # the header and one piece came
    with pytest.raises(ClientError, match=r"^evaluator service: UNAVAILABLE: the evaluator is stopping$"):
        client_with(fake).write_report("e-1", target)
    assert target.read_text() == "the report of yesterday"
    assert [p.name for p in tmp_path.iterdir()] == ["mine.html"]


def test_a_report_that_is_not_ready_says_why_and_makes_no_folder(tmp_path):
    fake = FakeEvaluator([], fail_after=0)
    with pytest.raises(ClientError) as caught:
        client_with(fake).write_report("e-1", tmp_path / "new" / "r.html")
    assert caught.value.message == "evaluator service: FAILED_PRECONDITION: experiment e-1 is still running"
    assert not (tmp_path / "new").exists()


def test_a_stream_that_breaks_the_contract_is_refused_by_name(tmp_path):
    headless = FakeEvaluator([evaluator_pb2.ReportPiece(data=b"<!DOCTYPE html>")])
    with pytest.raises(ClientError, match="did not start with its header"):
        client_with(headless).write_report("e-1", tmp_path)
    twice = FakeEvaluator(streamed(b"<!DOCTYPE html>") + [evaluator_pb2.ReportPiece(header=HEADER)])
    with pytest.raises(ClientError, match="a second header in the middle of a report"):
        client_with(twice).write_report("e-1", tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_a_report_that_cannot_be_written_names_the_path(tmp_path):
    (tmp_path / "taken").write_text("a file, not a folder")
    with pytest.raises(ClientError, match=r"^cannot write the report to .*taken/r\.html: ") as caught:
        client_with(FakeEvaluator(streamed(*PIECES))).write_report("e-1", tmp_path / "taken" / "r.html")
    assert caught.value.service == ""  # nothing the evaluator did: the CLI exits 2, not 3
