"""Reports: open an experiment's HTML report in the page and download it, in
the managerial, technical or both views (EvaluatorService.GetReport).

The report is written to disk as it streams, at any size, into the UI's report
store (frontend.report_files); a sandboxed iframe loads it from there (see
reports_html) and Gradio serves the same file as a download.

The page opens on the newest finished experiment's managerial report, opened at once
(ADR 0093, frontend.views.opening); the dropdown lists every experiment, newest first.
"""

from __future__ import annotations

import gradio as gr

from chunklab.client import ChunkLab, ClientError
from frontend.errors import said_in_place, told_as_sentence, user_error
from frontend.pages.reports import reports_html
from frontend.report_files import FILES
from frontend.views import experiments_html
from frontend.views.opening import newest_finished


def build(gateway: ChunkLab, opened=None) -> gr.Blocks:
    """`opened`: the event of the tab being opened (frontend/app.py)."""
    with gr.Blocks() as page:
        with gr.Row(equal_height=True):
            chosen = gr.Dropdown(label="Experiment", choices=[], scale=4, elem_id="report-experiment")
            refresh = gr.Button("↻", scale=0, min_width=40, elem_id="report-refresh")
        with gr.Row(equal_height=True):
            view = gr.Radio(
                choices=list(reports_html.VIEWS), value="managerial", label="View", scale=3, elem_id="report-view"
            )
            open_button = gr.Button("Open", variant="primary", scale=0, elem_id="report-open", interactive=False)
        # Shown once a report is open: before that it would be an empty drop box.
        download = gr.File(label="Download", interactive=False, visible=False, elem_id="report-file")
        frame = gr.HTML(elem_id="report-frame")

        def choices(current: str | None):
            with told_as_sentence():
                experiments = gateway.list_experiments()
            options = experiments_html.experiment_choices(experiments)
            ids = {value for _, value in options}
            done = newest_finished(experiments)
            opening = done.experiment_id if done else (options[0][1] if options else None)
            return gr.update(choices=options, value=current if current in ids else opening)

        @said_in_place(outputs=2)
        def open_report(experiment_id: str | None, view_name: str):
            if not experiment_id:
                raise user_error("Choose an experiment first (run one on the Experiments tab).")
            if view_name not in reports_html.VIEWS:
                raise user_error("Choose a view: managerial, technical or both.")
            token, folder = FILES.folder()
            with told_as_sentence():
                try:
                    with gateway.open_report(experiment_id, reports_html.VIEWS[view_name]) as download:
                        name = reports_html.safe_file_name(download.report.file_name, view_name)
                        saved = download.save(folder / name)
                except ClientError:
                    FILES.discard(token)
                    raise
            return (
                reports_html.report_frame_html(saved, view_name, FILES.url(token, name)),
                gr.update(value=str(saved.path), visible=True),
            )

        def opening_choice(current: str | None, shown: str | None):
            return gr.skip() if shown else choices(current)

        def first_report(experiment_id: str | None, view_name: str, shown: str | None):
            """The opening experiment's report, opened at once (once: a report shown stays);
            nothing while there is none."""
            if shown or not experiment_id:
                return gr.skip(), gr.skip()
            return open_report(experiment_id, view_name)

        # On opening the tab while no report is shown (experiments finish meanwhile); on load only
        # where the page stands alone. Not both: a load still at work when the tab opens
        # would do the work twice, for a tab nobody sees at load.
        event = opened if opened is not None else page.load
        event(opening_choice, inputs=[chosen, frame], outputs=chosen).then(
            first_report, inputs=[chosen, view, frame], outputs=[frame, download]
        )
        refresh.click(choices, inputs=chosen, outputs=chosen)
        chosen.focus(choices, inputs=chosen, outputs=chosen, show_progress="hidden")
        chosen.change(
            lambda experiment_id: gr.update(interactive=bool(experiment_id)),
            inputs=chosen,
            outputs=open_button,
            show_progress="hidden",
        )
        open_button.click(open_report, inputs=[chosen, view], outputs=[frame, download])
    return page
