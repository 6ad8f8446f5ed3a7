"""What the "Find the best configuration" page and `chunklab tune` show of a study (issue 29,
item 3; ADR 0116): the form's values as a study, the status line, the plot's Pareto front
and the result beside the baseline and the recommendation. Hand-built messages; no server."""

from __future__ import annotations

import gradio as gr
import pytest

from chunklab.v1 import evaluator_pb2 as pb
from chunklab.views import study_view
from chunklab.views.metric_format import MetricFormat
from chunklab_app import tuning
from chunklab_app.cli import main as cli
from chunklab_app.cli import tune_cli
from chunklab_app.cli.flags import UsageError
from frontend.pages.tune import following, study_form
from frontend.pages.tune.trials_plot import BEST, FRONT, OTHER, TrialLog
from services.evaluator.judging import metric_catalog

METRICS = MetricFormat(metric_catalog.list_metrics().metrics)
WIN, REC, BASE = "sentence_window[max_tokens=128]", "cluster_parent_child[max_tokens=400]", "fixed_size[chunk_size=512]"


def form(**given):
    values = dict(
        question_set_id="qs1",
        documents=[],
        collection="",
        objective=study_form.DEFAULT_OBJECTIVE,
        max_tokens=800,
        min_recall_percent=90,
        minutes=10,
        trials=30,
        strategies=[],
        seed=0,
        name="",
    )
    values.update(given)
    return study_form.study_request(**values)


def test_the_form_defaults_ask_highest_recall_within_800_tokens_in_ten_minutes_or_thirty_trials():
    request = form()
    assert request.study.objective.kind == pb.STUDY_OBJECTIVE_KIND_RECALL_AT_TOKENS
    assert request.study.objective.max_tokens == 800
    assert (request.study.budget.seconds, request.study.budget.trials) == (600, 30)
    assert study_view.budget_text(request.study.budget) == "30 trials or 10 min, whichever comes first"
    assert study_view.objective_text(request.study.objective, METRICS) == (
        "highest recall with at most 800 tokens per question, ties by IoU"
    )


def test_the_iou_objective_takes_the_minimum_recall_as_a_percentage():
    request = form(objective="Highest IoU at a minimum recall", min_recall_percent=92.5)
    assert request.study.objective.min_recall == pytest.approx(0.925)
    assert study_view.objective_text(request.study.objective, METRICS).startswith(
        "highest IoU with recall at least 92.5%"
    )
    with pytest.raises(ValueError, match="Minimum recall takes a percentage"):
        form(objective="Highest IoU at a minimum recall", min_recall_percent=0)


@pytest.mark.parametrize(
    ("given", "says"),
    [
        ({"question_set_id": ""}, "Choose the question set"),
        ({"trials": 2.5}, "Trials takes a whole number"),
        ({"minutes": -1}, "Minutes takes 0 or more"),
    ],
)
def test_a_form_that_cannot_run_says_which_field_and_why(given, says):
    with pytest.raises(ValueError, match=says):
        form(**given)


def test_documents_chosen_win_over_a_collection_and_a_collection_alone_is_searched():
    assert form(documents=["d1", "d2"], collection="handbooks").collections == []
    alone = form(collection=" handbooks ")
    assert (alone.document_ids, alone.collections) == ([], ["handbooks"])


def trial(number, recall, iou, tokens, state="complete", feasible=True):
    return pb.StudyTrial(
        number=number, state=state, recall=recall, iou=iou, tokens_sent=tokens, questions=10, feasible=feasible
    )


def test_a_new_trial_that_beats_an_earlier_one_on_every_measure_pushes_it_off_the_front():
    log = TrialLog()
    log.add_progress(pb.StudyProgress(trial=trial(1, 0.80, 0.05, 700), trial_run_key=REC, best_run_key=REC))
    log.add_progress(pb.StudyProgress(trial=trial(2, 0.70, 0.10, 300), trial_run_key=BASE, best_run_key=REC))
    assert log.front() == {REC, BASE}  # a trade-off: neither beats the other on every measure
    log.add_progress(pb.StudyProgress(trial=trial(3, 0.90, 0.12, 250), trial_run_key=WIN, best_run_key=WIN))
    assert log.front() == {WIN}
    frame = log.frame()
    kinds = dict(zip(frame["trial"], frame["kind"], strict=True))
    assert kinds == {1: OTHER, 2: OTHER, 3: BEST}
    assert list(frame["recall (%)"]) == [80.0, 70.0, 90.0] and list(frame["tokens sent"]) == [700, 300, 250]
    log.add_progress(pb.StudyProgress(trial=trial(4, 0.95, 0.02, 900), trial_run_key="x", best_run_key=WIN))
    assert dict(zip(log.frame()["trial"], log.frame()["kind"], strict=True))[4] == FRONT


def test_a_trial_over_the_token_cap_is_never_on_the_front_and_pushes_no_trial_off_it():
    log = TrialLog()
    log.add_progress(pb.StudyProgress(trial=trial(1, 0.80, 0.05, 700), trial_run_key=REC, best_run_key=REC))
    over = trial(2, 0.99, 0.20, 2500, feasible=False)  # better on recall and IoU, but over the cap
    log.add_progress(pb.StudyProgress(trial=over, trial_run_key=BASE, best_run_key=REC))
    assert log.front() == {REC}
    assert dict(zip(log.frame()["trial"], log.frame()["kind"], strict=True))[2] == OTHER


def mean(metric, value, low, high):
    return pb.MeanInterval(metric=metric, mean=value, ci_low=low, ci_high=high)


def finished_study(tie: bool) -> pb.Experiment:
    experiment = pb.Experiment(experiment_id="s1", state=pb.EXPERIMENT_STATE_SUCCEEDED)
    experiment.config.study.budget.trials = 12
    experiment.config.study.objective.max_tokens = 800
    for role, key, recall in (("recommendation", REC, 0.88), ("winner", WIN, 0.95), ("baseline", BASE, 0.80)):
        experiment.study.confirmation.add(
            role=role,
            run_key=key,
            feasible=True,
            means=[
                mean("recall", recall, recall - 0.05, recall + 0.03),
                mean("iou", 0.09, 0.07, 0.11),
                mean("tokens_sent", 640, 600, 700),
            ],
        )
    experiment.study.deciding_metric = "recall"
    experiment.study.lead, experiment.study.lead_ci_low, experiment.study.lead_ci_high = (
        0.07,
        -0.01 if tie else 0.02,
        0.15,
    )
    experiment.study.tie = tie
    experiment.study.trials_done, experiment.study.selection_questions, experiment.study.confirmation_questions = (
        12,
        40,
        40,
    )
    experiment.study.summary = f"{WIN} finds more than the recommendation."
    run = experiment.runs.add(run_key=WIN, trial=trial(3, 0.95, 0.09, 640))
    run.per_document.add(
        document_name="handbook.md",
        metrics=pb.RetrievalMetrics(recall=1.0, iou=0.1, tokens_sent=600, questions_labelled=30),
    )
    run.per_document.add(
        document_name="faq.md", metrics=pb.RetrievalMetrics(recall=0.0, iou=0.0, tokens_sent=700, questions_labelled=10)
    )
    return experiment


def test_the_result_puts_the_winner_first_beside_the_recommendation_and_the_baseline_on_the_same_questions():
    view = study_view.result_view(finished_study(tie=False), METRICS)
    rows = view["candidates"]
    assert [r["role"] for r in rows] == ["winner", "static recommendation", "fixed_size baseline"]
    assert rows[0]["recall"] == {"value": "95.0%", "interval": "[90.0%, 98.0%]"}
    assert view["split"] == "tuned on 40 questions, confirmed on 40 other questions"
    assert "interval holds 0" not in view["lead"] and view["lead"].startswith(
        "Lead over the static recommendation on recall: +7.0 pts"
    )


def test_a_lead_whose_interval_holds_zero_is_called_a_tie():
    view = study_view.result_view(finished_study(tie=True), METRICS)
    assert view["tie"] and "the interval holds 0, so on these questions this is a tie" in view["lead"]


def test_why_the_winner_won_shows_each_documents_figures_and_a_document_it_fails_on():
    study = finished_study(tie=False)
    rows = study_view.document_rows(tuning.winner_run(study), METRICS)
    assert [(r["name"], r["recall"], r["questions"]) for r in rows] == [
        ("handbook.md", "100.0%", "30"),
        ("faq.md", "0.0%", "10"),
    ]


def test_the_json_result_carries_the_confirmation_intervals_and_every_trial():
    shown = tuning.result_json(finished_study(tie=False), METRICS)
    winner = next(c for c in shown["confirmation"] if c["role"] == "winner")
    assert winner["run_key"] == WIN and winner["recall"] == {
        "mean": 0.95,
        "ci_low": pytest.approx(0.90),
        "ci_high": pytest.approx(0.98),
    }
    assert [t["run_key"] for t in shown["trials"]] == [WIN] and shown["lead"]["tie"] is False


def test_a_study_without_a_winner_has_nothing_to_make_active_and_says_why():
    study = pb.Experiment(experiment_id="s2")
    study.study.summary = "No configuration sends at most 100 tokens per question; the smallest seen is 212."
    with pytest.raises(tuning.NothingToActivate, match="smallest seen is 212"):
        tuning.make_active(None, study)


def parsed(*argv):
    return cli.parser().parse_args(["tune", *argv])


def test_tune_reads_a_share_as_a_fraction_or_a_percentage_and_refuses_flags_that_do_not_go_together():
    args = parsed("--question-set", "qs1", "--objective", "iou", "--min-recall", "90%", "--minutes", "10")
    assert args.min_recall == pytest.approx(0.9)
    study = tune_cli.study_of(args)
    assert (study.objective.kind, study.budget.seconds) == (pb.STUDY_OBJECTIVE_KIND_IOU_AT_RECALL, 600)
    with pytest.raises(UsageError, match="--objective iou needs --min-recall"):
        tune_cli.check(parsed("--question-set", "qs1", "--objective", "iou"))
    with pytest.raises(UsageError, match="--resume goes on with the study's stored documents"):
        tune_cli.check(parsed("--resume", "s1", "--corpus", "a.md"))
    with pytest.raises(UsageError, match="give the questions"):
        tune_cli.check(parsed("--trials", "5"))
    with pytest.raises(SystemExit):
        parsed("--question-set", "qs1", "--min-recall", "1.5")


def test_the_printed_result_has_the_three_configurations_with_intervals_and_the_command_to_take_it_home(capsys):
    tune_cli.print_result(study_view.result_view(finished_study(tie=True), METRICS))
    out = capsys.readouterr().out
    assert f"  winner: {WIN}\n    recall 95.0% [90.0%, 98.0%] · IoU 9.0% [7.0%, 11.0%]" in out
    assert f"  static recommendation: {REC}\n" in out and f"  fixed_size baseline: {BASE}\n" in out
    assert "this is a tie" in out
    assert f"Take home the winner, {WIN}.\n  chunklab export snippet --experiment s1 --run '{WIN}'" in out


def test_a_winner_below_the_recommendation_on_the_unseen_questions_is_not_what_the_study_offers():
    study = finished_study(tie=True)
    study.study.confirmation[1].means[0].mean = 0.80  # now below the recommendation's 88%
    key, who = study_view.take_home(study)
    assert (key, who) == (REC, "recommendation")
    assert study_view.take_home_text(study).startswith(f"Take home the static recommendation, {REC}")
    assert tuning.result_json(study, METRICS)["take_home"] == {
        "run_key": REC,
        "role": "recommendation",
    }


class CancellingGateway:
    """A study the evaluator stores as interrupted, after three trials, once its trial under way
    has ended (one read later)."""

    def __init__(self):
        self.cancelled: list[str] = []

    def cancel_experiment(self, study_id):
        self.cancelled.append(study_id)

    def follow_until_stopped(self, study_id):
        yield pb.Experiment(experiment_id=study_id, state=pb.EXPERIMENT_STATE_RUNNING)
        yield self.stopped(study_id)

    @staticmethod
    def stopped(study_id):
        study = pb.StudyResult(trials_done=3, seconds_used=12.0)
        return pb.Experiment(experiment_id=study_id, state=pb.EXPERIMENT_STATE_INTERRUPTED, study=study)


def test_cancel_says_stopping_then_the_same_end_the_studys_stream_says_whichever_lands_last():
    gateway = CancellingGateway()
    stopping, waiting, ended = list(following.cancelled(gateway, "s-1"))
    assert gateway.cancelled == ["s-1"]
    assert following.STOPPING in stopping
    assert waiting == gr.skip()  # "Stopping…" stays while the trial under way ends
    said, _ = study_view.ended_text(gateway.stopped("s-1"))
    assert "The study was stopped after 3 trials" in said and said in ended  # the stream's own last word
    with pytest.raises(gr.Error, match="No study is running"):
        list(following.cancelled(gateway, ""))
