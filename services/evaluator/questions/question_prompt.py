"""What a generator is asked for one passage, and how its reply is read.

The reply is asked for as structured JSON (response_format in the forms
chunklab.llm_json tries, plain instructions where an endpoint refuses them all)
and read defensively: a ```json fence, prose around the object, a list of
objects, other key names and excerpts given as objects are all tolerated;
what has no question in it is an UnusableReply (a reply cut at MAX_TOKENS says so). The prompt version is a name
plus the hash of the prompt texts, so a changed prompt never passes for the
old one in a set's provenance.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from chunklab.llm_json import UnreadableJson, read_json
from chunklab.rpc.limits import TEXT_CHARS
from chunklab.text import sentences

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
        "question": {"type": "string", "maxLength": 400},
        "answer": {"type": "string", "maxLength": 400},
        "excerpts": {"type": "array", "items": {"type": "string", "maxLength": MAX_EXCERPT_CHARS}, "maxItems": 3},
    },
    "required": ["question", "answer", "excerpts"],
    "additionalProperties": False,
}

SCHEMA_NAME = "generated_question"


def schema(passage: str) -> dict:
    """SCHEMA with each excerpt one of the passage's sentences (an enum), so a grammar-constrained
    model copies them character for character (ADR 0136); a passage without sentences keeps SCHEMA."""
    found = dict.fromkeys(x.strip() for x in sentences.sentences(passage))
    choices = [c for c in found if c and len(c) <= MAX_EXCERPT_CHARS and c in passage]
    if not choices:
        return SCHEMA
    items = {"type": "string", "enum": choices}
    excerpts = {**SCHEMA["properties"]["excerpts"], "items": items}
    return {**SCHEMA, "properties": {**SCHEMA["properties"], "excerpts": excerpts}}


# Rough size of a reply, in tokens, for estimates.
COMPLETION_TOKENS = 150
MAX_TOKENS = 800

_QUESTION_KEYS = ("question", "text", "query")
_ANSWER_KEYS = ("answer", "expected_answer", "reference_answer")
_EXCERPT_KEYS = ("excerpts", "excerpt", "references", "quotes", "evidence")


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


def _object(text: str, finish_reason: str = ""):
    try:
        return read_json(text, finish_reason, MAX_TOKENS)
    except UnreadableJson as exc:
        raise UnusableReply(str(exc)) from None


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


def parse_reply(text: str, finish_reason: str = "") -> Draft:
    """The question, answer and excerpts in a reply, or UnusableReply saying what is wrong."""
    data = _object(text, finish_reason)
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
