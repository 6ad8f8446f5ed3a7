"""One number formatter (issue 27, item 3): chunklab.views.numbers writes every count,
percentage, score, size and duration, and each view shows its numbers through it: the
Query columns (a typed question and one from a set alike), the Experiments tables, the
plots' data, the reports and the CLI."""

from __future__ import annotations

import io
import re

import pytest

from chunklab.v1 import common_pb2, retriever_pb2
from chunklab.v1 import evaluator_pb2 as pb
from chunklab.views import numbers
from chunklab.views.metric_format import MetricFormat
from chunklab.views.render import render
from chunklab_app.cli import terminal
from frontend.pages.compare import compare_html
from frontend.pages.documents import boundary_stats, viewer
from frontend.pages.query import query_columns
from frontend.views import experiments_html, result_plots
from services.evaluator.reports import report, report_technical

METRICS = report.METRICS


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).strip()


@pytest.mark.parametrize(
    ("shown", "expected"),
    [
        (numbers.count(1077), "1,077"),
        (numbers.count(1270.42857143), "1,270"),
        (numbers.count(2.5), "3"),
        (numbers.signed_count(-1234), "-1,234"),
        (numbers.counted(1, "run"), "1 run"),
        (numbers.counted(1020, "token"), "1,020 tokens"),
        (numbers.percent(0.977), "97.7%"),
        (numbers.percent(0.31, 0), "31%"),
        (numbers.points(0.031), "+3.1 pts"),
        (numbers.score(0.7558), "0.756"),
        (numbers.judge(7.5), "7.50"),
        (numbers.usd(0.01234), "$0.0123"),
        (numbers.times(4.06), "4.1×"),
        (numbers.size(812), "812 B"),
        (numbers.size(12_600), "12.3 KiB"),
        (numbers.size(3 * 1024**3), "3.0 GiB"),
        (numbers.median(11.5), "11.5"),
        (numbers.median(1200.0), "1,200"),
    ],
)
def test_each_kind_of_number_reads_one_way(shown, expected):
    assert shown == expected


@pytest.mark.parametrize(
    ("seconds", "expected"),
    [
        (0.0004, "0 ms"),
        (0.85, "850 ms"),
        (0.9996, "1.0 s"),
        (12.34, "12.3 s"),
        (59.97, "1 min 00 s"),
        (245, "4 min 05 s"),
        (3725, "1 h 02 min"),
    ],
)
def test_a_duration_picks_its_unit_by_size(seconds, expected):
    assert numbers.duration(seconds) == expected
    assert numbers.milliseconds(seconds * 1000) == expected


def test_differences_and_estimates_of_time():
    assert numbers.signed_duration(-1.23) == "-1.2 s" and numbers.signed_duration(0.12) == "+120 ms"
    assert [numbers.rough_duration(s) for s in (0.2, 42, 89.9, 3600, 4830)] == [
        "about 1 s",
        "about 42 s",
        "about 1 min",
        "about 1 h",
        "about 1 h 20 min",
    ]


def test_an_experiments_questions_are_counted_apart_from_its_configurations():
    assert numbers.questions_by_runs(84, 84, 3) == "28 questions × 3 configurations"
    assert numbers.questions_by_runs(56, 84, 3) == "56 of 84 (28 questions × 3 configurations)"
    assert numbers.questions_by_runs(14, 28, 1) == "14 of 28 questions"
    assert numbers.questions_by_runs(1, 1, 1) == "1 question"


def test_templates_write_numbers_through_the_same_filters():
    shown = render(
        "frontend",
        "context_summary.html.j2",
        chunks=1200,
        made_of="hits",
        tokens=2560,
        strategy="s",
        embedding_model="m",
    )
    assert "1,200 chunks" in _text(shown) and "2,560 tokens sent" in _text(shown)


def _retrieved(tokens: list[int]) -> retriever_pb2.RetrieveResponse:
    hits = [
        common_pb2.RetrievedChunk(
            chunk=common_pb2.Chunk(chunk_id=f"c{i}", chunk_index=i, content="x", token_count=n, document_name="a.md"),
            label=common_pb2.CHUNK_LABEL_HIT,
            rank=i + 1,
            score=0.5,
        )
        for i, n in enumerate(tokens)
    ]
    return retriever_pb2.RetrieveResponse(retrieved_chunks=hits, timings=retriever_pb2.RetrieveTimings(total_ms=1234.5))


@pytest.mark.parametrize("catalogue", ["typed question: no catalogue read", "question from a set"])
def test_a_query_column_counts_its_tokens_sent_the_same_for_a_typed_and_a_picked_question(catalogue):
    """A typed question once showed "319.000 tokens sent": its columns were drawn with an empty
    metric catalogue, where tokens_sent read as a ratio; a question from a set showed "1,077"."""
    formats = MetricFormat([] if catalogue.startswith("typed") else METRICS._infos.values())
    configuration = query_columns.Configuration(label="fixed_size", strategy="fixed_size", config_id="cfg")
    column = query_columns.Column(configuration=configuration, response=_retrieved([700, 377]))
    view = query_columns.column_view(column, [], formats)
    assert view["tokens_sent"] == "1,077" and view["latency"] == "1.2 s"


@pytest.fixture
def experiment() -> pb.Experiment:
    means = pb.RetrievalMetrics(
        labelled=True, questions=28, questions_labelled=28, recall=1.0, iou=0.051, tokens_sent=1270,
        chunks_sent=5, retrieve_ms=850, answer_ms=12_300, embedding_answer_similarity=-1,
    )  # fmt: skip
    runs = [
        pb.ExperimentRun(
            run_key=f"fixed_size[chunk_size={size}]", questions_done=28, questions_total=28, mean_metrics=means
        )
        for size in (128, 256, 512)
    ]
    experiment = pb.Experiment(
        experiment_id="e1", runs=runs, questions_done=84, questions_total=84, state=pb.EXPERIMENT_STATE_SUCCEEDED
    )
    # The verdict's means are of every question: 8,893 tokens over 7 questions is 1270.42857143.
    experiment.verdict.metric = "recall"
    for run in runs:
        experiment.verdict.means.add(run_key=run.run_key, metric="recall", mean=0.97714, ci_low=0.9, ci_high=1.0)
        experiment.verdict.means.add(run_key=run.run_key, metric="tokens_sent", mean=8893 / 7)
    return experiment


def test_the_experiments_table_and_summary_count_questions_per_configuration(experiment):
    table = _text(experiments_html.experiments_table_html([experiment]))
    summary = _text(experiments_html.experiment_summary_html(experiment, METRICS))
    for shown in (table, summary):
        assert "28 questions × 3 configurations" in shown and "84/84" not in shown
    assert "1,270" in summary and "1270.4" not in summary


def test_compare_rows_count_questions_per_configuration(experiment):
    shown = _text(compare_html.compare_html(pb.CompareExperimentsResponse(experiments=[experiment]), METRICS))
    assert "28 questions × 3 configurations" in shown and "84/84" not in shown


def test_a_question_detail_writes_its_times_as_durations():
    metrics = pb.RetrievalMetrics(retrieve_ms=850, answer_ms=12_345, tokens_sent=1077, chunks_sent=1200)
    result = pb.QuestionResult(question_id="q", run_key="r", question="?", metrics=metrics)
    shown = _text(experiments_html.question_detail_html(result, METRICS))
    assert "retrieve 850 ms, answer 12.3 s" in shown and "1,200 chunks, 1,077 tokens sent" in shown


def test_the_plots_hold_the_numbers_at_the_tables_decimals(experiment):
    """The Pareto plot's tooltip prints its data as it is: once "1270.42857143"."""
    frame = result_plots.tradeoff_frame([experiment], METRICS)
    assert set(frame["tokens sent"]) == {1270} and set(frame["quality"]) == {97.7}
    means = result_plots.means_frame([experiment], METRICS, "recall")
    assert set(means["mean"]) == {97.7} and set(means["95% interval"]) == {"97.7% [90.0%, 100.0%]"}
    assert METRICS.axis_format("tokens_sent") == ",.0f" and METRICS.axis_format("recall") == ",.1f"


def test_the_reports_and_the_cli_write_tokens_and_times_alike(experiment):
    # The runs' full table is in the technical view (ADR 0081).
    table = _text(report.render(experiment, pb.QuestionSet(name="set"), [], pb.REPORT_VIEW_TECHNICAL))
    assert "1,270" in table and "1270.4" not in table
    run = experiment.runs[0]
    run.chunk_count, run.processing_seconds = 1234, 245
    assert report_technical.run_row(run)["processing"] == "1,234 chunks in 4 min 05 s"
    out = io.StringIO()
    terminal.print_table(experiment, METRICS, out)
    assert "1,270" in out.getvalue() and "1270.4" not in out.getvalue()
    progress = io.StringIO()
    terminal.Progress(stream=progress).update(1200, 2400, "answering")
    assert "1,200/2,400 answering" in progress.getvalue()


def test_histogram_bins_and_titles():
    assert boundary_stats.histogram([5, 1500], 1000, bins=2) == [("0–999", 1), ("1,000–1,999", 1)]
    # The configuration is named in the block label (it wraps), never in the one-line plot title.
    assert viewer.histogram_title("fixed_size · chunk_size=256 (preview)").endswith(": chunks by tokens")
