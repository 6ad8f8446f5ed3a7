"""The Documents page's index sets of the selected document: listed (ListIndexedSets), one
made active, pinned or deleted, or exported as a file (forms/export.py)."""

from __future__ import annotations

from dataclasses import dataclass

import gradio as gr

from chunklab.client import ChunkLab
from frontend.errors import said_in_place, told_as_sentence, user_error
from frontend.forms import export, knobs
from frontend.pages.documents.document_list import delete_question
from frontend.views import formatting


@dataclass(frozen=True)
class IndexSets:
    """The section's components; `shown` in the order show_indexed fills them."""

    indexed: gr.HTML
    chosen_set: gr.Dropdown
    activate_button: gr.Button
    pin_button: gr.Button
    delete_set_button: gr.Button
    set_status: gr.HTML


def sets_section(gateway: ChunkLab, selected: gr.Dropdown) -> IndexSets:
    indexed = gr.HTML(elem_id="indexed-sets")
    with gr.Row(equal_height=True):
        chosen_set = gr.Dropdown(label="Index set", choices=[], scale=3, elem_id="set-select")
        activate_button = gr.Button("Make active", scale=0, elem_id="set-activate")
        pin_button = gr.Button("Pin / unpin", scale=0, elem_id="set-pin")
        delete_set_button = gr.Button("Delete set", variant="stop", scale=0, elem_id="set-delete")
    set_status = gr.HTML(elem_id="set-status")
    export.set_export_section(gateway, selected, chosen_set)
    return IndexSets(indexed, chosen_set, activate_button, pin_button, delete_set_button, set_status)


class SetHandlers:
    """The section's handlers for one gateway."""

    def __init__(self, gateway: ChunkLab):
        self.gateway = gateway

    @said_in_place(outputs=3)
    def show_indexed(
        self,
        document_id: str | None,
        strategy_forms: list[knobs.StrategyForm] | None = None,
        current: str | None = None,
    ):
        """Every index set of the selected document (ListIndexedSets), the set dropdown and
        what Delete will ask; a service out of reach is one sentence in place of the sets."""
        if not document_id:
            return "", gr.update(choices=[], value=None), gr.skip()
        with told_as_sentence():
            sets = self.gateway.list_indexed_sets(document_id=document_id)
            document = self.gateway.get_document(document_id)
        choices = formatting.set_choices(sets)
        values = [value for _, value in choices]
        return (
            formatting.indexed_sets_html(sets, self.gateway.settings.embedding_model),
            gr.update(choices=choices, value=current if current in values else None),
            delete_question(document, sets),
        )

    def set_action(self, action: str):
        gateway = self.gateway

        @said_in_place(outputs=1)
        def act(document_id: str | None, chosen: str | None):
            if not document_id or not chosen:
                raise user_error("Select a document and one of its index sets first.")
            strategy, _, config_id = chosen.partition("/")
            with told_as_sentence():
                if action == "activate":
                    gateway.activate_indexed_set(document_id, strategy, config_id)
                    return formatting.message_html(
                        f"{strategy} {config_id} is now the active set: queries without a configuration search it.",
                        "ok",
                    )
                if action == "pin":
                    found = gateway.indexed_set(document_id, strategy, config_id=config_id)
                    pinned = gateway.pin_indexed_set(document_id, strategy, config_id, not found.pinned).pinned
                    return formatting.message_html(
                        f"{strategy} {config_id} is {'pinned: retention keeps it' if pinned else 'no longer pinned'}.",
                        "ok",
                    )
                deleted = gateway.delete_indexed_set(document_id, strategy, config_id)
                return formatting.message_html(f"Deleted the {strategy} set {config_id} ({deleted} chunks).", "ok")

        return act


def wire(
    handlers: SetHandlers, parts: IndexSets, selected: gr.Dropdown, forms: gr.State, delete_asks: gr.Textbox
) -> None:
    """The sets follow the selected document and the strategy forms; each action refreshes them."""
    shown = [parts.indexed, parts.chosen_set, delete_asks]
    selected.change(
        handlers.show_indexed, inputs=[selected, forms, parts.chosen_set], outputs=shown, show_progress="hidden"
    )
    for button, action in (
        (parts.activate_button, "activate"),
        (parts.pin_button, "pin"),
        (parts.delete_set_button, "delete"),
    ):
        button.click(
            handlers.set_action(action), inputs=[selected, parts.chosen_set], outputs=parts.set_status
        ).success(handlers.show_indexed, inputs=[selected, forms, parts.chosen_set], outputs=shown)
    forms.change(
        handlers.show_indexed, inputs=[selected, forms, parts.chosen_set], outputs=shown, show_progress="hidden"
    )
