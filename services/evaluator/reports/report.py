"""One self-contained HTML report per experiment, in two views.

Managerial (ADR 0081): one sentence naming the configuration to use and why (or
"no clear winner" and what separates the leaders, by the winner rule of ADR 0080),
its three headline numbers, one plot with labelled points, and how the winner held
up on held-out questions; narrow enough for the page. Technical (report_technical):
every run's measures in the full table with the verdict's intervals, then configuration, provenance and every question (collapsed) with a row
per run, linked into the documents' text, written once (ADR 0068).
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
from chunklab.views import numbers, per_document_view, retrieval_view
from chunklab.views.metric_format import MetricFormat, usd
from chunklab.views.render import render as render_template
from chunklab.views.render import render_pieces
from chunklab.views.verdict_view import headline_numbers, recommendation, verdict_view
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
        cells = [_cell(f"{numbers.count(run.questions_done)}/{numbers.count(run.questions_total)}")]
        cells += [_cell(METRICS.value(name, getattr(m, name)) if m.questions_labelled else "–") for name in labelled]
        cells += [_cell(METRICS.cell(name, m)) for name in ranked]
        cells += [_answer_cell(run, name) for name in answers]
        cells += [_cell(numbers.count(m.chunks_sent)), _cell(METRICS.value("tokens_sent", m.tokens_sent))]
        if costed:
            cells += [_cell(numbers.count(run.usage.llm_calls)), _cell(usd(run.usage.estimated_cost_usd))]
        rows.append({"run_key": run.run_key, "error": run.error, "cells": cells})
    return head, rows


def short_labels(run_keys: Sequence[str]) -> list[str]:
    """Run names short enough to label a point in full: the strategy alone where it ran once,
    else the strategy with the knob values that set its runs apart (fixed_size 256·0)."""
    parsed = []
    for key in run_keys:
        strategy, _, knobs = key.partition("[")
        parsed.append((strategy, [tuple(k.split("=", 1)) for k in knobs.rstrip("]").split(",") if "=" in k]))
    out = []
    for strategy, knobs in parsed:
        kin = [k for s, k in parsed if s == strategy]
        differ = [name for name, value in knobs if any(dict(other).get(name) != value for other in kin)]
        shown = [value for name, value in knobs if name in differ] or [value for _, value in knobs]
        out.append(f"{strategy} {'·'.join(shown)}" if len(kin) > 1 and shown else strategy)
    return out


def trade_off_plot(experiment: evaluator_pb2.Experiment):
    """The managerial view's one plot: each run's tokens sent against the deciding measure,
    each point labelled in full, the recommendation (or the leaders) marked."""
    usable = [r for r in experiment.runs if r.questions_done]
    metric = winner.headline_metric(usable)
    if metric is None:
        return None
    chosen = set(experiment.verdict.leaders)
    labels = short_labels([r.run_key for r in usable])
    mark = " (recommended)" if experiment.verdict.winner_run_key else " (leader)"
    title = METRICS.label(metric)
    return plots.scatter(
        f"What each configuration finds ({title}) against what it sends (tokens per question)",
        [
            (label + (mark if r.run_key in chosen else ""), float(r.mean_metrics.tokens_sent), _mean(r, metric))
            for label, r in zip(labels, usable)
        ],
        "tokens sent per question",
        title,
        fmt_x=lambda v: METRICS.value("tokens_sent", v),
        fmt_y=lambda v, m=metric: METRICS.value(m, v),
    )


def _notes(experiment: evaluator_pb2.Experiment, judged: bool) -> list[str]:
    """What a reader must know before trusting the verdict: unfinished runs, unmeasured scores."""
    runs = list(experiment.runs)
    notes = []
    if experiment.state == evaluator_pb2.EXPERIMENT_STATE_PARTIAL:
        failed = [run for run in runs if experiment_state.incomplete_run(run)]
        notes.append(
            f"This experiment is partial: {len(failed)} of {len(runs)} runs did not finish every question; "
            "the tables show what the others measured."
        )
    elif experiment.state != evaluator_pb2.EXPERIMENT_STATE_SUCCEEDED:
        notes.append(
            f"This experiment is {experiment_state.name(experiment.state)}: "
            f"{numbers.questions_by_runs(experiment.questions_done, experiment.questions_total, len(runs))} finished. "
            f"{experiment.error}"
        )
    notes += [
        f"{run.run_key} {'did not run' if experiment_state.failed_run(run) else 'is incomplete'}: "
        f"{experiment_state.failure(run)}"
        for run in runs
        if experiment_state.incomplete_run(run) and (run.error or run.questions_failed)
    ]
    if not experiment.provenance.judge_model.startswith("none") and any(
        not r.mean_judge.faithfulness.measured for r in runs if r.questions_done
    ):
        notes.append("Some judge scores could not be measured; means use measured questions only.")
    if not judged and not experiment.config.retrieval_only:
        notes.append("No judge model was configured: the LLM-as-judge scores were not measured.")
    return notes


def _judged(experiment: evaluator_pb2.Experiment) -> bool:
    judge_model = experiment.provenance.judge_model
    return any(getattr(r.mean_judge, m).measured for r in experiment.runs for m in METRICS.judge_scores()) or bool(
        judge_model and not judge_model.startswith("none")
    )


def managerial(experiment: evaluator_pb2.Experiment) -> dict:
    """What a manager reads: the sentence, three numbers, one plot, how the winner held up."""
    validation = winner_view(experiment.validation, METRICS)
    return {
        "sentence": recommendation(experiment.verdict, METRICS),
        "recommended": bool(experiment.verdict.winner_run_key),
        "numbers": headline_numbers(experiment.verdict, METRICS),
        "validation": validation["text"] if validation else "",
        "notes": _notes(experiment, _judged(experiment)),
        "shortfalls": per_document_view.chosen_shortfalls(experiment),
        "plot": trade_off_plot(experiment),
    }


def compared(experiment: evaluator_pb2.Experiment) -> dict:
    """The technical view's comparison of the runs: the verdict with every mean's interval,
    the hold-out table and the full table of measures."""
    head, rows = summary_table(list(experiment.runs), _judged(experiment))
    return {
        "verdict": verdict_view(experiment.verdict, METRICS),
        "validation": winner_view(experiment.validation, METRICS),
        "head": head,
        "rows": rows,
        "per_document": per_document_view.run_tables(experiment.runs),
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
        # A partial experiment's header names each run that did not finish, and why (ADR 0087).
        failed_runs=[
            f"{run.run_key}: {experiment_state.failure(run)}"
            for run in experiment.runs
            if experiment_state.incomplete_run(run)
        ]
        if experiment.state == evaluator_pb2.EXPERIMENT_STATE_PARTIAL
        else [],
        created=experiment.created_at.ToDatetime().strftime("%Y-%m-%d %H:%M UTC"),
        managerial=managerial(experiment) if show_managerial else None,
        technical=technical(experiment, question_set, results, METRICS) if show_technical else None,
        compared=compared(experiment) if show_technical else None,
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
