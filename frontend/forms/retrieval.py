"""The retrieval inputs the Query page and the experiment form share, built from the one
table of retrieval settings (chunklab.retrieval.SETTINGS) as the command line builds its
flags (ADR 0045, ADR 0078): one box per setting in ROW, typed by the contract, read back
into {setting path: value} for chunklab.retrieval.options, and bounded by the retriever's
own limits (GetRetrievalLimits) when the page loads. A setting added to SETTINGS is a box
on both pages and a field of what they send, with no edit here.

Drawn elsewhere: the index set (the Query page's strategy and configuration, an
experiment's grids), the lists a page fills from the services (documents, collections,
languages, embedding models) and reranking (forms.rerank).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import gradio as gr

from chunklab import retrieval
from chunklab.client import ChunkLab, ClientError
from chunklab.errors import InvalidArgument
from chunklab_app import recommended
from frontend.errors import said_as_info
from frontend.forms import experiment_config

ELSEWHERE = ("filter.", "embedding_model", "rerank.")
# The settings drawn as one row of boxes, in SETTINGS' order with the check boxes last.
ROW = tuple(
    sorted(
        (s for s in retrieval.SETTINGS if not s.names_a_set and not s.path.startswith(ELSEWHERE)),
        key=lambda s: s.kind is bool,
    )
)
BOUNDED = tuple(s for s in ROW if s.limit)

# How the pages word and start a box where the setting's path and help would not do.
LABELS = {"recency_lambda": "recency λ per day", "hybrid": "hybrid (BM25 + dense)", "fusion_k": "fusion k"}
INFO = {
    "neighbor_prev": "strategies that expand by neighbours (fixed_size)",
    "neighbor_next": "strategies that expand by neighbours (fixed_size)",
    "window": "sentence_window only: units each side",
    "recency_lambda": "score × exp(−λ·age); 0 = off",
    "fusion_k": "hybrid only: Σ 1/(k + rank); smaller trusts each ranking's first hits more",
}
# ticked at first as docs/benchmarks.md recommends (chunklab_app.recommended); the API's default stays off.
VALUES = {"top_k": retrieval.LIMITS.default_top_k, "hybrid": recommended.HYBRID}
IDS = {"recency_lambda": "recency"}  # elem_id suffixes the browser tests know


def elem_id(prefix: str, setting: retrieval.Setting) -> str:
    return f"{prefix}-{IDS.get(setting.path, setting.path.replace('.', '-').replace('_', '-'))}"


def _box(setting: retrieval.Setting, prefix: str):
    """One setting's input, by the contract's type: a whole number, an optional whole number
    (a Textbox: empty differs from 0, and gr.Number shows 0 for empty), a number, a check
    box, a choice or a text."""
    label, info = LABELS.get(setting.path, setting.path), INFO.get(setting.path, setting.help)
    common = {"label": label, "elem_id": elem_id(prefix, setting)}
    if setting.kind is bool:
        return gr.Checkbox(value=VALUES.get(setting.path, False), **common)
    if setting.kind is int and setting.optional:
        return gr.Textbox(placeholder=setting.default or "as indexed", max_lines=1, info=info, **common)
    if setting.kind is int:
        return gr.Number(value=VALUES.get(setting.path, 0), precision=0, info=info, **common)
    if setting.kind is float:
        return gr.Number(value=VALUES.get(setting.path, 0), step=0.01, info=info, **common)
    if setting.choices is not None:
        return gr.Dropdown(choices=["", *setting.choices], value="", info=info, **common)
    return gr.Textbox(max_lines=1, info=info, **common)


@dataclass(frozen=True)
class RetrievalInputs:
    """The row's boxes, by setting path, in ROW's order."""

    boxes: dict

    @property
    def inputs(self) -> list:
        return [self.boxes[s.path] for s in ROW]

    @property
    def bounded(self) -> list:
        """The boxes retrieval_limit_updates bounds, in its order."""
        return [self.boxes[s.path] for s in BOUNDED]

    def __getitem__(self, path: str):
        return self.boxes[path]


def retrieval_inputs(prefix: str) -> RetrievalInputs:
    """A box per setting of ROW (elem_id `{prefix}-top-k` and so on), laid out by the caller."""
    return RetrievalInputs({s.path: _box(s, prefix) for s in ROW})


def _value(setting: retrieval.Setting, value):
    if setting.kind is bool:
        return bool(value)
    if setting.kind is int and setting.optional:
        return experiment_config.optional_whole(value, setting.path)
    if setting.kind is int:
        return experiment_config.whole(value, VALUES.get(setting.path, 0), setting.path)
    if setting.kind is float:
        return float(value or 0.0)
    return (value or "").strip()


def _checked(setting: retrieval.Setting, value):
    """The box's value, its bounds checked here with the retriever's own check (the boxes carry
    no Gradio minimum or maximum, whose refusal would be a toast naming no field): ValueError
    with a sentence naming the box. A typed 0 of top_k is refused, its default named (ADR 0090)."""
    typed = _value(setting, value)
    if setting.limit and typed is not None:
        try:
            setting.check_typed(typed, leave="leave it empty")
        except InvalidArgument as exc:
            raise ValueError(exc.message + ".") from None
    return typed


def row_values(values: Sequence) -> dict:
    """{setting path: value} from the row's boxes' values (in ROW's order); None leaves an
    optional setting unset (window: as indexed). ValueError names a box holding no whole
    number or a value out of its bounds."""
    return {s.path: _checked(s, v) for s, v in zip(ROW, values, strict=True)}


def hybrid_checkbox(elem_id: str) -> gr.Checkbox:
    """The hybrid retrieval box alone (its row's own is built by retrieval_inputs)."""
    return gr.Checkbox(label=LABELS["hybrid"], value=VALUES["hybrid"], elem_id=elem_id)


def retrieval_limit_updates(gateway: ChunkLab) -> tuple:
    """Bounds for the row's bounded boxes (top_k, neighbor_prev, neighbor_next, window,
    recency), read from RetrieverService.GetRetrievalLimits: the retriever's own limits, so
    the form never offers what a query would refuse (ADR 0039). Out of reach, the inputs
    keep what they have and the first says why."""
    try:
        limits = gateway.retrieval_limits()
    except ClientError as exc:
        return (said_as_info(exc), *(gr.skip() for _ in BOUNDED[1:]))
    return tuple(_bound(s, getattr(limits, s.limit)) for s in BOUNDED)


def _bound(setting: retrieval.Setting, high) -> dict:
    """The bounds said under the box; row_values enforces them with the retriever's check."""
    # interactive=True: Gradio would otherwise take an input that a load event updates for an output only.
    info = INFO.get(setting.path, setting.help)
    if setting.kind is int and setting.optional:
        empty = setting.default or "as indexed"
        return gr.update(info=f"{info}; {setting.low:g} to {high}; empty = {empty}", interactive=True)
    if setting.path == "top_k":
        return gr.update(
            info=f"hits, {setting.low:g} to {high}; empty = the default, {setting.default}", interactive=True
        )
    return gr.update(info=f"{info}; {setting.low:g} to {high}", interactive=True)
