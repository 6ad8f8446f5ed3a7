"""What `make up` prepares: the sample document processed and its question set
imported, ready to query and to run an experiment on."""

from __future__ import annotations

import pytest

from chunklab import clients
from chunklab.settings import Settings
from chunklab.stack import SAMPLE_QUESTIONS, seed_sample
from chunklab.v1 import common_pb2, evaluator_pb2, retriever_pb2

pytestmark = pytest.mark.e2e


def test_the_sample_is_ready_to_query_and_seeding_twice_changes_nothing(stack):
    document_id = seed_sample(stack, Settings())
    assert seed_sample(stack, Settings()) == document_id

    response = clients.retriever(stack.addresses["retriever"]).Retrieve(
        retriever_pb2.RetrieveRequest(
            query="Which separators does recursive splitting try?",
            options=common_pb2.RetrievalOptions(
                strategy="fixed_size", top_k=1, filter=common_pb2.RetrievalFilter(document_ids=[document_id])),
        ),
        timeout=60,
    )
    assert "separators" in response.retrieved_chunks[0].chunk.content

    evaluator = clients.evaluator(stack.addresses["evaluator"])
    sets = [
        q for q in evaluator.ListQuestionSets(evaluator_pb2.ListQuestionSetsRequest(), timeout=10).question_sets
        if q.name == SAMPLE_QUESTIONS.stem
    ]
    assert len(sets) == 1 and sets[0].question_count == 6
    questions = evaluator.GetQuestionSet(
        evaluator_pb2.GetQuestionSetRequest(question_set_id=sets[0].question_set_id), timeout=10
    ).questions
    assert all(ref.document_id == document_id for q in questions for ref in q.references)
