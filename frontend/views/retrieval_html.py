"""HTML for a retrieval result: the flat `retrieved_chunks` list, the `expansion_tree`
and the line that sums up the context.

The list and the tree come from the shared template (chunklab/views/templates/
retrieval.html.j2), which the evaluator's reports use too; Jinja escapes every
piece of document text, since documents are user uploads and may hold markup.
"""

from __future__ import annotations

from chunklab.v1 import common_pb2, retriever_pb2
from chunklab.views import retrieval_view
from chunklab.views.metric_format import plural
from chunklab.views.render import render, render_macro

NO_CHUNKS = "No chunks were retrieved: no chunk of the searched index sets matches the filters."


def nothing_indexed(strategy: str, embedding_model: str = "") -> str:
    """The fact, when ListIndexedSets has no set of the strategy at all (with the model)."""
    model = f" with {embedding_model}" if embedding_model else ""
    return f"0 chunks are indexed for {strategy}{model}: process a document with it on the Documents tab."


def flat_list_html(response: retriever_pb2.RetrieveResponse, empty: str = NO_CHUNKS) -> str:
    """`retrieved_chunks` in the service's order: what the LLM will see, one document's
    overlapping or touching chunks merged into one passage (and said so); `empty` says why
    when there are none."""
    return render_macro(
        "frontend",
        "retrieval.html.j2",
        "context_passages",
        retrieval_view.passage_view(response.retrieved_chunks),
        empty,
    )


def expansion_tree_html(response: retriever_pb2.RetrieveResponse) -> str:
    """`expansion_tree`: the hits in the service's (score) order, each with its expansion nested."""
    return render_macro(
        "frontend", "retrieval.html.j2", "expansion_tree", retrieval_view.tree_view(response.expansion_tree)
    )


def hits_phrase(retrieved_chunks, tree: common_pb2.ExpansionTree) -> str:
    """What the context is made of, in words: "5 hits + 2 added by expansion", or, for
    parent-child strategies (whose hits are children, sent as their parents), "3 parents
    holding the 4 hits" rather than a "0 hits" that reads like a failure."""
    hits = sum(1 for item in retrieved_chunks if item.label == common_pb2.CHUNK_LABEL_HIT)
    if retrieved_chunks and all(item.label == common_pb2.CHUNK_LABEL_PARENT for item in retrieved_chunks):
        return (
            f"{plural(len(retrieved_chunks), 'parent')} holding the {plural(len(tree.hits), 'hit')} "
            "(children: see them in the expansion tree)"
        )
    return f"{plural(hits, 'hit')} + {len(retrieved_chunks) - hits} added by expansion"


def context_summary_html(context, strategy: str, embedding_model: str = "") -> str:
    """One line for an answer's context (`retrieved_chunks` and `expansion_tree`): how many
    chunks, what they are made of (hits_phrase) and the tokens sent."""
    retrieved = context.retrieved_chunks
    return render(
        "frontend",
        "context_summary.html.j2",
        chunks=len(retrieved),
        made_of=hits_phrase(retrieved, context.expansion_tree),
        tokens=sum(item.chunk.token_count for item in retrieved),
        strategy=strategy,
        embedding_model=embedding_model or "(default)",
    )
