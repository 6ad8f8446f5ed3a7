"""What the evaluator's logic is given: its repository, its peers, its models."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from chunklab.embeddings.base import EmbeddingProvider
from services.evaluator.judging import answers, models
from services.evaluator.storage.repository import Repository


@dataclass
class RunnerDeps:
    repository: Repository
    peers: object  # peers.GrpcPeers or a fake with the same methods
    provider_for: Callable[[str], EmbeddingProvider]
    defaults: models.ModelDefaults
    default_embedding_model: str
    code_version: str
    judge_attempts: int = 3
    judge_backoff_s: float = 0.5
    sentence_cache: answers.SentenceEmbeddings = field(default_factory=answers.SentenceEmbeddings)
