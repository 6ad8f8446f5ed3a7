"""The Documents page's processing section: strategy forms drawn from the
chunker's KnobSpecs, a run that follows the ProcessDocument stream, and a
bulk load of every document through the chunker's message broker.

Drawn with gr.render so that the chunker alone decides which strategies and
knobs exist; a new strategy needs no UI change.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import gradio as gr

from chunklab.client import ChunkLab, ClientError
from chunklab.v1 import common_pb2
from frontend.errors import told_html
from frontend.forms import field_notes, knobs
from frontend.forms.knobs import RENDER_ONE_AT_A_TIME
from frontend.views import formatting

# How often a bulk load's progress is asked for.
BULK_POLL_S = 0.5


def knob_input(field: knobs.KnobField, elem_prefix: str = "") -> gr.components.Component:
    """The input for one knob, defaulted as the chunker describes it, its range said under it.

    A number input has no minimum, maximum or precision of Gradio's: Gradio would refuse an
    out-of-range value (or round 1.5 to 2) before any handler runs, in a toast that names no
    field; the form checks it with chunklab.knobs instead and says so beside the field
    (forms.field_notes, ADR 0089). elem_prefix keeps element ids unique when two sections
    draw the same knob.
    """
    # interactive=True: Gradio does not infer it for components drawn inside gr.render.
    # The key keeps the component (its id and what was typed) the same when the render is drawn again.
    elem_id = elem_prefix + field.elem_id
    info = "; ".join(part for part in (field.description.rstrip("."), field.knob.range_text()) if part)
    common = dict(label=field.name, info=info or None, elem_id=elem_id, interactive=True, key=elem_id)
    if field.type in ("int", "double"):
        return gr.Number(value=field.default, step=1 if field.type == "int" else 0.01, **common)
    if field.type == "bool":
        return gr.Checkbox(value=bool(field.default), **common)
    if field.type == "choice":
        return gr.Dropdown(choices=list(field.choices), value=field.default, **common)
    return gr.Textbox(value=field.default or "", **common)


def process(
    gateway: ChunkLab,
    document_id: str,
    specs: list,
    embedding_model: str = "",
    activation: int = common_pb2.ACTIVATION_MAKE_ACTIVE,
) -> Iterator[tuple[float, str, str]]:
    """Runs ProcessDocument and yields (fraction done, progress line, status HTML) per event."""
    tracker = formatting.ProcessTracker([spec.name for spec in specs])
    yield 0.0, "starting", tracker.html()
    for event in gateway.process_document(document_id, specs, embedding_model, activation=activation):
        tracker.add(event)
        yield tracker.fraction(), tracker.description(), tracker.html()
    if tracker.result is None:
        raise ClientError("The chunker ended the processing stream without a result; see its log.")


def bulk_load(gateway: ChunkLab, specs: list, embedding_model: str = "") -> Iterator[tuple[float, str, str]]:
    """Queues every document as one bulk load and yields (fraction done, line, status HTML) until it is done."""
    documents = gateway.list_documents()
    if not documents:
        raise ClientError("There is no document to load yet: upload some first.")
    names = {d.document_id: d.name for d in documents}
    submitted = gateway.submit_bulk_load(list(names), specs, embedding_model)
    for load in gateway.follow_bulk_load(submitted.bulk_load_id, interval_s=BULK_POLL_S):
        yield (
            len(load.results) / max(load.jobs_total, 1),
            f"{len(load.results)}/{load.jobs_total} documents",
            formatting.bulk_load_html(load, names),
        )


def refused(sentence: str) -> str:
    """A refusal as the status area's error line (it replaces a stale progress line)."""
    return formatting.message_html(sentence.rstrip(".") + ".", "error")


def followed(steps, progress) -> Iterator[str]:
    """The status HTML of each step of steps() (a process or bulk_load), reporting its
    progress; a knob the rules refuse or a failed call ends it with one sentence in the
    status area instead of a stale progress line and "Error" pills."""
    try:
        for fraction, line, html in steps():
            progress(fraction, desc=line)
            yield html
    except ValueError as exc:
        yield refused(str(exc))
    except ClientError as exc:
        yield told_html(exc)


def _strategy_group(form: knobs.StrategyForm) -> tuple[gr.Checkbox, list, gr.HTML]:
    """One strategy's tick box, its knob inputs and the notes under them (inside gr.render: keyed)."""
    # The strategies the Query page opens on (chunklab_app.recommended.FIRST_STRATEGIES).
    ticked = knobs.ticked_first(form.name)
    with gr.Group(elem_id=form.elem_id):
        note = " Needs an LLM endpoint." if form.requires_llm else ""
        use = gr.Checkbox(
            label=form.name,
            value=ticked,
            info=form.description + note,
            elem_id=f"use-{form.name}",
            interactive=True,
            key=f"use-{form.name}",
        )
        # A strategy's knobs show only while it is ticked: ten strategies' knobs at once
        # make a page thousands of pixels tall. Drawn again, the row keeps what its box said.
        with gr.Row(
            visible=ticked, elem_id=f"knobs-{form.name}", key=f"knobs-{form.name}", preserved_by_key=["visible"]
        ) as knob_row:
            inputs = [knob_input(field) for field in form.fields]
        # Shown only while it has something to say: empty, it would be a grey band in the group.
        notes = gr.HTML(
            visible=False,
            elem_id=f"knob-notes-{form.name}",
            key=f"knob-notes-{form.name}",
            padding=False,
            preserved_by_key=["value", "visible"],
        )
        use.change(
            lambda on: gr.update(visible=on),
            inputs=use,
            outputs=knob_row,
            show_progress="hidden",
            key=f"show-knobs-{form.name}",
        )
    return use, inputs, notes


@dataclass(frozen=True)
class _Group:
    """One strategy's part of the form."""

    form: knobs.StrategyForm
    use: gr.Checkbox
    inputs: list
    notes: gr.HTML


class ProcessForm:
    """The drawn form's handlers: its fields checked as they are typed and again before a run
    (forms.field_notes), the run itself, and the bulk load. A refused run says so in the
    status, replacing the last run's outcome, and keeps the notes under the fields."""

    def __init__(self, gateway: ChunkLab, groups: list[_Group], selected, model, anyway, status):
        self.gateway, self.groups = gateway, groups
        self.selected, self.model, self.anyway, self.status = selected, model, anyway, status

    @property
    def inputs(self) -> set:
        """A set of inputs hands a handler one dict keyed by component, whatever the number of knobs."""
        fields = {c for group in self.groups for c in (group.use, *group.inputs)}
        return {self.selected, self.model, self.anyway} | fields

    @property
    def notes(self) -> list:
        return [group.notes for group in self.groups] + [self.anyway]

    @property
    def outputs(self) -> list:
        return [self.status, *self.notes]

    def _checked(self, values: dict) -> list[field_notes.CheckedForm | None]:
        """Each ticked strategy's values checked, None for the others, in the groups' order."""
        return [
            field_notes.check_form(group.form, [values[c] for c in group.inputs]) if values[group.use] else None
            for group in self.groups
        ]

    def _shown(self, checked: list) -> dict:
        shown = {}
        for group, c in zip(self.groups, checked, strict=True):
            html = field_notes.notes_html(c)
            shown[group.notes] = gr.update(value=html, visible=bool(html))
        warned = any(c is not None and c.warnings for c in checked)
        shown[self.anyway] = gr.update(visible=True) if warned else gr.update(visible=False, value=False)
        return shown

    def check_fields(self, values: dict) -> dict:
        return self._shown(self._checked(values))

    def _refusal(self, checked: list) -> str | None:
        ticked = [c for c in checked if c is not None]
        if not ticked:
            return "Tick at least one strategy to process with."
        if any(c.refused for c in ticked):
            return field_notes.FIX_THE_FIELDS
        return None

    @staticmethod
    def _chosen(checked: list) -> tuple[list, list]:
        ticked = [c for c in checked if c is not None]
        return [c.spec for c in ticked], [w for c in ticked for w in c.warnings]

    def run(self, values: dict, progress=gr.Progress()):
        checked = self._checked(values)
        shown = self._shown(checked)
        document_id = values[self.selected]
        refusal = self._refusal(checked) or (
            None if document_id else "Select a document first (upload one or pick it in the list)."
        )
        if refusal:
            yield {**shown, self.status: refused(refusal)}
            return
        specs, warned = self._chosen(checked)
        keep = bool(warned) and not values[self.anyway]
        activation = common_pb2.ACTIVATION_KEEP_CURRENT if keep else common_pb2.ACTIVATION_MAKE_ACTIVE
        note = formatting.message_html(field_notes.kept_current_sentence(warned)) if keep else ""

        def steps():
            last = None
            for last in process(self.gateway, document_id, specs, values[self.model] or "", activation):
                yield last
            if note and last is not None:
                yield last[0], last[1], last[2] + note

        yield shown
        for html in followed(steps, progress):
            yield {self.status: html}

    def run_bulk(self, values: dict, progress=gr.Progress()):
        checked = self._checked(values)
        shown = self._shown(checked)
        specs, warned = self._chosen(checked)
        refusal = self._refusal(checked)
        if refusal is None and warned and not values[self.anyway]:
            refusal = field_notes.bulk_refused_sentence(warned)
        if refusal:
            yield {**shown, self.status: refused(refusal)}
            return
        yield shown
        for html in followed(lambda: bulk_load(self.gateway, specs, values[self.model] or ""), progress):
            yield {self.status: html}


def strategy_section(
    gateway: ChunkLab,
    forms: gr.State,
    selected: gr.Dropdown,
    status: gr.HTML,
    then: tuple | None = None,
    then_bulk: tuple | None = None,
) -> gr.Dropdown:
    """One group per strategy (tick to use, knobs below), the embedding model, a Process
    button for the selected document (enabled only while one is selected) and a bulk-load
    button for every document, both writing to status; `then` is (function, inputs,
    outputs) to run after a processing or bulk load that succeeded, `then_bulk` another
    one after a bulk load. Returns the embedding-model dropdown, whose choices the page fills."""
    # Filled on load from the chunker's catalog (the page's load); empty means the configured default.
    model = gr.Dropdown(
        label=f"Embedding model (empty = the default, {gateway.settings.embedding_model})",
        choices=[],
        allow_custom_value=True,
        elem_id="process-embedding-model",
    )

    # The form is drawn again only when the chunker's catalog changes (the page's load), never as
    # a document is chosen: a drawing that arrives while a box is being ticked takes the tick away
    # (ADR 0160). So the buttons are made once, shown under the form once there are strategies to
    # run, and a choice of document only enables Process.
    with gr.Row(visible=False, render=False) as buttons:
        process_button = gr.Button("Process", variant="primary", elem_id="process-button", interactive=False)
        bulk_button = gr.Button("Process every document (bulk load)", elem_id="bulk-button")

    @gr.render(inputs=[forms], **RENDER_ONE_AT_A_TIME)
    def draw(strategy_forms: list[knobs.StrategyForm]):
        if not strategy_forms:
            gr.Markdown("No strategies loaded yet (the chunker's list appears here).")
            return
        groups = [_Group(form, *_strategy_group(form)) for form in strategy_forms]
        # Shown while a ticked knob is below its sensible minimum (ADR 0089); off, the new sets
        # are indexed beside the active ones.
        anyway = gr.Checkbox(
            label="Make the new sets active anyway",
            info="A value above is below its sensible minimum: without this tick, processing indexes the "
            "new sets beside the active ones, which queries keep searching.",
            value=False,
            visible=False,
            elem_id="process-activate-anyway",
            key="process-activate-anyway",
            interactive=True,
            preserved_by_key=["value", "visible"],
        )
        form = ProcessForm(gateway, groups, selected, model, anyway, status)
        # A field's notes follow what is typed, and stay until the value is fixed.
        gr.on(
            [c.change for group in groups for c in (group.use, *group.inputs)],
            form.check_fields,
            inputs=form.inputs,
            outputs=form.notes,
            show_progress="hidden",
            trigger_mode="always_last",
            key="check-knobs",
        )
        # Keyed: drawn again, the handler keeps its id, so a page that still shows the last drawing calls it.
        # The status says how far each strategy is: no progress overlay drawn over it.
        processed = process_button.click(
            form.run, inputs=form.inputs, outputs=form.outputs, key="process", show_progress="minimal"
        )
        loaded = bulk_button.click(
            form.run_bulk, inputs=form.inputs, outputs=form.outputs, key="bulk", show_progress="minimal"
        )
        if then is not None:
            processed.success(then[0], inputs=then[1], outputs=then[2], key="process-then")
            loaded.success(then[0], inputs=then[1], outputs=then[2], key="bulk-then")
        if then_bulk is not None:
            loaded.success(then_bulk[0], inputs=then_bulk[1], outputs=then_bulk[2], key="bulk-then-list")

    buttons.render()
    forms.change(lambda strategy_forms: gr.update(visible=bool(strategy_forms)), forms, buttons, show_progress="hidden")
    selected.change(
        lambda document_id: gr.update(interactive=bool(document_id)),
        inputs=selected,
        outputs=process_button,
        show_progress="hidden",
    )
    return model
