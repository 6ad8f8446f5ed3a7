"""The Documents page's chunk-boundary viewer: two configurations over the selected
document side by side (ADR 0061), each with a chunk-size histogram and the share
of tiny fragments and of cuts in mid-sentence.

Each column's chunks come from a preview with knobs (ChunkerService.PreviewChunks:
nothing is indexed, so trying knobs costs no index space) or from one of the
document's index sets (ListIndexedSets, then ListIndexedChunks); the right column
can also be left empty to see one configuration alone, parents framed. The text
comes from ingest's FULL view.

A page that opens on the sample's speech (chunklab_app.samples) shows it at once, the
pickers' first choices (the baseline's preview beside recursive's, knobs as declared)
drawn without a click: the first minute shows two cuts side by side (issue 18).
"""

from __future__ import annotations

from dataclasses import dataclass

import gradio as gr

from chunklab.client import ChunkLab, ClientError
from chunklab.knobs import KnobError
from chunklab.text import sentences, structure
from chunklab.v1 import retriever_pb2
from chunklab_app import samples
from frontend.errors import said_in_place, told_as_sentence, told_html, user_error
from frontend.forms import knobs
from frontend.forms.knobs import RENDER_ONE_AT_A_TIME
from frontend.pages.documents import boundaries, boundary_stats
from frontend.pages.documents.boundary_columns import Configuration, side_by_side_html
from frontend.pages.documents.boundary_stats import HISTOGRAM_COLUMNS
from frontend.pages.documents.processing import knob_input
from frontend.views import formatting

PREVIEW, INDEX_SET, NOTHING = "Preview with knobs", "Index set", "Nothing (one column)"
# The right column starts on another strategy than the left one's baseline, so the first
# comparison already shows two different cuts.
RIGHT_DEFAULTS = ("recursive", "sentence_window")


@dataclass(frozen=True)
class Viewer:
    """What the page wires to the viewer: the left column's strategy dropdown (whose choices
    the page fills on load) and the first view, to run when the viewer is opened."""

    strategy: gr.Dropdown
    first_view: object  # (document id, strategy forms, the summary shown, opened) -> the viewer's outputs
    outputs: list


@dataclass(frozen=True)
class Column:
    """One column's pickers: where its chunks come from, and which set or strategy."""

    side: str
    source: gr.Radio
    indexed_set: gr.Dropdown
    strategy: gr.Dropdown


def _column(side: str, sources: list[str]) -> Column:
    with gr.Column():
        gr.Markdown(f"**{side.capitalize()} column**")
        source = gr.Radio(choices=sources, value=PREVIEW, label="Chunks from", elem_id=f"viewer-{side}-source")
        indexed_set = gr.Dropdown(label="Index set", choices=[], visible=False, elem_id=f"viewer-{side}-set")
        strategy = gr.Dropdown(label="Strategy", choices=[], elem_id=f"viewer-{side}-strategy")
    return Column(side, source, indexed_set, strategy)


def _histogram_plot(side: str) -> gr.BarPlot:
    return gr.BarPlot(
        x=HISTOGRAM_COLUMNS[0],
        y=HISTOGRAM_COLUMNS[1],
        tooltip="all",
        x_label_angle=-30,
        # The configuration is named in the block's label, which wraps; a plot's own title is one
        # line that the half-width plot cut ("fixed_size · chunk_size=256, chunk_ov…").
        label="chunks by tokens",
        show_label=True,
        visible=False,
        render=False,
        elem_id=f"viewer-{side}-histogram",
    )


def histogram_title(label: str) -> str:
    """A histogram's heading: the configuration it counts, e.g. "fixed_size · chunk_size=256 (preview):
    chunks by tokens"."""
    return f"{label}: chunks by tokens"


def right_default(names: list[str]) -> str | None:
    """The right column's first strategy: the first of RIGHT_DEFAULTS offered, else the last strategy."""
    return next((name for name in RIGHT_DEFAULTS if name in names), names[-1] if names else None)


def left_default(names: list[str]) -> str | None:
    return knobs.BASELINE if knobs.BASELINE in names else None


def viewer_section(gateway: ChunkLab, forms: gr.State, selected: gr.Dropdown) -> Viewer:
    """Draws the viewer; returns what the page wires to it (the right column's strategy
    follows the strategy forms by itself)."""
    gr.Markdown(
        "### Chunk boundaries side by side\nTwo configurations over the selected document, the same text in "
        "both columns: a line where that column cuts, chunks alternating in colour, overlaps marked, each "
        "chunk's start labelled with its index and token count, a PDF's pages marked where they begin. "
        "The columns scroll together. Previews index nothing."
    )
    with gr.Row():
        left = _column("left", [PREVIEW, INDEX_SET])
        right = _column("right", [PREVIEW, INDEX_SET, NOTHING])
    summary = gr.HTML(elem_id="viewer-summary", render=False)
    plots = [_histogram_plot("left"), _histogram_plot("right")]
    view = gr.HTML(elem_id="viewer", render=False)
    _wire_pickers(gateway, forms, selected, (left, right), summary)
    _draw(gateway, forms, selected, (left, right), [summary, *plots, view])
    summary.render()
    with gr.Row():
        for plot in plots:
            plot.render()
    view.render()

    return Viewer(left.strategy, _first_view(gateway, len(plots)), [summary, *plots, view])


def _wire_pickers(
    gateway: ChunkLab, forms: gr.State, selected: gr.Dropdown, columns: tuple[Column, Column], summary: gr.HTML
) -> None:
    """Each column's set dropdown follows the selected document, its source picks which
    picker shows, and the right column's strategy follows the strategy forms."""
    left, right = columns

    def set_choices(document_id: str | None, *current: str | None) -> tuple:
        """Each set dropdown given (the selected document's index sets, a still-listed choice
        kept), then the summary: a service out of reach is one sentence there, the dropdowns
        left as they are."""
        sets = []
        if document_id:
            try:
                sets = gateway.list_indexed_sets(document_id=document_id)
            except ClientError as exc:
                return (*(gr.update() for _ in current), told_html(exc))
        choices = formatting.set_choices(sets)
        values = {value for _, value in choices}
        return (*(gr.update(choices=choices, value=value if value in values else None) for value in current), gr.skip())

    def show_source(source: str, document_id: str | None, current: str | None):
        """The set dropdown for an index set (its list fetched afresh), the strategy for a preview."""
        sets, said = set_choices(document_id, current) if source == INDEX_SET else (gr.update(), gr.skip())
        sets["visible"] = source == INDEX_SET
        return sets, gr.update(visible=source == PREVIEW), said

    def right_strategies(strategy_forms: list[knobs.StrategyForm] | None, current: str | None):
        names = [form.name for form in strategy_forms or []]
        return gr.update(choices=names, value=current if current in names else right_default(names))

    selected.change(
        set_choices,
        inputs=[selected, left.indexed_set, right.indexed_set],
        outputs=[left.indexed_set, right.indexed_set, summary],
        show_progress="hidden",
    )
    forms.change(right_strategies, inputs=[forms, right.strategy], outputs=right.strategy, show_progress="hidden")
    for column in (left, right):
        column.source.change(
            show_source,
            inputs=[column.source, selected, column.indexed_set],
            outputs=[column.indexed_set, column.strategy, summary],
            show_progress="hidden",
        )


def _draw(
    gateway: ChunkLab, forms: gr.State, selected: gr.Dropdown, columns: tuple[Column, Column], outputs: list
) -> None:
    """Each column's knob inputs, drawn again when a picker changes, and the Show button that
    fills `outputs` (the summary, both histograms and the view)."""
    left, right = columns

    @gr.render(inputs=[forms, left.strategy, right.strategy, left.source, right.source], **RENDER_ONE_AT_A_TIME)
    def draw(
        strategy_forms: list[knobs.StrategyForm],
        left_name: str | None,
        right_name: str | None,
        left_source: str,
        right_source: str,
    ):
        by_name = {form.name: form for form in strategy_forms or []}
        drawn = []  # (column, form or None, knob inputs) per column
        with gr.Row():
            for column, name, source in ((left, left_name, left_source), (right, right_name, right_source)):
                with gr.Column():
                    form = by_name.get(name) if source not in (INDEX_SET, NOTHING) else None
                    if form is not None and form.requires_llm:
                        gr.Markdown(f"{form.name} needs an LLM endpoint: the preview calls it once per chunk.")
                    inputs = (
                        [knob_input(field, elem_prefix=f"viewer-{column.side}-") for field in form.fields]
                        if form is not None
                        else []
                    )
                    drawn.append((column, form, inputs))
        show = gr.Button("Show side by side", variant="primary", elem_id="viewer-button", key="viewer-button")

        @said_in_place(outputs=len(outputs))
        def compare(values: dict):
            document_id = values[selected]
            if not document_id:
                raise user_error("Select a document first (upload one or pick it in the list).")
            with told_as_sentence():
                document = gateway.get_document_text(document_id)
                shown = [
                    _configuration(gateway, document_id, column, form, values, inputs)
                    for column, form, inputs in drawn
                    if values[column.source] != NOTHING
                ]
            return _views(document, shown)

        knob_inputs = [i for _, _, inputs in drawn for i in inputs]
        show.click(
            compare,
            inputs={
                selected,
                *(c.source for c in (left, right)),
                *(c.indexed_set for c in (left, right)),
                *knob_inputs,
            },
            outputs=outputs,
            key=f"viewer-{left_source}-{left_name}-{right_source}-{right_name}",
        )


def _first_view(gateway: ChunkLab, plot_count: int):
    @said_in_place(outputs=2 + plot_count)
    def first_view(
        document_id: str | None,
        strategy_forms: list[knobs.StrategyForm] | None,
        summary: str = "",
        opened: bool = True,
    ):
        """The sample's speech drawn at once with the pickers' first choices, once the viewer is
        opened and while nothing is shown (what Show drew stays); any other document waits for
        its Show button (a preview of a long one costs the chunker time)."""
        by_name = {form.name: form for form in strategy_forms or []}
        pair = [by_name.get(left_default(list(by_name))), by_name.get(right_default(list(by_name)))]
        if not document_id or None in pair or summary or not opened:
            return tuple(gr.skip() for _ in range(2 + plot_count))
        with told_as_sentence():
            document = gateway.get_document_text(document_id)
            if not samples.is_sample(document):
                return tuple(gr.skip() for _ in range(2 + plot_count))
            shown = [
                _preview(gateway, document_id, form, knobs.strategy_spec(form, [f.default for f in form.fields]))
                for form in pair
            ]
        return _views(document, shown)

    return first_view


def _configuration(
    gateway: ChunkLab, document_id: str, column: Column, form: knobs.StrategyForm | None, values: dict, inputs: list
) -> tuple[Configuration, list[str]]:
    """One column's chunks and heading (and what its preview cost), fetched as its pickers say."""
    if values[column.source] == INDEX_SET:
        chosen = values[column.indexed_set]
        if not chosen:
            raise user_error(
                f"Choose an index set for the {column.side} column (process the document first if "
                "it has none), or switch that column to a preview with knobs."
            )
        strategy, _, config_id = chosen.partition("/")
        found = gateway.indexed_set(document_id, strategy, config_id=config_id)
        if found is None:
            raise user_error(
                f"The index set {strategy} {config_id} of the {column.side} column is gone; "
                "choose the document again to refresh the list of its sets."
            )
        chunks = gateway.indexed_chunks(document_id, strategy, config_id)
        return Configuration(f"{strategy} · {formatting.set_knobs(found)} · {config_id} (index set)", chunks), []
    if form is None:
        raise user_error(f"Choose a strategy for the {column.side} column.")
    try:
        spec = knobs.strategy_spec(form, [values[i] for i in inputs])
    except KnobError as exc:
        raise user_error(f"{column.side.capitalize()} column, {form.name}: {exc.for_the_field()}") from None
    return _preview(gateway, document_id, form, spec)


def _preview(gateway: ChunkLab, document_id: str, form: knobs.StrategyForm, spec) -> tuple[Configuration, list[str]]:
    """One column's preview: nothing indexed, labelled with its knobs."""
    response = gateway.preview_chunks(document_id, spec)
    label = f"{form.name} · {formatting.set_knobs(retriever_pb2.IndexedSet(spec=spec))} (preview)"
    return Configuration(label, response.chunks), boundaries.usage_facts(response.usage)


def _views(document, shown: list[tuple[Configuration, list[str]]]) -> tuple:
    """The summary, both histograms (the right one hidden for one column) and the view."""
    text, page_starts = document.text, document.tree.page_starts
    # Sentences within the blocks the tree gives: a paragraph starting with "# " is no heading.
    spans = sentences.split(text, document.language, structure.sentence_blocks(text, document.tree))
    figures = [boundary_stats.boundary_stats(c.chunks, spans, len(text)) for c, _ in shown]
    summary = boundary_stats.stats_html([(c.label, f, facts) for (c, facts), f in zip(shown, figures)])
    frames = boundary_stats.histogram_frames([c.chunks for c, _ in shown])
    plots = [
        gr.update(value=frame, visible=True, label=histogram_title(c.label), sort=list(frame[HISTOGRAM_COLUMNS[0]]))
        for (c, _), frame in zip(shown, frames)
    ]
    if len(shown) == 2:
        view = side_by_side_html(text, shown[0][0], shown[1][0], page_starts=page_starts)
    else:
        view = boundaries.boundary_html(text, shown[0][0].chunks, page_starts=page_starts)
        plots.append(gr.update(visible=False))
    return summary, *plots, view
