"""One typed settings object for every process, read from CHUNKLAB_* variables.

Each process builds it once at start-up with `load_settings()`, which turns a
bad value into a message that names the variable and what it accepts.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, EnvSettingsSource, SettingsConfigDict
from pydantic_settings.sources.utils import parse_env_vars

from chunklab import endpoints
from chunklab.embeddings import DEFAULT_MODEL
from chunklab.rpc import replicas

# Seconds a SQLite write waits for another writer's lock (chunklab.db.sessions).
DB_BUSY_TIMEOUT_S = 10.0
# A token travels as an HTTP/2 header value: printable ASCII, no spaces.
_TOKEN = re.compile(r"[\x21-\x7e]{16,}")


# The windows ChunkLab comes with, for collections a team typically keeps (the Freshness
# page marks them as presets, so a user knows they did not create them).
PRESET_FRESHNESS_WINDOWS = {"news": 7, "chat": 7, "hr": 90, "finance": 90, "policies": 0, "default": 0}


def _check_address(value: str) -> str:
    """host:port, or (a peer's replicas, ADR 0065) a comma-separated list of ip:port."""
    for entry in replicas.addresses(value) or [value]:
        host, sep, port = entry.rpartition(":")
        if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
            raise ValueError(f"expected host:port, e.g. 127.0.0.1:50051, got {value!r}")
    replicas.check_list(value)
    return value


# Every setting is read from this prefix and its field's name in capitals (variable()).
ENV_PREFIX = "CHUNKLAB_"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="ignore")

    data_dir: Path = Field(Path(".chunklab"), description="Folder for databases, the index and caches.")

    # Each service listens on its own address; peers dial the same address.
    # Port 0 lets the server pick a free port (tests); it prints the one it got.
    # A peer's address may name its replicas (ADR 0065): one name that resolves
    # to every replica, or a list 10.0.0.5:50052,10.0.0.6:50052; calls go round robin.
    ingest_address: str = "127.0.0.1:50051"
    chunker_address: str = "127.0.0.1:50052"
    retriever_address: str = "127.0.0.1:50053"
    evaluator_address: str = "127.0.0.1:50054"
    ui_host: str = "127.0.0.1"
    # False when the stack was started without the sample (`chunklab_app.stack --no-sample`): the Query page then
    # says so instead of waiting for it.
    sample: bool = True
    ui_port: int = Field(7860, ge=0, le=65535)

    database_url: str = Field("", description="SQLAlchemy URL; empty means SQLite in data_dir.")
    # Seconds a write to a SQLite file waits while another connection holds it
    # locked; past it the call fails UNAVAILABLE (retryable) and writes nothing.
    db_busy_timeout_s: float = Field(DB_BUSY_TIMEOUT_S, gt=0, le=600)
    # The stack's embedding model; unset or empty: chunklab.embeddings.DEFAULT_MODEL (ADR 0074).
    embedding_model: str = DEFAULT_MODEL
    # The ONNX export of the bundled model (chunklab.embeddings.onnx_export, ADR 0062); empty
    # means the Python environment's share/chunklab/onnx.
    onnx_dir: str = ""
    max_upload_mb: float = Field(50.0, gt=0)
    # Seconds a client waits for a peer before giving up (per call).
    rpc_timeout_s: float = Field(30.0, gt=0)
    # Seconds a long call (processing a whole document) may take.
    long_rpc_timeout_s: float = Field(3600.0, gt=0)
    grpc_workers: int = Field(8, ge=1, le=256)
    # Bytes of a report in one GetReport data message: at most the contract's 1 MiB (tests
    # make it small to see a report arrive in several pieces).
    report_piece_bytes: int = Field(1024 * 1024, ge=1024, le=1024 * 1024)

    # An OpenAI-compatible chat endpoint (OpenAI, Ollama, vLLM ...) for the
    # contextual strategies, answers and judges. Empty base URL: none
    # configured (contextual strategies fail with that reason; answers are
    # extractive; judges are not measured).
    llm_base_url: str = ""
    llm_api_key: str = ""
    llm_model: str = "gpt-4o-mini"
    llm_timeout_s: float = Field(60.0, gt=0)
    llm_max_retries: int = Field(2, ge=0, le=10)
    llm_max_concurrency: int = Field(4, ge=1, le=64)
    # JSON replies (judges, question generation, LLM reranking) asked for through
    # response_format: "auto" where the endpoint takes it (falling back where it
    # refuses, ADR 0136), "off" never (the prompt alone, then parse and retry).
    llm_structured_output: Literal["auto", "off"] = "auto"
    # `make up` with CHUNKLAB_LLM_LOCAL=1 starts the local llama.cpp server (SmolLM2,
    # chunklab_app.local_llm, ADR 0135) on this port and points the LLM settings at it.
    llm_local: bool = False
    llm_local_port: int = Field(8088, ge=1, le=65535)

    # Reranking (a retrieval option, off unless a query asks for it; ADR 0055):
    # the defaults a query's RerankOptions leaves empty. An HTTP rerank endpoint
    # (Cohere/Jina shape or TEI's /rerank) with its key, which is sent to this
    # URL only; the model it is asked for; a sentence-transformers CrossEncoder
    # folder on this machine; and how long one rerank call may take.
    rerank_url: str = ""
    rerank_api_key: str = ""
    rerank_model: str = ""
    rerank_cross_encoder: str = ""
    rerank_timeout_s: float = Field(30.0, gt=0, le=600)

    # An OpenAI-compatible embeddings endpoint, offered as the embedding
    # model "openai:<model>" when a base URL is set.
    embedding_base_url: str = ""
    embedding_api_key: str = ""
    # The hosts a request may name as an endpoint to call (an LLM, answer, judge or generator
    # model, a reranker; ADR 0126): comma-separated hosts or host:port, e.g.
    # "api.openai.com,127.0.0.1:11434". Empty: any host. Set, every other host is refused with
    # INVALID_ARGUMENT, except those of the endpoints configured above (LLM, rerank, embeddings).
    # Whatever it holds, a request's endpoint must be an http:// or https:// URL with a host.
    allowed_endpoints: str = ""
    # Megabytes of document embeddings the chunker keeps on disk (0 = no limit);
    # past it, those used longest ago go first.
    embedding_cache_max_mb: float = Field(2048.0, ge=0)

    # Retriever: a Qdrant server (empty: embedded Qdrant Edge in data_dir).
    qdrant_url: str = ""
    qdrant_api_key: str = ""
    # Copies of each shard the retriever asks a Qdrant cluster for when it creates
    # a collection (1: no copy; a three-node cluster takes 2 or 3; ADR 0065).
    qdrant_replication_factor: int = Field(1, ge=1, le=16)
    # Freshness window per collection in days (0 = unlimited), as JSON.
    freshness_windows: dict[str, int] = Field(default_factory=lambda: dict(PRESET_FRESHNESS_WINDOWS))
    # Seconds between automatic sweeps of expired chunks (0 = never); each
    # sweep also applies the index sets' retention (ADR 0038).
    sweep_interval_s: float = Field(3600.0, ge=0)
    # Index sets that are neither active nor pinned are dropped after this
    # many days unused, and the least recently used first while they hold
    # more than set_budget_mb megabytes.
    set_retention_days: float = Field(30.0, gt=0)
    set_budget_mb: float = Field(2048.0, ge=0)
    # Embedded index: build an HNSW graph (in another process) over a shard of at
    # least this many points (0 = never: exact search only), once no write has
    # come in for hnsw_idle_s seconds.
    hnsw_min_points: int = Field(10_000, ge=0)
    hnsw_idle_s: float = Field(30.0, ge=0)
    shutdown_grace_s: float = Field(5.0, ge=0)

    # Bulk loads go through a message broker (ADR 0037): Redis streams at this
    # URL (redis://host:6379/0), or, empty, an embedded queue in data_dir.
    broker_url: str = ""
    # Threads of each chunker that take bulk-load jobs (0: this replica takes none).
    bulk_workers: int = Field(1, ge=0, le=64)

    # Replicas (ADR 0065). This process's name in replies' `chunklab-replica`
    # metadata, in leases and in logs (empty: host:pid). An experiment is leased
    # to the evaluator replica running it for this many seconds, renewed while it
    # runs: another replica may resume it only once the lease has run out.
    replica_name: str = ""
    experiment_lease_s: float = Field(30.0, ge=1, le=3600)

    # Authentication and TLS (ADR 0048), both off by default. A shared token:
    # every RPC but health and reflection must carry `authorization: Bearer
    # <token>`, every client sends it, and the UI asks for it as the password.
    auth_token: str = ""
    # PEM files. tls_cert and tls_key (together) make every server speak TLS;
    # clients speak TLS when tls_ca or tls_cert is set, trusting tls_ca (empty:
    # the system's roots). The certificate names the hosts clients dial.
    tls_cert: str = ""
    tls_key: str = ""
    tls_ca: str = ""

    # Tracing (ADR 0066) under OpenTelemetry's own variable names: spans go over
    # OTLP/gRPC to this collector URL (http://host:4317, https:// for TLS); empty,
    # or OTEL_SDK_DISABLED=true, means off. The SDK reads its other OTEL_*
    # variables itself (sampler, batch delay, headers, certificate, timeout).
    otlp_endpoint: str = Field("", validation_alias=AliasChoices("OTEL_EXPORTER_OTLP_ENDPOINT", "otlp_endpoint"))
    otlp_protocol: str = Field("grpc", validation_alias=AliasChoices("OTEL_EXPORTER_OTLP_PROTOCOL", "otlp_protocol"))
    otel_sdk_disabled: bool = Field(False, validation_alias=AliasChoices("OTEL_SDK_DISABLED", "otel_sdk_disabled"))

    @field_validator("ingest_address", "chunker_address", "retriever_address", "evaluator_address")
    @classmethod
    def _address(cls, value: str) -> str:
        return _check_address(value)

    @field_validator("embedding_model")
    @classmethod
    def _embedding_model(cls, value: str) -> str:
        return value.strip() or DEFAULT_MODEL

    @field_validator("broker_url")
    @classmethod
    def _broker(cls, value: str) -> str:
        value = value.strip()
        if value and not value.startswith(("redis://", "rediss://", "unix://")):
            raise ValueError(f"expected a redis:// URL (or nothing, for the embedded queue), got {value!r}")
        return value

    @field_validator("rerank_url")
    @classmethod
    def _rerank_url(cls, value: str) -> str:
        value = value.strip()
        if value and not value.lower().startswith(("http://", "https://")):
            raise ValueError(f"expected the rerank endpoint's http:// or https:// URL, got {value!r}")
        return value

    @field_validator("allowed_endpoints")
    @classmethod
    def _allowed_endpoints(cls, value: str) -> str:
        endpoints.parse_allowed(value)  # ValueError naming the entry that is wrong
        return value.strip()

    @field_validator("otlp_endpoint")
    @classmethod
    def _otlp_endpoint(cls, value: str) -> str:
        value = value.strip()
        scheme, sep, rest = value.partition("://")
        if value and not (sep and scheme.lower() in ("http", "https") and rest.strip("/")):
            raise ValueError(
                f"expected the OTLP collector's gRPC URL, e.g. http://127.0.0.1:4317 (https:// for TLS), got {value!r}"
            )
        return value

    @field_validator("otlp_protocol")
    @classmethod
    def _otlp_protocol(cls, value: str) -> str:
        value = value.strip().lower() or "grpc"
        if value != "grpc":
            raise ValueError(
                f"ChunkLab exports traces over OTLP/gRPC only, got {value!r}: set it to grpc (or unset "
                "it) and point OTEL_EXPORTER_OTLP_ENDPOINT at the collector's gRPC port (4317)"
            )
        return value

    @field_validator("auth_token")
    @classmethod
    def _token(cls, value: str) -> str:
        value = value.strip()
        if value and not _TOKEN.fullmatch(value):
            raise ValueError(
                "expected at least 16 printable ASCII characters without spaces, e.g. from "
                "`python -c 'import secrets; print(secrets.token_urlsafe(32))'`"
            )
        return value

    @field_validator("tls_cert", "tls_key", "tls_ca")
    @classmethod
    def _pem_file(cls, value: str) -> str:
        value = value.strip()
        if value and not Path(value).is_file():
            raise ValueError(f"expected a PEM file, but there is no file at {value!r}")
        return value

    @model_validator(mode="after")
    def _cert_with_key(self) -> Settings:
        if bool(self.tls_cert) != bool(self.tls_key):
            given, missing = ("CERT", "KEY") if self.tls_cert else ("KEY", "CERT")
            raise ValueError(f"CHUNKLAB_TLS_{given} is set but CHUNKLAB_TLS_{missing} is not: TLS needs both")
        return self

    @property
    def tracing(self) -> bool:
        """Whether this process exports spans (chunklab.rpc.tracing)."""
        return bool(self.otlp_endpoint) and not self.otel_sdk_disabled

    @property
    def tls(self) -> bool:
        """Whether clients dial TLS (a server speaks it when it has tls_cert and tls_key)."""
        return bool(self.tls_ca or self.tls_cert)

    def database_url_for(self, name: str) -> str:
        """The service's database: database_url if set, else SQLite in data_dir."""
        if self.database_url:
            return self.database_url
        return f"sqlite:///{(self.data_dir / f'{name}.sqlite3').resolve()}"


def settings_from(environ: Mapping[str, str]) -> Settings:
    """The settings a process started with this environment reads, e.g. the
    launcher's view of its children (its own environment plus theirs)."""

    class _Environ(EnvSettingsSource):
        def _load_env_vars(self):
            return parse_env_vars(environ, self.case_sensitive, self.env_ignore_empty, self.env_parse_none_str)

    return Settings(**_Environ(Settings)())


def variable(field: str) -> str:
    """The environment variable that sets a field of Settings (CHUNKLAB_AUTH_TOKEN for
    auth_token, OTEL_EXPORTER_OTLP_ENDPOINT for otlp_endpoint): what messages, docs and
    exported code name, so the name is never spelt by hand. KeyError for no such field."""
    alias = Settings.model_fields[field].validation_alias
    if isinstance(alias, AliasChoices):
        return str(alias.choices[0])
    return ENV_PREFIX + field.upper()


def invalid_settings(exc: ValidationError) -> str:
    """What is wrong, one line per variable, for a person to fix."""
    lines = ["ChunkLab cannot start: a setting is invalid."]
    for err in exc.errors():
        if not err["loc"]:  # a rule over several settings names them itself
            lines.append(f"  {err['msg'].removeprefix('Value error, ')}")
            continue
        name = "_".join(str(p) for p in err["loc"]).upper()
        name = name if name.startswith("OTEL_") else ENV_PREFIX + name  # OpenTelemetry's own variables
        lines.append(f"  {name}: {err['msg']}")
    return "\n".join(lines)


def load_settings() -> Settings:
    """Reads the environment; exits with a readable message when a value is bad."""
    try:
        settings = Settings()
    except ValidationError as exc:
        sys.exit(invalid_settings(exc))
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    return settings
