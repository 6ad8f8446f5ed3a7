"""Shared fixtures: the offline tokenizer, and the whole stack started as
separate processes on free ports."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from chunklab import tokens
from chunklab.stack import Stack

REPO = Path(__file__).resolve().parent.parent
SHARED_DATA = REPO.parent / "shared" / "data" / "chroma-general"

os.environ.setdefault("HF_HUB_OFFLINE", "1")
tokens.ensure_offline_cache(REPO / ".chunklab" / "tiktoken")


@pytest.fixture(scope="session")
def stack(tmp_path_factory) -> Stack:
    """Four services, each its own process, bound to port 0 on loopback."""
    running = Stack(data_dir=tmp_path_factory.mktemp("stack")).start()
    yield running
    running.stop()
