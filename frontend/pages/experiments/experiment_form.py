"""The Experiments page's create section: a question set, strategies with knob
grids, retrieval and model settings, a dry run and a run with progress.

The grids are drawn from the chunker's KnobSpecs (query-time knobs such as
sentence_window's window included, since an experiment may vary them); the
evaluator validates the whole config and, for a dry run, estimates calls,
tokens and cost without calling or storing anything.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass

import gradio as gr

from chunklab.client import ChunkLab, ClientError
from chunklab.v1 import evaluator_pb2
from chunklab.views.metric_format import MetricFormat
from chunklab_app import recommended
from frontend.errors import said_in_place, told_as_sentence, told_html, user_error
from frontend.forms import experiment_config, knobs
from frontend.forms.knobs import RENDER_ONE_AT_A_TIME
from frontend.forms.pickers import question_set_update
from frontend.forms.rerank import rerank_inputs, rerank_options
from frontend.forms.retrieval import RetrievalInputs, retrieval_inputs, row_values
from frontend.pages.questions import question_sets
from frontend.views import experiments_html
from frontend.views.formatting import message_html


@dataclass
class RunSettings:
    """The form's fixed inputs (outside the drawn grid), handed to the render function."""

    question_set: gr.Dropdown
    name: gr.Textbox
    retrieval: RetrievalInputs
    embedding_model: gr.Dropdown
    retrieval_only: gr.Checkbox
    documents: gr.Dropdown
    answer: tuple[gr.Textbox, gr.Textbox, gr.Textbox]
    judge: tuple[gr.Textbox, gr.Textbox, gr.Textbox]
    validation: tuple[gr.Dropdown, gr.Number]
    rerank: tuple[gr.Dropdown, gr.Number, gr.Textbox, gr.Textbox]

    def components(self) -> set:
        return {
            self.question_set,
            self.name,
            *self.retrieval.inputs,
            self.embedding_model,
            self.retrieval_only,
            self.documents,
            *self.answer,
            *self.judge,
            *self.validation,
            *self.rerank,
        }

    def config(self, values: dict, grids: list[evaluator_pb2.StrategyGrid]) -> evaluator_pb2.ExperimentConfig:
        """The ExperimentConfig for the submitted values; ValueError says what is missing or wrong."""
        row = row_values([values[box] for box in self.retrieval.inputs])
        return experiment_config.experiment_config(
            name=values[self.name] or "",
            question_set_id=values[self.question_set] or "",
            grids=grids,
            **row,
            embedding_model=values[self.embedding_model] or "",
            retrieval_only=bool(values[self.retrieval_only]),
            answer_model=experiment_config.endpoint(*(values[c] for c in self.answer)),
            judge_model=experiment_config.endpoint(*(values[c] for c in self.judge)),
            document_ids=values[self.documents] or [],
            validation=experiment_config.validation(values[self.validation[0]], values[self.validation[1]]),
            rerank=rerank_options(*(values[c] for c in self.rerank), top_k=row["top_k"]),
        )


def follow_experiment(gateway: ChunkLab, events: Iterator[evaluator_pb2.ExperimentEvent], progress):
    """Shows a RunExperiment stream (a new run or a resumed one) as it goes: yields
    (status HTML, gr.skip()) per event, and last (status HTML, the experiment id).
    The gateway's streams call nothing until read, so their errors surface here, and a
    refusal (say, Resume on a finished experiment) replaces the "Running…" line with its
    sentence (last (sentence HTML, gr.skip()))."""
    try:
        tracker = experiments_html.ExperimentTracker(MetricFormat(gateway.list_metrics()))
        events = iter(events)
        first = next(events, None)  # a refused stream fails here, before any "Running…" line
        for event in itertools.chain([first] if first is not None else [], events):
            tracker.add(event)
            progress(tracker.fraction(), desc=tracker.description())
            yield tracker.html(), gr.skip()
    except ClientError as exc:
        yield told_html(exc), gr.skip()
        return
    if tracker.experiment is None:
        yield (
            message_html("The evaluator ended the experiment stream without the experiment; see its log.", "error"),
            gr.skip(),
        )
        return
    yield tracker.html(), tracker.experiment.experiment_id


def question_set_section(gateway: ChunkLab) -> gr.Dropdown:
    """Pick a stored set or import a JSONL/CSV file; returns the set dropdown."""
    gr.Markdown("### 1. Question set")
    with gr.Row(equal_height=True):
        chosen = gr.Dropdown(label="Question set", choices=[], scale=3, elem_id="qs-select")
        refresh = gr.Button("↻", scale=0, min_width=40, elem_id="qs-refresh")
        delete = gr.Button("Delete", scale=0, min_width=80, variant="stop", elem_id="qs-delete")
    with gr.Accordion("Import a question set (JSONL or CSV)", open=True):
        with gr.Row():
            file = gr.File(label="Questions file", file_types=question_sets.QUESTION_TYPES, elem_id="qs-file")
            with gr.Column():
                name = gr.Textbox(label="Name (optional)", placeholder="the file name", elem_id="qs-name")
                mapping = gr.Textbox(
                    label="Corpus ids to document ids (optional)",
                    lines=2,
                    elem_id="qs-mapping",
                    placeholder="corpus_id=document_id, one a line; unmapped ids match document names",
                )
                lenient = gr.Checkbox(
                    label="Lenient: import the located questions, leave out the others",
                    value=False,
                    elem_id="qs-lenient",
                )
                import_button = gr.Button("Import", elem_id="qs-import")
        gr.Markdown(
            "Each line (JSONL) or row (CSV) has a `question`, optionally an `expected_answer` and `references`: "
            '`[{"document": "name or id", "content": "the exact excerpt"}]` or with `start_char`/`end_char`.'
        )
    status = gr.HTML(elem_id="qs-status")

    def choices(current: str | None):
        return question_set_update(gateway, current)

    @said_in_place(outputs=2)
    def do_import(path: str | None, set_name: str, mapping_text: str, keep_located: bool):
        """As the Question sets page imports (lenient: the left-out questions' report below the sentence)."""
        message, report, set_id = question_sets.import_file(gateway, path, set_name, mapping_text, keep_located)
        return message + report, choices(set_id)

    @said_in_place(outputs=2)
    def do_delete(current: str | None):
        if not current:
            raise user_error("Choose the question set to delete first.")
        with told_as_sentence():
            names = {s.question_set_id: s.name for s in gateway.list_question_sets()}
            gateway.delete_question_set(current)
        message = message_html(f"Deleted the question set {names.get(current, current)}.", "ok")
        return message, choices(None)

    refresh.click(choices, inputs=chosen, outputs=chosen)
    import_button.click(do_import, inputs=[file, name, mapping, lenient], outputs=[status, chosen])
    delete.click(do_delete, inputs=chosen, outputs=[status, chosen])
    chosen.focus(choices, inputs=chosen, outputs=chosen, show_progress="hidden")
    return chosen


def settings_section(question_set: gr.Dropdown) -> RunSettings:
    gr.Markdown("### 2. Retrieval and models")
    with gr.Row():
        # Bounds come from the retriever (GetRetrievalLimits) when the page loads.
        retrieval = retrieval_inputs("exp")
    with gr.Row():
        embedding = gr.Dropdown(
            label="Embedding model (empty = default)",
            choices=[],
            allow_custom_value=True,
            elem_id="exp-embedding-model",
        )
        documents = gr.Dropdown(
            label="Only these documents (empty = all)", choices=[], multiselect=True, elem_id="exp-documents"
        )
        retrieval_only = gr.Checkbox(label="retrieval only (no answers, no judges)", elem_id="exp-retrieval-only")
    rerank = rerank_inputs("exp")
    with gr.Accordion("Answer and judge models (optional)", open=False):
        gr.Markdown(
            "Empty fields use the stack's configured model. With none configured, answers are extractive and "
            'judge scores are recorded as not measured. Model "extractive" forces extractive answers; judge '
            'model "none" switches the judges off. Keys are used for the run only and never stored.'
        )
        with gr.Row():
            answer = (
                gr.Textbox(label="Answer base URL", elem_id="exp-answer-base-url"),
                gr.Textbox(label="Answer model", elem_id="exp-answer-model"),
                gr.Textbox(label="Answer API key", type="password", elem_id="exp-answer-api-key"),
            )
        with gr.Row():
            judge = (
                gr.Textbox(label="Judge base URL", elem_id="exp-judge-base-url"),
                gr.Textbox(label="Judge model", elem_id="exp-judge-model"),
                gr.Textbox(label="Judge API key", type="password", elem_id="exp-judge-api-key"),
            )
    with gr.Row():
        mode = gr.Dropdown(
            label="How the winner is checked",
            choices=list(experiment_config.VALIDATIONS),
            value=next(iter(experiment_config.VALIDATIONS)),
            elem_id="exp-validation",
            info="every run answers every question; this picks which questions choose the winner",
        )
        seed = gr.Number(label="split seed", value=0, precision=0, elem_id="exp-validation-seed")
    name = gr.Textbox(label="Experiment name (optional)", elem_id="exp-name")
    return RunSettings(
        question_set=question_set,
        name=name,
        retrieval=retrieval,
        embedding_model=embedding,
        retrieval_only=retrieval_only,
        documents=documents,
        answer=answer,
        judge=judge,
        validation=(mode, seed),
        rerank=rerank,
    )


def grid_section(gateway: ChunkLab, forms: gr.State, settings: RunSettings, status: gr.HTML, created: gr.State) -> None:
    """Per strategy a tick box and one 'values to try' field per knob, then Dry run and Run.

    A finished run puts its experiment id in `created`, which the page watches to refresh its list.
    """

    # Drawn when the strategies are read (on opening the tab), not at the page's load as well:
    # nothing to draw behind another tab (ADR 0165).
    @gr.render(inputs=forms, triggers=[forms.change], **RENDER_ONE_AT_A_TIME)
    def draw(strategy_forms: list[knobs.StrategyForm]):
        gr.Markdown(
            f"Ticked at first: {recommended.summary()}, and {knobs.BASELINE}, the baseline to compare it against.",
            elem_id="exp-recommended",
        )
        chosen = []
        for form in strategy_forms:
            # Folded except for those ticked at first: ten strategies' grids at once make a very long page.
            ticked = knobs.ticked_first(form.name)
            with gr.Accordion(form.name, open=ticked, elem_id=f"grid-{form.name}"):
                note = " Needs an LLM endpoint." if form.requires_llm else ""
                use = gr.Checkbox(
                    label=f"run {form.name}",
                    value=ticked,
                    info=form.description + note,
                    elem_id=f"exp-use-{form.name}",
                    interactive=True,
                    key=f"exp-use-{form.name}",
                )
                with gr.Row():
                    fields = [
                        gr.Textbox(
                            label=field.name,
                            placeholder=f"default {field.default}",
                            interactive=True,
                            info="values to try, comma-separated",
                            elem_id=f"grid-{form.name}-{field.name}",
                            key=f"grid-{form.name}-{field.name}",
                        )
                        for field in form.fields
                    ]
            chosen.append((form, use, fields))
        with gr.Row():
            dry_button = gr.Button("Dry run (estimate)", elem_id="dry-run-button", key="dry-run-button")
            run_button = gr.Button("Run experiment", variant="primary", elem_id="run-button", key="run-button")

        def config_from(values: dict):
            try:
                grids = [
                    experiment_config.strategy_grid(form, [values[f] for f in fields])
                    for form, use, fields in chosen
                    if values[use]
                ]
                return settings.config(values, grids)
            except ValueError as exc:
                raise user_error(str(exc)) from None

        @said_in_place(outputs=1)
        def dry_run(values: dict):
            config = config_from(values)
            with told_as_sentence():
                tracker = experiments_html.ExperimentTracker(MetricFormat(gateway.list_metrics()))
                for event in gateway.run_experiment(config, dry_run=True):
                    tracker.add(event)
            if tracker.estimate is None:
                raise user_error("The evaluator answered the dry run without an estimate; see its log.")
            return experiments_html.estimate_html(tracker.estimate, tracker.experiment)

        @said_in_place(outputs=2)
        def run(values: dict, progress=gr.Progress()):
            config = config_from(values)
            yield from follow_experiment(gateway, gateway.run_experiment(config), progress)

        inputs = settings.components() | {c for _, use, fields in chosen for c in (use, *fields)}
        # Keyed (ADR 0032): drawn again, the handlers keep their ids, so a page that still shows the
        # last drawing calls them.
        dry_button.click(dry_run, inputs=inputs, outputs=status, key="exp-dry-run")
        # Runs go on in the evaluator if the page is closed; one at a time, so a second one queues.
        # The status line says how far the run is ("56 of 84 …"): no overlay drawn over it.
        run_button.click(
            run,
            inputs=inputs,
            outputs=[status, created],
            concurrency_limit=None,
            key="exp-run",
            show_progress="minimal",
        )
