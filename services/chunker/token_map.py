"""A text's cl100k_base tokens with code-point offsets, and a proof-carrying
shortcut for counting the tokens of a slice without re-tokenizing it.

tiktoken splits the text into pieces with a regular expression, then runs
BPE inside each piece. If a slice [a, b) starts and ends on piece
boundaries of the whole text, and does not end in whitespace, the
expression splits the slice into the very same pieces (it has no
look-behind, and its only look-ahead or end-of-text rules concern trailing
whitespace), so the slice's tokens are exactly the whole text's tokens in
that range: its count is known without encoding it again. Where a window
edge cuts a piece, only the short edge is encoded again; where no nearby
boundary can be shown, the whole window is (ADR 0005 and 0019).

Whether a position is a piece boundary is decided locally: from a nearby
position that is provably one (after "\\n" before a non-space; between an
ASCII letter and " " before an ASCII letter), the expression is run forward
to the position.
"""

from __future__ import annotations

import functools

import numpy as np
import regex

from chunklab import tokens

# How far back to look for a provable piece boundary before giving up
# (and re-counting the window instead).
LOOKBACK = 256


@functools.cache
def _token_byte_lengths() -> np.ndarray:
    encoding = tokens.encoding()
    table = np.zeros(encoding.n_vocab, dtype=np.int64)
    ranks = getattr(encoding, "_mergeable_ranks", None)
    if ranks:
        table[np.fromiter(ranks.values(), dtype=np.int64, count=len(ranks))] = np.fromiter(
            (len(b) for b in ranks), dtype=np.int64, count=len(ranks)
        )
    else:  # a tiktoken without the private table: ask token by token
        for token in range(encoding.n_vocab):
            try:
                table[token] = len(encoding.decode_single_token_bytes(token))
            except KeyError:
                pass
    return table


@functools.cache
def _pieces() -> regex.Pattern:
    # tiktoken's "$" is the end of the text (Rust); Python's "$" also matches
    # before a final newline, so it becomes "\Z".
    return regex.compile(tokens.encoding()._pat_str.replace("$", r"\Z"))


def _ascii_letter(char: str) -> bool:
    return ("a" <= char <= "z") or ("A" <= char <= "Z")


class TokenMap:
    def __init__(self, text: str) -> None:
        self.text = text
        self.ids = tokens.encoding().encode_to_numpy(text, disallowed_special=())
        byte_starts = np.zeros(len(self.ids) + 1, dtype=np.int64)
        np.cumsum(_token_byte_lengths()[self.ids], out=byte_starts[1:])
        raw = text.encode("utf-8")
        if byte_starts[-1] != len(raw):
            raise ValueError("tokens do not encode this text")
        if len(raw) == len(text):  # ASCII: bytes are code points
            self.offsets = byte_starts
            self._clean = None
        else:
            lead = np.append((np.frombuffer(raw, dtype=np.uint8) & 0xC0) != 0x80, True)
            char_of_byte = np.cumsum(lead, dtype=np.int32) - 1
            # A token that starts inside a character gets that character's start.
            self.offsets = char_of_byte[byte_starts]
            self._clean = lead[byte_starts]

    def __len__(self) -> int:
        return len(self.ids)

    def starts_a_character(self, token: int) -> bool:
        """Token `token` (or the end, len(self)) begins on a code-point boundary."""
        return self._clean is None or bool(self._clean[token])

    def _sync_before(self, position: int) -> int | None:
        """The nearest position at or before `position` that is provably a piece boundary.

        Two kinds: right after "\n" before a non-space, and at " " between two
        ASCII letters (no piece crosses either). Jumps from space to newline
        with str.rfind rather than walking every character.
        """
        text = self.text
        floor = max(0, position - LOOKBACK)
        at = position
        while at > floor:
            space = text.rfind(" ", floor, at + 1)
            newline = text.rfind("\n", floor, at)
            if space < 0 and newline < 0:
                break
            if newline + 1 > space:
                candidate = newline + 1
                if not text[candidate].isspace():
                    return candidate
            else:
                candidate = space
                if candidate > 0 and candidate + 1 < len(text) and _ascii_letter(text[candidate - 1]) and _ascii_letter(
                    text[candidate + 1]
                ):
                    return candidate
            at = candidate - 1
        return 0 if floor == 0 else None

    def _piece_ends(self, start: int, limit: int) -> list[int]:
        """Where the pieces of text[start:] end, up to the first end at or past limit."""
        pattern, text = _pieces(), self.text
        ends, at = [], start
        while at < limit:
            match = pattern.match(text, at)
            if match is None or match.end() == at:
                break
            at = match.end()
            ends.append(at)
        return ends

    def is_piece_boundary(self, position: int) -> bool:
        """Provably a boundary of tiktoken's pieces of the whole text (False: unknown or not)."""
        if position <= 0 or position >= len(self.text):
            return True
        sync = self._sync_before(position)
        if sync is None:
            return False
        return sync == position or position in self._piece_ends(sync, position)[-1:]

    def _token_at(self, position: int) -> int | None:
        """The token that starts exactly at a code-point position, if one does."""
        token = int(np.searchsorted(self.offsets, position, side="left"))
        if token >= len(self.offsets) or self.offsets[token] != position or not self.starts_a_character(token):
            return None
        return token

    def _head(self, a: int, token: int, b: int) -> tuple[int, int] | None:
        """(c, its token): from c on, the slice starting at a is split like the whole text.

        Walks the whole text's pieces (from a provable boundary before a) and
        the slice's pieces (from a) side by side until they end at the same
        place, after a character that is not whitespace.
        """
        if self.is_piece_boundary(a):
            return a, token
        sync = self._sync_before(a)
        if sync is None:
            return None
        pattern, text = _pieces(), self.text
        limit = min(b - 1, a + LOOKBACK)
        whole, piece = sync, a
        while piece < limit and whole < limit:
            if whole == piece and not text[piece - 1].isspace():
                at = self._token_at(piece)
                return None if at is None else (piece, at)
            moving = whole if whole <= piece else piece
            match = pattern.match(text, moving)
            if match is None or match.end() == moving:
                return None
            if whole <= piece:
                whole = match.end()
            else:
                piece = match.end()
        return None

    def _tail(self, b: int, token: int, c: int) -> tuple[int, int] | None:
        """(d, its token): up to d, the slice ending at b is split like the whole text."""
        text = self.text
        if b >= len(text):
            return b, token
        sync = self._sync_before(b)
        if sync is None:
            return None
        start = max(sync, c)  # both are boundaries of the whole text's pieces
        ends = [start, *self._piece_ends(start, b)]
        if ends[-1] == b and not text[b - 1].isspace():
            return b, token
        for d in reversed(ends):
            if d < b and (d == c or not text[d - 1].isspace()):
                at = self._token_at(d)
                return None if at is None else (d, at)
        return None

    def count(self, start: int, end: int) -> int:
        """The exact cl100k_base count of the text of tokens [start, end), re-tokenized on its own.

        Split as text[a:c] + text[c:d] + text[d:b] where the middle provably
        keeps the whole text's tokens (end - start of them, give or take the
        edges), only the short edges are encoded again; when no such split
        is found nearby, the whole slice is.
        """
        a, b = int(self.offsets[start]), int(self.offsets[end])
        if a >= b:
            return 0
        text = self.text
        if self.starts_a_character(start) and self.starts_a_character(end):
            head = self._head(a, start, b)
            tail = head and self._tail(b, end, head[0])
            if head and tail and head[0] <= tail[0]:
                (c, token_c), (d, token_d) = head, tail
                edges = (tokens.count(text[a:c]) if c > a else 0) + (tokens.count(text[d:b]) if b > d else 0)
                return edges + token_d - token_c
        return tokens.count(text[a:b])
