"""The situating context of Anthropic's Contextual Retrieval, shared by the
contextual strategies: the document and one chunk in, a short context out."""

from __future__ import annotations

from chunklab.llm import LLMError
from services.chunker.strategies.base import ChunkingContext
from services.chunker.strategies.spans import Spans

# Anthropic's prompt (anthropic.com/news/contextual-retrieval), verbatim.
DOCUMENT_PROMPT = "<document>\n{document}\n</document>"
CHUNK_PROMPT = (
    "Here is the chunk we want to situate within the whole document\n"
    "<chunk>\n{chunk}\n</chunk>\n"
    "Please give a short succinct context to situate this chunk within the overall document for the "
    "purposes of improving search retrieval of the chunk. Answer only with the succinct context and "
    "nothing else."
)

# The document part of a prompt is bounded (ADR 0013): the whole document up
# to MAX_DOCUMENT_TOKENS, else its opening HEAD_TOKENS plus a window around
# the chunk, with "[…]" where text was left out.
MAX_DOCUMENT_TOKENS = 8000
HEAD_TOKENS = 1000
GAP = "\n[…]\n"
# Tokens a context may take: Anthropic's are 50-100; a model that rambles on is cut here
# rather than writing to the end of its window (ADR 0138).
CONTEXT_MAX_TOKENS = 150


def document_view(index: Spans, start: int, end: int) -> str:
    """What the LLM sees of the document for the chunk [start, end)."""
    text, total = index.text, index.token_total
    if total <= MAX_DOCUMENT_TOKENS:
        return text
    budget = MAX_DOCUMENT_TOKENS - HEAD_TOKENS
    first, last = index.token_at(start), index.token_at(max(end - 1, start)) + 1
    low = max(HEAD_TOKENS, first - max(budget - (last - first), 0) // 2)
    high = min(total, max(low + budget, last))
    low = max(HEAD_TOKENS, min(low, high - budget))
    head = text[: index.char_at(HEAD_TOKENS)]
    window = text[index.char_at(low) : index.char_at(high)]
    return head + (GAP if low > HEAD_TOKENS else "") + window + (GAP if high < total else "")


def situating_requests(index: Spans, pieces: list[tuple[int, int]]) -> list[list[dict]]:
    return [
        [
            {
                "role": "user",
                "content": DOCUMENT_PROMPT.format(document=document_view(index, a, b))
                + "\n"
                + CHUNK_PROMPT.format(chunk=index.text[a:b]),
            }
        ]
        for a, b in pieces
    ]


def situate(context: ChunkingContext, index: Spans, pieces: list[tuple[int, int]]) -> list[str]:
    """One context per piece. Whatever chat_many raises propagates: the
    strategy fails as a whole. A missing or empty context fails it too, since
    a contextual chunk without its context is never stored."""
    if not pieces:
        return []
    replies = context.chat_many(situating_requests(index, pieces), max_tokens=CONTEXT_MAX_TOKENS)
    if len(replies) != len(pieces):
        raise LLMError(f"asked the LLM for {len(pieces)} contexts, got {len(replies)}")
    contexts = [" ".join((reply or "").split()) for reply in replies]
    empty = [i for i, c in enumerate(contexts) if not c]
    if empty:
        raise LLMError(
            f"the LLM returned an empty context for {len(empty)} of {len(pieces)} chunks (first: chunk {empty[0]})"
        )
    return contexts
