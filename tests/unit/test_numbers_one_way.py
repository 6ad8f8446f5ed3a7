"""Every number reads one way everywhere (findings of 2026-12-01, item 7): the report,
the Experiments page, the CLI and the Compare page format a run's measures through
chunklab.views.metric_format, so MRR is 0.756, recall 97.7%, tokens 1,234 and cost $0.0123
on each of them."""

from __future__ import annotations

import io
import re

import pytest

from chunklab.v1 import common_pb2
from chunklab.v1 import evaluator_pb2 as pb
from chunklab_app.cli import terminal
from frontend.pages.compare import compare_html
from frontend.views import experiments_html
from services.evaluator.reports import report

METRICS = report.METRICS
SHOWN = ("97.7%", "0.756", "1,234", "$0.0123")


@pytest.fixture(scope="module")
def finished() -> pb.Experiment:
    means = pb.RetrievalMetrics(labelled=True, questions=2, questions_labelled=2, recall=0.977, mrr=0.756,
                                tokens_sent=1234, embedding_answer_similarity=-1)
    runs = [pb.ExperimentRun(run_key=key, questions_done=2, questions_total=2, mean_metrics=means,
                             usage=common_pb2.TokenUsage(estimated_cost_usd=0.0123)) for key in ("r1", "r2")]
    return pb.Experiment(experiment_id="e1", config=pb.ExperimentConfig(name="numbers"), runs=runs,
                         state=pb.EXPERIMENT_STATE_SUCCEEDED)


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


@pytest.mark.parametrize("where", ["report", "experiments page", "cli"])
def test_a_runs_measures_read_the_same_in_every_place(finished, where):
    if where == "report":
        shown = _text(report.render(finished, pb.QuestionSet(name="set"), [], pb.REPORT_VIEW_MANAGERIAL))
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
    response = pb.CompareExperimentsResponse(experiments=[finished], differences=[pb.MetricDifference(
        metric="mrr", baseline_run_key="r1", run_key="r2", difference=0.012, ci_low=-0.004, ci_high=0.03,
        shared_questions=2, baseline_mean=0.756, mean=0.768, baseline_experiment_id="e1", experiment_id="e1")])
    shown = _text(compare_html.compare_html(response, METRICS))
    assert "0.756" in shown and "0.768" in shown and "+0.012" in shown and "[-0.004, +0.030]" in shown
    assert METRICS.interval("recall", -0.031, 0.078) == "[-3.1 pts, +7.8 pts]"
