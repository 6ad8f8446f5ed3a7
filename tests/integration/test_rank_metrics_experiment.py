"""Rank measures through the evaluator (ADR 0052): two experiments over the same three
questions, at top_k 5 and top_k 10, whose retriever (faked, in this process behind a
real gRPC server) returns the hand-built rankings of tests/support/rank_cases.py. Each
run's means equal the hand computation; recall@10 is measured at top_k 10 and not at
5; ListMetrics, Compare, the report, the UI's experiment view and the CLI's table all
show them."""

from __future__ import annotations

import io
import math
import re

import pytest

from chunklab.v1 import common_pb2, documents_pb2, evaluator_pb2, retriever_pb2
from chunklab.views.metric_format import MetricFormat
from chunklab_app.cli.terminal import print_table, summary_rows
from frontend.pages.compare import compare_html
from frontend.views import experiments_html
from services.chunker.strategies import REGISTRY
from tests.support.evaluator_server import serve_evaluator
from tests.support.rank_cases import CASES

DEADLINE_S = 60.0
QUESTIONS = ("one excerpt at rank 2", "three excerpts, one missed", "top 10, a late hit")
RANK = ("recall_at_1", "recall_at_3", "recall_at_5", "recall_at_10", "ndcg", "ndcg_at_10", "map")


def d(rank: int) -> float:
    return 1 / math.log2(rank + 1)


# Per question, worked out by hand: at top_k 5 (the late hit at rank 8 is cut off) and at
# top_k 10 (the first two questions only have five hits: their recall@10 is their recall@5).
BY_HAND = {
    5: {
        "one excerpt at rank 2": CASES["one excerpt at rank 2"][3],
        "three excerpts, one missed": CASES["three excerpts, one missed"][3],
        "top 10, a late hit": {
            "recall_at_1": 1 / 3,
            "recall_at_3": 1 / 3,
            "recall_at_5": 1 / 3,
            "ndcg": d(1) / (d(1) + d(2) + d(3)),
            "map": 1 / 3,
        },
    },
    10: {
        "one excerpt at rank 2": {**CASES["one excerpt at rank 2"][3], "recall_at_10": 1.0, "ndcg_at_10": d(2)},
        "three excerpts, one missed": {
            **CASES["three excerpts, one missed"][3],
            "recall_at_10": 2 / 3,
            "ndcg_at_10": (d(1) + d(3)) / (d(1) + d(2) + d(3)),
        },
        "top 10, a late hit": CASES["top 10, a late hit"][3],
    },
}


class RankedPeers:
    """Documents A, B and C, indexed already; each question's hits are its case's ranking."""

    def retrieve(self, request):
        groups = CASES[request.query][0][: request.options.top_k]
        response = retriever_pb2.RetrieveResponse()
        for rank, (span,) in enumerate(groups, start=1):
            chunk = common_pb2.Chunk(
                chunk_id=f"{span.document_id}-{span.start}-{span.end}",
                document_id=span.document_id,
                start_char=span.start,
                end_char=span.end,
                token_count=10,
            )
            hit = common_pb2.RetrievedChunk(chunk=chunk, label=common_pb2.CHUNK_LABEL_HIT, rank=rank, score=1 / rank)
            response.retrieved_chunks.append(hit)
            response.expansion_tree.hits.add(hit=hit)
        return response

    def list_strategies(self):
        return REGISTRY.infos()

    def list_documents(self):
        return [self.get_document(name) for name in "ABC"]

    def get_document(self, document_id, full=False):
        return documents_pb2.Document(
            document_id=document_id, name=f"{document_id}.md", content_hash="h", text="x" * 2000 if full else ""
        )

    def indexed_set(self, model, document_id, strategy, config_id):
        return retriever_pb2.IndexedSet(
            embedding_model=model, document_id=document_id, strategy=strategy, config_id=config_id, points=10
        )


@pytest.fixture(scope="module")
def evaluator(module_database_url):
    """One evaluator for the module's tests, on SQLite, then on PostgreSQL."""
    with serve_evaluator(RankedPeers(), module_database_url, DEADLINE_S) as stub:
        yield stub


@pytest.fixture(scope="module")
def experiments(evaluator):
    """{top_k: the finished experiment, with its results}."""
    questions = [
        evaluator_pb2.Question(
            text=q,
            references=[
                evaluator_pb2.Reference(document_id=s.document_id, start_char=s.start, end_char=s.end)
                for s in CASES[q][1]
            ],
        )
        for q in QUESTIONS
    ]
    question_set = evaluator.CreateQuestionSet(
        evaluator_pb2.CreateQuestionSetRequest(name="ranked", questions=questions), timeout=DEADLINE_S
    )
    out = {}
    for top_k in (5, 10):
        config = evaluator_pb2.ExperimentConfig(
            name=f"top {top_k}",
            question_set_id=question_set.question_set_id,
            retrieval_only=True,
            strategies=[evaluator_pb2.StrategyGrid(strategy="fixed_size")],
            retrieval=common_pb2.RetrievalOptions(top_k=top_k),
        )
        events = list(evaluator.RunExperiment(evaluator_pb2.RunExperimentRequest(config=config), timeout=DEADLINE_S))
        assert events[-1].experiment.state == evaluator_pb2.EXPERIMENT_STATE_SUCCEEDED, events[-1].experiment.error
        out[top_k] = evaluator.GetExperiment(
            evaluator_pb2.GetExperimentRequest(experiment_id=events[-1].experiment.experiment_id), timeout=DEADLINE_S
        )
    return out


def measured(metrics: evaluator_pb2.RetrievalMetrics) -> dict[str, float]:
    return {name: getattr(metrics, name) for name in RANK if metrics.HasField(name)}


@pytest.mark.parametrize("top_k", [5, 10])
def test_each_question_and_each_run_mean_equal_the_hand_computation(experiments, top_k):
    experiment = experiments[top_k]
    results = {r.question: measured(r.metrics) for r in experiment.results}
    assert set(results) == set(QUESTIONS)
    for question in QUESTIONS:
        assert results[question] == pytest.approx(BY_HAND[top_k][question], abs=1e-12), question
    (run,) = experiment.runs
    names = RANK if top_k == 10 else tuple(n for n in RANK if not n.endswith("_10"))
    means = {name: sum(BY_HAND[top_k][q][name] for q in QUESTIONS) / 3 for name in names}
    assert measured(run.mean_metrics) == pytest.approx(means, abs=1e-12)  # top_k 5: no recall@10, no NDCG@10


def test_list_metrics_and_compare_carry_the_rank_measures(evaluator, experiments):
    infos = evaluator.ListMetrics(evaluator_pb2.ListMetricsRequest(), timeout=DEADLINE_S).metrics
    assert [(m.name, m.label) for m in infos if m.group == "rank"] == [
        ("recall_at_1", "recall@1"),
        ("recall_at_3", "recall@3"),
        ("recall_at_5", "recall@5"),
        ("recall_at_10", "recall@10"),
        ("ndcg", "NDCG@k"),
        ("ndcg_at_10", "NDCG@10"),
        ("map", "MAP"),
    ]
    reply = evaluator.CompareExperiments(
        evaluator_pb2.CompareExperimentsRequest(
            experiment_ids=[experiments[5].experiment_id, experiments[10].experiment_id]
        ),
        timeout=DEADLINE_S,
    )
    found = {d.metric: d for d in reply.differences if d.metric in RANK}
    # recall@10 and NDCG@10 are not measured at top_k 5, so there is nothing to compare them with.
    assert set(found) == {"recall_at_1", "recall_at_3", "recall_at_5", "ndcg", "map"}
    assert found["recall_at_5"].difference == 0.0 and found["recall_at_5"].shared_questions == 3
    # Only the late hit's question differs: its AP rises from 1/3 to (1 + 2/8) / 3.
    assert found["map"].difference == pytest.approx(((1 + 2 / 8) / 3 - 1 / 3) / 3)
    assert found["map"].ci_low <= found["map"].difference <= found["map"].ci_high
    # The Compare page lists them in the catalogue's order, after the labelled measures.
    names = list(compare_html.by_metric(reply, MetricFormat(infos)))
    assert [n for n in names if n in RANK] == ["recall_at_1", "recall_at_3", "recall_at_5", "ndcg", "map"]
    assert names.index("recall_at_1") > names.index("mrr_hits")
    assert "NDCG@k" in compare_html.compare_html(reply, MetricFormat(infos))


def report_headers(evaluator, experiment_id: str) -> list[str]:
    request = evaluator_pb2.GetReportRequest(experiment_id=experiment_id, view=evaluator_pb2.REPORT_VIEW_TECHNICAL)
    html = b"".join(p.data for p in evaluator.GetReport(request, timeout=DEADLINE_S)).decode()
    return [re.sub(r"<[^>]+>", "", th).strip() for th in re.findall(r"<th[^>]*>(.*?)</th>", html, re.S)]


def test_the_report_the_ui_and_the_cli_show_the_rank_measures_a_run_has(evaluator, experiments):
    metrics = MetricFormat(evaluator.ListMetrics(evaluator_pb2.ListMetricsRequest(), timeout=DEADLINE_S).metrics)
    top10, top5 = experiments[10], experiments[5]
    heads = report_headers(evaluator, top10.experiment_id)
    assert {"recall@1", "recall@10", "NDCG@k", "NDCG@10", "MAP"} <= set(heads)
    assert "recall@10" not in report_headers(evaluator, top5.experiment_id)  # left out: no run has it

    html = experiments_html.experiment_summary_html(top10, metrics)
    heads = [re.sub(r"<[^>]+>", "", th).strip() for th in re.findall(r"<th[^>]*>(.*?)</th>", html, re.S)]
    cells = [re.sub(r"<[^>]+>", "", td).strip() for td in re.findall(r"<td[^>]*>(.*?)</td>", html, re.S)]
    assert cells[heads.index("recall@10")] == f"{100 * (1 + 2 / 3 + 2 / 3) / 3:.1f}%"
    assert cells[heads.index("MAP")] == f"{(0.5 + (1 + 2 / 3) / 3 + (1 + 2 / 8) / 3) / 3:.3f}"

    out = io.StringIO()
    print_table(top5, metrics, out)
    head, row = out.getvalue().split("\n\n")[1].splitlines()
    assert head.split() == ["run", "recall@1", "recall@3", "recall@5", "NDCG@k", "MAP"]
    recall_1 = (0 + 1 / 3 + 1 / 3) / 3
    assert row.split()[1:3] == [f"{100 * recall_1:.1f}%", f"{100 * (1 + 2 / 3 + 1 / 3) / 3:.1f}%"]
    (json_row,) = summary_rows(top5, metrics)  # `chunklab experiment run --json`
    assert json_row["recall_at_1"] == pytest.approx(recall_1) and json_row["recall_at_10"] is None
