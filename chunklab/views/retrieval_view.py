"""View data for a retrieval result: the flat `retrieved_chunks` and the `expansion_tree`.

The UI's Query and Experiments pages and the evaluator's reports draw these
alike, through `chunklab/views/templates/retrieval.html.j2`; this module is the one
place that reads the Chunk and ExpansionNode messages for them. Plain data
out, no HTML: the template lays it out and escapes it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from chunklab import ids
from chunklab.metrics import Span, chunk_span, overlap_ranges
from chunklab.text import pages
from chunklab.v1 import common_pb2
from chunklab.views import metric_format


@dataclass(frozen=True)
class Segment:
    """A stretch of a chunk's text, start and end in the document's characters;
    marked where it lies in a reference excerpt of the question; `hit` the rank of
    the hit it lies in (a parent's or window's text, the hits inside it marked; 0:
    none), `label` ("#2") on the first stretch of each hit."""

    text: str
    start: int
    end: int
    marked: bool
    hit: int = 0
    label: str = ""


@dataclass(frozen=True)
class ChunkView:
    """One chunk as a card: its label, score and rerank score (hits), place in the document (pages: "p. 12",
    empty for formats without pages) and text."""

    chunk_id: str
    chunk_index: int
    label: str
    badge: str
    score: str
    document: str
    unit: str
    token_count: int
    start_char: int
    end_char: int
    page: str
    headings: list[str]
    content: str
    cut: bool
    enriched_content: str
    rerank_score: str = ""  # hits of a reranked query (ADR 0055)
    # With a question's references: the text in stretches, those in an excerpt marked.
    segments: tuple[Segment, ...] = ()


@dataclass(frozen=True)
class GroupView:
    """What a hit pulled in on one side: neighbours, sentence-window units or its parent."""

    role: str
    caption: str
    chunks: list[ChunkView]


@dataclass(frozen=True)
class NodeView:
    """A hit with its groups in reading order: those before it above, the rest below.
    Hits that share one parent are one node (ADR 0084): `hits` lists them all (`hit` and
    `rank` are the best one's), the parent shown once below with each hit marked in it.
    A sentence-window hit's node has `window`: the window's text with the hit marked."""

    rank: int
    hit: ChunkView
    above: list[GroupView]
    below: list[GroupView]
    hits: tuple[ChunkView, ...] = ()
    window: tuple[Segment, ...] = ()

    @property
    def shared(self) -> bool:
        return len(self.hits) > 1


def label_name(label: int) -> str:
    """CHUNK_LABEL_HIT -> "hit", as the spec names the labels."""
    try:
        return common_pb2.ChunkLabel.Name(label).removeprefix("CHUNK_LABEL_").lower()
    except ValueError:
        return "unspecified"


def unit_name(chunk: common_pb2.Chunk) -> str:
    """What the chunk_index counts: chunks, or a strategy's sentences, children or parents."""
    return ids.role_name(chunk.role)


def _cut(text: str, max_chars: int | None) -> tuple[str, bool]:
    if max_chars is None or len(text) <= max_chars:
        return text, False
    return text[:max_chars] + "…", True


def segments(chunk: common_pb2.Chunk, references: Sequence[Span]) -> tuple[Segment, ...]:
    """The chunk's text in stretches, marked where it overlaps a reference; none when
    nothing overlaps (or the text is not the document's range, so offsets would lie)."""
    if not _is_range(chunk):
        return ()
    return _marked(chunk.content, chunk_span(chunk), references)


def _is_range(chunk: common_pb2.Chunk) -> bool:
    """Whether the chunk's text is its document's characters start_char to end_char."""
    return len(chunk.content) == chunk.end_char - chunk.start_char


def _marked(
    text: str, span: Span, references: Sequence[Span], hits: Sequence[tuple[Span, int]] = ()
) -> tuple[Segment, ...]:
    """`text` (the document's characters of `span`) in stretches, those in a reference marked,
    those in a hit (its span, its rank) carrying the rank; none when neither touches it."""
    ranges = overlap_ranges(span, references)
    inside = [(max(h.start, span.start), min(h.end, span.end), rank) for h, rank in hits]
    inside = [(start, end, rank) for start, end, rank in inside if start < end]
    if not ranges and not inside:
        return ()
    cuts = sorted({span.start, span.end, *(x for r in ranges for x in r), *(x for h in inside for x in h[:2])})
    pieces: list[Segment] = []
    labelled: set[int] = set()
    for start, end in zip(cuts, cuts[1:]):
        rank = min((r for s, e, r in inside if s <= start and end <= e), default=0)
        label = f"#{rank}" if rank and rank not in labelled else ""
        labelled.add(rank)
        marked = any(s <= start and end <= e for s, e in ranges)
        pieces.append(Segment(text[start - span.start : end - span.start], start, end, marked, rank, label))
    return tuple(pieces)


def chunk_view(
    item: common_pb2.RetrievedChunk, max_chars: int | None = None, references: Sequence[Span] = ()
) -> ChunkView:
    """A card's data; with max_chars, texts longer than that are cut (reports keep files small);
    with a question's references, the stretches of text that lie in them are marked."""
    chunk = item.chunk
    label = label_name(item.label)
    content, cut = _cut(chunk.content, max_chars)
    enriched = _cut(chunk.enriched_content, max_chars)[0] if chunk.HasField("enriched_content") else ""
    return ChunkView(
        chunk_id=chunk.chunk_id,
        chunk_index=chunk.chunk_index,
        label=label,
        badge=f"{label} #{item.rank}" if label == "hit" and item.rank else label,
        score=metric_format.score(item.score) if item.HasField("score") else "",
        document=chunk.document_name or chunk.document_id,
        unit=unit_name(chunk),
        token_count=chunk.token_count,
        start_char=chunk.start_char,
        end_char=chunk.end_char,
        page=pages.page_label(chunk.first_page, chunk.last_page),
        headings=list(chunk.heading_path),
        content=content,
        cut=cut,
        enriched_content=enriched,
        rerank_score=metric_format.score(item.rerank_score) if item.HasField("rerank_score") else "",
        segments=segments(chunk, references) if references and not cut else (),
    )


def text_view(chunk: common_pb2.Chunk, max_chars: int | None = None) -> ChunkView:
    """A chunk's card on its own, without a retrieval's label, rank or score: for a page that shows
    each chunk's text once (the report's chunk texts) and points to it from every retrieval."""
    return replace(chunk_view(common_pb2.RetrievedChunk(chunk=chunk), max_chars), label="text", badge="text")


def flat_view(
    items: Iterable[common_pb2.RetrievedChunk], max_chars: int | None = None, references: Sequence[Span] = ()
) -> list[ChunkView]:
    """`retrieved_chunks` exactly in the service's order: what the LLM sees."""
    return [chunk_view(item, max_chars, references) for item in items]


@dataclass(frozen=True)
class PassageView:
    """Chunks of one document that overlap or touch, in the order the LLM reads them, drawn
    as one stretch of text: overlapping text shows once although it is sent once per chunk.
    `tokens_sent` is the chunks' own token counts added up (what the LLM is sent);
    `repeated_chars` is how many characters are sent more than once."""

    document: str
    start_char: int
    end_char: int
    chunks: list[ChunkView]
    text: str
    segments: tuple[Segment, ...]
    tokens_sent: int
    repeated_chars: int


def passage_view(items: Iterable[common_pb2.RetrievedChunk], references: Sequence[Span] = ()) -> list[PassageView]:
    """`retrieved_chunks` in the service's order, runs of one document's chunks that overlap
    or touch merged into one passage each (a chunk on its own is a passage of one). Chunks
    whose text is not their document's range (so offsets would lie) are never merged."""
    runs: list[list[common_pb2.RetrievedChunk]] = []
    for item in items:
        chunk, last = item.chunk, runs[-1][-1].chunk if runs else None
        if (
            last is not None
            and _is_range(chunk)
            and _is_range(last)
            and chunk.document_id == last.document_id
            and chunk.start_char <= max(c.chunk.end_char for c in runs[-1])
        ):
            runs[-1].append(item)
        else:
            runs.append([item])
    return [_passage(run, references) for run in runs]


def _passage(run: list[common_pb2.RetrievedChunk], references: Sequence[Span]) -> PassageView:
    first = run[0].chunk
    text, end = first.content, first.end_char
    for item in run[1:]:
        chunk = item.chunk
        if chunk.end_char > end:
            text += chunk.content[end - chunk.start_char :]
            end = chunk.end_char
    span = Span(first.document_id, first.start_char, end)
    sent = sum(len(item.chunk.content) for item in run)
    return PassageView(
        document=first.document_name or first.document_id,
        start_char=first.start_char,
        end_char=end,
        chunks=[chunk_view(item, references=references) for item in run],
        text=text,
        segments=_marked(text, span, references) if len(run) > 1 else (),
        tokens_sent=sum(item.chunk.token_count for item in run),
        repeated_chars=sent - len(text) if len(run) > 1 else 0,
    )


def _group(items, role: str, caption: str, max_chars: int | None, references: Sequence[Span]) -> list[GroupView]:
    return [GroupView(role, caption, flat_view(items, max_chars, references))] if items else []


def node_view(
    node: common_pb2.ExpansionNode, max_chars: int | None = None, references: Sequence[Span] = ()
) -> NodeView:
    """A hit with what it pulled in, in reading order around it.

    Neighbours and sentence-window units before the hit sit above it and those
    after it below (the window excludes the hit itself); a parent-child hit's
    parent, which contains it, is shown under it with the hit marked inside.
    """
    index = node.hit.chunk.chunk_index
    before = [w for w in node.window if w.chunk.chunk_index < index]
    after = [w for w in node.window if w.chunk.chunk_index >= index]
    hit = chunk_view(node.hit, max_chars, references)
    parent = [parent_card(node.parent, [node.hit], max_chars, references)] if node.HasField("parent") else []
    return NodeView(
        rank=node.hit.rank,
        hit=hit,
        above=[
            *_group(
                node.neighbors_prev,
                "neighbors_prev",
                f"↑ {len(node.neighbors_prev)} preceding (neighbors_prev)",
                max_chars,
                references,
            ),
            *_group(before, "window", f"↑ {len(before)} sentence-window units before the hit", max_chars, references),
        ],
        below=[
            *_group(
                node.neighbors_next,
                "neighbors_next",
                f"↓ {len(node.neighbors_next)} following (neighbors_next)",
                max_chars,
                references,
            ),
            *_group(after, "window", f"↓ {len(after)} sentence-window units after the hit", max_chars, references),
            *([GroupView("parent", "parent (what the LLM sees, the hit marked inside it)", parent)] if parent else []),
        ],
        hits=(hit,),
        window=window_text(node, references) if node.window and max_chars is None else (),
    )


def _hit_spans(hits: Iterable[common_pb2.RetrievedChunk], document_id: str) -> list[tuple[Span, int]]:
    return [(chunk_span(h.chunk), h.rank) for h in hits if h.chunk.document_id == document_id and _is_range(h.chunk)]


def parent_card(
    parent: common_pb2.RetrievedChunk,
    hits: Sequence[common_pb2.RetrievedChunk],
    max_chars: int | None = None,
    references: Sequence[Span] = (),
) -> ChunkView:
    """A parent's card with the stretches of its text that are its hits marked (their ranks),
    and the reference excerpts; plain when its text is cut or is not the document's range."""
    card = chunk_view(parent, max_chars, references)
    if card.cut or not _is_range(parent.chunk):
        return card
    spans = _hit_spans(hits, parent.chunk.document_id)
    return replace(card, segments=_marked(parent.chunk.content, chunk_span(parent.chunk), references, spans))


def window_text(node: common_pb2.ExpansionNode, references: Sequence[Span] = ()) -> tuple[Segment, ...]:
    """A sentence-window hit's window as the LLM reads it: its units and the hit in document
    order, the hit marked with its rank (and the reference excerpts), a space between units."""
    units = sorted([*node.window, node.hit], key=lambda item: item.chunk.chunk_index)
    pieces: list[Segment] = []
    for unit in units:
        chunk = unit.chunk
        if pieces:
            pieces.append(Segment(" ", chunk.start_char, chunk.start_char, False))
        spans = _hit_spans([node.hit], chunk.document_id) if unit is node.hit else []
        marked = _marked(chunk.content, chunk_span(chunk), references, spans) if _is_range(chunk) else ()
        pieces.extend(marked or (Segment(chunk.content, chunk.start_char, chunk.end_char, False),))
    return tuple(pieces)


def _shared_node(nodes: Sequence[common_pb2.ExpansionNode], max_chars: int | None, references) -> NodeView:
    """Hits that pulled in one parent, as one node: the hits listed in score order, the parent
    once with each of them marked inside it."""
    parent = parent_card(nodes[0].parent, [n.hit for n in nodes], max_chars, references)
    hits = tuple(chunk_view(n.hit, max_chars, references) for n in nodes)
    ranks = ", ".join(f"#{n.hit.rank}" for n in nodes)
    caption = f"parent shared by hits {ranks} (what the LLM sees once, each hit marked inside it)"
    return NodeView(
        rank=nodes[0].hit.rank, hit=hits[0], above=[], below=[GroupView("parent", caption, [parent])], hits=hits
    )


def tree_view(
    tree: common_pb2.ExpansionTree, max_chars: int | None = None, references: Sequence[Span] = ()
) -> list[NodeView]:
    """`expansion_tree`: the hits in the service's (score) order, each with its expansion;
    hits that share a parent are one node, where the best of them ranks (ADR 0084)."""
    groups: dict[str, list[common_pb2.ExpansionNode]] = {}
    order: list[str] = []
    for position, node in enumerate(tree.hits):
        key = f"parent:{node.parent.chunk.chunk_id}" if node.HasField("parent") else f"hit:{position}"
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append(node)
    return [
        node_view(groups[key][0], max_chars, references)
        if len(groups[key]) == 1
        else _shared_node(groups[key], max_chars, references)
        for key in order
    ]


def neighbours_badge(experiment) -> dict:
    """The `±P/N` neighbours badge of an experiment (evaluator_pb2.Experiment), as
    the UI and the reports show it: muted when no run expands by neighbours, so
    the knobs had no effect."""
    options = experiment.config.retrieval
    used = any(run.expansion == common_pb2.EXPANSION_KIND_NEIGHBORS for run in experiment.runs)
    tip = f"neighbor_prev {options.neighbor_prev} / neighbor_next {options.neighbor_next}"
    if not used:
        tip += " (no run expands by neighbours: the knobs had no effect)"
    return {"prev": options.neighbor_prev, "next": options.neighbor_next, "muted": not used, "tip": tip}
