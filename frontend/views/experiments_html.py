"""Experiments as the UI shows them: badges, the list, estimates, progress, run
means and one question's detail. No Gradio here: each view reads the messages
into plain data for its template, which escapes all outside text.

The neighbours badge is the seeds' compact `±P/N`: neighbor_prev and
neighbor_next of the run, muted when no run expands by neighbours (each run
carries its strategy's expansion kind), so that two experiments that differ
only there are never mistaken for the same setup.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from chunklab import experiment_state
from chunklab.v1 import evaluator_pb2
from chunklab.views import numbers, per_document_view, retrieval_view
from chunklab.views.metric_format import MetricFormat, judge_value, plural, usd
from chunklab.views.render import render, render_macro
from chunklab.views.verdict_view import verdict_view
from chunklab.views.winner_view import winner_view
from frontend.views.formatting import when
from frontend.views.retrieval_html import NO_CHUNKS


def state_name(experiment: evaluator_pb2.Experiment) -> str:
    return experiment_state.name(experiment.state)


def neighbours_badge(experiment: evaluator_pb2.Experiment) -> str:
    """`±P/N`, with the knob names in its tooltip; muted when no run expands by neighbours."""
    return render_macro("frontend", "badges.html.j2", "neighbours_badge", retrieval_view.neighbours_badge(experiment))


def embedding_model(experiment: evaluator_pb2.Experiment) -> str:
    return experiment.provenance.embedding_model or experiment.config.retrieval.embedding_model or "(default)"


def title(experiment: evaluator_pb2.Experiment) -> str:
    return experiment.config.name or f"experiment {experiment.experiment_id[:8]}"


def question_set_label(question_set: evaluator_pb2.QuestionSet) -> str:
    """How a question set is named everywhere in the UI: the Question-set dropdown, the summary, Compare."""
    return f"{question_set.name} · {question_set.question_count} questions · {question_set.question_set_id[:8]}"


def experiment_choices(experiments: Sequence[evaluator_pb2.Experiment]) -> list[tuple[str, str]]:
    """(label, experiment_id) for dropdowns, newest first as the service lists them."""
    return [
        (
            f"{title(e)} · {state_name(e)} · ±{e.config.retrieval.neighbor_prev}/{e.config.retrieval.neighbor_next} · "
            f"{embedding_model(e)} · {e.experiment_id[:8]}",
            e.experiment_id,
        )
        for e in experiments
    ]


def experiments_table_html(experiments: Sequence[evaluator_pb2.Experiment]) -> str:
    rows = [
        {
            "experiment_id": e.experiment_id,
            "state": state_name(e),
            "title": title(e),
            "strategies": ", ".join(dict.fromkeys(g.strategy for g in e.config.strategies)),
            "runs": plural(len(e.runs), "run"),
            "neighbours": retrieval_view.neighbours_badge(e),
            "embedding_model": embedding_model(e),
            "top_k": e.config.retrieval.top_k,
            "questions": numbers.questions_by_runs(e.questions_done, e.questions_total, len(e.runs)),
            "created": when(e.created_at),
        }
        for e in experiments
    ]
    return render("frontend", "experiments_table.html.j2", experiments=rows)


def estimate_html(estimate: evaluator_pb2.ExperimentEstimate, planned: evaluator_pb2.Experiment | None) -> str:
    """A dry run's answer: what would run and what it would cost, with the evaluator's caveats."""
    facts = [
        ("questions", numbers.count(estimate.questions)),
        ("runs (grid cells)", numbers.count(estimate.runs)),
        ("documents to process per run", numbers.count(estimate.documents)),
        (
            "index sets to process",
            f"{numbers.count(estimate.index_sets_to_process)} ({numbers.count(estimate.index_sets_reused)} already there, reused)",
        ),
        ("LLM calls", numbers.count(estimate.llm_calls)),
        ("prompt tokens", numbers.count(estimate.prompt_tokens)),
        ("completion tokens", numbers.count(estimate.completion_tokens)),
        ("estimated cost", usd(estimate.estimated_cost_usd)),
        ("estimated time", estimated_time(estimate)),
    ]
    run_keys = [r.run_key for r in planned.runs] if planned is not None else []
    return render(
        "frontend",
        "estimate.html.j2",
        facts=facts,
        warnings=list(estimate.warnings),
        notes=list(estimate.notes),
        run_keys=run_keys,
    )


def estimated_time(estimate: evaluator_pb2.ExperimentEstimate) -> str:
    """ "about 2 min (processing about 90 s, questions about 20 s)", from this machine's measured speeds."""
    if not estimate.HasField("estimated_seconds"):
        return "not known yet (nothing measured to estimate it by)"
    parts = []
    if estimate.HasField("processing_seconds"):
        parts.append(f"processing {duration(estimate.processing_seconds)}")
    if estimate.HasField("questions_seconds"):
        parts.append(f"questions {duration(estimate.questions_seconds)}")
    return duration(estimate.estimated_seconds) + (f" ({', '.join(parts)})" if parts else "")


def duration(seconds: float) -> str:
    """An estimated time as a person reads it: "about 40 s", "about 3 min", "about 1 h 20 min"."""
    return numbers.rough_duration(seconds)


@dataclass
class ExperimentTracker:
    """Follows a RunExperiment stream: the estimate, the latest progress and the final experiment
    (its run means formatted as the evaluator's metric catalogue says)."""

    metrics: MetricFormat
    estimate: evaluator_pb2.ExperimentEstimate | None = None
    progress: evaluator_pb2.ExperimentProgress | None = None
    experiment: evaluator_pb2.Experiment | None = None

    def add(self, event: evaluator_pb2.ExperimentEvent) -> None:
        kind = event.WhichOneof("event")
        if kind == "estimate":
            self.estimate = event.estimate
        elif kind == "progress":
            self.progress = event.progress
        elif kind == "experiment":
            self.experiment = event.experiment

    def fraction(self) -> float:
        if self.experiment is not None and self.experiment.state != evaluator_pb2.EXPERIMENT_STATE_PENDING:
            return 1.0
        p = self.progress
        if p is None or not p.questions_total:
            return 0.0
        return min(p.questions_done / p.questions_total, 1.0)

    def description(self) -> str:
        p = self.progress
        if p is None:
            return "starting"
        return f"{self._done(p)} · {p.message}"

    def _done(self, p: evaluator_pb2.ExperimentProgress) -> str:
        """The questions done over every run, the runs counted apart (the estimate names them first)."""
        runs = self.estimate.runs if self.estimate is not None else len(self.experiment.runs) if self.experiment else 1
        return numbers.questions_by_runs(p.questions_done, p.questions_total, runs)

    def html(self) -> str:
        if self.experiment is not None and self.experiment.state != evaluator_pb2.EXPERIMENT_STATE_PENDING:
            return experiment_summary_html(self.experiment, self.metrics)
        p = self.progress
        line = "starting…" if p is None else f"{self._done(p)} · {p.message}"
        return render("frontend", "experiment_progress.html.j2", line=line)


# The run table shows every measure of these groups, in the catalogue's order and words;
# the rank and judge groups only where some run has them, the efficiency group as "tokens / q".
RUN_GROUPS = ("labelled", "hits")


def judged_columns(runs: Sequence[evaluator_pb2.ExperimentRun], metrics: MetricFormat) -> list[str]:
    """The answer measures some run has: answer similarity by embeddings, then the judge's;
    columns no run measured are left out, so the summary never says "not measured" for a
    measure the detail shows."""
    return [
        name
        for name in metrics.group("judge")
        if any(metrics.of(name, r.mean_metrics, r.mean_judge) is not None for r in runs)
    ]


def costed(runs: Sequence[evaluator_pb2.ExperimentRun]) -> bool:
    """Whether some run called an LLM: without one (retrieval-only, extractive answers), the LLM
    calls and cost columns would be a column of zeros each, so they are left out."""
    return any(r.usage.llm_calls or r.usage.estimated_cost_usd for r in runs)


def _metric_cells(
    run: evaluator_pb2.ExperimentRun,
    metrics: MetricFormat,
    ranked: Sequence[str],
    judged: Sequence[str] = (),
    with_cost: bool = True,
) -> list[str]:
    m = run.mean_metrics
    cells = [
        metrics.value(name, getattr(m, name)) if m.questions_labelled else "–" for name in metrics.groups(*RUN_GROUPS)
    ]
    cells += [metrics.cell(name, m) for name in ranked]
    for measure in judged:
        value = metrics.of(measure, m, run.mean_judge)
        cells.append("not measured" if value is None else metrics.value(measure, value))
    cells += [numbers.count(m.chunks_sent), metrics.value("tokens_sent", m.tokens_sent)]
    if with_cost:
        cells += [numbers.count(run.usage.llm_calls), usd(run.usage.estimated_cost_usd)]
    return cells


def run_columns(
    metrics: MetricFormat, ranked: Sequence[str] = (), judged: Sequence[str] = (), with_cost: bool = True
) -> list[str]:
    return [
        "run",
        "questions",
        *(metrics.label(name) for name in (*metrics.groups(*RUN_GROUPS), *ranked, *judged)),
        "chunks / q",
        "tokens / q",
        *(("LLM calls", "cost") if with_cost else ()),
    ]


def _run_row(
    run: evaluator_pb2.ExperimentRun,
    metrics: MetricFormat,
    ranked: Sequence[str],
    judged: Sequence[str],
    with_cost: bool,
) -> dict:
    return {
        "run_key": run.run_key,
        "index_reused": run.index_reused,
        "failure": experiment_state.failure(run),
        "failed": experiment_state.failed_run(run),
        "questions": f"{numbers.count(run.questions_done)}/{numbers.count(run.questions_total)}",
        "cells": _metric_cells(run, metrics, ranked, judged, with_cost),
    }


def experiment_summary_html(
    experiment: evaluator_pb2.Experiment, metrics: MetricFormat, question_set: evaluator_pb2.QuestionSet | None = None
) -> str:
    """The experiment's header (state, badges, provenance, its question set by name), the
    verdict (ADR 0058) and its run means; the rank and answer measures that some run has
    (recall@10 needs a top_k of 10), LLM calls and cost only where some run called an LLM."""
    p = experiment.provenance
    ranked = metrics.measured_in("rank", (run.mean_metrics for run in experiment.runs))
    judged = judged_columns(experiment.runs, metrics)
    shown_set = question_set_label(question_set) if question_set else experiment.config.question_set_id[:8]
    facts = [
        numbers.questions_by_runs(experiment.questions_done, experiment.questions_total, len(experiment.runs)),
        f"top_k {experiment.config.retrieval.top_k}",
        f"answers: {p.answer_model or experiment.config.answer_model.model or 'configured'}",
        f"judge: {p.judge_model or experiment.config.judge_model.model or 'configured'}",
        f"question set {shown_set}",
    ]
    if experiment.HasField("progress") and experiment.progress.message:
        facts.insert(1, f"now {experiment.progress.message}")  # what a run does mid-run, after a reload too
    return render(
        "frontend",
        "experiment_summary.html.j2",
        experiment_id=experiment.experiment_id,
        state=state_name(experiment),
        title=title(experiment),
        neighbours=retrieval_view.neighbours_badge(experiment),
        embedding_model=embedding_model(experiment),
        facts=facts,
        error=experiment.error,
        columns=run_columns(metrics, ranked, judged, costed(experiment.runs)),
        runs=[_run_row(run, metrics, ranked, judged, costed(experiment.runs)) for run in experiment.runs],
        winner=winner_view(experiment.validation, metrics),
        verdict=verdict_view(experiment.verdict, metrics),
    )


def question_choices(results: Sequence[evaluator_pb2.QuestionResult]) -> list[tuple[str, str]]:
    """(label, question_id) per question of one run, in the order the service keeps them."""
    out = []
    for number, result in enumerate(results, start=1):
        text = result.question if len(result.question) <= 90 else result.question[:89] + "…"
        out.append((f"{number}. {text}", result.question_id))
    return out


def _score_row(name: str, score: evaluator_pb2.Score) -> dict:
    return {"measure": name, "name": name.replace("_", " "), "value": judge_value(name, score), "reason": score.reason}


def _measures(m: evaluator_pb2.RetrievalMetrics, metrics: MetricFormat) -> list[str]:
    def shown(name: str) -> str:
        return f"{metrics.label(name)} {metrics.value(name, getattr(m, name))}"

    measures = []
    if m.labelled:
        hits = metrics.group("hits")  # each beside its measure on the expanded context, "recall 50% (…)"
        measures += [
            f"{shown(name)} ({shown(name + '_hits')})" if name + "_hits" in hits else shown(name)
            for name in metrics.group("labelled")
        ]
        measures += [shown(name) for name in hits if name.removesuffix("_hits") not in metrics.group("labelled")]
        ranked = metrics.measured_in("rank", [m])
        if ranked:  # none at all: a result stored before the rank measures existed
            measures.append(", ".join(metrics.facts("rank", m)))
            unmeasured = [metrics.label(name) for name in metrics.group("rank") if name not in ranked]
            if unmeasured:
                measures.append(f"not measured (deeper than the run's top_k): {', '.join(unmeasured)}")
    else:
        measures.append("no reference excerpts: recall, precision and IoU are not measured")
    measures += [
        shown(name)
        for name in metrics.group("judge")  # the judge's own scores are listed below
        if name not in metrics.judge_scores() and metrics.of(name, m) is not None
    ]
    measures.append(f"{numbers.count(m.chunks_sent)} chunks, {metrics.value('tokens_sent', m.tokens_sent)} tokens sent")
    measures.append(f"retrieve {numbers.milliseconds(m.retrieve_ms)}, answer {numbers.milliseconds(m.answer_ms)}")
    return measures


def question_detail_html(result: evaluator_pb2.QuestionResult, metrics: MetricFormat) -> str:
    """One question of one run: its answer, measures, judge reasons and the context it was given."""
    judge, scored = None, metrics.judge_scores()
    if result.judge.judge_model or any(getattr(result.judge, x).measured for x in scored):
        judge = {
            "model": result.judge.judge_model,
            "scores": [_score_row(name, getattr(result.judge, name)) for name in scored],
        }
    return render(
        "frontend",
        "question_detail.html.j2",
        question_id=result.question_id,
        run_key=result.run_key,
        question=result.question,
        error=result.error,
        answer=result.answer,
        extractive=result.extractive,
        measures=_measures(result.metrics, metrics),
        judge=judge,
        nodes=retrieval_view.tree_view(result.expansion_tree),
        chunks=retrieval_view.flat_view(result.retrieved_chunks),
        no_chunks=NO_CHUNKS,
    )


def run_documents_html(run: evaluator_pb2.ExperimentRun) -> str:
    """The chosen run's per-document (and per-collection) table, and where it fails."""
    return render(
        "frontend",
        "run_documents.html.j2",
        run_key=run.run_key,
        documents=per_document_view.shown_rows(run.per_document),
        collections=per_document_view.shown_rows(run.per_collection) if len(run.per_collection) > 1 else [],
        shortfall=per_document_view.shortfall_sentence(run.run_key, run),
    )
