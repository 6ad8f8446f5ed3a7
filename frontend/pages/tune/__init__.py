"""Find the best configuration (issue 29, ADR 0116): a budgeted tuning study on your documents
and questions. The form (documents or a collection, a question set, the objective, the budget)
starts the study in the evaluator; while it runs the page shows the trials so far, the best so
far and the Pareto plot filling in, and Cancel stops it (it resumes from its stored trials).
The result says why the winner won (its scores on the confirmation questions beside the
baseline and the static recommendation, per document), and offers "make active", "copy as
code" and opening the study in Compare.

The form's values become a study in `study_form.py`, the plot's data in `trials_plot.py`,
the result's actions in `result.py`; this module draws the form and follows the stream."""

from __future__ import annotations

import gradio as gr

from chunklab.client import ChunkLab, ClientError
from chunklab_app import recommended
from frontend.errors import said_as_info, said_in_place, told_as_sentence, user_error
from frontend.forms.pickers import document_dropdown_update, question_set_update
from frontend.pages.tune import result, study_form
from frontend.pages.tune.following import cancelled, follow_study, started
from frontend.pages.tune.trials_plot import COLOURS, COLUMNS
from frontend.views import plot_section

INTRO = (
    "### Find the best configuration\n"
    "Say which documents and questions, what *best* means and how long to search. The search tries "
    "strategies, their knobs and the retrieval modes on a seeded half of your questions, starting from "
    f"{recommended.summary()}; the winner is then scored on the other half, beside that recommendation and "
    f"the {recommended.BASELINE} baseline, so you see whether it really is better on questions it was not chosen on."
)


def _form(gateway: ChunkLab):
    gr.Markdown("#### 1. Documents and questions")
    with gr.Row(equal_height=True):
        question_set = gr.Dropdown(label="Question set", choices=[], scale=3, elem_id="tune-question-set")
        refresh = gr.Button("↻", scale=0, min_width=40, elem_id="tune-refresh")
    with gr.Row():
        documents = gr.Dropdown(
            label="Documents (empty = those the questions are about)",
            choices=[],
            multiselect=True,
            scale=3,
            elem_id="tune-documents",
        )
        collection = gr.Textbox(label="or a collection", placeholder="its name", scale=1, elem_id="tune-collection")
    gr.Markdown("#### 2. What best means, and the budget")
    with gr.Row():
        objective = gr.Dropdown(
            label="Objective",
            choices=list(study_form.OBJECTIVES),
            value=study_form.DEFAULT_OBJECTIVE,
            scale=2,
            elem_id="tune-objective",
        )
        max_tokens = gr.Number(
            label="at most tokens per question (0 = no cap)",
            value=study_form.DEFAULT_MAX_TOKENS,
            precision=0,
            elem_id="tune-max-tokens",
        )
        min_recall = gr.Number(
            label="recall at least (%)",
            value=study_form.DEFAULT_MIN_RECALL,
            visible=False,
            elem_id="tune-min-recall",
        )
    with gr.Row():
        minutes = gr.Number(label="minutes at most", value=study_form.DEFAULT_MINUTES, elem_id="tune-minutes")
        trials = gr.Number(label="trials at most", value=study_form.DEFAULT_TRIALS, precision=0, elem_id="tune-trials")
        seed = gr.Number(label="seed (the split and the search)", value=0, precision=0, elem_id="tune-seed")
    with gr.Accordion("What to search (default: every strategy that needs no LLM)", open=False):
        strategies = gr.Dropdown(
            label="Only these strategies (empty = the default)",
            choices=[],
            multiselect=True,
            elem_id="tune-strategies",
        )
        name = gr.Textbox(label="Study name (optional)", elem_id="tune-name")
    objective.change(
        lambda chosen: gr.update(visible=study_form.OBJECTIVES.get(chosen) == study_form.IOU_AT_RECALL),
        inputs=objective,
        outputs=min_recall,
        show_progress="hidden",
    )

    def choices(current_set, current_documents):
        with told_as_sentence():
            return question_set_update(gateway, current_set), document_dropdown_update(gateway, current_documents or [])

    refresh.click(choices, inputs=[question_set, documents], outputs=[question_set, documents])
    question_set.focus(
        lambda current: question_set_update(gateway, current),
        inputs=question_set,
        outputs=question_set,
        show_progress="hidden",
    )
    fields = [
        question_set,
        documents,
        collection,
        objective,
        max_tokens,
        min_recall,
        minutes,
        trials,
        strategies,
        seed,
        name,
    ]
    return fields, strategies


def build(
    gateway: ChunkLab, compare_request: gr.State | None = None, tabs: gr.Tabs | None = None, opened=None
) -> gr.Blocks:
    """`opened`: the event of the tab being opened (frontend/app.py), when the page reads the
    stack (ADR 0165); without one, when the page loads."""
    with gr.Blocks() as page:
        gr.Markdown(INTRO, elem_id="tune-intro")
        fields, strategies = _form(gateway)
        with gr.Row():
            start = gr.Button("Find the best configuration", variant="primary", elem_id="tune-start")
            cancel = gr.Button("Cancel", variant="stop", interactive=False, elem_id="tune-cancel")
            resume = gr.Button("Resume", interactive=False, elem_id="tune-resume")
        study_id = gr.State("")
        status = gr.HTML(elem_id="tune-status")
        plot = gr.ScatterPlot(
            x=COLUMNS[1],
            y=COLUMNS[2],
            color=COLUMNS[5],
            color_map=COLOURS,
            color_title="",
            tooltip="all",
            title="Trials so far: recall against tokens sent",
            y_lim=[0, 105],  # a point at 100% is drawn whole, not cut by the frame
            y_axis_format=plot_section.AXIS,
            x_axis_format=plot_section.AXIS,
            visible=False,
            elem_id="tune-plot",
        )
        summary = gr.HTML(elem_id="tune-result")
        actions = result.actions_section(gateway, study_id, summary, compare_request, tabs)
        outputs = [status, plot, summary, study_id, cancel, resume, actions.box]

        @said_in_place(outputs=len(outputs))
        def run(*values, progress=gr.Progress()):
            try:
                request = study_form.study_request(**dict(zip(study_form.FIELDS, values, strict=True)))
            except ValueError as exc:
                raise user_error(str(exc)) from None
            yield from follow_study(gateway, started(gateway, request), progress)

        @said_in_place(outputs=len(outputs))
        def go_on(current: str, progress=gr.Progress()):
            if not current:
                raise user_error("No study to resume.")
            yield from follow_study(gateway, gateway.resume_experiment(current), progress)

        # A study goes on in the evaluator if the page is closed; the status says how far it is.
        start.click(run, inputs=fields, outputs=outputs, concurrency_limit=None, show_progress="minimal")
        resume.click(go_on, inputs=study_id, outputs=outputs, concurrency_limit=None, show_progress="minimal")

        @said_in_place(outputs=1)
        def stop(current: str):
            yield from cancelled(gateway, current)

        cancel.click(stop, inputs=study_id, outputs=status, concurrency_limit=None)

        def loaded(current_set, current_documents):
            try:
                names = [
                    (f"{info.name} (needs an LLM)" if info.requires_llm else info.name, info.name)
                    for info in gateway.list_strategies()
                ]
                return (
                    question_set_update(gateway, current_set),
                    document_dropdown_update(gateway, current_documents or []),
                    gr.update(choices=names),
                )
            except ClientError as exc:
                return said_as_info(exc), gr.update(), gr.update()
            except gr.Error:
                return gr.update(), gr.update(), gr.update()

        (opened or page.load)(
            loaded, inputs=fields[:2], outputs=[fields[0], fields[1], strategies], show_progress="hidden"
        )
    return page
