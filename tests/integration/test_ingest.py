"""Ingest: DOCX, Markdown and text into one faithful DocumentTree; bad files
refused with a precise error and nothing left behind."""

from __future__ import annotations

import io
import logging
import threading
import zipfile
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path, PurePath

import pytest
from docx.oxml import OxmlElement
from docx.oxml.ns import qn
from sqlalchemy import create_engine, make_url, text

from chunklab.db.sessions import make_sessionmaker
from chunklab.errors import InvalidArgument, NotFound, ResourceExhausted, Unavailable
from chunklab.v1 import documents_pb2 as pb
from services.ingest.readers.docx import read_docx
from services.ingest.readers.pdf import read_pdf
from services.ingest.service import IngestService
from services.ingest.store import Base
from tests.support import pdfs
from tests.support.faults import locked
from tests.support.ingest import create, docx_bytes, handbook, ingest_service, rows, zip_bytes

# -- fixtures ---------------------------------------------------------------


HANDBOOK_TEXT = """# Staff handbook

Welcome to the team.

## Working hours

### Core hours

Everyone is in between ten and four.

- Monday to Thursday
- Friday until two

#### Overtime

1. Ask your lead first.
2. Log it the same week.

| Grade | Rate |
|---|---|
| A | 1.5x |
| B \\| C | 2x |

## Leave

### Parental leave"""

HANDBOOK_OUTLINE = [
    (0, "DOCUMENT", ()),
    (1, "SECTION", ("Staff handbook",)),
    (2, "HEADING", ("Staff handbook",)),
    (2, "PARAGRAPH", ("Staff handbook",)),
    (2, "SECTION", ("Staff handbook", "Working hours")),
    (3, "HEADING", ("Staff handbook", "Working hours")),
    (3, "SECTION", ("Staff handbook", "Working hours", "Core hours")),
    (4, "HEADING", ("Staff handbook", "Working hours", "Core hours")),
    (4, "PARAGRAPH", ("Staff handbook", "Working hours", "Core hours")),
    (4, "LIST", ("Staff handbook", "Working hours", "Core hours")),
    (5, "LIST_ITEM", ("Staff handbook", "Working hours", "Core hours")),
    (5, "LIST_ITEM", ("Staff handbook", "Working hours", "Core hours")),
    (4, "SECTION", ("Staff handbook", "Working hours", "Core hours", "Overtime")),
    (5, "HEADING", ("Staff handbook", "Working hours", "Core hours", "Overtime")),
    (5, "LIST", ("Staff handbook", "Working hours", "Core hours", "Overtime")),
    (6, "LIST_ITEM", ("Staff handbook", "Working hours", "Core hours", "Overtime")),
    (6, "LIST_ITEM", ("Staff handbook", "Working hours", "Core hours", "Overtime")),
    (5, "TABLE", ("Staff handbook", "Working hours", "Core hours", "Overtime")),
    (2, "SECTION", ("Staff handbook", "Leave")),
    (3, "HEADING", ("Staff handbook", "Leave")),
    (3, "SECTION", ("Staff handbook", "Leave", "Parental leave")),
    (4, "HEADING", ("Staff handbook", "Leave", "Parental leave")),
]


def walk(node, depth=0):
    yield node, depth
    for child in node.children:
        yield from walk(child, depth + 1)


def outline(tree):
    return [
        (depth, pb.NodeKind.Name(node.kind).removeprefix("NODE_KIND_"), tuple(node.heading_path))
        for node, depth in walk(tree.root)
    ]


def assert_offsets_hold(document: pb.Document) -> None:
    """Every node's range lies in its parent's and in the text; headings and
    sections start with their title's text."""
    text = document.text
    for node, _ in walk(document.tree.root):
        assert 0 <= node.start_char <= node.end_char <= len(text)
        for child in node.children:
            assert node.start_char <= child.start_char <= child.end_char <= node.end_char
        if node.kind in (pb.NODE_KIND_SECTION, pb.NODE_KIND_HEADING):
            assert node.title in text[node.start_char : node.end_char]


@pytest.fixture
def service(database_url, deleted):
    """The service on an empty database: each test runs on SQLite, then on PostgreSQL."""
    return ingest_service(database_url, deleted)


# -- DOCX -------------------------------------------------------------------


def test_a_docx_becomes_its_heading_tree_with_lists_and_tables_in_order(service):
    document, existed = create(service, "handbook.docx", docx_bytes(handbook))
    assert not existed
    full = service.get(document.document_id, pb.DOCUMENT_VIEW_FULL)
    assert full.format == pb.DOCUMENT_FORMAT_DOCX
    assert full.text == HANDBOOK_TEXT
    assert outline(full.tree) == HANDBOOK_OUTLINE
    assert_offsets_hold(full)
    items = [full.text[n.start_char : n.end_char] for n, _ in walk(full.tree.root) if n.kind == pb.NODE_KIND_LIST_ITEM]
    assert items == [
        "- Monday to Thursday",
        "- Friday until two",
        "1. Ask your lead first.",
        "2. Log it the same week.",
    ]
    assert full.character_count == len(HANDBOOK_TEXT)


def test_every_view_of_a_document_carries_its_parse_report_counted_from_its_tree(service):
    document, _ = create(service, "handbook.docx", docx_bytes(handbook))
    listed, _, _ = service.list(10, "", "", "")
    for shown in (
        document,
        service.get(document.document_id, pb.DOCUMENT_VIEW_BASIC),
        service.get(document.document_id, pb.DOCUMENT_VIEW_FULL),
        listed[0],
    ):
        report = shown.parse_report
        # Staff handbook, Working hours, Core hours, Overtime, Leave, Parental leave; two
        # paragraphs; the Grade/Rate table; two bullets and two numbered steps.
        assert (report.pages, report.headings, report.paragraphs, report.tables, report.list_items) == (0, 6, 2, 1, 4)
        assert (report.code_blocks, list(report.warnings), report.reader) == (
            0,
            [],
            "python-docx and the Word XML (content controls, text boxes, equations)",
        )


def test_a_pdf_whose_tables_could_not_be_read_says_so_in_its_report_and_counts_its_pages(service, monkeypatch):
    generated = pdfs.layout_sample()
    # PDFium rebuilds a missing cross-reference table; the table finder cannot. The safety check
    # refuses such a file at the door, so the reader's own result is handed to the service.
    content = read_pdf("layout.pdf", generated.data[: generated.data.rfind(b"xref")])
    monkeypatch.setattr("services.ingest.service.parse_upload", lambda *_: content)
    document, _ = create(service, "layout.pdf", generated.data)
    report = service.get(document.document_id, pb.DOCUMENT_VIEW_BASIC).parse_report
    assert report.pages == 4 and report.headings >= 2 and report.tables == 0
    assert list(report.warnings) == [
        "The tables on 1 page could not be read as tables (p. 3 (the table finder could not parse the page)): "
        "their text is kept as paragraphs, without the table's rows and columns"
    ]
    assert "tables_not_read" not in document.metadata and document.metadata["pages"] == "4"


def test_docx_core_properties_feed_the_metadata_and_the_publication_date(service):
    document, _ = create(service, "handbook.docx", docx_bytes(handbook))
    assert document.metadata["author"] == "Ada Lovelace"
    assert document.metadata["title"] == "Staff handbook"
    assert document.published_at.ToDatetime(tzinfo=UTC) == datetime(2024, 3, 1, 9, 30, tzinfo=UTC)
    assert document.language == "en"


def test_a_given_publication_date_wins_over_the_files(service):
    given = datetime(2020, 1, 2, tzinfo=UTC)
    document, _ = create(service, "handbook.docx", docx_bytes(handbook), published_at=given)
    assert document.published_at.ToDatetime(tzinfo=UTC) == given


def test_a_front_matter_date_with_an_offset_is_stored_in_utc(service):
    """09:30 at UTC+01:00 is 08:30 UTC, as the HTML reader stores it; a date alone is midnight UTC."""
    offset = "---\ntitle: Tides\ndate: 2024-03-01T09:30:00+01:00\n---\n# Tides\n\nThe tide turns twice a day.\n"
    document, _ = create(service, "tides.md", offset.encode())
    assert document.published_at.ToDatetime(tzinfo=UTC) == datetime(2024, 3, 1, 8, 30, tzinfo=UTC)
    plain = "---\ndate: '2024-03-01'\n---\n# Ebb\n\nThe tide goes out.\n"
    document, _ = create(service, "ebb.md", plain.encode())
    assert document.published_at.ToDatetime(tzinfo=UTC) == datetime(2024, 3, 1, tzinfo=UTC)


def test_outline_levels_make_headings_of_plain_paragraphs(service):
    def build(document):
        for title, level in (("Part one", 0), ("Chapter", 1)):
            paragraph = document.add_paragraph(title)
            outline_level = OxmlElement("w:outlineLvl")
            outline_level.set(qn("w:val"), str(level))
            paragraph._p.get_or_add_pPr().append(outline_level)
            document.add_paragraph(f"Body of {title.lower()}.")

    document, _ = create(service, "outline.docx", docx_bytes(build))
    full = service.get(document.document_id, pb.DOCUMENT_VIEW_FULL)
    assert full.text == "# Part one\n\nBody of part one.\n\n## Chapter\n\nBody of chapter."
    assert [p for _, _, p in outline(full.tree)][-1] == ("Part one", "Chapter")


def test_a_docx_without_headings_gives_a_flat_tree(service):
    def build(document):
        document.add_paragraph("First paragraph.")
        document.add_paragraph("Second paragraph.")

    document, _ = create(service, "flat.docx", docx_bytes(build))
    full = service.get(document.document_id, pb.DOCUMENT_VIEW_FULL)
    assert [pb.NodeKind.Name(c.kind) for c in full.tree.root.children] == ["NODE_KIND_PARAGRAPH"] * 2
    assert full.text == "First paragraph.\n\nSecond paragraph."


def test_a_list_whose_numbering_definition_is_missing_is_read_as_bullets_and_said_in_the_log(caplog):
    def build(document):
        for paragraph in ("Keep every receipt.", "File them monthly."):
            num_pr = document.add_paragraph(paragraph)._p.get_or_add_pPr().get_or_add_numPr()
            num_pr.get_or_add_numId().val = 999  # no such numbering definition
            num_pr.get_or_add_ilvl().val = 0

    with caplog.at_level(logging.WARNING, logger="chunklab.ingest.docx"):
        content = read_docx(docx_bytes(build))
    assert content.text == "- Keep every receipt.\n- File them monthly."
    assert [r.getMessage() for r in caplog.records if r.name == "chunklab.ingest.docx"] == [
        "DOCX lists with numbering definitions that cannot be read (numId 999) are shown as bullets"
    ]


# -- Markdown and text ------------------------------------------------------


def test_markdown_and_text_keep_the_files_text_exactly(service):
    markdown = "---\ndate: 2023-05-04\n---\n# Título\r\n\r\nCafé ☕ au lait.\n"
    document, _ = create(service, "notes.md", markdown.encode("utf-8"))
    full = service.get(document.document_id, pb.DOCUMENT_VIEW_FULL)
    assert full.text == markdown
    assert_offsets_hold(full)
    assert full.published_at.ToDatetime(tzinfo=UTC) == datetime(2023, 5, 4, tzinfo=UTC)
    legacy, _ = create(service, "legacy.txt", "Crème brûlée à la française, s'il vous plaît.".encode("cp1252"))
    assert service.get(legacy.document_id, pb.DOCUMENT_VIEW_FULL).text.startswith("Crème brûlée")
    assert legacy.metadata["encoding"] == "cp1252"


LANGUAGE_SAMPLES = {
    "en": "The committee will publish its findings on the new railway line next spring.",
    "de": "Der Ausschuss wird seine Ergebnisse zur neuen Bahnstrecke im nächsten Frühjahr veröffentlichen.",
    "fr": "Le comité publiera ses conclusions sur la nouvelle ligne de chemin de fer au printemps prochain.",
    "es": "El comité publicará sus conclusiones sobre la nueva línea de ferrocarril la próxima primavera.",
    "pt": "O comitê publicará suas conclusões sobre a nova linha ferroviária na próxima primavera.",
    "it": "Il comitato pubblicherà i suoi risultati sulla nuova linea ferroviaria la prossima primavera.",
    "nl": "De commissie zal haar bevindingen over de nieuwe spoorlijn volgend voorjaar publiceren.",
    "id": "Komite akan menerbitkan temuannya tentang jalur kereta api baru pada musim semi mendatang.",
    "ru": "Комитет опубликует свои выводы о новой железнодорожной линии следующей весной.",
    "ar": "ستنشر اللجنة نتائجها بشأن خط السكك الحديدية الجديد في الربيع المقبل.",
    "zh": "委员会将于明年春天公布其关于新铁路线的调查结果。",
    "ja": "委員会は来年の春に新しい鉄道路線に関する調査結果を発表する予定です。",
}


@pytest.mark.parametrize("language", sorted(LANGUAGE_SAMPLES))
def test_the_language_is_detected(service, language):
    document, _ = create(service, f"{language}.txt", LANGUAGE_SAMPLES[language].encode("utf-8"))
    assert document.language == language


def test_the_same_bytes_in_the_same_collection_are_stored_once(service):
    data = b"# Same\n\nSame bytes.\n"
    first, existed_first = create(service, "a.md", data)
    second, existed_second = create(service, "b.md", data)
    other, existed_other = create(service, "a.md", data, collection="hr")
    assert (existed_first, existed_second, existed_other) == (False, True, False)
    assert second.document_id == first.document_id and second.name == "a.md"
    assert other.document_id != first.document_id and other.collection == "hr"


def test_concurrent_uploads_store_each_document_once(service):
    results, errors = [], []

    def upload(i: int) -> None:
        try:
            # Half upload the same bytes, half their own.
            data = b"# Shared\n\nThe same text.\n" if i % 2 else f"# Own {i}\n\nText {i}.\n".encode()
            results.append((i, *create(service, f"doc{i}.md", data)))
        except Exception as exc:  # collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=upload, args=(i,)) for i in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    shared = {doc.document_id for i, doc, _ in results if i % 2}
    assert len(shared) == 1
    assert sum(1 for i, _, existed in results if i % 2 and not existed) == 1
    assert rows(service) == 8 + 1


@contextmanager
def another_writer(url: str):
    """The documents table held by another writer until the block ends: an
    exclusive SQLite transaction, or a PostgreSQL table lock."""
    url = make_url(url)
    if url.get_backend_name() == "sqlite":
        with locked(Path(url.database)):
            yield
        return
    with create_engine(url).begin() as holder:
        holder.execute(text("LOCK TABLE documents IN EXCLUSIVE MODE"))
        yield


def test_a_write_kept_waiting_by_another_writer_fails_unavailable_and_saves_nothing(database_url):
    service = IngestService(make_sessionmaker(database_url, Base, busy_timeout_s=0.2), 1_000_000, lambda _id: 0)
    name = PurePath(make_url(database_url).database).name
    with another_writer(database_url), pytest.raises(Unavailable) as refused:
        create(service, "a.md", b"Some text.")
    assert refused.value.message == (
        f"the database {name} stayed locked by another writer for over 0.2s (CHUNKLAB_DB_BUSY_TIMEOUT_S), "
        "so this change was not saved; try again"
    )
    assert rows(service) == 0
    assert not create(service, "a.md", b"Some text.")[1]  # once the lock is gone, it saves


# -- refusals ---------------------------------------------------------------


def docx_with_doctype() -> bytes:
    original = zipfile.ZipFile(io.BytesIO(docx_bytes(handbook)))
    members = {name: original.read(name) for name in original.namelist()}
    body = members["word/document.xml"].decode("utf-8")
    declaration, rest = body.split("?>", 1)
    members["word/document.xml"] = (declaration + '?><!DOCTYPE w:document [<!ENTITY boom "boom">]>' + rest).encode(
        "utf-8"
    )
    return zip_bytes(members)


REFUSALS = {
    "over the size limit": ("big.md", b"a" * 2_000_001, ResourceExhausted, "over the upload limit"),
    "safe zip, broken document": (
        "broken.docx",
        zip_bytes({"[Content_Types].xml": b"<x/>", "word/document.xml": b"<w/>" + b" " * 50_000}),
        InvalidArgument,
        "not a readable Word document",
    ),
    "too many members": (
        "many.docx",
        zip_bytes({"[Content_Types].xml": b"<x/>", "word/document.xml": b"<w/>"} | {f"f{i}": b"" for i in range(2001)}),
        ResourceExhausted,
        "holds 2003 files",
    ),
    "doctype and entities": ("evil.docx", docx_with_doctype(), InvalidArgument, "DOCTYPE"),
    "truncated zip": ("cut.docx", docx_bytes(handbook)[:3000], InvalidArgument, "corrupt or truncated"),
    "zip that is not a docx": (
        "notes.docx",
        zip_bytes({"notes.txt": b"hello"}),
        InvalidArgument,
        "not a Word document",
    ),
    "text declared as docx": ("plain.docx", b"just some text", InvalidArgument, "not a DOCX file"),
    "docx declared as text": ("report.md", docx_bytes(handbook), InvalidArgument, "zip archive"),
    "pdf declared as text": ("paper.txt", b"%PDF-1.7\n...", InvalidArgument, "PDF"),
    "binary data as text": ("data.txt", bytes(range(32)) * 100, InvalidArgument, "binary"),
    "damaged utf-8": ("damaged.md", "héllo wörld ".encode() * 20 + b"\xc3\x28", InvalidArgument, "byte 280"),
    "no encoding fits": ("noise.txt", bytes(range(128, 256)) * 16, InvalidArgument, "any encoding tried"),
    "empty file": ("empty.md", b"", InvalidArgument, "empty"),
    "only whitespace": ("blank.txt", b" \n\t\n  ", InvalidArgument, "no text"),
    "docx with no text": ("blank.docx", docx_bytes(lambda d: d.add_paragraph("")), InvalidArgument, "no text"),
    "unknown extension": ("slides.pptx", b"PK\x03\x04", InvalidArgument, "cannot tell the format"),
}


@pytest.mark.parametrize("case", sorted(REFUSALS))
def test_bad_uploads_are_refused_precisely_and_leave_nothing_behind(service, case):
    name, data, error, message = REFUSALS[case]
    with pytest.raises(error, match=message):
        create(service, name, data)
    assert rows(service) == 0


def test_a_nul_past_the_sampled_head_is_refused_on_both_backends(service):
    # The binary check samples the first 64 KiB; PostgreSQL cannot store U+0000 at all.
    data = b"word " * 14_000 + b"\x00tail"
    with pytest.raises(InvalidArgument, match="'late.txt' holds a NUL character \\(U\\+0000\\) at character 70,000: "):
        create(service, "late.txt", data)
    utf16 = "\ufeffa\x00b".encode("utf-16-le")  # the mark is not text: "a" is character 0
    with pytest.raises(InvalidArgument, match="at character 1:"):
        create(service, "wide.txt", utf16)
    assert rows(service) == 0


def test_a_bad_language_code_is_refused(service):
    with pytest.raises(InvalidArgument, match="ISO 639"):
        create(service, "a.md", b"text", language="English")


# -- reading and deleting ---------------------------------------------------


def test_list_pages_and_filters(service):
    for i in range(5):
        create(service, f"en{i}.md", f"English text number {i} about trains.".encode(), collection="news")
    create(service, "de.md", LANGUAGE_SAMPLES["de"].encode(), collection="news")
    create(service, "policy.md", b"A policy about trains and travel.", collection="policies")
    page, token, total = service.list(2, "", "news", "")
    assert len(page) == 2 and token and total == 6
    seen = [d.document_id for d in page]
    while token:
        page, token, _ = service.list(2, token, "news", "")
        seen += [d.document_id for d in page]
    assert len(seen) == len(set(seen)) == 6
    german, _, total = service.list(0, "", "", "de")
    assert total == 1 and german[0].name == "de.md"
    assert not german[0].text and not german[0].HasField("tree")  # BASIC view
    with pytest.raises(InvalidArgument, match="page_token"):
        service.list(2, "garbage", "", "")
    with pytest.raises(InvalidArgument, match="page_size"):
        service.list(5000, "", "", "")


def test_delete_removes_the_chunks_first_then_the_document(service, deleted):
    document, _ = create(service, "a.md", b"Some text to delete.")
    assert service.delete(document.document_id) == 3
    assert deleted == [document.document_id]
    with pytest.raises(NotFound):
        service.get(document.document_id, pb.DOCUMENT_VIEW_BASIC)


def test_delete_keeps_the_document_when_the_retriever_is_down(database_url):
    def unavailable(_document_id: str) -> int:
        raise Unavailable("the retriever service is unreachable")

    sessions = make_sessionmaker(database_url, Base)
    service = IngestService(sessions, 1_000_000, unavailable)
    document, _ = create(service, "a.md", b"Some text.")
    with pytest.raises(Unavailable):
        service.delete(document.document_id)
    assert service.get(document.document_id, pb.DOCUMENT_VIEW_BASIC).name == "a.md"
