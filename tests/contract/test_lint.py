"""The code reads one way: ruff's lint rules and its formatter, as configured in
pyproject.toml, find nothing to change anywhere but the generated stubs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
RUFF = [sys.executable, "-m", "ruff"]


def ruff(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*RUFF, *args], cwd=REPO, capture_output=True, text=True, timeout=300)


def test_ruff_finds_no_lint_problem():
    result = ruff("check", "--no-cache", "--output-format", "concise", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_file_is_formatted_as_ruff_formats_it():
    result = ruff("format", "--no-cache", "--check", ".")
    assert result.returncode == 0, "run `.venv/bin/ruff format .`:\n" + result.stdout + result.stderr
