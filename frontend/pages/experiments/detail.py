"""The Experiments page's list and detail view: the experiments with their `±P/N`
neighbours badge and embedding model, and one of them opened (its summary and plots, one
question of one run in detail: answer, judge reasons, expansion tree), resumed, cancelled,
or watched while it runs."""

from __future__ import annotations

from dataclasses import dataclass

import gradio as gr

from chunklab import experiment_state
from chunklab.client import ChunkLab, ClientError
from chunklab.v1 import evaluator_pb2
from chunklab.views.metric_format import MetricFormat
from frontend.errors import said_as_info, said_in_place, told_as_sentence, told_html, user_error
from frontend.forms import export
from frontend.pages.experiments.experiment_form import follow_experiment
from frontend.views import experiments_html, plot_section
from frontend.views.formatting import message_html

WATCH_S = 2.0  # how often an opened experiment is read while it is queued or running


def show_plots(gateway: ChunkLab, experiment_id: str | None) -> list:
    """The chosen experiment's plots (recall against tokens, means with intervals, wins per pair)."""
    if not experiment_id:
        return plot_section.updates([], [], MetricFormat([]))
    with told_as_sentence():
        experiment = gateway.get_experiment(experiment_id, without_results=True)
        metrics = MetricFormat(gateway.list_metrics())
    return plot_section.updates([experiment], list(experiment.verdict.pairs), metrics)


def action_updates(state: int | None) -> tuple:
    """Resume and Cancel enabled where the evaluator accepts them (chunklab.experiment_state:
    Resume for an interrupted, failed or partial one (retrying its failed runs), Cancel for a queued or running one, as
    its stored state says); both off without one."""
    if state is None:
        return gr.update(interactive=False), gr.update(interactive=False)
    return (
        gr.update(interactive=experiment_state.resumable(state)),
        gr.update(interactive=experiment_state.cancellable(state)),
    )


def experiment_actions(gateway: ChunkLab, experiment_id: str | None) -> tuple:
    """action_updates for the chosen experiment's stored state (both off when it cannot be read)."""
    if not experiment_id:
        return action_updates(None)
    try:
        return action_updates(gateway.get_experiment(experiment_id, without_results=True).state)
    except ClientError:
        return action_updates(None)


@dataclass(frozen=True)
class DetailView:
    """The list's and the detail view's components."""

    refresh: gr.Button
    table: gr.HTML
    experiment: gr.Dropdown
    resume: gr.Button
    cancel: gr.Button
    run: gr.Dropdown
    question: gr.Dropdown
    summary: gr.HTML
    plots: plot_section.ResultPlots
    question_detail: gr.HTML
    run_documents: gr.HTML


def detail_section(gateway: ChunkLab) -> DetailView:
    gr.Markdown("### Experiments")
    with gr.Row(equal_height=True):
        refresh = gr.Button("Refresh", scale=0, elem_id="experiments-refresh")
    table = gr.HTML(elem_id="experiments-table")

    gr.Markdown("### Detail")
    # The experiment, then its run and question, each on a row wide enough for its labels
    # ("name · state · ±1/1 · model · id", a run key with its knobs, a question).
    with gr.Row(equal_height=True):
        experiment = gr.Dropdown(label="Experiment", choices=[], scale=4, elem_id="detail-experiment")
        resume = gr.Button("Resume", scale=0, min_width=90, elem_id="detail-resume", interactive=False)
        cancel = gr.Button("Cancel", scale=0, min_width=90, variant="stop", elem_id="detail-cancel", interactive=False)
    with gr.Row():
        run = gr.Dropdown(label="Run", choices=[], scale=2, elem_id="detail-run")
        question = gr.Dropdown(label="Question", choices=[], scale=3, elem_id="detail-question")
    summary = gr.HTML(elem_id="detail-summary")
    plots = plot_section.section("experiment")
    export.winner_section(gateway, experiment)
    run_documents = gr.HTML(elem_id="run-documents")
    question_detail = gr.HTML(elem_id="question-detail")
    return DetailView(
        refresh, table, experiment, resume, cancel, run, question, summary, plots, question_detail, run_documents
    )


class DetailHandlers:
    """The list's and the detail view's handlers for one gateway."""

    def __init__(self, gateway: ChunkLab):
        self.gateway = gateway

    def listing(self, select: str | None):
        try:
            experiments = self.gateway.list_experiments()
        except ClientError as exc:  # the table says so; the dropdown keeps its choice
            return told_html(exc), said_as_info(exc)
        choices = experiments_html.experiment_choices(experiments)
        ids = {value for _, value in choices}
        return experiments_html.experiments_table_html(experiments), gr.update(
            choices=choices, value=select if select in ids else (choices[0][1] if choices else None)
        )

    def open_experiment(self, experiment_id: str | None):
        """The summary, the run choices, and Resume and Cancel as the experiment's state allows."""
        if not experiment_id:
            return "", gr.update(choices=[], value=None), *action_updates(None)
        try:
            experiment = self.gateway.get_experiment(experiment_id, without_results=True)
            metrics = MetricFormat(self.gateway.list_metrics())
            question_set = next(
                (
                    s
                    for s in self.gateway.list_question_sets()
                    if s.question_set_id == experiment.config.question_set_id
                ),
                None,
            )
        except ClientError as exc:
            return told_html(exc), gr.update(choices=[], value=None), *action_updates(None)
        keys = [run.run_key for run in experiment.runs]
        return (
            experiments_html.experiment_summary_html(experiment, metrics, question_set),
            gr.update(choices=keys, value=keys[0] if keys else None),
            *action_updates(experiment.state),
        )

    def open_run(self, experiment_id: str | None, run_key: str | None):
        if not experiment_id or not run_key:
            return b"", gr.update(choices=[], value=None)
        with told_as_sentence():
            experiment = self.gateway.get_experiment(experiment_id, run_key=run_key)
        choices = experiments_html.question_choices(experiment.results)
        return experiment.SerializeToString(), gr.update(choices=choices, value=choices[0][1] if choices else None)

    @said_in_place(outputs=1)
    def run_documents(self, experiment_id: str | None, run_key: str | None):
        """The chosen run's figures per document and collection (ADR 0118)."""
        if not experiment_id or not run_key:
            return ""
        with told_as_sentence():
            experiment = self.gateway.get_experiment(experiment_id, without_results=True)
        run = next((r for r in experiment.runs if r.run_key == run_key), None)
        return experiments_html.run_documents_html(run) if run is not None else ""

    @said_in_place(outputs=1)
    def open_question(self, serialized: bytes, question_id: str | None):
        if not serialized or not question_id:
            return ""
        experiment = evaluator_pb2.Experiment.FromString(serialized)
        result = next((r for r in experiment.results if r.question_id == question_id), None)
        if result is None:
            raise user_error("That question is not in this run's results; pick the run again.")
        with told_as_sentence():
            metrics = MetricFormat(self.gateway.list_metrics())
        return experiments_html.question_detail_html(result, metrics)

    def do_resume(self, experiment_id: str | None, answer_key: str, judge_key: str, progress=gr.Progress()):
        """Continues the chosen experiment after a restart interrupted it (the evaluator
        refuses any other with a reason); the API keys come from section 2."""
        if not experiment_id:
            yield (
                message_html("Choose the interrupted, failed or partial experiment to resume first.", "error"),
                gr.skip(),
            )
            return
        yield from follow_experiment(
            self.gateway, self.gateway.resume_experiment(experiment_id, answer_key or "", judge_key or ""), progress
        )

    def actions(self, experiment_id: str | None):
        return experiment_actions(self.gateway, experiment_id)

    def do_cancel(self, experiment_id: str | None):
        if not experiment_id:
            return message_html("Choose the queued or running experiment to cancel first.", "error"), gr.skip()
        try:
            answer = self.gateway.cancel_experiment(experiment_id)
            experiments = self.gateway.list_experiments()
        except ClientError as exc:
            return told_html(exc), gr.skip()
        name = next((x.config.name for x in experiments if x.experiment_id == experiment_id), "") or experiment_id
        said = (
            f"{name} is stopped: no evaluator was running it any more. Resume continues it."
            if experiment_state.resumable(answer.state)
            else f"Cancelling {name}: it stops before its next question; Resume continues it."
        )
        message = message_html(said, "ok")
        return message, experiments_html.experiments_table_html(experiments)

    def running(self, experiment_id: str | None):
        try:
            experiment = self.gateway.get_experiment(experiment_id, without_results=True) if experiment_id else None
        except ClientError:
            experiment = None
        return experiment if experiment is not None and experiment_state.cancellable(experiment.state) else None

    def watch_stop(self, experiment_id: str | None):
        if self.running(experiment_id) is not None:
            return self.open_experiment(experiment_id)[0], *[gr.skip()] * 8
        summary, runs, *buttons = self.open_experiment(experiment_id)
        # The run's questions are read again too: the run shown mid-run stays chosen, so no change
        # of the Run list reads them, and they would stay those done when it was opened; the list
        # and the Experiment choice then say its final state.
        return (
            summary,
            runs,
            *buttons,
            gr.Timer(active=False),
            *self.open_run(experiment_id, runs.get("value")),
            *self.listing(experiment_id),
        )


def wire_actions(
    handlers: DetailHandlers,
    view: DetailView,
    keys: tuple[gr.Textbox, gr.Textbox],
    created: gr.State,
    run_results: gr.State,
) -> None:
    """Resume (with the answer and judge keys of section 2), Cancel, and the watch of a
    queued or running experiment."""
    resume, cancel, experiment = view.resume, view.cancel, view.experiment
    resume.click(
        lambda: action_updates(evaluator_pb2.EXPERIMENT_STATE_RUNNING),
        outputs=[resume, cancel],
        show_progress="hidden",
    ).then(
        handlers.do_resume,
        inputs=[experiment, *keys],
        outputs=[view.summary, created],
        concurrency_limit=None,
        show_progress="minimal",  # the summary says how far it is; an overlay would hide it
    ).then(handlers.actions, inputs=experiment, outputs=[resume, cancel], show_progress="hidden")

    # An opened experiment that is queued or running is read again every WATCH_S: its summary
    # shows its progress (the document being processed, the questions done), also on a page
    # opened mid-run; once it has stopped (finished, or after a Cancel) the final summary shows.
    watching = gr.Timer(WATCH_S, active=False)
    cancel.click(handlers.do_cancel, inputs=experiment, outputs=[view.summary, view.table]).then(
        lambda: (gr.update(interactive=False), gr.Timer(active=True)),
        outputs=[cancel, watching],
        show_progress="hidden",
    )
    watching.tick(
        handlers.watch_stop,
        inputs=experiment,
        outputs=[
            view.summary,
            view.run,
            resume,
            cancel,
            watching,
            run_results,
            view.question,
            view.table,
            experiment,
        ],
        show_progress="hidden",
    ).then(  # the chosen run's documents as its questions finish
        handlers.run_documents, inputs=[experiment, view.run], outputs=view.run_documents, show_progress="hidden"
    )
    experiment.change(
        lambda experiment_id: gr.Timer(active=handlers.running(experiment_id) is not None),
        inputs=experiment,
        outputs=watching,
        show_progress="hidden",
    )


def wire_detail(gateway: ChunkLab, handlers: DetailHandlers, view: DetailView, run_results: gr.State) -> None:
    """The experiment opens its summary, plots and runs; a run its questions; a question its detail."""
    view.experiment.change(
        handlers.open_experiment, inputs=view.experiment, outputs=[view.summary, view.run, view.resume, view.cancel]
    )
    view.experiment.change(
        lambda experiment_id: show_plots(gateway, experiment_id),
        inputs=view.experiment,
        outputs=view.plots.outputs,
        show_progress="hidden",
    )
    view.run.change(handlers.open_run, inputs=[view.experiment, view.run], outputs=[run_results, view.question])
    view.run.change(handlers.run_documents, inputs=[view.experiment, view.run], outputs=view.run_documents)
    view.question.change(handlers.open_question, inputs=[run_results, view.question], outputs=view.question_detail)
