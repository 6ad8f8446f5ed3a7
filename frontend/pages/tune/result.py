"""The study's result and what to do with it (ADR 0116): why the winner won (its scores on the
confirmation questions beside the baseline and the recommendation, per document, every trial),
"make active" (the winner's index set becomes each document's active one), "copy as code" (the
export that exists, chunklab_app/export.py) and "open in Compare"."""

from __future__ import annotations

from dataclasses import dataclass

import gradio as gr

from chunklab.client import ChunkLab
from chunklab.v1 import evaluator_pb2
from chunklab.views import study_view
from chunklab.views.metric_format import MetricFormat, plural
from chunklab.views.render import render
from chunklab_app import export, tuning
from frontend.errors import said_in_place, told_as_sentence, user_error
from frontend.forms.export import CODE_TABS
from frontend.views.formatting import message_html


def result_html(experiment: evaluator_pb2.Experiment, metrics: MetricFormat) -> str:
    view = study_view.result_view(experiment, metrics)
    run = next((r for r in experiment.runs if r.run_key == view["take_home"]), None) if view["take_home"] else None
    return render(
        "frontend",
        "tune_result.html.j2",
        **view,
        documents=study_view.document_rows(run, metrics),
        trial_rows=study_view.trial_rows(experiment, metrics),
    )


FINISHED = (evaluator_pb2.EXPERIMENT_STATE_SUCCEEDED, evaluator_pb2.EXPERIMENT_STATE_PARTIAL)


def compare_pair(experiments: list[evaluator_pb2.Experiment], study: evaluator_pb2.Experiment) -> list[str]:
    """The study and the newest other finished experiment on its question set: Compare's choice."""
    others = [
        e.experiment_id
        for e in experiments
        if e.experiment_id != study.experiment_id
        and e.config.question_set_id == study.config.question_set_id
        and e.state in FINISHED
    ]
    return [study.experiment_id, *others[:1]]


@dataclass
class Actions:
    box: gr.Group


def actions_section(gateway: ChunkLab, study_id: gr.State, shown: gr.HTML, compare_request, tabs) -> Actions:
    """Below the result (`shown`): its code is filled whenever a result is shown."""
    with gr.Group(visible=False, elem_id="tune-actions") as box:
        with gr.Row():
            activate = gr.Button("Make it active", variant="primary", elem_id="tune-make-active")
            compare = gr.Button("Open in Compare", elem_id="tune-open-compare")
        said = gr.HTML(elem_id="tune-action-status")
        with gr.Accordion("Copy its settings as code", open=False, elem_id="tune-code"):
            # One box per library, one under the other: nested tabs here confuse the page's own tabs.
            boxes = [
                gr.Code(language="python", interactive=False, label=f"{label} code", elem_id=f"tune-code-{library}")
                for label, library in CODE_TABS
            ]

    def stored(current: str) -> evaluator_pb2.Experiment:
        if not current:
            raise user_error("Run a study first.")
        with told_as_sentence():
            return gateway.get_experiment(current, without_results=True)

    @said_in_place(outputs=1)
    def make_active(current: str):
        experiment = stored(current)
        with told_as_sentence():
            try:
                documents = tuning.make_active(gateway, experiment)
            except tuning.NothingToActivate as exc:
                raise user_error(str(exc)) from None
        run = tuning.winner_run(experiment)
        return message_html(
            f"{run.run_key} is now the active index set of {plural(len(documents), 'document')}: the Query page "
            "searches it. Its retrieval settings (hybrid, top_k, neighbours) are in the code below.",
            "ok",
        )

    def code(current: str):
        if not current:
            return ("",) * len(boxes)
        experiment = stored(current)
        try:
            run = tuning.winner_run(experiment)
        except tuning.NothingToActivate:
            return ("",) * len(boxes)
        snippets = export.snippets(run.spec, run.config_id, run.retrieval)
        return tuple(snippets[library] for _, library in CODE_TABS)

    activate.click(make_active, inputs=study_id, outputs=said)
    shown.change(code, inputs=study_id, outputs=boxes, show_progress="hidden")
    shown.change(lambda: "", outputs=said, show_progress="hidden")
    if compare_request is not None and tabs is not None:

        def open_compare(current: str):
            experiment = stored(current)
            with told_as_sentence():
                pair = compare_pair(gateway.list_experiments(), experiment)
            return pair, gr.Tabs(selected="compare")

        compare.click(open_compare, inputs=study_id, outputs=[compare_request, tabs])
    return Actions(box)
