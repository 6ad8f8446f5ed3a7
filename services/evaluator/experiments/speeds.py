"""This machine's speeds, measured, for the dry run's time (ADR 0088).

Two sources, the better first:
- the evaluator's finished runs: each records the characters it processed with the
  seconds the chunker took (per strategy), and the wall seconds its questions took
  (per mode: retrieval only, extractive answers, LLM answers; judged or not);
- a calibration, once per process and embedding model: the model embeds a fixed text
  and a few questions here. Without an LLM, embedding is what processing and asking
  cost most; a strategy no run has measured yet is estimated from it, scaled by how far
  the measured strategies were from their own calibrated estimate.
Nothing here guesses a speed: what is neither measured nor calibrated is unknown (None).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from statistics import median

from chunklab.embeddings.base import EmbeddingProvider
from chunklab.v1 import common_pb2, evaluator_pb2

# The calibration text: passages of about a chunk each, of ordinary words, the same every time.
_WORDS = [
    "the",
    "retrieval",
    "system",
    "splits",
    "each",
    "document",
    "into",
    "chunks",
    "and",
    "embeds",
    "them",
    "so",
    "that",
    "a",
    "question",
    "finds",
    "the",
    "passages",
    "that",
    "answer",
    "it",
    "while",
    "the",
    "index",
    "keeps",
    "every",
    "vector",
    "beside",
    "its",
    "text",
    "and",
    "its",
    "offsets",
    "in",
    "the",
    "source",
]
CALIBRATION_PASSAGES = 24
CALIBRATION_QUERIES = 5


def calibration_passages() -> list[str]:
    """CALIBRATION_PASSAGES passages of about 700 characters, each different."""
    out = []
    for number in range(CALIBRATION_PASSAGES):
        words = [_WORDS[(number * 7 + i * 3) % len(_WORDS)] for i in range(120)]
        out.append(f"Passage {number}. " + " ".join(words) + ".")
    return out


@dataclass(frozen=True)
class Calibration:
    """Seconds to embed one character of documents, and one question, with one model here."""

    embed_s_per_char: float
    query_s: float


_calibrations: dict[str, Calibration] = {}
_calibrating = threading.Lock()


def calibrate(provider: EmbeddingProvider) -> Calibration:
    """The model's calibration, measured the first time it is asked for in this process."""
    with _calibrating:
        known = _calibrations.get(provider.name)
        if known is not None:
            return known
        provider.embed_documents(["warm up"])  # loads the model: not part of the speed
        passages = calibration_passages()
        started = time.perf_counter()
        provider.embed_documents(passages)
        per_char = (time.perf_counter() - started) / sum(len(p) for p in passages)
        timings = []
        for number in range(CALIBRATION_QUERIES):
            started = time.perf_counter()
            provider.embed_query(f"what does passage {number} say about the index?")
            timings.append(time.perf_counter() - started)
        measured = Calibration(per_char, median(timings))
        _calibrations[provider.name] = measured
        return measured


def mode(config: evaluator_pb2.ExperimentConfig) -> tuple[str, bool]:
    """How an experiment asks its questions: ("retrieval" | "extractive" | "llm", judged)."""
    if config.retrieval_only:
        return "retrieval", False
    answers = "extractive" if config.answer_model.model.strip().lower() == "extractive" else "llm"
    return answers, config.judge_model.model.strip().lower() not in ("none", "")


def _pick(values: list[float]) -> float | None:
    return median(values) if values else None


@dataclass(frozen=True)
class Measured:
    """Medians over finished runs: processing seconds per character by strategy, seconds per
    question by mode, and the older per-question parts (retrieve, answer, judge) in seconds."""

    process_s_per_char: dict[str, float] = field(default_factory=dict)
    # Every timed processing: (the run's strategy and knobs, its seconds per character).
    processed: list[tuple[common_pb2.StrategySpec, float]] = field(default_factory=list)
    question_s: dict[tuple[str, bool], float] = field(default_factory=dict)
    retrieve_s: float | None = None
    answer_s: float | None = None
    judge_s: float | None = None

    @classmethod
    def of(cls, experiments: Iterable[evaluator_pb2.Experiment]) -> Measured:
        process: dict[str, list[float]] = {}
        processed = []
        asking: dict[tuple[str, bool], list[float]] = {}
        retrieve, answer, judge = [], [], []
        for experiment in experiments:
            for run in experiment.runs:
                if run.characters_processed > 0 and run.processing_seconds > 0:
                    per_char = run.processing_seconds / run.characters_processed
                    process.setdefault(run.spec.name, []).append(per_char)
                    processed.append((run.spec, per_char))
                if not run.questions_done:
                    continue
                if run.asking_seconds > 0:
                    asking.setdefault(mode(experiment.config), []).append(run.asking_seconds / run.questions_done)
                m = run.mean_metrics
                retrieve.append(m.retrieve_ms / 1e3)
                if m.answer_ms > 0:
                    answer.append(m.answer_ms / 1e3)
                if m.judge_ms > 0:
                    judge.append(m.judge_ms / 1e3)
        return cls(
            {name: median(values) for name, values in process.items()},
            processed,
            {key: median(values) for key, values in asking.items()},
            _pick(retrieve),
            _pick(answer),
            _pick(judge),
        )
