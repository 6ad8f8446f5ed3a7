"""The managerial verdict's numbers (ADR 0058): the winner rule's leaders on every
question (reports/winner.py, ADR 0080: the runs tied with the best on the deciding
measure that no other tied run dominates, the winner when there is one of them),
which run is best on the deciding measure's mean and by how much over the runner-up
with a paired bootstrap 95% interval, every run's means with their intervals, and
per-question wins and losses of every pair of runs. chunklab.views.verdict_view says
it in words, alike in the report, the UI and the CLI.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import combinations

import numpy as np

from chunklab.v1 import evaluator_pb2 as pb
from services.evaluator.judging import metric_catalog
from services.evaluator.reports import compare, winner

# Every run's mean is shown with an interval for each measure of these groups, after the deciding one.
SHOWN_GROUPS = ("labelled", "efficiency")
SAMPLES = winner.BOOTSTRAP_SAMPLES


def interval(values: Iterable[float]) -> tuple[float, float]:
    return compare.bootstrap_ci(np.asarray(list(values), dtype=float), SAMPLES)


def decide(experiment: pb.Experiment, results: Sequence[pb.QuestionResult]) -> pb.Verdict:
    """The verdict's numbers for one experiment (after its runs' means are filled in)."""
    usable = [r for r in experiment.runs if r.questions_done and not r.error]
    metric = experiment.config.validation.metric or winner.headline_metric(usable) or ""
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
        table = winner.MeasureTable(name, keys, results)
        measured = [
            (key, np.asarray(list(table.values[key].values()), dtype=float)) for key in keys if table.values[key]
        ]
        for (key, values), (low, high) in zip(measured, compare.bootstrap_cis([v for _, v in measured], SAMPLES)):
            found.means.add(
                run_key=key, metric=name, mean=float(values.mean()), ci_low=low, ci_high=high, questions=len(values)
            )
    objective = winner.objective(metric, keys, results)
    table = objective[0]
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
    standing = winner.choose(objective, keys, table.questions)
    found.winner_run_key, found.best_run_key = standing.winner, standing.best
    found.leaders.extend(standing.leaders)
    for d in standing.dominated:
        found.dominated.add(run_key=d.run_key, by_run_key=d.by_run_key, better_on=d.better_on)
    found.shared_questions = len(table.questions)
    if len(keys) > 1:
        found.runner_up_run_key = table.top([k for k in keys if k != standing.best], table.questions)
        gaps = [table.values[standing.best][q] - table.values[found.runner_up_run_key][q] for q in table.questions]
        found.difference = float(np.mean(gaps))
        found.ci_low, found.ci_high = interval(gaps)
    return found
