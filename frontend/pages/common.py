"""What every page shares: turning a failed call into a readable message in the page."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import gradio as gr
import pandas as pd

from chunklab import recommended
from chunklab.client import ChunkLab, ClientError
from frontend import formatting

# Long enough to read a service's sentence, short enough not to pile up.
ERROR_SECONDS = 20

# Keyword arguments for every gr.render in the app. Gradio 6.31 runs renders
# without a concurrency limit, and two renders of one session running at once
# can draw the same event id (BlocksConfig.set_event_trigger reads and bumps
# its counter without a lock): one page's button then loses its handler ("No
# endpoint matching N"). All pages load together, so their renders are queued
# one at a time under one concurrency id.
RENDER_ONE_AT_A_TIME = {"concurrency_limit": 1, "concurrency_id": "chunklab-render"}


def hybrid_checkbox(elem_id: str) -> gr.Checkbox:
    """The hybrid retrieval box of the Query page and the experiment form: ticked at first as
    docs/benchmarks.md recommends (chunklab.recommended); the API's default stays off."""
    return gr.Checkbox(label="hybrid (BM25 + dense)", value=recommended.HYBRID, elem_id=elem_id)


def user_error(message: str) -> gr.Error:
    """An error Gradio shows in the page as a message; expected, so not logged as a traceback."""
    return gr.Error(message, duration=ERROR_SECONDS, print_exception=False)


@contextmanager
def shown_as_error() -> Iterator[None]:
    """Re-raises a ClientError as gr.Error: Gradio shows its message in the page, no traceback."""
    try:
        yield
    except ClientError as exc:
        raise user_error(exc.message) from None


@contextmanager
def told_as_sentence() -> Iterator[None]:
    """As shown_as_error, but a service's refusal shows as its own sentence, without the
    service's name and status code in front (a service out of reach keeps its address)."""
    try:
        yield
    except ClientError as exc:
        prefix = f"{exc.service} service: {exc.code.name}: " if exc.code is not None else ""
        if prefix and exc.message.startswith(prefix):
            raise user_error(exc.details[:1].upper() + exc.details[1:].rstrip(".") + ".") from None
        raise user_error(exc.message) from None


def documents_table(documents) -> pd.DataFrame:
    return pd.DataFrame(formatting.documents_rows(documents), columns=formatting.DOCUMENT_COLUMNS)


def document_dropdown_update(gateway: ChunkLab, keep: str | list[str] | None, documents=None):
    """New choices for a document dropdown, keeping the selection where it still exists."""
    documents = gateway.list_documents() if documents is None else documents
    choices = formatting.document_choices(documents)
    ids = {value for _, value in choices}
    if isinstance(keep, list):
        value = [k for k in keep if k in ids]
    else:
        value = keep if keep in ids else None
    return gr.update(choices=choices, value=value)


def retrieval_limit_updates(gateway: ChunkLab) -> tuple:
    """Bounds for the top_k, neighbor_prev, neighbor_next, window and recency inputs,
    read from RetrieverService.GetRetrievalLimits: the retriever's own limits, so the
    form never offers what a query would refuse (ADR 0039)."""
    with shown_as_error():
        limits = gateway.retrieval_limits()
    # interactive=True: Gradio would otherwise take an input that a load event updates for an output only.
    return (
        gr.update(minimum=0, maximum=limits.max_top_k, info=f"hits, up to {limits.max_top_k}", interactive=True),
        gr.update(minimum=0, maximum=limits.max_neighbors, interactive=True),
        gr.update(minimum=0, maximum=limits.max_neighbors, interactive=True),
        gr.update(info=f"sentence_window: units each side, 0 to {limits.max_window}; empty = as indexed",
                  interactive=True),
        gr.update(minimum=0, maximum=limits.max_recency_lambda, interactive=True),
    )
