"""What the command line prints: a progress bar on stderr, and an
experiment's summary as rows (for --json) or as a table."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable

from chunklab import experiment_state
from chunklab.client import ExperimentOutcome, experiment_outcome
from chunklab.v1 import evaluator_pb2
from chunklab.views import numbers, per_document_view
from chunklab.views.metric_format import MetricFormat
from chunklab.views.verdict_view import verdict_view
from chunklab.views.winner_view import winner_view


class Progress:
    """A one-line progress bar on stderr. When stderr is not a terminal, plain lines: one
    for each new step (e.g. a document being processed), else one when `done` moves, at
    most every 2 s, and at the end."""

    def __init__(self, stream=sys.stderr, width: int = 30) -> None:
        self._stream = stream
        self._width = width
        self._tty = stream.isatty()
        self._last_line = 0.0
        self._last_done = -1

    def update(self, done: int, total: int, message: str, new_step: bool = False, counted: bool = True) -> None:
        """`counted` False: the message says how far (e.g. a time budget), so no "done/total"."""
        total = max(total, 1)
        filled = int(self._width * min(done, total) / total)
        bar = "#" * filled + "." * (self._width - filled)
        line = f"[{bar}] {numbers.count(done)}/{numbers.count(total)} {message}" if counted else f"[{bar}] {message}"
        if self._tty:
            columns = 120
            self._stream.write("\r" + line[:columns].ljust(columns))
            self._stream.flush()
        elif new_step or (done != self._last_done and (time.monotonic() - self._last_line > 2 or done == total)):
            self._last_line, self._last_done = time.monotonic(), done
            self._stream.write(line[:200] + "\n")
            self._stream.flush()

    def message(self, text: str) -> None:
        self._stream.write(("\r\n" if self._tty else "") + text + "\n")
        self._stream.flush()

    def close(self) -> None:
        if self._tty:
            self._stream.write("\n")
            self._stream.flush()


def follow(events: Iterable[evaluator_pb2.ExperimentEvent], progress: Progress) -> ExperimentOutcome:
    """A RunExperiment stream followed to its end, its progress drawn as a bar over the
    questions; each document a run starts processing is a step of its own (a line of its
    own in a log), named by its file name."""
    processing = ("", "", -1)

    def show(p: evaluator_pb2.ExperimentProgress) -> None:
        nonlocal processing
        step = (p.run_key, p.document_name, p.documents_done)
        new_step = bool(p.document_name) and step != processing
        processing = step
        progress.update(p.questions_done, p.questions_total, p.message, new_step=new_step)

    try:
        return experiment_outcome(events, show)
    finally:
        progress.close()


# The groups each output shows, every measure of each (the catalogue's order and labels).
ROW_GROUPS = ("labelled", "hits", "rank", "judge")  # --json: every measure, None where it was not taken
TABLE_GROUPS = ("labelled", "efficiency")  # the table; the rank measures get a table of their own


def summary_rows(experiment: evaluator_pb2.Experiment, metrics: MetricFormat, per_question: bool = False) -> list[dict]:
    """One row per run; a measure that was not taken (recall@10 of a top-5 run) is None.
    Each row has the run's figures per document and per collection, and (per_question,
    from an experiment read with its results) each question's."""
    rows = []
    for run in experiment.runs:
        m = run.mean_metrics
        row = {"run": run.run_key, "questions": run.questions_done, "error": run.error}
        row.update(
            {
                name: metrics.of(name, m, run.mean_judge)
                for name in metrics.groups(*ROW_GROUPS)
                if m.questions_labelled or metrics.info(name).group == "judge"
            }
        )  # no references: no key
        row.update(
            tokens_per_question=m.tokens_sent,
            chunks_per_question=m.chunks_sent,
            llm_calls=run.usage.llm_calls,
            cost_usd=run.usage.estimated_cost_usd,
            per_document=per_document_view.document_rows(run),
            per_collection=per_document_view.collection_rows(run),
        )
        if per_question:
            row["per_question"] = per_document_view.question_rows(experiment, run.run_key)
        rows.append(row)
    return rows


def _print_rank_table(experiment: evaluator_pb2.Experiment, metrics: MetricFormat, out) -> None:
    """The rank measures some run has, as a table of their own under the first."""
    ranked = metrics.measured_in("rank", (run.mean_metrics for run in experiment.runs if not run.error))
    if not ranked:
        return
    widths = [max(8, len(metrics.label(name))) for name in ranked]
    print(f"\n{'run':<48} " + " ".join(f"{metrics.label(n):>{w}}" for n, w in zip(ranked, widths)), file=out)
    for run in experiment.runs:
        if not run.error:
            cells = " ".join(f"{metrics.cell(n, run.mean_metrics):>{w}}" for n, w in zip(ranked, widths))
            print(f"{run.run_key:<48} {cells}", file=out)


def print_table(experiment: evaluator_pb2.Experiment, metrics: MetricFormat, out=sys.stdout) -> None:
    print(
        f"experiment {experiment.experiment_id}: {experiment_state.name(experiment.state, '?')}"
        + (f" ({experiment.error})" if experiment.error else ""),
        file=out,
    )
    names = metrics.groups(*TABLE_GROUPS)
    widths = [max(8, len(metrics.label(name))) for name in names]
    print(f"{'run':<48} " + " ".join(f"{metrics.label(n):>{w}}" for n, w in zip(names, widths)), file=out)
    for run in experiment.runs:
        if run.error:
            print(f"{run.run_key:<48} not measured: {run.error}", file=out)
            continue
        values = [metrics.of(n, run.mean_metrics, run.mean_judge) for n in names]
        cells = " ".join(f"{'-' if v is None else metrics.value(n, v):>{w}}" for n, v, w in zip(names, values, widths))
        print(f"{run.run_key:<48} {cells}", file=out)
        if run.questions_failed:
            print(f"{'':<48} {experiment_state.failure(run)}", file=out)
    _print_rank_table(experiment, metrics, out)
    verdict = verdict_view(experiment.verdict, metrics)
    if verdict is not None:
        print(f"\n{verdict['text']}" + (f" {verdict['pareto']}" if verdict["pareto"] else ""), file=out)
    for sentence in per_document_view.chosen_shortfalls(experiment):  # where it fails (ADR 0119)
        print(sentence, file=out)
    winner = winner_view(experiment.validation, metrics)
    if winner is not None:
        print(f"\n{winner['text']}", file=out)
        if winner["rows"]:
            print(
                f"{'measure of the winner':<28} {'where chosen':>14} {'where confirmed (95% interval)':>36} "
                f"{'every question':>16}",
                file=out,
            )
        for row in winner["rows"]:
            print(f"{row['metric']:<28} {row['selection']:>14} {row['confirmation']:>36} {row['all']:>16}", file=out)
