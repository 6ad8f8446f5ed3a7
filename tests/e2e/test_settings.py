"""Configuration comes from CHUNKLAB_* variables, checked at start-up."""

from __future__ import annotations

import subprocess
import sys

import pytest

from chunklab.settings import Settings


def test_defaults_listen_on_loopback_and_keep_data_in_one_folder(monkeypatch):
    for name in ("CHUNKLAB_INGEST_ADDRESS", "CHUNKLAB_DATA_DIR", "CHUNKLAB_MAX_UPLOAD_MB"):
        monkeypatch.delenv(name, raising=False)
    settings = Settings()
    assert settings.ingest_address == "127.0.0.1:50051"
    assert settings.max_upload_mb == 50
    assert settings.database_url_for("ingest").endswith(".chunklab/ingest.sqlite3")


@pytest.mark.parametrize(
    ("variable", "value", "expected"),
    [
        ("CHUNKLAB_RETRIEVER_ADDRESS", "localhost", "CHUNKLAB_RETRIEVER_ADDRESS: Value error, expected host:port"),
        (
            "CHUNKLAB_CHUNKER_ADDRESS",
            "chunker-a:50052,chunker-b:50052",
            "CHUNKLAB_CHUNKER_ADDRESS: Value error, a list of replica addresses takes IP addresses (e.g. "
            "127.0.0.1:50052,127.0.0.1:50062), got the name 'chunker-a'; for names, give one name that resolves "
            "to every replica",
        ),
        ("CHUNKLAB_CHUNKER_ADDRESS", "127.0.0.1:50052,127.0.0.1:port", "expected host:port"),
        ("CHUNKLAB_MAX_UPLOAD_MB", "-3", "CHUNKLAB_MAX_UPLOAD_MB: Input should be greater than 0"),
        (
            "CHUNKLAB_TLS_CA",
            "/nowhere/ca.pem",
            "CHUNKLAB_TLS_CA: Value error, expected a PEM file, but there is no file at '/nowhere/ca.pem'",
        ),
    ],
)
def test_a_service_refuses_to_start_with_a_bad_setting_and_names_it(tmp_path, variable, value, expected):
    env = {"CHUNKLAB_DATA_DIR": str(tmp_path), variable: value, "PATH": "/usr/bin:/bin"}
    result = subprocess.run(
        [sys.executable, "-m", "services.ingest"], env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode != 0
    assert "ChunkLab cannot start: a setting is invalid." in result.stderr
    assert expected in result.stderr
    assert "Traceback" not in result.stderr


def test_replica_addresses_a_client_dials_are_one_name_or_a_list_of_ip_ports(monkeypatch):
    from chunklab.rpc.replicas import target

    monkeypatch.setenv("CHUNKLAB_CHUNKER_ADDRESS", "127.0.0.1:50052, 127.0.0.1:50062")
    monkeypatch.setenv("CHUNKLAB_EVALUATOR_ADDRESS", "[::1]:50054,[::1]:50064")
    settings = Settings()
    assert target(settings.chunker_address) == "ipv4:127.0.0.1:50052,127.0.0.1:50062"
    assert target(settings.evaluator_address) == "ipv6:[::1]:50054,[::1]:50064"
    assert target("chunker:50052") == "chunker:50052"  # one name: DNS gives every replica


def test_a_server_refuses_to_listen_on_a_list_of_addresses(tmp_path):
    env = {
        "CHUNKLAB_DATA_DIR": str(tmp_path),
        "CHUNKLAB_INGEST_ADDRESS": "127.0.0.1:0,127.0.0.1:0",
        "PATH": "/usr/bin:/bin",
    }
    result = subprocess.run(
        [sys.executable, "-m", "services.ingest"], env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert (
        "chunklab ingest: 127.0.0.1:0,127.0.0.1:0 lists several addresses (what its clients dial, ADR 0065); "
        "a server listens on one: give this replica its own CHUNKLAB_INGEST_ADDRESS"
    ) in result.stderr
