"""Pages wherever a chunk is shown: a PDF chunk's first/last page goes into the index and
comes back from Retrieve on the hit and on what expansion pulls in, and the Query page, the
boundary viewer, the report and `chunklab query` label it "p. 12" / "pp. 12–13"; a chunk of a
format without pages gets no label. The Documents page names formats and offers PDF and HTML."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from chunklab import ids
from chunklab.client import ChunkLab
from chunklab.v1 import common_pb2 as pb
from chunklab.v1 import documents_pb2 as dpb
from chunklab.v1 import evaluator_pb2, ingest_pb2
from chunklab.v1 import retriever_pb2 as rpb
from chunklab_app.cli import retrieval_cli
from chunklab_app.cli.main import parser
from frontend.pages import documents
from frontend.pages.documents import boundaries
from frontend.views import retrieval_html
from services.chunker.strategies import REGISTRY
from services.evaluator.reports import report
from services.retriever.index.registry import IndexRegistry
from services.retriever.service import RetrieverService
from services.retriever.store import RetrieverStore
from tests.support.fake_stubs import settings
from tests.support.providers import HashedProvider

PROVIDER = HashedProvider()
# (content, first_page, last_page) of manual.pdf's fixed_size chunks, and notes.md's (no pages).
PDF_CHUNKS = [
    ("harbour tides table", 11, 11),
    ("lighthouse keepers logbook entries", 12, 13),
    ("storm warning flags", 13, 13),
]
MD_CHUNKS = [("garden compost recipe", 0, 0), ("orchard pruning calendar", 0, 0)]


def index_document(service: RetrieverService, document_id: str, name: str, strategy: str, chunks) -> None:
    items = []
    for i, (content, first, last) in enumerate(chunks):
        chunk = pb.Chunk(
            chunk_id=ids.chunk_id(document_id, strategy, "cfg", i, pb.CHUNK_ROLE_CHUNK),
            document_id=document_id,
            document_name=name,
            strategy=strategy,
            chunk_index=i,
            content=content,
            token_count=len(content.split()),
            start_char=40 * i,
            end_char=40 * i + len(content),
            first_page=first,
            last_page=last,
            collection="default",
        )
        items.append(rpb.IndexedChunk(chunk=chunk, vector=PROVIDER.embed_query(content).tolist()))
    header = rpb.IndexHeader(
        document_id=document_id,
        strategy=strategy,
        config_id="cfg",
        embedding_model=PROVIDER.name,
        dimension=PROVIDER.dimension,
        spec=pb.StrategySpec(name=strategy),
        expansion=REGISTRY.get(strategy).expansion,
    )
    service.index_chunks(header, items)


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    path = tmp_path_factory.mktemp("retriever")
    store = RetrieverStore(f"sqlite:///{path / 'retriever.sqlite3'}")
    built = RetrieverService(IndexRegistry(path / "edge", store), store, PROVIDER.name, lambda _: PROVIDER, {})
    index_document(built, "pdf-1", "manual.pdf", "fixed_size", PDF_CHUNKS)
    index_document(built, "md-1", "notes.md", "fixed_size", MD_CHUNKS)
    yield built
    built.close()


def options(document_id: str) -> pb.RetrievalOptions:
    return pb.RetrievalOptions(
        strategy="fixed_size",
        top_k=1,
        neighbor_prev=1,
        neighbor_next=1,
        filter=pb.RetrievalFilter(document_ids=[document_id]),
    )


@pytest.fixture(scope="module")
def pdf_response(service) -> rpb.RetrieveResponse:
    return service.retrieve(rpb.RetrieveRequest(query="lighthouse keepers logbook", options=options("pdf-1")))


@pytest.fixture(scope="module")
def md_response(service) -> rpb.RetrieveResponse:
    return service.retrieve(rpb.RetrieveRequest(query="garden compost recipe", options=options("md-1")))


def pages_of(items) -> list[tuple[int, int, int]]:
    return [(i.chunk.chunk_index, i.chunk.first_page, i.chunk.last_page) for i in items]


def test_retrieve_gives_back_the_pages_of_the_hit_and_of_its_neighbours(pdf_response):
    assert pages_of(pdf_response.retrieved_chunks) == [(0, 11, 11), (1, 12, 13), (2, 13, 13)]
    (node,) = pdf_response.expansion_tree.hits
    assert pages_of([node.hit]) == [(1, 12, 13)]
    assert pages_of(node.neighbors_prev) == [(0, 11, 11)] and pages_of(node.neighbors_next) == [(2, 13, 13)]


def parse(html: str) -> ET.Element:
    return ET.fromstring(html)


def page_labels(root: ET.Element) -> list[str]:
    return [span.text for span in root.iter("span") if span.get("class") == "cl-page"]


def test_the_query_page_labels_each_card_with_its_pages(pdf_response, md_response):
    flat = parse(retrieval_html.flat_list_html(pdf_response))
    assert page_labels(flat) == ["p. 11", "pp. 12\u201313", "p. 13"]
    hit = parse(retrieval_html.expansion_tree_html(pdf_response)).find(".//div[@data-role='hit']")
    assert "".join(hit.find("div[@class='cl-chunk-head']").itertext()).endswith("chars 40–74 · pp. 12–13")
    assert page_labels(parse(retrieval_html.flat_list_html(md_response))) == []
    assert page_labels(parse(retrieval_html.expansion_tree_html(md_response))) == []


def cli_lines(service: RetrieverService, question: str, document_id: str, capsys) -> list[str]:
    class Client:  # ChunkLab.retrieve, answered by the service in process
        def retrieve(self, query, retrieval_options):
            return service.retrieve(rpb.RetrieveRequest(query=query, options=retrieval_options))

    args = parser().parse_args(
        [
            "query",
            question,
            "--strategy",
            "fixed_size",
            "--top-k",
            "1",
            "--neighbor-prev",
            "1",
            "--neighbor-next",
            "1",
            "--filter-document-ids",
            document_id,
        ]
    )
    assert retrieval_cli.cmd_query(args, Client()) == 0
    return capsys.readouterr().out.splitlines()


def test_chunklab_query_prints_the_pages_beside_the_token_count(service, capsys):
    lines = cli_lines(service, "lighthouse keepers logbook", "pdf-1", capsys)
    assert [line.split(None, 1)[1] if line.startswith("neighbor") else line.split(None, 2)[2] for line in lines] == [
        "manual.pdf #0 (3 tokens, p. 11): harbour tides table",
        "manual.pdf #1 (4 tokens, pp. 12–13): lighthouse keepers logbook entries",
        "manual.pdf #2 (3 tokens, p. 13): storm warning flags",
    ]
    (line,) = [x for x in cli_lines(service, "garden compost recipe", "md-1", capsys) if x.startswith("hit")]
    assert line.endswith(" notes.md #0 (3 tokens): garden compost recipe")


def test_the_report_labels_retrieved_chunks_and_chunk_texts_with_their_pages(pdf_response, md_response):
    experiment = evaluator_pb2.Experiment(
        experiment_id="e-1",
        config=evaluator_pb2.ExperimentConfig(name="pages", retrieval_only=True),
        runs=[evaluator_pb2.ExperimentRun(run_key="fixed_size", config_id="cfg")],
    )
    questions = evaluator_pb2.QuestionSet(
        name="q.jsonl",
        questions=[
            evaluator_pb2.Question(question_id="q1", text="Who kept the logbook?"),
            evaluator_pb2.Question(question_id="q2", text="How is compost made?"),
        ],
    )
    results = [
        evaluator_pb2.QuestionResult(
            question_id=qid, run_key="fixed_size", retrieved_chunks=r.retrieved_chunks, expansion_tree=r.expansion_tree
        )
        for qid, r in (("q1", pdf_response), ("q2", md_response))
    ]
    html = report.render(experiment, questions, results, evaluator_pb2.REPORT_VIEW_TECHNICAL)
    # Where each chunk starts in its document's text (ADR 0068), its marker names its pages.
    texts = html[html.index('<h3 id="chunk-texts">') : html.index("</section>")]
    markers = [marker for marker in re.findall(r'<a id="t\d+" data-chunk="([^"]*)"></a>', texts)]
    pdf = [m for m in markers if "pp. " in m or "p. " in m]
    chunks = sorted((item.chunk for item in pdf_response.retrieved_chunks), key=lambda c: c.start_char)
    assert [m.split(" · ")[1:4] for m in pdf] == [
        [f"chunk {c.chunk_index}", f"chars {c.start_char}–{c.end_char}", label]
        for c, label in zip(chunks, ("p. 11", "pp. 12–13", "p. 13"))
    ]
    assert len(markers) == 5 and not any("p. " in m for m in markers if m not in pdf)


def test_the_boundary_viewer_labels_chunks_and_marks_where_pages_begin():
    text = "a" * 30 + "b" * 30 + "c" * 30  # pages begin at 0, 30 and 60
    chunks = [
        pb.Chunk(chunk_index=0, start_char=0, end_char=45, content=text[:45], token_count=6, first_page=1, last_page=2),
        pb.Chunk(
            chunk_index=1, start_char=45, end_char=90, content=text[45:], token_count=6, first_page=2, last_page=3
        ),
    ]
    root = parse(boundaries.boundary_html(text, chunks, page_starts=[0, 30, 60]))
    spans = [s for s in root.iter("span")]
    sequence = [(s.get("class"), s.text) for s in spans]
    assert sequence == [
        ("cl-bpage", "p. 1"),
        ("cl-bmark", "#0 · 6 tok · pp. 1–2"),
        ("cl-seg cl-seg-0", "a" * 30),
        ("cl-bpage", "p. 2"),
        ("cl-seg cl-seg-0", "b" * 15),
        ("cl-bmark", "#1 · 6 tok · pp. 2–3"),
        ("cl-seg cl-seg-1", "b" * 15),
        ("cl-bpage", "p. 3"),
        ("cl-seg cl-seg-1", "c" * 30),
    ]
    assert spans[1].get("title") == "chunk 0 · 6 tokens · chars 0–45 · pp. 1–2"
    assert [s.get("data-page") for s in spans if s.get("class") == "cl-bpage"] == ["1", "2", "3"]
    unpaged = [pb.Chunk(chunk_index=0, start_char=0, end_char=90, content=text, token_count=12)]
    plain = parse(boundaries.boundary_html(text, unpaged))
    assert [(s.get("class"), s.text, s.get("title")) for s in plain.iter("span")] == [
        ("cl-bmark", "#0 · 12 tok", "chunk 0 · 12 tokens · chars 0–90"),
        ("cl-seg cl-seg-0", text, "chunk 0 · 12 tokens · chars 0–90"),
    ]


def test_the_boundary_viewer_marks_pages_between_parents_and_labels_each_parent():
    text = "a" * 30 + "b" * 30
    parent = pb.Chunk(
        chunk_id="p0",
        chunk_index=0,
        start_char=40,
        end_char=60,
        content=text[40:],
        token_count=3,
        role=pb.CHUNK_ROLE_PARENT,
        first_page=2,
        last_page=2,
    )
    root = parse(boundaries.boundary_html(text, [parent], page_starts=[0, 30]))
    assert [(s.get("class"), s.text) for s in root.iter("span")] == [
        ("cl-bpage", "p. 1"),
        ("cl-gap", "a" * 30),
        ("cl-bpage", "p. 2"),
        ("cl-gap", "b" * 10),
        ("cl-gap", "b" * 20),
    ]
    head = root.find(".//div[@class='cl-bparent-head']").text
    assert head == "parent 0 · 3 tokens · chars 40–60 · 0 children · p. 2"


def test_the_upload_offers_pdf_and_html_and_refuses_other_types(tmp_path):
    """The picker's file types are enforced on the server too (Gradio's File checks them
    before the handler runs); the file name goes to ingest, which resolves the format."""
    import gradio as gr
    from gradio.data_classes import FileData

    page = documents.build(ChunkLab(settings()))
    upload = next(b for b in page.blocks.values() if getattr(b, "elem_id", None) == "upload-file")
    assert "PDF" in upload.label and "HTML" in upload.label
    for name in ("manual.pdf", "page.html", "page.HTM", "notes.md", "policy.docx"):
        (tmp_path / name).write_bytes(b"x")
        assert upload.preprocess(FileData(path=str(tmp_path / name))) == str(tmp_path / name)
    (tmp_path / "tool.exe").write_bytes(b"x")
    with pytest.raises(gr.Error, match="Invalid file type"):
        upload.preprocess(FileData(path=str(tmp_path / "tool.exe")))


def test_an_uploaded_pdf_is_named_with_its_format_and_pages():
    from frontend.views import formatting

    document = dpb.Document(
        document_id="d1",
        name="manual.pdf",
        collection="default",
        character_count=5400,
        format=dpb.DOCUMENT_FORMAT_PDF,
        metadata={"pages": "12"},
    )
    message = parse(formatting.upload_message(ingest_pb2.CreateDocumentResponse(document=document))).text
    assert message == "Uploaded manual.pdf (collection 'default', PDF, 5,400 characters, 12 pages, id d1)."
    html = dpb.Document(
        document_id="d2", name="page.html", collection="web", character_count=80, format=dpb.DOCUMENT_FORMAT_HTML
    )
    message = parse(formatting.upload_message(ingest_pb2.CreateDocumentResponse(document=html))).text
    assert message == "Uploaded page.html (collection 'web', HTML, 80 characters, id d2)."


def test_the_llm_reads_each_context_chunk_with_its_page(pdf_response, md_response):
    from services.evaluator.judging.answers import context_text

    assert context_text(pdf_response.retrieved_chunks[1:2]) == (
        "[1] manual.pdf, pp. 12–13\nlighthouse keepers logbook entries"
    )
    assert context_text(md_response.retrieved_chunks[:1]) == "[1] notes.md\ngarden compost recipe"
