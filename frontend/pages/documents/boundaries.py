"""The chunk-boundary viewer: a document's text with one strategy's chunks marked on it.

Every chunk carries `start_char`/`end_char` into the canonical text, so the
viewer cuts the text at every chunk edge and colours each piece by the chunk
that covers it: alternating backgrounds per chunk, a distinct colour where
chunks overlap (fixed_size's overlap), plain text where no chunk reaches. A
label at each chunk's start gives its index and token count, and hovering a
piece names its chunk. Parent-child strategies show each parent as a framed
block with its children alternating inside it. No Gradio here; all document
text is escaped. Two configurations side by side: boundary_columns.py,
which cuts each side with `segments` too.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from chunklab import ids
from chunklab.text import pages
from chunklab.v1 import chunker_pb2, common_pb2
from chunklab.views import numbers
from chunklab.views.render import render

# Beyond this many characters the viewer shows the start of the document only:
# a browser page with hundreds of thousands of spans is no longer readable.
MAX_VIEW_CHARS = 200_000
MAX_ENRICHED_SHOWN = 200


@dataclass(frozen=True)
class Piece:
    """One run of the text (kind "one", "overlap" or "gap"), a chunk's start label ("mark"),
    or where a page begins ("page")."""

    kind: str
    text: str = ""
    index: int = 0
    tokens: int = 0
    page: str = ""
    chunks: str = ""
    title: str = ""


def _is_parent(chunk: common_pb2.Chunk) -> bool:
    return chunk.role == common_pb2.CHUNK_ROLE_PARENT


def _describe(chunk: common_pb2.Chunk) -> str:
    role = f"{ids.role_name(chunk.role)} "
    page = pages.page_label(chunk.first_page, chunk.last_page)
    return f"{role}{chunk.chunk_index} · {chunk.token_count} tokens · chars {chunk.start_char}–{chunk.end_char}" + (
        f" · {page}" if page else ""
    )


def _mark(chunk: common_pb2.Chunk) -> Piece:
    return Piece(
        "mark",
        index=chunk.chunk_index,
        tokens=chunk.token_count,
        page=pages.page_label(chunk.first_page, chunk.last_page),
        title=_describe(chunk),
    )


def segments(
    text: str,
    start: int,
    end: int,
    chunks: Sequence[common_pb2.Chunk],
    page_starts: Sequence[int] = (),
    also_cut_at: Sequence[int] = (),
) -> list[Piece]:
    """text[start:end] cut at every chunk edge inside it (and at `also_cut_at`), each piece named
    by what covers it; a page marker ("page") where each page of a paged document begins."""
    spans = sorted(
        ((max(c.start_char, start), min(c.end_char, end), c) for c in chunks),
        key=lambda s: (s[0], s[2].chunk_index),
    )
    spans = [s for s in spans if s[0] < s[1]]
    page_of = {offset: number for number, offset in enumerate(page_starts, start=1) if start <= offset < end}
    cuts = sorted(
        {start, end}
        | {p for a, b, _ in spans for p in (a, b)}
        | set(page_of)
        | {p for p in also_cut_at if start < p < end}
    )
    out: list[Piece] = []
    next_span = 0
    active: list[tuple[int, int, common_pb2.Chunk]] = []
    for a, b in zip(cuts, cuts[1:]):
        if a in page_of:
            out.append(Piece("page", index=page_of[a], page=pages.page_label(page_of[a])))
        while next_span < len(spans) and spans[next_span][0] <= a:
            out.append(_mark(spans[next_span][2]))
            active.append(spans[next_span])
            next_span += 1
        active = [s for s in active if s[1] > a]
        piece = text[a:b]
        if not active:
            out.append(Piece("gap", piece))
        elif len(active) == 1:
            chunk = active[0][2]
            out.append(
                Piece("one", piece, index=chunk.chunk_index, chunks=str(chunk.chunk_index), title=_describe(chunk))
            )
        else:
            indices = [str(s[2].chunk_index) for s in active]
            out.append(
                Piece("overlap", piece, chunks=" ".join(indices), title="overlap of chunks " + ", ".join(indices))
            )
    return out


def _parent_view(parent: common_pb2.Chunk, children: int) -> dict:
    return {
        "chunk_index": parent.chunk_index,
        "chunk_id": parent.chunk_id,
        "token_count": parent.token_count,
        "start_char": parent.start_char,
        "end_char": parent.end_char,
        "children": children,
        "page": pages.page_label(parent.first_page, parent.last_page),
    }


def _with_parents(text: str, end: int, parents: list, children: list, page_starts: Sequence[int]) -> list[dict]:
    """Each parent a framed block, its children alternating inside; text between parents plain."""
    by_parent: dict[str, list[common_pb2.Chunk]] = {}
    for child in children:
        by_parent.setdefault(child.parent_id, []).append(child)
    blocks, position = [], 0
    for parent in sorted(parents, key=lambda p: (p.start_char, p.chunk_index)):
        if parent.start_char >= end:
            break
        if parent.start_char > position:
            blocks.append({"parent": None, "pieces": segments(text, position, parent.start_char, [], page_starts)})
        kids = by_parent.get(parent.chunk_id, [])
        stop = min(parent.end_char, end)
        blocks.append(
            {
                "parent": _parent_view(parent, len(kids)),
                "pieces": segments(text, parent.start_char, stop, kids, page_starts),
            }
        )
        position = max(position, stop)
    if position < end:
        blocks.append({"parent": None, "pieces": segments(text, position, end, [], page_starts)})
    return blocks


def truncation_notes(text: str, end: int) -> list[str]:
    return (
        [f"Showing the first {numbers.count(end)} of {numbers.count(len(text))} characters."] if end < len(text) else []
    )


def chunk_notes(text: str, chunks: Sequence[common_pb2.Chunk], whose: str = "The strategy") -> list[str]:
    """What is unusual about a configuration's chunks: some not where they say, or none at all."""
    notes = []
    inexact = [c.chunk_index for c in chunks if text[c.start_char : c.end_char] != c.content]
    if inexact:
        shown = ", ".join(str(i) for i in inexact[:10]) + (" …" if len(inexact) > 10 else "")
        notes.append(
            f"{len(inexact)} chunks do not copy the text exactly at their positions (chunks {shown}); "
            "they are marked where the strategy says they are."
        )
    if not chunks:
        notes.append(f"{whose} made no chunks for this document.")
    return notes


def boundary_html(
    text: str, chunks: Sequence[common_pb2.Chunk], max_chars: int = MAX_VIEW_CHARS, page_starts: Sequence[int] = ()
) -> str:
    """The whole viewer: the marked text (with page markers for a paged document's
    `page_starts`), notes on anything unusual, and enriched texts."""
    end = min(len(text), max_chars)
    parents = [c for c in chunks if _is_parent(c)]
    others = [c for c in chunks if not _is_parent(c)]
    notes = truncation_notes(text, end) + chunk_notes(text, chunks)
    if parents:
        blocks = _with_parents(text, end, parents, others, page_starts)
    else:
        blocks = [{"parent": None, "pieces": segments(text, 0, end, others, page_starts)}]
    enriched = [
        {"chunk_index": c.chunk_index, "content": c.enriched_content} for c in chunks if c.HasField("enriched_content")
    ]
    return render(
        "frontend",
        "boundaries.html.j2",
        layout="parents" if parents else "flat",
        notes=notes,
        blocks=blocks,
        enriched=enriched[:MAX_ENRICHED_SHOWN],
        enriched_more=max(0, len(enriched) - MAX_ENRICHED_SHOWN),
    )


def usage_facts(usage: common_pb2.TokenUsage) -> list[str]:
    """What a preview cost, if anything: LLM calls and tokens embedded."""
    facts = []
    if usage.llm_calls:
        facts.append(f"{usage.llm_calls} LLM calls ({usage.prompt_tokens + usage.completion_tokens} tokens)")
    if usage.embedding_tokens:
        facts.append(f"{usage.embedding_tokens} tokens embedded")
    return facts


def preview_summary_html(strategy: str, response: chunker_pb2.PreviewChunksResponse) -> str:
    """One line: how many chunks of which sizes, and what the preview cost."""
    chunks = list(response.chunks)
    parents = [c for c in chunks if _is_parent(c)]
    searchable = [c for c in chunks if not _is_parent(c)]
    facts = []
    if searchable:
        sizes = [c.token_count for c in searchable]
        facts.append(
            f"tokens min {numbers.count(min(sizes))} · median {numbers.median(statistics.median(sizes))} "
            f"· max {numbers.count(max(sizes))}"
        )
    facts += usage_facts(response.usage)
    return render(
        "frontend",
        "preview_summary.html.j2",
        strategy=strategy,
        config_id=response.config_id,
        parents=len(parents),
        searchable=len(searchable),
        facts=facts,
    )
