"""A study's stream as the page shows it while it runs (ADR 0116): the status line (trials so
far, what the search does, the best so far), the Pareto plot filling in, and at the end the
result. Yields the page's outputs in the order of the Start button's handler: status, plot,
result, the study's id (what Cancel stops), Cancel's state and the actions' box."""

from __future__ import annotations

from collections.abc import Iterator

import gradio as gr

from chunklab.client import ChunkLab, ClientError
from chunklab.v1 import evaluator_pb2
from chunklab.views import numbers, study_view
from chunklab.views.metric_format import MetricFormat, plural
from chunklab.views.render import render
from frontend.errors import told_html
from frontend.pages.tune import result
from frontend.pages.tune.study_form import StudyRequest
from frontend.pages.tune.trials_plot import COLUMNS, TrialLog
from frontend.views.formatting import message_html


def status_html(progress: evaluator_pb2.ExperimentProgress | None, metrics: MetricFormat) -> str:
    if progress is None:
        return render(
            "frontend", "tune_progress.html.j2", state="starting", trials_done=0, heading="Starting…", line=""
        )
    if not progress.HasField("study"):
        line = progress.message
        return render(
            "frontend", "tune_progress.html.j2", state="running", trials_done=0, heading="Preparing…", line=line
        )
    heading = "Confirming…" if progress.study.phase == "confirming" else "Searching…"
    return render(
        "frontend",
        "tune_progress.html.j2",
        state="running",
        trials_done=progress.study.trials_done,
        heading=heading,
        line=study_view.progress_line(progress, metrics),
    )


def plot_update(log: TrialLog):
    frame = log.frame()
    if frame.empty:
        return gr.update(value=frame, visible=False)
    # From 0 tokens, with room on the right: no point sits on the frame's edge.
    return gr.update(value=frame, visible=True, x_lim=[0, max(frame[COLUMNS[1]].max() * 1.1, 10)])


def follow_study(gateway: ChunkLab, request: StudyRequest, progress) -> Iterator[tuple]:
    metrics = MetricFormat(gateway.list_metrics())
    log = TrialLog()
    skip = gr.skip()
    events = gateway.run_study(
        request.question_set_id,
        request.study,
        name=request.name,
        document_ids=request.document_ids,
        collections=request.collections,
        seed=request.seed,
    )
    study_id, finished = "", None
    yield (
        status_html(None, metrics),
        gr.update(value=None, visible=False),
        "",
        "",
        gr.update(interactive=True),
        gr.update(visible=False),
    )
    try:
        for event in events:
            kind = event.WhichOneof("event")
            if kind == "progress":
                p = event.progress
                if p.HasField("study"):
                    log.add_progress(p.study)
                    done, total = study_view.fraction(p.study)
                    progress(min(done / total, 1.0), desc=study_view.progress_line(p, metrics))
                new_id = p.experiment_id if p.experiment_id != study_id else skip
                study_id = p.experiment_id or study_id
                yield status_html(p, metrics), plot_update(log), skip, new_id, skip, skip
            elif kind == "experiment":
                finished = event.experiment
                study_id = finished.experiment_id or study_id
    except ClientError as exc:
        yield told_html(exc), skip, skip, skip, gr.update(interactive=False), skip
        return
    if finished is None:
        line = message_html("The evaluator ended the study's stream without the study; see its log.", "error")
        yield line, skip, skip, skip, gr.update(interactive=False), skip
        return
    try:
        stored = gateway.get_experiment(finished.experiment_id, without_results=True)
    except ClientError as exc:
        yield told_html(exc), skip, skip, skip, gr.update(interactive=False), skip
        return
    log.add_experiment(stored)
    state = study_view.state_name(stored)
    said = f"{plural(stored.study.trials_done, 'trial')} in {numbers.duration(stored.study.seconds_used)}"
    line = message_html(
        f"The study {state}: {said}." + (f" {stored.error}" if stored.error else ""),
        "ok" if state == "succeeded" else "warning",
    )
    yield (
        line,
        plot_update(log),
        result.result_html(stored, metrics),
        stored.experiment_id,
        gr.update(interactive=False),
        gr.update(visible=bool(study_view.winner(stored))),
    )
