"""An experiment's state (the contract's ExperimentState): its name, and what Resume and
Cancel accept, in one place (ADR 0078).

The enum is the list of states and names them ("interrupted" for
EXPERIMENT_STATE_INTERRUPTED): the evaluator's messages and reports, the UI and the
command line all print `name`. The evaluator refuses a Resume or a Cancel that `resumable`
or `cancellable` refuses, and the UI enables its buttons with the same functions. Adding a
state is its enum value, plus its place in STOPPED if a resume continues it.
"""

from __future__ import annotations

from chunklab.v1 import evaluator_pb2

_PREFIX = "EXPERIMENT_STATE_"
# Stopped before its end, its finished questions kept: a resume continues it.
STOPPED = (evaluator_pb2.EXPERIMENT_STATE_INTERRUPTED, evaluator_pb2.EXPERIMENT_STATE_FAILED)
# Queued or running, as stored: a runner holds it, unless its evaluator died or could not store its end.
ACTIVE = (evaluator_pb2.EXPERIMENT_STATE_PENDING, evaluator_pb2.EXPERIMENT_STATE_RUNNING)


def name(state: int, unknown: str = "unknown") -> str:
    """The state as people read it: the enum value's name without its prefix, in lower case;
    `unknown` for UNSPECIFIED or a number this build does not know."""
    value = evaluator_pb2.ExperimentState.DESCRIPTOR.values_by_number.get(state)
    if value is None or not state:
        return unknown
    return value.name.removeprefix(_PREFIX).lower()


def names(states) -> str:
    """ "interrupted or failed": the states in their order, for a sentence."""
    named = [name(s) for s in states]
    return " or ".join([", ".join(named[:-1]), named[-1]] if len(named) > 1 else named)


def _held(state: int, held: bool | None) -> bool:
    return state in ACTIVE if held is None else held


def resumable(state: int, held: bool | None = None) -> bool:
    """Whether Resume continues an experiment in `state`: a stopped one, or one stored as
    queued or running that no runner holds (its evaluator died, or could not store its end).
    `held`: whether a runner holds it now; the evaluator knows (its worker, the leases),
    a client does not, and None takes the stored state's word (queued or running: held)."""
    return not _held(state, held) and (state in STOPPED or state in ACTIVE)


def cancellable(state: int, held: bool | None = None) -> bool:
    """Whether Cancel stops an experiment in `state`: one a runner holds (see resumable)."""
    return _held(state, held)
