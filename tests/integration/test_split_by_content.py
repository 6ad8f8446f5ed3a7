"""The hold-out split follows the questions' content, never their ids (ADR 0080): one
question set imported into two fresh databases, the second time with its lines in
another order, gets new ids, yet the same seed chooses the same questions and the same
winner. The imports go through the evaluator behind gRPC in this process; the runs'
measures are hand-built per question text."""

from __future__ import annotations

import json

from chunklab.v1 import evaluator_pb2 as G
from services.evaluator.experiments.summary import summarize
from tests.support.evaluator_server import serve_evaluator
from tests.support.town import DEADLINE_S, TEXT, TIMEOUT_S, Peers

SENTENCES = [s for s in TEXT.split("\n\n") if not s.startswith("#")]
QUESTIONS = [
    {
        "question": f"What does the town say about {s.split()[1]} {i}?",
        "references": [{"document": "harwick", "content": s}],
    }
    for i, s in enumerate(SENTENCES)
]
# Per question: "wide" finds everything, "tight" misses on some; tight sends fewer tokens.
RECALL = {"wide": [1.0] * len(QUESTIONS), "tight": [1.0, 0.0, 1.0, 1.0, 0.5, 1.0, 0.0, 1.0, 1.0]}


def imported(stub, lines: list[dict]) -> G.QuestionSet:
    header = G.ImportHeader(
        name="harwick",
        format=G.QUESTION_SET_FORMAT_JSONL,
        excerpt_check=G.EXCERPT_CHECK_STRICT,
        document_ids={"harwick": "d-1"},
    )
    data = "\n".join(json.dumps(q) for q in lines).encode()
    requests = iter([G.ImportQuestionSetRequest(header=header), G.ImportQuestionSetRequest(data=data)])
    stored = stub.ImportQuestionSet(requests, timeout=DEADLINE_S)
    return stub.GetQuestionSet(G.GetQuestionSetRequest(question_set_id=stored.question_set_id), timeout=DEADLINE_S)


def validated(question_set: G.QuestionSet) -> tuple[G.Experiment, dict[str, str]]:
    """An experiment of two runs over the imported questions, summarised as the evaluator does."""
    number = {q["question"]: i for i, q in enumerate(QUESTIONS)}
    results = [
        G.QuestionResult(
            question_id=q.question_id,
            question=q.text,
            run_key=run,
            metrics=G.RetrievalMetrics(
                labelled=True,
                recall=RECALL[run][number[q.text]],
                iou=0.05 if run == "tight" else 0.02,
                tokens_sent=400 if run == "tight" else 1200,
                embedding_answer_similarity=-1,
            ),
        )
        for q in question_set.questions
        for run in RECALL
    ]
    experiment = G.Experiment(
        config=G.ExperimentConfig(validation=G.Validation(seed=3)),
        runs=[G.ExperimentRun(run_key=run, questions_total=len(QUESTIONS)) for run in RECALL],
    )
    summarize(experiment, results)
    return experiment, {q.question_id: q.text for q in question_set.questions}


def test_one_question_set_imported_twice_splits_the_same_way(tmp_path):
    splits, ids = [], []
    for name, lines in (("first", QUESTIONS), ("second", list(reversed(QUESTIONS)))):
        with serve_evaluator(Peers(), f"sqlite:///{tmp_path / name}.db", TIMEOUT_S) as stub:
            question_set = imported(stub, lines)
        assert question_set.question_count == len(QUESTIONS)
        experiment, text_of = validated(question_set)
        ids.append(set(text_of))
        chosen = sorted(text_of[q] for q in experiment.validation.selection_question_ids)
        splits.append((chosen, experiment.validation.winner_run_key, list(experiment.validation.leaders)))
    assert not ids[0] & ids[1]  # new ids at each import
    assert splits[0] == splits[1]
    assert len(splits[0][0]) == round(len(QUESTIONS) / 2)
