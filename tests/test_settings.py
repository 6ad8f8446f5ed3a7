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
        ("CHUNKLAB_MAX_UPLOAD_MB", "-3", "CHUNKLAB_MAX_UPLOAD_MB: Input should be greater than 0"),
        ("CHUNKLAB_TLS_CA", "/nowhere/ca.pem",
         "CHUNKLAB_TLS_CA: Value error, expected a PEM file, but there is no file at '/nowhere/ca.pem'"),
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
