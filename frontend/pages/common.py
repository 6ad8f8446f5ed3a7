"""What every page shares: turning a failed call into a readable message in the page."""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import gradio as gr
import pandas as pd

from chunklab import recommended
from chunklab.client import ChunkLab, ClientError
from frontend import formatting, rerank_form

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


def rerank_inputs(prefix: str) -> tuple[gr.Dropdown, gr.Number, gr.Textbox, gr.Textbox]:
    """The reranking boxes (kind, candidate depth, model, URL) in a folded accordion, off by
    default; values for frontend.rerank_form.rerank_options."""
    labels, help_text = rerank_form.LABELS, rerank_form.help_text
    with gr.Accordion("Reranking (off)", open=False, elem_id=f"{prefix}-rerank"):
        with gr.Row():
            kind = gr.Dropdown(label=labels["rerank.kind"], choices=rerank_form.kind_choices(), value=rerank_form.OFF,
                               info=help_text("rerank.kind"), elem_id=f"{prefix}-rerank-kind")
            depth = gr.Number(label=labels["rerank.depth"], value=0, precision=0, minimum=0,
                              info=help_text("rerank.depth") + "; 0 = the default", elem_id=f"{prefix}-rerank-depth")
        with gr.Row():
            model = gr.Textbox(label=labels["rerank.model"], placeholder="the retriever's configured one",
                               info=help_text("rerank.model"), elem_id=f"{prefix}-rerank-model")
            base_url = gr.Textbox(label=labels["rerank.base_url"], placeholder="the retriever's configured one",
                                  info=help_text("rerank.base_url"), elem_id=f"{prefix}-rerank-url")
    return kind, depth, model, base_url


def user_error(message: str) -> gr.Error:
    """An error Gradio shows in the page as a message; expected, so not logged as a traceback."""
    return gr.Error(message, duration=ERROR_SECONDS, print_exception=False)


def told_sentence(exc: ClientError) -> str:
    """The one sentence a page shows for a failed call: a service's refusal as its own
    sentence, without the service's name and status code in front (a service out of
    reach keeps its address, which is what a person must check)."""
    prefix = f"{exc.service} service: {exc.code.name}: " if exc.code is not None else ""
    if not (prefix and exc.message.startswith(prefix)):
        return exc.message
    sentence = exc.details if exc.details.endswith((".", "!", "?")) else exc.details + "."
    # A first word starts the sentence in capitals; a knob or field name (fixed_size.chunk_overlap) stays as spelt.
    if re.match(r"[a-z]+(?![\w.])", sentence):
        sentence = sentence[0].upper() + sentence[1:]
    return sentence


def told_html(exc: ClientError) -> str:
    """told_sentence as an error line for a page's status or message area."""
    return formatting.message_html(told_sentence(exc), "error")


@contextmanager
def told_as_sentence() -> Iterator[None]:
    """Re-raises a ClientError as gr.Error carrying told_sentence: Gradio shows it in the
    page, no traceback. Handlers with a status area catch ClientError and return
    told_sentence there instead, so no component turns into an "Error" pill."""
    try:
        yield
    except ClientError as exc:
        raise user_error(told_sentence(exc)) from None


def said_in_place(outputs: int, at: int = 0) -> Callable:
    """For a handler of `outputs` outputs whose output `at` (the first unless told) is its
    status area: a refusal (the gr.Error of user_error or told_as_sentence) becomes that
    area's error line and the other outputs stay as they were, so no component turns into
    an "Error" pill."""

    def wrap(handler: Callable) -> Callable:
        def said(exc: gr.Error):
            line = formatting.message_html(exc.message, "error")
            if outputs == 1:
                return line
            return tuple(line if i == at else gr.skip() for i in range(outputs))

        if inspect.isgeneratorfunction(handler):  # a handler that streams its progress
            @functools.wraps(handler)
            def streamed(*args, **kwargs):
                try:
                    yield from handler(*args, **kwargs)
                except gr.Error as exc:
                    yield said(exc)

            return streamed

        @functools.wraps(handler)
        def handled(*args, **kwargs):
            try:
                return handler(*args, **kwargs)
            except gr.Error as exc:
                return said(exc)

        return handled

    return wrap


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


def said_as_info(exc: ClientError) -> dict:
    """A dropdown or input whose refresh failed keeps its value and says why under it,
    rather than turning into an "Error" pill."""
    return gr.update(info=told_sentence(exc))


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
