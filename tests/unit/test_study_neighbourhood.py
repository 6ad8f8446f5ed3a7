"""The study's search around its best configuration and its pruning (ADRs 0132, 0133): what a
user relies on is that the configurations next to the recommendation are tried (each one step
away on one knob, never outside the knob's declared range) and that a trial is stopped early only
when, even at the top of its interval, it could not have won."""

from __future__ import annotations

import numpy as np
import optuna

import services.chunker.strategies as strategies
from chunklab import knobs
from chunklab.v1 import evaluator_pb2 as pb
from services.evaluator.study import objective, pruning
from services.evaluator.study import space as spaces
from services.evaluator.study.neighbours import neighbours

INFOS = strategies.REGISTRY.infos()
CAP = pb.StudyObjective(max_tokens=800)


def _space(cap: int = 800) -> spaces.Space:
    return spaces.build(pb.Study(objective=pb.StudyObjective(max_tokens=cap)), INFOS, llm_configured=False, reranker=0)


def _recommendation(space: spaces.Space) -> dict:
    return dict(spaces.starting_points(space)[0][1])


def _within(space: spaces.Space, params: dict) -> None:
    """Every parameter lies in the range the space declares for it."""
    strategy = params["strategy"]
    declared = dict(space.knob_params(strategy))
    for name, value in params.items():
        if name in declared:
            knob = declared[name]
            if knob.kind == "int":
                low, high, _ = spaces.int_range(knob, space.token_cap)
                assert low <= value <= high, (name, value)
            elif knob.kind == "double":
                assert knob.min_value <= value <= knob.max_value, (name, value)
            elif knob.kind == "choice":
                assert value in knob.choices, (name, value)
        elif name.endswith(spaces.OVERLAP_SHARE):
            assert 0.0 <= value <= 0.5
        elif name == "top_k":
            assert value in space.top_k
        elif name == "neighbors":
            assert value in space.neighbors
        elif name == "hybrid":
            assert value in space.hybrid
        elif name == "fusion_k":
            assert value in space.fusion_k and params["hybrid"]


def test_the_recommendations_neighbours_move_each_knob_one_step_up_and_down():
    space = _space()
    rec = _recommendation(space)
    found = [n for n in neighbours(space, rec) if not n["hybrid"] or n["fusion_k"] == rec["fusion_k"]]
    moved = [{k: (rec[k], n[k]) for k in n if n[k] != rec[k]} for n in found]
    assert all(len(m) == 1 for m in moved)  # one parameter at a time, the rest kept
    changes = sorted((name, old, new) for m in moved for name, (old, new) in m.items())
    assert changes == sorted(
        [
            ("cluster_parent_child.child_max_tokens", 50, 62),
            ("cluster_parent_child.child_max_tokens", 50, 40),
            ("cluster_parent_child.parent_max_tokens", 350, 438),
            ("cluster_parent_child.parent_max_tokens", 350, 280),
            ("cluster_parent_child.context_pieces", 1, 2),
            ("cluster_parent_child.context_pieces", 1, 0),
            ("cluster_parent_child.context_vectors", "encoded", "late"),
            ("cluster_parent_child.context_vectors", "encoded", "pooled"),
            ("top_k", 5, 6),
            ("top_k", 5, 4),
            ("hybrid", True, False),
        ]
    )


def test_the_recommendations_fusion_neighbours_try_each_other_k_at_its_top_k_and_the_ones_beside_it():
    """ADR 0139: a fusion that ranks better shows its gain at the top_k beside the current one."""
    space = _space()
    rec = _recommendation(space)
    assert rec["fusion_k"] == 60 and space.fusion_k == spaces.DEFAULT_FUSION_K
    fused = [n for n in neighbours(space, rec) if n["hybrid"] and n["fusion_k"] != 60]
    assert sorted((n["fusion_k"], n["top_k"]) for n in fused) == sorted(
        (k, top_k) for k in (1, 2, 3, 5, 10, 20) for top_k in (4, 5, 6)
    )
    for n in fused:  # nothing else moves
        assert {k: v for k, v in n.items() if k not in ("fusion_k", "top_k")} == {
            k: v for k, v in rec.items() if k not in ("fusion_k", "top_k")
        }
    dense = next(n for n in neighbours(space, rec) if not n["hybrid"])
    assert "fusion_k" not in dense  # a dense trial has no fusion to set


def test_every_neighbour_stays_within_the_declared_ranges_and_is_a_configuration_the_search_can_run():
    space = _space(cap=300)
    rng = np.random.default_rng(5)
    sampler = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=11))
    for _ in range(40):  # from random points of the space, edges included
        trial = sampler.ask()
        spaces.suggest(trial, space)
        sampler.tell(trial, float(rng.random()))
        for params in neighbours(space, dict(trial.params)):
            _within(space, params)
            candidate = spaces.suggest(optuna.trial.FixedTrial(params), space)
            assert candidate.strategy == trial.params["strategy"]
            assert candidate.top_k in space.top_k and candidate.hybrid in space.hybrid


def test_a_knob_at_the_end_of_its_range_moves_only_inwards():
    space = _space()
    rec = _recommendation(space)
    rec["cluster_parent_child.context_pieces"] = 5
    rec["top_k"] = max(space.top_k)
    pieces = {n["cluster_parent_child.context_pieces"] for n in neighbours(space, rec)}
    top_ks = {n["top_k"] for n in neighbours(space, rec)}
    assert pieces == {5, 4} and top_ks == {max(space.top_k), sorted(space.top_k)[-2]}
    knob = knobs.find("cluster_parent_child", knobs.from_info(space.infos["cluster_parent_child"]), "parent_max_tokens")
    high = spaces.int_range(knob, space.token_cap)[1]
    rec["cluster_parent_child.parent_max_tokens"] = high
    parents = {n["cluster_parent_child.parent_max_tokens"] for n in neighbours(space, rec)}
    assert max(parents) == high and round(high / 1.25) in parents


def _results(recalls, tokens=500, iou=0.1) -> list[pb.QuestionResult]:
    tokens = tokens if isinstance(tokens, list) else [tokens] * len(recalls)
    return [
        pb.QuestionResult(
            question_id=f"q{i}", metrics=pb.RetrievalMetrics(recall=r, iou=iou, tokens_sent=t, labelled=True)
        )
        for i, (r, t) in enumerate(zip(recalls, tokens))
    ]


def test_a_trial_is_pruned_only_when_even_the_top_of_its_interval_cannot_tie_the_best():
    best = _results([1.0] * 10)
    clearly_worse = _results([0.2, 0.0, 0.3, 0.1, 0.0, 0.2, 0.1, 0.0, 0.3, 0.2])
    one_miss = _results([1.0] * 9 + [0.0])  # behind by 10 points, but one question: it may be noise
    assert pruning.cannot_win(clearly_worse, best, CAP)
    assert not pruning.cannot_win(one_miss, best, CAP)
    assert not pruning.cannot_win(clearly_worse, None, CAP)  # no best yet: nothing to lose to
    # What pruned means: at the top of its interval it still loses to the best under the objective's own rule.
    differences = np.array([0.2, 0.0, 0.3, 0.1, 0.0, 0.2, 0.1, 0.0, 0.3, 0.2]) - 1.0
    top = pruning.top_of(differences)
    hopeful = objective.Scores(recall=1.0 + top, iou=0.5, tokens=100, questions=10)
    assert objective.best([("best", objective.Scores(1.0, 0.1, 500, 10)), ("pruned", hopeful)], CAP) == "best"


def test_a_trial_is_pruned_for_tokens_only_when_its_interval_lies_wholly_over_the_cap():
    over = _results([1.0] * 8, tokens=[900, 950, 1000, 920, 980, 940, 990, 910])
    straddling = _results([1.0] * 8, tokens=[500, 1200, 600, 1100, 700, 1000, 650, 950])  # mean 837
    assert pruning.cannot_win(over, None, CAP)
    assert not pruning.cannot_win(straddling, None, CAP)
    at_recall = pb.StudyObjective(kind=pb.STUDY_OBJECTIVE_KIND_IOU_AT_RECALL, min_recall=0.9)
    assert pruning.cannot_win(_results([0.1, 0.2, 0.0, 0.1, 0.3, 0.2]), None, at_recall)
    assert not pruning.cannot_win(_results([1.0, 1.0, 0.5, 1.0, 1.0, 0.9]), None, at_recall)


def test_only_a_trial_at_least_the_recommendation_on_recall_and_iou_may_win_against_it():
    rec = objective.Scores(recall=0.939, iou=0.094, tokens=682, questions=138)
    more_recall_less_iou = objective.Scores(recall=0.953, iou=0.083, tokens=797, questions=138)
    dominating = objective.Scores(recall=0.945, iou=0.100, tokens=700, questions=138)
    trials = [("rec", rec), ("wide", more_recall_less_iou)]
    assert objective.best(trials, CAP) == "wide"  # the objective alone: most recall
    assert objective.best(trials, CAP, reference="rec") == "rec"  # not offered over it, so not the winner
    assert objective.best([*trials, ("sharp", dominating)], CAP, reference="rec") == "sharp"
    over_cap = objective.Scores(recall=0.99, iou=0.2, tokens=900, questions=138)
    # A reference over the cap is no reference: the objective alone decides.
    assert objective.best([("rec", over_cap), ("wide", more_recall_less_iou)], CAP, reference="rec") == "wide"
