"""The managerial verdict in words (ADR 0058), shared by the evaluator's report,
the UI's Experiments and Compare pages and the CLI. The evaluator's winner rule
(ADR 0080) decides; this says it: the winner with why it wins (a clear lead, with
what it costs on tokens sent and IoU; or a tie on the deciding measure that it wins
on IoU or tokens sent), or "no clear winner", the leaders and what separates them.
A dominated run is never called the winner. Plain data out; the callers lay it out."""

from __future__ import annotations

from collections.abc import Sequence

from chunklab import pareto
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
    return pareto.front([(key, (a, b)) for key, a, b in points], (higher_a, higher_b))


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
    """The rule named one winner (ADR 0080)."""
    return bool(found.winner_run_key)


def _pair(metrics: MetricFormat, metric: str, mean: dict[str, pb.MeanInterval], a: str, b: str) -> str:
    """ "x vs y": a's and b's means of a measure."""
    return f"{metrics.value(metric, mean[a].mean)} vs {metrics.value(metric, mean[b].mean)}"


def _edge(found: pb.Verdict, metrics: MetricFormat, name: str, a: str, b: str) -> str:
    """How a is better than b on one measure, in words with both means."""
    mean = means_of(found).get(name, {})
    if a not in mean or b not in mean:
        return f"has a better {metrics.label(name)}"
    both = _pair(metrics, name, mean, a, b)
    if name == TOKENS and mean[b].mean:
        fewer = 1.0 - mean[a].mean / mean[b].mean
        amount = "half the tokens" if 0.45 <= fewer <= 0.55 else f"{fewer:.0%} fewer tokens"
        return f"sends {amount} ({both})"
    higher = "higher" if metrics.info(name).higher_is_better else "lower"
    return f"has a {higher} {metrics.label(name)} ({both})"


def why_wins(found: pb.Verdict, metrics: MetricFormat, dominated: pb.DominatedRun) -> str:
    """Why a leader beats a run tied with it, e.g. "ties fixed_size on recall (100% vs 100%)
    and sends half the tokens (553 vs 1,270)"."""
    mean = means_of(found).get(found.metric, {})
    a, b = dominated.by_run_key, dominated.run_key
    both = f" ({_pair(metrics, found.metric, mean, a, b)})" if a in mean and b in mean else ""
    verb = "beats" if found.metric in dominated.better_on else "ties"
    edges = [_edge(found, metrics, n, a, b) for n in dominated.better_on if n != found.metric]
    return _listed([f"{verb} {b} on {metrics.label(found.metric)}{both}", *edges])


def _listed(parts: Sequence[str]) -> str:
    """ "a", "a and b", "a, b and c"."""
    parts = list(parts)
    return parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"


_names = _listed


def separates(found: pb.Verdict, metrics: MetricFormat) -> str:
    """What sets the leaders apart beyond the deciding measure they tie on: which of them
    is best on IoU and on tokens sent, e.g. "b sends fewer tokens (400 vs 1,000)"."""
    means, parts = means_of(found), []
    for name in (IOU, TOKENS):
        mean = {k: m.mean for k, m in means.get(name, {}).items() if k in found.leaders}
        if name == found.metric or len(mean) < 2 or len(set(mean.values())) < 2:
            continue
        higher = metrics.info(name).higher_is_better
        order = sorted(mean, key=lambda k: -mean[k] if higher else mean[k])
        top, values = order[0], metrics.value(name, mean[order[0]])
        if len(mean) == 2:
            values += f" vs {metrics.value(name, mean[order[1]])}"
            word = "fewer tokens" if name == TOKENS else f"the {'higher' if higher else 'lower'} {metrics.label(name)}"
        else:
            word = (
                "the fewest tokens"
                if name == TOKENS
                else f"the {'highest' if higher else 'lowest'} {metrics.label(name)}"
            )
        parts.append(f"{top} {'sends' if name == TOKENS else 'has'} {word} ({values})")
    return "; ".join(parts)


def _dominated_note(found: pb.Verdict, metrics: MetricFormat) -> str:
    """The tied runs that are not leaders, each with a leader that beats it."""
    return " ".join(
        f"{d.run_key} is not a leader: {d.by_run_key} {why_wins(found, metrics, d)}." for d in found.dominated
    )


def headline(found: pb.Verdict, metrics: MetricFormat) -> str:
    """The verdict's first sentence (and the tied runs the rule set aside)."""
    if not found.leaders:
        reason = found.unavailable or "no run finished any question"
        return f"There is no winner to name: {reason}."
    label, best, second = metrics.label(found.metric), found.best_run_key, found.runner_up_run_key
    mean = means_of(found).get(found.metric, {})
    if not second:
        value = metrics.value(found.metric, mean[best].mean) if best in mean else ""
        return f"{best} is the only run that answered questions ({label} {value}): there is nothing to compare it with."
    if not clear(found):
        values = ", ".join(f"{k} {metrics.value(found.metric, mean[k].mean)}" for k in found.leaders if k in mean)
        lead = (
            f"; {best} leads {second} by {metrics.difference(found.metric, found.difference)} "
            f"{metrics.interval(found.metric, found.ci_low, found.ci_high)}, a 95% interval that holds a tie"
            if best in found.leaders and second in found.leaders
            else ""
        )
        apart = separates(found, metrics)
        none = "neither beats the other" if len(found.leaders) == 2 else "none beats another"
        return (
            f"No clear winner on {label}: {_names(found.leaders)} share the lead ({values} over "
            f"{found.shared_questions} questions{lead}) and {none} on every measure"
            + (f": {apart}." if apart else ".")
            + (f" {_dominated_note(found, metrics)}" if found.dominated else "")
        )
    win = found.winner_run_key
    if found.dominated:
        reasons = "; it ".join(why_wins(found, metrics, d) for d in found.dominated)
        return f"{win} is the winner: it {reasons}."
    value = metrics.value(found.metric, mean[win].mean) if win in mean else ""
    lead = (
        f"{metrics.difference(found.metric, found.difference)} "
        f"{metrics.interval(found.metric, found.ci_low, found.ci_high)}"
    )
    best_word = "highest" if metrics.info(found.metric).higher_is_better else "lowest"
    costs = _costs(found, metrics)
    tail = f" but {' and '.join(costs)}." if costs else ", at no cost in tokens sent or IoU."
    return f"{win} is the winner: it has the {best_word} {label} ({value}, {lead} over {second}){tail}"


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
            "winner": key == found.winner_run_key,
            "leader": not found.winner_run_key and key in found.leaders,
            "dominated_by": next((d.by_run_key for d in found.dominated if d.run_key == key), ""),
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
        "winner": found.winner_run_key,
        "leaders": list(found.leaders),
        "pareto": pareto_sentence(found, metrics),
        "columns": [metrics.label(n) for n in names],
        "rows": rows,
    }


def _finds(found: pb.Verdict, metrics: MetricFormat, comparative: str) -> str:
    """Recall in a manager's words ("finds as much as"), any other measure by its label."""
    if found.metric == "recall":
        return {"same": "finds as much as", "more": "finds more than", "most": "finds the most"}[comparative]
    label = metrics.label(found.metric)
    return {"same": f"is as good on {label} as", "more": f"has a better {label} than", "most": f"has the best {label}"}[
        comparative
    ]


def recommendation(found: pb.Verdict, metrics: MetricFormat) -> str:
    """The managerial view's one sentence: which configuration to use and why, or that there
    is no clear winner and what separates the leaders (ADR 0080)."""
    if not found.leaders or not found.runner_up_run_key:
        return headline(found, metrics)
    label, mean = metrics.label(found.metric), means_of(found).get(found.metric, {})
    win = found.winner_run_key
    if not win:
        values = ", ".join(f"{k} {metrics.value(found.metric, mean[k].mean)}" for k in found.leaders if k in mean)
        apart = separates(found, metrics)
        if not apart:
            return (
                f"No clear winner: {_names(found.leaders)} are level on {label} ({values}), and on IoU and "
                "tokens sent too: either will do."
            )
        return (
            f"No clear winner: {_names(found.leaders)} are level on {label} ({values}); {apart}. "
            "Choose between them by what matters more to you."
        )
    if found.dominated:
        d = found.dominated[0]
        finds = _finds(found, metrics, "more" if found.metric in d.better_on else "same")
        both = f" ({label} {_pair(metrics, found.metric, mean, win, d.run_key)})" if d.run_key in mean else ""
        edges = [_edge(found, metrics, n, win, d.run_key) for n in d.better_on if n != found.metric]
        return f"Use {win}: it {_listed([f'{finds} {d.run_key}{both}', *edges])}."
    second = found.runner_up_run_key
    lead = (
        f"{label} {metrics.value(found.metric, mean[win].mean)} against "
        f"{metrics.value(found.metric, mean[second].mean)} for {second}"
        if win in mean and second in mean
        else label
    )
    costs = _costs(found, metrics)
    tail = f", though it {' and '.join(costs)}" if costs else ""
    return f"Use {win}: it {_finds(found, metrics, 'most')} ({lead}, a lead the 95% interval confirms){tail}."


def headline_numbers(found: pb.Verdict, metrics: MetricFormat) -> dict:
    """The recommendation's (or each leader's) deciding measure, tokens sent and IoU."""
    means = means_of(found)
    names = [n for n in dict.fromkeys((found.metric, TOKENS, IOU)) if n and n in means]
    runs = [found.winner_run_key] if found.winner_run_key else list(found.leaders)
    return {
        "columns": [metrics.label(n) for n in names],
        "rows": [
            {
                "run_key": key,
                "cells": [metrics.value(n, means[n][key].mean) if key in means[n] else "–" for n in names],
            }
            for key in runs
        ],
    }
