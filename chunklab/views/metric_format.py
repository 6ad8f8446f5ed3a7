"""How a metric's value reads, from the evaluator's metric catalogue
(EvaluatorService.ListMetrics): the UI, the CLI and the reports format and judge
every metric the same way, so MRR is 0.756 everywhere and no page decides on its
own which direction is better (ADR 0039)."""

from __future__ import annotations

from collections.abc import Iterable

from chunklab.v1 import evaluator_pb2 as pb
from chunklab.views import numbers

# How a difference of each unit is written, and what a plot's axis counts.
_AXIS = {
    pb.METRIC_UNIT_PERCENT: "percentage points",
    pb.METRIC_UNIT_RATIO: "score",
    pb.METRIC_UNIT_SCORE: "score (1-10)",
    pb.METRIC_UNIT_MILLISECONDS: "ms",
    pb.METRIC_UNIT_COUNT: "count",
    pb.METRIC_UNIT_USD: "USD",
}


# The judge's scores are the JudgeScores fields that are a Score.
_JUDGE_SCORES = frozenset(f.name for f in pb.JudgeScores.DESCRIPTOR.fields if f.message_type is pb.Score.DESCRIPTOR)
_NEEDS_REFERENCES = frozenset({"labelled", "hits", "rank"})

# Per unit: how a value reads, how a difference reads, the factor from the stored number, and
# the kind of number a plot rounds it as (chunklab.views.numbers writes them all).
_FORMATS = {
    pb.METRIC_UNIT_PERCENT: (numbers.percent, numbers.points, 100.0, "percent"),
    pb.METRIC_UNIT_RATIO: (numbers.score, numbers.signed_score, 1.0, "score"),
    pb.METRIC_UNIT_SCORE: (numbers.judge, numbers.signed_judge, 1.0, "judge"),
    pb.METRIC_UNIT_MILLISECONDS: (numbers.milliseconds, lambda ms: numbers.signed_duration(ms / 1000), 1.0, "count"),
    pb.METRIC_UNIT_COUNT: (numbers.count, numbers.signed_count, 1.0, "count"),
    pb.METRIC_UNIT_USD: (numbers.usd, numbers.signed_usd, 1.0, "usd"),
}


class MetricFormat:
    """The catalogue's metrics in reading order, each formatted by its unit."""

    def __init__(self, infos: Iterable[pb.MetricInfo]) -> None:
        self._infos = {info.name: info for info in infos}
        self.order = list(self._infos)

    def info(self, name: str) -> pb.MetricInfo:
        """The metric's entry; a name the catalogue does not know reads as a plain ratio."""
        return self._infos.get(name) or pb.MetricInfo(
            name=name, label=name, unit=pb.METRIC_UNIT_RATIO, higher_is_better=True
        )

    def label(self, name: str) -> str:
        return self.info(name).label or name

    def scale(self, name: str) -> float:
        """Factor from a stored value to the number shown (fractions as percentages)."""
        return self._formats(name)[2]

    def plotted(self, name: str, value: float) -> float:
        """A stored value as a plot's data holds it: in shown units, at the decimals a table
        writes (a plot's tooltip prints the number as it is)."""
        return numbers.rounded(value * self.scale(name), self._formats(name)[3])

    def axis_format(self, name: str) -> str:
        """The d3 format of a plot axis of this measure, in shown units."""
        return numbers.D3[self._formats(name)[3]]

    def axis_unit(self, name: str) -> str:
        """What a plot of differences counts ("percentage points" for a percentage)."""
        return _AXIS.get(self.info(name).unit, "value")

    def value_unit(self, name: str) -> str:
        """What a plot of values counts ("%" for a percentage)."""
        return "%" if self.info(name).unit == pb.METRIC_UNIT_PERCENT else self.axis_unit(name)

    def _formats(self, name: str) -> tuple:
        return _FORMATS.get(self.info(name).unit, _FORMATS[pb.METRIC_UNIT_RATIO])

    def value(self, name: str, value: float) -> str:
        """A value as every view writes it: percentages from fractions ("97.7%"), counts whole ("1,077")."""
        return self._formats(name)[0](value)

    def difference(self, name: str, value: float) -> str:
        """A difference of two values, signed: "+3.1 pts", "-0.012", "+120"."""
        return self._formats(name)[1](value)

    def interval(self, name: str, ci_low: float, ci_high: float) -> str:
        """A difference's 95% interval, e.g. "[+3.1 pts, +7.8 pts]"."""
        return f"[{self.difference(name, ci_low)}, {self.difference(name, ci_high)}]"

    def mean_interval(self, name: str, mean: float, ci_low: float, ci_high: float) -> str:
        """A mean with its 95% interval, e.g. "97.7% [95.1%, 99.2%]"."""
        return f"{self.value(name, mean)} [{self.value(name, ci_low)}, {self.value(name, ci_high)}]"

    def verdict(self, name: str, ci_low: float, ci_high: float) -> str:
        """What a 95% interval of a difference says: no clear difference when it
        holds 0, else higher or lower, and whether that is the better direction."""
        if ci_low <= 0 <= ci_high:
            return "no clear difference"
        higher = ci_low > 0
        better = higher == self.info(name).higher_is_better
        return ("higher" if higher else "lower") + (" (better)" if better else " (worse)")

    def group(self, group: str) -> list[str]:
        """The names of one group ("labelled", "rank", "judge", "efficiency"), in reading order."""
        return [name for name in self.order if self._infos[name].group == group]

    def groups(self, *groups: str) -> list[str]:
        """The names of these groups, group by group: a table's columns."""
        return [name for group in groups for name in self.group(group)]

    def of(self, name: str, metrics: pb.RetrievalMetrics, judge: pb.JudgeScores | None = None) -> float | None:
        """Any catalogue measure of one result or of a run's means, None when it was not taken:
        the judge's scores from `judge`, the rest from `metrics` (the labelled, hits and rank
        groups need references; a negative value, embedding similarity's -1, is not a measure)."""
        if name in _JUDGE_SCORES:
            score = getattr(judge, name) if judge is not None else pb.Score()
            return score.value if score.measured else None
        if self.info(name).group in _NEEDS_REFERENCES:
            return measured(metrics, name)
        value = float(getattr(metrics, name))
        return None if value < 0 else value

    def judge_scores(self) -> list[str]:
        """The judge group's measures the judge scores with a reason (embedding similarity is no judge's)."""
        return [name for name in self.group("judge") if name in _JUDGE_SCORES]

    def measured_in(self, group: str, means: Iterable[pb.RetrievalMetrics]) -> list[str]:
        """The group's measures that at least one of these means has: a table's columns."""
        means = list(means)
        return [name for name in self.group(group) if any(measured(m, name) is not None for m in means)]

    def facts(self, group: str, metrics: pb.RetrievalMetrics) -> list[str]:
        """ "label value" of each of the group's measures that were taken, e.g. "recall@1 50.0%"."""
        return [
            f"{self.label(name)} {self.value(name, value)}"
            for name in self.group(group)
            if (value := measured(metrics, name)) is not None
        ]

    def cell(self, name: str, metrics: pb.RetrievalMetrics) -> str:
        """A retrieval measure as a table shows it: "–" without references, "not
        measured" when it was not taken (recall@10 of a top-5 run, ADR 0052)."""
        if not _labelled(metrics):
            return "–"
        value = measured(metrics, name)
        return "not measured" if value is None else self.value(name, value)

    def ordered(self, names: Iterable[str]) -> list[str]:
        """The catalogue's order first, unknown names after, by name."""
        present = set(names)
        known = [m for m in self.order if m in present]
        return known + sorted(present - set(known))


def score(value: float) -> str:
    """A retrieval score (similarity, rerank) as every view writes it, e.g. "0.500"."""
    return numbers.score(value)


def usd(amount: float) -> str:
    """A cost in US dollars, e.g. "$0.0123": estimates, runs and answers alike."""
    return numbers.usd(amount)


def judge_value(measure: str, score: pb.Score) -> str:
    """One judge score as the detail and the report write it: "7 / 10", hallucination "yes"/"no",
    or "not measured" (a reply that could not be parsed is never a 0)."""
    if not score.measured:
        return "not measured"
    if measure == "hallucination":
        return "yes" if score.value >= 0.5 else "no"
    return f"{score.value:g} / 10"


def plural(count: int, noun: str) -> str:
    """A count with its noun, "1 run" and "1,020 runs", as every page and report writes it."""
    return numbers.counted(count, noun)


def times(ratio: float) -> str:
    """How many times another's amount, e.g. "4.1×"."""
    return numbers.times(ratio)


def measured(metrics: pb.RetrievalMetrics, name: str) -> float | None:
    """A labelled measure of one question or of a run's means; None without references,
    or when a measure that can be left unset (the rank measures) was not taken."""
    field = pb.RetrievalMetrics.DESCRIPTOR.fields_by_name[name]
    if not _labelled(metrics) or (field.has_presence and not metrics.HasField(name)):
        return None
    return getattr(metrics, name)


def _labelled(metrics: pb.RetrievalMetrics) -> bool:
    return metrics.labelled or metrics.questions_labelled > 0
