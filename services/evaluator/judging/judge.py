"""LLM-as-judge: four measures, each from its own short prompt.

Replies must be one JSON object with exactly the keys asked for, the score an
integer in range and the reason a short string. The reply is asked for through
response_format with each measure's JSON schema where the endpoint takes it
(chunklab.llm_json, ADR 0136), and read where a model wraps it in a code fence
or prose. A reply that still cannot be read (or a call that fails) is retried
with backoff; when the attempts run out the measure is recorded as not
measured, with the last problem as its reason: never 0, never NaN (ADR 0137). Every score carries the prompt version, a name plus the
hash of the prompt texts, so a changed prompt never passes for the old one.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from chunklab.llm import ChatClient, LLMError
from chunklab.llm_json import UnreadableJson, complete_json, read_json
from chunklab.v1 import evaluator_pb2

PROMPT_NAME = "judge-v1"
MAX_REASON_CHARS = 400

SYSTEM = (
    "You are a strict evaluator of a retrieval-augmented question answering system. "
    "Reply with one JSON object and nothing else."
)

PROMPTS: dict[str, str] = {
    "context_relevance": (
        "Rate how relevant the retrieved context is to the question, from 1 (unrelated) to 10 "
        "(everything needed to answer it, little else).\n\n"
        "Question:\n{question}\n\nRetrieved context:\n{context}\n\n"
        'Reply as {{"score": <integer 1-10>, "reason": "<one short sentence>"}}.'
    ),
    "answer_similarity": (
        "Rate how close the answer is to the expected answer in meaning, from 1 (unrelated or "
        "contradicting) to 10 (the same facts).\n\n"
        "Question:\n{question}\n\nExpected answer:\n{expected}\n\nAnswer:\n{answer}\n\n"
        'Reply as {{"score": <integer 1-10>, "reason": "<one short sentence>"}}.'
    ),
    "faithfulness": (
        "Rate how well every claim of the answer is supported by the retrieved context, from 1 "
        "(not at all) to 10 (fully supported).\n\n"
        "Retrieved context:\n{context}\n\nAnswer:\n{answer}\n\n"
        'Reply as {{"score": <integer 1-10>, "reason": "<one short sentence>"}}.'
    ),
    "hallucination": (
        "Does the answer contain any claim that the retrieved context does not support?\n\n"
        "Retrieved context:\n{context}\n\nAnswer:\n{answer}\n\n"
        'Reply as {{"hallucination": "yes" or "no", "reason": "<one short sentence>"}}.'
    ),
}
MEASURES = tuple(PROMPTS)
# Tokens a judge reply may take: one short JSON object; the schema bounds its reason
# well under that, so a grammar-constrained reply closes its JSON before the limit.
MAX_TOKENS = 200
SCHEMA_REASON_CHARS = 200


def schema(measure: str) -> dict:
    """The JSON schema of a measure's reply: the score one of 1..10 (an enum, which
    grammar-constrained servers enforce), or "yes"/"no"; a bounded reason."""
    key = "hallucination" if measure == "hallucination" else "score"
    if key == "hallucination":
        value = {"type": "string", "enum": ["yes", "no"]}
    else:
        value = {"type": "integer", "enum": list(range(1, 11))}
    return {
        "type": "object",
        "properties": {key: value, "reason": {"type": "string", "minLength": 1, "maxLength": SCHEMA_REASON_CHARS}},
        "required": [key, "reason"],
        "additionalProperties": False,
    }


def prompt_version() -> str:
    """judge-v1 plus the first 12 hex digits of sha256 over the system and metric prompts
    and the reply schemas (a judge asked through response_format is asked differently)."""
    schemas = {measure: schema(measure) for measure in MEASURES}
    text = json.dumps({"system": SYSTEM, "prompts": PROMPTS, "schemas": schemas}, sort_keys=True)
    return f"{PROMPT_NAME}+{hashlib.sha256(text.encode()).hexdigest()[:12]}"


class UnusableReply(ValueError):
    """A judge reply that does not follow the asked-for format."""


def parse_reply(measure: str, text: str, finish_reason: str = "") -> tuple[float, str]:
    """The (value, reason) in a judge reply, or UnusableReply saying what is wrong.

    The JSON object may sit in a code fence or amid prose (chunklab.llm_json);
    the object itself is strict: exactly the keys asked for, an integer score
    1..10 (hallucination: "yes"/"no", recorded as 1/0), a non-empty string reason.
    """
    try:
        data = read_json(text, finish_reason, MAX_TOKENS)
    except UnreadableJson as exc:
        raise UnusableReply(str(exc)) from None
    if not isinstance(data, dict):
        raise UnusableReply(f"a JSON {type(data).__name__}, not an object")
    key = "hallucination" if measure == "hallucination" else "score"
    if set(data) != {key, "reason"}:
        raise UnusableReply(f"keys {sorted(data)}, expected exactly {sorted([key, 'reason'])}")
    reason = data["reason"]
    if not isinstance(reason, str) or not reason.strip():
        raise UnusableReply("the reason is not a non-empty string")
    reason = reason.strip()
    if len(reason) > MAX_REASON_CHARS:
        reason = reason[: MAX_REASON_CHARS - 1] + "…"
    value = data[key]
    if measure == "hallucination":
        if not isinstance(value, str) or value.strip().lower() not in ("yes", "no"):
            raise UnusableReply(f'hallucination must be "yes" or "no", got {value!r}')
        return (1.0 if value.strip().lower() == "yes" else 0.0), reason
    if isinstance(value, bool) or not isinstance(value, int):
        raise UnusableReply(f"the score must be an integer, got {value!r}")
    if not 1 <= value <= 10:
        raise UnusableReply(f"the score must be between 1 and 10, got {value}")
    return float(value), reason


@dataclass
class JudgeInput:
    question: str
    context: str
    answer: str
    expected: str  # empty: no expected answer


@dataclass
class JudgeOutcome:
    scores: evaluator_pb2.JudgeScores
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    elapsed_ms: float = 0.0
    problems: list[str] = field(default_factory=list)


def not_measured(reason: str) -> evaluator_pb2.Score:
    return evaluator_pb2.Score(measured=False, value=0.0, reason=reason)


class Judge:
    """Scores one answered question with an OpenAI-compatible chat model.

    attempts: calls per measure before it is recorded as not measured.
    backoff_s: first pause between attempts, doubled after each.
    """

    def __init__(
        self,
        client: ChatClient,
        *,
        attempts: int = 3,
        backoff_s: float = 0.5,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._client = client
        self._attempts = max(1, attempts)
        self._backoff_s = backoff_s
        self._sleep = sleep

    @property
    def model(self) -> str:
        return self._client.endpoint.model

    def score(self, item: JudgeInput) -> JudgeOutcome:
        started = time.perf_counter()
        outcome = JudgeOutcome(
            scores=evaluator_pb2.JudgeScores(judge_model=self.model, prompt_version=prompt_version())
        )
        for measure in MEASURES:
            if measure == "answer_similarity" and not item.expected.strip():
                score = not_measured("the question has no expected answer")
            else:
                score = self._measure(measure, item, outcome)
            getattr(outcome.scores, measure).CopyFrom(score)
        outcome.elapsed_ms = (time.perf_counter() - started) * 1e3
        return outcome

    def _measure(self, measure: str, item: JudgeInput, outcome: JudgeOutcome) -> evaluator_pb2.Score:
        prompt = PROMPTS[measure].format(
            question=item.question, context=item.context, answer=item.answer, expected=item.expected
        )
        messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}]
        problem = ""
        for attempt in range(self._attempts):
            if attempt:
                self._sleep(self._backoff_s * 2 ** (attempt - 1))
            outcome.calls += 1
            try:
                reply = complete_json(
                    self._client, messages, name=f"judge_{measure}", schema=schema(measure), max_tokens=MAX_TOKENS
                ).result
            except LLMError as exc:
                problem = str(exc)
                continue
            outcome.prompt_tokens += reply.prompt_tokens
            outcome.completion_tokens += reply.completion_tokens
            try:
                value, reason = parse_reply(measure, reply.text, reply.finish_reason)
            except UnusableReply as exc:
                problem = f"unusable judge reply: {exc}"
                continue
            return evaluator_pb2.Score(measured=True, value=value, reason=reason)
        outcome.problems.append(f"{measure}: {problem}")
        return not_measured(f"not measured after {self._attempts} attempts: {problem}")
