"""The token and TLS settings (ADR 0048): off by default, checked at start-up
with a message that names the variable, and read by the launcher from the
environment it gives its children."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from chunklab.settings import Settings, invalid_settings, settings_from

VARIABLES = ("CHUNKLAB_AUTH_TOKEN", "CHUNKLAB_TLS_CERT", "CHUNKLAB_TLS_KEY", "CHUNKLAB_TLS_CA")


@pytest.fixture(autouse=True)
def clean(monkeypatch):
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)


def problem(**env) -> str:
    with pytest.raises(ValidationError) as caught:
        settings_from({f"CHUNKLAB_{k.upper()}": v for k, v in env.items()})
    return invalid_settings(caught.value)


def test_by_default_there_is_no_token_and_no_tls():
    settings = Settings()
    assert (settings.auth_token, settings.tls_cert, settings.tls_key, settings.tls_ca, settings.tls) == (
        "",
        "",
        "",
        "",
        False,
    )


def test_a_token_too_short_or_with_spaces_is_refused_with_how_to_make_one():
    for bad in ("short", "sixteen chars here"):
        assert problem(auth_token=bad) == (
            "ChunkLab cannot start: a setting is invalid.\n"
            "  CHUNKLAB_AUTH_TOKEN: Value error, expected at least 16 printable ASCII characters without spaces, "
            "e.g. from `python -c 'import secrets; print(secrets.token_urlsafe(32))'`"
        )
    assert settings_from({"CHUNKLAB_AUTH_TOKEN": "  abcdefghijklmnop  "}).auth_token == "abcdefghijklmnop"


def test_a_certificate_needs_its_key_and_every_file_must_exist(tmp_path):
    cert = tmp_path / "server.pem"
    cert.write_text("-----BEGIN CERTIFICATE-----\n")
    assert problem(tls_cert=str(cert)) == (
        "ChunkLab cannot start: a setting is invalid.\n"
        "  CHUNKLAB_TLS_CERT is set but CHUNKLAB_TLS_KEY is not: TLS needs both"
    )
    assert problem(tls_key=str(cert)).endswith("CHUNKLAB_TLS_KEY is set but CHUNKLAB_TLS_CERT is not: TLS needs both")
    missing = tmp_path / "ca.pem"
    assert problem(tls_ca=str(missing)) == (
        "ChunkLab cannot start: a setting is invalid.\n"
        f"  CHUNKLAB_TLS_CA: Value error, expected a PEM file, but there is no file at '{missing}'"
    )


def test_clients_speak_tls_with_a_ca_or_a_certificate(tmp_path):
    pem = tmp_path / "x.pem"
    pem.write_text("x")
    assert settings_from({"CHUNKLAB_TLS_CA": str(pem)}).tls
    assert settings_from({"CHUNKLAB_TLS_CERT": str(pem), "CHUNKLAB_TLS_KEY": str(pem)}).tls


def test_settings_from_reads_the_given_environment_over_the_process_one(monkeypatch):
    """As the launcher's children see it: the stack's variables over the launcher's own."""
    monkeypatch.setenv("CHUNKLAB_RPC_TIMEOUT_S", "9")
    monkeypatch.setenv("CHUNKLAB_LONG_RPC_TIMEOUT_S", "99")
    settings = settings_from(
        {
            "CHUNKLAB_AUTH_TOKEN": "t" * 20,
            "CHUNKLAB_FRESHNESS_WINDOWS": '{"news": 3}',
            "CHUNKLAB_LONG_RPC_TIMEOUT_S": "12",
            "HOME": "/elsewhere",
        }
    )
    assert (settings.auth_token, settings.freshness_windows, settings.long_rpc_timeout_s) == ("t" * 20, {"news": 3}, 12)
    assert settings.rpc_timeout_s == 9
    assert (Settings().auth_token, Settings().long_rpc_timeout_s) == ("", 99)
