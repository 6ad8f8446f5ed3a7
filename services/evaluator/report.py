"""One self-contained HTML report per experiment, in two views.

Managerial: which run wins on the headline measure, by how much, at what
token cost, in plots. Technical: configuration, provenance and every
question with its retrieved context, expansion tree, answer and judge
reasons. Every piece of text from outside (documents, questions, answers,
judge reasons, names) is escaped, the page holds no script, and a Content
Security Policy forbids scripts and remote loads even if something slipped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from html import escape

from google.protobuf import json_format

from chunklab.knobs import label as knob_label
from chunklab.v1 import common_pb2, evaluator_pb2
from services.evaluator import svg

MAX_CHUNK_CHARS = 1200
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"
STATE = {
    evaluator_pb2.EXPERIMENT_STATE_PENDING: "pending",
    evaluator_pb2.EXPERIMENT_STATE_RUNNING: "running",
    evaluator_pb2.EXPERIMENT_STATE_SUCCEEDED: "succeeded",
    evaluator_pb2.EXPERIMENT_STATE_FAILED: "failed",
    evaluator_pb2.EXPERIMENT_STATE_INTERRUPTED: "interrupted",
}
LABEL = {
    common_pb2.CHUNK_LABEL_HIT: "hit",
    common_pb2.CHUNK_LABEL_NEIGHBOR: "neighbor",
    common_pb2.CHUNK_LABEL_WINDOW: "window",
    common_pb2.CHUNK_LABEL_PARENT: "parent",
}
JUDGE_NAMES = {
    "context_relevance": "context relevance (1-10)",
    "answer_similarity": "answer similarity (1-10)",
    "faithfulness": "faithfulness (1-10)",
    "hallucination": "hallucination (share of yes)",
}

STYLE = """
body{font-family:system-ui,sans-serif;margin:2rem auto;max-width:1100px;color:#1a202c;line-height:1.45;padding:0 1rem}
h1{font-size:1.6rem}h2{border-bottom:2px solid #e2e8f0;padding-bottom:.2rem;margin-top:2.5rem}
table{border-collapse:collapse;margin:.8rem 0;font-size:.9rem}th,td{border:1px solid #e2e8f0;padding:.3rem .5rem;
text-align:left;vertical-align:top}th{background:#f7fafc}td.n{text-align:right;font-variant-numeric:tabular-nums}
.verdict{font-size:1.15rem;background:#f0fff4;border-left:4px solid #38a169;padding:.7rem 1rem}
.warn{background:#fffaf0;border-left:4px solid #dd6b20;padding:.5rem 1rem}
.muted{color:#718096}.badge{display:inline-block;border:1px solid #cbd5e0;border-radius:.6rem;padding:0 .45rem;
font-size:.8rem;margin-right:.3rem}.badge.off{color:#a0aec0}
pre{white-space:pre-wrap;word-break:break-word;background:#f7fafc;padding:.5rem;border-radius:4px;font-size:.85rem}
details{margin:.4rem 0}summary{cursor:pointer}.chunk{border-left:3px solid #cbd5e0;margin:.3rem 0 .3rem .5rem;padding-left:.5rem}
.hit{border-color:#2b6cb0}.neighbor{border-color:#a0aec0}.window{border-color:#38a169}.parent{border-color:#805ad5}
"""


def e(value: object) -> str:
    return escape(str(value), quote=True)


def pct(value: float) -> str:
    return f"{100 * value:.1f}%"


def file_name(experiment: evaluator_pb2.Experiment) -> str:
    slug = re.sub(r"[^A-Za-z0-9]+", "-", experiment.config.name).strip("-").lower()[:40] or "experiment"
    return f"chunklab-{slug}-{experiment.experiment_id[:8]}.html"


def neighbour_badge(experiment: evaluator_pb2.Experiment) -> str:
    has_fixed = any(g.strategy == "fixed_size" for g in experiment.config.strategies)
    cls = "badge" if has_fixed else "badge off"
    tip = f"neighbor_prev {experiment.config.retrieval.neighbor_prev} / neighbor_next {experiment.config.retrieval.neighbor_next}"
    tip += "" if has_fixed else " (no fixed_size run: no effect)"
    return (f'<span class="{cls}" title="{e(tip)}">±{experiment.config.retrieval.neighbor_prev}/'
            f"{experiment.config.retrieval.neighbor_next} neighbours</span>")


# -- the managerial view ---------------------------------------------------

def headline(runs: Sequence[evaluator_pb2.ExperimentRun]):
    """(metric, title, value of a run) the verdict is about: IoU when there are references, else a
    judge or embedding measure; None when no run has any quality measure."""
    if any(r.mean_metrics.questions_labelled for r in runs):
        return "iou", "IoU of the context with the references", lambda r: r.mean_metrics.iou
    if any(r.mean_judge.answer_similarity.measured for r in runs):
        return "answer_similarity", "judged answer similarity", lambda r: r.mean_judge.answer_similarity.value
    if any(r.mean_metrics.embedding_answer_similarity >= 0 for r in runs):
        return ("embedding_answer_similarity", "answer similarity by embeddings",
                lambda r: r.mean_metrics.embedding_answer_similarity)
    if any(r.mean_judge.context_relevance.measured for r in runs):
        return "context_relevance", "judged context relevance", lambda r: r.mean_judge.context_relevance.value
    return None


def _fmt_metric(metric: str, value: float) -> str:
    return pct(value) if metric in ("iou", "embedding_answer_similarity") else f"{value:.2f}"


def verdict(runs: Sequence[evaluator_pb2.ExperimentRun]) -> str:
    usable = [r for r in runs if r.questions_done and not r.error]
    if not usable:
        return "No run finished any question, so there is no winner to name."
    chosen = headline(usable)
    if chosen is None:
        return ("No quality measure is available (no reference excerpts, no expected answers, no judge): "
                "the runs can only be told apart by what they send to the LLM, below.")
    metric, title, value = chosen
    ranked = sorted(usable, key=value, reverse=True)
    best = ranked[0]
    tokens = best.mean_metrics.tokens_sent
    text = (f"<strong>{e(best.run_key)}</strong> wins on {e(title)} with "
            f"<strong>{e(_fmt_metric(metric, value(best)))}</strong>")
    if len(ranked) > 1:
        second = ranked[1]
        gap = value(best) - value(second)
        gap_text = f"{100 * gap:.1f} points" if metric in ("iou", "embedding_answer_similarity") else f"{gap:.2f}"
        text += (f", ahead of {e(second.run_key)} ({e(_fmt_metric(metric, value(second)))}) by {e(gap_text)}; "
                 f"it sends {tokens:,} tokens per question to the LLM against {second.mean_metrics.tokens_sent:,}")
    else:
        text += f", sending {tokens:,} tokens per question to the LLM"
    if best.mean_metrics.questions_labelled:
        text += f" (recall {pct(best.mean_metrics.recall)}, precision {pct(best.mean_metrics.precision)})"
    return text + "."


def summary_table(runs: Sequence[evaluator_pb2.ExperimentRun], judged: bool) -> str:
    """One row per run; columns for measures that no run has are left out."""
    labelled = any(r.mean_metrics.questions_labelled for r in runs)
    similar = any(r.mean_metrics.embedding_answer_similarity >= 0 for r in runs)
    head = ["run", "questions"]
    if labelled:
        head += ["recall", "precision", "IoU", "hit rate", "MRR", "recall (hits only)", "IoU (hits only)"]
    if similar:
        head.append("answer sim. (emb.)")
    if judged:
        head += list(JUDGE_NAMES.values())
    head += ["chunks / q", "tokens / q", "LLM calls", "est. cost"]
    rows = []
    for run in runs:
        m, j = run.mean_metrics, run.mean_judge
        cells = [e(run.run_key) + (f'<br><span class="muted">{e(run.error)}</span>' if run.error else ""),
                 f"{run.questions_done}/{run.questions_total}"]
        if labelled:
            for value in (m.recall, m.precision, m.iou, m.hit_rate, m.mrr, m.recall_hits, m.iou_hits):
                cells.append(pct(value) if m.questions_labelled else "–")
        if similar:
            cells.append(f"{m.embedding_answer_similarity:.3f}" if m.embedding_answer_similarity >= 0 else "–")
        if judged:
            for measure in JUDGE_NAMES:
                score = getattr(j, measure)
                shown = ((pct(score.value) if measure == "hallucination" else f"{score.value:.2f}")
                         if score.measured else "not measured")
                cells.append(f'<span title="{e(score.reason)}">{shown}</span>')
        cells += [str(m.chunks_sent), f"{m.tokens_sent:,}", str(run.usage.llm_calls),
                  f"${run.usage.estimated_cost_usd:.4f}"]
        rows.append("<tr>" + "".join(f"<td>{c}</td>" if i == 0 else f'<td class="n">{c}</td>'
                                     for i, c in enumerate(cells)) + "</tr>")
    return ("<table><thead><tr>" + "".join(f"<th>{e(h)}</th>" for h in head) + "</tr></thead><tbody>"
            + "".join(rows) + "</tbody></table>")


def plots(runs: Sequence[evaluator_pb2.ExperimentRun]) -> str:
    usable = [r for r in runs if r.questions_done]
    if not usable:
        return ""
    labels = [r.run_key for r in usable]
    parts = []
    if any(r.mean_metrics.questions_labelled for r in usable):
        parts.append(svg.bar_chart(
            "Recall, precision and IoU of the context (expanded)", labels,
            {"recall": [r.mean_metrics.recall for r in usable], "precision": [r.mean_metrics.precision for r in usable],
             "IoU": [r.mean_metrics.iou for r in usable]}, fmt=pct, max_value=1.0,
        ))
    judged = [m for m in ("context_relevance", "answer_similarity", "faithfulness")
              if any(getattr(r.mean_judge, m).measured for r in usable)]
    if judged:
        parts.append(svg.bar_chart(
            "Judge scores (1-10, measured questions only)", labels,
            {m.replace("_", " "): [getattr(r.mean_judge, m).value for r in usable] for m in judged},
            fmt=lambda v: f"{v:.1f}", max_value=10.0,
        ))
    parts.append(svg.bar_chart("Tokens sent to the LLM per question", labels,
                               {"tokens": [float(r.mean_metrics.tokens_sent) for r in usable]},
                               fmt=lambda v: f"{v:,.0f}"))
    chosen = headline(usable)
    if chosen is None:
        return "".join(f'<figure>{p}</figure>' for p in parts)
    metric, title, value = chosen
    parts.append(svg.scatter(
        f"Cost against quality: tokens per question vs {title}",
        [(r.run_key, float(r.mean_metrics.tokens_sent), value(r)) for r in usable],
        "tokens sent per question", title, fmt_x=lambda v: f"{v:,.0f}",
        fmt_y=(pct if metric in ("iou", "embedding_answer_similarity") else (lambda v: f"{v:.1f}")),
    ))
    return "".join(f'<figure>{p}</figure>' for p in parts)


def managerial(experiment: evaluator_pb2.Experiment) -> str:
    runs = list(experiment.runs)
    notes = []
    if experiment.state != evaluator_pb2.EXPERIMENT_STATE_SUCCEEDED:
        notes.append(f"This experiment is {STATE.get(experiment.state, 'unknown')}: "
                     f"{experiment.questions_done} of {experiment.questions_total} questions finished. "
                     f"{experiment.error}")
    for run in runs:
        if run.error:
            notes.append(f"{run.run_key} did not run: {run.error}")
    if not experiment.provenance.judge_model.startswith("none") and any(
        not r.mean_judge.faithfulness.measured for r in runs if r.questions_done
    ):
        notes.append("Some judge scores could not be measured; means use measured questions only.")
    judged = any(getattr(r.mean_judge, m).measured for r in runs for m in JUDGE_NAMES) or (
        experiment.provenance.judge_model and not experiment.provenance.judge_model.startswith("none"))
    if not judged and not experiment.config.retrieval_only:
        notes.append("No judge model was configured: the LLM-as-judge scores were not measured.")
    warn = "".join(f'<p class="warn">{e(n)}</p>' for n in notes)
    return (
        '<section id="managerial"><h2>Managerial view</h2>'
        f'<p class="verdict">{verdict(runs)}</p>{warn}'
        f"{summary_table(runs, judged)}"
        '<p class="muted">Recall, precision and IoU are counted in characters of the reference excerpts '
        "(the Chroma report's definitions). Expanded measures read the context the LLM sees; "
        '"hits only" reads the top-k hits alone.</p>'
        f"{plots(runs)}</section>"
    )


# -- the technical view ----------------------------------------------------

def _json(message) -> str:
    return json.dumps(json_format.MessageToDict(message, preserving_proto_field_name=True), indent=2,
                      ensure_ascii=False)


def config_section(experiment: evaluator_pb2.Experiment) -> str:
    p = experiment.provenance
    rows = [
        ("experiment id", experiment.experiment_id), ("state", STATE.get(experiment.state, "?")),
        ("question set", experiment.config.question_set_id), ("question-set hash", experiment.question_set_hash),
        ("top_k", experiment.config.retrieval.top_k),
        ("vector search", "exact: every candidate scored, never an approximate HNSW graph"),
        ("neighbours (fixed_size)", f"±{experiment.config.retrieval.neighbor_prev}/{experiment.config.retrieval.neighbor_next}"),
        ("embedding model", p.embedding_model), ("answer model", p.answer_model), ("judge model", p.judge_model),
        ("judge prompt version", p.judge_prompt_version), ("extractive method", p.extractive_method or "–"),
        ("code version", p.code_version),
        ("documents", ", ".join(f"{d} (sha256 {h[:12]})" for d, h in sorted(p.document_hashes.items()))),
        ("index sets", "each run searched its own set per document (config_id below); the active sets "
                       "were never changed"),
    ]
    table = "<table>" + "".join(f"<tr><th>{e(k)}</th><td>{e(v)}</td></tr>" for k, v in rows) + "</table>"
    run_rows = []
    for run in experiment.runs:
        knobs = ", ".join(f"{k}={knob_label(v)}" for k, v in sorted(run.spec.knobs.items()))
        window = run.retrieval.window if run.retrieval.HasField("window") else "strategy default"
        processed = "reused the index" if run.index_reused else f"{run.chunk_count} chunks in {run.processing_seconds:.1f}s"
        run_rows.append(
            f"<tr><td>{e(run.run_key)}</td><td>{e(knobs)}</td><td>{e(run.config_id)}</td><td>{e(window)}</td>"
            f"<td>{e(processed)}</td><td>{e(run.error or 'ok')}</td></tr>"
        )
    runs = ("<table><thead><tr><th>run</th><th>knobs</th><th>config id</th><th>window</th><th>processing</th>"
            "<th>status</th></tr></thead><tbody>" + "".join(run_rows) + "</tbody></table>")
    return (f"<h3>Configuration and provenance</h3>{table}<h3>Runs</h3>{runs}"
            f"<details><summary>The full configuration as JSON</summary><pre>{e(_json(experiment.config))}</pre></details>")


def chunk_html(item: common_pb2.RetrievedChunk, role: str = "") -> str:
    chunk = item.chunk
    label = role or LABEL.get(item.label, "chunk")
    text = chunk.content
    cut = len(text) > MAX_CHUNK_CHARS
    shown = text[:MAX_CHUNK_CHARS] + ("…" if cut else "")
    score = f" · score {item.score:.3f}" if item.HasField("score") else ""
    rank = f" · rank {item.rank}" if item.rank else ""
    heading = " › ".join(chunk.heading_path)
    meta = (f"{label}{rank}{score} · {chunk.document_name} · #{chunk.chunk_index} · "
            f"chars {chunk.start_char}–{chunk.end_char} · {chunk.token_count} tokens"
            + (f" · {heading}" if heading else "") + (" · text cut for the report" if cut else ""))
    enriched = ""
    if chunk.HasField("enriched_content"):
        enriched = f"<details><summary>embedded text</summary><pre>{e(chunk.enriched_content[:MAX_CHUNK_CHARS])}</pre></details>"
    return f'<div class="chunk {e(label)}"><div class="muted">{e(meta)}</div><pre>{e(shown)}</pre>{enriched}</div>'


def tree_html(tree: common_pb2.ExpansionTree) -> str:
    items = []
    for node in tree.hits:
        parts = [chunk_html(n) for n in node.neighbors_prev]
        parts.append(chunk_html(node.hit, "hit"))
        parts += [chunk_html(n) for n in node.neighbors_next]
        parts += [chunk_html(n, "window") for n in node.window]
        if node.HasField("parent"):
            parts.append(chunk_html(node.parent, "parent"))
        items.append(f"<li>{''.join(parts)}</li>")
    return f"<ol>{''.join(items)}</ol>" if items else '<p class="muted">no hits</p>'


def judge_html(scores: evaluator_pb2.JudgeScores) -> str:
    rows = []
    for measure, title in JUDGE_NAMES.items():
        score = getattr(scores, measure)
        if measure == "hallucination":
            value = ("yes" if score.value >= 0.5 else "no") if score.measured else "not measured"
        else:
            value = f"{score.value:g}" if score.measured else "not measured"
        rows.append(f"<tr><th>{e(title.split(' (')[0])}</th><td>{e(value)}</td><td>{e(score.reason)}</td></tr>")
    version = f'<p class="muted">judge {e(scores.judge_model or "–")} · prompt {e(scores.prompt_version)}</p>'
    return "<table>" + "".join(rows) + "</table>" + version


def result_html(result: evaluator_pb2.QuestionResult) -> str:
    m = result.metrics
    facts = [f"{m.chunks_sent} chunks", f"{m.tokens_sent:,} tokens", f"retrieval {m.retrieve_ms:.0f} ms"]
    if m.labelled:
        facts = [f"recall {pct(m.recall)}", f"precision {pct(m.precision)}", f"IoU {pct(m.iou)}",
                 f"hit {'yes' if m.hit_rate else 'no'}", f"MRR {m.mrr:.2f}",
                 f"hits only: recall {pct(m.recall_hits)}, IoU {pct(m.iou_hits)}, MRR {m.mrr_hits:.2f}"] + facts
    if m.embedding_answer_similarity >= 0:
        facts.append(f"answer similarity (embeddings) {m.embedding_answer_similarity:.3f}")
    error = f'<p class="warn">{e(result.error)}</p>' if result.error else ""
    answer = ""
    if result.answer:
        kind = " (extractive: sentences of the context, no LLM)" if result.extractive else ""
        answer = f"<h5>Answer{e(kind)}</h5><pre>{e(result.answer)}</pre>"
    judged = judge_html(result.judge) if result.HasField("judge") else ""
    return (f"<details><summary>{e(result.run_key)} — {e(' · '.join(facts))}</summary>{error}{answer}{judged}"
            f"<h5>Expansion tree (hits in score order)</h5>{tree_html(result.expansion_tree)}"
            f"<details><summary>Flat context sent to the LLM ({len(result.retrieved_chunks)} chunks, document order)"
            f"</summary>{''.join(chunk_html(c) for c in result.retrieved_chunks)}</details></details>")


def questions_section(question_set: evaluator_pb2.QuestionSet, results: Sequence[evaluator_pb2.QuestionResult]) -> str:
    by_question: dict[str, list[evaluator_pb2.QuestionResult]] = {}
    for result in results:
        by_question.setdefault(result.question_id, []).append(result)
    blocks = []
    for number, question in enumerate(question_set.questions, start=1):
        done = by_question.get(question.question_id, [])
        refs = "".join(
            f'<div class="chunk"><div class="muted">reference · {e(r.document_id)} · chars {r.start_char}–{r.end_char}'
            f"</div><pre>{e(r.content)}</pre></div>" for r in question.references
        )
        expected = f"<h5>Expected answer</h5><pre>{e(question.expected_answer)}</pre>" if question.expected_answer else ""
        blocks.append(
            f"<details><summary>Q{number}. {e(question.text)} <span class=\"muted\">({len(done)} runs)</span></summary>"
            f"{expected}{('<h5>References</h5>' + refs) if refs else ''}{''.join(result_html(r) for r in done)}</details>"
        )
    return "<h3>Per question</h3>" + "".join(blocks)


def technical(experiment: evaluator_pb2.Experiment, question_set: evaluator_pb2.QuestionSet,
              results: Sequence[evaluator_pb2.QuestionResult]) -> str:
    return (f'<section id="technical"><h2>Technical view</h2>{config_section(experiment)}'
            f"{questions_section(question_set, results)}</section>")


def render(experiment: evaluator_pb2.Experiment, question_set: evaluator_pb2.QuestionSet,
           results: Sequence[evaluator_pb2.QuestionResult], view: int = evaluator_pb2.REPORT_VIEW_BOTH) -> str:
    both = view in (evaluator_pb2.REPORT_VIEW_BOTH, evaluator_pb2.REPORT_VIEW_UNSPECIFIED)
    body = []
    if both or view == evaluator_pb2.REPORT_VIEW_MANAGERIAL:
        body.append(managerial(experiment))
    if both or view == evaluator_pb2.REPORT_VIEW_TECHNICAL:
        body.append(technical(experiment, question_set, results))
    nav = '<nav><a href="#managerial">Managerial view</a> · <a href="#technical">Technical view</a></nav>' if both else ""
    created = experiment.created_at.ToDatetime().strftime("%Y-%m-%d %H:%M UTC")
    strategies = ", ".join(dict.fromkeys(g.strategy for g in experiment.config.strategies))
    return (
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        f"<title>{e('ChunkLab experiment: ' + experiment.config.name)}</title><style>{STYLE}</style></head><body>"
        f"<header><h1>{e(experiment.config.name)}</h1>"
        f"<p>{e(strategies)} on question set {e(question_set.name)} ({question_set.question_count} questions) · "
        f"{neighbour_badge(experiment)}<span class=\"badge\">{e(experiment.provenance.embedding_model)}</span>"
        f"<span class=\"badge\">top_k {experiment.config.retrieval.top_k}</span> · {e(STATE.get(experiment.state, '?'))} · "
        f"started {e(created)}</p></header>{nav}{''.join(body)}</body></html>"
    )
