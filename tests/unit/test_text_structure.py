"""A document's structure read from its tree (chunklab/text/structure.py, ADR 0105): for a
Markdown file, whose tree the one scanner built, the tree gives the very sentences and header
cuts the scan gave; for a paragraph that only looks like a heading, the tree wins."""

from __future__ import annotations

import pytest

from chunklab.text import markdown, sentences, structure
from chunklab.v1 import documents_pb2 as pb
from services.ingest.readers.markdown import Writer, build_tree, parse
from tests.support.repo import FIXTURES


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.glob("*.md")))
def test_a_markdown_files_tree_gives_the_sentences_and_heading_cuts_its_scan_gave(name):
    text = (FIXTURES / name).read_text()
    tree = parse(text, pb.DOCUMENT_FORMAT_MARKDOWN)
    # The tree's headings start at their "#", the scan's heading lines before any indentation.
    indented = [start + len(text[start:]) - len(text[start:].lstrip(" ")) for start in markdown.heading_lines(text)]
    assert structure.heading_starts(text, tree) == indented
    assert sentences.split(text, "en", structure.sentence_blocks(text, tree)) == sentences.split(text, "en")


def test_a_paragraph_written_as_hash_text_is_a_paragraph_of_two_sentences():
    writer = Writer()
    writer.heading(1, "Kitchen")
    writer.paragraph("# 1 tablespoon of salt goes into every pot. Taste before adding more.")
    text = writer.text()
    tree = build_tree(text, writer.blocks)
    assert structure.heading_starts(text, tree) == [0]
    assert [text[a:b] for a, b in sentences.split(text, "en", structure.sentence_blocks(text, tree))] == [
        "# Kitchen",
        "# 1 tablespoon of salt goes into every pot.",
        "Taste before adding more.",
    ]
    # Scanned again as Markdown, the text would have made the paragraph a heading line.
    assert markdown.heading_lines(text) == [0, text.index("# 1")]


def test_a_text_without_a_parse_is_scanned_as_markdown():
    text = "# Title\n\nOne. Two."
    assert structure.heading_starts(text, None) == [0]
    assert structure.sentence_blocks(text, pb.DocumentTree()) == sentences.blocks(text)
