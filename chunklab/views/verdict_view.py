"""The managerial verdict in words (ADR 0058), shared by the evaluator's report,
the UI's Experiments and Compare pages and the CLI: a winner is named only when
the 95% interval of its lead over the runner-up holds no tie, with what it costs
on tokens sent and IoU; otherwise "no clear winner" and the Pareto sets. Plain
data out; the callers lay it out."""

from __future__ import annotations

from collections.abc import Sequence

from chunklab.v1 import evaluator_pb2 as pb
from chunklab.views.metric_format import MetricFormat, times

TOKENS, IOU = "tokens_sent", "iou"


def means_of(found: pb.Verdict) -> dict[str, dict[str, pb.MeanInterval]]:
    """metric -> run_key -> its mean with the interval."""
    out: dict[str, dict[str, pb.MeanInterval]] = {}
    for mean in found.means:
        out.setdefault(mean.metric, {})[mean.run_key] = mean
    return out


def pareto_front(points: Sequence[tuple[str, float, float]], higher_a: bool, higher_b: bool) -> list[str]:
    """The keys of (key, a, b) that no other point beats on one axis without losing on
    the other, in the order given: the best trade-offs."""
    sign_a, sign_b = (1.0 if higher_a else -1.0), (1.0 if higher_b else -1.0)

    def beats(p, q) -> bool:
        better_a, better_b = sign_a * (p[1] - q[1]), sign_b * (p[2] - q[2])
        return better_a >= 0 and better_b >= 0 and (better_a > 0 or better_b > 0)

    return [p[0] for p in points if not any(beats(q, p) for q in points if q is not p)]


def front(found: pb.Verdict, metrics: MetricFormat, other: str) -> list[str]:
    """The runs on the Pareto front of the deciding measure against `other` (tokens sent, IoU)."""
    means = means_of(found)
    quality, cost = means.get(found.metric, {}), means.get(other, {})
    points = [(key, quality[key].mean, cost[key].mean) for key in quality if key in cost]
    return pareto_front(points, metrics.info(found.metric).higher_is_better, metrics.info(other).higher_is_better)


def _costs(found: pb.Verdict, metrics: MetricFormat) -> list[str]:
    """What the winner gives up against the runner-up: more tokens sent, a lower IoU."""
    means, win, second = means_of(found), found.winner_run_key, found.runner_up_run_key
    costs = []
    tokens = means.get(TOKENS, {})
    if win in tokens and second in tokens and tokens[win].mean > tokens[second].mean:
        share = tokens[win].mean / tokens[second].mean if tokens[second].mean else 0.0
        costs.append(f"sends {times(share)} the tokens" if share else "sends tokens where it sends none")
    iou = means.get(IOU, {})
    if found.metric != IOU and win in iou and second in iou and iou[win].mean < iou[second].mean:
        costs.append(
            f"has {metrics.label(IOU)} {metrics.value(IOU, iou[win].mean)} "
            f"against {metrics.value(IOU, iou[second].mean)}"
        )
    return costs


def pareto_sentence(found: pb.Verdict, metrics: MetricFormat) -> str:
    label = metrics.label(found.metric)
    parts = [
        f"against {metrics.label(other)}: {', '.join(runs)}"
        for other in (TOKENS, IOU)
        if other != found.metric and (runs := front(found, metrics, other))
    ]
    return f"The best trade-offs (Pareto front) of {label} {'; '.join(parts)}." if parts else ""


def clear(found: pb.Verdict) -> bool:
    """A winner is named only when the interval of its lead holds no tie."""
    return bool(found.runner_up_run_key) and not found.ci_low <= 0 <= found.ci_high


def headline(found: pb.Verdict, metrics: MetricFormat) -> str:
    """The verdict's first sentence."""
    if not found.winner_run_key:
        reason = found.unavailable or "no run finished any question"
        return f"There is no winner to name: {reason}."
    label, win, second = metrics.label(found.metric), found.winner_run_key, found.runner_up_run_key
    mean = means_of(found).get(found.metric, {})
    value = metrics.value(found.metric, mean[win].mean) if win in mean else ""
    if not second:
        return f"{win} is the only run that answered questions ({label} {value}): there is nothing to compare it with."
    lead = (
        f"{metrics.difference(found.metric, found.difference)} "
        f"{metrics.interval(found.metric, found.ci_low, found.ci_high)}"
    )
    if not clear(found):
        runner = metrics.value(found.metric, mean[second].mean) if second in mean else ""
        return (
            f"No clear winner on {label}: {win} ({value}) leads {second} ({runner}) by {lead} "
            f"over {found.shared_questions} questions, and that 95% interval holds a tie."
        )
    best = "highest" if metrics.info(found.metric).higher_is_better else "lowest"
    costs = _costs(found, metrics)
    tail = f" but {' and '.join(costs)}." if costs else ", at no cost in tokens sent or IoU."
    return f"{win} has the {best} {label} ({value}, {lead} over {second}){tail}"


def verdict_view(found: pb.Verdict, metrics: MetricFormat) -> dict | None:
    """The verdict's sentences and a table of every run's means with their 95% intervals;
    None for an experiment summarised without one (a running one)."""
    if not found.metric and not found.unavailable:
        return None
    means = means_of(found)
    names = [name for name in dict.fromkeys((found.metric, *metrics.ordered(means))) if name in means]
    runs = list(dict.fromkeys(m.run_key for m in found.means))
    fronts = {other: set(front(found, metrics, other)) for other in (TOKENS, IOU) if other != found.metric}
    rows = [
        {
            "run_key": key,
            "winner": key == found.winner_run_key and clear(found),
            "front": any(key in f for f in fronts.values()),
            "cells": [
                metrics.mean_interval(n, m.mean, m.ci_low, m.ci_high) if (m := means[n].get(key)) else "–"
                for n in names
            ],
        }
        for key in runs
    ]
    return {
        "text": headline(found, metrics),
        "pareto": pareto_sentence(found, metrics),
        "columns": [metrics.label(n) for n in names],
        "rows": rows,
    }
