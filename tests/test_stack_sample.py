"""What `make up` prepares: the sample document processed and its question set
imported, ready to query and to run an experiment on."""

from __future__ import annotations

import pytest

from chunklab.v1 import common_pb2
from chunklab_app.stack import SAMPLE_QUESTIONS, seed_sample

pytestmark = pytest.mark.e2e


def test_the_sample_is_ready_to_query_and_seeding_twice_changes_nothing(stack):
    lab = stack.client()
    document_id = seed_sample(lab)
    assert seed_sample(lab) == document_id

    response = lab.retrieve("Which separators does recursive splitting try?", common_pb2.RetrievalOptions(
        strategy="fixed_size", top_k=1, filter=common_pb2.RetrievalFilter(document_ids=[document_id])))
    assert "separators" in response.retrieved_chunks[0].chunk.content

    sets = [q for q in lab.list_question_sets() if q.name == SAMPLE_QUESTIONS.stem]
    assert len(sets) == 1 and sets[0].question_count == 6
    questions = lab.get_question_set(sets[0].question_set_id).questions
    assert all(ref.document_id == document_id for q in questions for ref in q.references)
