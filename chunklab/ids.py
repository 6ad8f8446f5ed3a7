"""Deterministic ids: the same inputs always give the same id, so the
retriever can fetch a chunk's neighbours, windows and parents by id."""

from __future__ import annotations

import hashlib
import json
import uuid

_NAMESPACE = uuid.UUID("6f1c3f0e-8a5b-4c1e-9d7a-2b3c4d5e6f70")


def chunk_id(document_id: str, strategy: str, config_id: str, chunk_index: int, role: str = "chunk") -> str:
    return str(uuid.uuid5(_NAMESPACE, f"{document_id}/{strategy}/{config_id}/{role}/{chunk_index}"))


def config_id(strategy: str, knobs: dict) -> str:
    """A short stable id for a strategy's knob values (order-insensitive)."""
    canonical = json.dumps({"strategy": strategy, "knobs": knobs}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]
