"""A run's figures per document and per collection, from its finished questions (ADR 0118).

Each question counts where its reference excerpts lie (QuestionResult.document_ids):
its own recall, precision, IoU and tokens sent go into the mean of every document it
references, and of every collection those documents are in. The means are the run's
own (scoring.mean_metrics), so a document's figures read exactly like the run's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from chunklab.v1 import evaluator_pb2
from services.evaluator.judging.scoring import mean_metrics

DEFAULT_COLLECTION = "default"


def question_documents(question: evaluator_pb2.Question) -> list[str]:
    """The documents a question's references lie in, in the order they are first named."""
    return list(dict.fromkeys(r.document_id for r in question.references if r.document_id))


def figures(
    results: Sequence[evaluator_pb2.QuestionResult],
    names: Mapping[str, str],
    collections: Mapping[str, str],
) -> tuple[list[evaluator_pb2.DocumentFigures], list[evaluator_pb2.DocumentFigures]]:
    """(per document, per collection) for one run's results. `names` and `collections`
    map document ids to file names and collections (an unknown id shows as itself, in
    the default collection). Documents and collections come in the order first met."""
    by_document: dict[str, list[evaluator_pb2.RetrievalMetrics]] = {}
    by_collection: dict[str, list[evaluator_pb2.RetrievalMetrics]] = {}
    for result in results:
        for document_id in result.document_ids:
            by_document.setdefault(document_id, []).append(result.metrics)
        for collection in _collections(result.document_ids, collections):
            by_collection.setdefault(collection, []).append(result.metrics)
    per_document = [
        evaluator_pb2.DocumentFigures(
            document_id=document_id,
            document_name=names.get(document_id) or document_id,
            collection=collections.get(document_id) or DEFAULT_COLLECTION,
            metrics=mean_metrics(items),
        )
        for document_id, items in by_document.items()
    ]
    per_collection = [
        evaluator_pb2.DocumentFigures(collection=collection, metrics=mean_metrics(items))
        for collection, items in by_collection.items()
    ]
    return per_document, per_collection


def fill(run: evaluator_pb2.ExperimentRun, results: Sequence[evaluator_pb2.QuestionResult], provenance) -> None:
    """Sets the run's per-document and per-collection figures from its results."""
    per_document, per_collection = figures(results, provenance.document_names, provenance.document_collections)
    del run.per_document[:]
    del run.per_collection[:]
    run.per_document.extend(per_document)
    run.per_collection.extend(per_collection)


def _collections(document_ids: Iterable[str], collections: Mapping[str, str]) -> list[str]:
    return list(dict.fromkeys(collections.get(d) or DEFAULT_COLLECTION for d in document_ids))
