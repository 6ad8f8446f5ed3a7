"""An experiment planned: its config checked, its grid expanded into runs, its
documents and models looked up. Nothing is processed, retrieved or asked."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from chunklab import retrieval
from chunklab.embeddings.base import EmbeddingProvider
from chunklab.errors import Cancelled, InvalidArgument
from chunklab.llm import ChatEndpoint
from chunklab.v1 import chunker_pb2, documents_pb2, evaluator_pb2
from services.evaluator.deps import RunnerDeps
from services.evaluator.experiments import holdout
from services.evaluator.experiments.grid import Cell, expand
from services.evaluator.judging import models


@dataclass
class Plan:
    """A validated experiment, ready to run."""

    config: evaluator_pb2.ExperimentConfig
    question_set: evaluator_pb2.QuestionSet
    cells: list[Cell]
    documents: list[str]
    answer: ChatEndpoint | None
    judge: ChatEndpoint | None
    provider: EmbeddingProvider
    # Each document's record (BASIC view): its name for progress, its hash for provenance.
    records: dict[str, documents_pb2.Document]
    # The chunker's strategies by name (the dry run reads how each chunks).
    infos: dict[str, chunker_pb2.StrategyInfo] = field(default_factory=dict)
    # The answer and judge models as the request named them, before they were resolved
    # (the dry run warns about one named without an endpoint).
    requested_answer: evaluator_pb2.ModelEndpoint = field(default_factory=evaluator_pb2.ModelEndpoint)
    requested_judge: evaluator_pb2.ModelEndpoint = field(default_factory=evaluator_pb2.ModelEndpoint)


def check_config(config: evaluator_pb2.ExperimentConfig) -> None:
    """The same checks as the retriever's (chunklab.retrieval), before anything runs."""
    if not config.question_set_id:
        raise InvalidArgument("name the question set to run (question_set_id)")
    retrieval.check_options(config.retrieval, needs_strategy=False)
    config.retrieval.top_k = retrieval.top_k(config.retrieval)
    holdout.check(config.validation)


def referenced_documents(question_set: evaluator_pb2.QuestionSet) -> list[str]:
    seen: dict[str, None] = {}
    for question in question_set.questions:
        for reference in question.references:
            seen.setdefault(reference.document_id, None)
    return list(seen)


class Planner:
    def __init__(self, deps: RunnerDeps) -> None:
        self._deps = deps

    def plan(self, config: evaluator_pb2.ExperimentConfig, cancelled: threading.Event | None = None) -> Plan:
        """Validates a config (nothing is processed, retrieved or asked); `cancelled`
        (the call ended) stops it between the documents it looks up."""
        config = _copy(config)
        check_config(config)
        self._deps.defaults.policy.check(config.retrieval.rerank.base_url, "retrieval.rerank.base_url")
        question_set = self._deps.repository.get_question_set(config.question_set_id)
        if not question_set.questions:
            raise InvalidArgument(f"question set {question_set.name!r} has no questions")
        options = config.retrieval
        window = options.window if options.HasField("window") else None
        infos = self._deps.peers.list_strategies()
        # A study's runs are the trials its search adds (services/evaluator/study), not a grid.
        cells = [] if config.HasField("study") else expand(list(config.strategies), infos, window)
        if config.HasField("study"):
            config.retrieval_only = True
        documents = list(options.filter.document_ids) or referenced_documents(question_set)
        if not documents:
            raise InvalidArgument(
                f"question set {question_set.name!r} has no reference excerpts, so it names no documents; "
                "list the documents to search in filter.document_ids"
            )
        records = self._records(documents, cancelled)
        provider = self._deps.provider_for(options.embedding_model or self._deps.default_embedding_model)
        options.embedding_model = provider.name
        requested = (_copy_endpoint(config.answer_model), _copy_endpoint(config.judge_model))
        answer, judge = self._endpoints(config)
        if not config.name and config.HasField("study"):
            config.name = f"study of {question_set.name}"
        if not config.name:
            config.name = f"{question_set.name}: {', '.join(dict.fromkeys(g.strategy for g in config.strategies))}"
        return Plan(
            config,
            question_set,
            cells,
            documents,
            answer,
            judge,
            provider,
            records,
            {i.name: i for i in infos},
            *requested,
        )

    def _records(self, documents: list[str], cancelled: threading.Event | None) -> dict[str, documents_pb2.Document]:
        records = {}
        for document_id in documents:
            if cancelled is not None and cancelled.is_set():
                raise Cancelled("the experiment was not planned: its call ended while its documents were looked up")
            records[document_id] = self._deps.peers.get_document(document_id, False)
        return records

    def _endpoints(self, config: evaluator_pb2.ExperimentConfig) -> tuple[ChatEndpoint | None, ChatEndpoint | None]:
        """The answer and judge models (None for extractive answers, no judge, or retrieval only);
        the config records them without their keys."""
        defaults = self._deps.defaults
        answer = models.resolve(config.answer_model, defaults, models.EXTRACTIVE, field="answer_model")
        judge = models.resolve(config.judge_model, defaults, models.NO_JUDGE, max_retries=0, field="judge_model")
        if config.retrieval_only:
            answer = judge = None
        config.answer_model.CopyFrom(models.public(answer, models.EXTRACTIVE))
        config.judge_model.CopyFrom(models.public(judge, models.NO_JUDGE))
        return answer, judge

    def with_keys(self, plan: Plan, keys: evaluator_pb2.ExperimentConfig) -> Plan:
        """The plan with API keys supplied again (they are never stored)."""
        plan.answer = models.resolve(
            _with_key(plan.config.answer_model, keys.answer_model.api_key),
            self._deps.defaults,
            models.EXTRACTIVE,
            field="answer_model",
        )
        plan.judge = models.resolve(
            _with_key(plan.config.judge_model, keys.judge_model.api_key),
            self._deps.defaults,
            models.NO_JUDGE,
            max_retries=0,
            field="judge_model",
        )
        if plan.config.retrieval_only:
            plan.answer = plan.judge = None
        return plan


def _copy(config: evaluator_pb2.ExperimentConfig) -> evaluator_pb2.ExperimentConfig:
    copy = evaluator_pb2.ExperimentConfig()
    copy.CopyFrom(config)
    return copy


def _copy_endpoint(endpoint: evaluator_pb2.ModelEndpoint) -> evaluator_pb2.ModelEndpoint:
    copy = evaluator_pb2.ModelEndpoint()
    copy.CopyFrom(endpoint)
    return copy


def _with_key(endpoint: evaluator_pb2.ModelEndpoint, key: str) -> evaluator_pb2.ModelEndpoint:
    copy = evaluator_pb2.ModelEndpoint()
    copy.CopyFrom(endpoint)
    if key:
        copy.api_key = key
    return copy
