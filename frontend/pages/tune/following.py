"""A study's stream as the page shows it while it runs (ADR 0116): the status line (trials so
far, what the search does, the best so far), the Pareto plot filling in, and at the end the
result. Yields the page's outputs in the order of OUTPUTS: status, plot, result, the study's id
(what Cancel stops and Resume continues), Cancel's and Resume's state, and the actions' box."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import gradio as gr

from chunklab import experiment_state
from chunklab.client import ChunkLab, ClientError
from chunklab.v1 import evaluator_pb2
from chunklab.views import study_view
from chunklab.views.metric_format import MetricFormat
from chunklab.views.render import render
from frontend.errors import told_as_sentence, told_html, user_error
from frontend.pages.tune import result
from frontend.pages.tune.study_form import StudyRequest
from frontend.pages.tune.trials_plot import COLOURS, COLUMNS, TrialLog
from frontend.views.formatting import message_html
from frontend.views.result_plots import every_colour

OUTPUTS = ("status", "plot", "result", "study_id", "cancel", "resume", "actions")


def status_html(progress: evaluator_pb2.ExperimentProgress | None, metrics: MetricFormat) -> str:
    if progress is None or not progress.HasField("study"):
        heading, line = ("Starting…", "") if progress is None else ("Preparing…", progress.message)
        return render("frontend", "tune_progress.html.j2", state="running", trials_done=0, heading=heading, line=line)
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
    return gr.update(
        value=every_colour(frame, COLUMNS[5], COLOURS),
        visible=True,
        x_lim=[0, max(frame[COLUMNS[1]].max() * 1.1, 10)],
    )


def started(gateway: ChunkLab, request: StudyRequest) -> Iterable[evaluator_pb2.ExperimentEvent]:
    return gateway.run_study(
        request.question_set_id,
        request.study,
        name=request.name,
        document_ids=request.document_ids,
        collections=request.collections,
        seed=request.seed,
    )


def _stopped(line: str) -> tuple:
    """The status line, the other outputs as they are; Cancel off (nothing runs)."""
    skip = gr.skip()
    return line, skip, skip, skip, gr.update(interactive=False), skip, skip


def follow_study(gateway: ChunkLab, events: Iterable[evaluator_pb2.ExperimentEvent], progress) -> Iterator[tuple]:
    metrics = MetricFormat(gateway.list_metrics())
    log, skip = TrialLog(), gr.skip()
    on, off = gr.update(interactive=True), gr.update(interactive=False)
    study_id, finished = "", None
    yield status_html(None, metrics), gr.update(value=None, visible=False), "", skip, on, off, gr.update(visible=False)
    try:
        for event in events:
            kind = event.WhichOneof("event")
            if kind == "progress":
                p = event.progress
                if p.HasField("study"):
                    log.add_progress(p.study)
                    done, total = study_view.fraction(p.study)
                    progress(min(done / total, 1.0), desc=study_view.progress_line(p, metrics))
                new_id = p.experiment_id if p.experiment_id and p.experiment_id != study_id else skip
                study_id = p.experiment_id or study_id
                yield status_html(p, metrics), plot_update(log), skip, new_id, skip, skip, skip
            elif kind == "experiment":
                finished = event.experiment
    except ClientError as exc:
        yield _stopped(told_html(exc))
        return
    if finished is None:
        yield _stopped(message_html("The evaluator ended the study's stream without the study; see its log.", "error"))
        return
    try:
        stored = gateway.get_experiment(finished.experiment_id, without_results=True)
    except ClientError as exc:
        yield _stopped(told_html(exc))
        return
    log.add_experiment(stored)
    resumable = stored.state == evaluator_pb2.EXPERIMENT_STATE_INTERRUPTED
    yield (
        message_html(*study_view.ended_text(stored)),
        plot_update(log),
        result.result_html(stored, metrics),
        stored.experiment_id,
        off,
        gr.update(interactive=resumable),
        gr.update(visible=bool(study_view.take_home(stored)[0])),
    )


STOPPING = "Stopping after the trial under way; the study keeps its trials."


def cancelled(gateway: ChunkLab, study_id: str) -> Iterator:
    """Cancel's status line: "Stopping…", then how the study ended once it has (ADR 0162). The
    stream's own last word may reach the page before "Stopping…" and be overwritten by it; this
    last line is the same sentence, so whichever lands last the status says how it ended. While
    the trial under way ends, the status is left as it is (a page closed meanwhile stops the reads)."""
    if not study_id:
        raise user_error("No study is running.")
    with told_as_sentence():
        gateway.cancel_experiment(study_id)
    yield message_html(STOPPING, "warning")
    with told_as_sentence():
        for stored in gateway.follow_until_stopped(study_id):
            if stored.state in experiment_state.ACTIVE:
                yield gr.skip()
            else:
                yield message_html(*study_view.ended_text(stored))
