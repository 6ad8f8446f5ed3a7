"""The managerial verdict's numbers (ADR 0058): which run is best on the deciding
measure, by how much over the runner-up with a paired bootstrap 95% interval,
every run's means with their intervals, and per-question wins and losses of
every pair of runs. Whether the interval names a winner, and what the winner
costs on the other measures, is said by chunklab.views.verdict_view, which the
report, the UI and the CLI share.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import combinations

import numpy as np

from chunklab.v1 import evaluator_pb2 as pb
from services.evaluator.experiments import holdout
from services.evaluator.judging import metric_catalog
from services.evaluator.reports import compare

# Every run's mean is shown with an interval for each measure of these groups, after the deciding one.
SHOWN_GROUPS = ("labelled", "efficiency")
SAMPLES = holdout.BOOTSTRAP_SAMPLES


def interval(values: Iterable[float]) -> tuple[float, float]:
    return compare.bootstrap_ci(np.asarray(list(values), dtype=float), SAMPLES)


def decide(experiment: pb.Experiment, results: Sequence[pb.QuestionResult]) -> pb.Verdict:
    """The verdict's numbers for one experiment (after its runs' means are filled in)."""
    usable = [r for r in experiment.runs if r.questions_done and not r.error]
    metric = experiment.config.validation.metric or holdout.headline_metric(usable) or ""
    if not usable:
        return pb.Verdict(metric=metric, unavailable="no run finished any question")
    if not metric:
        return pb.Verdict(
            unavailable=(
                "no quality measure was taken (no reference excerpts, no expected answers, no judge): the runs can "
                "only be told apart by what they send to the LLM"
            )
        )
    keys = [r.run_key for r in usable]
    found = pb.Verdict(metric=metric)
    for name in dict.fromkeys((metric, *(n for group in SHOWN_GROUPS for n in metric_catalog.group(group)))):
        table = holdout.MeasureTable(name, keys, results)
        measured = [
            (key, np.asarray(list(table.values[key].values()), dtype=float)) for key in keys if table.values[key]
        ]
        for (key, values), (low, high) in zip(measured, compare.bootstrap_cis([v for _, v in measured], SAMPLES)):
            found.means.add(
                run_key=key, metric=name, mean=float(values.mean()), ci_low=low, ci_high=high, questions=len(values)
            )
    table = holdout.MeasureTable(metric, keys, results)
    higher = metric_catalog.BY_NAME[metric].info.higher_is_better
    for a, b in combinations(keys, 2):
        won, lost, tied = compare.count_wins(table.values[a], table.values[b], higher)
        found.pairs.add(
            metric=metric,
            run_key=a,
            other_run_key=b,
            wins=won,
            losses=lost,
            ties=tied,
            experiment_id=experiment.experiment_id,
            other_experiment_id=experiment.experiment_id,
        )
    if not table.questions:
        found.unavailable = f"no question has {metric_catalog.BY_NAME[metric].info.label} for every run"
        return found
    found.winner_run_key = table.best(keys, table.questions)
    found.shared_questions = len(table.questions)
    if len(keys) > 1:
        rest = [k for k in keys if k != found.winner_run_key]
        found.runner_up_run_key = table.best(rest, table.questions)
        gaps = [
            table.values[found.winner_run_key][q] - table.values[found.runner_up_run_key][q] for q in table.questions
        ]
        found.difference = float(np.mean(gaps))
        found.ci_low, found.ci_high = interval(gaps)
    return found
