"""Ingest through gRPC: DOCX and PDF uploads, early refusal of an oversize
upload and of a hostile PDF, listing, and concurrent uploads of the same bytes."""

from __future__ import annotations

import io
from concurrent.futures import ThreadPoolExecutor

import docx
import grpc
import pytest

from chunklab.client import ClientError
from chunklab.rpc import channels
from chunklab.v1 import documents_pb2, ingest_pb2
from tests.support import pdfs
from tests.support.hand_pdfs import bomb_pdf, zeros_deflated

pytestmark = pytest.mark.e2e


def handbook_docx() -> bytes:
    document = docx.Document()
    document.core_properties.author = "Grace Hopper"
    document.add_heading("Travel policy", 0)
    document.add_heading("Booking", 1)
    document.add_paragraph("Book trains when the trip is under five hours.")
    document.add_heading("Expenses", 1)
    document.add_paragraph("Keep every receipt.", style="List Bullet")
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def upload(stack, name: str, data: bytes, collection: str = "") -> ingest_pb2.CreateDocumentResponse:
    return stack.client().upload_document(data, name=name, collection=collection)


def test_a_docx_uploads_through_grpc_into_its_heading_tree(stack):
    response = upload(stack, "travel.docx", handbook_docx(), collection="policies")
    document = channels.ingest(stack.addresses["ingest"]).GetDocument(
        ingest_pb2.GetDocumentRequest(document_id=response.document.document_id, view=documents_pb2.DOCUMENT_VIEW_FULL),
        timeout=10,
    )
    assert document.format == documents_pb2.DOCUMENT_FORMAT_DOCX
    assert document.text == (
        "# Travel policy\n\n## Booking\n\nBook trains when the trip is under five hours.\n\n"
        "## Expenses\n\n- Keep every receipt."
    )
    sections = document.tree.root.children[0].children
    assert [list(s.heading_path) for s in sections if s.kind == documents_pb2.NODE_KIND_SECTION] == [
        ["Travel policy", "Booking"],
        ["Travel policy", "Expenses"],
    ]
    assert document.metadata["author"] == "Grace Hopper"
    assert (document.collection, document.language) == ("policies", "en")


def test_a_pdf_uploads_through_grpc_with_the_page_of_every_node(stack):
    response = upload(stack, "layout.pdf", pdfs.layout_sample().data, collection="pdfs")
    document = channels.ingest(stack.addresses["ingest"]).GetDocument(
        ingest_pb2.GetDocumentRequest(document_id=response.document.document_id, view=documents_pb2.DOCUMENT_VIEW_FULL),
        timeout=10,
    )
    assert document.format == documents_pb2.DOCUMENT_FORMAT_PDF
    starts = list(document.tree.page_starts)
    assert [document.text[s:].split("\n")[0] for s in starts] == [
        "# Layout sample",
        "## Two columns",
        "## A table",
        "## A list",
    ]
    title = document.tree.root.children[0]
    assert [
        (s.title, s.first_page, s.last_page) for s in title.children if s.kind == documents_pb2.NODE_KIND_SECTION
    ] == [("Two columns", 2, 2), ("A table", 3, 3), ("A list", 4, 4)]
    assert document.metadata["pages"] == "4" and document.metadata["author"] == "Layout Team"
    assert document.published_at.ToDatetime().date().isoformat() == pdfs.CREATED.date().isoformat()
    # The upload's answer and the read both carry the parse report: its pages and its headings.
    for report in (response.document.parse_report, document.parse_report):
        assert report.pages == 4 and report.headings >= 4 and list(report.warnings) == []


def test_an_upload_declared_over_the_limit_is_refused_before_its_bytes_arrive(stack):
    # Messages made by hand: the client library always declares the true size.
    header = ingest_pb2.UploadHeader(name="huge.md", size_bytes=80_000_000)
    messages = [ingest_pb2.CreateDocumentRequest(header=header), ingest_pb2.CreateDocumentRequest(data=b"small")]
    with pytest.raises(grpc.RpcError) as err:
        channels.ingest(stack.addresses["ingest"]).CreateDocument(iter(messages), timeout=60)
    assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "CHUNKLAB_MAX_UPLOAD_MB" in err.value.details()


def test_a_refused_docx_gets_its_status_through_grpc(stack):
    with pytest.raises(ClientError) as err:
        upload(stack, "cut.docx", handbook_docx()[:2000])
    assert err.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert "corrupt or truncated" in err.value.details


def test_a_pdf_bomb_gets_its_status_through_grpc_and_nothing_is_stored(stack):
    collection = "pdf-bombs"
    with pytest.raises(ClientError) as err:
        upload(stack, "bomb.pdf", bomb_pdf(zeros_deflated(1024)), collection=collection)
    assert err.value.code == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert err.value.details == (
        "'bomb.pdf' is refused as a decompression bomb: the stream of object 4 inflates to more than 100 MB "
        "(the limit for one stream inside a PDF)"
    )
    assert stack.client().list_documents(collection=collection) == []


def test_concurrent_uploads_of_the_same_bytes_give_one_document(stack):
    data = b"# Concurrency\n\nEight clients upload these same bytes at once.\n"
    with ThreadPoolExecutor(8) as pool:
        responses = list(pool.map(lambda i: upload(stack, f"same{i}.md", data), range(8)))
    assert len({r.document.document_id for r in responses}) == 1
    assert sum(not r.already_existed for r in responses) == 1


def test_list_filters_by_collection_and_language(stack):
    upload(
        stack,
        "nieuws.txt",
        b"De trein naar Amsterdam vertrekt elk uur vanaf het centraal station.",
        collection="nieuws",
    )
    listed = channels.ingest(stack.addresses["ingest"]).ListDocuments(
        ingest_pb2.ListDocumentsRequest(collection="nieuws", language="nl"), timeout=10
    )
    assert [d.name for d in listed.documents] == ["nieuws.txt"] and listed.total_size == 1
    report = listed.documents[0].parse_report
    assert (report.paragraphs, report.headings, report.reader) == (1, 0, "plain text, paragraphs at blank lines")


def test_a_saved_web_page_uploads_through_grpc_without_its_navigation(stack):
    from tests.support.saved_page import SAVED_PAGE, SAVED_PAGE_TEXT

    response = upload(stack, "leave.html", SAVED_PAGE, collection="policies")
    document = channels.ingest(stack.addresses["ingest"]).GetDocument(
        ingest_pb2.GetDocumentRequest(document_id=response.document.document_id, view=documents_pb2.DOCUMENT_VIEW_FULL),
        timeout=10,
    )
    assert (document.format, document.text, document.language) == (
        documents_pb2.DOCUMENT_FORMAT_HTML,
        SAVED_PAGE_TEXT,
        "en",
    )
    assert document.published_at.ToJsonString() == "2024-03-05T08:30:00Z"
    assert document.metadata["title"] == "Leave policy – Acme Intranet"
    sections = document.tree.root.children[0].children
    assert [s.title for s in sections if s.kind == documents_pb2.NODE_KIND_SECTION] == [
        "Requesting leave",
        "Entitlement by grade",
        "Checking your balance",
    ]
    with pytest.raises(ClientError) as err:
        upload(stack, "deep.html", b"<html><body>" + b"<div>" * 100_000 + b"</body></html>")
    assert err.value.code == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "nests elements more than 256 deep" in err.value.details
