"""What the boundary viewer says about one configuration's cuts: a chunk-size
histogram, the share of tiny fragments and the share of cuts in mid-sentence.

Counted over the searchable chunks (what a query can hit: a parent_child
configuration's children, not its parents). A cut is a position where a chunk
starts or ends, other than the text's own start and end; it is in mid-sentence
when it falls strictly inside a sentence of chunklab.text.sentences (the splitter
the chunker's sentence-based strategies use), so a cut anywhere in the space
between two sentences is on a boundary. No Gradio here.
"""

from __future__ import annotations

import bisect
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from chunklab.v1 import common_pb2
from chunklab.views import numbers
from chunklab.views.render import render

# A fragment this small carries too little to be found or to answer from on its own.
TINY_TOKENS = 20
HISTOGRAM_BINS = 10
HISTOGRAM_COLUMNS = ("tokens", "chunks")


def searchable(chunks: Sequence[common_pb2.Chunk]) -> list[common_pb2.Chunk]:
    """The chunks a query can hit: all but parents."""
    return [c for c in chunks if c.role != common_pb2.CHUNK_ROLE_PARENT]


def cuts(chunks: Sequence[common_pb2.Chunk], text_length: int) -> list[int]:
    """Every position where one of the chunks starts or ends, inside the text, in order."""
    return sorted({p for c in chunks for p in (c.start_char, c.end_char) if 0 < p < text_length})


def in_mid_sentence(positions: Sequence[int], sentences: Sequence[tuple[int, int]]) -> list[int]:
    """The positions that fall strictly inside one of the (start, end) sentence spans (in order)."""
    starts = [start for start, _ in sentences]
    inside = []
    for position in positions:
        i = bisect.bisect_right(starts, position) - 1
        if i >= 0 and sentences[i][0] < position < sentences[i][1]:
            inside.append(position)
    return inside


@dataclass(frozen=True)
class BoundaryStats:
    """One configuration's figures; shares are None when there is nothing to divide by."""

    chunks: int
    parents: int
    tokens_min: int
    tokens_median: float
    tokens_max: int
    tiny: int
    cuts: int
    mid_sentence: int

    @property
    def tiny_share(self) -> float | None:
        return self.tiny / self.chunks if self.chunks else None

    @property
    def mid_sentence_share(self) -> float | None:
        return self.mid_sentence / self.cuts if self.cuts else None


def boundary_stats(
    chunks: Sequence[common_pb2.Chunk], sentences: Sequence[tuple[int, int]], text_length: int
) -> BoundaryStats:
    """The figures of one configuration over a text of text_length with these sentence spans."""
    found = searchable(chunks)
    sizes = [c.token_count for c in found] or [0]
    positions = cuts(found, text_length)
    return BoundaryStats(
        chunks=len(found),
        parents=len(chunks) - len(found),
        tokens_min=min(sizes),
        tokens_median=statistics.median(sizes),
        tokens_max=max(sizes),
        tiny=sum(1 for c in found if c.token_count < TINY_TOKENS),
        cuts=len(positions),
        mid_sentence=len(in_mid_sentence(positions, sentences)),
    )


def bin_width(size_lists: Sequence[Sequence[int]], bins: int = HISTOGRAM_BINS) -> int:
    """One bin width for every configuration shown together, so their histograms read on one scale:
    the largest size over all of them split into `bins` bins of whole tokens."""
    largest = max((max(sizes) for sizes in size_lists if sizes), default=0)
    return max(1, math.ceil((largest + 1) / bins))


def histogram(sizes: Sequence[int], width: int, bins: int = HISTOGRAM_BINS) -> list[tuple[str, int]]:
    """(label, chunks) for `bins` bins of `width` tokens from 0, labelled "0–9", "10–19", …; a size
    beyond the last bin counts in it (none is when width came from bin_width over these sizes)."""
    counts = [0] * bins
    for size in sizes:
        counts[min(size // width, bins - 1)] += 1
    return [(f"{numbers.count(i * width)}–{numbers.count((i + 1) * width - 1)}", n) for i, n in enumerate(counts)]


def histogram_frames(chunk_lists: Sequence[Sequence[common_pb2.Chunk]]) -> list[pd.DataFrame]:
    """One histogram per configuration (columns HISTOGRAM_COLUMNS), all on the same bins."""
    sizes = [[c.token_count for c in searchable(chunks)] for chunks in chunk_lists]
    width = bin_width(sizes)
    return [pd.DataFrame(histogram(s, width), columns=list(HISTOGRAM_COLUMNS)) for s in sizes]


def stats_html(columns: Sequence[tuple[str, BoundaryStats, Sequence[str]]]) -> str:
    """Each configuration's figures side by side: (label, stats, facts such as what a preview cost)."""
    return render(
        "frontend",
        "boundary_stats.html.j2",
        tiny_tokens=TINY_TOKENS,
        columns=[{"label": label, "stats": stats, "facts": list(facts)} for label, stats, facts in columns],
    )
