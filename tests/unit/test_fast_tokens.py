"""The faster cl100k_base implementation (bpe-openai, ADR 0127) against
tiktoken's: the same counts, the same token offsets, the same chunks; and a
second implementation that disagrees with tiktoken is not used."""

from __future__ import annotations

import pytest

from chunklab.text import fast_bpe, tokens
from chunklab.v1 import documents_pb2
from services.chunker.strategies import SourceDocument, offline_context
from tests.support.chunking import run
from tests.support.repo import chroma_general

# Texts where two tokenizers could part: long words, CJK without spaces, text
# without any space, emoji sequences, runs of white space of every kind,
# Windows line breaks, numbers, contractions, combining marks.
TRICKY = {
    "long words": " ".join("pneumonoultramicroscopicsilicovolcanoconiosis" * (i % 5 + 1) for i in range(400)),
    "cjk": ("日本語の文章です。これは句読点のある長い段落です。中文没有空格，한국어 문장도 있습니다。" * 60 + "\n\n")
    * 4,
    "no spaces": "x" * 6000 + "\n" + "a.b,c;d:e!" * 900 + "\n\n" + "0123456789" * 700,
    "emoji": ("😀👍🏽🇫🇷🧑\u200d💻 " * 300 + "\n") * 5 + "👨\u200d👩\u200d👧\u200d👦" * 400,
    "white space": ("word  \t  word\u00a0\u3000word \n \n\t\n    indented\n" * 200) + " " * 3000 + "end",
    "windows": ("A line with CRLF.\r\nAnother one, don't stop.\r\n\r\n" * 150),
    "mixed": "It's 12,345.67 dollars; they'LL see e\u0301 and ß.\n" * 250,
}


@pytest.fixture
def exact_path(monkeypatch):
    """Switches to tiktoken alone for the duration of a block."""

    class Switch:
        def __enter__(self):
            monkeypatch.setattr(tokens, "FAST", False)

        def __exit__(self, *_):
            monkeypatch.setattr(tokens, "FAST", True)

    return Switch()


def test_the_fast_implementation_is_in_use():
    assert tokens.fast_tokenizer() is not None, "bpe-openai is pinned in requirements.txt and must pass its probe"


@pytest.mark.parametrize("name", sorted(TRICKY))
def test_counts_and_token_offsets_are_tiktokens(name, exact_path):
    text = TRICKY[name]
    fast_count, fast_offsets = tokens.count(text), tokens.token_offsets(text)
    with exact_path:
        assert tokens.fast_tokenizer() is None
        assert fast_count == tokens.count(text) == len(tokens.encoding().encode_ordinary(text))
        assert fast_offsets.tolist() == tokens.token_offsets(text).tolist()


def chunks_of(text: str, **knobs: int) -> list[tuple[int, int, int, str]]:
    """The recursive chunks of a text (run also checks that every chunk is an exact slice
    holding the very token count it reports)."""
    document = documents_pb2.Document(document_id="doc-1", name="doc.md", text=text, collection="default")
    chunks = run("recursive", SourceDocument(document), offline_context(), **knobs)
    return [(c.start_char, c.end_char, c.token_count, c.content) for c in chunks]


@pytest.mark.parametrize("size", [16, 64, 512])
@pytest.mark.parametrize("name", sorted(TRICKY))
def test_recursive_gives_the_same_chunks_on_both_paths(name, size, exact_path):
    text = TRICKY[name]
    fast = chunks_of(text, chunk_size=size, chunk_overlap=size // 8)
    with exact_path:
        exact = chunks_of(text, chunk_size=size, chunk_overlap=size // 8)
    assert fast == exact
    for start, end, count, content in fast:
        assert text[start:end] == content
        assert count == len(tokens.encoding().encode_ordinary(content)) <= size


def test_recursive_gives_the_same_chunks_on_both_paths_on_the_chroma_corpora(exact_path):
    text = "\n\n".join(p.read_text(encoding="utf-8") for p in sorted((chroma_general() / "corpora").glob("*.md")))
    fast = chunks_of(text, chunk_size=512, chunk_overlap=0)
    with exact_path:
        assert chunks_of(text, chunk_size=512, chunk_overlap=0) == fast


def test_an_implementation_that_cuts_text_otherwise_is_not_used():
    """A tiktoken encoding with cl100k_base's name and vocabulary but another
    pre-tokenizer expression (numbers cut every two digits, not three) disagrees on the probe:
    bpe-openai is then not taken for it."""
    import tiktoken

    reference = tokens.encoding()
    other = tiktoken.Encoding(
        reference.name,
        pat_str=r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,2}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s""",
        mergeable_ranks=reference._mergeable_ranks,
        special_tokens=reference._special_tokens,
    )
    assert fast_bpe.load(reference) is not None
    assert fast_bpe.load(other) is None


@pytest.mark.parametrize("spare", [True, False], ids=["a core free", "every core busy"])
def test_two_threads_or_one_by_the_load_give_the_same_offsets(monkeypatch, spare):
    """With THREADS = 2 the map uses a second encoding thread only while the load
    average leaves a core free (ADR 0128); the tokens are the same either way."""
    text = "\n".join(TRICKY.values()) * 3  # above PARALLEL_BYTES
    assert len(text.encode()) >= tokens.PARALLEL_BYTES
    monkeypatch.setattr(tokens, "THREADS", 2)
    monkeypatch.setattr(tokens, "spare_core", lambda: spare)
    expected = tokens.token_char_offsets(text, tokens.encoding().encode_ordinary(text))
    assert tokens.token_offsets(text).tolist() == expected.tolist()


@pytest.mark.parametrize(("run_bytes", "caller_chars"), [(16, 16), (700, 50), (48_000, 1), (48_000, 16_000)])
def test_tiktoken_in_a_thread_beside_bpe_openai_gives_tiktokens_offsets(monkeypatch, run_bytes, caller_chars):
    """With a core free, the encoding thread runs tiktoken on the runs of distinct lines it
    takes from the front while the caller encodes the rest with bpe-openai, which holds the
    GIL (ADR 0141), in slices of lines (ADR 0155): the runs and slices meet at boundaries,
    and the map is the one tiktoken gives for the whole text, on tricky texts and on a text
    that repeats itself."""
    chroma = "\n\n".join(p.read_text(encoding="utf-8") for p in sorted((chroma_general() / "corpora").glob("*.md")))
    monkeypatch.setattr(tokens, "THREADS", 2)
    monkeypatch.setattr(tokens, "PARALLEL_BYTES", 0)
    monkeypatch.setattr(tokens, "RUN_BYTES", run_bytes)
    monkeypatch.setattr(tokens, "CALLER_CHARS", caller_chars)
    monkeypatch.setattr(tokens, "spare_core", lambda: True)
    for text in ["\n".join(TRICKY.values()), chroma[:60_000] * 3]:
        expected = tokens.token_char_offsets(text, tokens.encoding().encode_ordinary(text))
        assert tokens.token_offsets(text).tolist() == expected.tolist()


def test_gil_handoffs_are_quick_only_while_two_threads_encode(monkeypatch):
    """While two threads encode one text, Python's switch interval is HANDOFF_SECONDS, so the
    encoding thread gets the GIL back between its runs at once (ADR 0155); afterwards, and
    after encodings that overlap in several threads, it is what it was, and one-thread
    encodings leave it alone."""
    import sys
    import threading

    text = "\n".join(TRICKY.values()) * 3
    monkeypatch.setattr(tokens, "THREADS", 2)
    monkeypatch.setattr(tokens, "PARALLEL_BYTES", 0)
    monkeypatch.setattr(tokens, "RUN_BYTES", 700)
    seen: list[float] = []
    encode = tokens._encode_lengths
    monkeypatch.setattr(tokens, "_encode_lengths", lambda *a: (seen.append(sys.getswitchinterval()), encode(*a))[1])
    before = sys.getswitchinterval()
    monkeypatch.setattr(tokens, "spare_core", lambda: True)
    threads = [threading.Thread(target=tokens.token_offsets, args=(text,)) for _ in range(3)]
    for thread in threads:
        thread.start()
    tokens.token_offsets(text)
    for thread in threads:
        thread.join()
    assert seen and all(value == pytest.approx(tokens.HANDOFF_SECONDS) for value in seen)
    assert sys.getswitchinterval() == before
    seen.clear()
    monkeypatch.setattr(tokens, "spare_core", lambda: False)
    tokens.token_offsets(text)
    assert seen == [before]
