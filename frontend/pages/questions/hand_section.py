"""The Question sets page's "Write questions by hand" section (ADR 0092): a document's text
to select a passage in, the question typed beside it, the draft listed, and the set saved.
The rules are by_hand.py; this module lays the section out and wires it.

The browser tells where the selection is: SELECTION_JS counts the code points from the start
of the document's text to the selection's start and end (a Range over the text nodes, so the
marks of drafted passages count as the text they hold), and hands them, with the selected
text, to the offset fields; the server takes text[start:end] (by_hand.passage_at).
"""

from __future__ import annotations

from dataclasses import dataclass

import gradio as gr

from chunklab.client import ChunkLab
from chunklab.views.render import render
from frontend.errors import said_in_place, told_as_sentence, user_error
from frontend.forms.pickers import document_dropdown_update, question_set_update
from frontend.pages.questions import by_hand
from frontend.views.formatting import document_choices, message_html

# The selection inside the document's text as [start, end, text], start and end in code points
# (Array.from counts code points; a Range's length counts UTF-16 units, which differ after
# any character outside the BMP). Nothing selected there: empty, and the server says so.
SELECTION_JS = """
(start, end, picked) => {
  const box = document.querySelector('#hand-text .cl-hand-text');
  const selection = window.getSelection();
  if (!box || !selection || selection.rangeCount === 0 || selection.isCollapsed) return [null, null, ''];
  const range = selection.getRangeAt(0);
  if (!box.contains(range.startContainer) || !box.contains(range.endContainer)) return [null, null, ''];
  const before = document.createRange();
  before.selectNodeContents(box);
  before.setEnd(range.startContainer, range.startOffset);
  const first = Array.from(before.toString()).length;
  const text = range.toString();
  return [first, first + Array.from(text).length, text];
}
"""

# Where the browser keeps the unsaved draft (localStorage, encrypted by Gradio with the data
# folder's key): a reload of the page, or a new start of the UI, loses none of the questions.
DRAFT_KEY = "chunklab-hand-draft"


@dataclass(frozen=True)
class HandForm:
    """The section's components, and the draft and document text it keeps."""

    accordion: gr.Accordion
    document: gr.Dropdown
    view: gr.HTML
    use_selection: gr.Button
    start: gr.Number
    end: gr.Number
    picked: gr.Textbox
    passage: gr.HTML
    question: gr.Textbox
    answer: gr.Textbox
    add: gr.Button
    remove_last: gr.Button
    status: gr.HTML
    draft_view: gr.HTML
    name: gr.Textbox
    save: gr.Button
    draft: gr.BrowserState
    text: gr.State


def hand_section(secret: str | None = None) -> HandForm:
    """`secret`: the key Gradio encrypts the kept draft with (None: one for this process)."""
    with gr.Accordion("Write questions by hand (no LLM needed)", open=False, elem_id="hand-section") as accordion:
        gr.Markdown(
            "Choose a document, select the words that answer a question in its text, type the question and add it. "
            "The excerpt is the document's own text at the selection, so its position is exact. Save the set when "
            "it has a few questions (an experiment keeps some back to confirm its winner)."
        )
        document = gr.Dropdown(label="Document", choices=[], elem_id="hand-document")
        view = gr.HTML(elem_id="hand-text")
        with gr.Row(equal_height=True):
            use_selection = gr.Button("Use the selected text", scale=0, min_width=180, elem_id="hand-use-selection")
            start = gr.Number(label="Passage starts at character", precision=0, elem_id="hand-start")
            end = gr.Number(label="Passage ends at character", precision=0, elem_id="hand-end")
        picked = gr.Textbox(visible=False)
        passage = gr.HTML(elem_id="hand-passage")
        question = gr.Textbox(label="Question", placeholder="What does the passage answer?", elem_id="hand-question")
        answer = gr.Textbox(label="Expected answer (optional)", elem_id="hand-answer")
        with gr.Row():
            add = gr.Button("Add question", variant="primary", elem_id="hand-add")
            remove_last = gr.Button("Remove the last question", elem_id="hand-remove")
        status = gr.HTML(elem_id="hand-status")
        draft_view = gr.HTML(render("frontend", "hand_draft.html.j2", draft=[]), elem_id="hand-draft")
        with gr.Row(equal_height=True):
            name = gr.Textbox(label="Set name", scale=3, elem_id="hand-name")
            save = gr.Button("Save the question set", variant="primary", scale=0, elem_id="hand-save")
    return HandForm(
        accordion, document, view, use_selection, start, end, picked, passage, question, answer, add,
        remove_last, status, draft_view, name, save, gr.BrowserState([], storage_key=DRAFT_KEY, secret=secret), gr.State(""),
    )  # fmt: skip


def pieces(text: str, draft: list[dict], document_id: str) -> list[dict]:
    """The text cut where the draft's passages of this document begin and end, those marked."""
    spans = sorted((d["start"], d["end"]) for d in draft if d["document_id"] == document_id)
    cuts, at = [], 0
    for start, end in spans:
        start = max(start, at)
        if start < end:
            cuts += [{"text": text[at:start], "marked": False}, {"text": text[start:end], "marked": True}]
            at = end
    return [c for c in [*cuts, {"text": text[at:], "marked": False}] if c["text"]]


class HandHandlers:
    """The section's handlers for one gateway."""

    def __init__(self, gateway: ChunkLab):
        self.gateway = gateway

    def document_view(self, document_id: str | None, draft: list[dict] | None) -> tuple:
        """The document's text to select in (kept as the state too), the passage fields emptied."""
        if not document_id:
            return "", "", None, None, ""
        with told_as_sentence():
            document = self.gateway.get_document_text(document_id)
            name = document_choices([self.gateway.get_document(document_id)])[0][0]
        view = render(
            "frontend",
            "hand_document.html.j2",
            name=name,
            length=len(document.text),
            document_id=document_id,
            pieces=pieces(document.text, draft or [], document_id),
        )
        return view, document.text, None, None, ""

    @staticmethod
    @said_in_place(outputs=1)
    def shown_passage(text: str, start, end, picked: str = ""):
        if start in (None, "") and end in (None, "") and not picked:
            return ""
        found = by_hand.passage_at(text or "", start, end, picked)
        return render("frontend", "hand_passage.html.j2", start=found.start, end=found.end, text=found.text)

    def add(self, draft, text: str, document_id, start, end, question: str, answer: str):
        """The draft with the question, its view, the document marked again, the fields emptied."""
        if not document_id or not text:
            raise user_error(f"{by_hand.DOCUMENT}: choose the document the passage comes from.")
        found = by_hand.passage_at(text, start, end)
        draft = by_hand.added(draft, question, answer, document_id, found)
        return (
            draft,
            render("frontend", "hand_draft.html.j2", draft=draft),
            self.document_view(document_id, draft)[0],
            message_html(f"Added question {len(draft)}: characters {found.start:,}–{found.end:,}.", "ok"),
            None,
            None,
            "",
            "",
            "",
            "",
        )

    def restored(self, draft, document_id):
        """On loading the page and opening its tab: the draft this browser kept, listed, its
        passages marked in the document shown, and a sentence saying so (the section opened)."""
        if not draft:
            return gr.skip(), gr.skip(), gr.skip(), gr.skip()
        said = f"Your draft of {len(draft)} question{'' if len(draft) == 1 else 's'} is not saved yet: this browser keeps it until you save it."
        return (
            render("frontend", "hand_draft.html.j2", draft=draft),
            message_html(said, "info"),
            gr.update(open=True),
            self.document_view(document_id, draft)[0] if document_id else gr.skip(),
        )

    def remove_last(self, draft, document_id):
        draft = list(draft or [])[:-1]
        return draft, render("frontend", "hand_draft.html.j2", draft=draft), self.document_view(document_id, draft)[0]

    def save(self, name: str, draft, document_id):
        """(status, draft emptied, its view, the review's set dropdown on the new set)."""
        stored = by_hand.saved(self.gateway, name, draft)
        said = f"Saved “{stored.name}” with {len(stored.questions)} questions: run an experiment with it."
        return (
            message_html(said, "ok"),
            [],
            render("frontend", "hand_draft.html.j2", draft=[]),
            self.document_view(document_id, [])[0],
            question_set_update(self.gateway, stored.question_set_id),
        )


def wire(gateway: ChunkLab, page: gr.Blocks, form: HandForm, review_set: gr.Dropdown, opened=None) -> None:
    """The section's events; a saved set becomes the review's choice. When the tab is opened
    (`opened`; without one, on load) with no document chosen, the newest is shown."""
    handlers = HandHandlers(gateway)
    fields = [form.start, form.end, form.picked]

    def listed(current: str | None, _current_set: str | None):
        """The documents (the newest chosen when none is), and the section open while no question set exists."""
        with told_as_sentence():
            has_sets = bool(gateway.list_question_sets())
            documents = gateway.list_documents()
        keep = current or (documents[0].document_id if documents else None)  # the newest, shown at once
        return document_dropdown_update(gateway, keep, documents), gr.skip() if has_sets else gr.update(open=True)

    def current_documents(current: str | None):
        with told_as_sentence():
            return document_dropdown_update(gateway, current)

    opened = opened or page.load
    opened(listed, inputs=[form.document, review_set], outputs=[form.document, form.accordion])
    opened(
        said_in_place(outputs=4, at=1)(handlers.restored),
        inputs=[form.draft, form.document],
        outputs=[form.draft_view, form.status, form.accordion, form.view],
    )
    form.document.focus(current_documents, inputs=form.document, outputs=form.document, show_progress="hidden")
    form.document.change(
        handlers.document_view, inputs=[form.document, form.draft], outputs=[form.view, form.text, *fields]
    ).then(lambda: "", outputs=form.passage)
    form.use_selection.click(None, inputs=fields, outputs=fields, js=SELECTION_JS).then(
        handlers.shown_passage, inputs=[form.text, *fields], outputs=form.passage
    )
    for box in (form.start, form.end):
        box.input(handlers.shown_passage, inputs=[form.text, form.start, form.end], outputs=form.passage)
    form.add.click(
        said_in_place(outputs=10, at=3)(handlers.add),
        inputs=[form.draft, form.text, form.document, form.start, form.end, form.question, form.answer],
        outputs=[
            form.draft,
            form.draft_view,
            form.view,
            form.status,
            *fields,
            form.passage,
            form.question,
            form.answer,
        ],
    )
    form.remove_last.click(
        handlers.remove_last, inputs=[form.draft, form.document], outputs=[form.draft, form.draft_view, form.view]
    )
    form.save.click(
        said_in_place(outputs=5)(handlers.save),
        inputs=[form.name, form.draft, form.document],
        outputs=[form.status, form.draft, form.draft_view, form.view, review_set],
    )
