"""Question sets generated from a document (issue 16; ADR 0059).

The evaluator runs in this process behind a real gRPC server, its peers
faked (one uploaded document, its canonical text below); the generator is
the fake OpenAI server over real HTTP, replying from a script: good
questions, paraphrased excerpts (snapped to the text), absent ones,
duplicates, prose instead of JSON, a rate limit then success, an outage.
Every count and the set's provenance are checked exactly."""

from __future__ import annotations

import json
import threading

import grpc
import pytest

from chunklab.db.sessions import make_sessionmaker
from chunklab.v1 import evaluator_pb2
from services.evaluator.deps import RunnerDeps
from services.evaluator.judging.models import ModelDefaults
from services.evaluator.questions import question_prompt
from services.evaluator.questions.generation import DUPLICATE_SIMILARITY
from services.evaluator.service import EvaluatorService
from services.evaluator.storage.repository import Repository
from services.evaluator.storage.tables import Base
from tests.support.fake_openai import FakeOpenAI
from tests.support.providers import HashedProvider
from tests.support.status import status_of
from tests.support.town import (
    BRIDGE,
    DEADLINE_S,
    FERRY,
    LIBRARY,
    MARKET,
    RIVER,
    TEXT,
    TIMEOUT_S,
)
from tests.support.waiting import wait_for

G = evaluator_pb2
SECRET = "sk-generator-4242"


@pytest.fixture
def fake():
    with FakeOpenAI() as server:
        yield server


def reply(question: str, answer: str, *excerpts: str) -> str:
    return json.dumps({"question": question, "answer": answer, "excerpts": list(excerpts)})


def scripted(fake: FakeOpenAI, replies: list[str]) -> None:
    """The fake answers its good calls with these texts, in order."""
    queue = list(replies)
    lock = threading.Lock()

    def responder(messages, model):
        with lock:
            return queue.pop(0)

    fake.responder = responder


def generate(stub, fake: FakeOpenAI, count: int, **fields) -> list[G.GenerationEvent]:
    request = G.GenerateQuestionSetRequest(
        name="harwick",
        document_ids=["d-1"],
        question_count=count,
        seed=7,
        generator_model=G.ModelEndpoint(base_url=fake.base_url, model="fake", api_key=SECRET),
        **fields,
    )
    return list(stub.GenerateQuestionSet(request, timeout=DEADLINE_S))


LONG = "x" * (question_prompt.MAX_EXCERPT_CHARS + 1)


def test_a_generation_keeps_located_questions_and_counts_every_other_with_its_reason(evaluator, fake):
    stub, _ = evaluator
    fake.script = fake_behaviours()
    scripted(
        fake,
        [
            reply("Which river flows past Harwick?", "The Alder", RIVER),  # 1 kept
            reply(
                "How often does the island ferry sail?",
                "Every two hours",
                "The ferry to Olsen island leaves every two hours from the north pier",
            ),  # 2 kept, snapped
            reply("What does the mayor own?", "Elephants", "The mayor owns three purple elephants."),  # 3 not found
            reply("Which river flows past Harwick?", "The Alder", RIVER),  # 4 duplicate of 1
            "Sure! Here is a good question about the library.",  # 5: prose, then JSON: kept
            reply("When does the library open on weekdays?", "At nine", LIBRARY),
            "I cannot help with that.",
            "Still no JSON here.",  # 6 failed: prose twice
            reply("When is the farmers' market held?", "Saturday mornings", MARKET),  # 7: after a 429, kept
            # 8: HTTP 500 twice (the client's retry), failed
            reply(f"Is it true that {BRIDGE.lower()}", "Yes", BRIDGE),  # 9 answered by the question
            reply("What does the harbour master keep?", "A log", LONG),  # 10 excerpt too long
        ],
    )
    events = generate(stub, fake, 10)
    estimate = events[0].estimate
    assert (estimate.documents, estimate.passages, estimate.llm_calls, estimate.passages_done) == (1, 10, 10, 0)
    assert estimate.completion_tokens == 10 * question_prompt.COMPLETION_TOKENS
    generation = events[-1].generation
    progress = [e.progress for e in events if e.HasField("progress")]
    assert [p.passages_done for p in progress] == list(range(11))
    assert progress[-1].kept == 4 and progress[-1].failed == 2

    outcomes = [
        (o.passage_number, G.GenerationOutcome.Name(o.outcome), G.DropReason.Name(o.drop_reason), o.attempts)
        for o in generation.outcomes
    ]
    assert outcomes == [
        (1, "GENERATION_OUTCOME_KEPT", "DROP_REASON_UNSPECIFIED", 1),
        (2, "GENERATION_OUTCOME_KEPT", "DROP_REASON_UNSPECIFIED", 1),
        (3, "GENERATION_OUTCOME_DROPPED", "DROP_REASON_EXCERPT_NOT_FOUND", 1),
        (4, "GENERATION_OUTCOME_DROPPED", "DROP_REASON_DUPLICATE", 1),
        (5, "GENERATION_OUTCOME_KEPT", "DROP_REASON_UNSPECIFIED", 2),
        (6, "GENERATION_OUTCOME_FAILED", "DROP_REASON_UNSPECIFIED", 2),
        (7, "GENERATION_OUTCOME_KEPT", "DROP_REASON_UNSPECIFIED", 1),
        (8, "GENERATION_OUTCOME_FAILED", "DROP_REASON_UNSPECIFIED", 1),
        (9, "GENERATION_OUTCOME_DROPPED", "DROP_REASON_ANSWERED_BY_QUESTION", 1),
        (10, "GENERATION_OUTCOME_DROPPED", "DROP_REASON_EXCERPT_TOO_LONG", 1),
    ]
    problems = {o.passage_number: o.problem for o in generation.outcomes}
    assert problems[4] == ("a near-duplicate (cosine 1.00) of passage 1's question 'Which river flows past Harwick?'")
    assert problems[6] == ("no usable reply after 2 attempts (unusable reply: not JSON (unreadable at character 0))")
    assert (
        problems[8]
        == f"the LLM (fake at {fake.base_url}) answered HTTP 500 (an error on its side); its reply is in the service log"
    )
    assert problems[10] == f"an excerpt is {len(LONG)} characters long, over {question_prompt.MAX_EXCERPT_CHARS}"
    assert problems[3].startswith("the excerpt 'The mayor owns three purple elephants.' is not in the document")
    # asked = kept + dropped by reason + failed: nothing is silently left out of the count.
    dropped = {G.DropReason.Name(d.reason): d.count for d in generation.dropped}
    assert dropped == {
        "DROP_REASON_EXCERPT_NOT_FOUND": 1,
        "DROP_REASON_DUPLICATE": 1,
        "DROP_REASON_ANSWERED_BY_QUESTION": 1,
        "DROP_REASON_EXCERPT_TOO_LONG": 1,
    }
    assert (generation.asked, generation.kept, generation.failed) == (10, 4, 2)
    assert generation.state == G.GENERATION_STATE_SUCCEEDED and generation.usage.llm_calls == 12
    assert [c["behaviour"] for c in fake.calls] == fake_behaviours()
    assert fake.calls[0]["body"]["response_format"]["type"] == "json_schema"

    stored = stub.GetQuestionSet(
        G.GetQuestionSetRequest(question_set_id=generation.question_set_id), timeout=DEADLINE_S
    )
    assert stored.name == "harwick" and stored.question_count == 4
    assert [q.text for q in stored.questions] == [
        "Which river flows past Harwick?",
        "How often does the island ferry sail?",
        "When does the library open on weekdays?",
        "When is the farmers' market held?",
    ]
    spans = [[(r.start_char, r.end_char, r.content) for r in q.references] for q in stored.questions]
    snapped = FERRY.removesuffix(".")
    assert spans == [
        [(TEXT.index(RIVER), TEXT.index(RIVER) + len(RIVER), RIVER)],
        [(TEXT.index(snapped), TEXT.index(snapped) + len(snapped), snapped)],
        [(TEXT.index(LIBRARY), TEXT.index(LIBRARY) + len(LIBRARY), LIBRARY)],
        [(TEXT.index(MARKET), TEXT.index(MARKET) + len(MARKET), MARKET)],
    ]
    assert stored.provenance == G.QuestionSetProvenance(
        origin="generated",
        generation_id=generation.generation_id,
        generator_model=f"fake at {fake.base_url}",
        prompt_version=question_prompt.prompt_version(),
        seed=7,
        document_hashes={"d-1": "h1"},
        questions_requested=10,
        embedding_model=HashedProvider.name,
        duplicate_similarity=DUPLICATE_SIMILARITY,
        code_version="test",
    )
    assert (
        stub.GetGeneration(G.GetGenerationRequest(generation_id=generation.generation_id), timeout=DEADLINE_S)
        == generation
    )
    assert generation.request.generator_model == G.ModelEndpoint(base_url=fake.base_url, model="fake")
    assert SECRET not in str(events)


def fake_behaviours() -> list[str]:
    return ["good"] * 8 + ["rate_limit", "good", "error", "error", "good", "good"]


def test_a_dry_run_estimates_and_calls_nothing(evaluator, fake):
    stub, _ = evaluator
    events = generate(stub, fake, 3, dry_run=True)
    assert len(events) == 1 and events[0].estimate.llm_calls == 3 and events[0].estimate.prompt_tokens > 0
    assert "unknown price for model 'fake': its calls are counted as $0" in events[0].estimate.notes
    assert fake.calls == []


def good_replies(messages, model) -> str:
    """A question on the passage it is given, the whole passage its excerpt."""
    passage = messages[-1]["content"].split('"""')[1].strip()
    return reply(f"What does the text say after {' '.join(passage.split()[:2])}?", "", passage)


def test_a_generation_whose_call_ends_keeps_what_is_done_and_resumes_the_rest(evaluator, fake):
    stub, peers = evaluator
    fake.responder = good_replies
    request = G.GenerateQuestionSetRequest(
        document_ids=["d-1"],
        question_count=6,
        seed=3,
        generator_model=G.ModelEndpoint(base_url=fake.base_url, model="fake"),
    )
    call = stub.GenerateQuestionSet(request, timeout=DEADLINE_S)
    first = next(e for e in call if e.HasField("progress") and e.progress.passages_done == 2)
    call.cancel()
    generation_id = first.progress.generation_id
    get = lambda: stub.GetGeneration(G.GetGenerationRequest(generation_id=generation_id), timeout=DEADLINE_S)  # noqa: E731
    wait_for(lambda: get().state == G.GENERATION_STATE_INTERRUPTED, "the generation to be interrupted")
    done_before = len(get().outcomes)
    assert 2 <= done_before < 6 and len(fake.calls) == done_before

    peers.hash = "h2"  # the document changed: the passages would differ
    changed = G.GenerateQuestionSetRequest(resume_generation_id=generation_id)
    assert status_of(lambda: list(stub.GenerateQuestionSet(changed, timeout=DEADLINE_S))) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "harwick.md changed since the generation started; start a new generation",
    )
    peers.hash = "h1"
    events = list(stub.GenerateQuestionSet(changed, timeout=DEADLINE_S))
    assert events[0].estimate.passages_done == done_before and events[0].estimate.llm_calls == 6 - done_before
    generation = events[-1].generation
    assert [o.passage_number for o in generation.outcomes] == [1, 2, 3, 4, 5, 6]
    assert len(fake.calls) == 6  # no passage asked twice
    assert generation.asked == 6 == generation.kept + sum(d.count for d in generation.dropped) + generation.failed
    assert generation.state == G.GENERATION_STATE_SUCCEEDED and generation.provenance.seed == 3
    assert generation.request.name == "generated from harwick.md"

    again = G.GenerateQuestionSetRequest(resume_generation_id=generation_id)
    assert status_of(lambda: list(stub.GenerateQuestionSet(again, timeout=DEADLINE_S))) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        f"generation {generation_id} is succeeded; only an interrupted generation resumes",
    )


@pytest.mark.parametrize(
    "fields, code, message",
    [
        (
            {"document_ids": []},
            grpc.StatusCode.INVALID_ARGUMENT,
            "name the documents to generate questions from (document_ids)",
        ),
        ({"question_count": 0}, grpc.StatusCode.INVALID_ARGUMENT, "question_count must be between 1 and 500, got 0"),
        ({"document_ids": ["d-9"]}, grpc.StatusCode.NOT_FOUND, "no document d-9"),
        (
            {"document_ids": ["d-empty"]},
            grpc.StatusCode.INVALID_ARGUMENT,
            "there is no text to ask questions about in empty.md",
        ),
        (
            {"generator_model": G.ModelEndpoint()},
            grpc.StatusCode.FAILED_PRECONDITION,
            "no model to write the questions: choose the model that writes them (its base URL and model name), "
            "or configure one for the stack with CHUNKLAB_LLM_BASE_URL and CHUNKLAB_LLM_MODEL",
        ),
    ],
)
def test_a_generation_that_cannot_start_says_why(evaluator, fake, fields, code, message):
    stub, _ = evaluator
    request = G.GenerateQuestionSetRequest(
        document_ids=["d-1"], question_count=3, generator_model=G.ModelEndpoint(base_url=fake.base_url, model="fake")
    )
    for key, value in fields.items():
        if isinstance(value, list):
            del getattr(request, key)[:]
            getattr(request, key).extend(value)
        elif key == "generator_model":
            request.generator_model.CopyFrom(value)
        else:
            setattr(request, key, value)
    assert status_of(lambda: list(stub.GenerateQuestionSet(request, timeout=DEADLINE_S))) == (code, message)
    assert fake.calls == []


def test_an_endpoint_that_refuses_the_schema_is_asked_with_a_plainer_format(evaluator, fake):
    stub, _ = evaluator
    fake.script = ["bad_request", "bad_request", "bad_request", "good"]
    scripted(fake, [reply("Which river flows past Harwick?", "The Alder", RIVER)])
    generation = generate(stub, fake, 1)[-1].generation
    assert (generation.kept, generation.outcomes[0].attempts) == (1, 1)
    formats = [c["body"].get("response_format") or {} for c in fake.calls]
    assert [(f.get("type"), "schema" in f) for f in formats] == [
        ("json_schema", False),
        ("json_object", True),  # llama-cpp-python's form: a grammar from the schema
        ("json_object", False),
        (None, False),
    ]
    scripted(fake, [reply("Which town lies at the mouth?", "Harwick", RIVER)])
    generate(stub, fake, 1)
    assert "response_format" not in fake.calls[-1]["body"]  # the refusals are remembered for this endpoint


@pytest.mark.parametrize(
    "behaviour, calls, problem",
    [
        ("slow", 2, f"did not answer within {TIMEOUT_S:g}s"),
        (
            "garbage",
            2,
            "no usable reply after 2 attempts (the LLM (fake at {url}) gave an unusable reply "
            "(not a chat completion); its reply is in the service log)",
        ),
    ],
)
def test_a_model_that_times_out_or_sends_garbage_is_a_counted_failure_and_no_empty_set(
    evaluator, fake, behaviour, calls, problem
):
    stub, _ = evaluator
    fake.behaviour = behaviour
    fake.delay_s = 2 * TIMEOUT_S
    events = generate(stub, fake, 1)
    generation = events[-1].generation
    assert (generation.asked, generation.kept, generation.failed) == (1, 0, 1)
    assert problem.format(url=fake.base_url) in generation.outcomes[0].problem and len(fake.calls) == calls
    assert generation.state == G.GENERATION_STATE_FAILED and generation.question_set_id == ""
    assert generation.error == "none of the 1 questions asked was kept (see each passage's outcome); no set was stored"


def test_a_generation_a_restart_left_running_is_marked_interrupted(evaluator, fake, database_url):
    stub, peers = evaluator
    fake.responder = good_replies
    generation = generate(stub, fake, 2)[-1].generation
    repository = Repository(make_sessionmaker(database_url, Base))
    generation.state = G.GENERATION_STATE_RUNNING  # as a process killed mid-generation left it
    repository.save_generation(generation)
    deps = RunnerDeps(
        repository=repository,
        peers=peers,
        provider_for=lambda name: HashedProvider(),
        defaults=ModelDefaults("", "", "", TIMEOUT_S, 1),
        default_embedding_model=HashedProvider.name,
        code_version="test",
    )
    EvaluatorService(deps, max_upload_bytes=1_000_000, report_piece_bytes=1 << 20).recover()
    stored = repository.generation(generation.generation_id)
    assert stored.state == G.GENERATION_STATE_INTERRUPTED
    assert stored.error == "interrupted: the evaluator restarted; finished passages are kept, resume it"


def test_the_question_count_limit_is_published_as_enforced(evaluator, fake):
    stub, _ = evaluator
    limits = stub.GetEvaluatorLimits(G.GetEvaluatorLimitsRequest(), timeout=DEADLINE_S)
    assert limits.max_question_count == 500
    request = G.GenerateQuestionSetRequest(
        document_ids=["d-1"],
        question_count=limits.max_question_count + 1,
        generator_model=G.ModelEndpoint(base_url=fake.base_url, model="fake"),
    )
    assert status_of(lambda: list(stub.GenerateQuestionSet(request, timeout=DEADLINE_S))) == (
        grpc.StatusCode.INVALID_ARGUMENT,
        f"question_count must be between 1 and {limits.max_question_count}, got {limits.max_question_count + 1}",
    )
