"""Tracing's switch in the settings (ADR 0066): OpenTelemetry's own variable
names, on only with an endpoint and without OTEL_SDK_DISABLED, and a message
naming the variable for an endpoint or protocol that cannot work."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from chunklab.rpc import tracing
from chunklab.settings import invalid_settings, settings_from

pytestmark = pytest.mark.unit


def problem(environ: dict[str, str]) -> str:
    with pytest.raises(ValidationError) as refused:
        settings_from(environ)
    return invalid_settings(refused.value)


@pytest.fixture(autouse=True)
def no_otel_environment(monkeypatch):
    for name in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_SDK_DISABLED"):
        monkeypatch.delenv(name, raising=False)


def test_tracing_is_on_with_an_endpoint_and_off_without_one_or_when_disabled():
    assert settings_from({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4317"}).tracing
    assert settings_from(
        {"OTEL_EXPORTER_OTLP_ENDPOINT": "https://collector:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}
    ).tracing
    assert not settings_from({}).tracing
    assert not settings_from({"OTEL_EXPORTER_OTLP_ENDPOINT": "  "}).tracing
    assert not settings_from(
        {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4317", "OTEL_SDK_DISABLED": "true"}
    ).tracing


def test_starting_without_an_endpoint_leaves_tracing_off():
    assert tracing.start("ui", settings_from({})) is False
    assert not tracing.active() and tracing.server_interceptors() == []
    with tracing.span("nothing", document_id="d1"):  # a no-op, not an error
        pass
    work = lambda: 42  # noqa: E731
    assert tracing.carried(work) is work


def test_an_endpoint_without_a_scheme_names_the_variable_and_an_example():
    assert problem({"OTEL_EXPORTER_OTLP_ENDPOINT": "localhost:4317"}) == (
        "ChunkLab cannot start: a setting is invalid.\n"
        "  OTEL_EXPORTER_OTLP_ENDPOINT: Value error, expected the OTLP collector's gRPC URL, e.g. "
        "http://127.0.0.1:4317 (https:// for TLS), got 'localhost:4317'"
    )


def test_an_http_protocol_is_refused_rather_than_ignored():
    assert problem(
        {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}
    ) == (
        "ChunkLab cannot start: a setting is invalid.\n"
        "  OTEL_EXPORTER_OTLP_PROTOCOL: Value error, ChunkLab exports traces over OTLP/gRPC only, got "
        "'http/protobuf': set it to grpc (or unset it) and point OTEL_EXPORTER_OTLP_ENDPOINT at the "
        "collector's gRPC port (4317)"
    )
