"""The Experiments and Compare pages' plot data (frontend.views.result_plots, ADR 0058) on
hand-built experiments, every cell checked: recall against tokens sent with the
Pareto front, each run's mean with its 95% interval, wins and losses per pair."""

from __future__ import annotations

import pandas as pd
import pytest

from chunklab.v1 import evaluator_pb2 as pb
from frontend.views import result_plots
from services.evaluator.experiments.summary import summarize
from services.evaluator.reports import compare, report
from tests.support.hand_results import question_results

METRICS = report.METRICS


def experiment(name: str, runs: dict[str, dict[str, list[float]]]) -> tuple[pb.Experiment, list[pb.QuestionResult]]:
    results = question_results(runs)
    built = pb.Experiment(
        experiment_id=name,
        config=pb.ExperimentConfig(name=name),
        runs=[pb.ExperimentRun(run_key=run, questions_total=4) for run in runs],
    )
    summarize(built, results)
    return built, results


@pytest.fixture(scope="module")
def three():
    return experiment(
        "three",
        {
            "a": {"recall": [0.9, 0.8, 0.9, 0.9], "iou": [0.05] * 4, "tokens": [1000] * 4},
            "b": {"recall": [0.8, 0.9, 0.8, 0.8], "iou": [0.04] * 4, "tokens": [400] * 4},
            "c": {"recall": [0.5] * 4, "iou": [0.09] * 4, "tokens": [800] * 4},
        },
    )


def test_recall_against_tokens_sent_marks_the_pareto_front(three):
    frame = result_plots.tradeoff_frame([three[0]], METRICS)
    # Tokens are whole and the quality at the table's decimals: the tooltip prints them as they are.
    expected = pd.DataFrame(
        [
            ("a", 1000, 87.5, "on the Pareto front"),
            ("b", 400, 82.5, "on the Pareto front"),
            ("c", 800, 50.0, "beaten on both"),
        ],
        columns=list(result_plots.TRADEOFF_COLUMNS),
    )
    pd.testing.assert_frame_equal(frame, expected)


def test_each_runs_mean_with_its_interval(three):
    assert result_plots.plotted_metrics([three[0]], METRICS) == [
        "recall",
        "iou",
        "precision",
        "hit_rate",
        "mrr",
        "tokens_sent",
    ]
    frame = result_plots.means_frame([three[0]], METRICS, "recall")
    # a: three or more of four draws at 0.8 happen in 5% of resamples, so the low end is 82.5%.
    expected = pd.DataFrame(
        [
            ("a", 87.5, 82.5, 90.0, "87.5% [82.5%, 90.0%]"),
            ("b", 82.5, 80.0, 87.5, "82.5% [80.0%, 87.5%]"),
            ("c", 50.0, 50.0, 50.0, "50.0% [50.0%, 50.0%]"),
        ],
        columns=list(result_plots.MEANS_COLUMNS),
    )
    pd.testing.assert_frame_equal(frame, expected)
    tokens = result_plots.means_frame([three[0]], METRICS, "tokens_sent")
    assert list(tokens["95% interval"]) == ["1,000 [1,000, 1,000]", "400 [400, 400]", "800 [800, 800]"]


def test_wins_and_losses_per_pair_in_one_experiment_and_across_two(three):
    frame = result_plots.wins_frame([three[0]], three[0].verdict.pairs)
    expected = pd.DataFrame(
        [
            ("a vs b", "wins", 3),
            ("a vs b", "ties", 0),
            ("a vs b", "losses", 1),
            ("a vs c", "wins", 4),
            ("a vs c", "ties", 0),
            ("a vs c", "losses", 0),
            ("b vs c", "wins", 4),
            ("b vs c", "ties", 0),
            ("b vs c", "losses", 0),
        ],
        columns=list(result_plots.WINS_COLUMNS),
    )
    pd.testing.assert_frame_equal(frame, expected)
    other, other_results = experiment(
        "other", {"d": {"recall": [0.9, 0.9, 0.5, 0.5], "iou": [0.1] * 4, "tokens": [200] * 4}}
    )
    both = [three[0], other]
    pairs = compare.wins(both, {"three": three[1], "other": other_results}, "recall")
    frame = result_plots.wins_frame(both, pairs)
    assert list(frame.itertuples(index=False, name=None))[-6:] == [
        ("A · b vs B · d", "wins", 2),
        ("A · b vs B · d", "ties", 1),
        ("A · b vs B · d", "losses", 1),
        ("A · c vs B · d", "wins", 0),
        ("A · c vs B · d", "ties", 2),
        ("A · c vs B · d", "losses", 2),
    ]
    tradeoff = result_plots.tradeoff_frame(both, METRICS)
    assert list(tradeoff["run"]) == ["A · a", "A · b", "A · c", "B · d"]
    assert list(tradeoff["Pareto front"]) == [
        "on the Pareto front",
        "on the Pareto front",
        "beaten on both",
        "on the Pareto front",
    ]


def test_the_pages_plot_updates_carry_the_frames_and_the_measures_words(three):
    from frontend.views import plot_section as section

    tradeoff, metric, means, intervals, wins, shown = section.updates([three[0]], list(three[0].verdict.pairs), METRICS)
    pd.testing.assert_frame_equal(tradeoff["value"], result_plots.tradeoff_frame([three[0]], METRICS))
    assert (tradeoff["title"], tradeoff["y_title"]) == ("recall against tokens sent", "recall (%)")
    # Every point inside the frame with room above and below: none is cut in half by its edge.
    low, high = tradeoff["y_lim"]
    quality = result_plots.tradeoff_frame([three[0]], METRICS)["quality"]
    assert 0 <= low < quality.min() and quality.max() < high and "x_lim" not in tradeoff
    assert metric["choices"][:2] == [("recall", "recall"), ("IoU", "iou")] and metric["value"] == "recall"
    assert means["title"] == "recall: mean per run (95% interval in the tooltip)"
    assert list(intervals["value"]["recall"]) == [
        "87.5% [82.5%, 90.0%]",
        "82.5% [80.0%, 87.5%]",
        "50.0% [50.0%, 50.0%]",
    ]
    pd.testing.assert_frame_equal(wins["value"], result_plots.wins_frame([three[0]], three[0].verdict.pairs))
    bars, table = section.means_updates(shown, "tokens_sent")
    assert bars["y_title"] == "tokens sent (count)" and list(table["value"]["tokens sent"])[1] == "400 [400, 400]"
    hidden = section.updates([], [], METRICS)
    assert [u.get("visible") for u in hidden[:5]] == [False] * 5


def test_a_plot_names_a_run_short_enough_not_to_be_cut():
    assert result_plots.plot_label("fixed_size[chunk_size=24,chunk_overlap=0]") == "fixed_size 24/0"
    assert result_plots.plot_label("semantic[threshold=0.5,min_sentences=3]") == "semantic 0.5/3"
    assert result_plots.plot_label("recursive") == "recursive"


def test_a_pairs_label_drops_what_its_second_run_repeats_of_the_first_so_it_is_not_cut():
    runs = {
        "fixed_size[chunk_size=24,chunk_overlap=0]": {"recall": [1.0, 1.0], "iou": [0.2] * 2, "tokens": [50] * 2},
        "fixed_size[chunk_size=64,chunk_overlap=0]": {"recall": [1.0, 0.0], "iou": [0.1] * 2, "tokens": [100] * 2},
        "recursive[chunk_size=512]": {"recall": [0.0, 1.0], "iou": [0.1] * 2, "tokens": [300] * 2},
    }
    one, _ = experiment("one", runs)
    pairs = result_plots.wins_frame([one], one.verdict.pairs)["pair"].drop_duplicates().tolist()
    assert pairs == [
        "fixed_size 24/0 vs 64/0",
        "fixed_size 24/0 vs recursive 512",
        "fixed_size 64/0 vs recursive 512",
    ]
    two, _ = experiment(
        "two", {"fixed_size[chunk_size=24,chunk_overlap=0]": runs["fixed_size[chunk_size=24,chunk_overlap=0]"]}
    )
    across = [
        pb.PairwiseWins(
            metric="recall",
            run_key="fixed_size[chunk_size=24,chunk_overlap=0]",
            other_run_key="fixed_size[chunk_size=24,chunk_overlap=0]",
            experiment_id=one.experiment_id,
            other_experiment_id=two.experiment_id,
            ties=2,
        )
    ]
    # Runs of two experiments keep their letters: the pair names both in full.
    assert result_plots.wins_frame([one, two], across)["pair"][0] == "A · fixed_size 24/0 vs B · fixed_size 24/0"


def test_a_value_axis_leaves_room_round_its_outermost_points():
    assert result_plots.padded_limits([100.0, 100.0]) == [95.0, 105.0]  # equal values: 5% each side
    assert result_plots.padded_limits([50.0, 100.0], floor=0.0) == [46.0, 104.0]
    assert result_plots.padded_limits([1.0, 100.0], floor=0.0) == [0.0, 100 + 99 * 0.08]  # no negative recall
    assert result_plots.padded_limits([-2.0, 3.0], include=(0.0,)) == [-2.4, 3.4]  # Compare: zero inside
    assert result_plots.padded_limits([0.0]) == [-0.5, 0.5]
