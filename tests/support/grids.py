"""The grid most experiment tests run: fixed_size at one chunk size and overlap."""

from __future__ import annotations

from chunklab.v1 import common_pb2, evaluator_pb2

CHUNK_SIZE, OVERLAP = 250, 125


def fixed(chunk_size: int = CHUNK_SIZE, overlap: int = OVERLAP) -> evaluator_pb2.StrategyGrid:
    return evaluator_pb2.StrategyGrid(
        strategy="fixed_size",
        grid=[
            evaluator_pb2.KnobGrid(knob="chunk_size", values=[common_pb2.KnobValue(int_value=chunk_size)]),
            evaluator_pb2.KnobGrid(knob="chunk_overlap", values=[common_pb2.KnobValue(int_value=overlap)]),
        ],
    )
