"""One self-contained HTML report per experiment, in two views.

Managerial: which run wins on the headline measure, by how much, at what
token cost, in plots. Technical (report_technical): configuration, provenance
and every question (collapsed) with a row per run, linked into the documents'
text, written once (ADR 0068).
The file is rendered as it is sent, in pieces (`pieces`, for GetReport's
stream). The functions here read the messages into plain view data; the
templates (services/evaluator/reports/templates/, the chunks through the shared
chunklab/views/templates/retrieval.html.j2) lay it out and escape every piece of
text from outside (documents, questions, answers, judge reasons, names). The
page holds no script, and a Content Security Policy forbids scripts and
remote loads even if something slipped.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from chunklab import experiment_state
from chunklab.v1 import evaluator_pb2
from chunklab.views import retrieval_view
from chunklab.views.metric_format import MetricFormat, usd
from chunklab.views.render import render as render_template
from chunklab.views.render import render_pieces
from chunklab.views.verdict_view import verdict_view
from chunklab.views.winner_view import winner_view
from services.evaluator.judging import metric_catalog
from services.evaluator.reports import plots, winner
from services.evaluator.reports.report_technical import technical

CONTENT_TYPE = "text/html; charset=utf-8"
PACKAGE, TEMPLATE = "services.evaluator.reports", "report.html.j2"
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"
# Every metric formatted as the catalogue says (the UI and the CLI read the same one).
METRICS = MetricFormat(metric_catalog.list_metrics().metrics)
# The summary shows every measure of these groups a run has, in the catalogue's order and words
# (the judge group where a judge was configured or some run has a score, with each score's reason).
LABELLED_GROUPS = ("labelled", "hits")


def file_name(experiment: evaluator_pb2.Experiment) -> str:
    slug = re.sub(r"[^A-Za-z0-9]+", "-", experiment.config.name).strip("-").lower()[:40] or "experiment"
    return f"chunklab-{slug}-{experiment.experiment_id[:8]}.html"


# -- the managerial view ---------------------------------------------------


def _mean(run: evaluator_pb2.ExperimentRun, metric: str) -> float:
    """A run's mean of a retrieval or judge measure."""
    if metric in evaluator_pb2.RetrievalMetrics.DESCRIPTOR.fields_by_name:
        return float(getattr(run.mean_metrics, metric))
    return getattr(run.mean_judge, metric).value


def _cell(text: str, tip: str | None = None) -> dict:
    return {"text": text, "tip": tip}


def _answer_columns(runs: Sequence[evaluator_pb2.ExperimentRun], judged: bool) -> list[str]:
    """The judge group's measures: the judge's scores when judged, the others (embedding
    similarity) where some run has them."""
    return [
        name
        for name in METRICS.group("judge")
        if (judged and name in METRICS.judge_scores())
        or any(METRICS.of(name, r.mean_metrics, r.mean_judge) is not None for r in runs)
    ]


def _answer_cell(run: evaluator_pb2.ExperimentRun, name: str) -> dict:
    value = METRICS.of(name, run.mean_metrics, run.mean_judge)
    if name in METRICS.judge_scores():
        score = getattr(run.mean_judge, name)
        return _cell(METRICS.value(name, value) if value is not None else "not measured", score.reason)
    return _cell(METRICS.value(name, value) if value is not None else "–")


def summary_table(runs: Sequence[evaluator_pb2.ExperimentRun], judged: bool) -> tuple[list[str], list[dict]]:
    """The head and one row per run; columns for measures that no run has are left out
    (recall@10 of a top-5 experiment, ADR 0052)."""
    labelled = METRICS.groups(*LABELLED_GROUPS) if any(r.mean_metrics.questions_labelled for r in runs) else []
    ranked = METRICS.measured_in("rank", (r.mean_metrics for r in runs))
    answers = _answer_columns(runs, judged)
    costed = any(r.usage.llm_calls or r.usage.estimated_cost_usd for r in runs)  # else two columns of zeros
    head = [
        "run",
        "questions",
        *(METRICS.label(name) for name in (*labelled, *ranked, *answers)),
        "chunks / q",
        "tokens / q",
        *(("LLM calls", "est. cost") if costed else ()),
    ]
    rows = []
    for run in runs:
        m = run.mean_metrics
        cells = [_cell(f"{run.questions_done}/{run.questions_total}")]
        cells += [_cell(METRICS.value(name, getattr(m, name)) if m.questions_labelled else "–") for name in labelled]
        cells += [_cell(METRICS.cell(name, m)) for name in ranked]
        cells += [_answer_cell(run, name) for name in answers]
        cells += [_cell(str(m.chunks_sent)), _cell(METRICS.value("tokens_sent", m.tokens_sent))]
        if costed:
            cells += [_cell(str(run.usage.llm_calls)), _cell(usd(run.usage.estimated_cost_usd))]
        rows.append({"run_key": run.run_key, "error": run.error, "cells": cells})
    return head, rows


def plot_figures(runs: Sequence[evaluator_pb2.ExperimentRun]) -> list:
    """The managerial view's charts as inline SVG: quality, judge scores, tokens, and cost against quality."""
    usable = [r for r in runs if r.questions_done]
    if not usable:
        return []
    labels = [r.run_key for r in usable]
    figures = []
    if any(r.mean_metrics.questions_labelled for r in usable):
        figures.append(
            plots.bar_chart(
                "Recall, precision and IoU of the context (expanded)",
                labels,
                {
                    "recall": [r.mean_metrics.recall for r in usable],
                    "precision": [r.mean_metrics.precision for r in usable],
                    "IoU": [r.mean_metrics.iou for r in usable],
                },
                fmt=lambda v: METRICS.value("recall", v),
                max_value=1.0,
            )
        )
    judged = [
        m
        for m in METRICS.judge_scores()
        if METRICS.info(m).unit == evaluator_pb2.METRIC_UNIT_SCORE
        and any(getattr(r.mean_judge, m).measured for r in usable)
    ]
    if judged:
        figures.append(
            plots.bar_chart(
                "Judge scores (1-10, measured questions only)",
                labels,
                {METRICS.label(m): [getattr(r.mean_judge, m).value for r in usable] for m in judged},
                fmt=lambda v: METRICS.value("context_relevance", v),
                max_value=10.0,
            )
        )
    figures.append(
        plots.bar_chart(
            "Tokens sent to the LLM per question",
            labels,
            {"tokens": [float(r.mean_metrics.tokens_sent) for r in usable]},
            fmt=lambda v: METRICS.value("tokens_sent", v),
        )
    )
    metric = winner.headline_metric(usable)
    if metric is not None:
        title = METRICS.label(metric)
        figures.append(
            plots.scatter(
                f"Cost against quality: tokens per question vs {title}",
                [(r.run_key, float(r.mean_metrics.tokens_sent), _mean(r, metric)) for r in usable],
                "tokens sent per question",
                title,
                fmt_x=lambda v: METRICS.value("tokens_sent", v),
                fmt_y=lambda v, m=metric: METRICS.value(m, v),
            )
        )
    return figures


def _notes(experiment: evaluator_pb2.Experiment, judged: bool) -> list[str]:
    """What a reader must know before trusting the verdict: unfinished runs, unmeasured scores."""
    runs = list(experiment.runs)
    notes = []
    if experiment.state != evaluator_pb2.EXPERIMENT_STATE_SUCCEEDED:
        notes.append(
            f"This experiment is {experiment_state.name(experiment.state)}: "
            f"{experiment.questions_done} of {experiment.questions_total} questions finished. "
            f"{experiment.error}"
        )
    notes += [f"{run.run_key} did not run: {run.error}" for run in runs if run.error]
    if not experiment.provenance.judge_model.startswith("none") and any(
        not r.mean_judge.faithfulness.measured for r in runs if r.questions_done
    ):
        notes.append("Some judge scores could not be measured; means use measured questions only.")
    if not judged and not experiment.config.retrieval_only:
        notes.append("No judge model was configured: the LLM-as-judge scores were not measured.")
    return notes


def managerial(experiment: evaluator_pb2.Experiment) -> dict:
    runs = list(experiment.runs)
    judge_model = experiment.provenance.judge_model
    judged = any(getattr(r.mean_judge, m).measured for r in runs for m in METRICS.judge_scores()) or bool(
        judge_model and not judge_model.startswith("none")
    )
    head, rows = summary_table(runs, judged)
    return {
        "verdict": verdict_view(experiment.verdict, METRICS),
        "validation": winner_view(experiment.validation, METRICS),
        "notes": _notes(experiment, judged),
        "head": head,
        "rows": rows,
        "plots": plot_figures(runs),
    }


def shown_view(view: int) -> int:
    """The view a request gets: UNSPECIFIED reads as BOTH."""
    return evaluator_pb2.REPORT_VIEW_BOTH if view == evaluator_pb2.REPORT_VIEW_UNSPECIFIED else view


def page(
    experiment: evaluator_pb2.Experiment,
    question_set: evaluator_pb2.QuestionSet,
    results: Sequence[evaluator_pb2.QuestionResult],
    view: int = evaluator_pb2.REPORT_VIEW_BOTH,
) -> dict:
    """What the report's template is given: the header's facts and the views asked for."""
    view = shown_view(view)
    show_managerial = view in (evaluator_pb2.REPORT_VIEW_BOTH, evaluator_pb2.REPORT_VIEW_MANAGERIAL)
    show_technical = view in (evaluator_pb2.REPORT_VIEW_BOTH, evaluator_pb2.REPORT_VIEW_TECHNICAL)
    return dict(
        csp=CSP,
        name=experiment.config.name,
        strategies=", ".join(dict.fromkeys(g.strategy for g in experiment.config.strategies)),
        question_set=question_set.name,
        question_count=question_set.question_count,
        neighbours=retrieval_view.neighbours_badge(experiment),
        embedding_model=experiment.provenance.embedding_model,
        top_k=experiment.config.retrieval.top_k,
        state=experiment_state.name(experiment.state, "?"),
        created=experiment.created_at.ToDatetime().strftime("%Y-%m-%d %H:%M UTC"),
        managerial=managerial(experiment) if show_managerial else None,
        technical=technical(experiment, question_set, results, METRICS) if show_technical else None,
    )


def render(
    experiment: evaluator_pb2.Experiment,
    question_set: evaluator_pb2.QuestionSet,
    results: Sequence[evaluator_pb2.QuestionResult],
    view: int = evaluator_pb2.REPORT_VIEW_BOTH,
) -> str:
    """The report as one HTML file: the managerial view, the technical view, or both."""
    return render_template(PACKAGE, TEMPLATE, **page(experiment, question_set, results, view))


def pieces(
    experiment: evaluator_pb2.Experiment,
    question_set: evaluator_pb2.QuestionSet,
    results: Sequence[evaluator_pb2.QuestionResult],
    view: int,
    piece_bytes: int,
) -> Iterator[bytes]:
    """render()'s file as UTF-8 in pieces of piece_bytes, written as they are sent (GetReport)."""
    return render_pieces(PACKAGE, TEMPLATE, piece_bytes, **page(experiment, question_set, results, view))
