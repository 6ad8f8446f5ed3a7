"""One cl100k_base tokenization of a text, as numpy offsets, and the exact
count of any slice of it without tokenizing the slice again.

Every strategy that promises a size stands on this (ADR 0010, 0019, 0033).

tiktoken cuts text into pieces with one regular expression, then runs BPE
inside each piece. cl100k_base's expression is

    '(?i:[sdmt]|ll|ve|re)|[^\\r\\n\\p{L}\\p{N}]?+\\p{L}++|\\p{N}{1,3}+
    | ?[^\\s\\p{L}\\p{N}]++[\\r\\n]*+|\\s++$|\\s*[\\r\\n]|\\s+(?!\\S)|\\s

and at a *context-free boundary* p every scan of the text ends a piece,
wherever the scan started (chunklab.text.tokens.is_boundary: the three kinds and
why). Two consequences:
- The tokens of a text are the tokens of its parts cut at such boundaries,
  concatenated; so distinct lines are encoded once each (a document that
  repeats itself is not encoded twice; chonkie memoizes per split likewise),
  in two threads (chunklab.text.tokens.token_segments). A text that repeats
  much is kept as runs of its distinct text and searched run by run, so
  that no pass over every token of it is made (ADR 0147).
- A slice [a, b) has the whole text's tokens between its first boundary
  c >= a and its last boundary d <= b: count = tokens(text[a:c]) +
  (tokens of the whole text in [c, d)) + tokens(text[d:b]). Only the short
  edges are encoded again; where no boundary is near an edge, the whole
  slice is.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from functools import cached_property

import numpy as np

from chunklab.text import tokens
from chunklab.text.tokens import is_boundary, token_segments

# How far into a slice to look for a boundary at either edge.
EDGE = 64
# Slices this short are simply encoded again.
SHORT = 24
# Where a boundary may be: after a run of letters or digits, or after a line break.
_CANDIDATE = re.compile(r"(?<=[^\W_])(?![^\W_])|(?<=[\r\n])")


class TokenMap:
    """`offsets[t]` is the code point where token t starts (a token that
    starts inside a character gets that character's start); `offsets[-1]`
    is len(text)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.segments = token_segments(text)
        # A text that repeats much is searched run by run; any other is one run, its offsets.
        self._runs = len(self.segments.source) > 1

    @cached_property
    def offsets(self) -> np.ndarray:
        return self.segments.offsets()

    def __len__(self) -> int:
        return int(self.segments.tokens[-1])

    # -- positions ------------------------------------------------------
    def searchsorted(self, positions, side: str = "left"):
        """offsets.searchsorted(positions, side), found in the runs of a text that repeats
        much (the run that holds each position, then the copy of the distinct text it is)
        until someone has asked for every offset (one search instead of three from then on)."""
        if not self._runs or "offsets" in self.__dict__:
            return self.offsets.searchsorted(positions, side=side)
        runs = self.segments
        at = np.asarray(positions, dtype=np.int64)
        run = np.clip(runs.chars.searchsorted(at, side="right") - 1, 0, len(runs.source) - 1)
        inside = runs.distinct.searchsorted(at - runs.chars[run] + runs.source[run], side=side) - runs.first[run]
        found = runs.tokens[run] + np.minimum(inside, runs.tokens[run + 1] - runs.tokens[run])
        end = runs.chars[-1]  # offsets[-1]: counted from the end of the text on
        return found + (at >= end if side == "right" else at > end)

    @cached_property
    def _run_chars(self) -> list[int]:
        return self.segments.chars.tolist()

    def source_of(self, start: int, end: int) -> tuple[int, int] | None:
        """Where text[start:end] stands in the distinct text, as (start there, length), when
        it lies inside one run of a text kept as runs: two slices with the same answer have
        the same text. None otherwise."""
        if not self._runs:
            return None
        chars = self._run_chars
        run = bisect_right(chars, start) - 1
        if run < 0 or end > chars[run + 1]:
            return None
        return int(self.segments.source[run]) + start - chars[run], end - start

    def token_at(self, position: int) -> int:
        """The token that covers a character position."""
        return max(int(self.searchsorted(position, side="right")) - 1, 0)

    def char_at(self, token: int) -> int:
        """Where a token starts (len(text) past the end)."""
        return int(self.offsets[min(max(token, 0), len(self.offsets) - 1)])

    def estimate(self, start: int, end: int) -> int:
        """Whole-text tokens that overlap [start, end): close to the slice's
        own count, never used as a promise."""
        if end <= start:
            return 0
        # (tokens starting at or before start, tokens starting before end)
        first, last = self.searchsorted((start + 1, end)).tolist()
        return last - first + 1

    # -- exact counts -----------------------------------------------------
    def count(self, start: int, end: int) -> int:
        """tokens.count of the text of tokens [start, end)."""
        return self.exact(int(self.offsets[start]), int(self.offsets[end]))

    def exact(self, a: int, b: int) -> int:
        """tokens.count(text[a:b]), encoding only the edges (module docstring)."""
        return self.exact_many([(a, b)])[0]

    def exact_many(self, ranges: list[tuple[int, int]]) -> list[int]:
        """exact() of many ranges, with one lookup of the middles' tokens."""
        text = self.text
        middles = [self._middle(a, b) for a, b in ranges]
        edges = [p for middle in middles if middle for p in middle]
        tokens_at = self.searchsorted(edges).tolist() if edges else []
        counts, i = [], 0
        for (a, b), middle in zip(ranges, middles):
            if middle is None:
                counts.append(tokens.count(text[a:b]) if b > a else 0)
                continue
            c, d = middle
            head = tokens.count(text[a:c]) if c > a else 0
            tail = tokens.count(text[d:b]) if b > d else 0
            counts.append(head + tokens_at[i + 1] - tokens_at[i] + tail)
            i += 2
        return counts

    def _middle(self, a: int, b: int) -> tuple[int, int] | None:
        """(c, d): the first and last boundary of the slice [a, b), between
        which it keeps the whole text's tokens; None to encode it all."""
        if b - a <= SHORT:
            return None
        text = self.text
        c = a if a == 0 or is_boundary(text, a, b) else self._first_boundary(a + 1, b)
        if c is None:
            return None
        d = b if b == len(text) or is_boundary(text, b, len(text)) else self._last_boundary(c, b)
        return None if d is None else (c, d)

    def _first_boundary(self, low: int, b: int) -> int | None:
        """A boundary in [low, low + EDGE) of the slice ending at b: the first
        end of a word, a number or a line break that is one (any boundary
        keeps the count exact; is_boundary judges every candidate)."""
        text = self.text
        high = min(low + EDGE, b)
        candidate = _CANDIDATE.search(text, low, high)
        while candidate is not None:
            p = candidate.start()
            if p >= high:
                break
            if is_boundary(text, p, b):
                return p
            candidate = _CANDIDATE.search(text, p + 1, high)
        return None

    def _last_boundary(self, c: int, b: int) -> int | None:
        """The last boundary in [c, b) of the slice ending at b (c itself is one)."""
        text = self.text
        for p in range(b - 1, max(c, b - EDGE) - 1, -1):
            if p == c or is_boundary(text, p, b):
                return p
        return None
