"""Per-document and per-collection figures (ADR 0118) on hand-built results: a run that
finds everything in one document and nothing in another shows 100% and 0% there, in
the summary the evaluator stores, in the CLI's --json rows, and (ADR 0119) in the
sentence that says where the configuration fails."""

from __future__ import annotations

import pytest
from lxml import html

from chunklab.v1 import evaluator_pb2 as pb
from chunklab.views import per_document_view
from chunklab_app.cli import terminal
from frontend.views import experiments_html
from services.evaluator.experiments.per_document import question_documents
from services.evaluator.experiments.summary import summarize
from services.evaluator.reports import report
from tests.support.hand_results import question_results

pytestmark = pytest.mark.unit

NAMES = {"a": "handbook.md", "b": "chatlogs.md", "c": "faq.md"}
COLLECTIONS = {"a": "manuals", "b": "support", "c": "support"}


def summarized(runs: dict[str, dict[str, list]]) -> tuple[pb.Experiment, list[pb.QuestionResult]]:
    results = question_results(runs)
    built = pb.Experiment(
        experiment_id="e1",
        config=pb.ExperimentConfig(name="hand-built"),
        state=pb.EXPERIMENT_STATE_SUCCEEDED,
        runs=[pb.ExperimentRun(run_key=run, questions_total=len(v["recall"])) for run, v in runs.items()],
        provenance=pb.ExperimentProvenance(document_names=NAMES, document_collections=COLLECTIONS),
    )
    summarize(built, results)
    return built, results


@pytest.fixture(scope="module")
def split():
    # fixed_size finds every excerpt of handbook.md and none of chatlogs.md; the last
    # question's references lie in both documents and it finds half.
    return summarized(
        {
            "fixed_size": {
                "recall": [1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.5],
                "iou": [0.2, 0.2, 0.2, 0.0, 0.0, 0.0, 0.1],
                "tokens": [400, 400, 400, 600, 600, 600, 500],
                "documents": [["a"], ["a"], ["a"], ["b"], ["b"], ["b"], ["a", "b"]],
            }
        }
    )


def by_name(figures) -> dict[str, pb.DocumentFigures]:
    return {f.document_name or f.collection: f for f in figures}


def test_a_document_found_entirely_shows_100_and_one_found_nowhere_shows_0(split):
    run = split[0].runs[0]
    documents = by_name(run.per_document)
    assert list(documents) == ["handbook.md", "chatlogs.md"]
    # handbook.md: its three questions at 100% and the shared one at 50%
    assert documents["handbook.md"].metrics.recall == pytest.approx((3 * 1.0 + 0.5) / 4)
    assert documents["handbook.md"].metrics.questions_labelled == 4
    assert documents["chatlogs.md"].metrics.recall == pytest.approx(0.5 / 4)
    assert documents["handbook.md"].collection == "manuals"
    assert documents["chatlogs.md"].metrics.tokens_sent == round((3 * 600 + 500) / 4)


def test_questions_of_one_document_only_show_exactly_100_and_0():
    experiment, _ = summarized(
        {"r": {"recall": [1.0, 1.0, 0.0, 0.0], "iou": [0.3] * 2 + [0.0] * 2, "tokens": [100] * 4,
               "documents": [["a"], ["a"], ["b"], ["b"]]}}
    )  # fmt: skip
    documents = by_name(experiment.runs[0].per_document)
    assert per_document_view.shown_rows([documents["handbook.md"]])[0]["recall"] == "100.0%"
    assert per_document_view.shown_rows([documents["chatlogs.md"]])[0]["recall"] == "0.0%"
    assert documents["chatlogs.md"].metrics.iou == 0.0


def test_collections_gather_their_documents_questions():
    experiment, _ = summarized(
        {"r": {"recall": [1.0, 0.0, 0.5], "iou": [0.1] * 3, "tokens": [100] * 3, "documents": [["a"], ["b"], ["c"]]}}
    )
    collections = by_name(experiment.runs[0].per_collection)
    assert list(collections) == ["manuals", "support"]
    assert collections["manuals"].metrics.recall == 1.0
    assert collections["support"].metrics.recall == pytest.approx(0.25)  # chatlogs.md 0%, faq.md 50%
    assert collections["support"].metrics.questions_labelled == 2
    assert not collections["support"].document_id


def test_a_question_without_references_counts_in_no_document():
    question = pb.Question(question_id="q", text="what?")
    assert question_documents(question) == []
    referenced = pb.Question(
        references=[pb.Reference(document_id="b"), pb.Reference(document_id="a"), pb.Reference(document_id="b")]
    )
    assert question_documents(referenced) == ["b", "a"]


def test_the_cli_json_carries_each_run_per_document_and_per_question(split):
    experiment, results = split
    experiment.results.extend(results)
    rows = terminal.summary_rows(experiment, report.METRICS, per_question=True)
    documents = {d["document"]: d for d in rows[0]["per_document"]}
    assert documents["handbook.md"]["recall"] == pytest.approx(0.875)
    assert documents["chatlogs.md"]["collection"] == "support"
    assert {c["collection"] for c in rows[0]["per_collection"]} == {"manuals", "support"}
    questions = rows[0]["per_question"]
    assert len(questions) == 7
    assert questions[6]["documents"] == ["handbook.md", "chatlogs.md"]
    assert (questions[3]["recall"], questions[3]["documents"]) == (0.0, ["chatlogs.md"])


def test_the_sentence_names_the_document_where_a_configuration_fails(split):
    run = split[0].runs[0]
    sentence = per_document_view.shortfall_sentence("fixed_size", run)
    assert "only 12.5% in chatlogs.md" in sentence
    assert "50.0% of the answers overall" in sentence


def test_no_sentence_when_every_document_holds_up():
    experiment, _ = summarized(
        {"r": {"recall": [0.9, 1.0, 0.9, 0.8, 0.9, 1.0], "iou": [0.1] * 6, "tokens": [100] * 6,
               "documents": [["a"]] * 3 + [["b"]] * 3}}
    )  # fmt: skip
    assert per_document_view.shortfall_sentence("r", experiment.runs[0]) == ""


@pytest.fixture(scope="module")
def two_runs():
    # fixed_size finds every excerpt in handbook.md and none in chatlogs.md; semantic finds
    # nothing anywhere and sends more: fixed_size is the one to use, and fails on chatlogs.md.
    return summarized(
        {
            "fixed_size": {
                "recall": [1.0] * 4 + [0.0] * 4,
                "iou": [0.2] * 4 + [0.0] * 4,
                "tokens": [400] * 8,
                "documents": [["a"]] * 4 + [["b"]] * 4,
            },
            "semantic": {
                "recall": [0.0] * 8,
                "iou": [0.0] * 8,
                "tokens": [500] * 8,
                "documents": [["a"]] * 4 + [["b"]] * 4,
            },
        }
    )


def test_the_report_shows_each_runs_documents_and_says_where_the_chosen_one_fails(two_runs):
    experiment, results = two_runs
    page = html.fromstring(report.render(experiment, pb.QuestionSet(name="hand-built set"), results))
    rows = [
        [td.text_content().strip() for td in tr.findall("td")]
        for tr in page.xpath("//table[contains(@class, 'per-document')]/tbody/tr")
    ]
    assert rows[:2] == [
        ["fixed_size", "handbook.md", "manuals", "4", "100.0%", "0.0%", "20.0%", "400"],
        ["", "chatlogs.md", "support", "4", "0.0%", "0.0%", "0.0%", "400"],
    ]
    assert ["", "collection", "support", "4", "0.0%", "0.0%", "0.0%", "400"] in rows  # two collections: their rows too
    chosen = [experiment.verdict.winner_run_key] if experiment.verdict.winner_run_key else experiment.verdict.leaders
    assert "fixed_size" in chosen
    managerial = page.xpath("//section[@id='managerial']//p[contains(@class, 'shortfall')]")
    assert [p.text_content() for p in managerial] == [
        "fixed_size finds 50.0% of the answers overall but only 0.0% in chatlogs.md: "
        "check that document before relying on it."
    ]


def test_the_experiments_page_shows_the_chosen_runs_documents(two_runs):
    run = two_runs[0].runs[0]
    fragment = html.fromstring(experiments_html.run_documents_html(run))
    rows = [[td.text_content() for td in tr.findall("td")] for tr in fragment.xpath("//table/tbody/tr")]
    assert rows[0][:5] == ["handbook.md", "manuals", "4", "100.0%", "0.0%"]
    assert rows[1][:5] == ["chatlogs.md", "support", "4", "0.0%", "0.0%"]
    assert len(rows[0]) == 7 and all(rows[0]) and all(rows[1])
    assert "only 0.0% in chatlogs.md" in fragment.xpath("//div[contains(@class, 'cl-shortfall')]")[0].text_content()
