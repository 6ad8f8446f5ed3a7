"""Rank measures (recall@k, NDCG, MAP; ADR 0052) on hand-built rankings: each
number worked out by hand below, and checked against ir-measures (trec_eval)
on relevance judgments written out by hand."""

from __future__ import annotations

import ir_measures
import pytest
from ir_measures import AP, R, nDCG

from chunklab.v1 import common_pb2, evaluator_pb2
from services.evaluator.judging import metric_catalog
from services.evaluator.judging.rank import rank_measures
from services.evaluator.judging.scoring import mean_metrics, retrieval_metrics
from tests.support.rank_cases import CASES, d

HIT, NEIGHBOR = common_pb2.CHUNK_LABEL_HIT, common_pb2.CHUNK_LABEL_NEIGHBOR


# The same questions as trec_eval judgments, written out by hand: each excerpt a relevant
# document, each hit the excerpt it finds first ("-" when it finds none). Where one hit
# finds two excerpts, the judged item is the hit with gain 2.
QRELS = {
    "one excerpt at rank 2": {"E1": 1},
    "three excerpts, one missed": {"E1": 1, "E2": 1, "E3": 1},
    "one hit finds two excerpts": {"hit2": 2},
    "top 10, a late hit": {"E1": 1, "E2": 1, "E3": 1},
}
RUNS = {
    "one excerpt at rank 2": ["-1", "E1", "-3", "-4", "-5"],
    "three excerpts, one missed": ["E2", "-2", "E1", "-4", "-5"],
    "one hit finds two excerpts": ["-1", "hit2", "-3"],
    "top 10, a late hit": ["E2", "-2", "-3", "-4", "-5", "-6", "-7", "E1", "-9", "-10"],
}


def library(case: str, measures: list) -> dict[str, float]:
    qrels = [ir_measures.Qrel(case, doc, gain) for doc, gain in QRELS[case].items()]
    run = [ir_measures.ScoredDoc(case, doc, 100.0 - rank) for rank, doc in enumerate(RUNS[case], start=1)]
    return {str(m.measure): m.value for m in ir_measures.iter_calc(measures, qrels, run)}


@pytest.mark.parametrize("case", CASES)
def test_rank_measures_equal_the_hand_computation(case):
    groups, references, top_k, expected = CASES[case]
    assert rank_measures(groups, references, top_k) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("case", CASES)
def test_ndcg_and_map_equal_trec_eval_on_the_same_judgments(case):
    groups, references, top_k, _ = CASES[case]
    ours = rank_measures(groups, references, top_k)
    theirs = library(case, [nDCG @ top_k, nDCG @ 10, AP @ top_k])
    assert ours["ndcg"] == pytest.approx(theirs[f"nDCG@{top_k}"], abs=1e-9)
    assert ours["map"] == pytest.approx(theirs[f"AP@{top_k}"], abs=1e-9)
    if "ndcg_at_10" in ours:
        assert ours["ndcg_at_10"] == pytest.approx(theirs["nDCG@10"], abs=1e-9)


@pytest.mark.parametrize("case", [c for c in CASES if c != "one hit finds two excerpts"])
def test_recall_at_k_equals_trec_eval_when_each_hit_finds_one_excerpt(case):
    groups, references, top_k, _ = CASES[case]
    ours = rank_measures(groups, references, top_k)
    cutoffs = [k for k in (1, 3, 5, 10) if k <= top_k]
    theirs = library(case, [R @ k for k in cutoffs])
    assert {k: ours[f"recall_at_{k}"] for k in cutoffs} == pytest.approx({k: theirs[f"R@{k}"] for k in cutoffs})


def test_a_hit_that_holds_two_excerpts_finds_both_where_trec_eval_counts_one_item():
    groups, references, top_k, _ = CASES["one hit finds two excerpts"]
    assert rank_measures(groups, references, top_k)["recall_at_3"] == 1.0  # both excerpts found
    assert library("one hit finds two excerpts", [R @ 3])["R@3"] == 1.0  # the one judged item, retrieved


def test_cut_offs_deeper_than_top_k_are_not_measured_and_nothing_is_without_references():
    groups, references, _, _ = CASES["top 10, a late hit"]
    top5 = rank_measures(groups[:5], references, 5)
    assert set(top5) == {"recall_at_1", "recall_at_3", "recall_at_5", "ndcg", "map"}
    assert top5["ndcg"] == pytest.approx(d(1) / (d(1) + d(2) + d(3)))  # rank 8 is beyond a top-5 run
    assert rank_measures(groups, [], 10) == {}


# -- through the evaluator's scoring -------------------------------------------


def rc(doc: str, start: int, end: int, label=HIT, rank: int = 0) -> common_pb2.RetrievedChunk:
    chunk = common_pb2.Chunk(document_id=doc, start_char=start, end_char=end, chunk_id=f"{doc}-{start}-{end}")
    return common_pb2.RetrievedChunk(chunk=chunk, label=label, rank=rank)


def test_a_hit_finds_what_its_neighbours_touch_as_the_expanded_mrr_does():
    # Hit 1 misses, its next neighbour holds the excerpt; hit 2 misses.
    hit1, after, hit2 = rc("A", 900, 1000, rank=1), rc("A", 1000, 1100, NEIGHBOR), rc("A", 0, 100, rank=2)
    tree = common_pb2.ExpansionTree(
        hits=[common_pb2.ExpansionNode(hit=hit1, neighbors_next=[after]), common_pb2.ExpansionNode(hit=hit2)]
    )
    refs = [evaluator_pb2.Reference(document_id="A", start_char=1050, end_char=1060)]
    m = retrieval_metrics([hit2, hit1, after], tree, refs, top_k=5)
    assert (m.recall_at_1, m.recall_at_3, m.recall_at_5, m.ndcg, m.map) == (1.0, 1.0, 1.0, 1.0, 1.0)
    assert m.map == m.mrr and m.mrr_hits == 0.0
    assert not m.HasField("recall_at_10") and not m.HasField("ndcg_at_10")
    result = evaluator_pb2.QuestionResult(metrics=m)
    assert metric_catalog.BY_NAME["recall_at_10"].value(result) is None  # not measured, not 0
    assert metric_catalog.BY_NAME["recall_at_5"].value(result) == 1.0


def test_means_take_each_rank_measure_over_the_questions_that_have_it():
    labelled = [
        evaluator_pb2.RetrievalMetrics(labelled=True, **rank_measures(g, r, k))
        for g, r, k, _ in (CASES["three excerpts, one missed"], CASES["top 10, a late hit"])
    ]
    unlabelled = evaluator_pb2.RetrievalMetrics()
    mean = mean_metrics([*labelled, unlabelled])
    assert mean.recall_at_1 == pytest.approx((1 / 3 + 1 / 3) / 2)
    assert mean.map == pytest.approx(((1 + 2 / 3) / 3 + (1 + 2 / 8) / 3) / 2)
    assert mean.recall_at_10 == pytest.approx(2 / 3)  # the top-10 question alone
    assert not mean_metrics([labelled[0], unlabelled]).HasField("recall_at_10")
