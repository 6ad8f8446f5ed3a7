"""The dropdowns several pages offer: documents and question sets, their choices read afresh
and the selection kept where it still exists."""

from __future__ import annotations

import gradio as gr

from chunklab.client import ChunkLab
from frontend.errors import told_as_sentence
from frontend.views import experiments_html, formatting


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


def question_set_choices(sets) -> list[tuple[str, str]]:
    return [(experiments_html.question_set_label(s), s.question_set_id) for s in sets]


def question_set_update(gateway: ChunkLab, current: str | None):
    """The stored sets as choices, keeping `current` where it still exists, else the newest set."""
    with told_as_sentence():
        sets = gateway.list_question_sets()
    options = question_set_choices(sets)
    ids = {value for _, value in options}
    return gr.update(choices=options, value=current if current in ids else (options[0][1] if options else None))
