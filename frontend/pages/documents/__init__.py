"""Documents: upload, list, delete, process a document with chosen strategies
(or every document, as a bulk load through the broker, with the recent loads
listed), and view where a strategy puts its chunk boundaries.

The upload and the list are document_list.py, the selected document's parse report
parse_report.py (under the list and atop the boundaries), the selected document's index sets
index_sets.py, the processing section (forms built from the chunker's knobs)
processing.py and the boundary viewer viewer.py (drawn by boundaries.py,
boundary_columns.py and boundary_stats.py); this module lays them out and wires them.

Each part is a sub-tab (ADR 0093), so that none is 5,000 px down a page: "Upload and list"
(where the document is chosen), "Process", "Index sets and export" and "Boundaries"; the
other three say which document they act on.
"""

from __future__ import annotations

import gradio as gr

from chunklab.client import ChunkLab, ClientError
from frontend.errors import said_in_place, told_as_sentence, told_html
from frontend.forms import knobs
from frontend.forms.pickers import document_dropdown_update
from frontend.pages.documents import document_list, index_sets, parse_report, processing, viewer
from frontend.pages.documents.document_list import DocumentList, documents_table, opening_document
from frontend.pages.documents.index_sets import IndexSets, SetHandlers
from frontend.views import formatting


def build(gateway: ChunkLab) -> gr.Blocks:
    with gr.Blocks() as page:
        forms = gr.State([])
        # The document to select once the list has been refreshed after an action.
        wanted = gr.State(None)
        notes = []
        # The selected document's parse report, under the list and atop its boundaries.
        reports = []
        boundaries_opened = gr.State(False)
        with gr.Tabs(selected=UPLOAD, elem_id="documents-parts"):
            with gr.Tab("Upload and list", id=UPLOAD, elem_id="documents-upload"):
                listing = document_list.list_section()
                reports.append(listing.report)
            # Made before the processing part, which refreshes it, and shown after it.
            sets_tab = gr.Tab("Index sets and export", id="sets", elem_id="documents-sets", render=False)
            with sets_tab:
                notes.append(_selected_note("sets"))
                sets = index_sets.sets_section(gateway, listing.selected)
            set_handlers = SetHandlers(gateway)
            show_bulk_loads = _bulk_loads(gateway)
            with gr.Tab("Process", id="process", elem_id="documents-process"):
                notes.append(_selected_note("process"))
                model, process_status, bulk_loads, bulk_refresh = _processing_part(
                    gateway, forms, listing, sets, then=set_handlers.show_indexed, then_bulk=show_bulk_loads
                )
            sets_tab.render()
            with gr.Tab("Boundaries", id="boundaries", elem_id="documents-boundaries") as boundaries_tab:
                notes.append(_selected_note("boundaries"))
                reports.append(gr.HTML(elem_id="boundaries-report"))
                shown = viewer.viewer_section(gateway, forms, listing.selected)
        listing.selected.change(
            _noting(gateway, len(notes), len(reports)),
            inputs=listing.selected,
            outputs=notes + reports,
            show_progress="hidden",
        )

        page.load(
            _loader(gateway),
            inputs=[listing.selected, shown.strategy, model],
            outputs=[
                forms,
                process_status,
                listing.selected,
                listing.table,
                shown.strategy,
                listing.delete_status,
                model,
            ],
        ).then(
            shown.first_view,
            inputs=[listing.selected, forms, shown.outputs[0], boundaries_opened],
            outputs=shown.outputs,
        )
        # The sample's boundaries are drawn when the sub-tab is first opened, not behind another one
        # on every load (ADR 0167); the load's own call draws them when the sub-tab was opened first.
        boundaries_tab.select(lambda: True, outputs=boundaries_opened, show_progress="hidden").then(
            shown.first_view,
            inputs=[listing.selected, forms, shown.outputs[0], boundaries_opened],
            outputs=shown.outputs,
        )
        page.load(show_bulk_loads, outputs=bulk_loads)
        bulk_refresh.click(show_bulk_loads, outputs=bulk_loads)
        document_list.wire(gateway, listing, wanted)
        index_sets.wire(set_handlers, sets, listing.selected, forms, listing.delete_asks)
    return page


UPLOAD = "upload"


def _selected_note(part: str) -> gr.HTML:
    """The line atop a sub-tab naming the document it acts on."""
    return gr.HTML(formatting.message_html(NO_DOCUMENT), elem_id=f"documents-{part}-selected")


NO_DOCUMENT = "No document selected: upload or choose one under Upload and list."


def _noting(gateway: ChunkLab, count: int, reports: int):
    """Each sub-tab's note for the selected document, then its parse report where it is shown."""

    def note(document_id: str | None):
        if not document_id:
            return (formatting.message_html(NO_DOCUMENT),) * count + ("",) * reports
        try:
            document = gateway.get_document(document_id)
        except ClientError as exc:
            return (told_html(exc),) * count + ("",) * reports
        label = formatting.document_choices([document])[0][0]
        line = formatting.message_html(f"Selected document: {label} (choose another under Upload and list).")
        return (line,) * count + (parse_report.report_html(document),) * reports

    return note


def _bulk_loads(gateway: ChunkLab):
    @said_in_place(outputs=1)
    def show_bulk_loads():
        with told_as_sentence():
            return formatting.bulk_loads_html(gateway.list_bulk_loads())

    return show_bulk_loads


def _processing_part(gateway: ChunkLab, forms: gr.State, listing: DocumentList, sets: IndexSets, then, then_bulk):
    """The processing section, its status, and the bulk loads below it; returns the embedding
    model dropdown, the status, the bulk loads' list and its Refresh button."""
    gr.Markdown("### Process the selected document")
    # Created here (unrendered) so the dynamic strategy section can name it; shown below it.
    process_status = gr.HTML(elem_id="process-status", render=False)
    bulk_loads = gr.HTML(elem_id="bulk-loads", render=False)
    model = processing.strategy_section(
        gateway,
        forms,
        listing.selected,
        process_status,
        then=(then, [listing.selected, forms, sets.chosen_set], [sets.indexed, sets.chosen_set, listing.delete_asks]),
        then_bulk=(then_bulk, [], bulk_loads),
    )
    process_status.render()
    with gr.Row(equal_height=True):
        gr.Markdown("### Bulk loads")
        bulk_refresh = gr.Button("Refresh", scale=0, elem_id="bulk-refresh")
    bulk_loads.render()
    return model, process_status, bulk_loads, bulk_refresh


def _loader(gateway: ChunkLab):
    def load(current: str | None, current_viewer: str | None, current_model: str | None):
        """The strategy forms, the embedding models and the documents; a service out of reach
        is one sentence in the processing status or under the list, the dropdowns left as they are."""
        try:
            catalog = gateway.strategy_catalog()
            strategy_forms, message = knobs.strategy_forms(list(catalog.strategies)), ""
            models = gr.update(choices=list(catalog.embedding_models), value=current_model or None)
        except ClientError as exc:
            strategy_forms, message, models = [], told_html(exc), gr.skip()
        names = [form.name for form in strategy_forms]
        viewer_choice = current_viewer if current_viewer in names else viewer.left_default(names)
        try:
            documents = gateway.list_documents()
        except ClientError as exc:
            return (
                strategy_forms,
                message,
                gr.skip(),
                gr.skip(),
                gr.update(choices=names, value=viewer_choice),
                told_html(exc),
                models,
            )
        current = current or opening_document(documents)  # ready to process or view at once
        return (
            strategy_forms,
            message,
            document_dropdown_update(gateway, current, documents),
            documents_table(documents),
            gr.update(choices=names, value=viewer_choice),
            "",
            models,
        )

    return load
