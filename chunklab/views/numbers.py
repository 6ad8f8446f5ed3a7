"""How every number ChunkLab shows is written (ADR 0085): counts, percentages, scores, sizes,
costs and durations read the same on each page of the UI, in the command line and in both
reports. Whole counts carry thousands separators ("1,077"); each measure has its fixed
decimals (a percentage 1, a score 3, a judge's score 2); a duration picks its unit by size
("850 ms", "12.3 s", "4 min 05 s", "1 h 02 min").

A plot draws the same numbers: `rounded` gives a plot's data at the decimals the tables
write, and `D3` the axis format of each kind, so a tooltip never reads "1270.42857143".
chunklab.views.metric_format formats the evaluator's catalogue measures with these."""

from __future__ import annotations

import math

# Decimals of each kind of number, as a value reads and as a plot's data is rounded.
PLACES = {"count": 0, "percent": 1, "score": 3, "judge": 2, "usd": 4}
# A plot axis's d3 format for the same kinds (values already in shown units).
D3 = {"count": ",.0f", "percent": ",.1f", "score": ",.3f", "judge": ",.2f", "usd": "$,.4f"}


def count(value: float) -> str:
    """A whole number of things, e.g. "1,077" (a mean of counts rounds to the nearest whole)."""
    return f"{_whole(value):,}"


def median(value: float) -> str:
    """The median of whole counts: whole ("1,077") or halfway between two ("11.5")."""
    return count(value) if value == int(value) else f"{value:,.1f}"


def signed_count(value: float) -> str:
    """A difference of counts, e.g. "+1,077" or "-12"."""
    return f"{_whole(value):+,}"


def counted(value: float, noun: str, nouns: str | None = None) -> str:
    """A count with its noun, "1 run", "1,077 tokens" ("s" added unless `nouns` is given)."""
    whole = _whole(value)
    return f"{whole:,} {noun if whole == 1 else nouns or noun + 's'}"


def percent(fraction: float, places: int = PLACES["percent"]) -> str:
    """A fraction as a percentage, e.g. 0.977 -> "97.7%"."""
    return f"{fraction * 100:,.{places}f}%"


def points(fraction: float) -> str:
    """A difference of two percentages in percentage points, e.g. 0.031 -> "+3.1 pts"."""
    return f"{fraction * 100:+,.{PLACES['percent']}f} pts"


def score(value: float) -> str:
    """A score between 0 and 1 (MRR, a similarity, a rerank score), e.g. "0.756"."""
    return f"{value:,.{PLACES['score']}f}"


def signed_score(value: float) -> str:
    return f"{value:+,.{PLACES['score']}f}"


def judge(value: float) -> str:
    """A judge's mean score on its 1-10 scale, e.g. "7.50"."""
    return f"{value:,.{PLACES['judge']}f}"


def signed_judge(value: float) -> str:
    return f"{value:+,.{PLACES['judge']}f}"


def usd(amount: float) -> str:
    """A cost in US dollars, e.g. "$0.0123"."""
    return f"${amount:,.{PLACES['usd']}f}"


def signed_usd(amount: float) -> str:
    return f"{amount:+,.{PLACES['usd']}f} USD"


def times(ratio: float) -> str:
    """How many times another's amount, e.g. "4.1×"."""
    return f"{ratio:,.1f}×"


def size(size_bytes: int) -> str:
    """Bytes as a person reads them: "812 B", "12.3 KiB", "45.6 MiB", "1.2 GiB"."""
    if size_bytes < 1024:
        return f"{size_bytes:,} B"
    for unit in ("KiB", "MiB", "GiB"):
        size_bytes /= 1024
        if size_bytes < 1024 or unit == "GiB":
            return f"{size_bytes:,.1f} {unit}"
    raise AssertionError("unreachable")


def duration(seconds: float) -> str:
    """A time taken: "850 ms" under a second, "12.3 s" under a minute, "4 min 05 s" under an
    hour, "1 h 02 min" beyond."""
    seconds = max(seconds, 0.0)
    if round(seconds * 1000) < 1000:
        return f"{round(seconds * 1000)} ms"
    if round(seconds, 1) < 60:
        return f"{seconds:.1f} s"
    whole = round(seconds)
    if whole < 3600:
        return f"{whole // 60} min {whole % 60:02d} s"
    minutes = round(seconds / 60)
    return f"{minutes // 60} h {minutes % 60:02d} min"


def milliseconds(ms: float) -> str:
    """A time measured in milliseconds (a latency), written as `duration` writes it."""
    return duration(ms / 1000)


def signed_duration(seconds: float) -> str:
    """A difference of two times, e.g. "+850 ms", "-1.2 s"."""
    return ("-" if seconds < 0 else "+") + duration(abs(seconds))


def rough_duration(seconds: float) -> str:
    """An estimate, as rough as it is: "about 40 s", "about 3 min", "about 1 h 20 min"."""
    if seconds < 59.5:
        return f"about {max(1, round(seconds))} s"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"about {minutes} min"
    return f"about {minutes // 60} h {minutes % 60} min" if minutes % 60 else f"about {minutes // 60} h"


def rounded(value: float, kind: str) -> float:
    """A plot's data point at the decimals its kind is written with (a tooltip prints it as is)."""
    places = PLACES[kind]
    return _whole(value) if places == 0 else round(value, places)


def _whole(value: float) -> int:
    # Half away from zero, as a person rounds (Python's round() would give 2 for 2.5).
    return int(math.copysign(math.floor(abs(value) + 0.5), value))


def questions_by_runs(done: int, total: int, runs: int) -> str:
    """How far an experiment is, counting questions and configurations apart (its total is
    questions × runs): "28 questions × 3 configurations" when every one is done, else
    "56 of 84 (28 questions × 3 configurations)"; one run, "14 of 28 questions"."""
    if runs <= 1 or total % runs:
        return counted(total, "question") if done == total else f"{count(done)} of {counted(total, 'question')}"
    grid = f"{counted(total // runs, 'question')} × {counted(runs, 'configuration')}"
    return grid if done == total else f"{count(done)} of {count(total)} ({grid})"
