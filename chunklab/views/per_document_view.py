"""A run's per-document and per-collection figures as the CLI, the reports and the
Experiments page show them (the evaluator computes them once: ADR 0118), and the
documents where a run falls short of its own overall recall (ADR 0119)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from chunklab.v1 import evaluator_pb2
from chunklab.views import numbers

# A document is where a run fails when its recall there is at least this far below the
# run's overall recall, on enough questions to be more than one unlucky question.
SHORTFALL = 0.2
MIN_QUESTIONS = 3


def figure_row(figures: evaluator_pb2.DocumentFigures) -> dict:
    """One document (or collection) as plain values: fractions 0..1, tokens per question."""
    m = figures.metrics
    row = {"document": figures.document_name, "document_id": figures.document_id} if figures.document_id else {}
    row.update(
        collection=figures.collection,
        questions=m.questions,
        questions_labelled=m.questions_labelled,
        recall=m.recall,
        precision=m.precision,
        iou=m.iou,
        tokens_per_question=m.tokens_sent,
    )
    return row


def document_rows(run: evaluator_pb2.ExperimentRun) -> list[dict]:
    return [figure_row(f) for f in run.per_document]


def collection_rows(run: evaluator_pb2.ExperimentRun) -> list[dict]:
    return [figure_row(f) for f in run.per_collection]


def shown_rows(figures: Iterable[evaluator_pb2.DocumentFigures]) -> list[dict]:
    """Rows for a table a person reads: the name, then each measure formatted."""
    return [
        {
            "name": f.document_name or f.collection,
            "collection": f.collection,
            "questions": numbers.count(f.metrics.questions_labelled),
            "recall": numbers.percent(f.metrics.recall),
            "precision": numbers.percent(f.metrics.precision),
            "iou": numbers.percent(f.metrics.iou),
            "tokens": numbers.count(f.metrics.tokens_sent),
        }
        for f in figures
    ]


@dataclass(frozen=True)
class Shortfall:
    document: str
    recall: float
    overall: float
    questions: int


def shortfalls(run: evaluator_pb2.ExperimentRun) -> list[Shortfall]:
    """The documents where the run's recall is SHORTFALL or more below its overall recall
    (with at least MIN_QUESTIONS labelled questions there), worst first. A run over one
    document has none: there is nothing to fall short of."""
    overall = run.mean_metrics.recall
    if len(run.per_document) < 2 or not run.mean_metrics.questions_labelled:
        return []
    found = [
        Shortfall(f.document_name or f.document_id, f.metrics.recall, overall, f.metrics.questions_labelled)
        for f in run.per_document
        if f.metrics.questions_labelled >= MIN_QUESTIONS and overall - f.metrics.recall >= SHORTFALL - 1e-9
    ]
    return sorted(found, key=lambda s: s.recall)


def shortfall_sentence(label: str, run: evaluator_pb2.ExperimentRun) -> str:
    """For a manager: where the configuration fails, or "" when it holds on every document."""
    found = shortfalls(run)
    if not found:
        return ""
    worst = found[0]
    others = f" (and on {numbers.counted(len(found) - 1, 'other document')})" if len(found) > 1 else ""
    return (
        f"{label} finds {numbers.percent(worst.overall)} of the answers overall but only "
        f"{numbers.percent(worst.recall)} in {worst.document}{others}: check that document before relying on it."
    )


def question_rows(experiment: evaluator_pb2.Experiment, run_key: str) -> list[dict]:
    """The run's questions one by one (the experiment read with its results), each with
    the documents its references lie in, by name."""
    names = experiment.provenance.document_names
    return [
        {
            "question_id": r.question_id,
            "question": r.question,
            "documents": [names.get(d) or d for d in r.document_ids],
            "labelled": r.metrics.labelled,
            "recall": r.metrics.recall,
            "precision": r.metrics.precision,
            "iou": r.metrics.iou,
            "tokens": r.metrics.tokens_sent,
            "error": r.error,
        }
        for r in experiment.results
        if r.run_key == run_key
    ]


def run_tables(runs: Iterable[evaluator_pb2.ExperimentRun]) -> list[dict]:
    """Each run that has per-document figures: its documents' rows and, when its documents
    lie in more than one collection, its collections' rows (the report's technical view)."""
    return [
        {
            "run_key": run.run_key,
            "documents": shown_rows(run.per_document),
            "collections": shown_rows(run.per_collection) if len(run.per_collection) > 1 else [],
        }
        for run in runs
        if run.per_document
    ]


def chosen_shortfalls(experiment: evaluator_pb2.Experiment) -> list[str]:
    """The sentences for the runs the verdict names (the winner, else the leaders): where
    each fails on a document the others of its documents do not show (ADR 0119)."""
    chosen = [experiment.verdict.winner_run_key] if experiment.verdict.winner_run_key else experiment.verdict.leaders
    by_key = {run.run_key: run for run in experiment.runs}
    sentences = (shortfall_sentence(key, by_key[key]) for key in chosen if key in by_key)
    return [s for s in sentences if s]
