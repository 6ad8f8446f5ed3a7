"""How long an experiment will take, for its dry run: measured, not guessed.

The evaluator keeps every finished run's timings (processing seconds, and per
question the mean milliseconds of retrieval, answer and judging). A new
experiment's time is the median of those, scaled to its size: per run its
documents processed (unless an index set is reused) plus its questions asked,
answered and judged as the plan says. With no finished run yet, there is
nothing to measure by, and the estimate says so rather than invent a speed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from statistics import median

from chunklab.v1 import evaluator_pb2

PAST_EXPERIMENTS = 50  # the newest finished experiments the speeds are read from


@dataclass(frozen=True)
class Speeds:
    """Medians over finished runs: seconds to process one document with a run's configuration,
    and milliseconds per question to retrieve, to answer (runs that answered with an LLM or
    extractively) and to judge (runs that were judged)."""

    process_s_per_document: float | None
    retrieve_ms: float | None
    answer_ms: float | None
    judge_ms: float | None

    @classmethod
    def of(cls, experiments: Iterable[evaluator_pb2.Experiment]) -> Speeds:
        process, retrieve, answer, judge = [], [], [], []
        for experiment in experiments:
            documents = max(1, len(experiment.provenance.document_hashes))
            for run in experiment.runs:
                if not run.questions_done:
                    continue
                if not run.index_reused and run.processing_seconds > 0:
                    process.append(run.processing_seconds / documents)
                m = run.mean_metrics
                retrieve.append(m.retrieve_ms)
                if m.answer_ms > 0:
                    answer.append(m.answer_ms)
                if m.judge_ms > 0:
                    judge.append(m.judge_ms)
        pick = lambda values: median(values) if values else None  # noqa: E731
        return cls(pick(process), pick(retrieve), pick(answer), pick(judge))

    def seconds(self, runs: int, documents: int, questions: int, answered: bool, judged: bool) -> float | None:
        """The estimate for `runs` runs over `documents` and `questions`; None without a finished run."""
        if self.retrieve_ms is None:
            return None
        per_question = self.retrieve_ms + (self.answer_ms or 0.0) * answered + (self.judge_ms or 0.0) * judged
        processing = (self.process_s_per_document or 0.0) * documents
        return runs * (processing + questions * per_question / 1000)


def finished_experiments(repository) -> list[evaluator_pb2.Experiment]:
    experiments, _ = repository.list_experiments(PAST_EXPERIMENTS, "")
    return [e for e in experiments if e.state == evaluator_pb2.EXPERIMENT_STATE_SUCCEEDED]
