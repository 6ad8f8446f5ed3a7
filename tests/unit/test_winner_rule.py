"""The one winner rule (ADR 0080) on hand-built runs: a tie names the leaders and no
winner, a dominated leader is never the winner, a near-tie within the interval is a
tie, a clear lead wins; the verdict, the hold-out section, "copy the winner" and the
report say the same; the split follows the questions' content, not their ids."""

from __future__ import annotations

import re

import pytest

from chunklab.v1 import evaluator_pb2 as pb
from chunklab.views.verdict_view import verdict_view
from chunklab.views.winner_view import winner_view
from chunklab_app import export
from services.evaluator.experiments.summary import summarize
from services.evaluator.reports import report, winner
from tests.support.hand_results import question_results

METRICS = report.METRICS
FIXED, CLUSTER = "fixed_size[chunk_size=256]", "cluster_parent_child"


def summarised(runs: dict[str, dict[str, list[float]]], results=None) -> pb.Experiment:
    built = pb.Experiment(
        experiment_id="e1",
        config=pb.ExperimentConfig(name="hand-built"),
        state=pb.EXPERIMENT_STATE_SUCCEEDED,
        runs=[pb.ExperimentRun(run_key=run, questions_total=len(v["recall"])) for run, v in runs.items()],
    )
    summarize(built, results or question_results(runs))
    return built


def run(recall: list[float], iou: float, tokens: float) -> dict[str, list[float]]:
    return {"recall": recall, "iou": [iou] * len(recall), "tokens": [tokens] * len(recall)}


def test_a_dominated_leader_is_never_the_winner():
    # The experiment: both find everything; cluster_parent_child has the higher IoU and sends
    # fewer tokens. fixed_size is listed first, which used to make it "win" the tie.
    found = summarised({FIXED: run([1.0] * 8, 0.018, 1270), CLUSTER: run([1.0] * 8, 0.051, 553)})
    verdict = found.verdict
    assert (verdict.winner_run_key, list(verdict.leaders)) == (CLUSTER, [CLUSTER])
    assert [(d.run_key, d.by_run_key, list(d.better_on)) for d in verdict.dominated] == [
        (FIXED, CLUSTER, ["iou", "tokens_sent"])
    ]
    view = verdict_view(verdict, METRICS)
    assert view["text"] == (
        f"{CLUSTER} is the winner: it ties {FIXED} on recall (100.0% vs 100.0%), has a higher IoU "
        "(5.1% vs 1.8%) and sends 56% fewer tokens (553 vs 1,270)."
    )
    marks = {r["run_key"]: (r["winner"], r["dominated_by"]) for r in view["rows"]}
    assert marks == {FIXED: (False, CLUSTER), CLUSTER: (True, "")}
    # The hold-out section and "copy the winner" name the same run.
    assert (found.validation.winner_run_key, found.validation.all_questions_winner_run_key) == (CLUSTER, CLUSTER)
    assert winner_view(found.validation, METRICS)["text"].startswith(f"{CLUSTER} was chosen on 4 of the 8")
    assert export.winner_run(found).run_key == CLUSTER


def test_a_tie_names_the_leaders_and_no_winner():
    # Equal on recall; one has the better IoU, the other sends fewer tokens: neither dominates.
    found = summarised({"a": run([1.0] * 6, 0.05, 1000), "b": run([1.0] * 6, 0.03, 400)})
    verdict = found.verdict
    assert (verdict.winner_run_key, list(verdict.leaders), list(verdict.dominated)) == ("", ["a", "b"], [])
    text = verdict_view(verdict, METRICS)["text"]
    assert text.startswith("No clear winner on recall: a and b share the lead (a 100.0%, b 100.0% over 6 questions")
    assert text.endswith("a has the higher IoU (5.0% vs 3.0%); b sends fewer tokens (400 vs 1,000).")
    assert not found.validation.winner_run_key and list(found.validation.leaders) == ["a", "b"]
    assert "there is no single winner to confirm or to copy" in winner_view(found.validation, METRICS)["text"]
    with pytest.raises(export.ExportError, match="a, b share the lead"):
        export.winner_run(found)


def test_identical_runs_share_the_lead():
    found = summarised({"a": run([0.5] * 6, 0.05, 500), "b": run([0.5] * 6, 0.05, 500)})
    assert (found.verdict.winner_run_key, list(found.verdict.leaders)) == ("", ["a", "b"])


def test_a_near_tie_within_the_interval_is_a_tie():
    # "thorough" misses one excerpt in twelve: its recall is lower, but the interval of the difference
    # holds 0, so it ties "wide" on recall, and then it wins on IoU and tokens.
    thorough = run([1.0] * 11 + [0.5], 0.06, 500)
    found = summarised({"wide": run([1.0] * 12, 0.02, 1500), "thorough": thorough})
    verdict = found.verdict
    assert verdict.best_run_key == "wide" and verdict.ci_low <= 0 <= verdict.ci_high
    assert (verdict.winner_run_key, list(verdict.leaders)) == ("thorough", ["thorough"])
    assert verdict_view(verdict, METRICS)["text"].startswith(
        "thorough is the winner: it ties wide on recall (95.8% vs 100.0%), has a higher IoU (6.0% vs 2.0%)"
    )
    # Without the trade-off, the near-tie names both.
    even = summarised({"wide": run([1.0] * 12, 0.02, 500), "thorough": run([1.0] * 11 + [0.5], 0.06, 1500)})
    assert (even.verdict.winner_run_key, list(even.verdict.leaders)) == ("", ["wide", "thorough"])


def test_a_clear_lead_wins_even_when_it_sends_more_tokens():
    found = summarised({"big": run([0.9, 1.0, 0.95, 1.0, 0.9, 1.0], 0.02, 2000), "small": run([0.5] * 6, 0.08, 300)})
    verdict = found.verdict
    assert (verdict.winner_run_key, list(verdict.leaders), list(verdict.dominated)) == ("big", ["big"], [])
    assert verdict_view(verdict, METRICS)["text"].startswith(
        "big is the winner: it has the highest recall (95.8%, +45.8 pts"
    )
    assert export.winner_run(found).run_key == "big"


def test_the_split_follows_the_questions_content_not_their_ids():
    # The same questions imported twice get new ids (in another order): the same seed chooses the
    # same questions and the same winner.
    runs = {
        "a": {"recall": [1.0, 0.5, 1.0, 0.0, 1.0, 0.5, 1.0, 1.0], "iou": [0.05] * 8, "tokens": [900] * 8},
        "b": {"recall": [0.5, 1.0, 1.0, 1.0, 0.0, 1.0, 0.5, 1.0], "iou": [0.04] * 8, "tokens": [700] * 8},
    }
    first = summarised(runs, question_results(runs))
    renamed = {i: f"z{(7 - i) * 13 % 97:02d}" for i in range(8)}  # other ids, sorting in another order
    second = summarised(runs, list(reversed(question_results(runs, renamed))))

    def chosen(experiment: pb.Experiment, ids: dict[int, str]) -> list[str]:
        text = {ids.get(i, f"q{i:02d}"): f"question {i}" for i in range(8)}
        return sorted(text[q] for q in experiment.validation.selection_question_ids)

    assert chosen(first, {}) == chosen(second, renamed)
    assert first.validation.leaders == second.validation.leaders
    assert first.validation.scores == second.validation.scores


def test_questions_are_ordered_by_a_hash_of_their_text():
    table = winner.MeasureTable(
        "recall",
        ["a"],
        [
            pb.QuestionResult(question_id=qid, question=text, run_key="a", metrics=pb.RetrievalMetrics(labelled=True))
            for qid, text in (("1", "Where?"), ("2", "  where? "), ("3", "When?"))
        ],
    )
    keys = {q: winner.content_key(t) for q, t in (("1", "Where?"), ("2", "  where? "), ("3", "When?"))}
    assert keys["1"] == keys["2"]  # spacing and case aside
    assert table.questions == sorted(keys, key=lambda q: (keys[q], q))


def _managerial(found: pb.Experiment) -> str:
    html = report.render(found, pb.QuestionSet(name="sample"), [], pb.REPORT_VIEW_MANAGERIAL)
    return html[html.index('<section id="managerial">') : html.index("</section>")]


def test_the_managerial_report_is_a_sentence_three_numbers_and_one_plot():
    found = summarised({FIXED: run([1.0] * 8, 0.018, 1270), CLUSTER: run([1.0] * 8, 0.051, 553)})
    html = _managerial(found)
    assert (
        f'<p class="recommendation" data-recommended="yes">Use {CLUSTER}: it finds as much as {FIXED} '
        "(recall 100.0% vs 100.0%), has a higher IoU (5.1% vs 1.8%) and sends 56% fewer tokens (553 vs 1,270).</p>"
    ) in html
    numbers = re.findall(r'<div class="number"><b>([^<]+)</b><span>([^<]+)</span>', html)
    assert numbers == [("100.0%", "recall"), ("553", "tokens sent per question"), ("5.1%", "IoU")]
    assert html.count("<svg") == 1 and "<table" not in html  # the full table is in the technical view
    svg = html[html.index("<svg") : html.index("</svg>") + 6]
    assert f"{CLUSTER} (recommended)" in svg and ">fixed_size<" in svg  # labelled in full, short
    assert "…" not in svg


def test_the_managerial_report_on_a_tie_names_the_leaders_and_what_separates_them():
    html = _managerial(summarised({"a": run([1.0] * 6, 0.05, 1000), "b": run([1.0] * 6, 0.03, 400)}))
    assert (
        '<p class="recommendation" data-recommended="no">No clear winner: a and b are level on recall '
        "(a 100.0%, b 100.0%); a has the higher IoU (5.0% vs 3.0%); b sends fewer tokens (400 vs 1,000). "
        "Choose between them by what matters more to you.</p>"
    ) in html
    assert re.findall(r'<div class="headline-numbers" data-run="([^"]+)">', html) == ["a", "b"]


def test_short_labels_keep_what_sets_runs_of_one_strategy_apart():
    keys = ["fixed_size[chunk_size=256,chunk_overlap=0]", "fixed_size[chunk_size=512,chunk_overlap=0]", CLUSTER]
    assert report.short_labels(keys) == ["fixed_size 256", "fixed_size 512", CLUSTER]


def test_the_managerial_report_on_identical_runs_says_either_will_do():
    html = _managerial(summarised({"a": run([0.5] * 6, 0.05, 500), "b": run([0.5] * 6, 0.05, 500)}))
    assert (
        "No clear winner: a and b are level on recall (a 50.0%, b 50.0%), and on IoU and tokens sent too: "
        "either will do."
    ) in html
