"""The command line runs a whole experiment against the running stack, as a
person would type it: upload, import, run with progress, print the summary,
write the report; it sends every retrieval option, and asks single questions."""

from __future__ import annotations

import json
import re
import subprocess

import pytest

from chunklab.rpc import channels
from chunklab.v1 import evaluator_pb2
from tests.support.cli import run_cli

pytestmark = pytest.mark.e2e

NOTES = """# Field notes

The lighthouse keeper logs the weather every morning at six.
Storm warnings go up when the barometer falls below 990 hectopascals.

## Supplies

Fresh water arrives by boat on Tuesdays. Lamp oil is ordered once a month.
"""


def cli(stack, *args: str) -> subprocess.CompletedProcess:
    return run_cli(stack.env(), *args)


@pytest.fixture
def files(tmp_path):
    corpus = tmp_path / "cli-notes.md"
    corpus.write_text(NOTES)
    questions = tmp_path / "questions.jsonl"
    questions.write_text(
        "\n".join(
            json.dumps(q)
            for q in [
                {
                    "question": "When does the keeper log the weather?",
                    "references": [{"document": "cli-notes", "content": "every morning at six"}],
                },
                {
                    "question": "How does water arrive?",
                    "references": [{"document": "cli-notes", "content": "Fresh water arrives by boat on Tuesdays."}],
                },
            ]
        )
    )
    return corpus, questions


def test_one_command_runs_an_experiment_and_writes_the_report(stack, files, tmp_path):
    corpus, questions = files
    out = tmp_path / "reports"  # not there yet: as the README's `--report reports/`, a folder is made
    done = cli(
        stack,
        "experiment",
        "--corpus",
        str(corpus),
        "--questions",
        str(questions),
        "--strategy",
        "fixed_size",
        "--grid",
        "fixed_size.chunk_size=16,32",
        "--grid",
        "fixed_size.chunk_overlap=0",
        "--top-k",
        "2",
        "--retrieval-only",
        "--only-uploaded",
        "--report",
        f"{out}/",
        "--json",
        "--per-question",
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["state"] == "succeeded"
    assert [r["run"] for r in summary["runs"]] == [
        "fixed_size[chunk_size=16,chunk_overlap=0]",
        "fixed_size[chunk_size=32,chunk_overlap=0]",
    ]
    for row in summary["runs"]:
        assert row["questions"] == 2 and 0 <= row["iou"] <= row["recall"] <= 1
        # Per document (one here: both questions point into the notes) and per question (ADR 0118).
        (document,) = row["per_document"]
        assert (document["document"], document["collection"], document["questions"]) == ("cli-notes.md", "default", 2)
        assert document["recall"] == pytest.approx(row["recall"]) and document["iou"] == pytest.approx(row["iou"])
        assert [q["documents"] for q in row["per_question"]] == [["cli-notes.md"], ["cli-notes.md"]]
        assert sum(q["recall"] for q in row["per_question"]) / 2 == pytest.approx(row["recall"])
    assert "[" in done.stderr and "/4" in done.stderr  # the progress bar
    (report,) = out.glob("*.html")
    assert report.read_text().startswith("<!DOCTYPE html>")
    again = cli(
        stack, "report", summary["experiment_id"], "--out", str(tmp_path / "again.html"), "--view", "managerial"
    )
    assert again.returncode == 0 and 'id="managerial"' in (tmp_path / "again.html").read_text()


def test_a_20_run_report_is_written_as_it_streams_and_reads_collapsed_per_question(stack, files, tmp_path):
    corpus, questions = files
    sizes = ",".join(str(n) for n in range(13, 53, 2))  # 20 configurations, none that another test processes
    target = tmp_path / "twenty.html"
    done = cli(
        stack,
        "experiment",
        "--corpus",
        str(corpus),
        "--questions",
        str(questions),
        "--strategy",
        "fixed_size",
        "--grid",
        f"fixed_size.chunk_size={sizes}",
        "--grid",
        "fixed_size.chunk_overlap=0",
        "--top-k",
        "2",
        "--retrieval-only",
        "--only-uploaded",
        "--report",
        str(target),
        "--view",
        "technical",
        "--json",
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert len(summary["runs"]) == 20 and f"report written to {target}" in done.stderr
    # The file is the stream's bytes, which came in several pieces (16 KiB each on the test stack).
    request = evaluator_pb2.GetReportRequest(
        experiment_id=summary["experiment_id"], view=evaluator_pb2.REPORT_VIEW_TECHNICAL
    )
    header, *pieces = channels.evaluator(stack.addresses["evaluator"]).GetReport(request, timeout=60)
    assert header.header.file_name.startswith("chunklab-") and len(pieces) > 1
    assert target.read_bytes() == b"".join(p.data for p in pieces)
    html = target.read_text(encoding="utf-8")
    # Each of the 2 questions opens on a click to a row per run (ADR 0068); the rows hold no chunk text.
    per_question = html[html.index("<h3>Per question</h3>") : html.index('<h3 id="chunk-texts">')]
    assert per_question.count('<details class="q">') == 2 and "<details open" not in html
    assert per_question.count("<tr><td>fixed_size[") == 2 * 20
    assert '<pre class="doc">' not in per_question and len(per_question.encode()) < 2 * 20 * 1_000


def test_a_dry_run_prints_the_estimate_and_bad_usage_says_why(stack, files):
    corpus, questions = files
    dry = cli(
        stack,
        "experiment",
        "--corpus",
        str(corpus),
        "--questions",
        str(questions),
        "--strategy",
        "fixed_size",
        "--dry-run",
    )
    assert dry.returncode == 0, dry.stderr
    estimate = json.loads(dry.stdout)["estimate"]
    assert estimate["questions"] == 2 and estimate["runs"] == 1
    wrong = cli(stack, "experiment", "--questions", str(questions), "--strategy", "magic")
    assert wrong.returncode == 2 and "unknown strategy magic" in wrong.stderr
    listed = cli(stack, "strategies")
    assert listed.returncode == 0 and "fixed_size" in listed.stdout


def test_an_experiment_with_a_run_that_did_not_run_exits_1_and_names_it(stack, files):
    corpus, questions = files  # contextual_retrieval needs an LLM, and the test stack has none
    done = cli(
        stack,
        "experiment",
        "--corpus",
        str(corpus),
        "--questions",
        str(questions),
        "--strategy",
        "fixed_size",
        "--strategy",
        "contextual_retrieval",
        "--top-k",
        "1",
        "--retrieval-only",
        "--only-uploaded",
        "--json",
    )
    assert done.returncode == 1, done.stderr
    summary = json.loads(done.stdout)
    assert summary["state"] == "partial"  # one run failed, the other finished (ADR 0087)
    questions_by_run = {row["run"].split("[")[0]: row["questions"] for row in summary["runs"]}
    assert questions_by_run["fixed_size"] == 2 and questions_by_run["contextual_retrieval"] == 0
    # The dry run's warning came first, before anything ran (ADR 0088).
    assert "warning: contextual_retrieval" in done.stderr and "cannot run: it needs an LLM to chunk" in done.stderr
    (missing,) = [line for line in done.stderr.splitlines() if "did not run" in line]
    assert missing.startswith("run contextual_retrieval") and ": 0/2 questions (" in missing
    assert "no LLM endpoint is configured" in missing


UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def test_a_hybrid_experiment_sends_every_option_and_names_the_documents_it_processes(stack, files):
    corpus, questions = files
    run_key = "fixed_size[chunk_size=24,chunk_overlap=0]"  # a configuration no other test processes
    done = cli(
        stack,
        "experiment",
        "--corpus",
        str(corpus),
        "--questions",
        str(questions),
        "--strategy",
        "fixed_size",
        "--grid",
        "fixed_size.chunk_size=24",
        "--grid",
        "fixed_size.chunk_overlap=0",
        "--hybrid",
        "--recency-lambda",
        "0.01",
        "--top-k",
        "2",
        "--neighbor-next",
        "1",
        "--filter-languages",
        "en",
        "--retrieval-only",
        "--only-uploaded",
        "--json",
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert [(r["run"], r["questions"]) for r in summary["runs"]] == [(run_key, 2)]
    experiment = stack.client().get_experiment(summary["experiment_id"], without_results=True)
    (run,) = experiment.runs
    options = run.retrieval
    assert options.hybrid and experiment.config.retrieval.hybrid
    assert (options.recency_lambda, options.top_k, options.neighbor_next, list(options.filter.languages)) == (
        0.01,
        2,
        1,
        ["en"],
    )
    (processing,) = [line for line in done.stderr.splitlines() if "processing" in line]
    assert processing.endswith(f"0/2 processing cli-notes.md with {run_key} (1/1)") and not UUID.search(processing)

    (document_id,) = options.filter.document_ids
    asked = cli(
        stack,
        "query",
        "When does the keeper log the weather?",
        "--strategy",
        "fixed_size",
        "--config-id",
        run.config_id,
        "--filter-document-ids",
        document_id,
        "--hybrid",
        "--top-k",
        "1",
    )
    assert asked.returncode == 0, asked.stderr
    (hit,) = asked.stdout.splitlines()
    assert hit.startswith("hit") and " cli-notes.md #0 " in hit and "every morning at six" in hit
    unnamed = cli(stack, "query", "When?", "--top-k", "1")
    assert unnamed.returncode == 2 and "chunklab: name a strategy to search, e.g. fixed_size" in unnamed.stderr
