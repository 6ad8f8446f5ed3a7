"""The same experiment in two fresh data folders names the same winner (issue 27, ADR 0080):
the sample's documents and question set loaded into two stacks of their own, one
retrieval-only experiment of two strategies with the default seed in each. Question ids
are new at each import; the split follows the questions' content, so the same questions
choose, and the verdict, the hold-out section and "copy the winner" agree across folders."""

from __future__ import annotations

import pytest

from chunklab.client import experiment_outcome
from chunklab.v1 import common_pb2, evaluator_pb2
from chunklab_app import export, sample_loader
from chunklab_app.stack import Stack

pytestmark = pytest.mark.e2e

STRATEGIES = ("fixed_size", "recursive")


def one_folder(data_dir) -> dict:
    """What a user sees of the experiment run in a stack on a fresh data folder."""
    with Stack(data_dir=data_dir) as stack:
        lab = stack.client()
        document_ids = sample_loader.upload_and_process(lab, STRATEGIES, log=lambda _line: None)
        set_id = sample_loader.question_set(lab, document_ids)
        config = evaluator_pb2.ExperimentConfig(
            name="same winner",
            question_set_id=set_id,
            retrieval_only=True,
            strategies=[evaluator_pb2.StrategyGrid(strategy=s) for s in STRATEGIES],
            retrieval=common_pb2.RetrievalOptions(top_k=5),
        )
        done = experiment_outcome(lab.run_experiment(config)).experiment
        assert done is not None and done.state == evaluator_pb2.EXPERIMENT_STATE_SUCCEEDED
        found = lab.get_experiment(done.experiment_id)
        text = {r.question_id: r.question for r in found.results}
        try:
            copied = export.winner_run(found).run_key
        except export.ExportError as refused:
            copied = str(refused).split("(", 1)[1].split(")", 1)[0]  # why: the leaders
        return {
            "ids": set(text),
            "recall": {r.run_key: round(r.mean_metrics.recall, 6) for r in found.runs},
            "verdict": (found.verdict.winner_run_key, list(found.verdict.leaders)),
            "validation": (found.validation.winner_run_key, list(found.validation.leaders)),
            "chosen on": sorted(text[q] for q in found.validation.selection_question_ids),
            "copied": copied,
        }


def test_the_same_experiment_in_two_fresh_data_folders_names_the_same_winner(tmp_path):
    first, second = one_folder(tmp_path / "first"), one_folder(tmp_path / "second")
    assert not first["ids"] & second["ids"]  # the question ids are new in each folder
    assert first["recall"] == second["recall"]
    assert len(first["chosen on"]) == 41  # half of the sample's 82 questions choose
    for seen in ("verdict", "validation", "chosen on", "copied"):
        assert first[seen] == second[seen], seen
    assert first["verdict"][1]  # the verdict names its leader(s)
