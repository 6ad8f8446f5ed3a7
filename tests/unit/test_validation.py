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
    # "lucky" is excellent on the first 20 questions and poor on the other 20; "steady" is good on all.
    return {"lucky": [0.9] * 20 + [0.05] * 20, "steady": [0.7] * 40}


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
    assert found.winner_run_key == winner == "steady" and found.all_questions_winner_run_key == "steady"
    assert list(found.leaders) == ["steady"]
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
    assert none.validation.winner_run_key == "steady"  # 0.7 against 0.475 over every question
    assert none.validation.confirmation_questions == 0
    assert "which flatters it" in winner_view(none.validation, report.METRICS)["text"]


def test_k_fold_scores_each_fold_with_the_run_the_other_folds_chose():
    rng = np.random.default_rng(5)
    values = {"a": list(rng.uniform(0.5, 0.9, 30)), "b": list(rng.uniform(0.2, 0.45, 30)), "c": [0.1] * 30}
    built, results = experiment(values, mode=pb.VALIDATION_MODE_K_FOLD, folds=3, seed=4)
    found = built.validation
    assert list(found.fold_winners) == ["a"] * 3  # b and c never win a fold
    assert found.winner_run_key == "a" and list(found.leaders) == ["a"]  # the winner on every question
    head = found.scores[0]  # each question scored once, by the run its fold's selection chose
    assert head.confirmation_mean == pytest.approx(float(np.mean(values["a"])))
    assert found.confirmation_questions == 30
    text = winner_view(found, report.METRICS)["text"]
    assert text.startswith("In 3-fold validation (seed 4), a (the winner on every question) was chosen in 3 of 3")


def test_k_fold_scores_a_fold_whose_selection_ties_with_the_mean_of_its_leaders():
    values = {"a": [0.5] * 12, "b": [0.5] * 12}
    found = experiment(values, mode=pb.VALIDATION_MODE_K_FOLD, folds=3, seed=4)[0].validation
    assert list(found.fold_winners) == [""] * 3 and not found.winner_run_key and list(found.leaders) == ["a", "b"]
    assert found.scores[0].confirmation_mean == pytest.approx(0.5)
    text = winner_view(found, report.METRICS)["text"]
    assert text.startswith("On all 12 questions, a and b share the lead on recall") and "no single winner" in text


def test_among_equally_good_configurations_no_run_is_named_the_winner():
    # Twenty configurations with the same quality: the best on the selection half would only be
    # lucky there, so the rule names the leaders and no winner (ADR 0080), and there is nothing to confirm.
    rng = np.random.default_rng(2026)
    values = {f"run-{i:02d}": list(rng.uniform(0.0, 0.2, 60)) for i in range(20)}
    found = experiment(values, mode=pb.VALIDATION_MODE_HOLDOUT, seed=1)[0].validation
    assert not found.winner_run_key and len(found.leaders) > 1 and not found.scores
    view = winner_view(found, report.METRICS)
    assert view["rows"] == [] and "there is no single winner to confirm or to copy" in view["text"]


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
