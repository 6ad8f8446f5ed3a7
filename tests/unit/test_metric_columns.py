"""Every table shows every measure of the catalogue's groups it shows (issue 26, ADR 0077):
a metric added to services/evaluator/judging/metric_catalog.py appears in the CLI's table
and --json rows, the Experiments page, the report's summary, its technical rows and the
verdict's means without another edit, and a view that lists measures of its own fails here."""

from __future__ import annotations

import io
import re

import pytest

from chunklab.v1 import evaluator_pb2 as pb
from chunklab.views.metric_format import MetricFormat
from chunklab_app.cli import terminal
from frontend.views import experiments_html
from services.evaluator.experiments.summary import summarize
from services.evaluator.judging import metric_catalog
from services.evaluator.reports import report

METRICS = MetricFormat(metric_catalog.list_metrics().metrics)
JUDGE_SCORES = [f.name for f in pb.JudgeScores.DESCRIPTOR.fields if f.message_type is pb.Score.DESCRIPTOR]
# The groups each view shows, every measure of each (the efficiency group's tokens sent is "tokens / q"
# on the Experiments page and in the report, beside chunks, LLM calls and cost).
VIEWS = {
    "cli table": ("labelled", "rank", "efficiency"),
    "cli --json": ("labelled", "hits", "rank", "judge"),
    "experiments page": ("labelled", "hits", "rank", "judge"),
    "report": ("labelled", "hits", "rank", "judge"),
    "technical report": ("labelled", "efficiency"),
    "verdict": ("labelled", "efficiency"),
}


def _everything(metrics: pb.RetrievalMetrics, value: float) -> None:
    """Every measure a RetrievalMetrics holds, taken."""
    for field in pb.RetrievalMetrics.DESCRIPTOR.fields:
        if field.type == field.TYPE_DOUBLE:
            setattr(metrics, field.name, value)


@pytest.fixture(scope="module")
def measured() -> tuple[pb.Experiment, list[pb.QuestionResult]]:
    """Two runs of four questions with every measure of the catalogue taken."""
    results = []
    for n, run in enumerate(("a", "b")):
        for q in range(4):
            metrics = pb.RetrievalMetrics(labelled=True, tokens_sent=100 + n, chunks_sent=2)
            _everything(metrics, 0.25 + 0.1 * n + 0.01 * q)
            judge = pb.JudgeScores(
                judge_model="j", **{name: pb.Score(measured=True, value=5 + n, reason="r") for name in JUDGE_SCORES}
            )
            results.append(
                pb.QuestionResult(
                    question_id=f"q{q}", question=f"question {q}", run_key=run, metrics=metrics, judge=judge
                )
            )
    experiment = pb.Experiment(
        experiment_id="e1",
        config=pb.ExperimentConfig(name="every measure"),
        state=pb.EXPERIMENT_STATE_SUCCEEDED,
        runs=[pb.ExperimentRun(run_key=run, questions_total=4) for run in ("a", "b")],
    )
    summarize(experiment, results)
    return experiment, results


def _heads(html: str, table: str) -> list[str]:
    start = html.index(table)
    part = html[start : html.index("</thead>", start)]
    return [re.sub(r"<[^>]+>", "", th).strip() for th in re.findall(r"<th[^>]*>(.*?)</th>", part, re.DOTALL)]


def shown(view: str, experiment: pb.Experiment, results: list[pb.QuestionResult]) -> list[str]:
    """What the view names its measures by: the column heads (the --json rows: their keys)."""
    if view == "cli table":
        out = io.StringIO()
        terminal.print_table(experiment, METRICS, out)
        table, ranked = out.getvalue().split("\n\n")[:2]
        heads = f"{table.splitlines()[1]}\n{ranked.splitlines()[0]}"  # labels right-aligned, one space apart
        return [
            label
            for label in map(METRICS.label, METRICS.order)
            if re.search(rf"(?<!\S){re.escape(label)}(?!\S)", heads)
        ]
    if view == "cli --json":
        return [METRICS.label(key) for row in terminal.summary_rows(experiment, METRICS) for key in row]
    if view == "experiments page":
        return _heads(experiments_html.experiment_summary_html(experiment, METRICS), "cl-runs-table")
    if view == "verdict":
        return _heads(experiments_html.experiment_summary_html(experiment, METRICS), "verdict-means")
    question_set = pb.QuestionSet(
        name="set", questions=[pb.Question(question_id=f"q{q}", text=f"question {q}") for q in range(4)]
    )
    if view == "report":
        html = report.render(experiment, question_set, results, pb.REPORT_VIEW_TECHNICAL)
        return _heads(html, '<div class="wide"><table><thead>')  # the full table, only in the technical view
    html = report.render(experiment, question_set, results, pb.REPORT_VIEW_TECHNICAL)
    judged = re.findall(r'data-measure="([a-z_]+)"|<b>([a-z ]+)</b>', html)
    return _heads(html, '<table class="results">') + [METRICS.label(n or b.replace(" ", "_")) for n, b in judged]


@pytest.mark.parametrize("view", VIEWS)
def test_every_view_shows_every_measure_of_its_groups(measured, view):
    experiment, results = measured
    heads = shown(view, experiment, results)
    wanted = [METRICS.label(m.info.name) for m in metric_catalog.CATALOG if m.info.group in VIEWS[view]]
    if view == "technical report":  # the judge's scores are listed under each row, with their reasons
        wanted += [METRICS.label(name) for name in JUDGE_SCORES]
    missing = [label for label in wanted if label not in heads]
    assert not missing, f"{view} leaves out {missing}"


def test_the_tables_follow_the_catalogues_order(measured):
    experiment, results = measured
    for view in ("cli table", "experiments page", "report", "technical report"):  # the verdict: its measure first
        heads = list(dict.fromkeys(shown(view, experiment, results)))
        if view == "technical report":
            heads = heads[: heads.index("tokens sent") + 1]  # the row's columns; the judge's scores come under it
        labels = [METRICS.label(m.info.name) for m in metric_catalog.CATALOG if METRICS.label(m.info.name) in heads]
        assert [h for h in heads if h in labels] == labels, view
