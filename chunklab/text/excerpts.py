"""Locating a reference excerpt in a document's canonical text: the one owner
of "where does this excerpt occur", for question-set imports and for
generated questions alike (ADR 0059).

Exact first (the first occurrence, or the one nearest a hint). Otherwise the
closest span by fuzzy matching (rapidfuzz's partial_ratio_alignment, which
slides a window of the excerpt's length over the text), widened to whole
words and trimmed of surrounding whitespace, so that what is stored is an
exact span of the text: `text[start:end] == span`. Its similarity (0..1, the
normalized Levenshtein ratio of excerpt and span, whitespace runs as one
space) says whether it counts as located.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rapidfuzz import fuzz

# A fuzzy span at least this similar to its excerpt is located (snapped to the span);
# below it the excerpt is not found, and the span is only a suggestion.
SIMILARITY_THRESHOLD = 0.85

_SPACE = re.compile(r"\s+")
_WORD = re.compile(r"\w+")
# Candidate word edges on each side, nearest first, when a fuzzy span is refined
# (every pair is compared: 12 x 12 ratios of excerpt-sized strings, a millisecond or two).
_MAX_EDGES = 12


@dataclass(frozen=True)
class Located:
    """Where an excerpt is, or the closest span to it.

    `span` is `text[start:end]`, the exact text to store (or to put in the file
    as the suggested fix); `exact` when the excerpt occurs as it is."""

    start: int
    end: int
    span: str
    similarity: float
    exact: bool

    @property
    def located(self) -> bool:
        return self.exact or self.similarity >= SIMILARITY_THRESHOLD


def similarity(excerpt: str, span: str) -> float:
    """0..1: how alike two texts are, whitespace runs read as one space."""
    a, b = _SPACE.sub(" ", excerpt).strip(), _SPACE.sub(" ", span).strip()
    if not a and not b:
        return 1.0
    return fuzz.ratio(a, b) / 100.0


def _word_start(text: str, i: int) -> int:
    while i > 0 and text[i - 1].isalnum() and text[i].isalnum():
        i -= 1
    return i


def _word_end(text: str, i: int) -> int:
    while i < len(text) and i > 0 and text[i - 1].isalnum() and text[i].isalnum():
        i += 1
    return i


def snap(text: str, start: int, end: int) -> tuple[int, int]:
    """The range widened to whole words (a word cut at either edge is taken whole)
    and trimmed of whitespace at both ends."""
    start, end = max(0, start), min(len(text), end)
    if start < len(text):
        start = _word_start(text, start)
    end = _word_end(text, end)
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def locate(text: str, excerpt: str, window: tuple[int, int] | None = None) -> Located | None:
    """The excerpt's exact span, else its closest fuzzy span snapped to words;
    None for an empty excerpt or text. `window` (a generator's passage) is
    searched first, exactly then fuzzily; the whole text after it."""
    if not excerpt.strip() or not text:
        return None
    lo, hi = window if window is not None else (0, len(text))
    lo, hi = max(0, lo), min(len(text), hi)
    start = text.find(excerpt, lo, hi) if window is not None else -1
    if start < 0:
        start = text.find(excerpt)
    if start >= 0:
        return Located(start, start + len(excerpt), excerpt, 1.0, True)
    best = _fuzzy(text, excerpt, lo, hi)
    if window is not None and not best.located:
        anywhere = _fuzzy(text, excerpt, 0, len(text))
        best = anywhere if anywhere.similarity > best.similarity else best
    return best


def _fuzzy(text: str, excerpt: str, lo: int, hi: int) -> Located:
    part = text[lo:hi]
    if len(excerpt) >= len(part):
        start, end = lo, hi
    else:
        # Case is folded where that keeps offsets (one character for one).
        folded_part, folded_excerpt = part.lower(), excerpt.lower()
        if len(folded_part) != len(part) or len(folded_excerpt) != len(excerpt):
            folded_part, folded_excerpt = part, excerpt
        alignment = fuzz.partial_ratio_alignment(folded_excerpt, folded_part)
        start, end = lo + alignment.dest_start, lo + alignment.dest_end
    start, end = _refine(text, excerpt, *snap(text, start, end))
    span = text[start:end]
    return Located(start, end, span, similarity(excerpt, span), False)


def _refine(text: str, excerpt: str, start: int, end: int) -> tuple[int, int]:
    """The most similar span whose edges are word edges near the aligned window's: the
    window is as long as the excerpt, while a paraphrase may be shorter or longer."""
    slack = max(20, len(excerpt) // 4)
    lo, hi = max(0, start - slack), min(len(text), end + slack)
    words = [m.span() for m in _WORD.finditer(text, lo, hi)]
    starts = sorted({s for s, _ in words if s == 0 or not text[s - 1].isalnum()}, key=lambda s: abs(s - start))
    ends = sorted({e for _, e in words if e == len(text) or not text[e].isalnum()}, key=lambda e: abs(e - end))
    wanted = _SPACE.sub(" ", excerpt).strip()
    best, best_score = (start, end), similarity(excerpt, text[start:end])
    for s in starts[:_MAX_EDGES]:
        for e in ends[:_MAX_EDGES]:
            if e > s:
                score = fuzz.ratio(wanted, _SPACE.sub(" ", text[s:e]).strip()) / 100.0
                if score > best_score:
                    best, best_score = (s, e), score
    return best
