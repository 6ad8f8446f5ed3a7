"""Question sets generated from documents (ADR 0059).

Passages are sampled across each document (every part of it, the same ones
for the same seed); each is asked for one question with its expected answer
and exact excerpts. A question is kept when its excerpts are located in the
canonical text (exactly, or snapped from a close span by chunklab.text.excerpts)
and dropped, with the reason, when they are not, when an excerpt is too long
to be a reference or occurs in the question itself, or when it is a
near-duplicate (by embeddings) of a question kept before it. A model that
fails (429, 5xx, timeout: retried by the openai client; a reply that is not
usable JSON: asked again) is a failed passage, never one left out of the
count: asked = kept + dropped + failed.

Each finished passage is saved at once; a generation whose call ends is
interrupted, and a resume asks only the passages not done.
"""

from __future__ import annotations

import logging
import random
import re
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from chunklab.errors import Cancelled, FailedPrecondition, InvalidArgument, ServiceError
from chunklab.llm import ChatClient, ChatEndpoint, LLMError
from chunklab.llm_json import complete_json
from chunklab.metrics import cosine
from chunklab.rpc.limits import quoted
from chunklab.text import excerpts, tokens
from chunklab.timeutil import to_proto, utcnow
from chunklab.v1 import common_pb2, evaluator_pb2
from services.evaluator.deps import RunnerDeps
from services.evaluator.judging import models, pricing
from services.evaluator.leases import Leases, Renewer
from services.evaluator.limits import LIMITS
from services.evaluator.questions import question_prompt, question_sets

log = logging.getLogger("chunklab.evaluator")

# Characters of text a passage gives the model.
PASSAGE_CHARS = 1500
# Cosine similarity of two questions' embeddings from which the later one is a duplicate.
DUPLICATE_SIMILARITY = 0.9
NO_GENERATOR = "none"

G = evaluator_pb2
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Passage:
    number: int  # 1-based, in sampling order
    document_id: str
    start: int
    end: int


def allocate(lengths: list[int], count: int) -> list[int]:
    """Questions per document, in proportion to their lengths (largest remainders)."""
    total = sum(lengths)
    if total == 0:
        return [0] * len(lengths)
    shares = [count * n / total for n in lengths]
    out = [int(s) for s in shares]
    for i in sorted(range(len(lengths)), key=lambda i: (out[i] - shares[i], i))[: count - sum(out)]:
        out[i] += 1
    return out


def sample_passages(texts: list[tuple[str, str]], count: int, seed: int) -> list[Passage]:
    """`count` passages over the documents (id, text): each document cut into as many
    equal strata as it gets questions, one passage of up to PASSAGE_CHARS at a
    seeded place in each (the whole stratum when it is shorter)."""
    passages: list[Passage] = []
    for (document_id, text), n in zip(texts, allocate([len(t) for _, t in texts], count)):
        rng = random.Random(f"{seed}/{document_id}")
        for i in range(n):
            lo, hi = i * len(text) // n, (i + 1) * len(text) // n
            size = min(PASSAGE_CHARS, hi - lo)  # passages never overlap: short strata are asked whole
            start = lo + rng.randrange(hi - lo - size + 1)
            start, end = excerpts.snap(text, start, start + size)
            passages.append(Passage(len(passages) + 1, document_id, start, end))
    return passages


def _normal(text: str) -> str:
    return _SPACE.sub(" ", text).strip().casefold()


def tally(generation: evaluator_pb2.Generation, outcome: evaluator_pb2.PassageOutcome) -> None:
    generation.asked += 1
    if outcome.outcome == G.GENERATION_OUTCOME_KEPT:
        generation.kept += 1
    elif outcome.outcome == G.GENERATION_OUTCOME_FAILED:
        generation.failed += 1
    else:
        for count in generation.dropped:
            if count.reason == outcome.drop_reason:
                count.count += 1
                return
        generation.dropped.add(reason=outcome.drop_reason, count=1)


class _Run:
    """One generation's calls: its client and its usage. The reply is asked for in the most
    precise response_format the endpoint takes (chunklab.llm_json remembers its refusals)."""

    def __init__(self, endpoint: ChatEndpoint, attempts: int, usage: common_pb2.TokenUsage) -> None:
        self.client = ChatClient(endpoint)
        self.attempts = attempts
        self.usage = usage

    def ask(self, document: str, passage: str) -> tuple[question_prompt.Draft | None, int, str]:
        """(the draft or None, calls made, the last problem)."""
        messages = question_prompt.messages(document, passage)
        calls, problem = 0, ""
        while calls < self.attempts:
            calls += 1
            self.usage.llm_calls += 1
            try:
                reply = complete_json(
                    self.client,
                    messages,
                    name=question_prompt.SCHEMA_NAME,
                    schema=question_prompt.schema(passage),
                    max_tokens=question_prompt.MAX_TOKENS,
                ).result
            except LLMError as exc:
                if exc.unusable:  # a 200 that is no chat completion: asked again
                    problem = str(exc)
                    continue
                return None, calls, str(exc)  # 429, 5xx and timeouts were retried by the client already
            self.usage.prompt_tokens += reply.prompt_tokens
            self.usage.completion_tokens += reply.completion_tokens
            self.usage.estimated_cost_usd += pricing.cost_usd(
                self.client.endpoint.model, reply.prompt_tokens, reply.completion_tokens
            )
            try:
                return question_prompt.parse_reply(reply.text, reply.finish_reason), calls, ""
            except question_prompt.UnusableReply as exc:
                problem = f"unusable reply: {exc}"
        return None, calls, f"no usable reply after {calls} attempts ({problem})"


class Generator:
    def __init__(self, deps: RunnerDeps, leases: Leases) -> None:
        """leases: where this replica claims the generations it runs (ADR 0153), renewed while
        they run; one whose lease is lost stops at its next passage."""
        self._deps = deps
        self._repo = deps.repository
        self._lock = threading.Lock()
        self._active: dict[str, threading.Event] = {}  # running here: id -> its stop
        self._leases = leases
        self._renewer = Renewer(leases, lambda: set(self._active), self._stop_leased)

    def _stop_leased(self, generation_id: str, why: str) -> None:
        """The renewer's word on a generation running here: its lease was lost to another replica."""
        with self._lock:
            stop = self._active.get(generation_id)
        if stop is not None:
            log.warning("generation %s stops: its lease was %s", generation_id, why)
            stop.set()

    def close(self) -> None:
        self._renewer.close()

    def recover(self) -> None:
        """Generations a previous process left running are interrupted: a resume continues them.
        One another live replica holds the lease of is left alone: it runs there."""
        for generation_id in self._repo.generation_ids_in_state(G.GENERATION_STATE_RUNNING):
            lease = self._leases.elsewhere(generation_id)
            if lease is not None:
                log.info("generation %s runs on evaluator replica %s", generation_id, lease.replica)
                continue
            self._leases.release(generation_id)
            generation = self._repo.generation(generation_id)
            generation.state = G.GENERATION_STATE_INTERRUPTED
            generation.error = "interrupted: the evaluator restarted; finished passages are kept, resume it"
            self._repo.save_generation(generation)

    def get(self, generation_id: str) -> evaluator_pb2.Generation:
        generation = self._repo.generation(generation_id)
        generation.outcomes.extend(self._repo.outcomes(generation_id))
        return generation

    # -- planning ---------------------------------------------------------------

    def _request(self, request: evaluator_pb2.GenerateQuestionSetRequest):
        """(the request to run, the stored generation or None, its finished outcomes)."""
        if not request.resume_generation_id:
            if not request.document_ids:
                raise InvalidArgument("name the documents to generate questions from (document_ids)")
            if not 1 <= request.question_count <= LIMITS.max_question_count:
                raise InvalidArgument(
                    f"question_count must be between 1 and {LIMITS.max_question_count}, got {request.question_count}"
                )
            return request, None, []
        generation = self._repo.generation(request.resume_generation_id)
        with self._lock:
            if generation.generation_id in self._active:
                raise FailedPrecondition(f"generation {generation.generation_id} is running now; nothing to resume")
        self._leases.check_free(generation.generation_id)  # running on another replica
        if generation.state not in (G.GENERATION_STATE_INTERRUPTED, G.GENERATION_STATE_RUNNING):
            raise FailedPrecondition(
                f"generation {generation.generation_id} is "
                f"{G.GenerationState.Name(generation.state).removeprefix('GENERATION_STATE_').lower()}"
                "; only an interrupted generation resumes"
            )
        stored = G.GenerateQuestionSetRequest()
        stored.CopyFrom(generation.request)
        stored.generator_model.api_key = request.generator_model.api_key
        stored.dry_run = request.dry_run
        return stored, generation, self._repo.outcomes(generation.generation_id)

    def _documents(self, request, generation) -> list:
        documents = [self._deps.peers.get_document(d, True) for d in dict.fromkeys(request.document_ids)]
        if generation is not None:
            changed = [
                d.name for d in documents if generation.provenance.document_hashes.get(d.document_id) != d.content_hash
            ]
            if changed:
                raise FailedPrecondition(
                    f"{', '.join(changed)} changed since the generation started; start a new generation"
                )
        return documents

    def estimate(
        self, endpoint: ChatEndpoint, names: dict[str, str], texts: dict[str, str], pending: list[Passage], done: int
    ) -> evaluator_pb2.GenerationEstimate:
        prompt = sum(
            tokens.count(m["content"])
            for p in pending
            for m in question_prompt.messages(names[p.document_id], texts[p.document_id][p.start : p.end])
        )
        completion = question_prompt.COMPLETION_TOKENS * len(pending)
        estimate = G.GenerationEstimate(
            documents=len(texts),
            passages=len(pending) + done,
            llm_calls=len(pending),
            prompt_tokens=prompt,
            completion_tokens=completion,
            passages_done=done,
            estimated_cost_usd=pricing.cost_usd(endpoint.model, prompt, completion),
            notes=["retries (429, 5xx, timeouts, unusable replies) are not counted"],
        )
        if pricing.price_note(endpoint.model):
            estimate.notes.append(pricing.price_note(endpoint.model))
        return estimate

    # -- running ----------------------------------------------------------------

    def generate(
        self, request: evaluator_pb2.GenerateQuestionSetRequest, cancelled: threading.Event | None = None
    ) -> Iterator[evaluator_pb2.GenerationEvent]:
        cancelled = cancelled or threading.Event()
        request, generation, done = self._request(request)
        endpoint = models.resolve(request.generator_model, self._deps.defaults, NO_GENERATOR, field="generator_model")
        if endpoint is None:
            raise FailedPrecondition(
                "no model to write the questions: choose the model that writes them (its base URL and "
                "model name), or configure one for the stack with CHUNKLAB_LLM_BASE_URL and CHUNKLAB_LLM_MODEL"
            )
        documents = self._documents(request, generation)
        texts = {d.document_id: d.text for d in documents}
        names = {d.document_id: d.name for d in documents}
        passages = sample_passages(list(texts.items()), request.question_count, request.seed)
        if not passages:
            raise InvalidArgument(f"there is no text to ask questions about in {', '.join(names.values())}")
        finished = {o.passage_number for o in done}
        pending = [p for p in passages if p.number not in finished]
        yield G.GenerationEvent(estimate=self.estimate(endpoint, names, texts, pending, len(finished)))
        if request.dry_run:
            return
        provider = self._deps.provider_for(request.embedding_model or self._deps.default_embedding_model)
        fresh = generation is None
        if fresh:
            generation = G.Generation(
                generation_id=str(uuid.uuid4()),
                request=request,
                passages_total=len(passages),
                created_at=to_proto(utcnow()),
                provenance=G.QuestionSetProvenance(
                    origin="generated",
                    generator_model=endpoint.describe(),
                    prompt_version=question_prompt.prompt_version(),
                    seed=request.seed,
                    document_hashes={d.document_id: d.content_hash for d in documents},
                    questions_requested=request.question_count,
                    embedding_model=provider.name,
                    duplicate_similarity=DUPLICATE_SIMILARITY,
                    code_version=self._deps.code_version,
                ),
            )
            generation.provenance.generation_id = generation.generation_id
            generation.request.dry_run = False
            generation.request.generator_model.api_key = ""  # never stored, never sent back
            others = f" and {len(documents) - 1} more" if len(documents) > 1 else ""
            generation.request.name = request.name.strip() or f"generated from {documents[0].name}{others}"
        generation.state, generation.error = G.GENERATION_STATE_RUNNING, ""
        with self._lock:
            if generation.generation_id in self._active:
                raise FailedPrecondition(f"generation {generation.generation_id} is running now; nothing to resume")
            self._active[generation.generation_id] = cancelled
        try:
            if fresh:  # a lease names a stored generation
                self._repo.save_generation(generation)
            self._leases.claim(generation.generation_id)  # refused, naming the replica, if it runs elsewhere
        except BaseException:
            with self._lock:
                self._active.pop(generation.generation_id, None)
            raise
        self._renewer.start()
        try:
            self._repo.save_generation(generation)
            yield from self._run(generation, endpoint, provider, names, texts, passages, done, cancelled)
        except BaseException as exc:  # the call ended (GeneratorExit, Cancelled) or a peer failed: resumable
            if generation.state == G.GENERATION_STATE_RUNNING:
                generation.state = G.GENERATION_STATE_INTERRUPTED
                said = getattr(exc, "message", "") or "its call ended"
                generation.error = f"interrupted ({said}); finished passages are kept, resume it"
                self._repo.save_generation(generation)
            raise
        finally:
            with self._lock:
                self._active.pop(generation.generation_id, None)
            self._release(generation.generation_id)

    def _release(self, generation_id: str) -> None:
        try:
            self._leases.release(generation_id)
        except ServiceError as exc:  # e.g. a locked database: the lease runs out by itself
            log.warning("the lease of generation %s was not released: %s", generation_id, exc.message)

    def _run(self, generation, endpoint, provider, names, texts, passages, done, cancelled):
        kept = [o for o in done if o.outcome == G.GENERATION_OUTCOME_KEPT]
        vectors = [provider.embed_query(o.question.text) for o in kept]
        finished = {o.passage_number for o in done}
        run = _Run(endpoint, self._deps.judge_attempts, generation.usage)
        yield self._progress(
            generation,
            f"resumed: {len(finished)} of {len(passages)} passages were done"
            if finished
            else f"started: {len(passages)} passages to ask",
            None,
        )
        for passage in passages:
            if passage.number in finished:
                continue
            if cancelled.is_set():
                raise Cancelled(
                    f"generation {generation.generation_id} stopped with its call after "
                    f"{generation.asked} of {len(passages)} passages; resume_generation_id continues it"
                )
            text = texts[passage.document_id]
            draft, calls, problem = run.ask(names[passage.document_id], text[passage.start : passage.end])
            outcome = G.PassageOutcome(
                passage_number=passage.number,
                document_id=passage.document_id,
                start_char=passage.start,
                end_char=passage.end,
                attempts=calls,
            )
            if draft is None:
                outcome.outcome, outcome.problem = G.GENERATION_OUTCOME_FAILED, problem
            else:
                vector = self._judge(draft, passage, text, outcome, kept, vectors, provider)
                if outcome.outcome == G.GENERATION_OUTCOME_KEPT:
                    kept.append(outcome)
                    vectors.append(vector)
            self._repo.save_outcome(generation.generation_id, outcome)
            done.append(outcome)
            tally(generation, outcome)
            self._repo.save_generation(generation)
            word = G.GenerationOutcome.Name(outcome.outcome).removeprefix("GENERATION_OUTCOME_").lower()
            yield self._progress(
                generation, f"passage {passage.number}/{len(passages)} of {names[passage.document_id]}: {word}", outcome
            )
        self._finish(generation, kept)
        generation.outcomes.extend(sorted(done, key=lambda o: o.passage_number))
        yield G.GenerationEvent(generation=generation)

    def _judge(self, draft, passage: Passage, text: str, outcome, kept, vectors, provider) -> np.ndarray | None:
        """Sets the outcome: kept (with located references) or dropped with its reason."""
        outcome.question.text, outcome.question.expected_answer = draft.question, draft.answer
        outcome.question.metadata["passage"] = str(passage.number)

        def drop(reason: int, problem: str) -> None:
            outcome.outcome, outcome.drop_reason, outcome.problem = G.GENERATION_OUTCOME_DROPPED, reason, problem

        if not draft.excerpts:
            return drop(G.DROP_REASON_NO_EXCERPT, "the reply gave no excerpt")
        long = [e for e in draft.excerpts if len(e) > question_prompt.MAX_EXCERPT_CHARS]
        if long:
            return drop(
                G.DROP_REASON_EXCERPT_TOO_LONG,
                f"an excerpt is {len(long[0])} characters long, over {question_prompt.MAX_EXCERPT_CHARS}",
            )
        margin = question_prompt.MAX_EXCERPT_CHARS
        for excerpt in draft.excerpts:
            found = excerpts.locate(text, excerpt, (passage.start - margin, passage.end + margin))
            if not found.located:
                return drop(
                    G.DROP_REASON_EXCERPT_NOT_FOUND,
                    f"the excerpt {quoted(excerpt, 60)} is not in the document (the closest "
                    f"span is {found.similarity:.0%} alike, under {excerpts.SIMILARITY_THRESHOLD:.0%})",
                )
            outcome.question.references.add(
                document_id=passage.document_id, start_char=found.start, end_char=found.end, content=found.span
            )
        asked = _normal(draft.question)
        if any(_normal(r.content) in asked for r in outcome.question.references):
            return drop(G.DROP_REASON_ANSWERED_BY_QUESTION, "an excerpt occurs in the question itself")
        vector = provider.embed_query(draft.question)
        for other, seen in zip(kept, vectors):
            similarity = cosine(vector, seen)
            if similarity >= DUPLICATE_SIMILARITY:
                return drop(
                    G.DROP_REASON_DUPLICATE,
                    f"a near-duplicate (cosine {similarity:.2f}) of passage {other.passage_number}'s "
                    f"question {quoted(other.question.text, 60)}",
                )
        outcome.outcome = G.GENERATION_OUTCOME_KEPT
        return vector

    def _finish(self, generation: evaluator_pb2.Generation, kept: list) -> None:
        if not kept:
            generation.state = G.GENERATION_STATE_FAILED
            generation.error = (
                f"none of the {generation.asked} questions asked was kept (see each passage's "
                "outcome); no set was stored"
            )
            self._repo.save_generation(generation)
            return
        request = generation.request
        questions = [o.question for o in sorted(kept, key=lambda o: o.passage_number)]
        stored = self._repo.add_question_set(
            request.name, request.description, questions, question_sets.content_hash(questions), generation.provenance
        )
        generation.question_set_id = stored.question_set_id
        generation.state = G.GENERATION_STATE_SUCCEEDED
        self._repo.save_generation(generation)

    @staticmethod
    def _progress(generation: evaluator_pb2.Generation, message: str, outcome) -> evaluator_pb2.GenerationEvent:
        progress = G.GenerationProgress(
            generation_id=generation.generation_id,
            passages_done=generation.asked,
            passages_total=generation.passages_total,
            kept=generation.kept,
            dropped=generation.dropped,
            failed=generation.failed,
            message=message,
        )
        if outcome is not None:
            progress.outcome.CopyFrom(outcome)
        return G.GenerationEvent(progress=progress)
