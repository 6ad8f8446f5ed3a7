"""Compare: chosen experiments side by side, their soft warnings first, and per
metric the difference of every run from the baseline with a 95% interval, in a
table and in a native Gradio plot of the metric the reader picks.

The baseline is the first run of the first experiment chosen (the evaluator's
rule), so the order of the selection matters and the page says which it is.

The page opens on a comparison (ADR 0093, frontend.views.opening): the newest finished
experiment against the newest earlier one on the same question set, compared at once.
"""

from __future__ import annotations

import gradio as gr
import pandas as pd

from chunklab.client import ChunkLab, ClientError
from chunklab.views.metric_format import MetricFormat
from frontend.errors import said_as_info, said_in_place, told_as_sentence, user_error
from frontend.pages.compare import compare_html
from frontend.pages.compare.compare_html import PLOT_COLUMNS
from frontend.views import experiments_html, plot_section
from frontend.views.formatting import message_html
from frontend.views.opening import opening_pair

NOTHING_TO_COMPARE = (
    "Compare needs two finished experiments: run another on the same question set (Experiments), then choose both here."
)


def metric_plot(frame: pd.DataFrame | None, metric: str | None, metrics: MetricFormat | None = None):
    """The plot's update for one metric: its runs' intervals, with zero in view."""
    if frame is None or frame.empty or not metric:
        return gr.update(value=None, visible=False)
    metrics = metrics or MetricFormat([])
    shown = frame[frame[PLOT_COLUMNS[0]] == metric]
    return gr.update(
        value=shown,
        visible=True,
        y_lim=compare_html.plot_limits(shown),
        title=f"{metrics.label(metric)}: difference from the baseline (95% CI)",
        y_title=f"difference ({metrics.axis_unit(metric)})",
    )


def build(gateway: ChunkLab, opened=None, request: gr.State | None = None) -> gr.Blocks:
    """`opened`: the event of the tab being opened (frontend/app.py); `request`: experiment ids
    another page asks to see compared (Find the best configuration opens its study here)."""
    with gr.Blocks() as page:
        gr.Markdown(
            "Choose two or more experiments; the first one's first run is the baseline. "
            "Each column carries its neighbours badge and embedding model."
        )
        with gr.Row(equal_height=True):
            chosen = gr.Dropdown(label="Experiments", choices=[], multiselect=True, scale=4, elem_id="compare-select")
            refresh = gr.Button("↻", scale=0, min_width=40, elem_id="compare-refresh")
            compare_button = gr.Button(
                "Compare", variant="primary", scale=0, elem_id="compare-button", interactive=False
            )
        result = gr.HTML(elem_id="compare-result")
        differences = gr.State(None)
        catalogue = gr.State(None)  # the evaluator's metric catalogue, as MetricFormat
        plot_metric = gr.Dropdown(
            label="Plot the differences of", choices=[], visible=False, elem_id="compare-plot-metric"
        )
        plot = gr.ScatterPlot(
            x=PLOT_COLUMNS[1],
            y=PLOT_COLUMNS[3],
            color=PLOT_COLUMNS[2],
            color_map=compare_html.PLOT_COLOURS,
            x_title="run",
            color_title="",
            tooltip="all",
            x_label_angle=-20,
            y_axis_format=plot_section.AXIS,
            visible=False,
            elem_id="compare-plot",
        )
        plots = plot_section.section("compare")

        def choices(current: list[str] | None, first_open: bool = False):
            try:
                experiments = gateway.list_experiments()
            except ClientError as exc:  # the list keeps its choice and says why under it
                return said_as_info(exc)
            options = experiments_html.experiment_choices(experiments)
            ids = {value for _, value in options}
            return gr.update(
                choices=options,
                value=[c for c in current or [] if c in ids] or (opening_pair(experiments) if first_open else []),
            )

        @said_in_place(outputs=5 + len(plots.outputs))
        def compare(experiment_ids: list[str] | None):
            if not experiment_ids or len(experiment_ids) < 2:
                raise user_error("Choose at least two experiments to compare.")
            return compared(experiment_ids)

        def compared(experiment_ids: list[str]):
            """A study may come alone: the evaluator compares its trials with its first."""
            with told_as_sentence():
                response = gateway.compare_experiments(experiment_ids)
                metrics = MetricFormat(gateway.list_metrics())
                question_sets = gateway.list_question_sets()
            frame = compare_html.differences_frame(response, metrics)
            names = list(compare_html.by_metric(response, metrics))
            first = names[0] if names else None
            return (
                compare_html.compare_html(response, metrics, question_sets),
                frame,
                metrics,
                gr.update(choices=[(metrics.label(n), n) for n in names], value=first, visible=bool(names)),
                metric_plot(frame, first, metrics),
                *plot_section.updates(list(response.experiments), list(response.wins), metrics),
            )

        def opening_choices(current: list[str] | None, shown: pd.DataFrame | None, asked=None):
            """The choices with the opening pair chosen, until a comparison is shown (or another
            page asked for one)."""
            return gr.skip() if shown is not None or asked else choices(current, first_open=True)

        def first_comparison(experiment_ids: list[str] | None, shown: pd.DataFrame | None, asked=None):
            """The opening pair compared at once (once: a comparison shown stays); without a pair,
            what to run to get one."""
            if shown is not None or asked:
                return tuple(gr.skip() for _ in outputs)
            if len(experiment_ids or []) >= 2:
                return compare(experiment_ids)
            return (message_html(NOTHING_TO_COMPARE), *(gr.skip() for _ in outputs[1:]))

        outputs = [result, differences, catalogue, plot_metric, plot, *plots.outputs]
        # On opening the tab while nothing is compared (experiments finish meanwhile); on load only
        # where the page stands alone. Not both: a load still comparing when the tab opens
        # would do the work twice, for a tab nobody sees at load.
        event = opened if opened is not None else page.load
        asked = [request] if request is not None else []
        event(opening_choices, inputs=[chosen, differences, *asked], outputs=chosen).then(
            first_comparison, inputs=[chosen, differences, *asked], outputs=outputs
        )
        refresh.click(choices, inputs=chosen, outputs=chosen)
        chosen.focus(choices, inputs=chosen, outputs=chosen, show_progress="hidden")
        compare_button.click(compare, inputs=chosen, outputs=outputs)
        # Compare acts on two experiments or more.
        chosen.change(
            lambda ids: gr.update(interactive=len(ids or []) >= 2),
            inputs=chosen,
            outputs=compare_button,
            show_progress="hidden",
        )
        if request is not None:

            @said_in_place(outputs=1 + len(outputs))
            def requested(experiment_ids: list[str] | None):
                if not experiment_ids:
                    return tuple(gr.skip() for _ in range(1 + len(outputs)))
                shown = compared(experiment_ids)
                return shown[0], choices(experiment_ids), *shown[1:]

            request.change(requested, inputs=request, outputs=[result, chosen, *outputs[1:]]).then(
                lambda: None, outputs=request, show_progress="hidden"
            )
        plot_metric.input(metric_plot, inputs=[differences, plot_metric, catalogue], outputs=plot)
    return page
