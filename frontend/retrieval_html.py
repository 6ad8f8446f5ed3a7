"""HTML for a retrieval result: the flat `retrieved_chunks` list and the `expansion_tree`.

Built by hand rather than through Markdown so that the layout (hits with their
neighbours nested inside) and the hooks for tests (`data-label`, `data-role`,
`data-chunk-index`) are ours. Every piece of document text goes through
`html.escape`: documents are user uploads and may contain `<script>` or markup.
"""

from __future__ import annotations

from html import escape

from chunklab import ids
from chunklab.v1 import common_pb2, retriever_pb2


def label_name(label: int) -> str:
    """CHUNK_LABEL_HIT -> "hit", as the spec names the labels."""
    try:
        return common_pb2.ChunkLabel.Name(label).removeprefix("CHUNK_LABEL_").lower()
    except ValueError:
        return "unspecified"


def _attr(value: object) -> str:
    return escape(str(value), quote=True)


def _unit(chunk: common_pb2.Chunk) -> str:
    """What the chunk_index counts: chunks, or a strategy's sentences, children or parents."""
    return ids.role_name(chunk.role)


def chunk_card(item: common_pb2.RetrievedChunk, *, tag: str = "div", role: str = "") -> str:
    """One chunk with its label, score (hits), place in the document and text."""
    chunk = item.chunk
    label = label_name(item.label)
    badge = f"{label} #{item.rank}" if label == "hit" and item.rank else label
    facts = []
    if item.HasField("score"):
        facts.append(f'<span class="cl-score">score {item.score:.4f}</span>')
    facts += [
        f'<span class="cl-doc">{escape(chunk.document_name or chunk.document_id)}</span>',
        f'<span class="cl-index">{escape(_unit(chunk))} {chunk.chunk_index}</span>',
        f'<span class="cl-tokens">{chunk.token_count} tokens</span>',
        f'<span class="cl-range">chars {chunk.start_char}–{chunk.end_char}</span>',
    ]
    headings = ""
    if chunk.heading_path:
        path = " › ".join(escape(h) for h in chunk.heading_path)
        headings = f'<div class="cl-headings">{path}</div>'
    role_attr = f' data-role="{_attr(role)}"' if role else ""
    return (
        f'<{tag} class="cl-chunk cl-{_attr(label)}" data-label="{_attr(label)}"{role_attr}'
        f' data-chunk-id="{_attr(chunk.chunk_id)}" data-chunk-index="{chunk.chunk_index}">'
        f'<div class="cl-chunk-head"><span class="cl-badge cl-badge-{_attr(label)}">{escape(badge)}</span>'
        f'{" · ".join(facts)}</div>{headings}'
        f'<pre class="cl-content">{escape(chunk.content)}</pre></{tag}>'
    )


def flat_list_html(response: retriever_pb2.RetrieveResponse) -> str:
    """`retrieved_chunks` exactly in the service's order: what the LLM will see."""
    if not response.retrieved_chunks:
        return '<div class="cl-flat"><p class="cl-empty">No chunks were retrieved. Is a document processed with this strategy (Documents tab), and do the filters match it?</p></div>'
    items = "".join(chunk_card(item, tag="li") for item in response.retrieved_chunks)
    return f'<div class="cl-flat"><ol class="cl-flat-list">{items}</ol></div>'


def _group(items, role: str, caption: str) -> str:
    if not items:
        return ""
    cards = "".join(chunk_card(item, tag="li", role=role) for item in items)
    return (
        f'<div class="cl-group cl-group-{role}"><div class="cl-group-caption">{escape(caption)}</div>'
        f'<ul class="cl-nested" data-role="{role}">{cards}</ul></div>'
    )


def expansion_node_html(node: common_pb2.ExpansionNode) -> str:
    """A hit with what it pulled in, in reading order around it.

    Neighbours and sentence-window units before the hit sit above it and those
    after it below (the window excludes the hit itself); a parent-child hit's
    parent, which contains it, is shown under it.
    """
    prev = _group(node.neighbors_prev, "neighbors_prev", f"↑ {len(node.neighbors_prev)} preceding (neighbors_prev)")
    nxt = _group(node.neighbors_next, "neighbors_next", f"↓ {len(node.neighbors_next)} following (neighbors_next)")
    index = node.hit.chunk.chunk_index
    before = [w for w in node.window if w.chunk.chunk_index < index]
    after = [w for w in node.window if w.chunk.chunk_index >= index]
    window_before = _group(before, "window", f"↑ {len(before)} sentence-window units before the hit")
    window_after = _group(after, "window", f"↓ {len(after)} sentence-window units after the hit")
    parent = _group(
        [node.parent] if node.HasField("parent") else [], "parent", "parent (what the LLM sees, the hit inside it)"
    )
    hit = chunk_card(node.hit, role="hit")
    return (
        f'<li class="cl-node" data-rank="{node.hit.rank}" data-chunk-id="{_attr(node.hit.chunk.chunk_id)}">'
        f"{prev}{window_before}{hit}{nxt}{window_after}{parent}</li>"
    )


def expansion_tree_html(response: retriever_pb2.RetrieveResponse) -> str:
    """`expansion_tree`: the hits in the service's (score) order, each with its expansion nested."""
    nodes = response.expansion_tree.hits
    if not nodes:
        return '<div class="cl-tree"><p class="cl-empty">No hits.</p></div>'
    return f'<div class="cl-tree"><ol class="cl-tree-hits">{"".join(expansion_node_html(n) for n in nodes)}</ol></div>'


def _context_counts(items) -> str:
    hits = sum(1 for item in items if item.label == common_pb2.CHUNK_LABEL_HIT)
    tokens = sum(item.chunk.token_count for item in items)
    return (
        f"<b>{len(items)}</b> chunks in the context: <b>{hits}</b> hits"
        f" + <b>{len(items) - hits}</b> added by expansion · {tokens} tokens"
    )


def retrieval_summary_html(response: retriever_pb2.RetrieveResponse) -> str:
    """One line: how much context the query produced and what it cost in time."""
    t = response.timings
    cached = " (cached)" if t.query_embedding_cached else ""
    return (
        f'<div class="cl-summary">{_context_counts(response.retrieved_chunks)}'
        f" · embedding model {escape(response.embedding_model or '(default)')}"
        f" · embed {t.embed_ms:.0f} ms{cached}, search {t.search_ms:.0f} ms, expand {t.expand_ms:.0f} ms,"
        f" total {t.total_ms:.0f} ms</div>"
    )


def context_summary_html(retrieved_chunks, strategy: str, embedding_model: str = "") -> str:
    """The same line for an answer's context (the Answer stream carries no retrieval timings).

    With parent-child strategies the flat list holds parents only, so a
    context of 0 hits + N added is the expected shape, not a mistake.
    """
    hits_in_tree = ""
    if retrieved_chunks and all(item.label == common_pb2.CHUNK_LABEL_PARENT for item in retrieved_chunks):
        hits_in_tree = " (the hits are children: see them in the tree)"
    return (
        f'<div class="cl-summary">{_context_counts(retrieved_chunks)}{hits_in_tree}'
        f" · strategy {escape(strategy)} · embedding model {escape(embedding_model or '(default)')}</div>"
    )
