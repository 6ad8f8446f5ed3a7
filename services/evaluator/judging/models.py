"""Which chat models answer and judge: the request's endpoint, else the
configured one, else none (extractive answers; judges not measured)."""

from __future__ import annotations

from dataclasses import dataclass

from chunklab.endpoints import OPEN, EndpointPolicy
from chunklab.llm import ChatEndpoint
from chunklab.settings import Settings
from chunklab.v1 import evaluator_pb2

EXTRACTIVE = "extractive"
NO_JUDGE = "none"


@dataclass(frozen=True)
class ModelDefaults:
    base_url: str
    api_key: str
    model: str
    timeout_s: float
    max_retries: int
    # The hosts a request may name (CHUNKLAB_ALLOWED_ENDPOINTS, ADR 0126).
    policy: EndpointPolicy = OPEN
    # response_format for JSON replies: "auto" or "off" (CHUNKLAB_LLM_STRUCTURED_OUTPUT, ADR 0136).
    structured_output: str = "auto"

    @classmethod
    def from_settings(cls, settings: Settings) -> ModelDefaults:
        return cls(
            settings.llm_base_url,
            settings.llm_api_key,
            settings.llm_model,
            settings.llm_timeout_s,
            settings.llm_max_retries,
            EndpointPolicy.from_settings(settings),
            settings.llm_structured_output,
        )


def resolve(
    requested: evaluator_pb2.ModelEndpoint,
    defaults: ModelDefaults,
    off_word: str,
    max_retries: int | None = None,
    *,
    field: str,
) -> ChatEndpoint | None:
    """The endpoint to call, or None when there is none (or it is switched off);
    InvalidArgument naming `field` (e.g. "judge_model") when the request names a
    base URL this server may not call (chunklab.endpoints).

    A request that names only a model uses the configured base URL and key; one
    with another base URL uses its own key (the configured key never travels
    to an endpoint it was not made for).
    """
    if requested.model.strip().lower() == off_word:
        return None
    retries = defaults.max_retries if max_retries is None else max_retries
    base_url = defaults.policy.check(requested.base_url, f"{field}.base_url")
    if base_url:
        key = requested.api_key or (defaults.api_key if base_url == defaults.base_url else "")
        return ChatEndpoint(
            base_url, key, requested.model or defaults.model, defaults.timeout_s, retries, defaults.structured_output
        )
    if defaults.base_url:
        return ChatEndpoint(
            defaults.base_url,
            requested.api_key or defaults.api_key,
            requested.model or defaults.model,
            defaults.timeout_s,
            retries,
            defaults.structured_output,
        )
    return None


def describe(endpoint: ChatEndpoint | None, when_none: str) -> str:
    return endpoint.describe() if endpoint is not None else when_none


def public(endpoint: ChatEndpoint | None, off_word: str) -> evaluator_pb2.ModelEndpoint:
    """The endpoint as it may be stored and shown: without its key; `off_word`
    as the model when there is none, so that a resumed run does the same."""
    if endpoint is None:
        return evaluator_pb2.ModelEndpoint(model=off_word)
    return evaluator_pb2.ModelEndpoint(base_url=endpoint.base_url, model=endpoint.model)
