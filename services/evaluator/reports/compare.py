"""Comparing experiments: soft warnings where setups differ, and per metric the
difference of every run from a baseline with a paired bootstrap 95% interval
over the questions both answered."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from chunklab import experiment_state
from chunklab.v1 import evaluator_pb2
from services.evaluator.judging import metric_catalog

DEFAULT_SAMPLES = 2000
MAX_SAMPLES = 100_000
SEED = 20240601

# metric name -> value of one question's result, or None when not measured.
METRICS: dict[str, Callable[[evaluator_pb2.QuestionResult], float | None]] = {
    name: metric.value for name, metric in metric_catalog.BY_NAME.items()
}


def bootstrap_ci(differences: np.ndarray, samples: int, seed: int = SEED) -> tuple[float, float]:
    """2.5th and 97.5th percentiles of the mean of resampled paired differences."""
    if len(differences) == 0:
        return 0.0, 0.0
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(differences), size=(samples, len(differences)))
    means = differences[picks].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return float(low), float(high)


def bootstrap_cis(columns: Sequence[np.ndarray], samples: int, seed: int = SEED) -> list[tuple[float, float]]:
    """bootstrap_ci of each column (the same resamples, so the same intervals up to rounding),
    drawn once per column length and applied to all columns of that length at once as how
    often each question was drawn: fast when many runs answered the same questions."""
    out: list[tuple[float, float]] = [(0.0, 0.0)] * len(columns)
    by_length: dict[int, list[int]] = {}
    for index, column in enumerate(columns):
        if len(column):
            by_length.setdefault(len(column), []).append(index)
    for n, indices in by_length.items():
        picks = np.random.default_rng(seed).integers(0, n, size=(samples, n))
        drawn = np.bincount((picks + n * np.arange(samples)[:, None]).ravel(), minlength=samples * n)
        means = drawn.reshape(samples, n) @ np.stack([columns[i] for i in indices], axis=1) / n
        lows, highs = np.percentile(means, [2.5, 97.5], axis=0)
        for i, low, high in zip(indices, lows, highs):
            out[i] = (float(low), float(high))
    return out


def _question_key(result: evaluator_pb2.QuestionResult) -> str:
    # Question text, so that two question sets holding the same question pair up.
    return " ".join(result.question.split()).lower()


def _name(experiment: evaluator_pb2.Experiment) -> str:
    return experiment.config.name or experiment.experiment_id[:8]


def warnings(experiments: Sequence[evaluator_pb2.Experiment], set_names: dict[str, str] | None = None) -> list[str]:
    """Soft warnings: setups that differ are allowed, never silently equal. Question sets
    are named as the UI's dropdown names them (name and id), never by content hash."""
    set_names = set_names or {}

    def question_set(e: evaluator_pb2.Experiment) -> str:
        set_id = e.config.question_set_id
        return f"{set_names[set_id]} ({set_id[:8]})" if set_id in set_names else set_id[:8]

    out = []

    def differs(
        label: str,
        value: Callable[[evaluator_pb2.Experiment], str],
        why: str,
        named: Callable[[evaluator_pb2.Experiment], str] | None = None,
    ) -> None:
        values = {e.experiment_id: value(e) for e in experiments}
        if len(set(values.values())) > 1:
            shown = ", ".join(f"{_name(e)}: {(named or value)(e)}" for e in experiments)
            out.append(f"{label} differs ({shown}); {why}")

    differs(
        "neighbour expansion",
        lambda e: f"±{e.config.retrieval.neighbor_prev}/{e.config.retrieval.neighbor_next}",
        "fixed_size runs read different amounts of context, so their scores are not the same setup",
    )
    differs(
        "embedding model",
        lambda e: e.provenance.embedding_model or e.config.retrieval.embedding_model,
        "retrieval differs by model as well as by chunking",
    )
    differs(
        "question set",
        lambda e: e.question_set_hash,
        "only the questions both sets hold are compared",
        named=question_set,
    )
    differs("top_k", lambda e: str(e.config.retrieval.top_k), "runs retrieve different numbers of hits")
    differs(
        "judge prompt version",
        lambda e: e.provenance.judge_prompt_version or "-",
        "judge scores from different prompts are not directly comparable",
    )
    out += [
        f"{_name(e)} is partial: {', '.join(r.run_key for r in e.runs if experiment_state.incomplete_run(r))} "
        "did not finish every question; only what its runs measured is compared"
        for e in experiments
        if e.state == evaluator_pb2.EXPERIMENT_STATE_PARTIAL
    ]
    return out


def _runs(experiments: Sequence[evaluator_pb2.Experiment], results: dict[str, Sequence[evaluator_pb2.QuestionResult]]):
    """(experiment_id, run_key, question key -> result) of every run that answered, in order."""
    runs: list[tuple[str, str, dict[str, evaluator_pb2.QuestionResult]]] = []
    for experiment in experiments:
        by_run: dict[str, dict[str, evaluator_pb2.QuestionResult]] = {}
        for result in results[experiment.experiment_id]:
            by_run.setdefault(result.run_key, {})[_question_key(result)] = result
        for run in experiment.runs:
            if run.run_key in by_run:
                runs.append((experiment.experiment_id, run.run_key, by_run[run.run_key]))
    return runs


def left_out(
    experiments: Sequence[evaluator_pb2.Experiment], results: dict[str, Sequence[evaluator_pb2.QuestionResult]]
) -> list[str]:
    """Experiments that share no question with the baseline's (the first one), said aloud:
    their runs cannot be compared and appear in no table or plot."""
    if not experiments:
        return []
    base = experiments[0]
    asked = {_question_key(r) for r in results[base.experiment_id]}
    return [
        f"experiment {_name(e)} shares no questions with {_name(base)} and was left out"
        for e in experiments[1:]
        if not asked & {_question_key(r) for r in results[e.experiment_id]}
    ]


def count_wins(mine: dict[str, float], theirs: dict[str, float], higher_is_better: bool) -> tuple[int, int, int]:
    """(wins, losses, ties) of `mine` against `theirs` on the keys both hold."""
    shared = [k for k in mine if k in theirs]
    sign = 1.0 if higher_is_better else -1.0
    won = sum(1 for k in shared if sign * (mine[k] - theirs[k]) > 0)
    lost = sum(1 for k in shared if sign * (mine[k] - theirs[k]) < 0)
    return won, lost, len(shared) - won - lost


def wins(
    experiments: Sequence[evaluator_pb2.Experiment],
    results: dict[str, Sequence[evaluator_pb2.QuestionResult]],
    metric: str | None,
) -> list[evaluator_pb2.PairwiseWins]:
    """Per-question wins, losses and ties of every pair of runs on the deciding measure
    (ADR 0058), on the questions both hold; pairs that share none are left out."""
    if metric is None:
        return []
    value = METRICS[metric]
    measured = []
    for experiment_id, run_key, by_question in _runs(experiments, results):
        values = {k: v for k, r in by_question.items() if (v := value(r)) is not None}
        measured.append((experiment_id, run_key, values))
    higher = metric_catalog.BY_NAME[metric].info.higher_is_better
    out = []
    for i, (experiment_a, run_a, a) in enumerate(measured):
        for experiment_b, run_b, b in measured[i + 1 :]:
            won, lost, tied = count_wins(a, b, higher)
            if won or lost or tied:
                out.append(
                    evaluator_pb2.PairwiseWins(
                        metric=metric,
                        run_key=run_a,
                        other_run_key=run_b,
                        wins=won,
                        losses=lost,
                        ties=tied,
                        experiment_id=experiment_a,
                        other_experiment_id=experiment_b,
                    )
                )
    return out


def differences(
    experiments: Sequence[evaluator_pb2.Experiment],
    results: dict[str, Sequence[evaluator_pb2.QuestionResult]],
    samples: int,
) -> list[evaluator_pb2.MetricDifference]:
    """Every run against the baseline (the first experiment's first run), per metric."""
    runs = _runs(experiments, results)
    if len(runs) < 2:
        return []
    base_experiment, base_run, base = runs[0]
    out = []
    for experiment_id, run_key, other in runs[1:]:
        shared = [k for k in base if k in other]
        for metric, value in METRICS.items():
            pairs = [(value(base[k]), value(other[k])) for k in shared]
            pairs = [(a, b) for a, b in pairs if a is not None and b is not None]
            if not pairs:
                continue
            a = np.array([p[0] for p in pairs], dtype=float)
            b = np.array([p[1] for p in pairs], dtype=float)
            low, high = bootstrap_ci(b - a, samples)
            out.append(
                evaluator_pb2.MetricDifference(
                    metric=metric,
                    baseline_run_key=base_run,
                    run_key=run_key,
                    difference=float(b.mean() - a.mean()),
                    ci_low=low,
                    ci_high=high,
                    shared_questions=len(pairs),
                    baseline_experiment_id=base_experiment,
                    experiment_id=experiment_id,
                    baseline_mean=float(a.mean()),
                    mean=float(b.mean()),
                )
            )
    return out
