"""The Documents page's chunk-boundary viewer: one strategy, its knobs, and the
selected document's text with that strategy's chunks marked on it.

ChunkerService.PreviewChunks chunks without indexing anything, so trying
knobs here costs no index space; the text comes from ingest's FULL view.
"""

from __future__ import annotations

import gradio as gr

from chunklab.client import ChunkLab
from frontend import boundaries, knobs
from frontend.pages.common import RENDER_ONE_AT_A_TIME, shown_as_error, user_error
from frontend.pages.processing import knob_input


def viewer_section(gateway: ChunkLab, forms: gr.State, selected: gr.Dropdown) -> gr.Dropdown:
    """Draws the viewer; returns its strategy dropdown, whose choices the page fills on load."""
    gr.Markdown(
        "### Chunk boundaries\nSee where a strategy cuts the selected document: chunks alternate in colour, "
        "overlaps are marked, and each chunk's start is labelled with its index and token count "
        "(hover a piece for its range); a PDF's pages are marked where they begin. Nothing is indexed."
    )
    strategy = gr.Dropdown(label="Strategy", choices=[], elem_id="viewer-strategy")
    summary = gr.HTML(elem_id="viewer-summary", render=False)
    view = gr.HTML(elem_id="viewer", render=False)

    @gr.render(inputs=[forms, strategy], **RENDER_ONE_AT_A_TIME)
    def draw(strategy_forms: list[knobs.StrategyForm], name: str | None):
        form = next((f for f in strategy_forms or [] if f.name == name), None)
        if form is None:
            gr.Markdown("Choose a strategy to see its knobs.")
            return
        if form.requires_llm:
            gr.Markdown(f"{form.name} needs an LLM endpoint: the preview calls it once per chunk.")
        with gr.Row():
            inputs = [knob_input(field, elem_prefix="viewer-") for field in form.fields]
        show = gr.Button("Show chunk boundaries", variant="primary", elem_id="viewer-button", key="viewer-button")

        def preview(values: dict):
            document_id = values[selected]
            if not document_id:
                raise user_error("Select a document first (upload one or pick it in the list).")
            try:
                spec = knobs.strategy_spec(form, [values[c] for c in inputs])
            except ValueError as exc:
                raise user_error(str(exc)) from None
            with shown_as_error():
                document = gateway.get_document_text(document_id)
                response = gateway.preview_chunks(document_id, spec)
            return (
                boundaries.preview_summary_html(form.name, response),
                boundaries.boundary_html(document.text, response.chunks, page_starts=document.tree.page_starts),
            )

        show.click(preview, inputs={selected, *inputs}, outputs=[summary, view], key=f"viewer-{form.name}")

    summary.render()
    view.render()
    return strategy
