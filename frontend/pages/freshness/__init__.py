"""Freshness: each collection's window (list and edit), a sweep (always a dry
run first, then for real, showing what goes) and the archived documents with
restore. All of it is the retriever's; this page only calls it. A refresh that
cannot reach the retriever says so in one sentence where its table goes, and its
dropdown stays as it was.
"""

from __future__ import annotations

from dataclasses import dataclass

import gradio as gr

from chunklab.client import ChunkLab
from frontend.errors import said_in_place, told_as_sentence, user_error
from frontend.forms import experiment_config, limits
from frontend.pages.freshness import freshness_html
from frontend.views.formatting import message_html

CONFIRM_SWEEP_JS = "(asOf, _) => [asOf, confirm('Archive every document outside its freshness window now?')]"


def build(gateway: ChunkLab, opened=None) -> gr.Blocks:
    """`opened`: the event of the tab being opened (frontend/app.py), when the page reads the
    stack (ADR 0165); without one, when the page loads."""
    with gr.Blocks() as page:
        parts = _layout()
        _wire(Freshness(gateway), opened or page.load, parts)
    return page


@dataclass(frozen=True)
class FreshnessParts:
    """The page's components."""

    windows: gr.HTML
    collection: gr.Dropdown
    days: gr.Number
    save: gr.Button
    window_status: gr.HTML
    as_of: gr.Textbox
    dry_run: gr.Button
    sweep_now: gr.Button
    sweep_result: gr.HTML
    sweep_confirm: gr.Checkbox
    archived: gr.HTML
    archived_choice: gr.Dropdown
    restore: gr.Button
    restore_status: gr.HTML


def _layout() -> FreshnessParts:
    gr.Markdown("### Freshness windows\nQueries never return content older than its collection's window.")
    windows = gr.HTML(elem_id="windows-table")
    with gr.Row(equal_height=True):
        collection = gr.Dropdown(label="Collection", choices=[], allow_custom_value=True, elem_id="window-collection")
        days = gr.Number(
            label="Window in days (0 = unlimited)", value=0, precision=0, minimum=0, elem_id="window-days"
        )  # its maximum: the retriever's, on load
        save = gr.Button("Save window", scale=0, elem_id="window-save")
    window_status = gr.HTML(elem_id="window-status")

    gr.Markdown("### Sweep\nA dry run lists what would be archived; then sweep for real.")
    with gr.Row(equal_height=True):
        as_of = gr.Textbox(label="As of (optional)", placeholder="YYYY-MM-DD; empty = now", elem_id="sweep-as-of")
        dry_run = gr.Button("Dry run", elem_id="sweep-dry-run")
        sweep_now = gr.Button("Sweep now", variant="stop", interactive=False, elem_id="sweep-now")
    sweep_result = gr.HTML(elem_id="sweep-result")
    sweep_confirm = gr.Checkbox(visible=False)

    gr.Markdown("### Archived documents")
    archived = gr.HTML(elem_id="archived-table")
    with gr.Row(equal_height=True):
        archived_choice = gr.Dropdown(label="Archived document", choices=[], scale=3, elem_id="archived-select")
        restore = gr.Button("Restore", scale=0, elem_id="restore-button")
    restore_status = gr.HTML(elem_id="restore-status")
    return FreshnessParts(
        windows,
        collection,
        days,
        save,
        window_status,
        as_of,
        dry_run,
        sweep_now,
        sweep_result,
        sweep_confirm,
        archived,
        archived_choice,
        restore,
        restore_status,
    )


class Freshness:
    """The page's handlers for one gateway."""

    def __init__(self, gateway: ChunkLab):
        self.gateway = gateway

    @said_in_place(outputs=2)
    def list_windows(self, current: str | None):
        with told_as_sentence():
            listed = self.gateway.list_freshness_windows()
        names = [w.collection for w in listed]
        return freshness_html.windows_html(listed), gr.update(choices=names, value=current or None)

    @said_in_place(outputs=2, at=1)
    def show_window(self, name: str | None):
        if not name:
            return gr.skip(), gr.skip()
        with told_as_sentence():
            listed = {w.collection: w.max_age_days for w in self.gateway.list_freshness_windows()}
        return listed.get(name, gr.skip()), gr.skip()

    @said_in_place(outputs=1)
    def save_window(self, name: str | None, value: float | None):
        name = (name or "").strip()
        if not name:
            raise user_error("Name the collection whose window to set.")
        try:
            max_age = experiment_config.whole(value, 0)
        except ValueError as exc:
            raise user_error(f"The window takes whole days: {exc}") from None
        with told_as_sentence():
            saved = self.gateway.update_freshness_window(name, max_age)
        text = f"{saved.collection}: {freshness_html.window_text(saved.max_age_days)}."
        return message_html(text, "ok")

    @said_in_place(outputs=2)
    def list_archived(self, current: str | None):
        with told_as_sentence():
            documents = self.gateway.list_archived_documents()
        options = freshness_html.archived_choices(documents)
        ids = {value for _, value in options}
        table = freshness_html.documents_table(documents, "No document is in cold storage.")
        return table, gr.update(choices=options, value=current if current in ids else None)

    @said_in_place(outputs=2)
    def sweep(self, as_of_text: str, for_real: bool):
        """A dry run, or (for_real) the sweep itself; either way the result shows what goes."""
        try:
            moment = freshness_html.parse_as_of(as_of_text)
        except ValueError as exc:
            raise user_error(str(exc)) from None
        with told_as_sentence():
            response = self.gateway.sweep(dry_run=not for_real, as_of=moment)
        # Sweeping for real needs a fresh dry run each time, and one that found something.
        return freshness_html.sweep_html(response), gr.update(interactive=not for_real and bool(response.documents))

    @said_in_place(outputs=1)
    def do_restore(self, document_id: str | None):
        if not document_id:
            raise user_error("Choose an archived document to restore.")
        with told_as_sentence():
            labels = dict((v, k) for k, v in freshness_html.archived_choices(self.gateway.list_archived_documents()))
            response = self.gateway.restore_document(document_id)
        text, kind = freshness_html.restore_message(labels.get(document_id, document_id), response)
        return message_html(text, kind)

    def sweep_confirmed(self, as_of_text: str, confirmed: bool):
        if not confirmed:
            return message_html("Sweep cancelled: nothing changed."), gr.skip()
        return self.sweep(as_of_text, True)


def _wire(handlers: Freshness, opened, parts: FreshnessParts) -> None:
    listed_windows = [parts.windows, parts.collection]
    listed_archived = [parts.archived, parts.archived_choice]
    opened(lambda: limits.freshness_days_update(handlers.gateway), outputs=parts.days, show_progress="hidden")
    opened(handlers.list_windows, inputs=parts.collection, outputs=listed_windows).then(
        handlers.list_archived, inputs=parts.archived_choice, outputs=listed_archived
    )
    parts.collection.change(handlers.show_window, inputs=parts.collection, outputs=[parts.days, parts.window_status])
    parts.save.click(handlers.save_window, inputs=[parts.collection, parts.days], outputs=parts.window_status).success(
        handlers.list_windows, inputs=parts.collection, outputs=listed_windows
    )
    parts.dry_run.click(
        lambda text: handlers.sweep(text, False), inputs=parts.as_of, outputs=[parts.sweep_result, parts.sweep_now]
    )
    # Changing the date makes the last dry run stale.
    parts.as_of.change(lambda: gr.update(interactive=False), outputs=parts.sweep_now)
    parts.sweep_now.click(
        handlers.sweep_confirmed,
        inputs=[parts.as_of, parts.sweep_confirm],
        outputs=[parts.sweep_result, parts.sweep_now],
        js=CONFIRM_SWEEP_JS,
    ).success(handlers.list_archived, inputs=parts.archived_choice, outputs=listed_archived)
    parts.restore.click(handlers.do_restore, inputs=parts.archived_choice, outputs=parts.restore_status).success(
        handlers.list_archived, inputs=parts.archived_choice, outputs=listed_archived
    )
