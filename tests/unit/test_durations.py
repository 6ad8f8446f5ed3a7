"""The dry run's time from finished runs' speeds (services/evaluator/experiments/estimate.py), on
hand-built experiments: medians scaled to the plan, and no number without a finished run."""

from __future__ import annotations

from chunklab.v1 import evaluator_pb2 as pb
from services.evaluator.experiments.estimate import Speeds


def finished(*runs: tuple[float, float, float, float, bool], documents: int = 2) -> pb.Experiment:
    """An experiment over `documents` documents, a run per (processing s, retrieve, answer, judge ms, reused)."""
    return pb.Experiment(
        state=pb.EXPERIMENT_STATE_SUCCEEDED,
        provenance=pb.ExperimentProvenance(document_hashes={f"d{i}": "h" for i in range(documents)}),
        runs=[
            pb.ExperimentRun(
                questions_done=5,
                processing_seconds=p,
                index_reused=reused,
                mean_metrics=pb.RetrievalMetrics(retrieve_ms=r, answer_ms=a, judge_ms=j),
            )
            for p, r, a, j, reused in runs
        ],
    )


def test_the_time_is_the_median_speeds_scaled_to_the_plan():
    speeds = Speeds.of(
        [
            finished((4.0, 20.0, 0.0, 0.0, False), (8.0, 40.0, 0.0, 0.0, False)),  # 2 and 4 s per document
            finished((0.0, 30.0, 500.0, 0.0, True), documents=1),  # reused its index: no processing speed
            finished((3.0, 30.0, 300.0, 900.0, False), documents=1),  # 3 s per document
        ]
    )
    assert speeds == Speeds(process_s_per_document=3.0, retrieve_ms=30.0, answer_ms=400.0, judge_ms=900.0)
    # 2 runs x (3 documents x 3 s + 10 questions x 30 ms) = 18.6 s, retrieval only.
    assert speeds.seconds(runs=2, documents=3, questions=10, answered=False, judged=False) == 18.6
    # Answered and judged: each question also takes 400 + 900 ms.
    assert speeds.seconds(runs=2, documents=3, questions=10, answered=True, judged=True) == 2 * (9 + 10 * 1.33)


def test_without_a_finished_run_there_is_no_time():
    assert Speeds.of([]).seconds(runs=1, documents=1, questions=1, answered=False, judged=False) is None
    unfinished = pb.Experiment(runs=[pb.ExperimentRun(questions_done=0, processing_seconds=5.0)])
    assert Speeds.of([unfinished]) == Speeds(None, None, None, None)
