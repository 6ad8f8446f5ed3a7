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
  the one chosen on every question.
- NONE: chosen and scored on every question, and said to be optimistic.

"Chosen" is always the winner rule of reports/winner.py (ADR 0080): a run
dominated on the objective is never chosen, and a lead several runs share
names them all (leaders) and no winner. Only questions every candidate run
has the deciding measure for take part, so every run is judged on the same
questions, dealt in the order of their content (never their ids).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from chunklab.errors import InvalidArgument
from chunklab.v1 import evaluator_pb2 as pb
from services.evaluator.judging import metric_catalog
from services.evaluator.reports import compare, winner
from services.evaluator.reports.winner import MeasureTable, Standing

DEFAULT_SHARE = 0.5
DEFAULT_FOLDS = 5
MAX_FOLDS = 20
# Questions each side of a split needs at least (each fold, for K_FOLD).
MIN_PER_SIDE = 2
BOOTSTRAP_SAMPLES = winner.BOOTSTRAP_SAMPLES
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


def _family(group: str) -> str:
    """The winner is scored on its deciding measure's kin: a measure on the hits counts as labelled."""
    return "labelled" if group == "hits" else group


def _unavailable(mode: int, seed: int, metric: str, why: str) -> pb.WinnerValidation:
    return pb.WinnerValidation(mode=mode, seed=seed, metric=metric, unavailable=why)


def _interval(values: Sequence[float]) -> tuple[float, float]:
    return compare.bootstrap_ci(np.asarray(values, dtype=float), BOOTSTRAP_SAMPLES)


def _setup(experiment: pb.Experiment, results: Sequence[pb.QuestionResult]):
    """(runs, metric, the objective's tables), or a WinnerValidation saying why there is nothing to validate."""
    setting = experiment.config.validation
    mode = setting.mode or pb.VALIDATION_MODE_HOLDOUT
    runs = [r.run_key for r in experiment.runs if r.questions_done and not r.error]
    metric = setting.metric or winner.headline_metric([r for r in experiment.runs if r.run_key in runs]) or ""
    if len(runs) < 2:
        why = "fewer than two runs answered questions: there is no winner to choose"
        return _unavailable(mode, setting.seed, metric, why)
    if not metric:
        why = "no quality measure was taken (no references, expected answers or judge)"
        return _unavailable(mode, setting.seed, metric, why)
    objective = winner.objective(metric, runs, results)
    n = len(objective[0].questions)
    needed = {
        pb.VALIDATION_MODE_NONE: 1,
        pb.VALIDATION_MODE_HOLDOUT: 2 * MIN_PER_SIDE,
        pb.VALIDATION_MODE_K_FOLD: (setting.folds or DEFAULT_FOLDS) * MIN_PER_SIDE,
    }[mode]
    if n < needed:
        why = (
            f"{n} questions have {metric_catalog.BY_NAME[metric].info.label} for every run; "
            f"{MODE_NAMES[mode]} validation needs at least {needed}"
        )
        return _unavailable(mode, setting.seed, metric, why)
    return runs, metric, objective


def _score_tables(metric: str, runs: Sequence[str], results: Sequence[pb.QuestionResult]) -> list[MeasureTable]:
    """The deciding measure's table, then those of its kin (the labelled measures for recall) that were measured."""
    family = _family(metric_catalog.BY_NAME[metric].info.group)
    others = [m.info.name for m in metric_catalog.CATALOG if _family(m.info.group) == family and m.info.name != metric]
    return [MeasureTable(metric, runs, results)] + [
        t for n in others if (t := MeasureTable(n, runs, results)).questions
    ]


def validate(experiment: pb.Experiment, results: Sequence[pb.QuestionResult]) -> pb.WinnerValidation:
    """The experiment's winner as its validation setting chooses and confirms it."""
    setup = _setup(experiment, results)
    if isinstance(setup, pb.WinnerValidation):
        return setup
    runs, metric, objective = setup
    setting = experiment.config.validation
    mode, seed = setting.mode or pb.VALIDATION_MODE_HOLDOUT, setting.seed
    table = objective[0]
    n = len(table.questions)
    tables = _score_tables(metric, runs, results)
    order = [table.questions[i] for i in np.random.default_rng(seed).permutation(n)]
    everywhere = winner.choose(objective, runs, table.questions)
    found = pb.WinnerValidation(mode=mode, seed=seed, metric=metric, all_questions_winner_run_key=everywhere.winner)
    if mode == pb.VALIDATION_MODE_HOLDOUT:
        share = setting.selection_share or DEFAULT_SHARE
        cut = min(max(round(share * n), MIN_PER_SIDE), n - MIN_PER_SIDE)
        _holdout(found, winner.choose(objective, runs, order[:cut]), tables, order[:cut])
        found.confirmation_questions = n - cut
        return found
    found.winner_run_key, found.selection_questions = everywhere.winner, n
    found.leaders.extend(everywhere.leaders)
    if mode == pb.VALIDATION_MODE_NONE:
        for t in tables if everywhere.winner else []:
            every = t.mean(everywhere.winner, t.questions)
            found.scores.add(metric=t.metric, selection_mean=every, all_mean=every)
        return found
    folds = setting.folds or DEFAULT_FOLDS
    found.selection_questions, found.confirmation_questions = n - n // folds, n
    _k_fold(found, objective, runs, tables, order, folds)
    return found


def _holdout(found: pb.WinnerValidation, chosen: Standing, tables: Sequence[MeasureTable], selection: list[str]):
    """The selection side's leaders, and the winner's scores where it was chosen and confirmed."""
    found.winner_run_key = chosen.winner
    found.leaders.extend(chosen.leaders)
    found.selection_questions = len(selection)
    found.selection_question_ids.extend(sorted(selection))
    if not chosen.winner:
        return
    chosen_on = set(selection)
    for t in tables:
        confirmed = [t.values[chosen.winner][q] for q in t.questions if q not in chosen_on]
        low, high = _interval(confirmed)
        found.scores.add(
            metric=t.metric,
            selection_mean=t.mean(chosen.winner, [q for q in t.questions if q in chosen_on]),
            confirmation_mean=float(np.mean(confirmed)) if confirmed else 0.0,
            ci_low=low,
            ci_high=high,
            all_mean=t.mean(chosen.winner, t.questions),
        )


def _k_fold(found, objective, runs, tables: Sequence[MeasureTable], order: list[str], folds: int) -> None:
    """Each fold scored by the leaders the other folds chose (their mean where several share the lead)."""
    fold_of = {q: i % folds for i, q in enumerate(order)}
    chosen = [winner.choose(objective, runs, [q for q in order if fold_of[q] != f]) for f in range(folds)]
    found.fold_winners.extend(c.winner for c in chosen)
    for t in tables:

        def by_leaders(q: str, leaders: list[str], t: MeasureTable = t) -> float:
            return float(np.mean([t.values[r][q] for r in leaders]))

        held_out = [by_leaders(q, chosen[fold_of[q]].leaders) for q in t.questions if q in fold_of]
        selected = [
            float(np.mean([t.mean(r, [q for q in t.questions if fold_of.get(q) != f]) for r in chosen[f].leaders]))
            for f in range(folds)
        ]
        low, high = _interval(held_out)
        found.scores.add(
            metric=t.metric,
            selection_mean=float(np.mean(selected)),
            confirmation_mean=float(np.mean(held_out)) if held_out else 0.0,
            ci_low=low,
            ci_high=high,
            all_mean=t.mean(found.winner_run_key, t.questions) if found.winner_run_key else 0.0,
        )
