"""Comparing experiments: soft warnings where setups differ, and per metric the
difference of every run from a baseline with a paired bootstrap 95% interval
over the questions both answered."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from chunklab.v1 import evaluator_pb2
from services.evaluator import metric_catalog

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


def _question_key(result: evaluator_pb2.QuestionResult) -> str:
    # Question text, so that two question sets holding the same question pair up.
    return " ".join(result.question.split()).lower()


def warnings(experiments: Sequence[evaluator_pb2.Experiment]) -> list[str]:
    """Soft warnings: setups that differ are allowed, never silently equal."""
    out = []

    def differs(label: str, value: Callable[[evaluator_pb2.Experiment], str], why: str) -> None:
        values = {e.experiment_id: value(e) for e in experiments}
        if len(set(values.values())) > 1:
            shown = ", ".join(f"{e.config.name or e.experiment_id[:8]}: {values[e.experiment_id]}" for e in experiments)
            out.append(f"{label} differs ({shown}); {why}")

    differs(
        "neighbour expansion",
        lambda e: f"±{e.config.retrieval.neighbor_prev}/{e.config.retrieval.neighbor_next}",
        "fixed_size runs read different amounts of context, so their scores are not the same setup",
    )
    differs("embedding model", lambda e: e.provenance.embedding_model or e.config.retrieval.embedding_model,
            "retrieval differs by model as well as by chunking")
    differs("question set", lambda e: e.question_set_hash[:12],
            "only the questions both sets hold are compared")
    differs("top_k", lambda e: str(e.config.retrieval.top_k), "runs retrieve different numbers of hits")
    differs("judge prompt version", lambda e: e.provenance.judge_prompt_version or "-",
            "judge scores from different prompts are not directly comparable")
    return out


def differences(
    experiments: Sequence[evaluator_pb2.Experiment],
    results: dict[str, Sequence[evaluator_pb2.QuestionResult]],
    samples: int,
) -> list[evaluator_pb2.MetricDifference]:
    """Every run against the baseline (the first experiment's first run), per metric."""
    runs: list[tuple[str, str, dict[str, evaluator_pb2.QuestionResult]]] = []
    for experiment in experiments:
        by_run: dict[str, dict[str, evaluator_pb2.QuestionResult]] = {}
        for result in results[experiment.experiment_id]:
            by_run.setdefault(result.run_key, {})[_question_key(result)] = result
        for run in experiment.runs:
            if run.run_key in by_run:
                runs.append((experiment.experiment_id, run.run_key, by_run[run.run_key]))
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
            out.append(evaluator_pb2.MetricDifference(
                metric=metric, baseline_run_key=base_run, run_key=run_key, difference=float(b.mean() - a.mean()),
                ci_low=low, ci_high=high, shared_questions=len(pairs), baseline_experiment_id=base_experiment,
                experiment_id=experiment_id, baseline_mean=float(a.mean()), mean=float(b.mean()),
            ))
    return out
