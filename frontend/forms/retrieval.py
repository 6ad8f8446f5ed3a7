"""The retrieval inputs the Query page and the experiment form share: the hybrid box and
the bounds of the number inputs, read from the retriever."""

from __future__ import annotations

import gradio as gr

from chunklab_app import recommended
from chunklab.client import ChunkLab, ClientError
from frontend.errors import said_as_info


def hybrid_checkbox(elem_id: str) -> gr.Checkbox:
    """The hybrid retrieval box of the Query page and the experiment form: ticked at first as
    docs/benchmarks.md recommends (chunklab_app.recommended); the API's default stays off."""
    return gr.Checkbox(label="hybrid (BM25 + dense)", value=recommended.HYBRID, elem_id=elem_id)


def retrieval_limit_updates(gateway: ChunkLab) -> tuple:
    """Bounds for the top_k, neighbor_prev, neighbor_next, window and recency inputs,
    read from RetrieverService.GetRetrievalLimits: the retriever's own limits, so the
    form never offers what a query would refuse (ADR 0039). Out of reach, the inputs
    keep what they have and the first says why."""
    try:
        limits = gateway.retrieval_limits()
    except ClientError as exc:
        return (said_as_info(exc), *(gr.skip() for _ in range(4)))
    # interactive=True: Gradio would otherwise take an input that a load event updates for an output only.
    return (
        gr.update(minimum=0, maximum=limits.max_top_k, info=f"hits, up to {limits.max_top_k}", interactive=True),
        gr.update(minimum=0, maximum=limits.max_neighbors, interactive=True),
        gr.update(minimum=0, maximum=limits.max_neighbors, interactive=True),
        gr.update(info=f"sentence_window: units each side, 0 to {limits.max_window}; empty = as indexed",
                  interactive=True),
        gr.update(minimum=0, maximum=limits.max_recency_lambda, interactive=True),
    )
