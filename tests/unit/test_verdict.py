"""The managerial verdict (ADR 0058) on hand-built experiments: a winner is named
only when the 95% interval of its lead over the runner-up holds no tie, with what it
costs on tokens sent and IoU; otherwise "no clear winner" with the Pareto sets. The
same sentence in the report, the Experiments page and the CLI."""

from __future__ import annotations

import io
from xml.etree import ElementTree

import numpy as np
import pytest

from chunklab.v1 import evaluator_pb2 as pb
from chunklab.views.verdict_view import pareto_front, verdict_view
from chunklab_app.cli import terminal
from frontend.pages.compare import compare_html
from frontend.views import experiments_html
from services.evaluator.experiments.summary import summarize
from services.evaluator.reports import compare, report
from tests.support.hand_results import question_results

METRICS = report.METRICS


def experiment(runs: dict[str, dict[str, list[float]]]) -> tuple[pb.Experiment, list[pb.QuestionResult]]:
    """Runs with per-question recall, IoU and tokens sent, summarised as the evaluator does."""
    results = question_results(runs)
    built = pb.Experiment(
        experiment_id="e1",
        config=pb.ExperimentConfig(name="hand-built"),
        state=pb.EXPERIMENT_STATE_SUCCEEDED,
        runs=[pb.ExperimentRun(run_key=run, questions_total=4) for run in runs],
    )
    summarize(built, results)
    return built, results


@pytest.fixture(scope="module")
def clear_lead():
    # parent_child leads on every question by 5 or 10 points: every resample of the
    # differences has a mean between +5 and +10 points, so the interval holds no tie.
    return experiment(
        {
            "parent_child": {"recall": [1.0, 1.0, 0.9, 1.0], "iou": [0.017] * 4, "tokens": [2050] * 4},
            "semantic_parent_child": {"recall": [0.9, 0.95, 0.85, 0.9], "iou": [0.071] * 4, "tokens": [500] * 4},
            "semantic": {"recall": [0.7] * 4, "iou": [0.08] * 4, "tokens": [300] * 4},
        }
    )[0]


@pytest.fixture(scope="module")
def tie():
    # a leads b on three questions and trails on one: a quarter of the resamples or so
    # hold one or no lead, so the interval reaches below zero.
    return experiment(
        {
            "a": {"recall": [0.9, 0.8, 0.9, 0.9], "iou": [0.05] * 4, "tokens": [1000] * 4},
            "b": {"recall": [0.8, 0.9, 0.8, 0.8], "iou": [0.04] * 4, "tokens": [400] * 4},
            "c": {"recall": [0.5] * 4, "iou": [0.09] * 4, "tokens": [800] * 4},
        }
    )[0]


CLEAR = (
    "parent_child is the winner: it has the highest recall (97.5%, +7.5 pts [+5.0 pts, +10.0 pts] over semantic_parent_child) "
    "but sends 4.1× the tokens and has IoU 1.7% against 7.1%."
)
CLEAR_FRONT = (
    "The best trade-offs (Pareto front) of recall against tokens sent: parent_child, semantic_parent_child, "
    "semantic; against IoU: parent_child, semantic_parent_child, semantic."
)
TIE = (
    "No clear winner on recall: a and b share the lead (a 87.5%, b 82.5% over 4 questions; a leads b by "
    "+5.0 pts [-5.0 pts, +10.0 pts], a 95% interval that holds a tie) and neither beats the other on every "
    "measure: a has the higher IoU (5.0% vs 4.0%); b sends fewer tokens (400 vs 1,000)."
)
TIE_FRONT = "The best trade-offs (Pareto front) of recall against tokens sent: a, b; against IoU: a, c."


def test_a_lead_whose_interval_holds_no_tie_names_the_winner_and_its_costs(clear_lead):
    found = clear_lead.verdict
    assert (found.metric, found.winner_run_key, found.runner_up_run_key) == (
        "recall",
        "parent_child",
        "semantic_parent_child",
    )
    assert (round(found.difference, 6), found.shared_questions) == (0.075, 4)
    assert (round(found.ci_low, 6), round(found.ci_high, 6)) == (0.05, 0.1)
    view = verdict_view(found, METRICS)
    assert (view["text"], view["pareto"]) == (CLEAR, CLEAR_FRONT)
    known = ["recall", "IoU", "precision", "hit rate", "MRR", "tokens sent"]  # the deciding measure first
    assert [c for c in view["columns"] if c in known] == known and view["columns"][0] == "recall"
    first = view["rows"][0]
    cells = dict(zip(view["columns"], first["cells"]))
    assert (first["run_key"], first["winner"], cells["recall"]) == (
        "parent_child",
        True,
        "97.5% [92.5%, 100.0%]",
    )  # 3+ of 4 draws at 0.9: 5% of resamples
    assert cells["IoU"] == "1.7% [1.7%, 1.7%]" and cells["tokens sent"] == "2,050 [2,050, 2,050]"


def test_a_lead_whose_interval_holds_a_tie_names_no_winner_but_the_pareto_sets(tie):
    view = verdict_view(tie.verdict, METRICS)
    assert (view["text"], view["pareto"]) == (TIE, TIE_FRONT)
    assert [(r["run_key"], r["winner"], r["front"]) for r in view["rows"]] == [
        ("a", False, True),
        ("b", False, True),
        ("c", False, True),
    ]


def test_wins_and_losses_per_question_for_every_pair(tie):
    pairs = [(p.run_key, p.other_run_key, p.wins, p.losses, p.ties) for p in tie.verdict.pairs]
    assert pairs == [("a", "b", 3, 1, 0), ("a", "c", 4, 0, 0), ("b", "c", 4, 0, 0)]


def test_one_run_and_no_run_say_so():
    alone, _ = experiment({"only": {"recall": [0.5] * 4, "iou": [0.1] * 4, "tokens": [10] * 4}})
    assert verdict_view(alone.verdict, METRICS)["text"] == (
        "only is the only run that answered questions (recall 50.0%): there is nothing to compare it with."
    )
    empty = pb.Experiment(runs=[pb.ExperimentRun(run_key="x")])
    summarize(empty, [])
    assert verdict_view(empty.verdict, METRICS)["text"] == ("There is no winner to name: no run finished any question.")
    unlabelled = pb.Experiment(runs=[pb.ExperimentRun(run_key="x"), pb.ExperimentRun(run_key="y")])
    summarize(
        unlabelled,
        [
            pb.QuestionResult(question_id="q", run_key=key, metrics=pb.RetrievalMetrics(embedding_answer_similarity=-1))
            for key in ("x", "y")
        ],
    )
    assert verdict_view(unlabelled.verdict, METRICS)["text"] == (
        "There is no winner to name: no quality measure was taken (no reference excerpts, no expected answers, "
        "no judge): the runs can only be told apart by what they send to the LLM."
    )


def test_pareto_front_keeps_the_points_nothing_beats_on_both_axes():
    points = [("a", 0.9, 1000.0), ("b", 0.8, 400.0), ("c", 0.5, 800.0), ("d", 0.8, 400.0)]
    assert pareto_front(points, higher_a=True, higher_b=False) == ["a", "b", "d"]  # equal points both stay
    assert pareto_front(points, higher_a=True, higher_b=True) == ["a"]


def _text(html: str, start: str) -> str:
    fragment = html[html.index(start) : html.index("</p>", html.index(start)) + 4]
    return "".join(ElementTree.fromstring(fragment).itertext())


def test_the_report_says_the_verdict_with_the_intervals(clear_lead, tie):
    html = report.render(clear_lead, pb.QuestionSet(name="hand-built set"), [], pb.REPORT_VIEW_TECHNICAL)
    assert _text(html, '<p class="verdict"') == f"{CLEAR} {CLEAR_FRONT}"
    assert "97.5% [92.5%, 100.0%]" in html
    html = report.render(tie, pb.QuestionSet(name="hand-built set"), [], pb.REPORT_VIEW_TECHNICAL)
    assert _text(html, '<p class="verdict"') == f"{TIE} {TIE_FRONT}"


def test_the_experiments_page_and_the_cli_say_the_same_verdict_and_name_the_question_set(clear_lead):
    question_set = pb.QuestionSet(question_set_id="68366963abcdef", name="chroma-general", question_count=276)
    html = experiments_html.experiment_summary_html(clear_lead, METRICS, question_set)
    assert _text(html, '<p class="verdict"') == f"{CLEAR} {CLEAR_FRONT}"
    assert "question set chroma-general · 276 questions · 68366963" in html
    out = io.StringIO()
    terminal.print_table(clear_lead, METRICS, out)
    assert f"\n{CLEAR} {CLEAR_FRONT}\n" in out.getvalue()


def test_the_summary_shows_answer_similarity_as_the_detail_does():
    built, results = experiment({"a": {"recall": [0.5], "iou": [0.1], "tokens": [10]}})
    results[0].metrics.embedding_answer_similarity = 0.375
    summarize(built, results)
    summary = ElementTree.fromstring(experiments_html.experiment_summary_html(built, METRICS))
    runs = summary.find(".//table[@class='cl-table cl-runs-table']")
    heads = ["".join(th.itertext()) for th in runs.iter("th")]
    cells = ["".join(td.itertext()) for td in runs.iter("td")]
    column = heads.index("answer similarity (embeddings)")
    assert cells[column] == "0.375"
    detail = experiments_html.question_detail_html(results[0], METRICS)
    assert "answer similarity (embeddings) 0.375" in detail and "MRR 0.000" in detail


def test_a_retrieval_only_summary_has_no_llm_calls_or_cost_columns_nor_unmeasured_answer_columns():
    built, results = experiment({"a": {"recall": [0.5], "iou": [0.1], "tokens": [10]}})
    summarize(built, results)
    heads = [
        "".join(th.itertext())
        for th in ElementTree.fromstring(experiments_html.experiment_summary_html(built, METRICS)).iter("th")
    ]
    assert heads[-2:] == ["chunks / q", "tokens / q"]
    assert not {"LLM calls", "cost", "answer similarity (embeddings)", "faithfulness"} & set(heads)
    built.runs[0].usage.llm_calls, built.runs[0].usage.estimated_cost_usd = 3, 0.0123
    heads = [
        "".join(th.itertext())
        for th in ElementTree.fromstring(experiments_html.experiment_summary_html(built, METRICS)).iter("th")
    ]
    assert heads[-4:] == ["chunks / q", "tokens / q", "LLM calls", "cost"]


def _compared():
    """Three experiments: e1 and e2 ask questions 0-3, e3 asks others entirely."""
    first, first_results = experiment(
        {
            "a": {"recall": [0.9, 0.8, 0.9, 0.9], "iou": [0.05] * 4, "tokens": [1000] * 4},
            "b": {"recall": [0.8, 0.9, 0.8, 0.8], "iou": [0.04] * 4, "tokens": [400] * 4},
        }
    )
    second, second_results = experiment({"c": {"recall": [0.9, 0.9, 0.5, 0.5], "iou": [0.09] * 4, "tokens": [800] * 4}})
    third = pb.Experiment(
        experiment_id="e3",
        config=pb.ExperimentConfig(name="other questions"),
        runs=[pb.ExperimentRun(run_key="d", questions_done=1)],
    )
    third_results = [
        pb.QuestionResult(
            question_id="x",
            question="an unrelated question",
            run_key="d",
            metrics=pb.RetrievalMetrics(labelled=True, recall=1.0),
        )
    ]
    for built, name, set_id, digest in (
        (first, "first", "set-one-0001", "h1"),
        (second, "second", "set-one-0001", "h1"),
        (third, "other questions", "set-two-0002", "h2"),
    ):
        built.experiment_id, built.config.name, built.config.question_set_id = name, name, set_id
        built.question_set_hash = digest
    results = {"first": first_results, "second": second_results, "other questions": third_results}
    return [first, second, third], results


def test_compare_counts_wins_across_experiments_and_says_which_experiment_it_left_out():
    experiments, results = _compared()
    pairs = [
        (p.experiment_id, p.run_key, p.other_experiment_id, p.other_run_key, p.wins, p.losses, p.ties)
        for p in compare.wins(experiments, results, "recall")
    ]
    assert pairs == [
        ("first", "a", "first", "b", 3, 1, 0),
        ("first", "a", "second", "c", 2, 1, 1),
        ("first", "b", "second", "c", 2, 1, 1),
    ]  # d shares no question: no pair
    assert compare.left_out(experiments, results) == [
        "experiment other questions shares no questions with first and was left out"
    ]
    assert compare.warnings(experiments, {"set-one-0001": "chroma-general"})[-1] == (
        "question set differs (first: chroma-general (set-one-), second: chroma-general (set-one-), "
        "other questions: set-two-); only the questions both sets hold are compared"
    )


def test_the_compare_page_shows_each_experiments_verdict_and_names_its_question_set(clear_lead):
    experiment = pb.Experiment()
    experiment.CopyFrom(clear_lead)
    experiment.config.question_set_id = "68366963abcdef"
    response = pb.CompareExperimentsResponse(
        experiments=[experiment], warnings=["experiment other shares no questions with hand-built and was left out"]
    )
    question_set = pb.QuestionSet(question_set_id="68366963abcdef", name="chroma-general", question_count=276)
    root = ElementTree.fromstring(compare_html.compare_html(response, METRICS, [question_set]))
    rows = {
        "".join(tr.find("th").itertext()): ["".join(td.itertext()) for td in tr.findall("td")]
        for tr in root.findall(".//table[@class='cl-table cl-compare-columns']/tbody/tr")
    }
    assert rows["question set"] == ["chroma-general · 276 questions · 68366963"]
    assert rows["verdict (a winner only where the 95% interval excludes a tie)"] == [CLEAR]
    assert "experiment other shares no questions with hand-built and was left out" in "".join(
        root.find(".//div[@role='alert']").itertext()
    )


def test_many_runs_intervals_at_once_equal_each_run_bootstrapped_alone():
    rng = np.random.default_rng(3)
    columns = [rng.uniform(0, 1, 30), rng.uniform(0, 1, 30), rng.uniform(0, 1, 12), np.array([])]
    together = compare.bootstrap_cis(columns, 2000)
    alone = [compare.bootstrap_ci(c, 2000) for c in columns]
    assert np.allclose(together, alone, rtol=1e-12, atol=0) and together[3] == (0.0, 0.0)
