"""Experiments as the UI shows them: badges, the list, estimates, progress, run
means and one question's detail. No Gradio here; all outside text escaped.

The neighbours badge is the seeds' compact `±P/N`: neighbor_prev and
neighbor_next of the run, muted when no fixed_size run was in it (the only
strategy the knobs act on), so that two experiments that differ only there
are never mistaken for the same setup.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from html import escape

from chunklab.v1 import evaluator_pb2
from frontend import retrieval_html

STATES = {
    evaluator_pb2.EXPERIMENT_STATE_PENDING: "pending",
    evaluator_pb2.EXPERIMENT_STATE_RUNNING: "running",
    evaluator_pb2.EXPERIMENT_STATE_SUCCEEDED: "succeeded",
    evaluator_pb2.EXPERIMENT_STATE_FAILED: "failed",
    evaluator_pb2.EXPERIMENT_STATE_INTERRUPTED: "interrupted",
}
JUDGE_MEASURES = ("context_relevance", "answer_similarity", "faithfulness", "hallucination")


def _attr(value: object) -> str:
    return escape(str(value), quote=True)


def _when(timestamp) -> str:
    if not timestamp.seconds:
        return ""
    return datetime.fromtimestamp(timestamp.seconds, tz=timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def pct(value: float) -> str:
    return f"{100 * value:.1f}%"


def state_name(experiment: evaluator_pb2.Experiment) -> str:
    return STATES.get(experiment.state, "unknown")


def has_fixed_size(config: evaluator_pb2.ExperimentConfig) -> bool:
    return any(grid.strategy == "fixed_size" for grid in config.strategies)


def neighbours_badge(config: evaluator_pb2.ExperimentConfig) -> str:
    """`±P/N`, with the knob names in its tooltip; muted when no fixed_size run used it."""
    active = has_fixed_size(config)
    tip = f"neighbor_prev {config.retrieval.neighbor_prev} / neighbor_next {config.retrieval.neighbor_next}"
    if not active:
        tip += " (no fixed_size run in this experiment: the knobs had no effect)"
    muted = "" if active else " cl-nbadge-muted"
    return (
        f'<span class="cl-nbadge{muted}" data-muted="{str(not active).lower()}" title="{_attr(tip)}">'
        f"±{config.retrieval.neighbor_prev}/{config.retrieval.neighbor_next}</span>"
    )


def embedding_model(experiment: evaluator_pb2.Experiment) -> str:
    return experiment.provenance.embedding_model or experiment.config.retrieval.embedding_model or "(default)"


def model_badge(experiment: evaluator_pb2.Experiment) -> str:
    return f'<span class="cl-mbadge" title="embedding model">{escape(embedding_model(experiment))}</span>'


def title(experiment: evaluator_pb2.Experiment) -> str:
    return experiment.config.name or f"experiment {experiment.experiment_id[:8]}"


def experiment_choices(experiments: Sequence[evaluator_pb2.Experiment]) -> list[tuple[str, str]]:
    """(label, experiment_id) for dropdowns, newest first as the service lists them."""
    return [
        (f"{title(e)} · {state_name(e)} · ±{e.config.retrieval.neighbor_prev}/{e.config.retrieval.neighbor_next} · "
         f"{embedding_model(e)} · {e.experiment_id[:8]}", e.experiment_id)
        for e in experiments
    ]


def experiments_table_html(experiments: Sequence[evaluator_pb2.Experiment]) -> str:
    if not experiments:
        return '<p class="cl-empty">No experiments yet: create one above.</p>'
    rows = []
    for e in experiments:
        strategies = ", ".join(dict.fromkeys(g.strategy for g in e.config.strategies))
        rows.append(
            f'<tr data-experiment-id="{_attr(e.experiment_id)}" data-state="{state_name(e)}">'
            f"<td>{escape(title(e))}</td><td class=\"cl-state-{state_name(e)}\">{state_name(e)}</td>"
            f"<td>{escape(strategies)} ({len(e.runs)} runs)</td>"
            f'<td class="cl-col-neighbours">{neighbours_badge(e.config)}</td>'
            f'<td class="cl-col-model">{model_badge(e)}</td>'
            f"<td>{e.config.retrieval.top_k}</td><td>{e.questions_done}/{e.questions_total}</td>"
            f"<td>{_when(e.created_at)}</td><td><code>{escape(e.experiment_id[:8])}</code></td></tr>"
        )
    head = "".join(
        f"<th>{h}</th>"
        for h in ("name", "state", "strategies", "neighbours", "embedding model", "top_k", "questions", "created", "id")
    )
    return (
        f'<div class="cl-scroll"><table class="cl-table cl-experiments"><thead><tr>{head}</tr></thead>'
        f'<tbody>{"".join(rows)}</tbody></table></div>'
    )


def estimate_html(estimate: evaluator_pb2.ExperimentEstimate, planned: evaluator_pb2.Experiment | None) -> str:
    """A dry run's answer: what would run and what it would cost, with the evaluator's caveats."""
    facts = [
        ("questions", f"{estimate.questions}"),
        ("runs (grid cells)", f"{estimate.runs}"),
        ("documents to process per run", f"{estimate.documents}"),
        ("LLM calls", f"{estimate.llm_calls:,}"),
        ("prompt tokens", f"{estimate.prompt_tokens:,}"),
        ("completion tokens", f"{estimate.completion_tokens:,}"),
        ("estimated cost", f"${estimate.estimated_cost_usd:.4f}"),
    ]
    rows = "".join(f'<tr><th>{escape(k)}</th><td data-fact="{_attr(k)}">{escape(v)}</td></tr>' for k, v in facts)
    notes = "".join(f"<li>{escape(n)}</li>" for n in estimate.notes)
    runs = ""
    if planned is not None and planned.runs:
        items = "".join(f"<li><code>{escape(r.run_key)}</code></li>" for r in planned.runs)
        runs = f"<div><b>Runs</b><ul class=\"cl-runs\">{items}</ul></div>"
    return (
        '<div class="cl-estimate"><b>Dry run: nothing was called or stored.</b>'
        f'<table class="cl-table">{rows}</table>'
        + (f"<div><b>Notes</b><ul>{notes}</ul></div>" if notes else "")
        + f"{runs}</div>"
    )


@dataclass
class ExperimentTracker:
    """Follows a RunExperiment stream: the estimate, the latest progress and the final experiment."""

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
        return f"{p.questions_done}/{p.questions_total} {p.message}"

    def html(self) -> str:
        if self.experiment is not None and self.experiment.state != evaluator_pb2.EXPERIMENT_STATE_PENDING:
            return experiment_summary_html(self.experiment)
        p = self.progress
        line = "starting…" if p is None else f"{p.questions_done} of {p.questions_total} questions · {p.message}"
        return f'<div class="cl-process" data-state="running"><b>Running…</b> {escape(line)}</div>'


def _metric_cells(run: evaluator_pb2.ExperimentRun) -> list[str]:
    m = run.mean_metrics
    cells = [pct(v) if m.questions_labelled else "–" for v in (m.recall, m.precision, m.iou, m.hit_rate)]
    cells.append(f"{m.mrr:.3f}" if m.questions_labelled else "–")
    cells.append(pct(m.iou_hits) if m.questions_labelled else "–")
    for measure in JUDGE_MEASURES:
        score = getattr(run.mean_judge, measure)
        cells.append(f"{score.value:.2f}" if score.measured else "not measured")
    cells += [f"{m.chunks_sent}", f"{m.tokens_sent:,}", f"{run.usage.llm_calls}", f"${run.usage.estimated_cost_usd:.4f}"]
    return cells


RUN_COLUMNS = (
    "run", "questions", "recall", "precision", "IoU", "hit rate", "MRR", "IoU (hits only)",
    "context relevance", "answer similarity", "faithfulness", "hallucination",
    "chunks / q", "tokens / q", "LLM calls", "cost",
)


def runs_table_html(runs: Sequence[evaluator_pb2.ExperimentRun]) -> str:
    """Run means: labelled measures where the questions have references, judge means, cost."""
    rows = []
    for run in runs:
        error = f'<div class="cl-message-error">{escape(run.error)}</div>' if run.error else ""
        reused = " (index reused)" if run.index_reused else ""
        cells = "".join(f'<td class="cl-n">{escape(c)}</td>' for c in _metric_cells(run))
        rows.append(
            f'<tr data-run-key="{_attr(run.run_key)}"><td><code>{escape(run.run_key)}</code>{escape(reused)}{error}</td>'
            f'<td class="cl-n">{run.questions_done}/{run.questions_total}</td>{cells}</tr>'
        )
    head = "".join(f"<th>{escape(h)}</th>" for h in RUN_COLUMNS)
    return (
        f'<div class="cl-scroll"><table class="cl-table cl-runs-table"><thead><tr>{head}</tr></thead>'
        f'<tbody>{"".join(rows)}</tbody></table></div>'
    )


def experiment_summary_html(experiment: evaluator_pb2.Experiment) -> str:
    """The experiment's header (state, badges, provenance) and its run means."""
    p = experiment.provenance
    state = state_name(experiment)
    error = f'<div class="cl-message cl-message-error">{escape(experiment.error)}</div>' if experiment.error else ""
    facts = " · ".join(escape(x) for x in (
        f"{experiment.questions_done}/{experiment.questions_total} questions",
        f"top_k {experiment.config.retrieval.top_k}",
        f"answers: {p.answer_model or experiment.config.answer_model.model or 'configured'}",
        f"judge: {p.judge_model or experiment.config.judge_model.model or 'configured'}",
        f"question set {experiment.question_set_hash[:12]}",
    ))
    return (
        f'<div class="cl-experiment" data-experiment-id="{_attr(experiment.experiment_id)}" data-state="{state}">'
        f'<div class="cl-experiment-head"><b>{escape(title(experiment))}</b> · '
        f'<span class="cl-state-{state}">{state}</span> {neighbours_badge(experiment.config)}'
        f"{model_badge(experiment)}<div class=\"cl-muted\">{facts}</div></div>{error}"
        f"{runs_table_html(experiment.runs)}</div>"
    )


def question_choices(results: Sequence[evaluator_pb2.QuestionResult]) -> list[tuple[str, str]]:
    """(label, question_id) per question of one run, in the order the service keeps them."""
    out = []
    for number, result in enumerate(results, start=1):
        text = result.question if len(result.question) <= 90 else result.question[:89] + "…"
        out.append((f"{number}. {text}", result.question_id))
    return out


def _score_row(name: str, score: evaluator_pb2.Score) -> str:
    if not score.measured:
        value = "not measured"
    elif name == "hallucination":
        value = "yes" if score.value >= 0.5 else "no"
    else:
        value = f"{score.value:g} / 10"
    return (
        f'<tr data-measure="{name}"><th>{escape(name.replace("_", " "))}</th>'
        f"<td>{escape(value)}</td><td>{escape(score.reason)}</td></tr>"
    )


def question_detail_html(result: evaluator_pb2.QuestionResult) -> str:
    """One question of one run: its answer, measures, judge reasons and the context it was given."""
    m = result.metrics
    parts = [
        f'<div class="cl-question" data-question-id="{_attr(result.question_id)}" data-run-key="{_attr(result.run_key)}">',
        f"<h4>{escape(result.question)}</h4>",
    ]
    if result.error:
        parts.append(f'<div class="cl-message cl-message-error">{escape(result.error)}</div>')
    if result.answer:
        label = (
            '<span class="cl-badge cl-badge-extractive">extractive</span>'
            if result.extractive
            else '<span class="cl-badge cl-badge-llm">LLM</span>'
        )
        parts.append(
            f'<div class="cl-answer" data-extractive="{str(result.extractive).lower()}">'
            f'<div class="cl-answer-head">{label}</div><div class="cl-answer-text">{escape(result.answer)}</div></div>'
        )
    measures = []
    if m.labelled:
        measures += [
            f"recall {pct(m.recall)} (hits only {pct(m.recall_hits)})",
            f"precision {pct(m.precision)} (hits only {pct(m.precision_hits)})",
            f"IoU {pct(m.iou)} (hits only {pct(m.iou_hits)})",
            f"hit rate {pct(m.hit_rate)}", f"MRR {m.mrr:.3f}",
        ]
    else:
        measures.append("no reference excerpts: recall, precision and IoU are not measured")
    if m.embedding_answer_similarity >= 0:
        measures.append(f"answer similarity (embeddings) {m.embedding_answer_similarity:.3f}")
    measures.append(f"{m.chunks_sent} chunks, {m.tokens_sent} tokens sent")
    measures.append(f"retrieve {m.retrieve_ms:.0f} ms, answer {m.answer_ms:.0f} ms")
    parts.append(f'<div class="cl-measures">{escape(" · ".join(measures))}</div>')
    if result.judge.judge_model or any(getattr(result.judge, x).measured for x in JUDGE_MEASURES):
        rows = "".join(_score_row(name, getattr(result.judge, name)) for name in JUDGE_MEASURES)
        parts.append(
            f'<table class="cl-table cl-judge"><caption>judge {escape(result.judge.judge_model)}</caption>'
            f"<thead><tr><th>measure</th><th>score</th><th>reason</th></tr></thead><tbody>{rows}</tbody></table>"
        )
    parts.append(
        '<div class="cl-detail-columns"><div><b>expansion_tree</b>'
        f"{retrieval_html.expansion_tree_html(result)}</div>"
        f"<div><b>retrieved_chunks</b>{retrieval_html.flat_list_html(result)}</div></div></div>"
    )
    return "".join(parts)
