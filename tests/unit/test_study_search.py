"""The tuning study's logic a user relies on: the space holds what the chunker declares (and
leaves out what needs an LLM, saying why), the objective picks the configuration a person would
(most recall within the token cap, IoU breaking a tie), the split never lets a question both tune
and confirm, and the confirmation says when the winner's lead is a tie."""

from __future__ import annotations

import optuna
import pytest

import services.chunker.strategies as strategies
from chunklab.errors import InvalidArgument
from chunklab.v1 import evaluator_pb2 as pb
from services.evaluator.study import confirm, objective, pruning, search, split
from services.evaluator.study import space as spaces

INFOS = strategies.REGISTRY.infos()
CAP = pb.StudyObjective(max_tokens=800)


def test_the_default_space_is_every_strategy_without_an_llm_and_says_why_the_others_are_left_out():
    space = spaces.build(pb.Study(objective=CAP), INFOS, llm_configured=False, reranker=0)
    needing = {i.name for i in INFOS if i.requires_llm}
    assert needing and not needing & set(space.strategies())
    assert set(space.strategies()) == {i.name for i in INFOS if not i.requires_llm}
    assert all(any(name in note and "needs an LLM" in note for note in space.notes) for name in needing)
    assert space.hybrid == (False, True)


def test_with_an_llm_configured_the_llm_strategies_are_searched_too():
    space = spaces.build(pb.Study(), INFOS, llm_configured=True, reranker=0)
    assert {i.name for i in INFOS} == set(space.strategies())


def test_every_trial_the_sampler_proposes_is_a_valid_configuration_within_the_token_cap():
    space = spaces.build(pb.Study(objective=CAP), INFOS, llm_configured=False, reranker=0)
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=3))
    for _ in range(60):
        trial = study.ask()
        candidate = spaces.suggest(trial, space)
        study.tell(trial, 0.0)
        for name, value in candidate.values.items():
            if name in ("chunk_size", "max_tokens", "child_max_tokens"):
                assert value <= 800, candidate.run_key  # a chunk over the cap alone sends too much
        if "chunk_overlap" in candidate.values:
            assert candidate.values["chunk_overlap"] < candidate.values["chunk_size"]
        if "child_max_tokens" in candidate.values and "parent_max_tokens" in candidate.values:
            assert candidate.values["child_max_tokens"] <= candidate.values["parent_max_tokens"]
        assert candidate.top_k in space.top_k


def test_the_recommendation_is_the_first_starting_point_and_the_baseline_the_second():
    space = spaces.build(pb.Study(objective=CAP), INFOS, llm_configured=False, reranker=0)
    (first, rec), (second, base) = spaces.starting_points(space)
    assert (first, rec["strategy"], rec["hybrid"]) == ("recommendation", "cluster_parent_child", True)
    assert (second, base["strategy"], base["hybrid"]) == ("baseline", "fixed_size", False)
    study = optuna.create_study()
    study.enqueue_trial(rec)
    candidate = spaces.suggest(study.ask(), space)
    assert candidate.values == {
        "child_max_tokens": 50,
        "parent_max_tokens": 350,
        "context_pieces": 1,
        "context_vectors": "encoded",
    }


def test_most_recall_within_the_cap_wins_and_iou_breaks_a_tie_in_recall():
    trials = [
        ("wide", objective.Scores(recall=0.99, iou=0.02, tokens=1500, questions=20)),  # over the cap
        ("sharp", objective.Scores(recall=0.931, iou=0.12, tokens=600, questions=20)),
        ("broad", objective.Scores(recall=0.935, iou=0.05, tokens=780, questions=20)),
        ("weak", objective.Scores(recall=0.80, iou=0.20, tokens=300, questions=20)),
        ("dull", objective.Scores(recall=0.85, iou=0.04, tokens=790, questions=20)),  # broad beats it on all three
    ]
    assert objective.best(trials, CAP) == "sharp"  # 0.4 points of recall less, IoU more than twice
    assert objective.value(trials[0][1], CAP) < objective.value(trials[3][1], CAP)
    assert objective.pareto(trials) == ["wide", "sharp", "broad", "weak"]
    at_recall = pb.StudyObjective(kind=pb.STUDY_OBJECTIVE_KIND_IOU_AT_RECALL, min_recall=0.9, max_tokens=800)
    assert objective.best(trials, at_recall) == "sharp"


def test_a_cap_no_trial_meets_names_the_smallest_seen():
    trials = [("a", objective.Scores(0.9, 0.1, 950, 10)), ("b", objective.Scores(0.95, 0.1, 1200, 10))]
    assert objective.best(trials, CAP) == ""
    assert objective.smallest_tokens(trials) == ("a", 950)


def _questions(n: int) -> list[pb.Question]:
    return [
        pb.Question(question_id=f"q{i}", text=f"question {i}?", references=[pb.Reference(document_id="d", content="x")])
        for i in range(n)
    ]


def test_the_split_is_seeded_disjoint_and_its_rungs_grow_to_the_whole_selection():
    dealt = split.deal(_questions(40), pb.Validation(seed=7))
    again = split.deal(list(reversed(_questions(40))), pb.Validation(seed=7))
    assert [q.question_id for q in dealt.selection] == [q.question_id for q in again.selection]
    assert not {q.question_id for q in dealt.selection} & {q.question_id for q in dealt.confirmation}
    assert len(dealt.selection) == len(dealt.confirmation) == 20
    rungs = dealt.rungs()
    assert [len(r) for r in rungs] == [5, 10, 20] and rungs[-1] == dealt.selection


def test_a_question_set_too_small_to_confirm_says_how_many_the_split_needs():
    with pytest.raises(InvalidArgument, match=r"has 5 questions .* needs at least 8"):
        split.deal(_questions(5), pb.Validation())
    with pytest.raises(InvalidArgument, match="needs at least 20"):
        split.deal(_questions(12), pb.Validation(selection_share=0.8))


def _results(run: str, recalls: list[float]) -> list[pb.QuestionResult]:
    return [
        pb.QuestionResult(
            question_id=f"q{i}",
            run_key=run,
            metrics=pb.RetrievalMetrics(recall=r, iou=r / 10, tokens_sent=500, labelled=True),
        )
        for i, r in enumerate(recalls)
    ]


def test_a_lead_whose_interval_holds_zero_is_called_a_tie():
    result = pb.StudyResult(confirmation_questions=6)
    roles = {"winner": "w", "baseline": "b", "recommendation": "r"}
    by_run = {
        "w": _results("w", [1, 1, 0, 1, 1, 0]),
        "r": _results("r", [1, 0, 1, 1, 0, 1]),
        "b": _results("b", [0, 0, 0, 1, 0, 0]),
    }
    confirm.fill(result, roles, by_run, CAP)
    assert [c.role for c in result.confirmation] == ["winner", "baseline", "recommendation"]
    recall = next(m for m in result.confirmation[0].means if m.metric == "recall")
    assert recall.mean == pytest.approx(4 / 6) and recall.ci_low < recall.mean < recall.ci_high
    assert result.tie and "may be a tie" in result.summary


def test_a_winner_worse_than_the_recommendation_on_confirmation_says_keep_the_recommendation():
    result = pb.StudyResult(confirmation_questions=6)
    by_run = {"w": _results("w", [0, 0, 0, 0, 1, 0]), "r": _results("r", [1, 1, 1, 1, 1, 1])}
    confirm.fill(result, {"winner": "w", "recommendation": "r"}, by_run, CAP)
    assert "keep the recommendation" in result.summary


def _three_configuration_space() -> spaces.Space:
    """cluster_parent_child with only its context_vectors choice searched, one top_k, hybrid on:
    three configurations in all."""
    info = next(i for i in INFOS if i.name == "cluster_parent_child")
    narrow = type(info)()
    narrow.CopyFrom(info)
    del narrow.knobs[:]
    narrow.knobs.extend(k for k in info.knobs if k.name == "context_vectors")
    return spaces.Space(infos={narrow.name: narrow}, top_k=(5,), hybrid=(True,), neighbors=(0,), token_cap=800)


def _finished(run_key: str, state: str = "complete") -> pb.ExperimentRun:
    return pb.ExperimentRun(run_key=run_key, trial=pb.StudyTrial(state=state))


def test_a_configuration_the_sampler_proposes_again_is_not_run_again_and_a_tried_out_space_ends_the_search():
    space = _three_configuration_space()
    sampler = optuna.create_study(direction="maximize", sampler=optuna.samplers.TPESampler(seed=0))
    runs: list[pb.ExperimentRun] = []

    def told(sampler, trial, run_key):
        sampler.tell(trial, 0.5)

    for state in ("complete", "pruned", "complete"):
        proposal = search.fresh_proposal(sampler, space, runs, told)
        assert proposal is not None
        trial, candidate = proposal
        assert candidate.run_key not in {r.run_key for r in runs}  # never a second run of one configuration
        runs.append(_finished(candidate.run_key, state))
        if state == "pruned":
            sampler.tell(trial, state=optuna.trial.TrialState.PRUNED)
        else:
            sampler.tell(trial, 0.5)
    before = len(sampler.trials)
    assert search.fresh_proposal(sampler, space, runs, told) is None  # nothing new is left
    repeats = sampler.trials[before:]
    assert len(repeats) == search.MAX_REPEATS  # each repeat told its stored outcome, none left open
    assert {t.state for t in repeats} <= {optuna.trial.TrialState.COMPLETE, optuna.trial.TrialState.PRUNED}


def _result(question_id: str, recall: float, iou: float, tokens: int) -> pb.QuestionResult:
    metrics = pb.RetrievalMetrics(recall=recall, iou=iou, tokens_sent=tokens, labelled=True)
    return pb.QuestionResult(question_id=question_id, metrics=metrics)


def test_the_pareto_objective_keeps_a_thrifty_trial_its_front_is_spread_and_confirmed_beside_the_winner():
    goal = pb.StudyObjective(kind=pb.STUDY_OBJECTIVE_KIND_PARETO, max_tokens=800)
    best = [_result(f"q{i}", recall=1.0, iou=0.10, tokens=700) for i in range(12)]
    thrifty = [_result(f"q{i}", recall=0.5, iou=0.15, tokens=200) for i in range(12)]
    # Half the recall would prune it under the default objective; on the front it belongs.
    assert pruning.cannot_win(thrifty, best, pb.StudyObjective(max_tokens=800))
    assert not pruning.cannot_win(thrifty, best, goal)
    over = [_result(f"q{i}", recall=1.0, iou=0.1, tokens=2000) for i in range(12)]
    assert pruning.cannot_win(over, best, goal)  # the cap still holds
    front = [(f"k{t}", objective.Scores(recall=t / 1000, iou=0.1, tokens=t, questions=10)) for t in range(100, 800, 50)]
    chosen = objective.spread(front, 4)
    assert chosen[0] == "k100" and chosen[-1] == "k750" and len(chosen) == 4
    assert objective.values(front[0][1], goal) == [0.1, 0.1, 100]
    result = pb.StudyResult(confirmation_questions=12)
    confirm.fill(result, {"winner": "w", "recommendation": "w"}, {"w": best, "t": thrifty}, goal, front=["t"])
    assert [(c.role, c.run_key) for c in result.confirmation] == [
        ("winner", "w"),
        ("recommendation", "w"),
        ("front", "t"),
    ]
    assert "1 other configuration on the Pareto front confirmed beside it" in result.summary


def _search_after(
    trial_seconds: list[float],
    used: float,
    budget_s: float,
    trials: int = 0,
    reused: list[bool] | None = None,
    asked: tuple[float, int] = (0.0, 0),
    confirmation: int = 0,
) -> search.Search:
    """A study's search that has run these trials (reused: which were retrieval only), used this
    many seconds of its budget, asked questions at this pace (seconds, questions) and holds this
    many confirmation questions."""
    import time

    found = search.Search.__new__(search.Search)
    split = type("Split", (), {"confirmation": [None] * confirmation})()
    found.study = search.StudyPlan(space=None, split=split, trials=trials, seconds=budget_s)
    found.goal = pb.StudyObjective()
    found.experiment = pb.Experiment()
    for seconds, index_reused in zip(trial_seconds, reused or [False] * len(trial_seconds)):
        run = found.experiment.runs.add(index_reused=index_reused)
        run.trial.MergeFrom(pb.StudyTrial(state="complete", seconds=seconds))
    found._used_before, found._started = used, time.monotonic()
    found._asked = list(asked)
    return found


def _next_trial(found: search.Search, reuses_sets: bool) -> tuple[bool, float]:
    """Whether the next trial, retrieval only or with index sets of its own, fits the time left."""
    found.reuses_sets = lambda candidate: reuses_sets
    return found.fits(None)


def test_a_trial_the_time_left_would_not_hold_is_not_begun_and_the_study_says_so():
    """A ten-minute study ends within ten minutes (ADR 0158, 0166): with 20 s left and trials of
    about 45 s, it stops and its notes say why (not when what is left is a moment); with trials of
    about 10 s it goes on. Before any trial, and with no time budget, only the budget stops it."""
    slow = _search_after([60, 40, 45, 50, 44, 46], used=580, budget_s=600)
    assert slow.typical_trial() == 45  # the median of the latest five, not the cold first trial
    assert _next_trial(slow, reuses_sets=False) == (False, 45)
    slow._note_time_left(None, 45)
    (note,) = slow.experiment.study.notes
    assert note.startswith(
        "stopped 20 s before the time budget: the next trial (with index sets of its own) takes about 45 s here"
    )
    assert _next_trial(_search_after([60, 9, 10, 11], used=580, budget_s=600), reuses_sets=False)[0]
    nearly_all = _search_after([2, 2, 2], used=599.4, budget_s=600)  # 0.6 s left: nothing worth saying
    assert not _next_trial(nearly_all, reuses_sets=False)[0]
    nearly_all._note_time_left(None, 2)
    assert not nearly_all.experiment.study.notes
    assert not _search_after([], used=599, budget_s=600).spent()
    assert _next_trial(_search_after([], used=599, budget_s=600), reuses_sets=False) == (True, 0)
    assert _search_after([], used=600, budget_s=600).spent()
    assert not _search_after([500], used=10_000, budget_s=0, trials=5).spent()
    assert _next_trial(_search_after([500], used=10_000, budget_s=0, trials=5), reuses_sets=False)[0]
    ended_by_trials = _search_after([50, 50, 50], used=580, budget_s=600, trials=3)
    assert ended_by_trials.spent()


def test_the_time_a_trial_takes_is_told_by_its_kind_and_the_confirmation_is_kept_time_for():
    """A retrieval-only trial takes a second where one that embeds a new chunking takes tens
    (ADR 0166): with 15 s left, a trial that reuses index sets is begun and one that builds its own
    is not. The confirmation's questions are kept time for, at the pace questions were asked."""
    mixed = _search_after(
        [30, 0.5, 28, 0.6, 0.4, 32], used=585, budget_s=600, reused=[False, True, False, True, True, False]
    )
    assert mixed.typical_trial(reuses_sets=True) == 0.5
    assert mixed.typical_trial(reuses_sets=False) == 30
    assert _next_trial(mixed, reuses_sets=True) == (True, 0.5)
    assert _next_trial(mixed, reuses_sets=False) == (False, 30)
    only_built = _search_after([30, 28], used=500, budget_s=600)
    assert only_built.typical_trial(reuses_sets=True) == 29  # no retrieval-only trial yet: every kind's
    # 138 confirmation questions for three configurations at 10 ms a question: 4.1 s kept for them.
    confirming = _search_after(
        [0.5, 0.5], used=594, budget_s=600, reused=[True, True], asked=(2.0, 200), confirmation=138
    )
    assert abs(confirming.confirmation_reserve() - 4.14) < 1e-9
    assert _next_trial(confirming, reuses_sets=True)[0]  # 6 s left: 0.5 + 4.1 fit
    confirming._used_before = 596.0  # 4 s left: the confirmation alone needs them
    assert confirming.spent()
