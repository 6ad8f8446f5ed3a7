"""An experiment's state (the contract's ExperimentState): its name, what Resume and
Cancel accept, and the state a run that went to its end is left in, in one place
(ADR 0078, ADR 0087).

The enum is the list of states and names them ("interrupted" for
EXPERIMENT_STATE_INTERRUPTED): the evaluator's messages and reports, the UI and the
command line all print `name`. The evaluator refuses a Resume or a Cancel that `resumable`
or `cancellable` refuses, and the UI enables its buttons with the same functions. Adding a
state is its enum value, plus its place in STOPPED if a resume continues it.
"""

from __future__ import annotations

from chunklab.v1 import evaluator_pb2

_PREFIX = "EXPERIMENT_STATE_"
# Stopped before its end, its finished questions kept, or ended with failed runs: a resume
# continues it, and retries a partial one's failed runs and questions (ADR 0087).
STOPPED = (
    evaluator_pb2.EXPERIMENT_STATE_INTERRUPTED,
    evaluator_pb2.EXPERIMENT_STATE_FAILED,
    evaluator_pb2.EXPERIMENT_STATE_PARTIAL,
)
# Ran to its end: every run was tried, and its finished runs are results to read and compare.
ENDED = (evaluator_pb2.EXPERIMENT_STATE_SUCCEEDED, evaluator_pb2.EXPERIMENT_STATE_PARTIAL)
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
    """Whether Cancel stops an experiment in `state`: one a runner holds (see resumable), or one
    stored as queued or running that none holds (its evaluator died), which the evaluator then
    stores as interrupted at once (ADR 0152)."""
    return _held(state, held) or state in ACTIVE


def failed_run(run) -> bool:
    """Whether a run (an ExperimentRun) has no result at all: it could not run (its error
    says why), or every question it asked failed."""
    return bool(run.error) or (run.questions_total > 0 and run.questions_failed >= run.questions_total)


def incomplete_run(run) -> bool:
    """Whether a run did not answer every question: it failed, some of its questions
    failed, or it asked fewer than all."""
    return failed_run(run) or run.questions_failed > 0 or run.questions_done < run.questions_total


def ended(runs) -> tuple[int, str]:
    """The state of an experiment whose runs all went to their end, and what its error says:
    succeeded when every run answered every question; failed when no run has a result;
    partial otherwise, naming each failed run and its reason (ADR 0087)."""
    runs = list(runs)
    failed = [run for run in runs if incomplete_run(run)]
    if not failed:
        return evaluator_pb2.EXPERIMENT_STATE_SUCCEEDED, ""
    reasons = "; ".join(f"{run.run_key}: {failure(run)}" for run in failed)
    if all(failed_run(run) for run in runs):
        return evaluator_pb2.EXPERIMENT_STATE_FAILED, f"every run failed: {reasons}"
    return (
        evaluator_pb2.EXPERIMENT_STATE_PARTIAL,
        f"{len(failed)} of {len(runs)} runs did not finish every question: {reasons}",
    )


def failure(run) -> str:
    """Why a run has no result, or some questions of it failed, in a sentence; empty when neither."""
    if run.error:
        return run.error
    if run.questions_failed:
        reason = f" (the first: {run.question_error})" if run.question_error else ""
        return f"{run.questions_failed} of {run.questions_total} questions failed{reason}"
    if run.questions_done < run.questions_total:
        return f"{run.questions_done} of {run.questions_total} questions asked"
    return ""
