"""Winners chosen on some questions and confirmed on others (ADR 0046).

The best of many configurations, scored on the questions it was picked on,
looks better than it is: part of its lead is luck on those questions. Every
run answers every question; validation only decides which questions choose
the winner and which score it:

- HOLDOUT (the default): a seeded share of the questions (half) chooses, the
  others confirm; the winner's confirmation mean, with a bootstrap 95%
  interval, is the number to trust.
- K_FOLD: the questions are dealt into k seeded folds; each fold scores the
  run the other folds chose. The pooled out-of-fold mean estimates what the
  whole procedure (pick the best on your questions) delivers; the winner is
  the run the folds chose most often.
- NONE: chosen and scored on every question, and said to be optimistic.

Only questions every candidate run has the deciding measure for take part, so
every run is judged on the same questions.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

from chunklab.errors import InvalidArgument
from chunklab.v1 import evaluator_pb2 as pb
from services.evaluator.judging import metric_catalog
from services.evaluator.reports import compare

DEFAULT_SHARE = 0.5
DEFAULT_FOLDS = 5
MAX_FOLDS = 20
# Questions each side of a split needs at least (each fold, for K_FOLD).
MIN_PER_SIDE = 2
BOOTSTRAP_SAMPLES = 2000
MODE_NAMES = {
    pb.VALIDATION_MODE_NONE: "none",
    pb.VALIDATION_MODE_HOLDOUT: "holdout",
    pb.VALIDATION_MODE_K_FOLD: "k-fold",
}


def check(validation: pb.Validation) -> None:
    """Refuses a validation that cannot mean anything, before the experiment runs."""
    if validation.mode not in pb.ValidationMode.values():
        raise InvalidArgument(f"validation.mode {validation.mode} is not a ValidationMode")
    if validation.selection_share and not 0.0 < validation.selection_share < 1.0:
        raise InvalidArgument(
            f"validation.selection_share must be between 0 and 1 (the share of questions that choose the "
            f"winner), got {validation.selection_share}"
        )
    if validation.folds and not 2 <= validation.folds <= MAX_FOLDS:
        raise InvalidArgument(f"validation.folds must be between 2 and {MAX_FOLDS}, got {validation.folds}")
    if validation.metric and validation.metric not in metric_catalog.BY_NAME:
        raise InvalidArgument(
            f"validation.metric {validation.metric!r} is not a measure; ListMetrics names them: "
            f"{', '.join(metric_catalog.BY_NAME)}"
        )


def headline_metric(runs: Sequence[pb.ExperimentRun]) -> str | None:
    """The measure a winner is named on: recall when there are references (the
    answer must be in the context first, ADR 0058), else a judge or embedding
    measure; None when no run has any quality measure."""
    if any(r.mean_metrics.questions_labelled for r in runs):
        return "recall"
    if any(r.mean_judge.answer_similarity.measured for r in runs):
        return "answer_similarity"
    if any(r.mean_metrics.embedding_answer_similarity >= 0 for r in runs):
        return "embedding_answer_similarity"
    if any(r.mean_judge.context_relevance.measured for r in runs):
        return "context_relevance"
    return None


def _family(group: str) -> str:
    """The winner is scored on its deciding measure's kin: a measure on the hits counts as labelled."""
    return "labelled" if group == "hits" else group


def _unavailable(mode: int, seed: int, metric: str, why: str) -> pb.WinnerValidation:
    return pb.WinnerValidation(mode=mode, seed=seed, metric=metric, unavailable=why)


class MeasureTable:
    """One measure's value per (run, question), on the questions every run has it for."""

    def __init__(self, metric: str, runs: Sequence[str], results: Sequence[pb.QuestionResult]) -> None:
        value = metric_catalog.BY_NAME[metric].value
        self.sign = 1.0 if metric_catalog.BY_NAME[metric].info.higher_is_better else -1.0
        self.values: dict[str, dict[str, float]] = {run: {} for run in runs}
        for result in results:
            measured = value(result) if result.run_key in self.values else None
            if measured is not None:
                self.values[result.run_key][result.question_id] = float(measured)
        shared = set.intersection(*(set(v) for v in self.values.values())) if runs else set()
        self.questions = sorted(shared)

    def mean(self, run: str, questions: Sequence[str]) -> float:
        return float(np.mean([self.values[run][q] for q in questions])) if questions else 0.0

    def best(self, runs: Sequence[str], questions: Sequence[str]) -> str:
        """The best run on these questions; ties go to the run listed first."""
        return max(runs, key=lambda run: (self.sign * self.mean(run, questions), -runs.index(run)))


def _interval(values: Sequence[float]) -> tuple[float, float]:
    return compare.bootstrap_ci(np.asarray(values, dtype=float), BOOTSTRAP_SAMPLES)


def validate(experiment: pb.Experiment, results: Sequence[pb.QuestionResult]) -> pb.WinnerValidation:
    """The experiment's winner as its validation setting chooses and confirms it."""
    setting = experiment.config.validation
    mode = setting.mode or pb.VALIDATION_MODE_HOLDOUT
    seed = setting.seed
    runs = [r.run_key for r in experiment.runs if r.questions_done and not r.error]
    metric = setting.metric or headline_metric([r for r in experiment.runs if r.run_key in runs]) or ""
    if len(runs) < 2:
        return _unavailable(mode, seed, metric, "fewer than two runs answered questions: there is no winner to choose")
    if not metric:
        return _unavailable(
            mode, seed, metric, "no quality measure was taken (no references, expected answers or judge)"
        )
    table = MeasureTable(metric, runs, results)
    n = len(table.questions)
    folds = setting.folds or DEFAULT_FOLDS
    needed = {
        pb.VALIDATION_MODE_NONE: 1,
        pb.VALIDATION_MODE_HOLDOUT: 2 * MIN_PER_SIDE,
        pb.VALIDATION_MODE_K_FOLD: folds * MIN_PER_SIDE,
    }[mode]
    if n < needed:
        return _unavailable(
            mode,
            seed,
            metric,
            (
                f"{n} questions have {metric_catalog.BY_NAME[metric].info.label} for every run; "
                f"{MODE_NAMES[mode]} validation needs at least {needed}"
            ),
        )
    others = [
        m.info.name
        for m in metric_catalog.CATALOG
        if _family(m.info.group) == _family(metric_catalog.BY_NAME[metric].info.group) and m.info.name != metric
    ]
    measured = [(name, MeasureTable(name, runs, results)) for name in others]
    tables = [(metric, table)] + [(name, t) for name, t in measured if t.questions]
    order = [table.questions[i] for i in np.random.default_rng(seed).permutation(n)]
    all_winner = table.best(runs, table.questions)
    found = pb.WinnerValidation(mode=mode, seed=seed, metric=metric, all_questions_winner_run_key=all_winner)
    if mode == pb.VALIDATION_MODE_NONE:
        found.winner_run_key, found.selection_questions = all_winner, n
        for name, t in tables:
            everything = t.mean(all_winner, t.questions)
            found.scores.add(metric=name, selection_mean=everything, all_mean=everything)
        return found
    if mode == pb.VALIDATION_MODE_HOLDOUT:
        share = setting.selection_share or DEFAULT_SHARE
        cut = min(max(round(share * n), MIN_PER_SIDE), n - MIN_PER_SIDE)
        selection, confirmation = order[:cut], set(order[cut:])
        winner = table.best(runs, selection)
        found.winner_run_key = winner
        found.selection_questions, found.confirmation_questions = cut, n - cut
        found.selection_question_ids.extend(sorted(selection))
        chosen_on = set(selection)
        for name, t in tables:
            confirmed = [t.values[winner][q] for q in t.questions if q in confirmation]
            low, high = _interval(confirmed)
            found.scores.add(
                metric=name,
                selection_mean=t.mean(winner, [q for q in t.questions if q in chosen_on]),
                confirmation_mean=float(np.mean(confirmed)) if confirmed else 0.0,
                ci_low=low,
                ci_high=high,
                all_mean=t.mean(winner, t.questions),
            )
        return found
    fold_of = {q: i % folds for i, q in enumerate(order)}
    fold_winners = [table.best(runs, [q for q in table.questions if fold_of[q] != f]) for f in range(folds)]
    counts = Counter(fold_winners)
    most = max(counts.values())
    winner = all_winner if counts[all_winner] == most else next(r for r in runs if counts[r] == most)
    found.winner_run_key = winner
    found.fold_winners.extend(fold_winners)
    found.selection_questions, found.confirmation_questions = n - n // folds, n
    for name, t in tables:
        held_out = [t.values[fold_winners[fold_of[q]]][q] for q in t.questions if q in fold_of]
        chosen = [t.mean(fold_winners[f], [q for q in t.questions if fold_of.get(q) != f]) for f in range(folds)]
        low, high = _interval(held_out)
        found.scores.add(
            metric=name,
            selection_mean=float(np.mean(chosen)),
            confirmation_mean=float(np.mean(held_out)) if held_out else 0.0,
            ci_low=low,
            ci_high=high,
            all_mean=t.mean(winner, t.questions),
        )
    return found
