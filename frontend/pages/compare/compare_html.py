"""The Compare page's views: the experiments side by side (every column with its
neighbours badge and embedding model), the evaluator's soft warnings shown
first and loud, each metric's differences with their 95% bootstrap intervals
as tables, and the same differences as a DataFrame for the page's native plot.
No Gradio here."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from chunklab.v1 import evaluator_pb2
from chunklab.views import numbers, retrieval_view
from chunklab.views.metric_format import MetricFormat
from chunklab.views.render import render
from chunklab.views.verdict_view import verdict_view
from chunklab.views.winner_view import winner_view
from frontend.views.experiments_html import embedding_model, question_set_label, state_name, title
from frontend.views.result_plots import experiment_letters, padded_limits, plot_label

OPEN_METRICS = 3
# The plot's columns: one row per run and point (the interval's ends and the difference).
PLOT_COLUMNS = ("metric", "run", "point", "difference from the baseline")
PLOT_POINTS = ("95% CI low", "difference", "95% CI high")
PLOT_COLOURS = {"95% CI low": "#9ca3af", "difference": "#2563eb", "95% CI high": "#9ca3af"}


def _run_label(names: dict[str, str], experiment_id: str, run_key: str) -> str:
    return f"{names.get(experiment_id, experiment_id[:8])}: {run_key}"


def _clear(d: evaluator_pb2.MetricDifference) -> bool:
    return not d.ci_low <= 0 <= d.ci_high


def by_metric(
    response: evaluator_pb2.CompareExperimentsResponse, metrics: MetricFormat
) -> dict[str, list[evaluator_pb2.MetricDifference]]:
    """The differences per metric, in the catalogue's order (headline measures first)."""
    grouped: dict[str, list[evaluator_pb2.MetricDifference]] = {}
    for d in response.differences:
        grouped.setdefault(d.metric, []).append(d)
    return {m: grouped[m] for m in metrics.ordered(grouped)}


def _column(
    e: evaluator_pb2.Experiment, metrics: MetricFormat, question_sets: dict[str, evaluator_pb2.QuestionSet]
) -> dict:
    winner = winner_view(e.validation, metrics)
    verdict = verdict_view(e.verdict, metrics)
    question_set = question_sets.get(e.config.question_set_id)
    return {
        "winner": winner["text"] if winner else "",
        "experiment_id": e.experiment_id,
        "title": title(e),
        "neighbours": retrieval_view.neighbours_badge(e),
        "verdict": verdict["text"] if verdict else "",
        "embedding_model": embedding_model(e),
        "state": state_name(e),
        "top_k": e.config.retrieval.top_k,
        "questions": numbers.questions_by_runs(e.questions_done, e.questions_total, len(e.runs)),
        "question_set": question_set_label(question_set) if question_set else e.config.question_set_id[:8],
        "run_keys": [r.run_key for r in e.runs],
    }


def _difference_row(
    metric: str, d: evaluator_pb2.MetricDifference, names: dict[str, str], metrics: MetricFormat
) -> dict:
    return {
        "run_key": d.run_key,
        "label": _run_label(names, d.experiment_id, d.run_key),
        "baseline_mean": metrics.value(metric, d.baseline_mean),
        "mean": metrics.value(metric, d.mean),
        "difference": metrics.difference(metric, d.difference),
        "interval": f"[{metrics.difference(metric, d.ci_low)}, {metrics.difference(metric, d.ci_high)}]",
        "shared_questions": d.shared_questions,
        "verdict": metrics.verdict(metric, d.ci_low, d.ci_high),
    }


def compare_html(
    response: evaluator_pb2.CompareExperimentsResponse,
    metrics: MetricFormat,
    question_sets: Sequence[evaluator_pb2.QuestionSet] = (),
) -> str:
    """Warnings, the columns (each experiment's verdict, its question set named as the
    dropdown names it), and per metric every run against the baseline with the 95% interval,
    each formatted and judged as the evaluator's metric catalogue says."""
    sets = {s.question_set_id: s for s in question_sets}
    names = {e.experiment_id: title(e) for e in response.experiments}
    shown = [
        {
            "metric": metric,
            "label": metrics.label(metric),
            "open": position < OPEN_METRICS,
            "clear_count": sum(1 for d in diffs if _clear(d)),
            "rows": [_difference_row(metric, d, names, metrics) for d in diffs],
        }
        for position, (metric, diffs) in enumerate(by_metric(response, metrics).items())
    ]
    baseline = ""
    if response.differences:
        first = response.differences[0]
        baseline = _run_label(names, first.baseline_experiment_id, first.baseline_run_key)
    return render(
        "frontend",
        "compare.html.j2",
        warnings=list(response.warnings),
        experiments=[
            {**_column(e, metrics, sets), "letter": experiment_letters(response.experiments)[e.experiment_id]}
            for e in response.experiments
        ],
        metrics=shown,
        baseline=baseline,
    )


def differences_frame(response: evaluator_pb2.CompareExperimentsResponse, metrics: MetricFormat) -> pd.DataFrame:
    """Every run's difference from the baseline and its 95% interval, per metric, in the
    units the tables show (fractions in percentage points): what the page's plot draws."""
    letters = experiment_letters(response.experiments)
    rows = []
    for metric, diffs in by_metric(response, metrics).items():
        scale = metrics.scale(metric)
        for d in diffs:
            label = f"{letters.get(d.experiment_id, '?')} · {plot_label(d.run_key)}"
            for point, value in zip(PLOT_POINTS, (d.ci_low, d.difference, d.ci_high)):
                rows.append((metric, label, point, value * scale))
    return pd.DataFrame(rows, columns=list(PLOT_COLUMNS))


def plot_limits(frame: pd.DataFrame) -> list[float]:
    """The value axis of a metric's plot: every point and zero (no difference) inside, with a margin."""
    return padded_limits(frame[PLOT_COLUMNS[3]], include=(0.0,))
