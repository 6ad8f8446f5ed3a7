"""The Compare page's views: the experiments side by side (every column with its
neighbours badge and embedding model), the evaluator's soft warnings shown
first and loud, each metric's differences with their 95% bootstrap intervals
as tables, and the same differences as a DataFrame for the page's native plot.
No Gradio here."""

from __future__ import annotations

import pandas as pd

from chunklab import retrieval
from chunklab.render import render
from chunklab.v1 import evaluator_pb2
from frontend.experiments_html import embedding_model, pct, state_name, title

# Fractions shown as percentage points; the rest as plain numbers.
FRACTIONS = {"recall", "precision", "iou", "hit_rate", "recall_hits", "precision_hits", "iou_hits", "hallucination"}
# Measures where a smaller value is the better one.
LOWER_IS_BETTER = {"hallucination", "tokens_sent"}
OPEN_METRICS = 3
METRIC_ORDER = (
    "iou", "recall", "precision", "hit_rate", "mrr", "iou_hits", "recall_hits", "precision_hits", "mrr_hits",
    "embedding_answer_similarity", "context_relevance", "answer_similarity", "faithfulness", "hallucination",
    "tokens_sent",
)
# The plot's columns: one row per run and point (the interval's ends and the difference).
PLOT_COLUMNS = ("metric", "run", "point", "difference from the baseline")
PLOT_POINTS = ("95% CI low", "difference", "95% CI high")
PLOT_COLOURS = {"95% CI low": "#9ca3af", "difference": "#2563eb", "95% CI high": "#9ca3af"}


def _fmt(metric: str, value: float, signed: bool = False) -> str:
    if metric in FRACTIONS:
        return f"{100 * value:+.1f} pts" if signed else pct(value)
    if metric == "tokens_sent":
        return f"{value:+,.0f}" if signed else f"{value:,.0f}"
    return f"{value:+.3f}" if signed else f"{value:.3f}"


def plot_unit(metric: str) -> str:
    """What the plot's x axis counts for metric."""
    if metric in FRACTIONS:
        return "percentage points"
    return "tokens" if metric == "tokens_sent" else "score"


def _run_label(names: dict[str, str], experiment_id: str, run_key: str) -> str:
    return f"{names.get(experiment_id, experiment_id[:8])}: {run_key}"


def _clear(d: evaluator_pb2.MetricDifference) -> bool:
    return not d.ci_low <= 0 <= d.ci_high


def _verdict(metric: str, d: evaluator_pb2.MetricDifference) -> str:
    if not _clear(d):
        return "no clear difference"
    higher = d.ci_low > 0
    better = higher != (metric in LOWER_IS_BETTER)
    return ("higher" if higher else "lower") + (" (better)" if better else " (worse)")


def by_metric(response: evaluator_pb2.CompareExperimentsResponse) -> dict[str, list[evaluator_pb2.MetricDifference]]:
    """The differences per metric, headline measures first (METRIC_ORDER), unknown ones after by name."""
    grouped: dict[str, list[evaluator_pb2.MetricDifference]] = {}
    for d in response.differences:
        grouped.setdefault(d.metric, []).append(d)
    known = [m for m in METRIC_ORDER if m in grouped]
    return {m: grouped[m] for m in known + sorted(set(grouped) - set(known))}


def _column(e: evaluator_pb2.Experiment) -> dict:
    return {"experiment_id": e.experiment_id, "title": title(e), "neighbours": retrieval.neighbours_badge(e),
            "embedding_model": embedding_model(e), "state": state_name(e), "top_k": e.config.retrieval.top_k,
            "questions": f"{e.questions_done}/{e.questions_total}", "question_set_hash": e.question_set_hash,
            "run_keys": [r.run_key for r in e.runs]}


def _difference_row(metric: str, d: evaluator_pb2.MetricDifference, names: dict[str, str]) -> dict:
    return {"run_key": d.run_key, "label": _run_label(names, d.experiment_id, d.run_key),
            "baseline_mean": _fmt(metric, d.baseline_mean), "mean": _fmt(metric, d.mean),
            "difference": _fmt(metric, d.difference, True),
            "interval": f"[{_fmt(metric, d.ci_low, True)}, {_fmt(metric, d.ci_high, True)}]",
            "shared_questions": d.shared_questions, "verdict": _verdict(metric, d)}


def compare_html(response: evaluator_pb2.CompareExperimentsResponse) -> str:
    """Warnings, the columns, and per metric every run against the baseline with the 95% interval."""
    names = {e.experiment_id: title(e) for e in response.experiments}
    metrics = [
        {"metric": metric, "open": position < OPEN_METRICS, "clear": sum(1 for d in diffs if _clear(d)),
         "rows": [_difference_row(metric, d, names) for d in diffs]}
        for position, (metric, diffs) in enumerate(by_metric(response).items())
    ]
    baseline = ""
    if response.differences:
        first = response.differences[0]
        baseline = _run_label(names, first.baseline_experiment_id, first.baseline_run_key)
    return render("frontend", "compare.html.j2", warnings=list(response.warnings),
                  experiments=[_column(e) for e in response.experiments], metrics=metrics, baseline=baseline)


def differences_frame(response: evaluator_pb2.CompareExperimentsResponse) -> pd.DataFrame:
    """Every run's difference from the baseline and its 95% interval, per metric, in the
    units the tables show (fractions in percentage points): what the page's plot draws."""
    names = {e.experiment_id: title(e) for e in response.experiments}
    rows = []
    for metric, diffs in by_metric(response).items():
        scale = 100.0 if metric in FRACTIONS else 1.0
        for d in diffs:
            label = _run_label(names, d.experiment_id, d.run_key)
            for point, value in zip(PLOT_POINTS, (d.ci_low, d.difference, d.ci_high)):
                rows.append((metric, label, point, value * scale))
    return pd.DataFrame(rows, columns=list(PLOT_COLUMNS))


def plot_limits(frame: pd.DataFrame) -> list[float]:
    """The value axis of a metric's plot: every point and zero (no difference) inside, with a margin."""
    values = frame[PLOT_COLUMNS[3]]
    low, high = min(0.0, float(values.min())), max(0.0, float(values.max()))
    margin = (high - low) * 0.08 or 0.5
    return [low - margin, high + margin]
