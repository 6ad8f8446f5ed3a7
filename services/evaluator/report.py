"""One self-contained HTML report per experiment, in two views.

Managerial: which run wins on the headline measure, by how much, at what
token cost, in plots. Technical: configuration, provenance and every
question (collapsed) with each run's expansion tree, context, answer and
judge reasons; the results link to their chunks, whose texts are shown once
at the end, since the same chunk comes back for many questions (ADR 0047).
The file is rendered as it is sent, in pieces (`pieces`, for GetReport's
stream). The functions here read the messages into plain view data; the
templates (services/evaluator/templates/, the chunks through the shared
chunklab/templates/retrieval.html.j2) lay it out and escape every piece of
text from outside (documents, questions, answers, judge reasons, names). The
page holds no script, and a Content Security Policy forbids scripts and
remote loads even if something slipped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence

from google.protobuf import json_format

from chunklab import knobs, retrieval_view
from chunklab.metric_format import MetricFormat, usd
from chunklab.verdict_view import verdict_view
from chunklab.winner_view import winner_view
from chunklab.render import render as render_template
from chunklab.render import render_pieces
from chunklab.v1 import common_pb2, evaluator_pb2
from services.evaluator import metric_catalog, plots, scoring, validation

# A chunk's text is shown once, cut at MAX_CHUNK_CHARS, under "Chunk texts"; where a
# question's result shows the chunk, it shows the text's first PREVIEW_CHARS as a link there.
MAX_CHUNK_CHARS = 1200
PREVIEW_CHARS = 80
CONTENT_TYPE = "text/html; charset=utf-8"
PACKAGE, TEMPLATE = "services.evaluator", "report.html.j2"
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"
STATE = {
    evaluator_pb2.EXPERIMENT_STATE_PENDING: "pending",
    evaluator_pb2.EXPERIMENT_STATE_RUNNING: "running",
    evaluator_pb2.EXPERIMENT_STATE_SUCCEEDED: "succeeded",
    evaluator_pb2.EXPERIMENT_STATE_FAILED: "failed",
    evaluator_pb2.EXPERIMENT_STATE_INTERRUPTED: "interrupted",
}
JUDGE_NAMES = {
    "context_relevance": "context relevance (1-10)",
    "answer_similarity": "answer similarity (1-10)",
    "faithfulness": "faithfulness (1-10)",
    "hallucination": "hallucination (share of yes)",
}
# Every metric formatted as the catalogue says (the UI and the CLI read the same one).
METRICS = MetricFormat(metric_catalog.list_metrics().metrics)
LABELLED_COLUMNS = ("recall", "precision", "iou", "hit_rate", "mrr", "recall_hits", "iou_hits")


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


def summary_table(runs: Sequence[evaluator_pb2.ExperimentRun], judged: bool) -> tuple[list[str], list[dict]]:
    """The head and one row per run; columns for measures that no run has are left out
    (recall@10 of a top-5 experiment, ADR 0052)."""
    labelled = any(r.mean_metrics.questions_labelled for r in runs)
    similar = any(r.mean_metrics.embedding_answer_similarity >= 0 for r in runs)
    ranked = METRICS.measured_in("rank", (r.mean_metrics for r in runs))
    head = ["run", "questions"]
    if labelled:
        head += [METRICS.label(name) for name in (*LABELLED_COLUMNS, *ranked)]
    if similar:
        head.append("answer sim. (emb.)")
    if judged:
        head += list(JUDGE_NAMES.values())
    head += ["chunks / q", "tokens / q", "LLM calls", "est. cost"]
    rows = []
    for run in runs:
        m, j = run.mean_metrics, run.mean_judge
        cells = [_cell(f"{run.questions_done}/{run.questions_total}")]
        if labelled:
            for name in LABELLED_COLUMNS:
                cells.append(_cell(METRICS.value(name, getattr(m, name)) if m.questions_labelled else "–"))
            cells += [_cell(METRICS.cell(name, m)) for name in ranked]
        if similar:
            similarity = m.embedding_answer_similarity
            cells.append(_cell(METRICS.value("embedding_answer_similarity", similarity) if similarity >= 0 else "–"))
        if judged:
            for measure in JUDGE_NAMES:
                score = getattr(j, measure)
                shown = METRICS.value(measure, score.value) if score.measured else "not measured"
                cells.append(_cell(shown, score.reason))
        cells += [_cell(str(m.chunks_sent)), _cell(METRICS.value("tokens_sent", m.tokens_sent)), _cell(str(run.usage.llm_calls)),
                  _cell(usd(run.usage.estimated_cost_usd))]
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
        figures.append(plots.bar_chart(
            "Recall, precision and IoU of the context (expanded)", labels,
            {"recall": [r.mean_metrics.recall for r in usable], "precision": [r.mean_metrics.precision for r in usable],
             "IoU": [r.mean_metrics.iou for r in usable]}, fmt=lambda v: METRICS.value("recall", v), max_value=1.0,
        ))
    judged = [m for m in ("context_relevance", "answer_similarity", "faithfulness")
              if any(getattr(r.mean_judge, m).measured for r in usable)]
    if judged:
        figures.append(plots.bar_chart(
            "Judge scores (1-10, measured questions only)", labels,
            {m.replace("_", " "): [getattr(r.mean_judge, m).value for r in usable] for m in judged},
            fmt=lambda v: METRICS.value("context_relevance", v), max_value=10.0,
        ))
    figures.append(plots.bar_chart("Tokens sent to the LLM per question", labels,
                                   {"tokens": [float(r.mean_metrics.tokens_sent) for r in usable]},
                                   fmt=lambda v: METRICS.value("tokens_sent", v)))
    metric = validation.headline_metric(usable)
    if metric is not None:
        title = METRICS.label(metric)
        figures.append(plots.scatter(
            f"Cost against quality: tokens per question vs {title}",
            [(r.run_key, float(r.mean_metrics.tokens_sent), _mean(r, metric)) for r in usable],
            "tokens sent per question", title, fmt_x=lambda v: METRICS.value("tokens_sent", v),
            fmt_y=lambda v, m=metric: METRICS.value(m, v),
        ))
    return figures


def _notes(experiment: evaluator_pb2.Experiment, judged: bool) -> list[str]:
    """What a reader must know before trusting the verdict: unfinished runs, unmeasured scores."""
    runs = list(experiment.runs)
    notes = []
    if experiment.state != evaluator_pb2.EXPERIMENT_STATE_SUCCEEDED:
        notes.append(f"This experiment is {STATE.get(experiment.state, 'unknown')}: "
                     f"{experiment.questions_done} of {experiment.questions_total} questions finished. "
                     f"{experiment.error}")
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
    judged = any(getattr(r.mean_judge, m).measured for r in runs for m in JUDGE_NAMES) or bool(
        judge_model and not judge_model.startswith("none"))
    head, rows = summary_table(runs, judged)
    return {"verdict": verdict_view(experiment.verdict, METRICS), "validation": winner_view(experiment.validation, METRICS),
            "notes": _notes(experiment, judged), "head": head, "rows": rows, "plots": plot_figures(runs)}


# -- the technical view ----------------------------------------------------

def _json(message) -> str:
    return json.dumps(json_format.MessageToDict(message, preserving_proto_field_name=True), indent=2,
                      ensure_ascii=False)


def _knobs(spec: common_pb2.StrategySpec) -> str:
    return ", ".join(f"{k}={knobs.label(v)}" for k, v in sorted(spec.knobs.items()))


def config_rows(experiment: evaluator_pb2.Experiment) -> list[tuple[str, object]]:
    p = experiment.provenance
    return [
        ("experiment id", experiment.experiment_id), ("state", STATE.get(experiment.state, "?")),
        ("question set", experiment.config.question_set_id), ("question-set hash", experiment.question_set_hash),
        ("top_k", experiment.config.retrieval.top_k),
        ("vector search", "exact: every candidate scored, never an approximate HNSW graph"),
        ("neighbours (fixed_size)", f"±{experiment.config.retrieval.neighbor_prev}/{experiment.config.retrieval.neighbor_next}"),
        ("embedding model", p.embedding_model), ("answer model", p.answer_model), ("judge model", p.judge_model),
        ("judge prompt version", p.judge_prompt_version), ("extractive method", p.extractive_method or "–"),
        ("code version", p.code_version),
        ("documents", ", ".join(f"{d} (sha256 {h[:12]})" for d, h in sorted(p.document_hashes.items()))),
        ("index sets", "each run searched its own set per document (config id below); the active sets "
                       "were never changed"),
    ]


def run_row(run: evaluator_pb2.ExperimentRun) -> dict:
    """One run's configuration: its knobs, config id, window and how its index came to be."""
    return {
        "run_key": run.run_key, "knobs": _knobs(run.spec), "config_id": run.config_id,
        "window": run.retrieval.window if run.retrieval.HasField("window") else "strategy default",
        "processing": ("reused the index" if run.index_reused
                       else f"{run.chunk_count} chunks in {run.processing_seconds:.1f}s"),
        "status": run.error or "ok",
    }


def _judge(scores: evaluator_pb2.JudgeScores) -> dict:
    rows = []
    for measure, title in JUDGE_NAMES.items():
        score = getattr(scores, measure)
        if measure == "hallucination":
            value = ("yes" if score.value >= 0.5 else "no") if score.measured else "not measured"
        else:
            value = f"{score.value:g}" if score.measured else "not measured"
        rows.append({"name": title.split(" (")[0], "value": value, "reason": score.reason})
    return {"scores": rows, "model": scores.judge_model or "–", "prompt_version": scores.prompt_version}


def result_view(result: evaluator_pb2.QuestionResult) -> dict:
    """One run's answer to one question: measures, answer, judge, and the context it was given."""
    m = result.metrics
    facts = [f"{m.chunks_sent} chunks", f"{METRICS.value('tokens_sent', m.tokens_sent)} tokens",
             f"retrieval {m.retrieve_ms:.0f} ms"]
    if m.labelled:
        facts = [*METRICS.facts("labelled", m), *METRICS.facts("rank", m)] + facts
    if m.embedding_answer_similarity >= 0:
        facts.append(f"{METRICS.label('embedding_answer_similarity')} "
                     f"{METRICS.value('embedding_answer_similarity', m.embedding_answer_similarity)}")
    return {
        "run_key": result.run_key, "facts": facts, "error": result.error, "answer": result.answer,
        "extractive": result.extractive, "judge": _judge(result.judge) if result.HasField("judge") else None,
        "nodes": retrieval_view.tree_view(result.expansion_tree, PREVIEW_CHARS),
        "chunks": retrieval_view.flat_view(result.retrieved_chunks, PREVIEW_CHARS),
    }


def question_views(question_set: evaluator_pb2.QuestionSet,
                   results: Sequence[evaluator_pb2.QuestionResult]) -> list[dict]:
    """Every question in the set's order, with its expected answer, references and each run's result."""
    by_question: dict[str, list[evaluator_pb2.QuestionResult]] = {}
    for result in results:
        by_question.setdefault(result.question_id, []).append(result)
    return [
        {"text": q.text, "expected_answer": q.expected_answer,
         "references": [{"document_id": r.document_id, "start_char": r.start_char, "end_char": r.end_char,
                         "content": r.content} for r in q.references],
         "results": [result_view(r) for r in by_question.get(q.question_id, [])]}
        for q in question_set.questions
    ]


def chunk_texts(experiment: evaluator_pb2.Experiment, results: Sequence[evaluator_pb2.QuestionResult]) -> list[dict]:
    """Every chunk that any result shows (hits, what they pulled in, what the LLM read), each once:
    grouped by configuration in the runs' order, in document order within one. The same chunk
    comes back for many questions, so its text is kept here and the results link to it."""
    runs_of: dict[tuple[str, str], list[str]] = {}
    for run in experiment.runs:
        runs_of.setdefault((run.spec.name, run.config_id), []).append(run.run_key)
    found: dict[tuple[str, str], dict[str, common_pb2.Chunk]] = {key: {} for key in runs_of}
    for result in results:
        shown = [item.chunk for item in result.retrieved_chunks]
        shown += [chunk for node in result.expansion_tree.hits for chunk in scoring.node_chunks(node)]
        for chunk in shown:
            found.setdefault((chunk.strategy, chunk.config_id), {}).setdefault(chunk.chunk_id, chunk)
    groups = []
    for (strategy, config_id), chunks in found.items():
        if not chunks:
            continue
        ordered = sorted(chunks.values(), key=lambda c: (c.document_name or c.document_id, c.start_char, c.role,
                                                         c.chunk_index))
        runs = ", ".join(runs_of.get((strategy, config_id), []))
        caption = " · ".join(part for part in (strategy, config_id and f"config {config_id}", runs) if part)
        groups.append({"caption": caption or "chunks",
                       "chunks": [retrieval_view.text_view(c, MAX_CHUNK_CHARS) for c in ordered]})
    return groups


def technical(experiment: evaluator_pb2.Experiment, question_set: evaluator_pb2.QuestionSet,
              results: Sequence[evaluator_pb2.QuestionResult]) -> dict:
    texts = chunk_texts(experiment, results)
    # Where each chunk's text is: short ids, as every result links to its chunks.
    links = {c.chunk_id: f"t{n}" for n, c in enumerate((c for g in texts for c in g["chunks"]), 1)}
    return {"config": config_rows(experiment), "runs": [run_row(run) for run in experiment.runs],
            "config_json": _json(experiment.config), "questions": question_views(question_set, results),
            "texts": texts, "links": links, "max_chars": MAX_CHUNK_CHARS}


def shown_view(view: int) -> int:
    """The view a request gets: UNSPECIFIED reads as BOTH."""
    return evaluator_pb2.REPORT_VIEW_BOTH if view == evaluator_pb2.REPORT_VIEW_UNSPECIFIED else view


def page(experiment: evaluator_pb2.Experiment, question_set: evaluator_pb2.QuestionSet,
         results: Sequence[evaluator_pb2.QuestionResult], view: int = evaluator_pb2.REPORT_VIEW_BOTH) -> dict:
    """What the report's template is given: the header's facts and the views asked for."""
    view = shown_view(view)
    show_managerial = view in (evaluator_pb2.REPORT_VIEW_BOTH, evaluator_pb2.REPORT_VIEW_MANAGERIAL)
    show_technical = view in (evaluator_pb2.REPORT_VIEW_BOTH, evaluator_pb2.REPORT_VIEW_TECHNICAL)
    return dict(
        csp=CSP, name=experiment.config.name,
        strategies=", ".join(dict.fromkeys(g.strategy for g in experiment.config.strategies)),
        question_set=question_set.name, question_count=question_set.question_count,
        neighbours=retrieval_view.neighbours_badge(experiment), embedding_model=experiment.provenance.embedding_model,
        top_k=experiment.config.retrieval.top_k, state=STATE.get(experiment.state, "?"),
        created=experiment.created_at.ToDatetime().strftime("%Y-%m-%d %H:%M UTC"),
        managerial=managerial(experiment) if show_managerial else None,
        technical=technical(experiment, question_set, results) if show_technical else None,
    )


def render(experiment: evaluator_pb2.Experiment, question_set: evaluator_pb2.QuestionSet,
           results: Sequence[evaluator_pb2.QuestionResult], view: int = evaluator_pb2.REPORT_VIEW_BOTH) -> str:
    """The report as one HTML file: the managerial view, the technical view, or both."""
    return render_template(PACKAGE, TEMPLATE, **page(experiment, question_set, results, view))


def pieces(experiment: evaluator_pb2.Experiment, question_set: evaluator_pb2.QuestionSet,
           results: Sequence[evaluator_pb2.QuestionResult], view: int, piece_bytes: int) -> Iterator[bytes]:
    """render()'s file as UTF-8 in pieces of piece_bytes, written as they are sent (GetReport)."""
    return render_pieces(PACKAGE, TEMPLATE, piece_bytes, **page(experiment, question_set, results, view))
