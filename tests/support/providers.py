"""Embedding providers for tests: cheap, deterministic, no model to load."""

from __future__ import annotations

import hashlib
import re

import numpy as np

from chunklab.embeddings.base import EmbeddingProvider


class HashedProvider(EmbeddingProvider):
    """A cheap deterministic model (hashed bag of words) that counts what it embeds."""

    name = "hashed-64"

    def __init__(self) -> None:
        self.texts_embedded = 0

    @property
    def dimension(self) -> int:
        return 64

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        self.texts_embedded += len(texts)
        out = np.zeros((len(texts), 64), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                out[i, int(hashlib.md5(word.encode()).hexdigest(), 16) % 64] += 1
            out[i, 0] += 1e-3
        return out / np.linalg.norm(out, axis=1, keepdims=True)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]
