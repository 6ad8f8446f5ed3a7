"""Every LLM feature against a real model server (issue 30): llama.cpp's server with
SmolLM2-135M-Instruct (tests/support/llama_server.py), through the stack's services.

The model is small and weak on purpose: what is asserted is what a user checks
(an answer streamed in pieces, a score or "not measured" with its reason, a
context stored and embedded with its chunk, counts that add up, excerpts found
in the document, a reordered list or UNAVAILABLE), never the model's wording.
Documents are tiny and replies short, so the whole module takes about a minute."""

from __future__ import annotations

import grpc
import pytest

from chunklab.client.errors import ClientError
from chunklab.llm import ChatClient
from chunklab.llm_json import REFUSALS
from chunklab.rpc import channels
from chunklab.v1 import chunker_pb2, common_pb2, evaluator_pb2
from services.evaluator.judging import judge
from tests.support.llama_server import endpoint

pytestmark = pytest.mark.e2e

GUIDE = """# Harbour guide

## The lighthouse

The lighthouse at Kell Point was built in 1874. Its keeper trims the wick every four hours
and logs every passing ship in a red ledger.

## The ferry

The ferry to Marrow Island leaves at seven each morning. It carries twelve cars and
returns at noon unless the wind is above force six.
"""


def spec(name: str, **knobs: int) -> common_pb2.StrategySpec:
    return common_pb2.StrategySpec(name=name, knobs={k: common_pb2.KnobValue(int_value=v) for k, v in knobs.items()})


@pytest.fixture(scope="module")
def guide(stack, real_llm):
    """The guide uploaded, processed with fixed_size and both contextual strategies (their
    contexts written by the real model); (document, the last ProcessDocument event)."""
    client = stack.client()
    document = client.upload_document(GUIDE.encode(), name="harbour-guide.md", collection="real-llm").document
    request = chunker_pb2.ProcessDocumentRequest(
        document_id=document.document_id,
        strategies=[
            spec("fixed_size", chunk_size=60, chunk_overlap=0),
            spec("contextual_retrieval", chunk_size=60, chunk_overlap=0),
            spec("contextual_structure"),
        ],
        llm=chunker_pb2.LLMChoice(base_url=real_llm.base_url, model=real_llm.model),
    )
    events = list(channels.chunker(stack.addresses["chunker"]).ProcessDocument(request, timeout=600))
    return client.get_document_text(document.document_id), events[-1]


def options(document, strategy: str, top_k: int = 5, **fields) -> common_pb2.RetrievalOptions:
    return common_pb2.RetrievalOptions(
        strategy=strategy,
        top_k=top_k,
        filter=common_pb2.RetrievalFilter(document_ids=[document.document_id]),
        **fields,
    )


def test_both_contextual_strategies_store_a_context_and_embed_it_with_the_chunk(stack, guide):
    document, last = guide
    result = last.result
    assert not result.strategies_failed, [f.reason for f in result.strategies_failed]
    done = {s.strategy: s for s in result.strategies_completed}
    assert {"contextual_retrieval", "contextual_structure"} <= set(done)
    assert result.llm.startswith("SmolLM2-135M-Instruct at http://127.0.0.1")
    assert done["contextual_retrieval"].usage.llm_calls == done["contextual_retrieval"].chunk_count >= 2
    client = stack.client()
    for strategy in ("contextual_retrieval", "contextual_structure"):
        hits = client.retrieve("lighthouse keeper", options(document, strategy, top_k=10)).retrieved_chunks
        assert len(hits) == done[strategy].chunk_count
        for hit in hits:
            chunk = hit.chunk
            assert chunk.content == document.text[chunk.start_char : chunk.end_char]
            enriched = chunk.enriched_content
            if strategy == "contextual_retrieval":
                context, _, content = enriched.partition("\n\n")
                assert context.strip() and content == chunk.content
            else:
                context = enriched.split("Context: ", 1)[1].split("\nContent: ", 1)[0]
                assert enriched.startswith("Document: ") and context.strip()
                assert enriched.endswith(f"Content: {chunk.content}")
        # Embedded with its context: found by its enriched text closer than by its bare content.
        chunk = hits[0].chunk
        by_enriched = client.retrieve(chunk.enriched_content, options(document, strategy, top_k=10))
        by_content = client.retrieve(chunk.content, options(document, strategy, top_k=10))
        score = {h.chunk.chunk_id: h.score for h in by_enriched.retrieved_chunks}
        bare = {h.chunk.chunk_id: h.score for h in by_content.retrieved_chunks}
        assert by_enriched.retrieved_chunks[0].chunk.chunk_id == chunk.chunk_id
        assert score[chunk.chunk_id] > bare[chunk.chunk_id]


def test_an_answer_streams_in_pieces_from_the_real_model(stack, guide, real_llm):
    document, _ = guide
    request = evaluator_pb2.AnswerRequest(
        question="When was the lighthouse built?",
        retrieval=options(document, "fixed_size", top_k=2),
        answer_model=evaluator_pb2.ModelEndpoint(base_url=real_llm.base_url, model=real_llm.model),
    )
    events = list(channels.evaluator(stack.addresses["evaluator"]).Answer(request, timeout=300))
    deltas = [e.delta for e in events if e.HasField("delta")]
    result = events[-1].result
    assert len(deltas) > 1 and "".join(deltas) == result.answer and result.answer.strip()
    assert not result.extractive and result.model == real_llm.model
    # llama.cpp's stream reports no usage: the tokens are counted by ChunkLab's tokenizer.
    assert result.usage.llm_calls == 1 and result.usage.prompt_tokens > 0 and result.usage.completion_tokens > 0


ITEM = judge.JudgeInput(
    question="When was the lighthouse built?",
    context="[1] harbour-guide.md\nThe lighthouse at Kell Point was built in 1874.",
    answer="It was built in 1874.",
    expected="1874",
)


def check_scores(outcome: judge.JudgeOutcome) -> dict[str, bool]:
    """Each measure a score in range with a reason, or not measured with the reason; never a bare 0."""
    measured = {}
    for measure in judge.MEASURES:
        score = getattr(outcome.scores, measure)
        assert score.reason.strip(), measure
        if score.measured:
            assert score.value in ((0.0, 1.0) if measure == "hallucination" else range(1, 11)), (measure, score)
        else:
            assert score.value == 0.0 and score.reason.startswith("not measured after"), (measure, score.reason)
        measured[measure] = score.measured
    return measured


def test_each_judge_gives_a_score_with_its_reason_through_structured_output(real_llm):
    outcome = judge.Judge(ChatClient(endpoint(real_llm)), attempts=2, backoff_s=0).score(ITEM)
    # The grammar from each measure's schema makes every reply readable: all four are measured.
    assert check_scores(outcome) == dict.fromkeys(judge.MEASURES, True)
    assert outcome.scores.judge_model == real_llm.model and outcome.prompt_tokens > 0
    # llama-cpp-python's server refuses OpenAI's json_schema form (422) and takes json_object with a
    # schema: the refusal is remembered for this endpoint, so only the first call was refused.
    assert REFUSALS.of(endpoint(real_llm)) == {"json_schema"}


def test_without_structured_output_each_judge_is_a_score_or_not_measured_with_the_reason(real_llm):
    outcome = judge.Judge(ChatClient(endpoint(real_llm, "off")), attempts=2, backoff_s=0).score(ITEM)
    measured = check_scores(outcome)
    # A measure read at the first call costs one; one asked again, two (attempts=2).
    assert 4 <= outcome.calls <= 8 and len(outcome.problems) == list(measured.values()).count(False)


def test_a_generated_question_set_counts_every_passage_and_locates_its_excerpts(stack, guide, real_llm):
    document, _ = guide
    request = evaluator_pb2.GenerateQuestionSetRequest(
        name="real-llm questions",
        document_ids=[document.document_id],
        question_count=2,
        seed=7,
        generator_model=evaluator_pb2.ModelEndpoint(base_url=real_llm.base_url, model=real_llm.model),
    )
    events = list(stack.client().generate_question_set(request))
    generation = events[-1].generation
    dropped = sum(d.count for d in generation.dropped)
    assert generation.asked == 2 == generation.kept + dropped + generation.failed
    assert len(generation.outcomes) == 2
    for outcome in generation.outcomes:
        if outcome.outcome == evaluator_pb2.GENERATION_OUTCOME_KEPT:
            assert outcome.question.text.strip() and outcome.question.references
            for reference in outcome.question.references:
                assert document.text[reference.start_char : reference.end_char] == reference.content
        else:
            assert outcome.problem.strip()
    if generation.kept:
        assert generation.state == evaluator_pb2.GENERATION_STATE_SUCCEEDED and generation.question_set_id
    else:
        assert generation.state == evaluator_pb2.GENERATION_STATE_FAILED and "none of the" in generation.error


def test_llm_reranking_reorders_the_candidates_or_says_unavailable(stack, guide, real_llm):
    document, _ = guide
    plain = stack.client().retrieve("When does the ferry leave?", options(document, "fixed_size", top_k=3))
    rerank = common_pb2.RerankOptions(
        kind=common_pb2.RERANKER_KIND_LLM, depth=4, base_url=real_llm.base_url, model=real_llm.model
    )
    request = options(document, "fixed_size", top_k=3, rerank=rerank)
    try:
        reranked = stack.client().retrieve("When does the ferry leave?", request)
    except ClientError as exc:
        assert exc.code == grpc.StatusCode.UNAVAILABLE and "not reranked" in exc.details, exc.details
        return
    assert reranked.reranker.startswith(f"LLM {real_llm.model}")
    # The hits in rank order (the expansion tree's; the flat list is in reading order): by rerank
    # score, each 0..10, the same chunks as the plain search found.
    scores = [node.hit.rerank_score for node in reranked.expansion_tree.hits]
    assert scores == sorted(scores, reverse=True) and all(0 <= s <= 10 for s in scores)
    found = {node.hit.chunk.chunk_id for node in reranked.expansion_tree.hits}
    assert found == {h.chunk.chunk_id for h in plain.retrieved_chunks}
