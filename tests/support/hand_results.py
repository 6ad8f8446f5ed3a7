"""Hand-built per-question results for the verdict, winner and plot tests: each run's
recall, IoU and tokens sent per question, question i asking "question i"."""

from __future__ import annotations

from chunklab.v1 import evaluator_pb2 as pb


def question_results(
    runs: dict[str, dict[str, list[float]]], ids: dict[int, str] | None = None
) -> list[pb.QuestionResult]:
    """One result per run and question: `runs` maps a run key to its "recall", "iou" and
    "tokens" per question (and, optionally, "documents": the document ids each question's
    references lie in); `ids` renames question i (default "q<i>", as `id_of` gives)."""
    return [
        pb.QuestionResult(
            question_id=(ids or {}).get(i, id_of(i)),
            question=f"question {i}",
            run_key=run,
            document_ids=values["documents"][i] if "documents" in values else [],
            metrics=pb.RetrievalMetrics(
                labelled=True,
                recall=recall,
                iou=values["iou"][i],
                tokens_sent=int(values["tokens"][i]),
                embedding_answer_similarity=-1,
            ),
        )
        for run, values in runs.items()
        for i, recall in enumerate(values["recall"])
    ]


def id_of(i: int) -> str:
    return f"q{i:02d}"
