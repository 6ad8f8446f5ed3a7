"""A study's questions dealt into the selection share it tunes on and the confirmation share that
scores its result (ADR 0114): dealt exactly as an experiment's hold-out deals them (by content,
then a seeded shuffle), so that the experiment's own validation of the confirmed runs agrees.
The selection share is further cut into rungs for successive halving: a trial is asked the first
rung, then more, and is pruned between rungs when it cannot win."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from chunklab.errors import InvalidArgument
from chunklab.v1 import evaluator_pb2 as pb
from services.evaluator.experiments import holdout
from services.evaluator.reports.winner import content_key

# Questions each side needs at least: fewer confirm nothing.
MIN_PER_SIDE = 4
# Successive halving's rungs: the shares of the selection questions asked before each check.
RUNG_SHARES = (0.25, 0.5, 1.0)


@dataclass(frozen=True)
class Split:
    selection: list[pb.Question]
    confirmation: list[pb.Question]

    def rungs(self) -> list[list[pb.Question]]:
        """The selection questions asked up to each rung (each rung holds the one before)."""
        n = len(self.selection)
        cuts = sorted({max(MIN_PER_SIDE, math.ceil(share * n)) for share in RUNG_SHARES} | {n})
        return [self.selection[:c] for c in cuts if c <= n]


def share(validation: pb.Validation) -> float:
    return validation.selection_share or holdout.DEFAULT_SHARE


def needed(validation: pb.Validation) -> int:
    """The fewest labelled questions the split can give MIN_PER_SIDE on each side."""
    s = share(validation)
    return max(math.ceil(MIN_PER_SIDE / s - 1e-9), math.ceil(MIN_PER_SIDE / (1 - s) - 1e-9), 2 * MIN_PER_SIDE)


def labelled(questions: Sequence[pb.Question]) -> list[pb.Question]:
    return [q for q in questions if q.references]


def deal(questions: Sequence[pb.Question], validation: pb.Validation) -> Split:
    """The seeded split of the labelled questions; InvalidArgument when it is too small."""
    usable = labelled(questions)
    n, need = len(usable), needed(validation)
    if n < need:
        raise InvalidArgument(
            f"the question set has {n} questions with reference excerpts; a study tuned on "
            f"{share(validation):.0%} of them and confirmed on the rest needs at least {need} "
            f"({MIN_PER_SIDE} on each side): add questions, or tune on a different share of them (the selection share)"
        )
    ordered = sorted(usable, key=lambda q: (content_key(q.text), q.question_id))
    order = [ordered[i] for i in np.random.default_rng(validation.seed).permutation(n)]
    cut = min(max(round(share(validation) * n), holdout.MIN_PER_SIDE), n - holdout.MIN_PER_SIDE)
    return Split(selection=order[:cut], confirmation=order[cut:])
