"""What a page opens on, for the pages that show finished experiments (ADR 0093): Start here's
third step, Reports' first report and Compare's first pair all start from the newest
experiment that compared configurations and finished.

Compare's pair is that experiment and the newest earlier one on the same question set (the
same questions make the differences meaningful, and the evaluator warns about anything else
that differs); when no earlier one shares its questions, the newest two finished experiments;
with fewer than two, nothing, and the page says what to run. Lists are newest first, as the
evaluator returns them.
"""

from __future__ import annotations

from collections.abc import Sequence

from chunklab import experiment_state
from chunklab.v1 import evaluator_pb2

# An experiment whose runs answered, wholly or in part ("partial", where the evaluator has it).
FINISHED = ("succeeded", "partial")


def finished(experiment: evaluator_pb2.Experiment) -> bool:
    """An experiment that compared configurations: two runs or more, and it finished."""
    return len(experiment.runs) >= 2 and experiment_state.name(experiment.state) in FINISHED


def newest_finished(experiments: Sequence[evaluator_pb2.Experiment]) -> evaluator_pb2.Experiment | None:
    return next((e for e in experiments if finished(e)), None)


def opening_pair(experiments: Sequence[evaluator_pb2.Experiment]) -> list[str]:
    """Compare's first selection: the newest finished experiment and the newest earlier one on
    its question set, else the newest two finished ones, else none."""
    done = [e for e in experiments if experiment_state.name(e.state) in FINISHED]
    if len(done) < 2:
        return []
    newest = newest_finished(done) or done[0]
    same = [e for e in done if e is not newest and e.question_set_hash == newest.question_set_hash]
    partner = same[0] if same else next(e for e in done if e is not newest)
    return [newest.experiment_id, partner.experiment_id]
