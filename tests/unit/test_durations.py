"""This machine's speeds as the dry run reads them from finished runs
(services/evaluator/experiments/speeds.py, ADR 0088), on hand-built experiments: processing
seconds per character by strategy, seconds per question by mode, nothing from a run that did
not process or ask."""

from __future__ import annotations

from chunklab.v1 import common_pb2
from chunklab.v1 import evaluator_pb2 as pb
from services.evaluator.experiments.speeds import Measured, calibration_passages, mode


def run(strategy: str, seconds: float, characters: int, asked: int = 5, asking: float = 1.0) -> pb.ExperimentRun:
    return pb.ExperimentRun(
        spec=common_pb2.StrategySpec(name=strategy),
        processing_seconds=seconds,
        characters_processed=characters,
        questions_done=asked,
        asking_seconds=asking,
        mean_metrics=pb.RetrievalMetrics(retrieve_ms=20.0),
    )


def experiment(*runs: pb.ExperimentRun, **config) -> pb.Experiment:
    return pb.Experiment(state=pb.EXPERIMENT_STATE_SUCCEEDED, config=pb.ExperimentConfig(**config), runs=runs)


def test_speeds_are_medians_per_strategy_and_per_mode():
    measured = Measured.of(
        [
            experiment(run("fixed_size", 2.0, 1000), run("semantic", 8.0, 1000), retrieval_only=True),
            experiment(
                run("fixed_size", 4.0, 1000, asking=3.0),
                run("fixed_size", 0.0, 0, asking=4.0),  # reused its sets: no processing speed
                answer_model=pb.ModelEndpoint(model="extractive"),
                judge_model=pb.ModelEndpoint(model="none"),
            ),
        ]
    )
    assert measured.process_s_per_char == {"fixed_size": 0.003, "semantic": 0.008}
    assert measured.question_s == {("retrieval", False): 0.2, ("extractive", False): 0.7}
    assert measured.retrieve_s == 0.02 and measured.answer_s is None and measured.judge_s is None
    assert [spec.name for spec, _ in measured.processed] == ["fixed_size", "semantic", "fixed_size"]


def test_nothing_is_measured_without_a_run_that_processed_or_asked():
    unfinished = experiment(pb.ExperimentRun(questions_done=0, processing_seconds=5.0))
    assert Measured.of([unfinished]) == Measured() == Measured.of([])


def test_the_mode_names_how_questions_are_asked_and_the_calibration_text_is_fixed():
    assert mode(pb.ExperimentConfig(retrieval_only=True)) == ("retrieval", False)
    llm = pb.ExperimentConfig(answer_model=pb.ModelEndpoint(model="gpt"), judge_model=pb.ModelEndpoint(model="j"))
    assert mode(llm) == ("llm", True)
    assert calibration_passages() == calibration_passages() and len(set(calibration_passages())) == 24
