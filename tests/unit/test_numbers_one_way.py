"""Every number reads one way everywhere (findings of 2026-12-01, item 7): the report,
the Experiments page, the CLI and the Compare page format a run's measures through
chunklab.views.metric_format, so MRR is 0.756, recall 97.7%, tokens 1,234 and cost $0.0123
on each of them; and a retrieval score is 0.812 on the Query page, the CLI and the report
(issue 26)."""

from __future__ import annotations

import io
import re

import pytest

from chunklab.v1 import common_pb2
from chunklab.v1 import evaluator_pb2 as pb
from chunklab.v1 import retriever_pb2 as rpb
from chunklab.views import metric_format
from chunklab_app.cli import retrieval_cli, terminal
from chunklab_app.cli.main import parser as cli_parser
from frontend.pages.compare import compare_html
from frontend.views import experiments_html, retrieval_html
from services.evaluator.reports import report, report_technical

METRICS = report.METRICS
SHOWN = ("97.7%", "0.756", "1,234", "$0.0123")


@pytest.fixture(scope="module")
def finished() -> pb.Experiment:
    means = pb.RetrievalMetrics(
        labelled=True,
        questions=2,
        questions_labelled=2,
        recall=0.977,
        mrr=0.756,
        tokens_sent=1234,
        embedding_answer_similarity=-1,
    )
    runs = [
        pb.ExperimentRun(
            run_key=key,
            questions_done=2,
            questions_total=2,
            mean_metrics=means,
            usage=common_pb2.TokenUsage(estimated_cost_usd=0.0123),
        )
        for key in ("r1", "r2")
    ]
    return pb.Experiment(
        experiment_id="e1", config=pb.ExperimentConfig(name="numbers"), runs=runs, state=pb.EXPERIMENT_STATE_SUCCEEDED
    )


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


@pytest.mark.parametrize("where", ["report", "experiments page", "cli"])
def test_a_runs_measures_read_the_same_in_every_place(finished, where):
    if where == "report":
        shown = _text(report.render(finished, pb.QuestionSet(name="set"), [], pb.REPORT_VIEW_TECHNICAL))
    elif where == "experiments page":
        shown = _text(experiments_html.experiment_summary_html(finished, METRICS))
    else:
        out = io.StringIO()
        terminal.print_table(finished, METRICS, out)
        shown = out.getvalue()
        assert "$" not in shown  # the CLI's table has no cost column
    for value in SHOWN[:3] if where == "cli" else SHOWN:
        assert value in shown, (where, value)
    assert "75.6%" not in shown and "0.977" not in shown


def test_compare_writes_differences_and_intervals_through_the_same_formatter(finished):
    response = pb.CompareExperimentsResponse(
        experiments=[finished],
        differences=[
            pb.MetricDifference(
                metric="mrr",
                baseline_run_key="r1",
                run_key="r2",
                difference=0.012,
                ci_low=-0.004,
                ci_high=0.03,
                shared_questions=2,
                baseline_mean=0.756,
                mean=0.768,
                baseline_experiment_id="e1",
                experiment_id="e1",
            )
        ],
    )
    shown = _text(compare_html.compare_html(response, METRICS))
    assert "0.756" in shown and "0.768" in shown and "+0.012" in shown and "[-0.004, +0.030]" in shown
    assert METRICS.interval("recall", -0.031, 0.078) == "[-3.1 pts, +7.8 pts]"


def scored_response() -> rpb.RetrieveResponse:
    chunk = common_pb2.Chunk(chunk_id="c", chunk_index=0, content="tide", document_name="a.md")
    hit = common_pb2.RetrievedChunk(
        chunk=chunk, label=common_pb2.CHUNK_LABEL_HIT, rank=1, score=0.812345, rerank_score=0.98765
    )
    return rpb.RetrieveResponse(
        retrieved_chunks=[hit], expansion_tree=common_pb2.ExpansionTree(hits=[common_pb2.ExpansionNode(hit=hit)])
    )


def test_a_retrieval_score_reads_the_same_on_the_query_page_the_cli_and_the_report(capsys):
    """One format for a similarity or rerank score: the Query page once wrote 0.8123, the CLI 0.812."""
    assert (metric_format.score(0.812345), metric_format.score(0.98765)) == ("0.812", "0.988")
    response = scored_response()
    for html in (retrieval_html.flat_list_html(response), retrieval_html.expansion_tree_html(response)):
        assert "score 0.812" in html and "0.8123" not in html
    assert "rerank 0.988" in retrieval_html.expansion_tree_html(response)

    class Client:
        def retrieve(self, query, retrieval_options):
            return response

    args = cli_parser().parse_args(["query", "tides?", "--strategy", "fixed_size"])
    assert retrieval_cli.cmd_query(args, Client()) == 0
    assert "0.812 rerank 0.988" in capsys.readouterr().out

    hits = report_technical._hits(response.expansion_tree, {"c": "t1"})
    assert hits[0]["score"] == "0.812"
