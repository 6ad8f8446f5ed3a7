"""The one rule for "the winner" (ADR 0080), used by the verdict, the hold-out
and k-fold choices, "copy the winner's settings", Compare and both reports.

On a set of questions:

1. the deciding measure (recall when there are references, ADR 0058) finds the
   best run by its mean; every run whose paired bootstrap 95% interval of the
   difference to the best holds 0 is tied with it (a near-tie is a tie);
2. among the tied runs, a run is dominated when another one is better on some
   measure of the objective (the deciding measure, IoU higher, tokens sent
   lower; IoU only where it was measured) and worse on none, "better" and
   "worse" again meaning that the paired interval holds no tie;
3. the leaders are the tied runs no other tied run dominates. One leader is the
   winner; several are "no single winner", and the leaders are named, never
   one of them. A dominated run is never the winner.

Which questions take part, and in which order a seeded split deals them, depends
only on their content (the question's text), never on the ids an import gives
them: the same experiment in two fresh data folders chooses the same winner.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from chunklab.v1 import evaluator_pb2 as pb
from services.evaluator.judging import metric_catalog
from services.evaluator.reports import compare

BOOTSTRAP_SAMPLES = 2000
# Measures a leader is compared on after the deciding one, where every run has them.
TRADE_OFFS = ("iou", "tokens_sent")


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


def content_key(text: str) -> str:
    """A question's place in a split: a hash of its text as written (spacing and case aside)."""
    return hashlib.sha256(" ".join(text.split()).lower().encode()).hexdigest()


class MeasureTable:
    """One measure's value per (run, question), on the questions every run has it for,
    ordered by their content (the question id only breaks ties between equal texts)."""

    def __init__(self, metric: str, runs: Sequence[str], results: Sequence[pb.QuestionResult]) -> None:
        value = metric_catalog.BY_NAME[metric].value
        self.metric = metric
        self.sign = 1.0 if metric_catalog.BY_NAME[metric].info.higher_is_better else -1.0
        self.values: dict[str, dict[str, float]] = {run: {} for run in runs}
        keys: dict[str, str] = {}
        for result in results:
            measured = value(result) if result.run_key in self.values else None
            if measured is not None:
                self.values[result.run_key][result.question_id] = float(measured)
                keys.setdefault(result.question_id, content_key(result.question))
        self.shared = set.intersection(*(set(v) for v in self.values.values())) if runs else set()
        self.questions = sorted(self.shared, key=lambda q: (keys[q], q))

    def mean(self, run: str, questions: Sequence[str]) -> float:
        return float(np.mean([self.values[run][q] for q in questions])) if questions else 0.0

    def top(self, runs: Sequence[str], questions: Sequence[str]) -> str:
        """The run with the best mean on these questions; ties go to the run listed first."""
        return max(runs, key=lambda run: (self.sign * self.mean(run, questions), -runs.index(run)))

    def better(self, pairs: Sequence[tuple[str, str]], questions: Sequence[str]) -> list[int]:
        """For each (a, b): 1 when a is better on these questions (the paired 95% interval of
        a - b, in the measure's direction, lies above 0), -1 when worse, 0 for a tie."""
        shared = [q for q in questions if q in self.shared]
        columns = [self.sign * np.array([self.values[a][q] - self.values[b][q] for q in shared]) for a, b in pairs]
        out = []
        for low, high in compare.bootstrap_cis(columns, BOOTSTRAP_SAMPLES):
            out.append(1 if low > 0 else -1 if high < 0 else 0)
        return out


@dataclass
class Dominated:
    run_key: str
    by_run_key: str
    # The measures on which by_run_key is better (it is worse on none).
    better_on: list[str] = field(default_factory=list)


@dataclass
class Standing:
    """What the rule finds on one set of questions."""

    best: str
    tied: list[str]
    leaders: list[str]
    dominated: list[Dominated]

    @property
    def winner(self) -> str:
        """The one leader, or "" when several share the lead."""
        return self.leaders[0] if len(self.leaders) == 1 else ""


def objective(metric: str, runs: Sequence[str], results: Sequence[pb.QuestionResult]) -> list[MeasureTable]:
    """The deciding measure's table, then those of IoU and tokens sent where every run has them."""
    tables = [MeasureTable(metric, runs, results)]
    for name in TRADE_OFFS:
        if name != metric and (table := MeasureTable(name, runs, results)).questions:
            tables.append(table)
    return tables


def choose(tables: Sequence[MeasureTable], runs: Sequence[str], questions: Sequence[str]) -> Standing:
    """The rule on these questions (the deciding measure's table first; runs in their order)."""
    deciding = tables[0]
    best = deciding.top(runs, questions)
    others = [r for r in runs if r != best]
    tied = [best, *(r for r, c in zip(others, deciding.better([(r, best) for r in others], questions)) if c >= 0)]
    tied = [r for r in runs if r in tied]
    pairs = [(a, b) for i, a in enumerate(tied) for b in tied[i + 1 :]]
    verdicts = {name: dict(zip(pairs, t.better(pairs, questions))) for name, t in ((t.metric, t) for t in tables)}

    def better_on(a: str, b: str) -> list[str] | None:
        """The measures a beats b on, when a dominates b; else None."""
        signs = {name: (v[(a, b)] if (a, b) in v else -v[(b, a)]) for name, v in verdicts.items()}
        wins = [name for name, s in signs.items() if s > 0]
        return wins if wins and all(s >= 0 for s in signs.values()) else None

    beaten = {b: [a for a in tied if a != b and better_on(a, b) is not None] for b in tied}
    leaders = [r for r in tied if not beaten[r]] or list(tied)
    dominated = []
    for run in tied:
        if run not in leaders:
            by = next((a for a in beaten[run] if a in leaders), beaten[run][0])
            dominated.append(Dominated(run, by, better_on(by, run) or []))
    return Standing(best=best, tied=tied, leaders=leaders, dominated=dominated)
