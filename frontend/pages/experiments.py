"""Experiments: create one (question set, retrieval and models, strategy grids,
dry run, run with progress), list them with their `±P/N` neighbours badge and
embedding model, and read one question of one run in detail (answer, judge
reasons, expansion tree).

The create section lives in `experiment_form.py`; this module composes it with
the list and the detail view.
"""

from __future__ import annotations

import gradio as gr

from chunklab.client import ChunkLab, ClientError
from chunklab.metric_format import MetricFormat
from chunklab.v1 import evaluator_pb2
from frontend import experiments_html, knobs
from frontend.formatting import message_html
from frontend.pages import experiment_form, export, result_plots
from frontend.pages.common import (
    document_dropdown_update, retrieval_limit_updates, said_as_info, said_in_place, told_as_sentence, told_html,
    user_error,
)


def show_plots(gateway: ChunkLab, experiment_id: str | None) -> list:
    """The chosen experiment's plots (recall against tokens, means with intervals, wins per pair)."""
    if not experiment_id:
        return result_plots.updates([], [], MetricFormat([]))
    with told_as_sentence():
        experiment = gateway.get_experiment(experiment_id, without_results=True)
        metrics = MetricFormat(gateway.list_metrics())
    return result_plots.updates([experiment], list(experiment.verdict.pairs), metrics)


# What the evaluator resumes and what it cancels (EvaluatorService's _resume_plan and cancel_experiment).
RESUMABLE = (evaluator_pb2.EXPERIMENT_STATE_INTERRUPTED, evaluator_pb2.EXPERIMENT_STATE_FAILED)
CANCELLABLE = (evaluator_pb2.EXPERIMENT_STATE_PENDING, evaluator_pb2.EXPERIMENT_STATE_RUNNING)
WATCH_S = 2.0  # how often an opened experiment is read while it is queued or running


def action_updates(state: int | None) -> tuple:
    """Resume and Cancel enabled only where they can act: Resume for an interrupted or
    failed experiment, Cancel for a queued or running one; both off without one."""
    return gr.update(interactive=state in RESUMABLE), gr.update(interactive=state in CANCELLABLE)


def experiment_actions(gateway: ChunkLab, experiment_id: str | None) -> tuple:
    """action_updates for the chosen experiment's stored state (both off when it cannot be read)."""
    if not experiment_id:
        return action_updates(None)
    try:
        return action_updates(gateway.get_experiment(experiment_id, without_results=True).state)
    except ClientError:
        return action_updates(None)


def build(gateway: ChunkLab) -> gr.Blocks:
    with gr.Blocks() as page:
        forms = gr.State([])
        created = gr.State("")
        # The chosen run's results, serialised (an Experiment holding one run's results):
        # picking another question then needs no call.
        run_results = gr.State(b"")

        question_set = experiment_form.question_set_section(gateway)
        settings = experiment_form.settings_section(question_set)
        gr.Markdown("### 3. Strategies and knob grids")
        status = gr.HTML(elem_id="experiment-status", render=False)
        experiment_form.grid_section(gateway, forms, settings, status, created)
        status.render()

        gr.Markdown("### Experiments")
        with gr.Row(equal_height=True):
            refresh = gr.Button("Refresh", scale=0, elem_id="experiments-refresh")
        table = gr.HTML(elem_id="experiments-table")

        gr.Markdown("### Detail")
        # The experiment, then its run and question, each on a row wide enough for its labels
        # ("name · state · ±1/1 · model · id", a run key with its knobs, a question).
        with gr.Row(equal_height=True):
            detail_experiment = gr.Dropdown(label="Experiment", choices=[], scale=4, elem_id="detail-experiment")
            resume = gr.Button("Resume", scale=0, min_width=90, elem_id="detail-resume", interactive=False)
            cancel = gr.Button("Cancel", scale=0, min_width=90, variant="stop", elem_id="detail-cancel",
                               interactive=False)
        with gr.Row():
            detail_run = gr.Dropdown(label="Run", choices=[], scale=2, elem_id="detail-run")
            detail_question = gr.Dropdown(label="Question", choices=[], scale=3, elem_id="detail-question")
        detail_summary = gr.HTML(elem_id="detail-summary")
        plots = result_plots.section("experiment")
        export.winner_section(gateway, detail_experiment)
        question_detail = gr.HTML(elem_id="question-detail")

        def load(current_model: str | None, current_documents: list[str] | None):
            try:
                catalog = gateway.strategy_catalog()
                strategy_forms = knobs.strategy_forms(list(catalog.strategies), include_query_time=True)
                models = gr.update(choices=list(catalog.embedding_models), value=current_model or None)
                message = ""
            except ClientError as exc:
                strategy_forms, models, message = [], gr.update(), told_html(exc)
            try:
                documents = document_dropdown_update(gateway, current_documents or [])
            except ClientError as exc:
                documents, message = said_as_info(exc), message or told_html(exc)
            return strategy_forms, models, documents, message

        def listing(select: str | None):
            try:
                experiments = gateway.list_experiments()
            except ClientError as exc:  # the table says so; the dropdown keeps its choice
                return told_html(exc), said_as_info(exc)
            choices = experiments_html.experiment_choices(experiments)
            ids = {value for _, value in choices}
            return experiments_html.experiments_table_html(experiments), gr.update(
                choices=choices, value=select if select in ids else (choices[0][1] if choices else None)
            )

        def open_experiment(experiment_id: str | None):
            """The summary, the run choices, and Resume and Cancel as the experiment's state allows."""
            if not experiment_id:
                return "", gr.update(choices=[], value=None), *action_updates(None)
            try:
                experiment = gateway.get_experiment(experiment_id, without_results=True)
                metrics = MetricFormat(gateway.list_metrics())
                question_set = next((s for s in gateway.list_question_sets()
                                     if s.question_set_id == experiment.config.question_set_id), None)
            except ClientError as exc:
                return told_html(exc), gr.update(choices=[], value=None), *action_updates(None)
            keys = [run.run_key for run in experiment.runs]
            return (
                experiments_html.experiment_summary_html(experiment, metrics, question_set),
                gr.update(choices=keys, value=keys[0] if keys else None),
                *action_updates(experiment.state),
            )

        def open_run(experiment_id: str | None, run_key: str | None):
            if not experiment_id or not run_key:
                return b"", gr.update(choices=[], value=None)
            with told_as_sentence():
                experiment = gateway.get_experiment(experiment_id, run_key=run_key)
            choices = experiments_html.question_choices(experiment.results)
            return experiment.SerializeToString(), gr.update(
                choices=choices, value=choices[0][1] if choices else None
            )

        @said_in_place(outputs=1)
        def open_question(serialized: bytes, question_id: str | None):
            if not serialized or not question_id:
                return ""
            experiment = evaluator_pb2.Experiment.FromString(serialized)
            result = next((r for r in experiment.results if r.question_id == question_id), None)
            if result is None:
                raise user_error("That question is not in this run's results; pick the run again.")
            with told_as_sentence():
                metrics = MetricFormat(gateway.list_metrics())
            return experiments_html.question_detail_html(result, metrics)

        def do_resume(experiment_id: str | None, answer_key: str, judge_key: str, progress=gr.Progress()):
            """Continues the chosen experiment after a restart interrupted it (the evaluator
            refuses any other with a reason); the API keys come from section 2."""
            if not experiment_id:
                yield message_html("Choose the interrupted experiment to resume first.", "error"), gr.skip()
                return
            yield from experiment_form.follow_experiment(
                gateway, gateway.resume_experiment(experiment_id, answer_key or "", judge_key or ""), progress
            )

        def actions(experiment_id: str | None):
            return experiment_actions(gateway, experiment_id)

        resume.click(
            lambda: action_updates(evaluator_pb2.EXPERIMENT_STATE_RUNNING), outputs=[resume, cancel],
            show_progress="hidden",
        ).then(
            do_resume, inputs=[detail_experiment, settings.answer[2], settings.judge[2]],
            outputs=[detail_summary, created], concurrency_limit=None,
        ).then(actions, inputs=detail_experiment, outputs=[resume, cancel], show_progress="hidden")

        def do_cancel(experiment_id: str | None):
            if not experiment_id:
                return message_html("Choose the queued or running experiment to cancel first.", "error"), gr.skip()
            try:
                gateway.cancel_experiment(experiment_id)
                experiments = gateway.list_experiments()
            except ClientError as exc:
                return told_html(exc), gr.skip()
            name = next((x.config.name for x in experiments if x.experiment_id == experiment_id), "") or experiment_id
            message = message_html(
                f"Cancelling {name}: it stops before its next question; Resume continues it.", "ok",
            )
            return message, experiments_html.experiments_table_html(experiments)

        # An opened experiment that is queued or running is read again every WATCH_S: its summary
        # shows its progress (the document being processed, the questions done), also on a page
        # opened mid-run; once it has stopped (finished, or after a Cancel) the final summary shows.
        watching = gr.Timer(WATCH_S, active=False)

        def running(experiment_id: str | None):
            try:
                experiment = gateway.get_experiment(experiment_id, without_results=True) if experiment_id else None
            except ClientError:
                experiment = None
            return experiment if experiment is not None and experiment.state in CANCELLABLE else None

        def watch_stop(experiment_id: str | None):
            if running(experiment_id) is not None:
                return open_experiment(experiment_id)[0], *[gr.skip()] * 8
            summary, runs, *buttons = open_experiment(experiment_id)
            # The run's questions are read again too: the run shown mid-run stays chosen, so no change
            # of the Run list reads them, and they would stay those done when it was opened; the list
            # and the Experiment choice then say its final state.
            return (summary, runs, *buttons, gr.Timer(active=False), *open_run(experiment_id, runs.get("value")),
                    *listing(experiment_id))

        cancel.click(do_cancel, inputs=detail_experiment, outputs=[detail_summary, table]).then(
            lambda: (gr.update(interactive=False), gr.Timer(active=True)), outputs=[cancel, watching],
            show_progress="hidden")
        watching.tick(watch_stop, inputs=detail_experiment, outputs=[
            detail_summary, detail_run, resume, cancel, watching, run_results, detail_question, table,
            detail_experiment,
        ], show_progress="hidden")
        detail_experiment.change(lambda experiment_id: gr.Timer(active=running(experiment_id) is not None),
                                 inputs=detail_experiment, outputs=watching, show_progress="hidden")

        page.load(
            load, inputs=[settings.embedding_model, settings.documents],
            outputs=[forms, settings.embedding_model, settings.documents, status],
        ).then(listing, inputs=detail_experiment, outputs=[table, detail_experiment]).then(
            lambda current: experiment_form.question_set_update(gateway, current),
            inputs=question_set, outputs=question_set, show_progress="hidden",
        )
        page.load(lambda: retrieval_limit_updates(gateway), outputs=[
            settings.top_k, settings.neighbor_prev, settings.neighbor_next, settings.window, settings.recency,
        ], show_progress="hidden")
        refresh.click(listing, inputs=detail_experiment, outputs=[table, detail_experiment])

        def current_documents(selection: list[str] | None):
            with told_as_sentence():
                return document_dropdown_update(gateway, selection or [])

        # Documents uploaded since this page loaded show up on opening the list.
        settings.documents.focus(
            current_documents, inputs=settings.documents, outputs=settings.documents, show_progress="hidden"
        )
        # A finished run shows up in the list and opens in the detail view.
        created.change(listing, inputs=created, outputs=[table, detail_experiment])
        detail_experiment.change(open_experiment, inputs=detail_experiment, outputs=[detail_summary, detail_run, resume, cancel])
        detail_experiment.change(lambda experiment_id: show_plots(gateway, experiment_id), inputs=detail_experiment,
                                 outputs=plots.outputs, show_progress="hidden")
        detail_run.change(open_run, inputs=[detail_experiment, detail_run], outputs=[run_results, detail_question])
        detail_question.change(open_question, inputs=[run_results, detail_question], outputs=question_detail)
    return page
