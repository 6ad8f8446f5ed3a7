"""What a generator is asked for one passage, and how its reply is read.

The reply is asked for as structured JSON (response_format json_schema, then
json_object where an endpoint refuses the schema, then plain instructions)
and read defensively: a ```json fence, prose around the object, a list of
objects, other key names and excerpts given as objects are all tolerated;
what has no question in it is an UnusableReply. The prompt version is a name
plus the hash of the prompt texts, so a changed prompt never passes for the
old one in a set's provenance.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass

from chunklab.rpc.limits import TEXT_CHARS

PROMPT_NAME = "questions-v1"

# The longest excerpt a generated question may keep: a reference, not a section.
MAX_EXCERPT_CHARS = 600

SYSTEM = (
    "You write questions for evaluating a search system over a user's documents. "
    "Reply with one JSON object and nothing else."
)

USER = (
    "Write one question that the passage below answers, its expected answer, and the excerpts of "
    "the passage that answer it.\n"
    "- The question makes sense on its own, without the passage, and does not quote the excerpts.\n"
    "- Each excerpt is copied character for character from the passage: a sentence or two, at most "
    "{max_excerpt} characters.\n"
    "- The expected answer is short and follows from the excerpts.\n\n"
    'Passage (from {document}):\n"""\n{passage}\n"""\n\n'
    'Reply as {{"question": "...", "answer": "...", "excerpts": ["..."]}}.'
)

SCHEMA = {
    "type": "object",
    "properties": {
        "question": {"type": "string"},
        "answer": {"type": "string"},
        "excerpts": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["question", "answer", "excerpts"],
    "additionalProperties": False,
}

# Tried in this order; an endpoint that answers 400 to one gets the next.
RESPONSE_FORMATS: tuple[dict | None, ...] = (
    {"type": "json_schema", "json_schema": {"name": "generated_question", "strict": True, "schema": SCHEMA}},
    {"type": "json_object"},
    None,
)

# Rough size of a reply, in tokens, for estimates.
COMPLETION_TOKENS = 150
MAX_TOKENS = 800

_QUESTION_KEYS = ("question", "text", "query")
_ANSWER_KEYS = ("answer", "expected_answer", "reference_answer")
_EXCERPT_KEYS = ("excerpts", "excerpt", "references", "quotes", "evidence")
_FENCE = re.compile(r"```(?:json)?\s*(.*?)\s*```", re.S)


def prompt_version() -> str:
    """questions-v1 plus the first 12 hex digits of sha256 over the prompt texts and schema."""
    text = json.dumps({"system": SYSTEM, "user": USER, "schema": SCHEMA}, sort_keys=True)
    return f"{PROMPT_NAME}+{hashlib.sha256(text.encode()).hexdigest()[:12]}"


def messages(document: str, passage: str) -> list[dict]:
    user = USER.format(max_excerpt=MAX_EXCERPT_CHARS, document=document, passage=passage)
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


class UnusableReply(ValueError):
    """A reply with no question to read in it."""


@dataclass(frozen=True)
class Draft:
    question: str
    answer: str
    excerpts: list[str]


def _object(text: str):
    body = text.strip()
    fenced = _FENCE.search(body)
    if fenced:
        body = fenced.group(1)
    try:
        return json.loads(body)
    except json.JSONDecodeError as exc:
        first = body.find("{")
        if first < 0:
            raise UnusableReply(f"not JSON (unreadable at character {exc.pos})") from None
        try:
            return json.JSONDecoder().raw_decode(body[first:])[0]
        except json.JSONDecodeError as inner:
            raise UnusableReply(f"not JSON (unreadable at character {first + inner.pos})") from None


def _first(data: dict, keys: tuple[str, ...]):
    for key in keys:
        if data.get(key) not in (None, ""):
            return data[key]
    return None


def _excerpts(value) -> list[str]:
    items = value if isinstance(value, list) else [value] if value is not None else []
    out = []
    for item in items:
        if isinstance(item, dict):
            item = _first(item, ("content", "text", "excerpt", "quote"))
        if isinstance(item, str) and item.strip():
            out.append(item.strip())
    return out


def parse_reply(text: str) -> Draft:
    """The question, answer and excerpts in a reply, or UnusableReply saying what is wrong."""
    data = _object(text)
    if isinstance(data, list):
        data = next((item for item in data if isinstance(item, dict)), None)
        if data is None:
            raise UnusableReply("a JSON list without an object in it")
    if not isinstance(data, dict):
        raise UnusableReply(f"a JSON {type(data).__name__}, not an object")
    question = _first(data, _QUESTION_KEYS)
    if not isinstance(question, str) or not question.strip():
        raise UnusableReply(f"no question in it (keys {sorted(data)})")
    if len(question) > TEXT_CHARS:
        raise UnusableReply(f"a question of {len(question):,} characters, over the {TEXT_CHARS:,} a question may have")
    answer = _first(data, _ANSWER_KEYS)
    return Draft(
        question.strip(), answer.strip() if isinstance(answer, str) else "", _excerpts(_first(data, _EXCERPT_KEYS))
    )
