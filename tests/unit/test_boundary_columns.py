"""The boundary viewer's two columns (ADR 0061): exact rows and HTML for hand-built
chunks of two configurations over one text, and each configuration's figures
(histogram bins, share of tiny fragments, share of cuts in mid-sentence)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from chunklab.text import sentences
from chunklab.v1 import common_pb2 as pb
from frontend.pages.documents import boundary_stats
from frontend.pages.documents.boundary_columns import Configuration, rows, side_by_side_html

TEXT = "One two three. Four <five> six. Seven eight."
#       0         1         2         3         4
#       01234567890123456789012345678901234567890123


def chunk(index: int, start: int, end: int, tokens: int, role=pb.CHUNK_ROLE_CHUNK, **extra) -> pb.Chunk:
    return pb.Chunk(
        chunk_id=f"{role}-{index}",
        chunk_index=index,
        start_char=start,
        end_char=end,
        content=TEXT[start:end],
        token_count=tokens,
        role=role,
        **extra,
    )


# Left cuts between sentences; right cuts once inside the first sentence and once between two.
LEFT = Configuration("left · sentences", [chunk(0, 0, 15, 25), chunk(1, 15, 44, 40)])
RIGHT = Configuration("right · windows", [chunk(0, 0, 8, 5), chunk(1, 8, 32, 30), chunk(2, 32, 44, 12)])


def parse(html: str) -> ET.Element:
    return ET.fromstring(f"<root>{html}</root>")


def test_the_sentences_the_figures_are_counted_against():
    assert sentences.split(TEXT) == [(0, 14), (15, 31), (32, 44)]


def test_each_configuration_gets_its_tiny_and_mid_sentence_shares():
    spans = sentences.split(TEXT)
    left = boundary_stats.boundary_stats(LEFT.chunks, spans, len(TEXT))
    right = boundary_stats.boundary_stats(RIGHT.chunks, spans, len(TEXT))
    assert (left.chunks, left.tiny, left.tiny_share, left.cuts, left.mid_sentence, left.mid_sentence_share) == (
        2,
        0,
        0.0,
        1,
        0,
        0.0,
    )
    # Under 20 tokens: 5 and 12. Cuts at 8 (inside "One two three.") and 32 (where "Seven" begins).
    assert (right.chunks, right.tiny, right.cuts, right.mid_sentence, right.mid_sentence_share) == (3, 2, 2, 1, 0.5)
    assert right.tiny_share == 2 / 3
    assert (right.tokens_min, right.tokens_median, right.tokens_max) == (5, 12, 30)


def test_a_cut_anywhere_in_the_space_between_sentences_is_on_a_boundary():
    spans = [(0, 14), (16, 30)]
    assert boundary_stats.in_mid_sentence([1, 14, 15, 16, 29, 30], spans) == [1, 29]


def test_parents_are_not_counted_and_nothing_to_count_says_so():
    parent = chunk(0, 0, 44, 80, role=pb.CHUNK_ROLE_PARENT)
    child = chunk(0, 0, 44, 78, role=pb.CHUNK_ROLE_CHILD)
    figures = boundary_stats.boundary_stats([parent, child], sentences.split(TEXT), len(TEXT))
    assert (figures.chunks, figures.parents, figures.cuts, figures.mid_sentence_share) == (1, 1, 0, None)
    empty = boundary_stats.boundary_stats([], [], 0)
    assert (empty.chunks, empty.tiny_share, empty.mid_sentence_share) == (0, None, None)


def test_both_histograms_share_one_set_of_bins():
    left, right = boundary_stats.histogram_frames([LEFT.chunks, RIGHT.chunks])
    labels = ["0–4", "5–9", "10–14", "15–19", "20–24", "25–29", "30–34", "35–39", "40–44", "45–49"]
    assert list(left["tokens"]) == labels and list(right["tokens"]) == labels
    assert list(left["chunks"]) == [0, 0, 0, 0, 0, 1, 0, 0, 1, 0]
    assert list(right["chunks"]) == [0, 1, 1, 0, 0, 0, 1, 0, 0, 0]


def test_the_figures_read_side_by_side():
    spans = sentences.split(TEXT)
    html = boundary_stats.stats_html(
        [
            (LEFT.label, boundary_stats.boundary_stats(LEFT.chunks, spans, len(TEXT)), []),
            (RIGHT.label, boundary_stats.boundary_stats(RIGHT.chunks, spans, len(TEXT)), ["30 tokens embedded"]),
        ]
    )
    columns = parse(html).findall("div/div")
    facts = [{d.get("data-fact"): "".join(d.itertext()) for d in column} for column in columns]
    assert facts[1] == {
        None: "right · windows",
        "chunks": "3 chunks · tokens min 5 · median 12 · max 30 · 30 tokens embedded",
        "tiny": "tiny fragments (under 20 tokens): 66.7% (2 of 3)",
        "mid-sentence": "cuts in mid-sentence: 50.0% (1 of 2)",
    }
    assert facts[0]["mid-sentence"] == "cuts in mid-sentence: 0.0% (0 of 1)"


def test_every_row_is_a_stretch_between_cuts_of_either_side_with_the_same_text_in_both():
    aligned = rows(TEXT, LEFT, RIGHT, len(TEXT))
    assert [r["start"] for r in aligned] == [0, 8, 15, 32]
    assert (
        [r["left"]["piece"].text for r in aligned]
        == [r["right"]["piece"].text for r in aligned]
        == ["One two ", "three. ", "Four <five> six. ", "Seven eight."]
    )
    # Which side cuts where a row begins, and which chunk covers each cell.
    assert [(r["left"]["cut"], r["right"]["cut"]) for r in aligned] == [
        (False, False),
        (False, True),
        (True, False),
        (False, True),
    ]
    assert [(r["left"]["piece"].chunks, r["right"]["piece"].chunks) for r in aligned] == [
        ("0", "0"),
        ("0", "1"),
        ("1", "1"),
        ("1", "2"),
    ]


def test_the_two_columns_as_html():
    html = side_by_side_html(TEXT, LEFT, RIGHT)
    root = parse(html)
    box = root.find("div")
    assert box.get("data-rows") == "4"
    head = box.find("div[@class='cl-sbs-scroll']/div[@class='cl-sbs-head']")
    assert [(d.get("data-side"), d.text) for d in head] == [("left", LEFT.label), ("right", RIGHT.label)]
    assert html.count('<div class="cl-sbs-row"') == 4
    assert (
        '<div class="cl-sbs-row" data-start="8">'
        '<div class="cl-sbs-cell cl-seg-0" data-side="left" data-chunks="0">'
        '<span class="cl-sbs-text">three. </span></div>'
        '<div class="cl-sbs-cell cl-seg-1 cl-sbs-cut" data-side="right" data-chunks="1">'
        '<span class="cl-bmark" data-chunk-index="1" title="chunk 1 · 30 tokens · chars 8–32">#1 · 30 tok</span>'
        '<span class="cl-sbs-text">three. </span></div></div>'
    ) in html
    # Each column reads back as the whole text, its markup as text.
    for side in ("left", "right"):
        cells = box.findall(f".//div[@data-side='{side}'][@class]")
        assert "".join(c.find("span[@class='cl-sbs-text']").text for c in cells) == TEXT
    assert root.find(".//five") is None


def test_rows_come_in_blocks_with_page_markers_across_both_columns():
    html = side_by_side_html(TEXT, LEFT, RIGHT, page_starts=[0, 20], rows_per_block=2)
    blocks = parse(html).findall(".//div[@class='cl-sbs-block']")
    assert [b.get("data-start") for b in blocks] == ["0", "15", "32"]
    assert [[(e.get("class"), e.get("data-start") or e.text) for e in b] for b in blocks] == [
        [("cl-bpage cl-sbs-page", "p. 1"), ("cl-sbs-row", "0"), ("cl-sbs-row", "8")],
        [("cl-sbs-row", "15"), ("cl-bpage cl-sbs-page", "p. 2"), ("cl-sbs-row", "20")],
        [("cl-sbs-row", "32")],
    ]


def test_parents_are_headed_where_they_begin_and_their_children_marked():
    parents = [chunk(0, 0, 15, 4, role=pb.CHUNK_ROLE_PARENT), chunk(1, 15, 44, 9, role=pb.CHUNK_ROLE_PARENT)]
    children = [
        chunk(0, 0, 15, 4, role=pb.CHUNK_ROLE_CHILD),
        chunk(1, 15, 32, 5, role=pb.CHUNK_ROLE_CHILD),
        chunk(2, 32, 44, 4, role=pb.CHUNK_ROLE_CHILD),
    ]
    aligned = rows(TEXT, Configuration("pc", parents + children), RIGHT, len(TEXT))
    cells = [r["left"] for r in aligned]
    assert [c["start"] for c in cells] == [0, 8, 15, 32]
    assert [c["parent"] and c["parent"]["chunk_index"] for c in cells] == [0, None, 1, None]
    assert all(c["in_parent"] for c in cells)
    assert [[m.index for m in c["marks"]] for c in cells] == [[0], [], [1], [2]]
    html = side_by_side_html(TEXT, Configuration("pc", parents + children), RIGHT)
    heads = parse(html).findall(".//span[@class='cl-sbs-parent']")
    assert [h.text for h in heads] == ["parent 0 · 4 tok", "parent 1 · 9 tok"]


def test_notes_name_the_side_they_are_about_and_long_texts_are_cut():
    moved = chunk(0, 0, 15, 3)
    moved.content = "elsewhere"
    html = side_by_side_html(TEXT, Configuration("L", [moved]), Configuration("R", []), max_chars=20)
    notes = ["".join(n.itertext()) for n in parse(html).findall(".//p[@class='cl-note']")]
    assert notes[0] == f"Showing the first 20 of {len(TEXT)} characters."
    assert notes[1].startswith("L: 1 chunks do not copy the text exactly")
    assert notes[2] == "R: The strategy made no chunks for this document."
