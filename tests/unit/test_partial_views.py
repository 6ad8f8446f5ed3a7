"""A partial experiment as each view shows it (ADR 0087): the UI's summary and list in amber
with each failed run's reason beside it, the command line's lines and exit code, the report's
header and notes, Compare's warning. One hand-built experiment, two runs, one failed."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET

from google.protobuf.timestamp_pb2 import Timestamp

from chunklab import experiment_state
from chunklab.v1 import common_pb2, evaluator_pb2
from chunklab.views.metric_format import MetricFormat
from chunklab_app.cli.main import runs_not_run
from chunklab_app.cli.terminal import print_table
from frontend.views import experiments_html
from services.evaluator.judging import metric_catalog
from services.evaluator.reports import compare, report

METRICS = MetricFormat(metric_catalog.list_metrics().metrics)
REASON = "contextual_retrieval could not process speech.md: no LLM endpoint is configured"


def partial() -> evaluator_pb2.Experiment:
    good = evaluator_pb2.ExperimentRun(
        run_key="fixed_size[chunk_size=256]",
        questions_done=4,
        questions_total=4,
        questions_failed=1,
        question_error="retrieval failed: the index set is being rebuilt",
        mean_metrics=evaluator_pb2.RetrievalMetrics(recall=0.75, iou=0.1, questions_labelled=4, tokens_sent=300),
    )
    failed = evaluator_pb2.ExperimentRun(run_key="contextual_retrieval", questions_total=4, error=REASON)
    state, error = experiment_state.ended([good, failed])
    return evaluator_pb2.Experiment(
        experiment_id="e-12345678",
        config=evaluator_pb2.ExperimentConfig(name="half failed", retrieval_only=True),
        state=state,
        error=error,
        runs=[good, failed],
        questions_done=4,
        questions_total=8,
        created_at=Timestamp(seconds=1_800_000_000),
    )


def parse(html: str) -> ET.Element:
    return ET.fromstring(f"<root>{html}</root>")


def text(element: ET.Element) -> str:
    return " ".join("".join(element.itertext()).split())


def test_the_ui_shows_a_partial_experiment_in_amber_with_each_failed_runs_reason_beside_it():
    experiment = partial()
    assert experiment.state == evaluator_pb2.EXPERIMENT_STATE_PARTIAL
    root = parse(experiments_html.experiment_summary_html(experiment, METRICS))
    assert root.find("div").get("data-state") == "partial"
    assert text(root.find(".//span[@class='cl-state-partial']")) == "partial"
    assert "2 of 2 runs did not finish every question" in text(root.find(".//div[@class='cl-warnings cl-partial']"))
    failed = root.find(".//tr[@data-run-key='contextual_retrieval']")
    assert failed.get("data-failed") == "true"
    assert text(failed.find(".//div[@class='cl-run-failure']")) == f"failed: {REASON}"
    some = root.find(".//tr[@data-run-key='fixed_size[chunk_size=256]']")
    assert some.get("data-failed") == "false"
    assert text(some.find(".//div[@class='cl-run-failure']")) == (
        "1 of 4 questions failed (the first: retrieval failed: the index set is being rebuilt)"
    )
    listed = parse(experiments_html.experiments_table_html([experiment]))
    assert text(listed.find(".//td[@class='cl-state-partial']")) == "partial"


def test_the_command_line_names_each_failed_run_and_exits_1():
    experiment = partial()
    out = io.StringIO()
    print_table(experiment, METRICS, out)
    printed = out.getvalue()
    assert printed.startswith("experiment e-12345678: partial (2 of 2 runs did not finish every question: ")
    assert f"not measured: {REASON}" in printed
    assert "1 of 4 questions failed (the first: retrieval failed" in printed
    assert runs_not_run(experiment) == [
        "run fixed_size[chunk_size=256] is incomplete: 3/4 questions "
        "(1 of 4 questions failed (the first: retrieval failed: the index set is being rebuilt))",
        f"run contextual_retrieval did not run: 0/4 questions ({REASON})",
    ]


def test_the_report_header_and_notes_and_compare_say_some_runs_failed():
    experiment = partial()
    shown = report.page(experiment, evaluator_pb2.QuestionSet(name="qs"), [], evaluator_pb2.REPORT_VIEW_MANAGERIAL)
    assert shown["state"] == "partial"
    assert shown["failed_runs"] == [
        "fixed_size[chunk_size=256]: 1 of 4 questions failed (the first: retrieval failed: the index set is being "
        "rebuilt)",
        f"contextual_retrieval: {REASON}",
    ]
    notes = shown["managerial"]["notes"]
    assert notes[0].startswith("This experiment is partial: 2 of 2 runs did not finish every question")
    assert f"contextual_retrieval did not run: {REASON}" in notes
    html = report.render(experiment, evaluator_pb2.QuestionSet(name="qs"), [])
    assert '<span class="state state-partial">partial</span>' in html and REASON in html
    other = evaluator_pb2.Experiment(experiment_id="e-2", config=evaluator_pb2.ExperimentConfig(name="other"))
    other.config.retrieval.CopyFrom(common_pb2.RetrievalOptions())
    warned = compare.warnings([experiment, other])
    assert (
        "half failed is partial: fixed_size[chunk_size=256], contextual_retrieval did not finish every question; "
        "only what its runs measured is compared"
    ) in warned
