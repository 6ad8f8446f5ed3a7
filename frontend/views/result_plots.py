"""The data the Experiments and Compare pages plot (ADR 0058), as DataFrames for
Gradio's native plots, from the evaluator's verdicts: the deciding measure
(recall with references) against tokens sent with the Pareto front marked, each
run's mean of a measure with its 95% interval, and per-question wins and losses
of every pair of runs. One function per plot, shared by both pages; values in the
units and at the decimals the tables show (fractions as percentages, tokens whole), since a
plot's tooltip prints its data as it is. No Gradio here."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import pandas as pd

from chunklab.v1 import evaluator_pb2 as pb
from chunklab.views.metric_format import MetricFormat
from chunklab.views.verdict_view import TOKENS, pareto_front

TRADEOFF_COLUMNS = ("run", "tokens sent", "quality", "Pareto front")
FRONT, DOMINATED = "on the Pareto front", "beaten on both"
FRONT_COLOURS = {FRONT: "#2563eb", DOMINATED: "#9ca3af"}
MEANS_COLUMNS = ("run", "mean", "95% CI low", "95% CI high", "95% interval")
WINS_COLUMNS = ("pair", "outcome", "questions")
OUTCOMES = ("wins", "ties", "losses")
OUTCOME_COLOURS = {"wins": "#16a34a", "ties": "#9ca3af", "losses": "#dc2626"}


# The share of an axis's span left on each side of the outermost points, so that no point is cut by the frame.
MARGIN = 0.08


def padded_limits(values: Sequence[float], include: Sequence[float] = (), floor: float | None = None) -> list[float]:
    """A value axis's limits: every value (and every one of `include`) inside, with MARGIN of the
    span on each side (5% of the value, or half a unit, when all are equal), never below `floor`.
    For y_lim only: Gradio's native plots drop the points outside an x_lim, and an update that
    changes the x_lim with the data kept the previous data on screen."""
    every = [float(v) for v in [*values, *include]]
    low, high = min(every, default=0.0), max(every, default=0.0)
    margin = (high - low) * MARGIN or max(abs(high) * 0.05, 0.5)
    return [low - margin if floor is None else max(low - margin, floor), high + margin]


def every_colour(frame: pd.DataFrame, column: str, colours: Mapping[str, str]) -> pd.DataFrame:
    """What a plot coloured by `column` is given: the frame, with a row of no values (drawn
    nowhere) for each of the colours' categories it lacks. Gradio's native plots take a colour's
    categories from the data they are first drawn with, and draw the points of a category that
    comes later without a colour: a run beaten on both measures was invisible when the experiment
    shown before had none. Drawing the plot again (a changed property) would fix that, but then
    the plot can show the data it had before."""
    missing = [category for category in colours if category not in set(frame[column])]
    if not missing:
        return frame
    blank = pd.DataFrame({name: [float("nan")] * len(missing) for name in frame.columns})
    blank[column] = missing
    return pd.concat([frame, blank], ignore_index=True)


def _title(experiment: pb.Experiment) -> str:
    return experiment.config.name or f"experiment {experiment.experiment_id[:8]}"


_KNOBS = re.compile(r"^([^\[\]]+)\[(.+)\]$")


def plot_label(run_key: str) -> str:
    """A run as a plot's axis names it, short enough not to be cut (Vega cuts labels at 180 px):
    "fixed_size[chunk_size=24,chunk_overlap=0]" -> "fixed_size 24/0"; the tables beside the
    plots give the knobs' names."""
    match = _KNOBS.match(run_key)
    if not match:
        return run_key
    values = [part.split("=", 1)[-1] for part in match.group(2).split(",")]
    return f"{match.group(1)} {'/'.join(values)}"


def experiment_letters(experiments: Sequence[pb.Experiment]) -> dict[str, str]:
    """experiment_id -> "A", "B", …, in the order compared: a plot names a run of several
    experiments by its experiment's letter, which the page's column headings show beside
    each title (a title would cut the label short)."""
    return {e.experiment_id: _letter(i) for i, e in enumerate(experiments)}


def _letter(position: int) -> str:
    return chr(ord("A") + position) if position < 26 else f"E{position + 1}"


def run_labels(experiments: Sequence[pb.Experiment]) -> dict[tuple[str, str], str]:
    """(experiment_id, run_key) -> how a plot names the run: its short key alone for one
    experiment, "A · run" (the experiment's letter) when several are compared."""
    several = len(experiments) > 1
    letters = experiment_letters(experiments)
    return {
        (e.experiment_id, r.run_key): (
            f"{letters[e.experiment_id]} · {plot_label(r.run_key)}" if several else plot_label(r.run_key)
        )
        for e in experiments
        for r in e.runs
    }


def deciding_metric(experiments: Sequence[pb.Experiment]) -> str:
    return next((e.verdict.metric for e in experiments if e.verdict.metric), "")


def _means(experiments: Sequence[pb.Experiment], metric: str) -> list[tuple[str, pb.MeanInterval]]:
    labels = run_labels(experiments)
    return [
        (labels.get((e.experiment_id, m.run_key), m.run_key), m)
        for e in experiments
        for m in e.verdict.means
        if m.metric == metric
    ]


def tradeoff_frame(experiments: Sequence[pb.Experiment], metrics: MetricFormat) -> pd.DataFrame:
    """One row per run: its mean tokens sent, its mean of the deciding measure, and
    whether it is on the Pareto front of the two (no run sends fewer tokens and scores better)."""
    metric = deciding_metric(experiments)
    quality = dict(_means(experiments, metric)) if metric else {}
    tokens = dict(_means(experiments, TOKENS))
    runs = [run for run in quality if run in tokens]
    front = set(
        pareto_front(
            [(run, quality[run].mean, tokens[run].mean) for run in runs],
            metrics.info(metric).higher_is_better,
            metrics.info(TOKENS).higher_is_better,
        )
    )
    rows = [
        (
            run,
            metrics.plotted(TOKENS, tokens[run].mean),
            metrics.plotted(metric, quality[run].mean),
            FRONT if run in front else DOMINATED,
        )
        for run in runs
    ]
    return pd.DataFrame(rows, columns=list(TRADEOFF_COLUMNS))


def plotted_metrics(experiments: Sequence[pb.Experiment], metrics: MetricFormat) -> list[str]:
    """The measures the bars can show: those the verdicts hold means for, deciding one first."""
    names = {m.metric for e in experiments for m in e.verdict.means}
    return [n for n in dict.fromkeys((deciding_metric(experiments), *metrics.ordered(names))) if n in names]


def means_frame(experiments: Sequence[pb.Experiment], metrics: MetricFormat, metric: str) -> pd.DataFrame:
    """One row per run: its mean of `metric` and the ends of the 95% interval (the bar
    and its tooltip), and the interval as the tables write it."""
    rows = [
        (
            run,
            metrics.plotted(metric, m.mean),
            metrics.plotted(metric, m.ci_low),
            metrics.plotted(metric, m.ci_high),
            metrics.mean_interval(metric, m.mean, m.ci_low, m.ci_high),
        )
        for run, m in _means(experiments, metric)
    ]
    return pd.DataFrame(rows, columns=list(MEANS_COLUMNS))


def wins_frame(experiments: Sequence[pb.Experiment], pairs: Sequence[pb.PairwiseWins]) -> pd.DataFrame:
    """Three rows per pair of runs, "A vs B": the questions on which A was better (wins),
    as good (ties) and worse (losses) than B on the deciding measure."""
    labels = run_labels(experiments)
    rows = []
    for p in pairs:
        first = labels.get((p.experiment_id, p.run_key), p.run_key)
        pair = f"{first} vs {_after(first, labels.get((p.other_experiment_id, p.other_run_key), p.other_run_key))}"
        rows += [(pair, outcome, count) for outcome, count in zip(OUTCOMES, (p.wins, p.ties, p.losses))]
    return pd.DataFrame(rows, columns=list(WINS_COLUMNS))


def _after(first: str, second: str) -> str:
    """The second run of a pair without what it repeats of the first, so the pair's label fits:
    "A · fixed_size 24/0 vs 64/0" (same experiment, same strategy), "A · fixed_size 24/0 vs
    recursive 512/64" (same experiment)."""
    letter, _, run = first.rpartition(" · ")
    other_letter, _, other = second.rpartition(" · ")
    if letter != other_letter:
        return second
    strategy, _, _ = run.partition(" ")
    other_strategy, _, knobs = other.partition(" ")
    return knobs if strategy == other_strategy and knobs else other
