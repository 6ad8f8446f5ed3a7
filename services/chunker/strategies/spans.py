"""Token-bounded spans of one document: the engine under every strategy that
promises a maximum size.

The whole text is tokenized once (services/chunker/token_map.py). The token
count of any span is *estimated* from the token offsets (a binary search);
the estimate drives the splitting and merging. A span tokenized on its own
can take a few tokens more or less than its share of the whole-text
tokenization, so every final piece is counted *exactly* (TokenMap.exact:
only its edges are encoded again) and, in the rare case it is over the
budget, split again with a tighter budget. The hard maximum therefore always
holds (ADR 0010).

A part too big for the budget splits the same way wherever its text stands,
so its pieces are remembered by content: a document that repeats a long
paragraph splits it once (ADR 0033), and the pieces of each repeat are the
first one's shifted, with the same trim and exact count (ADR 0147).

Pieces are (start, end) code-point ranges into the text, trimmed of
whitespace at both ends, in document order; together they cover every
non-whitespace character of what was split.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right

import numpy as np

from chunklab.text import sentences, structure
from chunklab.text.tokens import is_boundary
from services.chunker.token_map import TokenMap

# The separator cascade, most meaningful first (SPEC section 3, `recursive`).
HEADERS, BLANK_LINE, NEWLINE, SENTENCE, SPACE, TOKENS = range(6)
LEVEL_NAMES = ("headers", "blank line", "newline", "sentence end", "space", "tokens")

_BLANK_RUN = re.compile(r"(?:\r\n|\r|\n)(?:[ \t]*(?:\r\n|\r|\n))+")
_NEWLINE = re.compile(r"\r\n|\r|\n")
# The same for text without "\r", again starting with a literal.
_LF_BLANK_RUN = re.compile(r"\n(?:[ \t]*\n)+")
_LF = re.compile(r"\n")
# What str.isspace() (and so the regular expression \s) calls white space, as a table
# indexed by code point (every code point past the table's end is not white space).
_SPACE_CODES = np.array(
    [
        *range(0x09, 0x0E),
        *range(0x1C, 0x21),
        0x85,
        0xA0,
        0x1680,
        *range(0x2000, 0x200B),
        0x2028,
        0x2029,
        0x202F,
        0x205F,
        0x3000,
    ],
    dtype=np.uint32,
)
_IS_SPACE = np.zeros(int(_SPACE_CODES.max()) + 2, dtype=bool)
_IS_SPACE[_SPACE_CODES] = True

# One code point takes at most 4 cl100k tokens: a budget this big always
# holds at least one whole character.
MIN_BUDGET = 4
# Parts at least this long have their split remembered by content.
MEMO_CHARS = 256


class Spans:
    """Splits and packs ranges of one text under a token budget."""

    def __init__(self, text: str, language: str = "en", tokens: TokenMap | None = None, tree=None) -> None:
        self.text = text
        self.language = language
        # The document's parse: where its headings are and which blocks no sentence crosses
        # (chunklab.text.structure; without one the text is scanned as Markdown).
        self.tree = tree
        self._sentence_blocks: list[tuple[int, int, bool]] | None = None
        self.tokens = tokens if tokens is not None else TokenMap(text)
        # A long part's split by content: (where it was first split, its pieces from there).
        self._splits: dict[tuple, tuple[int, list[tuple[int, int]]]] = {}
        # Pieces that repeat an earlier piece's text (-> that piece), and the trim (relative
        # to the piece's start) and exact count of each text counted (by _text_key).
        self._copies: dict[tuple[int, int], tuple[int, int]] = {}
        self._counts: dict[tuple, tuple[int, int, int]] = {}
        self._header_lines: list[int] | None = None
        lf_only = "\r" not in text
        self._blank_run = _LF_BLANK_RUN if lf_only else _BLANK_RUN
        self._newline = _LF if lf_only else _NEWLINE

    @classmethod
    def of(cls, source) -> Spans:
        """Over a SourceDocument's text, with the token map its strategies share."""
        return cls(source.text, source.document.language, source.token_map, source.tree)

    # -- counting -------------------------------------------------------
    def estimate(self, start: int, end: int) -> int:
        """Whole-text tokens that overlap [start, end)."""
        return self.tokens.estimate(start, end)

    @property
    def token_total(self) -> int:
        """Tokens in the whole text."""
        return len(self.tokens)

    def token_at(self, position: int) -> int:
        """Index of the whole-text token that covers a character position."""
        return self.tokens.token_at(position)

    def char_at(self, token: int) -> int:
        """Character where a whole-text token starts (len(text) past the end)."""
        return self.tokens.char_at(token)

    def exact(self, start: int, end: int) -> int:
        """tokens.count(text[start:end]), encoding only the edges again."""
        return self.tokens.exact(start, end)

    def trim(self, start: int, end: int) -> tuple[int, int]:
        return sentences.trim(self.text, start, end)

    def sentences(self, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
        """The sentence spans of [start, end), split within the blocks the tree gives."""
        end = len(self.text) if end is None else end
        if not structure.parsed(self.tree):
            return [(start + a, start + b) for a, b in sentences.split(self.text[start:end], self.language)]
        if self._sentence_blocks is None:
            self._sentence_blocks = structure.sentence_blocks(self.text, self.tree)
        return sentences.split(self.text, self.language, structure.within(self._sentence_blocks, start, end))

    # -- public operations ----------------------------------------------
    def split(
        self, start: int, end: int, budget: int, *, overlap: int = 0, level: int = HEADERS
    ) -> list[tuple[int, int, int]]:
        """[start, end) cut by the separator cascade from `level` down and merged
        back up to `budget` tokens: (start, end, exact token count) per piece,
        each at most `budget`. With overlap, a piece repeats whole trailing
        parts of the previous one, up to `overlap` tokens."""
        return self._verified(self._split(start, end, budget, level, overlap), budget)

    def pack(
        self, ranges: list[tuple[int, int]], budget: int, *, level: int = BLANK_LINE
    ) -> list[tuple[int, int, int]]:
        """Consecutive ranges (paragraphs, sentences, …) merged greedily into
        pieces of at most `budget` tokens; a range too big on its own is split
        by the cascade from `level` down."""
        starts = [a for a, _ in ranges]
        ends = [b for _, b in ranges]
        return self._verified(self._merge(starts, ends, budget, level, 0), budget)

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
            if len(cuts):
                bounds = [start, *cuts, end]
                return self._merge(bounds[:-1], bounds[1:], budget, level + 1, overlap)
            level += 1
        return self._token_windows(start, end, budget)

    def _split_part(self, start: int, end: int, budget: int, level: int, overlap: int) -> list[tuple[int, int]]:
        """_split of a part too big for the budget, remembered by content.

        Only for parts whose both ends are context-free piece boundaries
        (chunklab.text.tokens.is_boundary): inside them the whole text's tokens
        are the part's own, so every estimate, cut and count of the split
        depends on the part's text alone and the remembered pieces are the
        very pieces the split would find again. Not at the header level,
        whose cuts depend on the text around the part (a fence it lies in).
        """
        text = self.text
        if (
            level == HEADERS
            or end - start < MEMO_CHARS
            or not (is_boundary(text, start, len(text)) and is_boundary(text, end, len(text)))
        ):
            return self._split(start, end, budget, level, overlap)
        key = (budget, level, overlap, self.tokens.source_of(start, end) or text[start:end])
        known = self._splits.get(key)
        if known is None:
            pieces = self._split(start, end, budget, level, overlap)
            self._splits[key] = (start, [(a - start, b - start) for a, b in pieces])
            return pieces
        first, relative = known
        pieces = [(start + a, start + b) for a, b in relative]
        self._copies.update(zip(pieces, [(first + a, first + b) for a, b in relative]))
        return pieces

    def _merge(
        self, starts: list[int], ends: list[int], budget: int, next_level: int, overlap: int
    ) -> list[tuple[int, int]]:
        """Greedy merge of consecutive parts [starts[k], ends[k]) up to the
        budget (langchain's and chonkie's recursive semantics); a part that
        is too big on its own is split at the next level and its pieces are
        not merged with neighbours. With overlap, a piece starts with the
        trailing parts of the previous one that hold at most `overlap`
        tokens (never the whole piece).

        Estimates come from the token index of each part's ends, looked up
        for all parts at once: the estimate of parts i..j is last[j] -
        first[i]. The loop runs once per piece, not per part: how far a
        piece reaches is one binary search in `last`.
        """
        n = len(starts)
        if not n:
            return []
        first_at = self.tokens.searchsorted(starts, side="right") - 1
        last_at = self.tokens.searchsorted(ends, side="left")
        big = [
            k
            for k in np.flatnonzero(last_at - first_at > budget).tolist()
            if self.estimate(*self.trim(starts[k], ends[k])) > budget
        ]
        big.append(n)  # a sentinel
        first, last = first_at.tolist(), last_at.tolist()
        out: list[tuple[int, int]] = []
        s = k = b = 0  # parts s..k-1 make the piece being built; big[b] is the next big part
        while k < n:
            if big[b] == k:
                if s < k:
                    out.append((starts[s], ends[k - 1]))
                out += self._split_part(starts[k], ends[k], budget, next_level, overlap)
                k, b = k + 1, b + 1
                s = k
                continue
            if s < k and last[k] - first[s] > budget:
                out.append((starts[s], ends[k - 1]))
                tail = k
                if overlap > 0:
                    tail = max(
                        s + 1,
                        bisect_left(first, last[k - 1] - overlap),
                        bisect_left(first, last[k] - budget),
                    )
                s = min(tail, k)
            reach = bisect_right(last, first[s] + budget)  # parts s..reach-1 fit
            k = max(k + 1, min(reach, big[b]))
        if s < n:
            out.append((starts[s], ends[n - 1]))
        return out

    def _cuts(self, level: int, start: int, end: int) -> list[int]:
        """Positions strictly inside (start, end) where a part may begin."""
        text = self.text
        if level == HEADERS:
            if self._header_lines is None:  # the whole text's, so a fence around the range counts
                self._header_lines = structure.heading_starts(text, self.tree)
            lines = self._header_lines
            cuts = lines[bisect_right(lines, start) : bisect_right(lines, end - 1)]
        elif level == BLANK_LINE:
            cuts = [m.end() for m in self._blank_run.finditer(text, start, end)]
        elif level == NEWLINE:
            cuts = [m.end() for m in self._newline.finditer(text, start, end)]
        elif level == SENTENCE:
            cuts = [a for a, _ in self.sentences(start, end)]
        else:
            return self._space_cuts(start, end)
        return [c for c in cuts if start < c < end]

    def _space_cuts(self, start: int, end: int) -> list[int]:
        """Where each run of white space ends (the regular expression \\s+),
        found with numpy: long unpunctuated runs have thousands."""
        codes = np.frombuffer(self.text[start:end].encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        space = _IS_SPACE[np.minimum(codes, len(_IS_SPACE) - 1)]
        return (np.flatnonzero(space[:-1] & ~space[1:]) + (start + 1)).tolist()

    # -- the last resort: token windows ------------------------------------
    def _token_bounds(self, start: int, end: int) -> list[int]:
        """start, the token starts strictly inside (start, end), and end (no
        repeats: tokens inside one character share its start)."""
        lo = int(self.tokens.searchsorted(start, side="right"))
        hi = int(self.tokens.searchsorted(end, side="left"))
        return sorted({start, *self.tokens.offsets[lo:hi].tolist(), end})

    def _token_windows(self, start: int, end: int, budget: int) -> list[tuple[int, int]]:
        """Runs of `budget` whole-text tokens."""
        bounds = self._token_bounds(start, end)
        return [(bounds[i], bounds[min(i + budget, len(bounds) - 1)]) for i in range(0, len(bounds) - 1, budget)]

    # -- exactness --------------------------------------------------------
    def _verified(self, pieces: list[tuple[int, int]], budget: int, depth: int = 0) -> list[tuple[int, int, int]]:
        """Trims every piece and counts it on its own; a piece over the budget
        (the estimate was short) is split again under a tighter budget."""
        out: list[tuple[int, int, int]] = []
        for start, end, count in self._counted(pieces):
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

    def _text_key(self, piece: tuple[int, int]) -> tuple:
        """A key two pieces share only if their texts are the same: where the piece stands
        in the distinct text of a text kept as runs (TokenMap.source_of), else the piece it
        copies (`_copies`, from the split of a repeated part), else the piece itself."""
        source = self.tokens.source_of(*piece)
        return ("at", *source) if source is not None else ("of", *self._copies.get(piece, piece))

    def _counted(self, pieces: list[tuple[int, int]]) -> list[tuple[int, int, int]]:
        """The pieces trimmed, without the empty ones, each with its exact count. Pieces of
        the same text (`_text_key`) are trimmed and counted once: both depend on the text alone."""
        counts = self._counts
        keys = [self._text_key(piece) for piece in pieces]
        todo: dict[tuple, tuple[int, int]] = {}
        for piece, key in zip(pieces, keys):
            if key not in counts:
                todo.setdefault(key, piece)
        trimmed = [self.trim(start, end) for start, end in todo.values()]
        exact = iter(self.tokens.exact_many([t for t in trimmed if t[0] < t[1]]))
        for (key, (start, _)), (a, b) in zip(todo.items(), trimmed):
            counts[key] = (a - start, b - start, next(exact) if a < b else 0)
        out = []
        for (start, _), key in zip(pieces, keys):
            a, b, count = counts[key]
            if a < b:
                out.append((start + a, start + b, count))
        return out

    def _exact_windows(self, start: int, end: int, budget: int) -> list[tuple[int, int, int]]:
        """Token windows counted exactly, each giving back tokens until it fits
        (the fixed_size rule; ADR 0005)."""
        bounds = self._token_bounds(start, end)
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
