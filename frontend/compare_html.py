"""The Compare page's HTML: the experiments side by side (every column with its
neighbours badge and embedding model), the evaluator's soft warnings shown
first and loud, each metric's differences with their 95% bootstrap intervals,
and a forest plot per metric. No Gradio here."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from chunklab.v1 import evaluator_pb2
from frontend import svg
from frontend.experiments_html import (
    embedding_model,
    model_badge,
    neighbours_badge,
    pct,
    state_name,
    title,
)

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


def _attr(value: object) -> str:
    return escape(str(value), quote=True)


def _fmt(metric: str, value: float, signed: bool = False) -> str:
    if metric in FRACTIONS:
        return f"{100 * value:+.1f} pts" if signed else pct(value)
    if metric == "tokens_sent":
        return f"{value:+,.0f}" if signed else f"{value:,.0f}"
    return f"{value:+.3f}" if signed else f"{value:.3f}"


def warnings_html(warnings: Sequence[str]) -> str:
    if not warnings:
        return '<div class="cl-warnings cl-warnings-none">The experiments share their setup: no warnings.</div>'
    items = "".join(f"<li>{escape(w)}</li>" for w in warnings)
    return (
        '<div class="cl-warnings" role="alert"><b>⚠ These experiments differ in setup</b>'
        f"<ul>{items}</ul><div>Differences below are real, but not only from chunking.</div></div>"
    )


def columns_html(experiments: Sequence[evaluator_pb2.Experiment]) -> str:
    """One column per experiment, the badges in every column head."""
    heads = "".join(
        f'<th data-experiment-id="{_attr(e.experiment_id)}"><div>{escape(title(e))}</div>'
        f"{neighbours_badge(e.config)}{model_badge(e)}</th>"
        for e in experiments
    )

    def row(name: str, cells: list[str]) -> str:
        return f"<tr><th>{escape(name)}</th>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>"

    rows = [
        row("state", [escape(state_name(e)) for e in experiments]),
        row("neighbours (fixed_size)", [f"±{e.config.retrieval.neighbor_prev}/{e.config.retrieval.neighbor_next}" for e in experiments]),
        row("embedding model", [escape(embedding_model(e)) for e in experiments]),
        row("top_k", [str(e.config.retrieval.top_k) for e in experiments]),
        row("questions", [f"{e.questions_done}/{e.questions_total}" for e in experiments]),
        row("question set", [f"<code>{escape(e.question_set_hash[:12])}</code>" for e in experiments]),
        row("runs", ["<br/>".join(f"<code>{escape(r.run_key)}</code>" for r in e.runs) for e in experiments]),
    ]
    return (
        f'<table class="cl-table cl-compare-columns"><thead><tr><th></th>{heads}</tr></thead>'
        f'<tbody>{"".join(rows)}</tbody></table>'
    )


def _run_label(names: dict[str, str], experiment_id: str, run_key: str) -> str:
    return f"{names.get(experiment_id, experiment_id[:8])}: {run_key}"


def _verdict(metric: str, d: evaluator_pb2.MetricDifference) -> str:
    if d.ci_low <= 0 <= d.ci_high:
        return "no clear difference"
    higher = d.ci_low > 0
    better = higher != (metric in LOWER_IS_BETTER)
    return ("higher" if higher else "lower") + (" (better)" if better else " (worse)")


def _ordered(metrics: set[str]) -> list[str]:
    known = [m for m in METRIC_ORDER if m in metrics]
    return known + sorted(metrics - set(known))


def differences_html(response: evaluator_pb2.CompareExperimentsResponse) -> str:
    """Per metric, every run against the baseline with the 95% interval, and its forest plot."""
    if not response.differences:
        return (
            '<p class="cl-empty">No differences to show: the experiments share no measured questions '
            "(do they use the same questions, and did they finish?).</p>"
        )
    names = {e.experiment_id: title(e) for e in response.experiments}
    by_metric: dict[str, list[evaluator_pb2.MetricDifference]] = {}
    for d in response.differences:
        by_metric.setdefault(d.metric, []).append(d)
    first = response.differences[0]
    baseline = _run_label(names, first.baseline_experiment_id, first.baseline_run_key)
    sections = [f'<p>Baseline: <b>{escape(baseline)}</b>. Intervals are bootstrap 95% over shared questions.</p>']
    for position, metric in enumerate(_ordered(set(by_metric))):
        rows, plot_rows = [], []
        for d in by_metric[metric]:
            label = _run_label(names, d.experiment_id, d.run_key)
            interval = f"[{_fmt(metric, d.ci_low, True)}, {_fmt(metric, d.ci_high, True)}]"
            verdict = _verdict(metric, d)
            rows.append(
                f'<tr data-metric="{_attr(metric)}" data-run-key="{_attr(d.run_key)}" '
                f'data-verdict="{_attr(verdict)}"><td>{escape(label)}</td>'
                f'<td class="cl-n">{_fmt(metric, d.baseline_mean)}</td><td class="cl-n">{_fmt(metric, d.mean)}</td>'
                f'<td class="cl-n">{_fmt(metric, d.difference, True)}</td><td class="cl-n">{escape(interval)}</td>'
                f'<td class="cl-n">{d.shared_questions}</td><td>{escape(verdict)}</td></tr>'
            )
            plot_rows.append((label, d.difference, d.ci_low, d.ci_high))
        plot = svg.forest_plot(
            f"{metric}: difference from the baseline (95% CI)", plot_rows, lambda v, m=metric: _fmt(m, v, True)
        )
        # The headline measures open, the rest folded: fifteen tables at once bury the answer.
        opened = ' open=""' if position < OPEN_METRICS else ""
        clear = sum(1 for d in by_metric[metric] if not d.ci_low <= 0 <= d.ci_high)
        sections.append(
            f'<details class="cl-metric" data-metric="{_attr(metric)}"{opened}><summary><b>{escape(metric)}</b>'
            f" · {clear} of {len(by_metric[metric])} runs clearly differ</summary>"
            '<div class="cl-scroll"><table class="cl-table"><thead><tr><th>run</th><th>baseline mean</th><th>mean</th>'
            f'<th>difference</th><th>95% CI</th><th>questions</th><th></th></tr></thead><tbody>{"".join(rows)}</tbody>'
            f"</table></div>{plot}</details>"
        )
    return "".join(sections)


def compare_html(response: evaluator_pb2.CompareExperimentsResponse) -> str:
    return (
        f'<div class="cl-compare">{warnings_html(response.warnings)}{columns_html(response.experiments)}'
        f"{differences_html(response)}</div>"
    )
