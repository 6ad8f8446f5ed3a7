"""PDF into the DocumentTree (issue 15): headings from the outline and from
fonts on generated 100-page handbooks, page numbers on nodes and chunks,
page furniture gone, hyphenation, two columns, a table, exact offsets for
every strategy, and the refusal of a PDF without text."""

from __future__ import annotations

import pytest

from chunklab.errors import InvalidArgument
from chunklab.text import pages
from chunklab.v1 import common_pb2
from chunklab.v1 import documents_pb2 as pb
from services.chunker.strategies import REGISTRY, SourceDocument
from services.ingest.readers.pdf import pdf_date, read_pdf
from services.ingest.service import parse_upload, resolve_format
from tests.support import pdfs
from tests.support.chunking import FakeChat, check_exact, context


@pytest.fixture(scope="module")
def with_outline():
    generated = pdfs.book(100, outline=True)
    return generated, parse_upload("handbook.pdf", pb.DOCUMENT_FORMAT_PDF, generated.data)


@pytest.fixture(scope="module")
def without_outline(with_outline):
    """The same 100 pages without the outline: headings by font."""
    generated, _ = with_outline
    data = pdfs.without_outline(generated.data)
    return generated, parse_upload("handbook.pdf", pb.DOCUMENT_FORMAT_PDF, data)


@pytest.fixture(scope="module")
def layout():
    generated = pdfs.layout_sample()
    return generated, read_pdf("layout.pdf", generated.data)


def nodes(node: pb.TreeNode):
    yield node
    for child in node.children:
        yield from nodes(child)


def headings(tree: pb.DocumentTree) -> list[tuple[int, str, int]]:
    return [(n.level, n.title, n.first_page) for n in nodes(tree.root) if n.kind == pb.NODE_KIND_HEADING]


def check_offsets(text: str, tree: pb.DocumentTree) -> None:
    """Every node's range is exact: a heading's slice is its `#` line, a
    section starts with its heading; every node's pages are its range's."""
    starts = list(tree.page_starts)
    for node in nodes(tree.root):
        piece = text[node.start_char : node.end_char]
        assert piece and piece == piece.strip()
        if node.kind == pb.NODE_KIND_HEADING:
            assert piece == "#" * node.level + " " + node.title
        if node.kind == pb.NODE_KIND_SECTION:
            assert piece.startswith("#" * node.level + " " + node.title)
        assert (node.first_page, node.last_page) == pages.page_span(starts, node.start_char, node.end_char)


@pytest.mark.parametrize("case", ["with_outline", "without_outline"])
def test_a_100_page_handbook_gives_its_heading_tree_with_the_page_of_every_heading(case, request):
    generated, parsed = request.getfixturevalue(case)
    assert generated.pages == 100
    assert headings(parsed.tree) == generated.headings
    assert len(generated.headings) > 100
    # The tree nests chapters under the title and sections under chapters.
    (title,) = [n for n in parsed.tree.root.children if n.kind == pb.NODE_KIND_SECTION]
    assert title.title == "Employee Handbook" and title.first_page == 1 and title.last_page == 100
    chapter = [n for n in title.children if n.kind == pb.NODE_KIND_SECTION][2]
    assert chapter.title.startswith("Chapter 3: ")
    section = [n for n in chapter.children if n.kind == pb.NODE_KIND_SECTION][0]
    assert list(section.heading_path) == ["Employee Handbook", chapter.title, section.title]
    paragraph = next(n for n in section.children if n.kind == pb.NODE_KIND_PARAGRAPH)
    assert list(paragraph.heading_path) == list(section.heading_path)
    assert paragraph.first_page == section.first_page
    check_offsets(parsed.text, parsed.tree)


@pytest.mark.parametrize("case", ["with_outline", "without_outline"])
def test_every_page_starts_where_its_first_line_is_and_furniture_is_gone(case, request):
    generated, parsed = request.getfixturevalue(case)
    starts = list(parsed.tree.page_starts)
    assert len(starts) == 100 and starts[0] == 0 and starts == sorted(starts)
    # Each chapter opens a page: its heading line is where that page starts.
    for _level, title, page in generated.headings:
        if title.startswith("Chapter ") and title != "Chapter 1: Leave rules":
            assert parsed.text[starts[page - 1] :].startswith(f"## {title}")
    assert pdfs.HEADER not in parsed.text
    assert "Page " not in parsed.text


def test_title_author_page_count_and_creation_date_come_from_the_document_information(with_outline, without_outline):
    parsed = with_outline[1]
    assert parsed.metadata == {"title": "Employee Handbook", "author": "People Team", "pages": "100"}
    assert parsed.published_at == pdfs.CREATED
    # PDFium's copy names itself as creator and producer.
    assert without_outline[1].metadata == {"creator": "PDFium", "producer": "PDFium", "pages": "100"}


def test_paragraphs_are_re_flowed_into_one_line_each(without_outline):
    _, parsed = without_outline
    body = [n for n in nodes(parsed.tree.root) if n.kind == pb.NODE_KIND_PARAGRAPH]
    assert len(body) > 500
    for node in body:
        piece = parsed.text[node.start_char : node.end_char]
        assert "\n" not in piece and "  " not in piece and piece.endswith(".")


def test_a_word_hyphenated_at_a_line_break_is_rejoined_and_real_hyphens_stay(layout):
    _, content = layout
    first = content.text.split("\n\n")[1]
    assert first == (
        "Every reader needs an example of a word hyphenated at a line break, and a well-known pair that "
        "this page also writes as well-known on one line. The COVID-19 rules stay as they are, and so "
        "does this sentence."
    )


def test_two_columns_are_read_left_column_first_whatever_the_drawing_order(layout):
    _, content = layout
    blocks = content.text.split("\n\n")
    at = blocks.index("## Two columns")
    assert blocks[at + 1 : at + 3] == [pdfs.LEFT_COLUMN, pdfs.RIGHT_COLUMN]


def test_a_ruled_table_is_a_table_node_in_markdown(layout):
    _, content = layout
    (table,) = [n for n in nodes(content.tree.root) if n.kind == pb.NODE_KIND_TABLE]
    assert content.text[table.start_char : table.end_char] == "\n".join(
        [
            "| Leave type | Days | Paid |",
            "|---|---|---|",
            "| Annual | 25 | yes |",
            "| Parental | 90 | yes |",
            "| Unpaid | 30 | no |",
        ]
    )
    assert (table.first_page, table.last_page) == (3, 3)
    assert list(table.heading_path) == ["Layout sample", "A table"]
    assert "The table ends above this paragraph." in content.text[table.end_char :]


def test_the_layout_sample_reads_as_its_markdown_with_pages_and_no_furniture(layout):
    generated, content = layout
    assert (
        headings(content.tree)
        == generated.headings
        == [(1, "Layout sample", 1), (2, "Two columns", 2), (2, "A table", 3), (2, "A list", 4)]
    )
    bullets, numbered = [n for n in nodes(content.tree.root) if n.kind == pb.NODE_KIND_LIST]
    assert [content.text[i.start_char : i.end_char] for i in bullets.children] == [
        "- First item, long enough that it wraps onto a second line of the list in this generated page of the sample",
        "- Second item",
    ]
    assert [content.text[i.start_char : i.end_char] for i in numbered.children] == [
        "3. Third, numbered as the page numbers it",
        "4. Fourth",
    ]
    assert pdfs.HEADER not in content.text and "Page 2" not in content.text
    starts = list(content.tree.page_starts)
    assert [content.text[s:].split("\n")[0] for s in starts] == [
        "# Layout sample",
        "## Two columns",
        "## A table",
        "## A list",
    ]
    assert content.metadata == {"title": "Layout sample", "author": "Layout Team", "pages": "4"}
    check_offsets(content.text, content.tree)


def test_every_strategy_chunks_the_pdf_exactly_with_the_pages_of_each_chunk(layout):
    # Ten pages rather than 100: hybrid_semantic_recursive takes 15 s on 100.
    for content in (layout[1], read_pdf("book.pdf", pdfs.book(10, outline=False).data)):
        source = SourceDocument(
            pb.Document(
                document_id="doc-1",
                name="handbook.pdf",
                text=content.text,
                language="en",
                collection="default",
                format=pb.DOCUMENT_FORMAT_PDF,
                tree=content.tree,
            )
        )
        starts = list(content.tree.page_starts)
        for name in REGISTRY.names():
            strategy = REGISTRY.build(common_pb2.StrategySpec(name=name))
            chunks = strategy.chunks_of(source, context(FakeChat()))
            check_exact(source, strategy, chunks)
            assert chunks, name
            for chunk in chunks:
                assert source.text[chunk.start_char : chunk.end_char] == chunk.content
                first, last = pages.page_span(starts, chunk.start_char, chunk.end_char)
                assert (chunk.first_page, chunk.last_page) == (first, last) and first >= 1


def test_bookmarks_name_their_lines_in_body_type_and_without_numbers_and_open_sections_where_none_matches():
    generated = pdfs.outline_sample()
    content = read_pdf("sample.pdf", generated.data)
    assert headings(content.tree) == generated.headings
    assert content.text == (
        "# Overview of the leave policy for every employee\n\nThe overview says what the policy covers.\n\n"
        "# Appendix: figures\n\nFigures follow without a printed title.\n\n## A.1 Definitions\n\n"
        "The bookmark leaves out the number that the page prints."
    )
    assert list(content.tree.page_starts) == [0, content.text.index("# Appendix")]
    check_offsets(content.text, content.tree)


def test_bold_lines_at_the_body_size_are_headings_but_a_bold_lead_in_is_not():
    generated = pdfs.bold_headings_sample()
    content = read_pdf("sample.pdf", generated.data)
    assert headings(content.tree) == generated.headings
    assert content.text.split("\n\n") == [
        "# 1 Scope",
        "Section 1 applies to every document that the team keeps in the archive.",
        "# 2 Terms and definitions",
        "Section 2 applies to every document that the team keeps in the archive.",
        "Note: a bold lead-in opens this paragraph, which is not a heading.",
    ]


def test_a_page_the_table_finder_cannot_parse_keeps_its_text_and_says_so(layout):
    generated, _ = layout
    # PDFium rebuilds a missing cross-reference table; pdfminer does not.
    content = read_pdf("layout.pdf", generated.data[: generated.data.rfind(b"xref")])
    assert content.metadata["tables_not_read"] == "p. 3 (the table finder could not parse the page)"
    assert not [n for n in nodes(content.tree.root) if n.kind == pb.NODE_KIND_TABLE]
    after = content.text.split("## A table\n\n")[1]
    assert after.startswith(
        "Leave type Days Paid\n\nAnnual 25 yes\n\nParental 90 yes\n\nUnpaid 30 no\n\n"
        "The table ends above this paragraph."
    )
    check_offsets(content.text, content.tree)


def test_a_pdf_with_no_text_layer_is_refused_as_scanned_needing_ocr():
    with pytest.raises(InvalidArgument) as scanned:
        parse_upload("scan.pdf", pb.DOCUMENT_FORMAT_PDF, pdfs.image_only())
    assert str(scanned.value) == (
        "'scan.pdf' has no text layer: its 2 page(s) hold 2 image(s) and no text, so it looks scanned; "
        "it needs OCR: run it through an OCR tool (e.g. ocrmypdf) and upload the result"
    )
    with pytest.raises(InvalidArgument, match=r"'plan.pdf' has no text layer: .* only drawings.*needs OCR"):
        parse_upload("plan.pdf", pb.DOCUMENT_FORMAT_PDF, pdfs.image_only(vector=True))


def test_what_pdfium_cannot_open_is_refused_with_what_to_do():
    # parse_upload's safety check (pdf_safety) refuses this first; the reader stands on its own too.
    with pytest.raises(
        InvalidArgument,
        match=r"'broken.pdf' is not a readable PDF \(the PDF reader could not parse it; the ingest log says where\); open it",
    ):
        read_pdf("broken.pdf", b"%PDF-1.7\n1 0 obj\n<< /Type /Catalog")


def test_pdf_names_resolve_to_the_pdf_format_and_pdf_dates_parse():
    assert resolve_format("Report.PDF", pb.DOCUMENT_FORMAT_UNSPECIFIED) == pb.DOCUMENT_FORMAT_PDF
    assert pdf_date("D:20240131120000+01'00'").isoformat() == "2024-01-31T12:00:00+01:00"
    assert pdf_date("D:2023").isoformat() == "2023-01-01T00:00:00+00:00"
    assert pdf_date("yesterday") is None
