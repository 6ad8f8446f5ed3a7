"""The interface every embedding model implements, and the helpers its providers share."""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np


class TokenEncoder(ABC):
    """A model's word pieces and their vectors before pooling: what late chunking reads
    (chunklab.embeddings.late, ADR 0129). Only local models whose passages are the mean
    of their word pieces give one."""

    # Word pieces one pass reads, the two special tokens included; the length of a row.
    max_tokens: int
    dimension: int

    @abstractmethod
    def tokenize(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        """The text's word-piece ids (no special tokens, never cut) and each one's
        [start, end) character offsets, as rows."""

    @abstractmethod
    def encode(self, passes: list[np.ndarray]) -> list[np.ndarray]:
        """For each pass of ids (at most max_tokens - 2), the last hidden state of
        [CLS] + ids + [SEP]: one float32 row per word piece, the special ones first and
        last; the mean of a pass's rows, made unit length, is the model's vector of its text."""


class EmbeddingProvider(ABC):
    name: str

    @property
    @abstractmethod
    def dimension(self) -> int:
        """Length of every vector."""

    def known_dimension(self) -> int | None:
        """The dimension if known without embedding anything (remote models learn it on the first call)."""
        return self.dimension

    @property
    def cache_namespace(self) -> str:
        """What identifies this model's vectors in a cache (the name, plus the endpoint for remote models)."""
        return self.name

    def token_encoder(self) -> TokenEncoder | None:
        """The model's word-piece vectors, when it gives them (None: it does not)."""
        return None

    @abstractmethod
    def embed_documents(self, texts: list[str]) -> np.ndarray:
        """Unit-length float32 rows, one per text (for e5: as passages)."""

    @abstractmethod
    def embed_query(self, text: str) -> np.ndarray:
        """A unit-length float32 vector for a search query."""

    def embed_documents_counted(self, texts: list[str]) -> tuple[np.ndarray, int]:
        """The rows of embed_documents and the tokens they cost.

        Local models cost nothing; their count is the cl100k_base count, so
        that usage reads the same whichever model ran. Remote providers
        return what the endpoint billed.
        """
        from chunklab.text import tokens

        vectors = self.embed_documents(texts)
        return vectors, tokens.count_total(texts)


def unit_rows(vectors: np.ndarray) -> np.ndarray:
    """float32 rows scaled to unit length (all-zero rows stay zero)."""
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return vectors / norms
