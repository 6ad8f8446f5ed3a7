"""The command line run as a user runs it: `python -m chunklab_app.cli` in the repository."""

from __future__ import annotations

import subprocess
import sys

from tests.support.repo import REPO


def run_cli(env: dict[str, str], *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    """Runs `chunklab ARGS` with the environment given, its output captured as text."""
    return subprocess.run(
        [sys.executable, "-m", "chunklab_app.cli", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
