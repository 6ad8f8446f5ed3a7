"""The hand-built topics document and the token windows fixed_size must cut it into
(an independent computation)."""

from __future__ import annotations

from chunklab.text import tokens
from chunklab.v1 import (
    common_pb2,
)
from tests.support.repo import FIXTURES

FIXTURE = FIXTURES / "topics.md"


CHUNK_SIZE = 41


def fixed_size(chunk_size: int = CHUNK_SIZE, chunk_overlap: int = 0) -> common_pb2.StrategySpec:
    return common_pb2.StrategySpec(
        name="fixed_size",
        knobs={
            "chunk_size": common_pb2.KnobValue(int_value=chunk_size),
            "chunk_overlap": common_pb2.KnobValue(int_value=chunk_overlap),
        },
    )


def expected_windows(text: str, size: int) -> list[str]:
    """An independent computation of the token windows (overlap 0)."""
    encoding = tokens.encoding()
    ids = encoding.encode_ordinary(text)
    return [encoding.decode(ids[i : i + size]) for i in range(0, len(ids), size)]
