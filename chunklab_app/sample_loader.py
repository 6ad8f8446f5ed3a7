"""The sample `make up` loads, so that every page shows a real result when it first opens.

Two documents shipped in samples/ (ADR 0063; chunklab_app.samples names them): the 2024 State
of the Union address (a US government work, public domain; 49 k characters) and the
project's own RAG field guide,
with 82 labelled questions (76 from the chroma-general benchmark, MIT licence, and 6 of
our own). Loading uploads both, processes them with every strategy that needs no LLM,
imports the question set and runs two retrieval-only experiments over a few strategies
(top 5 and top 2, so that Compare has a pair).

Every step is skipped when its result is already there (a document is deduplicated by
its content, a strategy that has an active index set is not processed again, the set and
the experiments are found by name), so a second `make up` adds nothing and is fast.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from chunklab import experiment_state
from chunklab.client import ChunkLab, experiment_outcome
from chunklab.rpc import tracing
from chunklab.v1 import common_pb2, evaluator_pb2
from chunklab_app.samples import DOCUMENTS, FIELD_GUIDE, QUESTION_SET_NAME, QUESTIONS  # noqa: F401 - FIELD_GUIDE, for the tests

# The experiments, by name, with the number of chunks each retrieves: the first is the
# sample's result; the second (the same runs sending fewer chunks) gives Compare a pair.
EXPERIMENTS = {"sample: strategies compared, top 5": 5, "sample: strategies compared, top 2": 2}
# The experiments' strategies: a few that differ in kind (windows, separators, meaning,
# small-to-big), so the plots and the verdict have something to separate.
EXPERIMENT_STRATEGIES = ("fixed_size", "recursive", "semantic", "parent_child")


@dataclass(frozen=True)
class LoadedSample:
    """What the sample load left in the stack (ids the pages and the tests look for)."""

    document_ids: dict[str, str]  # the file's stem -> document id
    question_set_id: str
    experiment_ids: list[str]  # in EXPERIMENTS' order
    finished: bool  # every experiment succeeded


def non_llm_strategies(client: ChunkLab) -> list[str]:
    """Every strategy the chunker offers that runs without an LLM endpoint, in its order."""
    return [info.name for info in client.list_strategies() if not info.requires_llm]


def upload_and_process(client: ChunkLab, strategies: Sequence[str], log: Callable[[str], None]) -> dict[str, str]:
    """Uploads each sample document (once) and processes it with each strategy that has
    no active index set for it yet; returns the documents' ids by file stem."""
    document_ids = {}
    for path in DOCUMENTS:
        with tracing.span("load sample document"):  # its upload and processing: one trace
            document_ids[path.stem] = upload_and_process_one(client, path, strategies, log)
    return document_ids


def upload_and_process_one(client: ChunkLab, path: Path, strategies: Sequence[str], log: Callable[[str], None]) -> str:
    document = client.upload_document(path, language="en").document
    missing = [name for name in strategies if client.indexed_set(document.document_id, name) is None]
    for number, name in enumerate(missing, start=1):
        log(f"processing {path.name} with {name} ({number}/{len(missing)})")
        result = client.process(document.document_id, [common_pb2.StrategySpec(name=name)])
        if result.strategies_failed:
            failed = "; ".join(f"{f.strategy}: {f.error}" for f in result.strategies_failed)
            raise RuntimeError(f"processing the sample {path.name} failed: {failed}")
    return document.document_id


def question_set(client: ChunkLab, document_ids: dict[str, str]) -> str:
    """The sample question set's id, imported (strictly: every excerpt exact) the first time."""
    for existing in client.list_question_sets():
        if existing.name == QUESTION_SET_NAME:
            return existing.question_set_id
    imported = client.import_question_set(
        QUESTIONS, name=QUESTION_SET_NAME, document_ids=document_ids, excerpt_check=evaluator_pb2.EXCERPT_CHECK_STRICT
    )
    return imported.question_set_id


def experiment(
    client: ChunkLab, name: str, top_k: int, question_set_id: str, strategies: Sequence[str], log: Callable[[str], None]
) -> evaluator_pb2.Experiment:
    """A sample experiment: found by name, resumed when an earlier start was stopped
    mid-run, else run now (retrieval only, so it needs no LLM)."""
    found = [e for e in client.list_experiments() if e.config.name == name]
    if found and found[0].state in experiment_state.ENDED:  # a partial one is kept: its failed runs say why
        return found[0]
    if found and experiment_state.resumable(found[0].state):
        log(f"resuming the sample experiment '{name}'")
        events = client.resume_experiment(found[0].experiment_id)
    elif found:  # pending or running: another start of the stack is on it
        return found[0]
    else:
        config = evaluator_pb2.ExperimentConfig(
            name=name,
            question_set_id=question_set_id,
            retrieval_only=True,
            strategies=[evaluator_pb2.StrategyGrid(strategy=strategy) for strategy in strategies],
            retrieval=common_pb2.RetrievalOptions(top_k=top_k),
        )
        log(f"running the sample experiment '{name}': {', '.join(strategies)}")
        events = client.run_experiment(config)
    outcome = experiment_outcome(events)
    if outcome.experiment is None:
        raise RuntimeError("the evaluator ended the sample experiment's stream without the experiment; see its log")
    return outcome.experiment


def load_sample(
    client: ChunkLab, strategies: Sequence[str] | None = None, log: Callable[[str], None] = lambda _line: None
) -> LoadedSample:
    """Loads the sample (each step once). `strategies`: those to process (default: every
    strategy without an LLM); the experiment runs those of EXPERIMENT_STRATEGIES among them.
    The experiment's strategies are processed first and the experiment run before the
    others are processed, so the pages have a finished result as early as possible."""
    available = non_llm_strategies(client)
    chosen = list(strategies) if strategies is not None else available
    unknown = [name for name in chosen if name not in available]
    if unknown:
        raise ValueError(f"the sample cannot use {', '.join(unknown)}: choose among {', '.join(available)}")
    compared = [name for name in EXPERIMENT_STRATEGIES if name in chosen] or chosen[:1]
    document_ids = upload_and_process(client, compared, log)
    set_id = question_set(client, document_ids)
    done = [experiment(client, name, top_k, set_id, compared, log) for name, top_k in EXPERIMENTS.items()]
    upload_and_process(client, [name for name in chosen if name not in compared], log)
    return LoadedSample(
        document_ids,
        set_id,
        [e.experiment_id for e in done],
        all(e.state == evaluator_pb2.EXPERIMENT_STATE_SUCCEEDED for e in done),
    )
