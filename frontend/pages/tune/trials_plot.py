"""The study's trials as the page plots them while it runs (ADR 0116): recall against tokens
sent, each trial a point, the Pareto front of recall, IoU and tokens in its own colour and
the best so far marked. The trials come one by one in the progress events (each event names
the trial that just ended) and all at once from the stored study; the front is worked out
again from every trial so far, since a new trial can push an earlier one off it. No Gradio."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from chunklab import pareto
from chunklab.v1 import evaluator_pb2 as pb
from frontend.views.result_plots import plot_label

COLUMNS = ("configuration", "tokens sent", "recall (%)", "IoU (%)", "trial", "kind")
BEST, FRONT, OTHER, PRUNED = "best so far", "on the Pareto front", "beaten, or over the limits", "pruned or failed"
COLOURS = {BEST: "#16a34a", FRONT: "#2563eb", OTHER: "#9ca3af", PRUNED: "#f59e0b"}


@dataclass
class TrialLog:
    """The trials seen so far by run key, and the best one the evaluator named."""

    trials: dict[str, pb.StudyTrial] = field(default_factory=dict)
    best: str = ""

    def add_progress(self, study: pb.StudyProgress) -> None:
        if study.trial_run_key and study.HasField("trial"):
            self.trials[study.trial_run_key] = study.trial
        self.best = study.best_run_key or self.best

    def add_experiment(self, experiment: pb.Experiment) -> None:
        for run in experiment.runs:
            if run.HasField("trial"):
                self.trials[run.run_key] = run.trial
        self.best = experiment.study.best_run_key or self.best

    def front(self) -> set[str]:
        """The front of the finished trials that meet the objective's limits (as the evaluator's)."""
        eligible = [
            (key, (t.recall, t.iou, t.tokens_sent))
            for key, t in self.trials.items()
            if t.state == "complete" and t.feasible
        ]
        return set(pareto.front(eligible, (True, True, False)))

    def kind(self, key: str, front: set[str]) -> str:
        if key == self.best:
            return BEST
        if self.trials[key].state != "complete":
            return PRUNED
        return FRONT if key in front else OTHER

    def frame(self) -> pd.DataFrame:
        front = self.front()
        rows = [
            (
                plot_label(key),
                round(t.tokens_sent),
                round(t.recall * 100, 1),
                round(t.iou * 100, 1),
                t.number,
                self.kind(key, front),
            )
            for key, t in sorted(self.trials.items(), key=lambda item: item[1].number)
            if t.state in ("complete", "pruned")
        ]
        return pd.DataFrame(rows, columns=list(COLUMNS))
