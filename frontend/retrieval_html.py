"""HTML for a retrieval result: the flat `retrieved_chunks` list, the `expansion_tree`
and the line that sums up the context.

The list and the tree come from the shared template (chunklab/templates/
retrieval.html.j2), which the evaluator's reports use too; Jinja escapes every
piece of document text, since documents are user uploads and may hold markup.
"""

from __future__ import annotations

from chunklab import retrieval_view
from chunklab.render import render, render_macro
from chunklab.v1 import common_pb2, retriever_pb2

NO_CHUNKS = "No chunks were retrieved: no chunk of the searched index sets matches the filters."


def nothing_indexed(strategy: str) -> str:
    """The fact, when ListIndexedSets has no set of the strategy at all."""
    return f"Nothing is indexed with {strategy} yet: process a document with it on the Documents tab."


def flat_list_html(response: retriever_pb2.RetrieveResponse, empty: str = NO_CHUNKS) -> str:
    """`retrieved_chunks` exactly in the service's order: what the LLM will see; `empty`
    says why when there are none."""
    return render_macro("frontend", "retrieval.html.j2", "flat_list",
                        retrieval_view.flat_view(response.retrieved_chunks), empty)


def expansion_tree_html(response: retriever_pb2.RetrieveResponse) -> str:
    """`expansion_tree`: the hits in the service's (score) order, each with its expansion nested."""
    return render_macro("frontend", "retrieval.html.j2", "expansion_tree",
                        retrieval_view.tree_view(response.expansion_tree))


def context_summary_html(retrieved_chunks, strategy: str, embedding_model: str = "") -> str:
    """One line for an answer's context: how many chunks, how many hits, what expansion added.

    With parent-child strategies the flat list holds parents only, so a
    context of 0 hits + N added is the expected shape, not a mistake.
    """
    hits = sum(1 for item in retrieved_chunks if item.label == common_pb2.CHUNK_LABEL_HIT)
    parents_only = bool(retrieved_chunks) and all(
        item.label == common_pb2.CHUNK_LABEL_PARENT for item in retrieved_chunks
    )
    return render(
        "frontend", "context_summary.html.j2",
        chunks=len(retrieved_chunks), hits=hits, tokens=sum(item.chunk.token_count for item in retrieved_chunks),
        parents_only=parents_only, strategy=strategy, embedding_model=embedding_model or "(default)",
    )
