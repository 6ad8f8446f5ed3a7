"""The Documents page's processing section: strategy forms drawn from the
chunker's KnobSpecs, a run that follows the ProcessDocument stream, and a
bulk load of every document through the chunker's message broker.

Drawn with gr.render so that the chunker alone decides which strategies and
knobs exist; a new strategy needs no UI change.
"""

from __future__ import annotations

from collections.abc import Iterator

import gradio as gr

from chunklab.client import ChunkLab, ClientError
from frontend.errors import told_html
from frontend.forms import knobs
from frontend.forms.knobs import RENDER_ONE_AT_A_TIME
from frontend.views import formatting

# How often a bulk load's progress is asked for.
BULK_POLL_S = 0.5


def knob_input(field: knobs.KnobField, elem_prefix: str = "") -> gr.components.Component:
    """The input for one knob, bounded and defaulted as the chunker describes it.

    elem_prefix keeps element ids unique when two sections draw the same knob.
    """
    # interactive=True: Gradio does not infer it for components drawn inside gr.render.
    # The key keeps the component (its id and what was typed) the same when the render is drawn again.
    elem_id = elem_prefix + field.elem_id
    common = dict(label=field.name, info=field.description or None, elem_id=elem_id, interactive=True, key=elem_id)
    if field.type in ("int", "double"):
        return gr.Number(
            value=field.default,
            precision=0 if field.type == "int" else None,
            minimum=field.minimum,
            maximum=field.maximum,
            step=1 if field.type == "int" else 0.01,
            **common,
        )
    if field.type == "bool":
        return gr.Checkbox(value=bool(field.default), **common)
    if field.type == "choice":
        return gr.Dropdown(choices=list(field.choices), value=field.default, **common)
    return gr.Textbox(value=field.default or "", **common)


def process(
    gateway: ChunkLab, document_id: str, specs: list, embedding_model: str = ""
) -> Iterator[tuple[float, str, str]]:
    """Runs ProcessDocument and yields (fraction done, progress line, status HTML) per event."""
    tracker = formatting.ProcessTracker([spec.name for spec in specs])
    yield 0.0, "starting", tracker.html()
    for event in gateway.process_document(document_id, specs, embedding_model):
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


def _strategy_group(form: knobs.StrategyForm) -> tuple[gr.Checkbox, list]:
    """One strategy's tick box and its knob inputs (inside gr.render: keyed)."""
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
        use.change(
            lambda on: gr.update(visible=on),
            inputs=use,
            outputs=knob_row,
            show_progress="hidden",
            key=f"show-knobs-{form.name}",
        )
    return use, inputs


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
    # Whether a document is selected: the render is drawn again only when that flips
    # (a State's change fires on a new value), its inputs keeping what was typed (keys).
    ready = gr.State(False)
    selected.change(lambda document_id: bool(document_id), inputs=selected, outputs=ready, show_progress="hidden")
    # Filled on load from the chunker's catalog (the page's load); empty means the configured default.
    model = gr.Dropdown(
        label=f"Embedding model (empty = the default, {gateway.settings.embedding_model})",
        choices=[],
        allow_custom_value=True,
        elem_id="process-embedding-model",
    )

    @gr.render(inputs=[forms, ready], **RENDER_ONE_AT_A_TIME)
    def draw(strategy_forms: list[knobs.StrategyForm], document_ready: bool):
        if not strategy_forms:
            gr.Markdown("No strategies loaded yet (the chunker's list appears here).")
            return
        chosen: list[tuple[knobs.StrategyForm, gr.Checkbox, list]] = []
        for form in strategy_forms:
            chosen.append((form, *_strategy_group(form)))
        with gr.Row():
            process_button = gr.Button(
                "Process",
                variant="primary",
                elem_id="process-button",
                key="process-button",
                interactive=bool(document_ready),
            )
            bulk_button = gr.Button("Process every document (bulk load)", elem_id="bulk-button", key="bulk-button")

        def chosen_specs(values: dict) -> list:
            """The ticked strategies' specs, their knobs checked here by chunklab.knobs'
            rules (ValueError with the knob's sentence) before any call."""
            specs = [
                knobs.strategy_spec(form, [values[c] for c in inputs]) for form, use, inputs in chosen if values[use]
            ]
            if not specs:
                raise ValueError("Tick at least one strategy to process with.")
            return specs

        def run(values: dict, progress=gr.Progress()):
            document_id = values[selected]
            if not document_id:
                yield refused("Select a document first (upload one or pick it in the list).")
                return
            yield from followed(
                lambda: process(gateway, document_id, chosen_specs(values), values[model] or ""), progress
            )

        def run_bulk(values: dict, progress=gr.Progress()):
            yield from followed(lambda: bulk_load(gateway, chosen_specs(values), values[model] or ""), progress)

        # A set of inputs hands run() one dict keyed by component, whatever the number of knobs.
        all_inputs = {selected, model} | {use for _, use, _ in chosen} | {c for _, _, inputs in chosen for c in inputs}
        # Keyed: drawn again, the handler keeps its id, so a page that still shows the last drawing calls it.
        # The status says how far each strategy is: no progress overlay drawn over it.
        processed = process_button.click(run, inputs=all_inputs, outputs=status, key="process", show_progress="minimal")
        loaded = bulk_button.click(run_bulk, inputs=all_inputs, outputs=status, key="bulk", show_progress="minimal")
        if then is not None:
            processed.success(then[0], inputs=then[1], outputs=then[2], key="process-then")
            loaded.success(then[0], inputs=then[1], outputs=then[2], key="bulk-then")
        if then_bulk is not None:
            loaded.success(then_bulk[0], inputs=then_bulk[1], outputs=then_bulk[2], key="bulk-then-list")

    return model
