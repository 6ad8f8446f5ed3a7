"""Documents: upload, list, delete, process a document with chosen strategies
(or every document, as a bulk load through the broker, with the recent loads
listed), and view where a strategy puts its chunk boundaries.

Each action writes its own status line and then refreshes the list; the
processing section (forms built from the chunker's knobs) lives in
`processing.py`, the boundary viewer in `boundaries.py`.
"""

from __future__ import annotations

import gradio as gr

from chunklab import samples
from chunklab.client import ChunkLab, ClientError
from frontend import formatting, knobs
from frontend.pages import boundaries, export, processing
from frontend.pages.common import (
    document_dropdown_update, documents_table, said_in_place, told_as_sentence, told_html, user_error,
)

# What the file picker offers; ingest resolves the format from the name (services/ingest/service.py).
UPLOAD_TYPES = [".md", ".markdown", ".txt", ".text", ".docx", ".pdf", ".html", ".htm", ".xhtml"]
UPLOAD_LABEL = "Markdown, plain-text, DOCX, PDF or HTML file"
# The question names the document and its chunks (delete_question, kept up to date by show_indexed).
CONFIRM_DELETE_JS = "(id, _, question) => [id, id ? confirm(question) : false, question]"


def opening_document(documents) -> str | None:
    """The document a fresh page starts on: the newest, unless that is one of the sample's
    (nothing uploaded since `make up` loaded it), then the sample's speech, the one whose
    boundaries differ enough to compare and which the viewer draws at once."""
    if not documents:
        return None
    if samples.is_any_sample(documents[0]):
        speech = next((d for d in documents if samples.is_sample(d)), None)
        if speech is not None:
            return speech.document_id
    return documents[0].document_id


def delete_question(document, sets) -> str:
    """What Delete asks before it deletes: which document, and how many chunks go with it."""
    label = formatting.document_choices([document])[0][0]
    points = sum(s.points for s in sets)
    chunks = f"its {points} indexed chunks ({len(sets)} index set{'' if len(sets) == 1 else 's'})" if sets \
        else "its text (it has no indexed chunks)"
    return f"Delete {label} and {chunks}? Experiments keep the results they measured on it."


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
        delete_asks = gr.Textbox(visible=False, value="Delete this document and all of its chunks?")
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

        @said_in_place(outputs=3)
        def show_indexed(document_id: str | None, strategy_forms: list[knobs.StrategyForm] | None = None,
                         current: str | None = None):
            """Every index set of the selected document (ListIndexedSets), the set dropdown and
            what Delete will ask; a service out of reach is one sentence in place of the sets."""
            if not document_id:
                return "", gr.update(choices=[], value=None), gr.skip()
            with told_as_sentence():
                sets = gateway.list_indexed_sets(document_id=document_id)
                document = gateway.get_document(document_id)
            choices = formatting.set_choices(sets)
            values = [value for _, value in choices]
            return (formatting.indexed_sets_html(sets, gateway.settings.embedding_model),
                    gr.update(choices=choices, value=current if current in values else None),
                    delete_question(document, sets))

        def set_action(action: str):
            @said_in_place(outputs=1)
            def act(document_id: str | None, chosen: str | None):
                if not document_id or not chosen:
                    raise user_error("Select a document and one of its index sets first.")
                strategy, _, config_id = chosen.partition("/")
                with told_as_sentence():
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

        @said_in_place(outputs=1)
        def show_bulk_loads():
            with told_as_sentence():
                return formatting.bulk_loads_html(gateway.list_bulk_loads())

        model = processing.strategy_section(gateway, forms, selected, process_status,
                                    then=(show_indexed, [selected, forms, chosen_set],
                                          [indexed, chosen_set, delete_asks]),
                                    then_bulk=(show_bulk_loads, [], bulk_loads))
        process_status.render()

        with gr.Row(equal_height=True):
            gr.Markdown("### Bulk loads")
            bulk_refresh = gr.Button("Refresh", scale=0, elem_id="bulk-refresh")
        bulk_loads.render()

        viewer = boundaries.viewer_section(gateway, forms, selected)

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
            viewer_choice = current_viewer if current_viewer in names else boundaries.left_default(names)
            try:
                documents = gateway.list_documents()
            except ClientError as exc:
                return (strategy_forms, message, gr.skip(), gr.skip(), gr.update(choices=names, value=viewer_choice),
                        told_html(exc), models)
            current = current or opening_document(documents)  # ready to process or view at once
            return (
                strategy_forms, message,
                document_dropdown_update(gateway, current, documents), documents_table(documents),
                gr.update(choices=names, value=viewer_choice), "", models,
            )

        @said_in_place(outputs=3, at=2)
        def refresh(current: str | None):
            with told_as_sentence():
                documents = gateway.list_documents()
            return document_dropdown_update(gateway, current, documents), documents_table(documents), gr.skip()

        @said_in_place(outputs=3)
        def upload(path: str | None, collection_name: str, language_code: str):
            if not path:
                raise user_error("Choose a .md, .txt, .docx, .pdf or .html file first.")
            with told_as_sentence():
                response = gateway.upload_document(path, collection_name or "", language=language_code or "")
            # The box is emptied, ready for the next file.
            return formatting.upload_message(response), response.document.document_id, None

        @said_in_place(outputs=2)
        def delete(document_id: str | None, confirmed: bool, _question: str):
            if not document_id:
                raise user_error("Select a document to delete.")
            if not confirmed:
                return formatting.message_html("Deletion cancelled."), document_id
            with told_as_sentence():
                labels = {value: label for label, value in formatting.document_choices(gateway.list_documents())}
                chunks_deleted = gateway.delete_document(document_id)
            name = labels.get(document_id, document_id)
            return formatting.message_html(f"Deleted {name} and {chunks_deleted} chunks from the index.", "ok"), None

        def pick_row(event: gr.SelectData):
            row = event.row_value or []
            return row[-1] if row else gr.update()

        page.load(
            load, inputs=[selected, viewer.strategy, model],
            outputs=[forms, process_status, selected, table, viewer.strategy, delete_status, model],
        ).then(viewer.first_view, inputs=[selected, forms], outputs=viewer.outputs)
        page.load(show_bulk_loads, outputs=bulk_loads)
        bulk_refresh.click(show_bulk_loads, outputs=bulk_loads)
        listed = [selected, table, delete_status]
        refresh_button.click(refresh, inputs=selected, outputs=listed)
        # Each action writes only its own status, then the list refreshes: a
        # failure marks that status and leaves the table readable.
        upload_button.click(
            upload, inputs=[upload_file, collection, language], outputs=[upload_status, wanted, upload_file]
        ).success(refresh, inputs=wanted, outputs=listed)
        delete_button.click(
            delete, inputs=[selected, delete_confirmed, delete_asks], outputs=[delete_status, wanted],
            js=CONFIRM_DELETE_JS,
        ).success(refresh, inputs=wanted, outputs=listed)
        table.select(pick_row, outputs=selected)
        shown_sets = [indexed, chosen_set, delete_asks]
        selected.change(show_indexed, inputs=[selected, forms, chosen_set], outputs=shown_sets,
                        show_progress="hidden")
        for button, action in ((activate_button, "activate"), (pin_button, "pin"), (delete_set_button, "delete")):
            button.click(set_action(action), inputs=[selected, chosen_set], outputs=set_status).success(
                show_indexed, inputs=[selected, forms, chosen_set], outputs=shown_sets)
        forms.change(show_indexed, inputs=[selected, forms, chosen_set], outputs=shown_sets, show_progress="hidden")
    return page
