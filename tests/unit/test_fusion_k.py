"""Hybrid retrieval's fusion constant as a retrieval option (ADR 0139): what a user relies on is
that a smaller k lets each ranking's first hits count more, that a fusion_k out of bounds or
without hybrid retrieval is refused saying what to change, and that a study tries it on hybrid
trials only and sends it with the trial's options."""

from __future__ import annotations

import optuna
import pytest

import services.chunker.strategies as strategies
from chunklab import retrieval
from chunklab.errors import InvalidArgument
from chunklab.v1 import common_pb2
from chunklab.v1 import evaluator_pb2 as pb
from services.evaluator.study import space as spaces
from services.retriever.search.lexical import reciprocal_rank_fusion


def _point(n: int) -> dict:
    return {"document_id": "d", "strategy": "s", "config_id": "c", "role": "child", "chunk_index": n}


def _fused(k: int | None = None) -> list[tuple[int, float]]:
    # Chunk 0 leads the dense ranking alone; chunk 3 is fourth there and first in the lexical one.
    dense = [(_point(n), 0.9 - n / 10) for n in range(4)]
    lexical = [(_point(3), 7.0)]
    fused = reciprocal_rank_fusion(dense, lexical) if k is None else reciprocal_rank_fusion(dense, lexical, k=k)
    return [(payload["chunk_index"], score) for payload, score in fused]


def test_the_default_k_is_sixty_and_a_smaller_one_trusts_each_rankings_first_hit_more():
    assert _fused()[0] == (3, pytest.approx(1 / 61 + 1 / 64))
    assert _fused(60) == _fused()
    sharp = _fused(1)
    assert [n for n, _ in sharp] == [3, 0, 1, 2]
    assert sharp[0][1] == pytest.approx(1 / 2 + 1 / 5) and sharp[1][1] == pytest.approx(1 / 2)
    # With k = 60 the second place goes to the dense ranking's first chunk only by 1/61 against 1/62's.
    assert _fused()[1][1] - _fused()[2][1] == pytest.approx(1 / 61 - 1 / 62)


def test_fusion_k_is_checked_with_the_contracts_words():
    retrieval.check_options(common_pb2.RetrievalOptions(strategy="fixed_size", hybrid=True, fusion_k=3))
    with pytest.raises(InvalidArgument, match=r"^fusion_k must be between 1 and 1000, got 0$"):
        retrieval.check_options(common_pb2.RetrievalOptions(strategy="fixed_size", hybrid=True, fusion_k=0))
    with pytest.raises(InvalidArgument, match="set hybrid, or leave fusion_k unset"):
        retrieval.check_options(common_pb2.RetrievalOptions(strategy="fixed_size", fusion_k=3))
    assert retrieval.fusion_k(common_pb2.RetrievalOptions(hybrid=True)) == 60
    assert retrieval.fusion_k(common_pb2.RetrievalOptions(hybrid=True, fusion_k=5)) == 5
    assert retrieval.BY_PATH["fusion_k"].optional  # unset (the default) differs from any value


def _space() -> spaces.Space:
    study = pb.Study(objective=pb.StudyObjective(max_tokens=800))
    return spaces.build(study, strategies.REGISTRY.infos(), llm_configured=False, reranker=0)


def test_a_study_tries_fusion_k_on_hybrid_trials_and_sends_it_with_their_options():
    space = _space()
    assert space.fusion_k == (1, 2, 3, 5, 10, 20, 60)
    rec = dict(spaces.starting_points(space)[0][1])
    base = common_pb2.RetrievalOptions()
    usual = spaces.suggest(optuna.trial.FixedTrial(rec), space)
    assert usual.fusion_k == 60 and "fusion_k" not in usual.run_key  # the recommendation's key as before
    assert not spaces.retrieval_options(usual, base).HasField("fusion_k")
    sharp = spaces.suggest(optuna.trial.FixedTrial({**rec, "fusion_k": 3, "top_k": 4}), space)
    assert sharp.run_key.endswith("+top_k=4,hybrid,fusion_k=3")
    options = spaces.retrieval_options(sharp, base)
    assert (options.top_k, options.hybrid, options.fusion_k) == (4, True, 3)
    retrieval.check_options(options, needs_strategy=False)
    dense_params = {k: v for k, v in rec.items() if k != "fusion_k"} | {"hybrid": False}
    dense = spaces.suggest(optuna.trial.FixedTrial(dense_params), space)
    assert not spaces.retrieval_options(dense, base).HasField("fusion_k")


def test_a_studys_own_fusion_k_values_are_searched_with_the_default_among_them():
    study = pb.Study(space=pb.StudySpace(fusion_k=[4, 8]))
    space = spaces.build(study, strategies.REGISTRY.infos(), llm_configured=False, reranker=0)
    assert space.fusion_k == (4, 8, 60)
