"""The Documents page's upload and list: a file uploaded with its collection and language,
the documents listed, one selected (in the dropdown or by its row), and deleted after a
confirmation that says what goes with it. Each action writes its own status line and then
refreshes the list: a failure marks that status and leaves the table readable."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import gradio as gr

from chunklab.client import ChunkLab, ClientError
from chunklab.views.render import render
from chunklab_app import samples
from frontend.errors import said_in_place, told_as_sentence, told_sentence, user_error
from frontend.forms.pickers import document_dropdown_update
from frontend.pages.documents.parse_report import upload_warning
from frontend.views import formatting

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
    chunks = (
        f"its {points} indexed chunks ({len(sets)} index set{'' if len(sets) == 1 else 's'})"
        if sets
        else "its text (it has no indexed chunks)"
    )
    return f"Delete {label} and {chunks}? Experiments keep the results they measured on it."


def upload_refused(name: str, sentence: str) -> str:
    """Why a file was not uploaded, naming it once (ingest's own sentences usually quote it)."""
    sentence = sentence.rstrip(".") + "."
    return f"Not uploaded: {sentence}" if name in sentence else f"{name} was not uploaded: {sentence}"


def documents_table(documents) -> str:
    """The list as the page draws it: a table of our own (ADR 0159), a row per document."""
    return render(
        "frontend",
        "documents_table.html.j2",
        columns=formatting.DOCUMENT_COLUMNS,
        rows=formatting.documents_rows(documents),
    )


# A click on a row of the list selects its document: the table's element hands the row's id
# to the server as a select event (the listener stays while the table's HTML is replaced).
PICK_ROW_JS = """
element.addEventListener('click', (event) => {
  const row = event.target.closest('tr[data-document-id]');
  if (row) trigger('select', {index: row.sectionRowIndex, value: row.dataset.documentId});
});
"""


@dataclass(frozen=True)
class DocumentList:
    """The upload form and the list's components."""

    upload_file: gr.File
    collection: gr.Textbox
    language: gr.Textbox
    upload_button: gr.Button
    upload_status: gr.HTML
    selected: gr.Dropdown
    refresh_button: gr.Button
    delete_button: gr.Button
    delete_confirmed: gr.Checkbox
    delete_asks: gr.Textbox
    # The selected document's parse report (parse_report.py), between the choice and the list.
    report: gr.HTML
    table: gr.HTML
    delete_status: gr.HTML

    @property
    def listed(self) -> list:
        """What a refresh of the list fills: the dropdown, the table and the delete status."""
        return [self.selected, self.table, self.delete_status]


def list_section() -> DocumentList:
    gr.Markdown("### Upload a document")
    with gr.Row():
        upload_file = gr.File(label=UPLOAD_LABEL, file_types=UPLOAD_TYPES, elem_id="upload-file")
        with gr.Column():
            collection = gr.Textbox(label="Collection (optional)", placeholder="default", elem_id="upload-collection")
            language = gr.Textbox(
                label="Language (optional)",
                placeholder="detected, e.g. en",
                max_lines=1,
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
    report = gr.HTML(elem_id="document-report")
    table = gr.HTML(documents_table([]), js_on_load=PICK_ROW_JS, elem_id="documents-table")
    delete_status = gr.HTML(elem_id="delete-status")
    return DocumentList(
        upload_file,
        collection,
        language,
        upload_button,
        upload_status,
        selected,
        refresh_button,
        delete_button,
        delete_confirmed,
        delete_asks,
        report,
        table,
        delete_status,
    )


class Listing:
    """The list's handlers for one gateway."""

    def __init__(self, gateway: ChunkLab):
        self.gateway = gateway

    @said_in_place(outputs=3, at=2)
    def refresh(self, current: str | None):
        with told_as_sentence():
            documents = self.gateway.list_documents()
        return document_dropdown_update(self.gateway, current, documents), documents_table(documents), gr.skip()

    def upload(self, path: str | None, collection_name: str, language_code: str, current: str | None):
        """(status, the document to select after the list is refreshed, the file box). A refused
        upload names the file and why, keeps the selected document (and so its index sets and
        boundary view) and leaves the file in its box; one that succeeds selects the new document."""
        if not path:
            return formatting.message_html(f"Choose a {UPLOAD_LABEL} first.", "error"), current, gr.skip()
        try:
            response = self.gateway.upload_document(path, collection_name or "", language=language_code or "")
        except ClientError as exc:
            return (
                formatting.message_html(upload_refused(Path(path).name, told_sentence(exc)), "error"),
                current,
                gr.skip(),
            )
        # The box is emptied, ready for the next file. A reader's warnings are said at once.
        warning = upload_warning(response.document)
        status = formatting.upload_message(response) + (formatting.message_html(warning, "warning") if warning else "")
        return status, response.document.document_id, None

    @said_in_place(outputs=2)
    def delete(self, document_id: str | None, confirmed: bool, _question: str):
        if not document_id:
            raise user_error("Select a document to delete.")
        if not confirmed:
            return formatting.message_html("Deletion cancelled."), document_id
        with told_as_sentence():
            labels = {value: label for label, value in formatting.document_choices(self.gateway.list_documents())}
            chunks_deleted = self.gateway.delete_document(document_id)
        name = labels.get(document_id, document_id)
        return formatting.message_html(f"Deleted {name} and {chunks_deleted} chunks from the index.", "ok"), None

    @staticmethod
    def pick_row(event: gr.SelectData):
        """The document of the row clicked (PICK_ROW_JS)."""
        return event.value or gr.update()


def wire(gateway: ChunkLab, parts: DocumentList, wanted: gr.State) -> None:
    """Refresh, upload, delete and picking a row; `wanted` holds the document to select once
    the list has been refreshed after an action."""
    handlers = Listing(gateway)
    parts.refresh_button.click(handlers.refresh, inputs=parts.selected, outputs=parts.listed)
    parts.upload_button.click(
        handlers.upload,
        inputs=[parts.upload_file, parts.collection, parts.language, parts.selected],
        outputs=[parts.upload_status, wanted, parts.upload_file],
    ).success(handlers.refresh, inputs=wanted, outputs=parts.listed)
    parts.delete_button.click(
        handlers.delete,
        inputs=[parts.selected, parts.delete_confirmed, parts.delete_asks],
        outputs=[parts.delete_status, wanted],
        js=CONFIRM_DELETE_JS,
    ).success(handlers.refresh, inputs=wanted, outputs=parts.listed)
    parts.table.select(handlers.pick_row, outputs=parts.selected)
