"""Token-bounded spans of one document: the engine under every strategy that
promises a maximum size.

The whole text is tokenized once (cl100k_base). The token count of any span
is then *estimated* in O(log n) from the token start offsets; the estimate
drives the splitting and merging. A span tokenized on its own can take a few
tokens more or less than its share of the whole-text tokenization, so every
final piece is counted *exactly* once (tokens.count of its own text) and, in
the rare case it is over the budget, split again with a tighter budget. The
hard maximum therefore always holds, at the cost of one more tokenization of
the output (ADR 0010).

Pieces are (start, end) code-point ranges into the text, trimmed of
whitespace at both ends, in document order; together they cover every
non-whitespace character of what was split.
"""

from __future__ import annotations

import functools
import re
from bisect import bisect_left, bisect_right

import numpy as np

from chunklab import sentences, tokens

# The separator cascade, most meaningful first (SPEC section 3, `recursive`).
HEADERS, BLANK_LINE, NEWLINE, SENTENCE, SPACE, TOKENS = range(6)
LEVEL_NAMES = ("headers", "blank line", "newline", "sentence end", "space", "tokens")

_HEADER_LINE = re.compile(r"^ {0,3}#{1,6}(?=[ \t]|$)", re.MULTILINE)
_BLANK_RUN = re.compile(r"(?:\r\n|\r|\n)(?:[ \t]*(?:\r\n|\r|\n))+")
_NEWLINE = re.compile(r"\r\n|\r|\n")
_SPACES = re.compile(r"\s+")
_WHITESPACE = sentences._WHITESPACE

# A position where cl100k's pre-tokenizer starts a new piece whatever came
# before: a space after a letter or digit (letter and digit runs end there),
# or a line break followed by a letter, digit or ASCII punctuation (no
# pre-token runs from a line break into a non-space). Python's \w minus "_"
# is a subset of \p{L} and \p{N}.
_SAFE = re.compile(r"(?<=[^\W_]) |(?<=[\r\n])(?=[^\W_]|[!-/:-@\[-`{-~])")
_EDGE_WINDOW = 96


def _safe_at(text: str, position: int) -> bool:
    return bool(_SAFE.match(text, position))


def _first_safe(text: str, start: int, end: int) -> int | None:
    match = _SAFE.search(text, start, end)
    return match.start() if match else None


def _last_safe(text: str, start: int, end: int) -> int | None:
    last = None
    for match in _SAFE.finditer(text, start, end):
        last = match.start()
    return last


# One code point takes at most 4 cl100k tokens: a budget this big always
# holds at least one whole character.
MIN_BUDGET = 4


@functools.cache
def _token_byte_lengths() -> np.ndarray:
    """Bytes per token id for the whole vocabulary (0 for unused ids)."""
    encoding = tokens.encoding()
    lengths = np.zeros(encoding.max_token_value + 1, dtype=np.int64)
    for token in range(encoding.max_token_value + 1):
        try:
            lengths[token] = len(encoding.decode_single_token_bytes(token))
        except KeyError:
            pass
    return lengths


def token_char_offsets(text: str, ids: list[int]) -> list[int]:
    """Code-point start of every token plus len(text) at the end; a token
    starting inside a character gets that character's start.

    Same result as chunklab.tokens.token_char_offsets, from a table of token
    byte lengths instead of decoding every token (several times faster).
    """
    byte_starts = np.zeros(len(ids) + 1, dtype=np.int64)
    if ids:
        np.cumsum(_token_byte_lengths()[np.asarray(ids, dtype=np.int64)], out=byte_starts[1:])
    if text.isascii():
        offsets = byte_starts
    else:
        data = np.frombuffer(text.encode("utf-8"), dtype=np.uint8)
        char_of_byte = np.cumsum((data & 0xC0) != 0x80) - 1
        offsets = np.empty_like(byte_starts)
        offsets[:-1] = char_of_byte[byte_starts[:-1]] if ids else []
    offsets[-1] = len(text)
    return offsets.tolist()


class Spans:
    """Splits and packs ranges of one text under a token budget."""

    def __init__(self, text: str, language: str = "en") -> None:
        self.text = text
        self.language = language
        self._offsets = token_char_offsets(text, tokens.encoding().encode_ordinary(text))
        self._offsets_array = np.asarray(self._offsets, dtype=np.int64)

    # -- counting -------------------------------------------------------
    def estimate(self, start: int, end: int) -> int:
        """Whole-text tokens that overlap [start, end)."""
        if end <= start:
            return 0
        return bisect_left(self._offsets, end) - bisect_right(self._offsets, start) + 1

    @property
    def token_total(self) -> int:
        """Tokens in the whole text."""
        return len(self._offsets) - 1

    def token_at(self, position: int) -> int:
        """Index of the whole-text token that covers a character position."""
        return max(bisect_right(self._offsets, position) - 1, 0)

    def char_at(self, token: int) -> int:
        """Character where a whole-text token starts (len(text) past the end)."""
        return self._offsets[min(max(token, 0), len(self._offsets) - 1)]

    def exact(self, start: int, end: int) -> int:
        """tokens.count(text[start:end]), tokenizing only the edges.

        At a *safe* position the pre-tokenizer of cl100k_base starts a new
        pre-token whatever came before (ADR 0010): after a line break followed
        by a letter, digit or ASCII punctuation, and at a space that follows a
        letter or digit. Between the first and the last safe position of the
        span, its own tokenization equals the whole text's, so only the head
        and the tail are tokenized; the middle is counted from the index.
        """
        text = self.text
        if end - start <= 2 * _EDGE_WINDOW:
            return tokens.count(text[start:end])
        head = start if start == 0 or _safe_at(text, start) else _first_safe(text, start + 1, start + _EDGE_WINDOW)
        tail = end if end == len(text) or _safe_at(text, end) else _last_safe(text, end - _EDGE_WINDOW, end)
        if head is None or tail is None or tail < head:
            return tokens.count(text[start:end])
        middle = bisect_left(self._offsets, tail) - bisect_left(self._offsets, head)
        return tokens.count(text[start:head]) + middle + tokens.count(text[tail:end])

    def trim(self, start: int, end: int) -> tuple[int, int]:
        return sentences.trim(self.text, start, end)

    # -- public operations ----------------------------------------------
    def split(
        self, start: int, end: int, budget: int, *, overlap: int = 0, level: int = HEADERS
    ) -> list[tuple[int, int, int]]:
        """[start, end) cut by the separator cascade from `level` down and merged
        back up to `budget` tokens: (start, end, exact token count) per piece,
        each at most `budget`. With overlap, a piece repeats whole trailing
        parts of the previous one, up to `overlap` tokens."""
        return self._verified(self._split(start, end, budget, level, overlap), budget)

    def pack(self, ranges: list[tuple[int, int]], budget: int, *, level: int = BLANK_LINE) -> list[tuple[int, int, int]]:
        """Consecutive ranges (paragraphs, sentences, …) merged greedily into
        pieces of at most `budget` tokens; a range too big on its own is split
        by the cascade from `level` down."""
        return self._verified(self._merge(ranges, budget, level, 0), budget)

    def fits(self, start: int, end: int, budget: int) -> tuple[bool, int]:
        """Whether the trimmed range holds at most `budget` tokens, and its count."""
        start, end = self.trim(start, end)
        count = self.exact(start, end)
        return count <= budget, count

    # -- the cascade, on estimates ----------------------------------------
    def _split(self, start: int, end: int, budget: int, level: int, overlap: int) -> list[tuple[int, int]]:
        if self.estimate(*self.trim(start, end)) <= budget:
            return [(start, end)]
        while level < TOKENS:
            cuts = self._cuts(level, start, end)
            if cuts:
                bounds = [start, *cuts, end]
                return self._merge(list(zip(bounds, bounds[1:])), budget, level + 1, overlap)
            level += 1
        return self._token_windows(start, end, budget)

    def _merge(
        self, parts: list[tuple[int, int]], budget: int, next_level: int, overlap: int
    ) -> list[tuple[int, int]]:
        """Greedy merge of consecutive parts up to the budget (langchain's and
        chonkie's recursive semantics); a part that is too big on its own is
        split at the next level and its pieces are not merged with neighbours.

        Estimates come from the token index of each part's ends, looked up for
        all parts at once: the estimate of parts i..j is last[j] - first[i].
        """
        if not parts:
            return []
        starts = np.fromiter((p[0] for p in parts), dtype=np.int64, count=len(parts))
        ends = np.fromiter((p[1] for p in parts), dtype=np.int64, count=len(parts))
        first = (np.searchsorted(self._offsets_array, starts, side="right") - 1).tolist()
        last = np.searchsorted(self._offsets_array, ends, side="left").tolist()
        out: list[tuple[int, int]] = []
        current: list[int] = []  # indices into parts
        for k, part in enumerate(parts):
            if last[k] - first[k] > budget and self.estimate(*self.trim(*part)) > budget:
                if current:
                    out.append((parts[current[0]][0], parts[current[-1]][1]))
                    current = []
                out += self._split(part[0], part[1], budget, next_level, overlap)
                continue
            if current and last[k] - first[current[0]] > budget:
                out.append((parts[current[0]][0], parts[current[-1]][1]))
                tail: list[int] = []
                if overlap > 0:
                    for i in reversed(current[1:]):  # never repeat a whole piece
                        if last[current[-1]] - first[i] > overlap or last[k] - first[i] > budget:
                            break
                        tail.insert(0, i)
                current = tail
            current.append(k)
        if current:
            out.append((parts[current[0]][0], parts[current[-1]][1]))
        return out

    def _cuts(self, level: int, start: int, end: int) -> list[int]:
        """Positions strictly inside (start, end) where a part may begin."""
        text = self.text
        if level == HEADERS:
            cuts = [m.start() for m in _HEADER_LINE.finditer(text, start, end)]
        elif level == BLANK_LINE:
            cuts = [m.end() for m in _BLANK_RUN.finditer(text, start, end)]
        elif level == NEWLINE:
            cuts = [m.end() for m in _NEWLINE.finditer(text, start, end)]
        elif level == SENTENCE:
            cuts = [start + a for a, _ in sentences.split(text[start:end], self.language)]
        else:
            cuts = [m.end() for m in _SPACES.finditer(text, start, end)]
        return [c for c in cuts if start < c < end]

    def _token_windows(self, start: int, end: int, budget: int) -> list[tuple[int, int]]:
        """Last resort: runs of `budget` whole-text tokens (boundaries never cut
        a character: token offsets are character starts)."""
        lo = bisect_right(self._offsets, start)
        hi = bisect_left(self._offsets, end)
        bounds = [start, *self._offsets[lo:hi], end]
        bounds = sorted(set(bounds))
        return [(bounds[i], bounds[min(i + budget, len(bounds) - 1)]) for i in range(0, len(bounds) - 1, budget)]

    # -- exactness --------------------------------------------------------
    def _verified(self, pieces: list[tuple[int, int]], budget: int, depth: int = 0) -> list[tuple[int, int, int]]:
        """Trims every piece and counts it on its own; a piece over the budget
        (the estimate was short) is split again under a tighter budget."""
        out: list[tuple[int, int, int]] = []
        for start, end in pieces:
            start, end = self.trim(start, end)
            if start >= end:
                continue
            count = self.exact(start, end)
            if count <= budget:
                out.append((start, end, count))
                continue
            if depth >= 3:
                out += self._exact_windows(start, end, budget)
                continue
            estimate = self.estimate(start, end)
            tighter = max(min(budget - (count - budget), estimate - 1), MIN_BUDGET)
            out += self._verified(self._split(start, end, tighter, HEADERS, 0), budget, depth + 1)
        return out

    def _exact_windows(self, start: int, end: int, budget: int) -> list[tuple[int, int, int]]:
        """Token windows counted exactly, each giving back tokens until it fits
        (the fixed_size rule; ADR 0005)."""
        lo = bisect_right(self._offsets, start)
        hi = bisect_left(self._offsets, end)
        bounds = sorted({start, *self._offsets[lo:hi], end})
        out = []
        i = 0
        while i < len(bounds) - 1:
            j = min(i + budget, len(bounds) - 1)
            while True:
                a, b = self.trim(bounds[i], bounds[j])
                count = self.exact(a, b)
                if count <= budget or j == i + 1:
                    break
                j -= 1
            if a < b:
                out.append((a, b, count))
            i = j
        return out
