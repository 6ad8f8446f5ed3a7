"""Bounds of the inputs whose limits a service enforces, read from that service when the
page loads (ADR 0039, ADR 0078): the UI never copies a limit, so changing one is one edit
where the service keeps it. Out of reach, an input keeps what it has and says why under
it. The retrieval inputs' bounds are forms.retrieval.retrieval_limit_updates."""

from __future__ import annotations

import gradio as gr

from chunklab.client import ChunkLab, ClientError
from frontend.errors import said_as_info


def freshness_days_update(gateway: ChunkLab):
    """A freshness window's days: 0 (unlimited) to the retriever's max_freshness_days."""
    try:
        limits = gateway.retrieval_limits()
    except ClientError as exc:
        return said_as_info(exc)
    return gr.update(minimum=0, maximum=limits.max_freshness_days, interactive=True)


def question_count_update(gateway: ChunkLab):
    """The number of questions to generate: 1 to the evaluator's max_question_count."""
    try:
        limits = gateway.evaluator_limits()
    except ClientError as exc:
        return said_as_info(exc)
    return gr.update(
        minimum=1, maximum=limits.max_question_count, info=f"1 to {limits.max_question_count}", interactive=True
    )
