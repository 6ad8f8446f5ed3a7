"""Experiments: create one (question set, retrieval and models, strategy grids,
dry run, run with progress), list them with their `±P/N` neighbours badge and
embedding model, and read one question of one run in detail (answer, judge
reasons, expansion tree).

The create section lives in `experiment_form.py`, the list and the detail view in
`detail.py`; this module composes them.
"""

from __future__ import annotations

import gradio as gr

from chunklab.client import ChunkLab, ClientError
from frontend.errors import said_as_info, told_as_sentence, told_html
from frontend.forms import knobs
from frontend.forms.pickers import document_dropdown_update, question_set_update
from frontend.forms.retrieval import retrieval_limit_updates
from frontend.pages.experiments import detail, experiment_form
from frontend.pages.experiments.experiment_form import RunSettings


def build(gateway: ChunkLab, opened=None) -> gr.Blocks:
    """`opened`: the event of the tab being opened (frontend/app.py; without one, the page's load):
    the strategies, lists and bounds the form needs, and the list of experiments with the one it
    opens and its plots, are read then, not while the page loads behind another tab (ADR 0165)."""
    with gr.Blocks() as page:
        forms = gr.State([])
        created = gr.State("")
        # The chosen run's results, serialised (an Experiment holding one run's results):
        # picking another question then needs no call.
        run_results = gr.State(b"")

        question_set = experiment_form.question_set_section(gateway)
        settings = experiment_form.settings_section(question_set)
        gr.Markdown("### 3. Strategies and knob grids")
        status = gr.HTML(elem_id="experiment-status", render=False)
        experiment_form.grid_section(gateway, forms, settings, status, created)
        status.render()
        view = detail.detail_section(gateway)

        handlers = detail.DetailHandlers(gateway)
        detail.wire_actions(handlers, view, (settings.answer[2], settings.judge[2]), created, run_results)
        opened = opened or page.load
        # Each read is its own event: under load the question set is chosen as soon as the sets
        # are read, not after the strategies and the experiments.
        opened(
            _loader(gateway),
            inputs=[settings.embedding_model, settings.documents],
            outputs=[forms, settings.embedding_model, settings.documents, status],
        )
        opened(handlers.listing, inputs=view.experiment, outputs=[view.table, view.experiment])
        opened(
            lambda current: question_set_update(gateway, current),
            inputs=question_set,
            outputs=question_set,
            show_progress="hidden",
        )
        opened(lambda: retrieval_limit_updates(gateway), outputs=settings.retrieval.bounded, show_progress="hidden")
        view.refresh.click(handlers.listing, inputs=view.experiment, outputs=[view.table, view.experiment])
        _wire_documents(gateway, settings)
        # A finished run shows up in the list and opens in the detail view.
        created.change(handlers.listing, inputs=created, outputs=[view.table, view.experiment])
        detail.wire_detail(gateway, handlers, view, run_results)
    return page


def _loader(gateway: ChunkLab):
    """The strategy grids' forms, the models and the documents, read each time the tab is opened.
    What the status line shows (a dry run's estimate, a run's progress) stays unless a read fails;
    so do the grids drawn, with their ticks, when the chunker does not answer."""

    def load(current_model: str | None, current_documents: list[str] | None):
        failed = []
        try:
            catalog = gateway.strategy_catalog()
            strategy_forms = knobs.strategy_forms(list(catalog.strategies), include_query_time=True)
            models = gr.update(choices=list(catalog.embedding_models), value=current_model or None)
        except ClientError as exc:
            strategy_forms, models = gr.skip(), gr.update()
            failed.append(told_html(exc))
        try:
            documents = document_dropdown_update(gateway, current_documents or [])
        except ClientError as exc:
            documents = said_as_info(exc)
            failed.append(told_html(exc))
        return strategy_forms, models, documents, failed[0] if failed else gr.skip()

    return load


def _wire_documents(gateway: ChunkLab, settings: RunSettings) -> None:
    def current_documents(selection: list[str] | None):
        with told_as_sentence():
            return document_dropdown_update(gateway, selection or [])

    # Documents uploaded since this page loaded show up on opening the list.
    settings.documents.focus(
        current_documents, inputs=settings.documents, outputs=settings.documents, show_progress="hidden"
    )
