"""A document that repeats itself: the pieces of a repeated long part are the first one's,
shifted, with the same trim and exact count (ADR 0147). Every case is checked against the same
cascade without any reuse, and each chunk's count against tiktoken's own."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunklab.knobs import to_spec
from chunklab.text import tokens
from chunklab.v1 import documents_pb2
from services.chunker.strategies import REGISTRY, SourceDocument, offline_context, recursive
from services.chunker.strategies.spans import Spans
from services.chunker.token_map import TokenMap
from services.ingest.readers.markdown import parse


class WithoutReuse(Spans):
    """The cascade with nothing remembered: every long part split and every piece counted anew."""

    def _split_part(self, start, end, budget, level, overlap):
        return self._split(start, end, budget, level, overlap)

    def _text_key(self, piece):
        return piece


def _paragraph(seed: int, sentences: int = 30) -> str:
    words = ["licence", "granted", "Software", "copies", "warranty", "holders", "liable", "damages"]
    return " ".join(
        " ".join(words[(seed + i * 3 + j) % len(words)] for j in range(5 + (seed + i) % 7)).capitalize() + "."
        for i in range(sentences)
    )


# A section with a paragraph far over the smaller budgets, one under them, and a list.
SECTION = _paragraph(1) + "\n\n" + _paragraph(2, 4) + "\n\n- one item\n- another item\n\n" + _paragraph(3, 60) + "\n\n"


def _pieces(spans_class, text: str, budget: int, overlap: int) -> list[tuple[int, int, int]]:
    return spans_class(text).split(0, len(text), budget, overlap=overlap)


def _assert_same_as_without_reuse(text: str, budget: int, overlap: int) -> list[tuple[int, int, int]]:
    reused = _pieces(Spans, text, budget, overlap)
    assert reused == _pieces(WithoutReuse, text, budget, overlap)
    for start, end, count in reused:
        assert count == len(tokens.encoding().encode_ordinary(text[start:end])) <= budget
    return reused


@pytest.mark.parametrize("budget", [16, 64, 128, 512])
def test_a_section_repeated_word_for_word_gives_the_pieces_of_the_first_shifted(budget):
    text = SECTION * 5
    pieces = _assert_same_as_without_reuse(text, budget, 0)
    first = [(a, b, c) for a, b, c in pieces if b <= len(SECTION)]
    third = [(a - 2 * len(SECTION), b - 2 * len(SECTION), c) for a, b, c in pieces if 2 * len(SECTION) <= a]
    assert third[: len(first)] == first


def test_the_reuse_path_is_taken_on_a_repeated_section():
    spans = Spans(SECTION * 4)
    spans.split(0, len(spans.text), 64)
    assert spans._copies, "the repeats of the long paragraphs should take the first split's pieces"


@pytest.mark.parametrize("budget", [32, 128])
def test_repeats_that_differ_slightly_give_the_pieces_of_their_own_text(budget):
    copies = [SECTION.replace("licence", f"licence{n}", 1) if n % 2 else SECTION for n in range(6)]
    copies[3] = copies[3].replace("warranty", "guarantee")  # a word in the middle of a long paragraph
    _assert_same_as_without_reuse("".join(copies), budget, 0)


@pytest.mark.parametrize(("budget", "overlap"), [(64, 6), (64, 16), (128, 32), (512, 128)])
def test_overlap_across_the_repeat_boundary_is_the_same_as_without_reuse(budget, overlap):
    # No blank line between the copies: the end of one and the start of the next meet in one part.
    text = (SECTION.rstrip() + " ") * 4
    _assert_same_as_without_reuse(text, budget, overlap)
    _assert_same_as_without_reuse(SECTION * 4, budget, overlap)


def test_a_repeated_section_under_different_headings_keeps_each_headings_path(monkeypatch):
    text = "".join(f"# Chapter {n}\n\n## Terms\n\n{SECTION}" for n in range(4))
    document = documents_pb2.Document(document_id="d", name="d.md", text=text, language="en")
    document.tree.CopyFrom(parse(text, documents_pb2.DOCUMENT_FORMAT_MARKDOWN))
    strategy = REGISTRY.build(to_spec("recursive", {"chunk_size": 64, "chunk_overlap": 8}))
    reused = strategy.chunk(SourceDocument(document), offline_context())
    monkeypatch.setattr(recursive, "Spans", WithoutReuse)
    assert reused == strategy.chunk(SourceDocument(document), offline_context())
    paths = {tuple(chunk.heading_path) for chunk in reused}
    assert {("Chapter 0", "Terms"), ("Chapter 3", "Terms")} <= paths
    chapter = {n: [c.content for c in reused if c.heading_path[0] == f"Chapter {n}"] for n in (0, 2)}
    assert chapter[0][0].startswith("# Chapter 0") and chapter[2][0].startswith("# Chapter 2")
    assert chapter[0][1:] == chapter[2][1:]  # past the heading, the same pieces


@pytest.mark.parametrize(
    "text",
    [
        SECTION * 6,
        ("A line with CRLF.\r\nAnother, naïve 😀👍🏽 one.\r\n\r\n" * 40),
        "# T\n\n" + ("日本語の文章です。\nx = [1, 2]\n\n" * 30) + "tail without a line break",
        "".join(SECTION.replace("one item", f"item {n % 3}") for n in range(6)),
    ],
)
def test_a_map_kept_as_runs_of_its_distinct_lines_answers_as_its_offsets(text):
    token_map = TokenMap(text)
    assert token_map._runs, "a text that repeats itself this much is searched run by run"
    offsets = TokenMap(text).offsets  # another map: asking for every offset would make this one search them
    assert offsets.tolist() == tokens.token_char_offsets(text, tokens.encoding().encode_ordinary(text)).tolist()
    positions = np.arange(-1, len(text) + 3)
    for side in ("left", "right"):
        assert token_map.searchsorted(positions, side).tolist() == offsets.searchsorted(positions, side).tolist()
        for position in (0, 1, len(text) // 2, len(text) - 1, len(text), len(text) + 1):
            assert int(token_map.searchsorted(position, side)) == int(offsets.searchsorted(position, side))
    assert len(token_map) == len(offsets) - 1
    assert "offsets" not in token_map.__dict__, "every answer above came from the runs"


_LINES = st.lists(
    st.sampled_from(
        ["word\n", " word\n", "x = 1\n", "\n", "  \n", "日本語\n", "🎉 e\u0301\n", "a.\r\n", "end", "\t-\n"]
    ),
    min_size=1,
    max_size=12,
).map("".join)


@settings(max_examples=150, deadline=None)
@given(blocks=st.lists(_LINES, min_size=1, max_size=4), copies=st.integers(1, 6))
def test_any_map_answers_every_position_as_its_offsets(blocks, copies):
    text = "".join(blocks * copies)
    offsets = TokenMap(text).offsets
    assert offsets.tolist() == tokens.token_char_offsets(text, tokens.encoding().encode_ordinary(text)).tolist()
    token_map = TokenMap(text)
    positions = np.arange(-1, len(text) + 2)
    for side in ("left", "right"):
        assert token_map.searchsorted(positions, side).tolist() == offsets.searchsorted(positions, side).tolist()


def test_pieces_of_a_repeat_that_start_alike_and_end_elsewhere_are_counted_on_their_own_text():
    text = SECTION * 4
    spans = Spans(text)
    assert spans.tokens._runs
    copy = 2 * len(SECTION)
    for start, end in [(0, 300), (copy, copy + 700), (copy, copy + 300), (len(SECTION), len(SECTION) + 50)]:
        ((a, b, count),) = spans.split(start, end, 4096)
        assert (a, b) == (start, end) or text[start:end].strip() == text[a:b]
        assert count == len(tokens.encoding().encode_ordinary(text[a:b]))
