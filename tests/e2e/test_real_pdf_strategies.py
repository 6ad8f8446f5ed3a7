"""Structure-aware strategies on real PDFs (issue 28, item 7): dev-set files
uploaded through the stack and chunked with parent_child, markdown_structure
and semantic_parent_child: parents and sections follow the document's real
sections (docling's headings), and no chunk carries a page's furniture (a
running header, a page number)."""

from __future__ import annotations

import re

import pytest

from chunklab.rpc import channels
from chunklab.v1 import common_pb2, documents_pb2, ingest_pb2
from tests.support import pdfs
from tests.support.real_docs import real_doc

pytestmark = pytest.mark.e2e

STRATEGIES = ("parent_child", "markdown_structure", "semantic_parent_child")
# docling's headings for multi_page.pdf (multi_page.docling.md), a 5-page history of word processing.
SECTIONS = (
    "The Evolution of the Word Processor",
    "Pre-Digital Era (19th - Early 20th Century)",
    "The Birth of Word Processing (1960s - 1970s)",
    "The Rise of Personal Computers (1980s)",
    "The Modern Era (1990s - Present)",
)


def uploaded(stack, name: str) -> documents_pb2.Document:
    response = stack.client().upload_document(real_doc(f"pdf/{name}"), name=name)
    return channels.ingest(stack.addresses["ingest"]).GetDocument(
        ingest_pb2.GetDocumentRequest(document_id=response.document.document_id, view=documents_pb2.DOCUMENT_VIEW_FULL),
        timeout=30,
    )


def heading_starts(document: documents_pb2.Document) -> list[int]:
    found = []

    def walk(node):
        if node.kind == documents_pb2.NODE_KIND_HEADING:
            found.append(node.start_char)
        for child in node.children:
            walk(child)

    walk(document.tree.root)
    return found


def chunks(stack, document, strategy: str):
    response = stack.client().preview_chunks(document.document_id, common_pb2.StrategySpec(name=strategy))
    assert response.chunks, strategy
    return list(response.chunks)


@pytest.fixture(scope="module")
def history(stack):
    return uploaded(stack, "multi_page.pdf")


def test_the_real_sections_are_the_documents_sections(history):
    starts = heading_starts(history)
    titles = [history.text[s:].split("\n", 1)[0].lstrip("# ") for s in starts]
    assert all(title in titles for title in SECTIONS)
    assert len(starts) == 11


def section_at(document: documents_pb2.Document, starts: list[int], at: int) -> str:
    """The title of the real section that holds offset `at`."""
    start = max(s for s in starts if s <= at)
    return document.text[start:].split("\n", 1)[0].lstrip("# ")


@pytest.mark.parametrize("strategy", ["parent_child", "markdown_structure"])
def test_parents_and_sections_follow_the_real_sections_of_a_real_pdf(stack, history, strategy):
    starts = heading_starts(history)
    pieces = chunks(stack, history, strategy)
    parents = [c for c in pieces if c.role == common_pb2.CHUNK_ROLE_PARENT] or pieces
    for piece in parents:
        assert history.text[piece.start_char : piece.end_char] == piece.content
        # No parent (or section chunk) runs over the start of another section,
        # and its heading path ends in the section it is in.
        assert not [s for s in starts if piece.start_char < s < piece.end_char], (strategy, piece.content[:80])
        assert piece.heading_path[-1] == section_at(history, starts, piece.start_char)
    assert {c.heading_path[-1] for c in parents} >= set(SECTIONS[1:])


def test_semantic_parents_join_alike_paragraphs_of_one_real_section_only(stack, history):
    # A heading joins the paragraph after it, so a child is in the section of its last character.
    starts = heading_starts(history)
    pieces = chunks(stack, history, "semantic_parent_child")
    children = [c for c in pieces if c.role == common_pb2.CHUNK_ROLE_CHILD]
    parents = {c.chunk_id: c for c in pieces if c.role == common_pb2.CHUNK_ROLE_PARENT}
    assert len(children) >= 16 and parents
    sections_of: dict[str, set[str]] = {}
    for child in children:
        parent = parents[child.parent_id]
        assert parent.start_char <= child.start_char and child.end_char <= parent.end_char
        section = section_at(history, starts, child.end_char - 1)
        assert child.heading_path[-1] == section
        sections_of.setdefault(parent.chunk_id, set()).add(section)
    for parent_id, sections in sections_of.items():
        assert sections == {parents[parent_id].heading_path[-1]}, parents[parent_id].content[:80]
    assert set().union(*sections_of.values()) >= set(SECTIONS[1:])


def test_no_chunk_carries_a_running_header_or_a_page_footer(stack):
    # Twelve generated pages, a running header and a "Page n" footer on every page but the first,
    # paragraphs running on over the page breaks.
    generated = pdfs.book(pages=12, outline=False)
    response = stack.client().upload_document(generated.data, name="handbook.pdf")
    document = channels.ingest(stack.addresses["ingest"]).GetDocument(
        ingest_pb2.GetDocumentRequest(document_id=response.document.document_id, view=documents_pb2.DOCUMENT_VIEW_FULL),
        timeout=30,
    )
    assert len(document.tree.page_starts) == 12
    assert pdfs.HEADER not in document.text and not re.search(r"Page \d+", document.text)
    for strategy in STRATEGIES:
        for piece in chunks(stack, document, strategy):
            assert pdfs.HEADER not in piece.content and not re.search(r"Page \d+", piece.content), strategy
    # and a paragraph cut by a page break reads on in one chunk of parent_child
    crossing = [c for c in chunks(stack, document, "parent_child") if c.first_page < c.last_page]
    assert crossing


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_no_chunk_carries_a_page_number_between_the_halves_of_a_sentence(stack, strategy):
    # Four pages of running text, a page number at the foot of each: the
    # sentence a page break cuts reads on in one paragraph.
    document = uploaded(stack, "pdflatex-4-pages.pdf")
    assert document.tree.page_starts[1] > 0
    for piece in chunks(stack, document, strategy):
        assert not re.search(r"(?:^|\s)[1-4](?:\s|$)", piece.content), (strategy, piece.content[:120])
        assert piece.first_page >= 1 and piece.last_page <= 4
