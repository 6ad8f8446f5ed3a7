"""The chunk-boundary viewer: a document's text with one strategy's chunks marked on it.

Every chunk carries `start_char`/`end_char` into the canonical text, so the
viewer cuts the text at every chunk edge and colours each piece by the chunk
that covers it: alternating backgrounds per chunk, a distinct colour where
chunks overlap (fixed_size's overlap), plain text where no chunk reaches. A
label at each chunk's start gives its index and token count, and hovering a
piece names its chunk. Parent-child strategies show each parent as a framed
block with its children alternating inside it. No Gradio here; all document
text is escaped.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from html import escape

from chunklab import ids
from chunklab.v1 import chunker_pb2, common_pb2

# Beyond this many characters the viewer shows the start of the document only:
# a browser page with hundreds of thousands of spans is no longer readable.
MAX_VIEW_CHARS = 200_000
MAX_ENRICHED_SHOWN = 200


def _attr(value: object) -> str:
    return escape(str(value), quote=True)


def _describe(chunk: common_pb2.Chunk) -> str:
    role = f"{ids.role_name(chunk.role)} "
    return f"{role}{chunk.chunk_index} · {chunk.token_count} tokens · chars {chunk.start_char}–{chunk.end_char}"


def _mark(chunk: common_pb2.Chunk) -> str:
    return (
        f'<span class="cl-bmark" data-chunk-index="{chunk.chunk_index}" title="{_attr(_describe(chunk))}">'
        f"#{chunk.chunk_index} · {chunk.token_count} tok</span>"
    )


def segments_html(text: str, start: int, end: int, chunks: Sequence[common_pb2.Chunk]) -> str:
    """text[start:end] cut at every chunk edge inside it, each piece coloured by what covers it."""
    spans = sorted(
        ((max(c.start_char, start), min(c.end_char, end), c) for c in chunks),
        key=lambda s: (s[0], s[2].chunk_index),
    )
    spans = [s for s in spans if s[0] < s[1]]
    cuts = sorted({start, end} | {p for a, b, _ in spans for p in (a, b)})
    out: list[str] = []
    next_span = 0
    active: list[tuple[int, int, common_pb2.Chunk]] = []
    for a, b in zip(cuts, cuts[1:]):
        while next_span < len(spans) and spans[next_span][0] <= a:
            out.append(_mark(spans[next_span][2]))
            active.append(spans[next_span])
            next_span += 1
        active = [s for s in active if s[1] > a]
        piece = escape(text[a:b])
        if not active:
            out.append(f'<span class="cl-gap">{piece}</span>')
        elif len(active) == 1:
            chunk = active[0][2]
            out.append(
                f'<span class="cl-seg cl-seg-{chunk.chunk_index % 2}" data-chunks="{chunk.chunk_index}"'
                f' title="{_attr(_describe(chunk))}">{piece}</span>'
            )
        else:
            indices = " ".join(str(s[2].chunk_index) for s in active)
            title = "overlap of chunks " + ", ".join(str(s[2].chunk_index) for s in active)
            out.append(
                f'<span class="cl-seg cl-overlap" data-chunks="{indices}" title="{_attr(title)}">{piece}</span>'
            )
    return "".join(out)


def _flat(text: str, end: int, chunks: Sequence[common_pb2.Chunk]) -> str:
    return f'<div class="cl-boundary-text">{segments_html(text, 0, end, chunks)}</div>'


def _gap(piece: str) -> str:
    return f'<div class="cl-boundary-text"><span class="cl-gap">{escape(piece)}</span></div>'


def _with_parents(text: str, end: int, parents: list, children: list) -> str:
    """Each parent framed, its children alternating inside; text between parents plain."""
    by_parent: dict[str, list[common_pb2.Chunk]] = {}
    for child in children:
        by_parent.setdefault(child.parent_id, []).append(child)
    out, position = [], 0
    for parent in sorted(parents, key=lambda p: (p.start_char, p.chunk_index)):
        if parent.start_char >= end:
            break
        if parent.start_char > position:
            out.append(_gap(text[position:parent.start_char]))
        kids = by_parent.get(parent.chunk_id, [])
        stop = min(parent.end_char, end)
        out.append(
            f'<div class="cl-bparent" data-parent-index="{parent.chunk_index}" data-chunk-id="{_attr(parent.chunk_id)}">'
            f'<div class="cl-bparent-head">parent {parent.chunk_index} · {parent.token_count} tokens'
            f" · chars {parent.start_char}–{parent.end_char} · {len(kids)} children</div>"
            f'<div class="cl-boundary-text">{segments_html(text, parent.start_char, stop, kids)}</div></div>'
        )
        position = max(position, stop)
    if position < end:
        out.append(_gap(text[position:end]))
    return "".join(out)


def _enriched(chunks: Sequence[common_pb2.Chunk]) -> str:
    enriched = [c for c in chunks if c.HasField("enriched_content")]
    if not enriched:
        return ""
    items = "".join(
        f'<details class="cl-enriched" data-chunk-index="{c.chunk_index}"><summary>chunk {c.chunk_index}</summary>'
        f'<pre class="cl-content">{escape(c.enriched_content)}</pre></details>'
        for c in enriched[:MAX_ENRICHED_SHOWN]
    )
    more = f"<p>… and {len(enriched) - MAX_ENRICHED_SHOWN} more.</p>" if len(enriched) > MAX_ENRICHED_SHOWN else ""
    return f'<div class="cl-enriched-list"><b>What was embedded (enriched_content)</b>{items}{more}</div>'


def boundary_html(text: str, chunks: Sequence[common_pb2.Chunk], max_chars: int = MAX_VIEW_CHARS) -> str:
    """The whole viewer: the marked text, notes on anything unusual, and enriched texts."""
    end = min(len(text), max_chars)
    parents = [c for c in chunks if c.role == common_pb2.CHUNK_ROLE_PARENT]
    others = [c for c in chunks if c.role != common_pb2.CHUNK_ROLE_PARENT]
    notes = []
    if end < len(text):
        notes.append(f"Showing the first {end:,} of {len(text):,} characters.")
    inexact = [c.chunk_index for c in chunks if text[c.start_char:c.end_char] != c.content]
    if inexact:
        shown = ", ".join(str(i) for i in inexact[:10]) + (" …" if len(inexact) > 10 else "")
        notes.append(
            f"{len(inexact)} chunks do not copy the text exactly at their positions (chunks {shown}); "
            "they are marked where the strategy says they are."
        )
    if not chunks:
        notes.append("The strategy made no chunks for this document.")
    body = _with_parents(text, end, parents, others) if parents else _flat(text, end, others)
    note_html = "".join(f'<p class="cl-note">{escape(n)}</p>' for n in notes)
    kind = "parents" if parents else "flat"
    return f'<div class="cl-boundaries" data-layout="{kind}">{note_html}{body}{_enriched(chunks)}</div>'


def preview_summary_html(strategy: str, response: chunker_pb2.PreviewChunksResponse) -> str:
    """One line: how many chunks of which sizes, and what the preview cost."""
    chunks = list(response.chunks)
    parents = [c for c in chunks if c.role == common_pb2.CHUNK_ROLE_PARENT]
    searchable = [c for c in chunks if c.role != common_pb2.CHUNK_ROLE_PARENT]
    parts = [f"<b>{escape(strategy)}</b>", f"config {escape(response.config_id)}"]
    if parents:
        parts.append(f"<b>{len(parents)}</b> parents, <b>{len(searchable)}</b> children")
    else:
        parts.append(f"<b>{len(searchable)}</b> chunks")
    if searchable:
        sizes = [c.token_count for c in searchable]
        parts.append(
            f"tokens min {min(sizes)} · median {statistics.median(sizes):g} · max {max(sizes)}"
        )
    usage = response.usage
    if usage.llm_calls:
        parts.append(f"{usage.llm_calls} LLM calls ({usage.prompt_tokens + usage.completion_tokens} tokens)")
    if usage.embedding_tokens:
        parts.append(f"{usage.embedding_tokens} tokens embedded")
    return f'<div class="cl-summary">{" · ".join(parts)}</div>'
