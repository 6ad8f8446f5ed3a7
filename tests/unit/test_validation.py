"""Winners chosen on some questions and confirmed on others (ADR 0046), on hand-built
experiments: the split, the choice and every number checked against a computation of
its own; the report's sentence; refusals of settings that mean nothing."""

from __future__ import annotations

import numpy as np
import pytest

from chunklab.errors import InvalidArgument
from chunklab.v1 import evaluator_pb2 as pb
from chunklab.views.winner_view import winner_view
from services.evaluator.experiments import holdout
from services.evaluator.experiments.summary import summarize
from services.evaluator.reports import report


def experiment(values: dict[str, list[float]], **setting) -> tuple[pb.Experiment, list[pb.QuestionResult]]:
    """Runs with one recall per question (the deciding measure, ADR 0058; IoU = half of it), summarised
    as the evaluator does."""
    results = [
        pb.QuestionResult(
            question_id=f"q{i:03d}",
            question=f"question {i}",
            run_key=run,
            metrics=pb.RetrievalMetrics(labelled=True, recall=recall, iou=recall / 2, embedding_answer_similarity=-1),
        )
        for run, column in values.items()
        for i, recall in enumerate(column)
    ]
    built = pb.Experiment(
        experiment_id="e1",
        config=pb.ExperimentConfig(validation=pb.Validation(**setting)),
        runs=[pb.ExperimentRun(run_key=run, questions_total=len(c)) for run, c in values.items()],
    )
    summarize(built, results)
    return built, results


def lucky_and_steady() -> dict[str, list[float]]:
    # "lucky" is excellent on the first 20 questions and poor on the other 20; "steady" is fair on all.
    return {"lucky": [0.9] * 20 + [0.05] * 20, "steady": [0.5] * 40}


def test_holdout_chooses_on_its_half_and_scores_the_other_half():
    built, results = experiment(lucky_and_steady(), mode=pb.VALIDATION_MODE_HOLDOUT, seed=11)
    found = built.validation
    assert (found.selection_questions, found.confirmation_questions) == (20, 20)
    chosen_on = set(found.selection_question_ids)
    confirm = sorted({f"q{i:03d}" for i in range(40)} - chosen_on)
    recall = {(r.run_key, r.question_id): r.metrics.recall for r in results}

    def mean(run, questions):
        return float(np.mean([recall[(run, q)] for q in questions]))

    winner = max(("lucky", "steady"), key=lambda run: mean(run, chosen_on))
    assert found.winner_run_key == winner and found.all_questions_winner_run_key == "steady"  # 0.5 against 0.475
    head = found.scores[0]
    assert head.metric == "recall"
    assert head.selection_mean == pytest.approx(mean(winner, chosen_on))
    assert head.confirmation_mean == pytest.approx(mean(winner, confirm))
    assert head.ci_low <= head.confirmation_mean <= head.ci_high
    assert head.all_mean == pytest.approx(mean(winner, [f"q{i:03d}" for i in range(40)]))
    iou = next(s for s in found.scores if s.metric == "iou")  # the other labelled measures, same split
    assert iou.confirmation_mean == pytest.approx(float(np.mean([recall[(winner, q)] / 2 for q in confirm])))
    # The same seed splits the same way; another seed, another way.
    assert experiment(lucky_and_steady(), mode=pb.VALIDATION_MODE_HOLDOUT, seed=11)[0].validation == found
    other = experiment(lucky_and_steady(), mode=pb.VALIDATION_MODE_HOLDOUT, seed=12)[0].validation
    assert list(other.selection_question_ids) != list(found.selection_question_ids)


def test_the_default_is_a_seeded_half_and_none_says_it_is_optimistic():
    built, _ = experiment(lucky_and_steady())
    assert built.validation.mode == pb.VALIDATION_MODE_HOLDOUT and built.validation.selection_questions == 20
    none, _ = experiment(lucky_and_steady(), mode=pb.VALIDATION_MODE_NONE)
    assert none.validation.winner_run_key == "steady"  # 0.5 against 0.475 over every question
    assert none.validation.confirmation_questions == 0
    assert "which flatters it" in winner_view(none.validation, report.METRICS)["text"]


def test_k_fold_scores_each_fold_with_the_run_the_other_folds_chose():
    rng = np.random.default_rng(5)
    values = {"a": list(rng.uniform(0.2, 0.6, 30)), "b": list(rng.uniform(0.25, 0.55, 30)), "c": [0.1] * 30}
    built, results = experiment(values, mode=pb.VALIDATION_MODE_K_FOLD, folds=3, seed=4)
    found = built.validation
    assert len(found.fold_winners) == 3 and set(found.fold_winners) <= {"a", "b"}  # c never wins a fold
    assert found.winner_run_key == max(set(found.fold_winners), key=list(found.fold_winners).count)
    # Pooled over the folds, each question is scored once, by a or b (the run its fold's selection chose).
    head = found.scores[0]
    a, b = np.asarray(values["a"]), np.asarray(values["b"])
    assert np.minimum(a, b).mean() <= head.confirmation_mean <= np.maximum(a, b).mean()
    if len(set(found.fold_winners)) == 1:
        assert head.confirmation_mean == pytest.approx(float(np.mean(values[found.winner_run_key])))
    assert found.confirmation_questions == 30
    text = winner_view(found, report.METRICS)["text"]
    assert text.startswith(f"In 3-fold validation (seed 4), {found.winner_run_key} was chosen in")


def test_among_equally_good_configurations_the_winner_holds_up_worse_than_it_was_chosen():
    # Twenty configurations with the same quality: the best on the selection half is only lucky there.
    rng = np.random.default_rng(2026)
    values = {f"run-{i:02d}": list(rng.uniform(0.0, 0.2, 60)) for i in range(20)}
    found = experiment(values, mode=pb.VALIDATION_MODE_HOLDOUT, seed=1)[0].validation
    head = found.scores[0]
    assert head.selection_mean > head.confirmation_mean
    assert head.selection_mean > max(float(np.mean(v)) for v in values.values())  # the best of 20 draws is lucky
    view = winner_view(found, report.METRICS)
    assert view["rows"][0]["metric"] == "recall" and "interval" in view["text"]


def test_validation_without_enough_runs_or_questions_says_why():
    one, _ = experiment({"only": [0.3] * 10})
    assert one.validation.unavailable.startswith("fewer than two runs")
    few, _ = experiment({"a": [0.3] * 3, "b": [0.2] * 3})
    assert few.validation.unavailable == "3 questions have recall for every run; holdout validation needs at least 4"
    assert winner_view(few.validation, report.METRICS)["text"].startswith("The winner could not be checked")


@pytest.mark.parametrize(
    "setting, message",
    [
        ({"mode": 9}, "validation.mode 9 is not a ValidationMode"),
        ({"selection_share": 1.0}, "validation.selection_share must be between 0 and 1"),
        ({"folds": 1}, "validation.folds must be between 2 and 20, got 1"),
        ({"metric": "speed"}, "validation.metric 'speed' is not a measure"),
    ],
)
def test_settings_that_mean_nothing_are_refused(setting, message):
    with pytest.raises(InvalidArgument) as refused:
        holdout.check(pb.Validation(**setting))
    assert message in refused.value.message
