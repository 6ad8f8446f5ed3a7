"""Start here (ADR 0091): the first hour's four steps, from documents to the configuration
to take home, each with where it stands (steps.py reads it from the stack) and a button
that opens the tab it is done on. The page reads the stack again whenever it is opened."""

from __future__ import annotations

import gradio as gr

from chunklab.client import ChunkLab, ClientError
from chunklab.views.metric_format import MetricFormat
from chunklab.views.render import render
from chunklab.views.verdict_view import headline
from frontend.errors import told_html
from frontend.pages.start import steps as path
from frontend.views.opening import newest_finished

LABELS = {path.DONE: "done", path.NEXT: "next", path.TODO: "to do"}
STEP_COUNT = len(path.SHAPE)


def outcome(gateway: ChunkLab, experiments) -> tuple[str, list[str]]:
    """The verdict's first sentence for the newest experiment that compared configurations,
    and the runs it puts in the lead."""
    done = newest_finished(experiments)
    if done is None:
        return "", []
    experiment = gateway.get_experiment(done.experiment_id, without_results=True)
    if not experiment.verdict.metric and not experiment.verdict.unavailable:
        return "", []
    return headline(experiment.verdict, MetricFormat(gateway.list_metrics())), list(experiment.verdict.leaders)


def where_we_stand(gateway: ChunkLab) -> tuple:
    """The steps' view and each step's button (the next one primary); a service out of reach
    is one sentence in place of the steps."""
    try:
        experiments = gateway.list_experiments()
        found = path.steps(
            gateway.list_documents(), gateway.list_question_sets(), experiments, *outcome(gateway, experiments)
        )
    except ClientError as exc:
        return (told_html(exc), *(gr.update() for _ in range(STEP_COUNT)))
    upcoming = next((s for s in found if s.state == path.NEXT), None)
    view = render("frontend", "start_steps.html.j2", steps=found, labels=LABELS, next_step=upcoming)
    buttons = [
        gr.update(value=f"{s.number}. {s.button}", variant="primary" if s.state == path.NEXT else "secondary")
        for s in found
    ]
    return (view, *buttons)


def _opening(target: str):
    return lambda: gr.Tabs(selected=target)


def build(gateway: ChunkLab, tabs: gr.Tabs, tab: gr.Tab) -> gr.Blocks:
    with gr.Blocks() as page:
        gr.Markdown(
            "### Start here\nFour steps from your documents to the chunking configuration that finds their answers "
            "best, and home with it. Each step says where you stand; the next one is marked."
        )
        view = gr.HTML(elem_id="start-steps")
        buttons = []
        with gr.Row():
            for number in range(1, STEP_COUNT + 1):
                buttons.append(gr.Button(f"{number}.", elem_id=f"start-go-{number}"))
        # Step 3 by search rather than by a grid you choose (issue 29): a budgeted study.
        tune = gr.Button(
            "Or let a search find it for your documents within a budget: Find the best configuration",
            size="sm",
            elem_id="start-go-tune",
        )
        refresh = gr.Button("Check again", size="sm", elem_id="start-refresh")
        for event in (page.load, tab.select, refresh.click):
            event(lambda: where_we_stand(gateway), outputs=[view, *buttons], show_progress="hidden")
        for button, (_, target, _) in zip(buttons, path.SHAPE, strict=True):
            button.click(_opening(target), outputs=tabs, show_progress="hidden")
        tune.click(_opening("tune"), outputs=tabs, show_progress="hidden")
    return page
