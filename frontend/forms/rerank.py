"""The reranking inputs of the Query page and the experiment form (ADR 0055), off by default.

Four boxes, one per field of RerankOptions, labelled and explained from the one table of
retrieval settings (chunklab.retrieval.SETTINGS), and checked before the call with that
table's own check (chunklab.retrieval.check_options), so the page refuses at once what the
retriever or the evaluator would refuse, in a sentence that names the page's boxes rather
than the contract's fields. The checks come first; the boxes themselves (rerank_inputs) last.
"""

from __future__ import annotations

import gradio as gr

from chunklab import retrieval
from chunklab.errors import InvalidArgument
from chunklab.v1 import common_pb2

OFF = "off"
# The boxes' labels, by the setting each one sets.
LABELS = {
    "rerank.kind": "Reranker",
    "rerank.depth": "Candidates to rerank",
    "rerank.model": "Reranker model",
    "rerank.base_url": "Reranker URL",
}


def kind_choices() -> list[str]:
    """ "off", then the reranker kinds by their short names (cross_encoder, http, tei, llm)."""
    return [OFF, *retrieval.BY_PATH["rerank.kind"].choices]


def help_text(path: str) -> str:
    """The setting's own help, with its bounds where it has them."""
    setting = retrieval.BY_PATH[path]
    bounds = setting.bounds()
    return f"{setting.help}; {bounds}" if bounds else setting.help


def in_box_words(message: str) -> str:
    """A check's message with the contract's field names replaced by the boxes' labels,
    as one sentence."""
    for path, label in sorted(LABELS.items(), key=lambda item: -len(item[0])):
        message = message.replace(path, f"'{label}'")
    sentence = message[0].upper() + message[1:]
    return sentence if sentence.endswith(".") else sentence + "."


def rerank_options(
    kind: str | None, depth: float | None, model: str | None, base_url: str | None, top_k: int
) -> common_pb2.RerankOptions | None:
    """RerankOptions from the four boxes, checked against `top_k` as the retriever checks them;
    None with the reranker off (the other boxes are then not sent). ValueError says, in the
    boxes' words, what to change."""
    chosen = (kind or OFF).strip()
    if chosen == OFF:
        return None
    if depth is not None and not float(depth).is_integer():
        raise ValueError(f"'{LABELS['rerank.depth']}' takes a whole number, got {depth:g}.")
    built = (
        retrieval.options(
            {
                "top_k": top_k,
                "rerank.kind": chosen,
                "rerank.depth": int(depth or 0),
                "rerank.model": (model or "").strip(),
                "rerank.base_url": (base_url or "").strip(),
            }
        )
        if chosen in retrieval.BY_PATH["rerank.kind"].choices
        else None
    )
    if built is None:
        raise ValueError(f"'{LABELS['rerank.kind']}' must be one of {', '.join(kind_choices())}, got {chosen!r}.")
    try:
        retrieval.check_options(built, needs_strategy=False)
    except InvalidArgument as exc:
        raise ValueError(in_box_words(exc.message)) from None
    return built.rerank


def rerank_inputs(prefix: str) -> tuple[gr.Dropdown, gr.Number, gr.Textbox, gr.Textbox]:
    """The reranking boxes (kind, candidate depth, model, URL) in a folded accordion, off by
    default; values for rerank_options."""
    labels = LABELS
    with gr.Accordion("Reranking (off)", open=False, elem_id=f"{prefix}-rerank"):
        with gr.Row():
            kind = gr.Dropdown(
                label=labels["rerank.kind"],
                choices=kind_choices(),
                value=OFF,
                info=help_text("rerank.kind"),
                elem_id=f"{prefix}-rerank-kind",
            )
            depth = gr.Number(
                label=labels["rerank.depth"],
                value=0,
                precision=0,
                minimum=0,
                info=help_text("rerank.depth") + "; 0 = the default",
                elem_id=f"{prefix}-rerank-depth",
            )
        with gr.Row():
            model = gr.Textbox(
                label=labels["rerank.model"],
                placeholder="the retriever's configured one",
                info=help_text("rerank.model"),
                elem_id=f"{prefix}-rerank-model",
            )
            base_url = gr.Textbox(
                label=labels["rerank.base_url"],
                placeholder="the retriever's configured one",
                info=help_text("rerank.base_url"),
                elem_id=f"{prefix}-rerank-url",
            )
    return kind, depth, model, base_url
