"""Results you can see (ADR 0058), on the Experiments and the Compare page alike:
Gradio's native plots of the deciding measure against tokens sent (the Pareto
front in its own colour), each run's mean of a chosen measure as bars with the
95% interval in the tooltip and in the table beside them (Gradio's BarPlot draws
no error bars), and per-question wins, ties and losses of every pair of runs.
The data comes from frontend.views.result_plots."""

from __future__ import annotations

from dataclasses import dataclass

import gradio as gr

from chunklab.v1 import evaluator_pb2 as pb
from chunklab.views.metric_format import MetricFormat
from chunklab.views.verdict_view import TOKENS
from frontend.views import result_plots as data
from frontend.views.result_plots import MEANS_COLUMNS, TRADEOFF_COLUMNS, WINS_COLUMNS

# Axis numbers as the tables write them: four significant digits, no trailing zeros ("100", "0.756").
AXIS = ",.4~r"


@dataclass
class ResultPlots:
    """The section's components; `outputs` in the order `updates` fills them."""

    tradeoff: gr.ScatterPlot
    metric: gr.Dropdown
    means: gr.BarPlot
    intervals: gr.Dataframe
    wins: gr.BarPlot
    shown: gr.State  # (experiments, metric catalogue) plotted: choosing a measure needs no call

    @property
    def outputs(self) -> list:
        return [self.tradeoff, self.metric, self.means, self.intervals, self.wins, self.shown]


def section(prefix: str) -> ResultPlots:
    """The plots, hidden until something is shown; element ids start with `prefix`."""
    tradeoff = gr.ScatterPlot(
        x=TRADEOFF_COLUMNS[1],
        y=TRADEOFF_COLUMNS[2],
        color=TRADEOFF_COLUMNS[3],
        color_map=data.FRONT_COLOURS,
        color_title="",
        tooltip="all",
        y_axis_format=AXIS,
        visible=False,
        elem_id=f"{prefix}-tradeoff-plot",
    )
    with gr.Row():
        metric = gr.Dropdown(label="Bars of", choices=[], visible=False, scale=1, elem_id=f"{prefix}-means-metric")
    with gr.Row():
        means = gr.BarPlot(
            x=MEANS_COLUMNS[0],
            y=MEANS_COLUMNS[1],
            tooltip="all",
            x_label_angle=-20,
            visible=False,
            y_axis_format=AXIS,
            scale=2,
            elem_id=f"{prefix}-means-plot",
        )
        intervals = gr.Dataframe(visible=False, interactive=False, scale=1, elem_id=f"{prefix}-means-table")
    wins = gr.BarPlot(
        x=WINS_COLUMNS[0],
        y=WINS_COLUMNS[2],
        color=WINS_COLUMNS[1],
        color_map=data.OUTCOME_COLOURS,
        color_title="",
        tooltip="all",
        x_label_angle=-20,
        visible=False,
        elem_id=f"{prefix}-wins-plot",
    )
    plots = ResultPlots(tradeoff, metric, means, intervals, wins, gr.State(None))
    metric.input(means_updates, inputs=[plots.shown, metric], outputs=[means, intervals])
    return plots


def means_updates(shown: tuple[list[pb.Experiment], MetricFormat] | None, metric: str | None):
    """The bars and the interval table of one measure."""
    if not shown or not shown[0] or not metric:
        return gr.update(visible=False), gr.update(visible=False)
    experiments, metrics = shown
    frame = data.means_frame(experiments, metrics, metric)
    label = metrics.label(metric)
    top = max([*frame[MEANS_COLUMNS[3]], *frame[MEANS_COLUMNS[1]], 0.0]) or 1.0
    return (
        gr.update(
            value=frame,
            visible=True,
            title=f"{label}: mean per run (95% interval in the tooltip)",
            y_title=f"{label} ({metrics.value_unit(metric)})",
            y_lim=[0, top * 1.05],
        ),
        gr.update(
            value=frame[[MEANS_COLUMNS[0], MEANS_COLUMNS[4]]].rename(columns={MEANS_COLUMNS[4]: label}), visible=True
        ),
    )


def updates(experiments: list[pb.Experiment], pairs: list[pb.PairwiseWins], metrics: MetricFormat) -> list:
    """Every component's update for these experiments (one on Experiments, several on Compare)."""
    shown = (experiments, metrics)
    names = data.plotted_metrics(experiments, metrics)
    if not names:
        hidden = gr.update(visible=False)
        return [hidden, hidden, hidden, hidden, hidden, shown]
    metric = data.deciding_metric(experiments)
    label = metrics.label(metric)
    tradeoff = data.tradeoff_frame(experiments, metrics)
    wins = data.wins_frame(experiments, pairs)
    means, intervals = means_updates(shown, names[0])
    return [
        gr.update(
            value=data.every_colour(tradeoff, TRADEOFF_COLUMNS[3], data.FRONT_COLOURS),
            visible=not tradeoff.empty,
            title=f"{label} against tokens sent",
            x_title="tokens sent per question",
            x_axis_format=metrics.axis_format(TOKENS),
            y_title=f"{label} ({metrics.value_unit(metric)})",
            # Room above and below the points: one at 100% recall was cut in half by the frame.
            y_lim=data.padded_limits(tradeoff[TRADEOFF_COLUMNS[2]], floor=0.0),
        ),
        gr.update(choices=[(metrics.label(n), n) for n in names], value=names[0], visible=True),
        means,
        intervals,
        gr.update(
            value=wins,
            visible=not wins.empty,
            title=f"Per question: wins, ties and losses on {label} of the first run of each pair",
            y_title="questions",
        ),
        shown,
    ]
