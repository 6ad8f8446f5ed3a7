"""A tuning study on the real stack (ADR 0112): one chroma-general corpus and its labelled
questions, a budget of a few trials. What a user checks: the winner is scored on questions it
was not chosen on, with intervals, beside the fixed_size baseline and the recommendation on the
same questions; a request that cannot give an answer is refused before work starts, saying what
to change; a cancelled study resumes from its stored trials and finishes its budget."""

from __future__ import annotations

import csv
import io
import json

import grpc
import pytest

from chunklab.client import experiment_outcome
from chunklab.client.errors import ClientError
from chunklab.v1 import evaluator_pb2 as pb
from tests.support.repo import chroma_general

pytestmark = pytest.mark.e2e
CORPUS = "state_of_the_union"


@pytest.fixture(scope="module")
def question_set(stack):
    lab = stack.client()
    data = chroma_general()
    document = lab.upload_document(data / "corpora" / f"{CORPUS}.md", collection="study-test").document
    with (data / "questions.csv").open(encoding="utf-8") as f:
        rows = [r for r in csv.DictReader(f) if r["corpus_id"] == CORPUS][:24]
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=["question", "references", "corpus_id"])
    writer.writeheader()
    writer.writerows(rows)
    imported = lab.import_question_set(
        out.getvalue().encode(), name="sotu.csv", document_ids={CORPUS: document.document_id}
    )
    assert imported.question_count == 24
    return imported


def study(trials: int, max_tokens: int = 800) -> pb.Study:
    return pb.Study(objective=pb.StudyObjective(max_tokens=max_tokens), budget=pb.StudyBudget(trials=trials), seed=1)


def test_a_small_study_confirms_its_winner_beside_the_baseline_and_the_recommendation(stack, question_set):
    lab = stack.client()
    progress: list[pb.ExperimentProgress] = []
    outcome = experiment_outcome(lab.run_study(question_set.question_set_id, study(5), seed=3), progress.append)
    experiment = outcome.experiment
    assert experiment.state == pb.EXPERIMENT_STATE_SUCCEEDED, experiment.error
    result = experiment.study
    assert result.finished and result.trials_done == 5
    assert (result.selection_questions, result.confirmation_questions) == (12, 12)
    assert [r.trial.origin for r in experiment.runs[:3]] == ["recommendation", "baseline", "neighbourhood"]
    # The third trial is one step from the best so far on one knob (ADR 0132).
    first, third = (json.loads(r.trial.params) for r in (experiment.runs[0], experiment.runs[2]))
    assert first.keys() == third.keys() and sum(first[k] != third[k] for k in first) == 1
    assert any("needs an LLM" in note for note in result.notes)  # no LLM here: those strategies left out, saying so
    roles = {c.role: c for c in result.confirmation}
    assert set(roles) == {"winner", "baseline", "recommendation"}
    for candidate in roles.values():
        means = {m.metric: m for m in candidate.means}
        assert set(means) == {"recall", "iou", "tokens_sent"}
        assert all(m.questions == 12 and m.ci_low <= m.mean <= m.ci_high for m in means.values())
    assert roles["baseline"].run_key.startswith("fixed_size[")
    assert (
        roles["recommendation"].run_key.startswith("cluster_parent_child[")
        and "hybrid" in roles["recommendation"].run_key
    )
    winner_tokens = next(m.mean for m in roles["winner"].means if m.metric == "tokens_sent")
    winner_trial = next(r.trial for r in experiment.runs if r.run_key == roles["winner"].run_key)
    assert winner_trial.feasible and winner_trial.tokens_sent <= 800 and winner_tokens > 0
    assert result.summary.startswith(roles["winner"].run_key)
    # Live progress told each trial's end with the best so far.
    ended = [p.study for p in progress if p.HasField("study") and p.study.phase == "searching"]
    assert [p.trials_done for p in ended] == [1, 2, 3, 4, 5] and ended[-1].best_run_key
    # Stored like an experiment: GetExperiment holds the confirmed runs' answers to every question.
    stored = lab.get_experiment(experiment.experiment_id)
    confirmed = [r for r in stored.results if r.run_key == roles["winner"].run_key]
    assert len({r.question_id for r in confirmed}) == 24
    assert stored.validation.winner_run_key or stored.validation.leaders or stored.validation.unavailable


def test_requests_that_cannot_give_an_answer_are_refused_before_work_starts(stack, question_set):
    lab = stack.client()
    before = len(lab.list_experiments())
    with pytest.raises(ClientError) as refused:
        experiment_outcome(lab.run_study(question_set.question_set_id, study(2), selection_share=0.9))
    assert refused.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert "has 24 questions" in refused.value.message and "needs at least 40" in refused.value.message
    with pytest.raises(ClientError) as cap:
        experiment_outcome(lab.run_study(question_set.question_set_id, study(2, max_tokens=3)))
    assert "smallest chunk" in cap.value.message
    with pytest.raises(ClientError) as unknown:
        experiment_outcome(
            lab.run_study(question_set.question_set_id, pb.Study(space=pb.StudySpace(strategies=["nope"])))
        )
    assert "available:" in unknown.value.message
    with pytest.raises(ClientError) as fusion:
        experiment_outcome(
            lab.run_study(question_set.question_set_id, pb.Study(space=pb.StudySpace(fusion_k=[3, 0, 5000])))
        )
    assert fusion.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert "study.space.fusion_k holds 0, 5000; each must be between 1 and 1000" in fusion.value.message
    # A time budget shorter than the first trial: refused with the minimum to give.
    with pytest.raises(ClientError) as short:
        experiment_outcome(
            lab.run_study(question_set.question_set_id, pb.Study(budget=pb.StudyBudget(seconds=0.001), seed=1))
        )
    assert short.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert "is below one evaluation" in short.value.message and "give at least " in short.value.message
    assert len(lab.list_experiments()) == before  # nothing half-started is left behind


def test_a_cancelled_study_resumes_from_its_stored_trials_and_finishes_its_budget(stack, question_set):
    lab = stack.client()
    events = lab.run_study(question_set.question_set_id, study(5), seed=9)
    experiment_id = ""
    for event in events:
        if event.HasField("progress"):
            experiment_id = event.progress.experiment_id
            if event.progress.HasField("study") and event.progress.study.trials_done >= 2:
                lab.cancel_experiment(experiment_id)
        if event.HasField("experiment"):
            break
    stopped = lab.get_experiment(experiment_id)
    assert stopped.state == pb.EXPERIMENT_STATE_INTERRUPTED and "resume" in stopped.error.lower()
    kept = [r for r in stopped.runs if r.trial.state in ("complete", "pruned", "failed")]
    assert 2 <= len(kept) < 5 and not stopped.study.finished
    answered = {(r.run_key, r.question_id) for r in stopped.results}
    resumed = experiment_outcome(lab.resume_experiment(experiment_id)).experiment
    assert resumed.state == pb.EXPERIMENT_STATE_SUCCEEDED, resumed.error
    assert resumed.study.finished and resumed.study.trials_done == 5
    assert [r.run_key for r in resumed.runs[: len(kept)]] == [r.run_key for r in kept]  # the stored trials stand
    again = lab.get_experiment(experiment_id)
    pairs = [(r.run_key, r.question_id) for r in again.results]
    assert len(pairs) == len(set(pairs)) and answered <= set(pairs)  # nothing asked twice, nothing lost
    assert {c.role for c in resumed.study.confirmation} == {"winner", "baseline", "recommendation"}


def test_a_pareto_study_confirms_its_front_on_the_questions_it_did_not_see(stack, question_set):
    lab = stack.client()
    goal = pb.StudyObjective(kind=pb.STUDY_OBJECTIVE_KIND_PARETO, max_tokens=800)
    request = pb.Study(objective=goal, budget=pb.StudyBudget(trials=6), seed=2)
    experiment = experiment_outcome(lab.run_study(question_set.question_set_id, request, seed=3)).experiment
    assert experiment.state == pb.EXPERIMENT_STATE_SUCCEEDED, experiment.error
    result = experiment.study
    assert result.trials_done == 6
    on_front = [r for r in experiment.runs if r.trial.pareto]
    assert on_front and all(r.trial.feasible for r in on_front)  # a trial over the cap is no trade-off to take
    within_cap = {r.run_key for r in on_front}
    confirmed = {c.role: c for c in result.confirmation if c.role != "front"}
    front = [c for c in result.confirmation if c.role == "front"]
    # Every front trial within the cap is scored on the unseen questions: as winner, or on the front.
    assert within_cap <= {c.run_key for c in front} | {c.run_key for c in confirmed.values()}
    for candidate in front:
        means = {m.metric: m for m in candidate.means}
        assert candidate.feasible and all(m.questions == 12 for m in means.values())
    assert front and f"{len(front)} other configuration" in result.summary
