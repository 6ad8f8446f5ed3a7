"""Documents: upload, list, delete, process a document with chosen strategies
(or every document, as a bulk load through the broker, with the recent loads
listed), and view where a strategy puts its chunk boundaries.

Each action writes its own status line and then refreshes the list; the
processing section (forms built from the chunker's knobs) lives in
`processing.py`, the boundary viewer in `boundaries.py`.
"""

from __future__ import annotations

import gradio as gr

from chunklab.client import ChunkLab, ClientError
from frontend import formatting, knobs
from frontend.pages import boundaries, export, processing
from frontend.pages.common import document_dropdown_update, documents_table, shown_as_error, user_error

# What the file picker offers; ingest resolves the format from the name (services/ingest/service.py).
UPLOAD_TYPES = [".md", ".markdown", ".txt", ".text", ".docx", ".pdf", ".html", ".htm", ".xhtml"]
UPLOAD_LABEL = "Markdown, plain-text, DOCX, PDF or HTML file"
CONFIRM_DELETE_JS = "(id, _) => [id, id ? confirm('Delete this document and all of its chunks?') : false]"


def build(gateway: ChunkLab) -> gr.Blocks:
    with gr.Blocks() as page:
        forms = gr.State([])
        # The document to select once the list has been refreshed after an action.
        wanted = gr.State(None)

        gr.Markdown("### Upload a document")
        with gr.Row():
            upload_file = gr.File(
                label=UPLOAD_LABEL, file_types=UPLOAD_TYPES, elem_id="upload-file"
            )
            with gr.Column():
                collection = gr.Textbox(label="Collection (optional)", placeholder="default", elem_id="upload-collection")
                language = gr.Textbox(
                    label="Language (optional)", placeholder="detected, e.g. en", max_lines=1,
                    elem_id="upload-language",
                )
                upload_button = gr.Button("Upload", variant="primary", elem_id="upload-button")
        upload_status = gr.HTML(elem_id="upload-status")

        gr.Markdown("### Documents")
        with gr.Row(equal_height=True):
            selected = gr.Dropdown(label="Selected document", choices=[], scale=3, elem_id="document-select")
            refresh_button = gr.Button("Refresh", scale=0, elem_id="documents-refresh")
            delete_button = gr.Button("Delete selected", variant="stop", scale=0, elem_id="delete-button")
        delete_confirmed = gr.Checkbox(visible=False)
        table = gr.Dataframe(
            headers=formatting.DOCUMENT_COLUMNS, interactive=False, wrap=True, elem_id="documents-table"
        )
        delete_status = gr.HTML(elem_id="delete-status")

        indexed = gr.HTML(elem_id="indexed-sets")
        with gr.Row(equal_height=True):
            chosen_set = gr.Dropdown(label="Index set", choices=[], scale=3, elem_id="set-select")
            activate_button = gr.Button("Make active", scale=0, elem_id="set-activate")
            pin_button = gr.Button("Pin / unpin", scale=0, elem_id="set-pin")
            delete_set_button = gr.Button("Delete set", variant="stop", scale=0, elem_id="set-delete")
        set_status = gr.HTML(elem_id="set-status")
        export.set_export_section(gateway, selected, chosen_set)

        def show_indexed(document_id: str | None, strategy_forms: list[knobs.StrategyForm] | None = None,
                         current: str | None = None):
            """Every index set of the selected document (ListIndexedSets), and the set dropdown."""
            if not document_id:
                return "", gr.update(choices=[], value=None)
            with shown_as_error():
                sets = gateway.list_indexed_sets(document_id=document_id)
            choices = formatting.set_choices(sets)
            values = [value for _, value in choices]
            return (formatting.indexed_sets_html(sets, gateway.settings.embedding_model),
                    gr.update(choices=choices, value=current if current in values else None))

        def set_action(action: str):
            def act(document_id: str | None, chosen: str | None):
                if not document_id or not chosen:
                    raise user_error("Select a document and one of its index sets first.")
                strategy, _, config_id = chosen.partition("/")
                with shown_as_error():
                    if action == "activate":
                        gateway.activate_indexed_set(document_id, strategy, config_id)
                        return formatting.message_html(
                            f"{strategy} {config_id} is now the active set: queries without a configuration "
                            "search it.", "ok")
                    if action == "pin":
                        found = gateway.indexed_set(document_id, strategy, config_id=config_id)
                        pinned = gateway.pin_indexed_set(document_id, strategy, config_id, not found.pinned).pinned
                        return formatting.message_html(
                            f"{strategy} {config_id} is {'pinned: retention keeps it' if pinned else 'no longer pinned'}.",
                            "ok")
                    deleted = gateway.delete_indexed_set(document_id, strategy, config_id)
                    return formatting.message_html(f"Deleted the {strategy} set {config_id} ({deleted} chunks).", "ok")

            return act

        gr.Markdown("### Process the selected document")
        # Created here (unrendered) so the dynamic strategy section can name it; shown below it.
        process_status = gr.HTML(elem_id="process-status", render=False)

        bulk_loads = gr.HTML(elem_id="bulk-loads", render=False)

        def show_bulk_loads():
            with shown_as_error():
                return formatting.bulk_loads_html(gateway.list_bulk_loads())

        processing.strategy_section(gateway, forms, selected, process_status,
                                    then=(show_indexed, [selected, forms, chosen_set], [indexed, chosen_set]),
                                    then_bulk=(show_bulk_loads, [], bulk_loads))
        process_status.render()

        with gr.Row(equal_height=True):
            gr.Markdown("### Bulk loads")
            bulk_refresh = gr.Button("Refresh", scale=0, elem_id="bulk-refresh")
        bulk_loads.render()

        viewer_strategy = boundaries.viewer_section(gateway, forms, selected)

        def load(current: str | None, current_viewer: str | None):
            try:
                strategy_forms = knobs.strategy_forms(gateway.list_strategies())
                message = ""
            except ClientError as exc:
                strategy_forms, message = [], formatting.message_html(exc.message, "error")
            names = [form.name for form in strategy_forms]
            viewer = current_viewer if current_viewer in names else (knobs.BASELINE if knobs.BASELINE in names else None)
            with shown_as_error():
                documents = gateway.list_documents()
            if not current and documents:  # a fresh page starts on the newest document, ready to process or view
                current = documents[0].document_id
            return (
                strategy_forms, message,
                document_dropdown_update(gateway, current, documents), documents_table(documents),
                gr.update(choices=names, value=viewer),
            )

        def refresh(current: str | None):
            with shown_as_error():
                documents = gateway.list_documents()
            return document_dropdown_update(gateway, current, documents), documents_table(documents)

        def upload(path: str | None, collection_name: str, language_code: str):
            if not path:
                raise user_error("Choose a .md, .txt, .docx, .pdf or .html file first.")
            with shown_as_error():
                response = gateway.upload_document(path, collection_name or "", language=language_code or "")
            return formatting.upload_message(response), response.document.document_id

        def delete(document_id: str | None, confirmed: bool):
            if not document_id:
                raise user_error("Select a document to delete.")
            if not confirmed:
                return formatting.message_html("Deletion cancelled."), document_id
            with shown_as_error():
                labels = {value: label for label, value in formatting.document_choices(gateway.list_documents())}
                chunks_deleted = gateway.delete_document(document_id)
            name = labels.get(document_id, document_id)
            return formatting.message_html(f"Deleted {name} and {chunks_deleted} chunks from the index.", "ok"), None

        def pick_row(event: gr.SelectData):
            row = event.row_value or []
            return row[-1] if row else gr.update()

        page.load(
            load, inputs=[selected, viewer_strategy], outputs=[forms, process_status, selected, table, viewer_strategy]
        )
        page.load(show_bulk_loads, outputs=bulk_loads)
        bulk_refresh.click(show_bulk_loads, outputs=bulk_loads)
        refresh_button.click(refresh, inputs=selected, outputs=[selected, table])
        # Each action writes only its own status, then the list refreshes: a
        # failure marks that status and leaves the table readable.
        upload_button.click(
            upload, inputs=[upload_file, collection, language], outputs=[upload_status, wanted]
        ).success(refresh, inputs=wanted, outputs=[selected, table])
        delete_button.click(
            delete, inputs=[selected, delete_confirmed], outputs=[delete_status, wanted], js=CONFIRM_DELETE_JS
        ).success(refresh, inputs=wanted, outputs=[selected, table])
        table.select(pick_row, outputs=selected)
        selected.change(show_indexed, inputs=[selected, forms, chosen_set], outputs=[indexed, chosen_set],
                        show_progress="hidden")
        for button, action in ((activate_button, "activate"), (pin_button, "pin"), (delete_set_button, "delete")):
            button.click(set_action(action), inputs=[selected, chosen_set], outputs=set_status).success(
                show_indexed, inputs=[selected, forms, chosen_set], outputs=[indexed, chosen_set])
        forms.change(show_indexed, inputs=[selected, forms], outputs=indexed, show_progress="hidden")
    return page
