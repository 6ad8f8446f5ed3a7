"""The technical view of an experiment's report: configuration, provenance, every
question with each run's measures, ranking and context, and the text the results
point to, each character once (ADR 0068).

At the scale of a real experiment (20 runs x 276 questions) the view is mostly
repetition: the same chunks come back for many questions and the configurations
overlap one another. So a result is one table row (its measures, its hits in
score order with what each pulled in, as links), and the chunks' text is the
documents' own text, each stretch that any shown chunk covers written once, with
an anchor where each chunk starts. A chunk whose text is not a stretch of the
document (contextual strategies embed more; a text that differs from the
canonical one) keeps a card of its own. Everything stays plain, searchable HTML
without script. Plain view data here; report_technical.html.j2 lays it out.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from google.protobuf import json_format

from chunklab import experiment_state, knobs
from chunklab.text import pages
from chunklab.v1 import common_pb2, evaluator_pb2
from chunklab.views import numbers, retrieval_view
from chunklab.views.metric_format import MetricFormat, judge_value, plural, score
from services.evaluator.judging import scoring

# A card's text (chunks that are not a stretch of their document) is cut here, as before.
MAX_CHUNK_CHARS = 1200
# A result row shows every measure of these groups, in the catalogue's order and words; the
# hits-only and rank measures stay in the managerial table, the judge's scores go under the row.
ROW_GROUPS = ("labelled", "efficiency")


@dataclass
class Anchor:
    """Where a chunk starts in its document's text: its link id and what the marker says."""

    link: str
    at: int
    marker: str


@dataclass
class Stretch:
    """A run of a document's text that shown chunks cover, cut where a chunk starts."""

    start: int
    end: int
    text: str
    anchors: list[Anchor] = field(default_factory=list)

    def pieces(self) -> list[dict]:
        """The text between anchors: each piece opens with its anchors (several chunks may start at once)."""
        anchors = sorted(self.anchors, key=lambda a: (a.at, int(a.link[1:])))
        cuts = sorted({self.start, *(a.at for a in anchors)})
        out = []
        for n, at in enumerate(cuts):
            end = cuts[n + 1] if n + 1 < len(cuts) else self.end
            out.append(
                {"anchors": [a for a in anchors if a.at == at], "text": self.text[at - self.start : end - self.start]}
            )
        return out


def _is_stretch(chunk: common_pb2.Chunk) -> bool:
    return (
        not chunk.HasField("enriched_content")
        and chunk.end_char > chunk.start_char
        and len(chunk.content) == chunk.end_char - chunk.start_char
    )


def _marker(chunk: common_pb2.Chunk) -> str:
    """What the place where a chunk starts says once a link led there: which chunk, its range and pages."""
    config = f" {chunk.config_id}" if chunk.config_id else ""
    page = pages.page_label(chunk.first_page, chunk.last_page)
    return (
        f"{chunk.strategy or 'chunk'}{config} · {retrieval_view.unit_name(chunk)} {chunk.chunk_index} · "
        f"chars {numbers.count(chunk.start_char)}–{numbers.count(chunk.end_char)}{f' · {page}' if page else ''} · "
        f"{numbers.counted(chunk.token_count, 'token')}"
    )


class Texts:
    """Every chunk any result shows, once: as anchors in its document's stretches of text, or
    as a card of its own; `link(chunk_id)` is where a result points to."""

    def __init__(self, chunks: Iterable[common_pb2.Chunk]) -> None:
        distinct: dict[str, common_pb2.Chunk] = {}
        for chunk in chunks:
            distinct.setdefault(chunk.chunk_id, chunk)
        ordered = sorted(
            distinct.values(),
            key=lambda c: (
                c.document_name or c.document_id,
                c.start_char,
                c.end_char,
                c.strategy,
                c.config_id,
                c.chunk_index,
            ),
        )
        self.links = {c.chunk_id: f"t{n}" for n, c in enumerate(ordered, 1)}
        self.documents: dict[str, dict] = {}
        self.cards: list[common_pb2.Chunk] = []
        for chunk in ordered:
            if not (_is_stretch(chunk) and self._place(chunk)):
                self.cards.append(chunk)

    def _place(self, chunk: common_pb2.Chunk) -> bool:
        """Adds the chunk's text to its document's stretches; False when it disagrees with the text there."""
        name = chunk.document_name or chunk.document_id
        document = self.documents.setdefault(name, {"name": name, "stretches": []})
        stretches: list[Stretch] = document["stretches"]
        last = stretches[-1] if stretches else None
        if last is not None and chunk.start_char <= last.end:  # chunks come in order of their start
            shared = min(chunk.end_char, last.end)
            if (
                last.text[chunk.start_char - last.start : shared - last.start]
                != chunk.content[: shared - chunk.start_char]
            ):
                return False
            if chunk.end_char > last.end:
                last.text += chunk.content[last.end - chunk.start_char :]
                last.end = chunk.end_char
        else:
            last = Stretch(chunk.start_char, chunk.end_char, chunk.content)
            stretches.append(last)
        last.anchors.append(Anchor(self.links[chunk.chunk_id], chunk.start_char, _marker(chunk)))
        return True

    def views(self) -> list[dict]:
        return [
            {
                "name": d["name"],
                "characters": sum(s.end - s.start for s in d["stretches"]),
                "stretches": [{"start": s.start, "end": s.end, "pieces": s.pieces()} for s in d["stretches"]],
            }
            for d in self.documents.values()
        ]

    def card_views(self) -> list[dict]:
        return [
            {"link": self.links[c.chunk_id], "marker": _marker(c), "card": retrieval_view.text_view(c, MAX_CHUNK_CHARS)}
            for c in self.cards
        ]


def _shown(result: evaluator_pb2.QuestionResult) -> list[common_pb2.Chunk]:
    return [
        *(item.chunk for item in result.retrieved_chunks),
        *(chunk for node in result.expansion_tree.hits for chunk in scoring.node_chunks(node)),
    ]


def _links(items: Sequence[common_pb2.RetrievedChunk], links: dict[str, str]) -> list[dict]:
    return [{"link": links[i.chunk.chunk_id], "index": i.chunk.chunk_index} for i in items]


def _hits(tree: common_pb2.ExpansionTree, links: dict[str, str]) -> list[dict]:
    """The hits in score order, each with what it pulled in before and after it."""
    out = []
    for node in tree.hits:
        index = node.hit.chunk.chunk_index
        before = [w for w in node.window if w.chunk.chunk_index < index]
        after = [w for w in node.window if w.chunk.chunk_index >= index]
        out.append(
            {
                "rank": node.hit.rank,
                "link": links[node.hit.chunk.chunk_id],
                "index": index,
                "score": score(node.hit.score) if node.hit.HasField("score") else "",
                "before": _links([*node.neighbors_prev, *before], links),
                "after": _links([*node.neighbors_next, *after], links),
                "parent": _links([node.parent], links) if node.HasField("parent") else [],
            }
        )
    return out


def _judge(scores: evaluator_pb2.JudgeScores, metrics: MetricFormat) -> list[dict]:
    return [
        {
            "name": measure.replace("_", " "),
            "value": judge_value(measure, getattr(scores, measure)),
            "reason": getattr(scores, measure).reason,
        }
        for measure in metrics.judge_scores()
    ]


def result_row(result: evaluator_pb2.QuestionResult, links: dict[str, str], metrics: MetricFormat) -> dict:
    """One run's answer to one question as a table row (and its answer and judge beneath, if any)."""
    m = result.metrics
    values = [(name, metrics.of(name, m)) for name in metrics.groups(*ROW_GROUPS)]
    cells = ["–" if value is None else metrics.value(name, value) for name, value in values]
    judged = result.HasField("judge") and (
        result.judge.judge_model or any(getattr(result.judge, x).measured for x in metrics.judge_scores())
    )
    return {
        "run_key": result.run_key,
        "cells": cells,
        "error": result.error,
        "chunks_sent": m.chunks_sent,
        "retrieve_ms": numbers.milliseconds(m.retrieve_ms),
        "hits": _hits(result.expansion_tree, links),
        "answer": result.answer,
        "extractive": result.extractive,
        "similarity": (
            metrics.value("embedding_answer_similarity", m.embedding_answer_similarity)
            if m.embedding_answer_similarity >= 0
            else ""
        ),
        "judge": _judge(result.judge, metrics) if judged else [],
        "judge_model": result.judge.judge_model,
    }


def document_names(
    experiment: evaluator_pb2.Experiment, results: Sequence[evaluator_pb2.QuestionResult]
) -> dict[str, str]:
    """document id -> file name, from the chunks the results hold (the report is all the evaluator has)."""
    names = {}
    for result in results:
        for chunk in _shown(result):
            if chunk.document_id and chunk.document_name:
                names.setdefault(chunk.document_id, chunk.document_name)
    return names


def question_views(
    question_set: evaluator_pb2.QuestionSet,
    results: Sequence[evaluator_pb2.QuestionResult],
    links: dict[str, str],
    names: dict[str, str],
    metrics: MetricFormat,
) -> list[dict]:
    """Every question in the set's order: its expected answer, references (by file name) and a row per run."""
    by_question: dict[str, list[evaluator_pb2.QuestionResult]] = {}
    for result in results:
        by_question.setdefault(result.question_id, []).append(result)
    out = []
    for q in question_set.questions:
        rows = [result_row(r, links, metrics) for r in by_question.get(q.question_id, [])]
        out.append(
            {
                "text": q.text,
                "expected_answer": q.expected_answer,
                "rows": rows,
                "runs": plural(len(rows), "run"),
                "references": [
                    {
                        "document": names.get(r.document_id, r.document_id),
                        "start_char": r.start_char,
                        "end_char": r.end_char,
                        "content": r.content,
                    }
                    for r in q.references
                ],
            }
        )
    return out


def config_rows(
    experiment: evaluator_pb2.Experiment, question_set: evaluator_pb2.QuestionSet, names: dict[str, str]
) -> list[tuple[str, object]]:
    p = experiment.provenance
    documents = [
        f"{names.get(d, 'a document no result shows')} (id {d[:8]}, sha256 {h[:12]})"
        for d, h in sorted(p.document_hashes.items(), key=lambda kv: (names.get(kv[0], "~"), kv[0]))
    ]
    return [
        ("experiment id", experiment.experiment_id),
        ("state", experiment_state.name(experiment.state, "?")),
        (
            "question set",
            f"{question_set.name or 'unnamed'} · {plural(question_set.question_count, 'question')} · "
            f"{experiment.config.question_set_id[:8]} (as the Question-set dropdown names it)",
        ),
        ("question-set content hash", experiment.question_set_hash),
        ("top_k", experiment.config.retrieval.top_k),
        ("vector search", "exact: every candidate scored, never an approximate HNSW graph"),
        (
            "neighbours (fixed_size)",
            f"±{experiment.config.retrieval.neighbor_prev}/{experiment.config.retrieval.neighbor_next}",
        ),
        ("embedding model", p.embedding_model),
        ("answer model", p.answer_model),
        ("judge model", p.judge_model),
        ("judge prompt version", p.judge_prompt_version),
        ("extractive method", p.extractive_method or "–"),
        ("code version", p.code_version),
        ("documents", "; ".join(documents)),
        (
            "index sets",
            "each run searched its own index set per document (its config id below); the documents' "
            "active sets, which Query uses, were left as they were",
        ),
    ]


def run_row(run: evaluator_pb2.ExperimentRun) -> dict:
    """One run's configuration: its knobs, config id, window and how its index came to be."""
    return {
        "run_key": run.run_key,
        "config_id": run.config_id,
        "status": run.error or "ok",
        "knobs": ", ".join(f"{k}={knobs.label(v)}" for k, v in sorted(run.spec.knobs.items())),
        "window": run.retrieval.window if run.retrieval.HasField("window") else "strategy default",
        "processing": (
            "reused the index"
            if run.index_reused
            else f"{numbers.counted(run.chunk_count, 'chunk')} in {numbers.duration(run.processing_seconds)}"
        ),
    }


def technical(
    experiment: evaluator_pb2.Experiment,
    question_set: evaluator_pb2.QuestionSet,
    results: Sequence[evaluator_pb2.QuestionResult],
    metrics: MetricFormat,
) -> dict:
    texts = Texts(chunk for result in results for chunk in _shown(result))
    names = document_names(experiment, results)
    config = json.dumps(
        json_format.MessageToDict(experiment.config, preserving_proto_field_name=True), indent=2, ensure_ascii=False
    )
    return {
        "config": config_rows(experiment, question_set, names),
        "runs": [run_row(run) for run in experiment.runs],
        "config_json": config,
        "questions": question_views(question_set, results, texts.links, names, metrics),
        "columns": [metrics.label(name) for name in metrics.groups(*ROW_GROUPS)],
        "documents": texts.views(),
        "cards": texts.card_views(),
        "max_chars": MAX_CHUNK_CHARS,
    }
