"""The evaluator's bounds on what a person sets, served by GetEvaluatorLimits (ADR 0078):
the checks read them here and the UI reads them from the RPC, so changing one is one
edit here."""

from __future__ import annotations

from chunklab.v1 import evaluator_pb2

LIMITS = evaluator_pb2.EvaluatorLimits(
    max_question_count=500,
)
