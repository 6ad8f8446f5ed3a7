"""Two configurations over one document, side by side (ADR 0061).

One scroll box, one row per stretch of text between any cut of either
configuration: both cells of a row hold the same text, each coloured by the
chunk of its own configuration that covers it, so the columns cannot drift
apart and scroll as one. A cell starts with a line where its own
configuration cuts there, and with the labels of the chunks (and parents)
that begin there; where only the other side cuts, the text runs on without a
line. Rows come in blocks the browser lays out only near the viewport
(`content-visibility: auto`), so a long document opens and scrolls fast while
all of its text stays in the page (find-in-page still reaches it). No Gradio
here; all document text is escaped by the template.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from chunklab.text import pages
from chunklab.v1 import common_pb2
from chunklab.views.render import render
from frontend.pages.documents.boundaries import chunk_notes, segments, truncation_notes
from frontend.pages.documents.boundary_stats import searchable

# Lazy layout makes far more text viewable side by side than the single view's 200,000 characters.
MAX_SIDE_BY_SIDE_CHARS = 1_000_000
ROWS_PER_BLOCK = 40


@dataclass(frozen=True)
class Configuration:
    """One column: what the heading calls it, and its chunks over the document."""

    label: str
    chunks: Sequence[common_pb2.Chunk]


def _edges(chunks: Sequence[common_pb2.Chunk], end: int) -> set[int]:
    return {p for c in chunks for p in (c.start_char, c.end_char) if 0 < p < end}


def _parent_head(parent: common_pb2.Chunk) -> dict:
    return {
        "chunk_index": parent.chunk_index,
        "token_count": parent.token_count,
        "page": pages.page_label(parent.first_page, parent.last_page),
    }


def cells(
    text: str, end: int, configuration: Configuration, cut_at: set[int], page_starts: Sequence[int] = ()
) -> list[dict]:
    """text[:end] cut at `cut_at` (every cut of both sides) and at page starts, one cell per
    stretch: its text piece, the chunk labels and the page marker before it, whether this
    configuration cuts at its start, and whether it lies in a parent (its head where that parent begins)."""
    parents = sorted(
        (c for c in configuration.chunks if c.role == common_pb2.CHUNK_ROLE_PARENT),
        key=lambda p: (p.start_char, p.chunk_index),
    )
    own = _edges(configuration.chunks, end)
    found, marks, page, position, next_parent = [], [], None, 0, 0
    for piece in segments(text, 0, end, searchable(configuration.chunks), page_starts, sorted(cut_at)):
        if piece.kind == "mark":
            marks.append(piece)
            continue
        if piece.kind == "page":
            page = piece
            continue
        while next_parent < len(parents) and parents[next_parent].end_char <= position:
            next_parent += 1
        parent = parents[next_parent] if next_parent < len(parents) else None
        if parent is not None and parent.start_char > position:
            parent = None
        found.append(
            {
                "start": position,
                "page": page,
                "marks": marks,
                "piece": piece,
                "cut": position in own,
                "in_parent": parent is not None,
                "parent": _parent_head(parent) if parent is not None and parent.start_char == position else None,
            }
        )
        position += len(piece.text)
        marks, page = [], None
    return found


def rows(text: str, left: Configuration, right: Configuration, end: int, page_starts: Sequence[int] = ()) -> list[dict]:
    """The aligned rows: start offset, page marker, and the left and the right cell of one stretch."""
    cut_at = _edges(left.chunks, end) | _edges(right.chunks, end)
    left_cells = cells(text, end, left, cut_at, page_starts)
    right_cells = cells(text, end, right, cut_at, page_starts)
    return [{"start": a["start"], "page": a["page"], "left": a, "right": b} for a, b in zip(left_cells, right_cells)]


def side_by_side_html(
    text: str,
    left: Configuration,
    right: Configuration,
    page_starts: Sequence[int] = (),
    max_chars: int = MAX_SIDE_BY_SIDE_CHARS,
    rows_per_block: int = ROWS_PER_BLOCK,
) -> str:
    """The two columns over text (with page markers for a paged document's `page_starts`),
    and notes on anything unusual on either side."""
    end = min(len(text), max_chars)
    aligned = rows(text, left, right, end, page_starts)
    blocks = [
        {"start": aligned[i]["start"], "rows": aligned[i : i + rows_per_block]}
        for i in range(0, len(aligned), rows_per_block)
    ]
    notes = truncation_notes(text, end) + [
        f"{side.label}: {note}" for side in (left, right) for note in chunk_notes(text, side.chunks)
    ]
    return render(
        "frontend",
        "boundary_columns.html.j2",
        left=left.label,
        right=right.label,
        notes=notes,
        blocks=blocks,
        rows=len(aligned),
    )
