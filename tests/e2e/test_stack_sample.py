"""What `make up` loads (chunklab_app.sample_loader): the sample documents processed, their
question set imported and one experiment finished, ready to query and compare; loading
again adds no document, question set or experiment. Two strategies here to stay fast;
`make up` itself processes every strategy that needs no LLM."""

from __future__ import annotations

import pytest

from chunklab.v1 import common_pb2, evaluator_pb2
from chunklab_app import sample_loader

pytestmark = pytest.mark.e2e

STRATEGIES = ["fixed_size", "recursive"]


def test_the_sample_is_ready_to_query_and_compare_and_loading_twice_changes_nothing(stack):
    lab = stack.client()
    lines = []
    loaded = sample_loader.load_sample(lab, STRATEGIES, lines.append)
    counts = (len(lab.list_documents()), len(lab.list_question_sets()), len(lab.list_experiments()))
    again = []
    assert sample_loader.load_sample(lab, STRATEGIES, again.append) == loaded
    assert (len(lab.list_documents()), len(lab.list_question_sets()), len(lab.list_experiments())) == counts
    assert again == []  # nothing processed, imported or run the second time
    assert lines[-2:] == [
        f"running the sample experiment '{name}': fixed_size, recursive" for name in sample_loader.EXPERIMENTS
    ]

    guide = loaded.document_ids["rag-field-guide"]
    response = lab.retrieve(
        "Which separators does recursive splitting try?",
        common_pb2.RetrievalOptions(
            strategy="fixed_size", top_k=1, filter=common_pb2.RetrievalFilter(document_ids=[guide])
        ),
    )
    assert "separators" in response.retrieved_chunks[0].chunk.content
    for strategy in STRATEGIES:
        for document_id in loaded.document_ids.values():
            assert lab.indexed_set(document_id, strategy) is not None

    (question_set,) = [q for q in lab.list_question_sets() if q.name == sample_loader.QUESTION_SET_NAME]
    assert question_set.question_set_id == loaded.question_set_id and question_set.question_count == 82
    assert loaded.finished
    top_5, top_2 = (lab.get_experiment(i, without_results=True) for i in loaded.experiment_ids)
    for experiment, top_k in ((top_5, 5), (top_2, 2)):
        assert experiment.state == evaluator_pb2.EXPERIMENT_STATE_SUCCEEDED and experiment.config.retrieval_only
        assert experiment.config.retrieval.top_k == top_k
        assert [(run.run_key, run.questions_done, run.error) for run in experiment.runs] == [
            ("fixed_size", 82, ""),
            ("recursive", 82, ""),
        ]
    # The sample separates strategies: the 49 k-character speech makes several times top 5 chunks,
    # so no run finds every reference, and fewer chunks find fewer.
    assert all(run.chunk_count > 4 * 5 for run in top_5.runs), [r.chunk_count for r in top_5.runs]
    for five, two in zip(top_5.runs, top_2.runs):
        assert 0 < two.mean_metrics.recall < five.mean_metrics.recall < 1
