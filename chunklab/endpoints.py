"""Which outbound endpoints a request may name (ADR 0126).

A request may name an endpoint for a service to call: the chunker's LLM
(LLMChoice.base_url), the evaluator's answer, judge and generator models
(ModelEndpoint.base_url) and the retriever's reranker (RerankOptions.base_url).
Every service checks such a URL here, before any work or record is stored:

- it is an http:// or https:// URL with a host, no spaces and no user:password
  (a key travels as api_key, never in the URL);
- when CHUNKLAB_ALLOWED_ENDPOINTS is set (comma-separated hosts or host:port),
  its host is one of those, or the host of an endpoint the operator configured
  (CHUNKLAB_LLM_BASE_URL, CHUNKLAB_RERANK_URL, CHUNKLAB_EMBEDDING_BASE_URL).
  Unset, any host is allowed, loopback included (a local Ollama, a test's fake).

A URL the operator configured is never checked against the allow-list: the
operator chose it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import SplitResult, urlsplit

from chunklab.errors import InvalidArgument
from chunklab.rpc.limits import excerpt

ALLOWED_ENDPOINTS_VARIABLE = "CHUNKLAB_ALLOWED_ENDPOINTS"
_DEFAULT_PORTS = {"http": 80, "https": 443}
_NAME = re.compile(r"^[A-Za-z0-9._-]+$")
_V6 = re.compile(r"^[0-9A-Fa-f:.]+$")
_EXAMPLE = "e.g. http://127.0.0.1:11434/v1 or https://api.openai.com/v1"


@dataclass(frozen=True)
class Entry:
    """One allowed host; port None allows every port of it."""

    host: str
    port: int | None = None

    def allows(self, host: str, port: int) -> bool:
        return self.host == host and self.port in (None, port)

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.port is None else f"{host}:{self.port}"


def parse_entry(text: str) -> Entry:
    """`host`, `host:port`, an IPv6 address, `[v6]` or `[v6]:port`; ValueError saying what is wrong."""
    text = text.strip()
    if "://" in text or "/" in text:
        raise ValueError(f"{text!r} is a URL; name its host or host:port, e.g. api.openai.com or 127.0.0.1:11434")
    host, port = text, ""
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        port = rest.removeprefix(":")
        pattern = _V6
    elif text.count(":") == 1:
        host, port = text.split(":")
        pattern = _NAME
    else:
        pattern = _V6 if ":" in text else _NAME
    if not pattern.match(host):
        raise ValueError(f"{text!r} is not a host or host:port, e.g. api.openai.com or 127.0.0.1:11434")
    if port and not (port.isdigit() and 0 < int(port) <= 65535):
        raise ValueError(f"{text!r} has no valid port (1 to 65535)")
    return Entry(host.lower(), int(port) if port else None)


def parse_allowed(value: str) -> tuple[Entry, ...]:
    """The entries of CHUNKLAB_ALLOWED_ENDPOINTS (empty: no allow-list)."""
    return tuple(parse_entry(part) for part in value.split(",") if part.strip())


def _split(url: str, field: str) -> tuple[SplitResult, int]:
    """The URL's parts and port, or InvalidArgument naming the field and what to send instead."""
    shown = excerpt(url, 80)
    if any(c.isspace() or ord(c) < 32 for c in url):
        raise InvalidArgument(
            f"{field} value {shown!r} holds spaces or control characters; send the bare URL, {_EXAMPLE}"
        )
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise InvalidArgument(f"{field} value {shown!r} is not a URL with a valid host and port, {_EXAMPLE}") from None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS:
        raise InvalidArgument(
            f"{field} value {shown!r} is not an http:// or https:// URL: an endpoint is called over HTTP, {_EXAMPLE}"
        )
    if not parts.hostname:
        raise InvalidArgument(f"{field} value {shown!r} names no host, {_EXAMPLE}")
    if parts.username is not None or parts.password is not None:
        raise InvalidArgument(
            f"{field} holds a user name or password in the URL; send the key as the api_key field instead"
        )
    return parts, port or _DEFAULT_PORTS[scheme]


def check_url(url: str, field: str) -> None:
    """An http(s) URL with a host (or empty: the configured one); InvalidArgument otherwise.
    For checks that have no allow-list at hand (chunklab.retrieval's)."""
    if url:
        _split(url, field)


@dataclass(frozen=True)
class EndpointPolicy:
    """Which hosts a request may name: `allowed` empty means any host."""

    allowed: tuple[Entry, ...] = ()
    configured: tuple[Entry, ...] = ()

    @classmethod
    def of(cls, allowed: str, configured: Iterable[str] = ()) -> EndpointPolicy:
        """From CHUNKLAB_ALLOWED_ENDPOINTS's value and the URLs the operator configured."""
        hosts = []
        for url in configured:
            url = url.strip()
            if not url:
                continue
            try:
                parts = urlsplit(url)
                if parts.hostname:
                    hosts.append(Entry(parts.hostname.lower(), parts.port or _DEFAULT_PORTS.get(parts.scheme.lower())))
            except ValueError:
                continue  # a configured URL that is no URL fails where it is used, with its own message
        return cls(parse_allowed(allowed), tuple(hosts))

    @classmethod
    def from_settings(cls, settings) -> EndpointPolicy:
        return cls.of(
            settings.allowed_endpoints,
            (settings.llm_base_url, settings.rerank_url, settings.embedding_base_url),
        )

    def check(self, url: str, field: str) -> str:
        """The URL, stripped, once it may be called; InvalidArgument naming `field` otherwise.
        Empty stays empty (the configured endpoint)."""
        url = url.strip()
        if not url:
            return url
        parts, port = _split(url, field)
        if not self.allowed:
            return url
        host = parts.hostname.lower()
        if any(entry.allows(host, port) for entry in (*self.allowed, *self.configured)):
            return url
        allowed = ", ".join(str(e) for e in self.allowed)
        raise InvalidArgument(
            f"{field} names {Entry(host, port)}, which this server may not call: {ALLOWED_ENDPOINTS_VARIABLE} "
            f"allows {allowed} (and the endpoints it is configured with); name one of those, or ask the "
            "operator to add the host"
        )


# No allow-list: what a process without settings at hand (and every test that builds
# a service without one) checks against.
OPEN = EndpointPolicy()
