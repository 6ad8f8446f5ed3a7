"""Text that looks like Markdown stays text (issue 28, item 5; ADR 0105): a paragraph whose text
starts with "# " (a recipe's "# 1 tablespoon", a count's "# of items") is stored as a paragraph,
and the chunker reads the stored tree, never the canonical text again, so no strategy cuts at it
as a heading, files it under it, or keeps its sentences together as one heading line. Each format
where such a paragraph can occur is uploaded, stored and chunked as a user's document is."""

from __future__ import annotations

import html

import pytest
from fpdf import FPDF

from chunklab.text import tokens
from chunklab.v1 import common_pb2
from chunklab.v1 import documents_pb2 as pb
from services.chunker.strategies import REGISTRY, SourceDocument
from tests.support.chunking import FakeChat, context, knob
from tests.support.ingest import create, docx_bytes, ingest_service

OPENING = "The kitchen opens at seven and closes at nine every evening."
ORDERS = "Orders for the weekend are taken until Thursday at noon."
SALT = "# 1 tablespoon of salt goes into every pot. Taste before adding more."
DISHES = "Dishes are washed by hand and dried on the rack by the door."
PARAGRAPHS = [OPENING, ORDERS, SALT, DISHES]


def text_file() -> bytes:
    return "\n\n".join(PARAGRAPHS).encode() + b"\n"


def word_file() -> bytes:
    def build(document) -> None:
        for paragraph in PARAGRAPHS:
            document.add_paragraph(paragraph)

    return docx_bytes(build)


def web_page() -> bytes:
    body = "".join(f"<p>{html.escape(p)}</p>" for p in PARAGRAPHS)
    return f"<!doctype html><html lang='en'><body><main><article>{body}</article></main></body></html>".encode()


def pdf_file() -> bytes:
    pdf = FPDF(format="A4")
    pdf.add_page()
    pdf.set_font("Helvetica", "", 11)
    for paragraph in PARAGRAPHS:
        pdf.multi_cell(0, 5, paragraph, new_x="LMARGIN", new_y="NEXT")
        pdf.ln(5)
    return bytes(pdf.output())


FILES = {"kitchen.txt": text_file, "kitchen.docx": word_file, "kitchen.html": web_page, "kitchen.pdf": pdf_file}


@pytest.fixture
def stored(database_url, request) -> SourceDocument:
    """The kitchen notes uploaded in one format and read back as the chunker reads them."""
    service = ingest_service(database_url, [])
    name = request.param
    document, _ = create(service, name, FILES[name]())
    return SourceDocument(service.get(document.document_id, pb.DOCUMENT_VIEW_FULL))


def run(name: str, source: SourceDocument, **knobs) -> list[common_pb2.Chunk]:
    """One strategy's chunks of the stored document, as ProcessDocument makes them."""
    strategy = REGISTRY.build(common_pb2.StrategySpec(name=name, knobs={k: knob(v) for k, v in knobs.items()}))
    chunks = strategy.chunks_of(source, context(FakeChat()))
    assert all(source.text[c.start_char : c.end_char] == c.content for c in chunks)
    return chunks


def headings(node: pb.TreeNode) -> list[str]:
    own = [node.title] if node.kind == pb.NODE_KIND_HEADING else []
    return own + [title for child in node.children for title in headings(child)]


@pytest.mark.parametrize("stored", list(FILES), indirect=True)
def test_a_paragraph_starting_with_a_hash_is_never_read_as_a_heading_downstream(stored):
    text = stored.text
    assert SALT in text  # the paragraph is kept as written
    assert not [t for t in headings(stored.tree.root) if "tablespoon" in t]
    salt_end = text.index(SALT) + len(SALT)

    # recursive: with room for the first three paragraphs and not the fourth, the cascade finds
    # no heading to cut at and packs paragraphs; reading "# 1 tablespoon" as a header it cut there.
    size = tokens.count(text[:salt_end].strip())
    first, *rest = run("recursive", stored, chunk_size=size, chunk_overlap=0)
    assert first.content.endswith(SALT) and [c.content for c in rest] == [DISHES]

    # sentence_window: the paragraph's two sentences are two units, not one heading line.
    sentences = [c.content for c in run("sentence_window", stored, sentences_per_unit=1)]
    assert "# 1 tablespoon of salt goes into every pot." in sentences and "Taste before adding more." in sentences

    # markdown_structure and parent_child: no section opens at it, so no chunk is filed under it.
    for name in ("markdown_structure", "parent_child"):
        chunks = run(name, stored)
        assert not [c for c in chunks if any("tablespoon" in title for title in c.heading_path)], name
