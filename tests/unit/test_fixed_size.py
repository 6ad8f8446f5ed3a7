"""fixed_size on its own: exact slices, hard maximum, overlap, knobs."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chunklab.errors import InvalidArgument
from chunklab.text import tokens
from chunklab.v1 import chunker_pb2, common_pb2, documents_pb2
from services.chunker.strategies import REGISTRY, SourceDocument, offline_context
from services.chunker.token_map import TokenMap
from tests.support.repo import chroma_general


def source(text: str) -> SourceDocument:
    return SourceDocument(documents_pb2.Document(document_id="doc", name="doc.md", text=text, collection="default"))


def spec(**knobs: int) -> common_pb2.StrategySpec:
    return common_pb2.StrategySpec(
        name="fixed_size", knobs={k: common_pb2.KnobValue(int_value=v) for k, v in knobs.items()}
    )


def check_chunks(text: str, chunk_size: int, chunk_overlap: int) -> list[common_pb2.Chunk]:
    chunks = REGISTRY.build(spec(chunk_size=chunk_size, chunk_overlap=chunk_overlap)).chunk(
        source(text), offline_context()
    )
    for i, chunk in enumerate(chunks):
        assert chunk.chunk_index == i
        assert text[chunk.start_char : chunk.end_char] == chunk.content
        assert chunk.character_count == len(chunk.content)
        assert chunk.token_count == tokens.count(chunk.content) <= chunk_size
    if text:
        # Coverage: the chunks start at 0, end at the end, and leave no gap.
        assert chunks[0].start_char == 0 and chunks[-1].end_char == len(text)
        for before, after in zip(chunks, chunks[1:]):
            assert after.start_char <= before.end_char
    return chunks


mixed_text = st.lists(
    st.sampled_from(list("abc xyz.,\n") + ["é", "ß", "日本", "語", "🎉", "  ", "\t", "Ωμέγα", "\r\n"]),
    max_size=200,
).map("".join)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=mixed_text, chunk_size=st.integers(8, 40), overlap_ratio=st.floats(0, 0.9))
def test_chunks_are_exact_slices_within_the_maximum_and_cover_the_text(text, chunk_size, overlap_ratio):
    check_chunks(text, chunk_size, int(chunk_size * overlap_ratio))


def test_windows_follow_the_token_sequence_with_the_overlap():
    text = " ".join(f"word{i}" for i in range(100))
    ids = tokens.encoding().encode_ordinary(text)
    chunks = check_chunks(text, 20, 5)
    decoded = [tokens.encoding().decode(ids[i : i + 20]) for i in range(0, len(ids) - 5, 15)]
    assert [c.content for c in chunks] == decoded


def test_chunk_ids_are_deterministic_and_differ_by_configuration():
    text = "alpha beta gamma delta " * 50
    first = REGISTRY.build(spec(chunk_size=16, chunk_overlap=0)).chunk(source(text), offline_context())
    again = REGISTRY.build(spec(chunk_size=16, chunk_overlap=0)).chunk(source(text), offline_context())
    other = REGISTRY.build(spec(chunk_size=16, chunk_overlap=4)).chunk(source(text), offline_context())
    assert [c.chunk_id for c in first] == [c.chunk_id for c in again]
    assert first[0].chunk_id != other[0].chunk_id
    assert len({c.chunk_id for c in first}) == len(first)


def test_defaults_are_the_spec_defaults():
    (info,) = [s for s in REGISTRY.infos() if s.name == "fixed_size"]
    defaults = {k.name: k.default_value.int_value for k in info.knobs}
    assert defaults == {"chunk_size": 512, "chunk_overlap": 64}
    assert all(k.type == chunker_pb2.KNOB_TYPE_INT and k.HasField("min_value") for k in info.knobs)


@pytest.mark.parametrize(
    ("knobs", "message"),
    [
        ({"chunk_size": 7}, "at least 8"),
        ({"chunk_size": 10, "chunk_overlap": 10}, "smaller than chunk_size"),
        ({"window": 3}, "no knob 'window'"),
    ],
)
def test_bad_knobs_are_refused_with_a_reason(knobs, message):
    with pytest.raises(InvalidArgument, match=message):
        REGISTRY.build(spec(**knobs))


def test_a_knob_of_the_wrong_type_is_refused():
    bad = common_pb2.StrategySpec(name="fixed_size", knobs={"chunk_size": common_pb2.KnobValue(string_value="big")})
    with pytest.raises(InvalidArgument, match="whole number"):
        REGISTRY.build(bad)


def test_the_registry_refuses_a_second_strategy_with_a_taken_name():
    with pytest.raises(ValueError, match="already registered"):
        REGISTRY.register(REGISTRY.get("fixed_size"))


# -- one tokenization of the whole text, exact without re-tokenizing (ADR 0019, 0033) --

# Characters that stress cl100k_base's pre-tokenizer: line breaks and runs of
# white space, contractions, digit runs, letters of other scripts, combining
# marks, Python-only white space (\x1c), wide and no-break spaces, emoji,
# a letter newer than this Python's Unicode tables (U+1E4D0), punctuation.
tricky = st.lists(
    st.sampled_from(
        [
            "word",
            "The",
            " ",
            "  ",
            "\n",
            "\n\n",
            "\r\n",
            "\r",
            "\t",
            " \n",
            "\n ",
            "\n\t",
            "'s",
            "'ll",
            "1234567",
            "٣٤",
            ".",
            ",",
            "—",
            "=",
            "(",
            "é",
            "e\u0301",
            "日本語",
            "。",
            "Ωμέγα",
            "\u3000",
            "\u00a0",
            "\x1c",
            "\x85",
            "🎉",
            "\U0001e4d0",
            "x",
            "<|endoftext|>",
        ]
    ),
    max_size=150,
).map("".join)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=tricky, data=st.data())
def test_a_text_cut_at_a_claimed_boundary_keeps_its_tokens(text, data):
    """is_boundary's promise: both sides encoded on their own give the tokens of the whole."""
    end = data.draw(st.integers(0, len(text)))
    encode = tokens.encoding().encode_ordinary
    whole = encode(text[:end])
    for p in range(1, end):
        if tokens.is_boundary(text, p, end):
            assert encode(text[:p]) + encode(text[p:end]) == whole, (text[:end], p)


@pytest.fixture(
    params=[(2, True), (1, True), (2, False), (1, False)],
    ids=["two threads", "one thread", "two threads, tiktoken alone", "one thread, tiktoken alone"],
)
def short_runs(request):
    """Hand every text over a few lines at a time, however short: to two threads (with
    bpe-openai, one encoding thread and the caller, ADR 0127), or (one thread) gathered
    and encoded in one call at the end; with bpe-openai or with tiktoken alone."""
    saved = tokens.THREADS, tokens.PARALLEL_BYTES, tokens.RUN_BYTES, tokens.FAST, tokens.spare_core
    tokens.THREADS, tokens.PARALLEL_BYTES, tokens.RUN_BYTES = request.param[0], 0, 16
    tokens.FAST, tokens.spare_core = request.param[1], lambda: True  # however busy the machine is
    yield
    tokens.THREADS, tokens.PARALLEL_BYTES, tokens.RUN_BYTES, tokens.FAST, tokens.spare_core = saved


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(lines=st.lists(tricky, min_size=1, max_size=8), picks=st.lists(st.integers(0, 7), max_size=40))
def test_whole_text_offsets_equal_tiktokens_with_repeated_lines_in_runs(short_runs, lines, picks):
    """Each distinct line is encoded once, in runs of lines; the result is tiktoken's own."""
    text = "\n".join(lines[i % len(lines)] for i in picks)
    expected = tokens.token_char_offsets(text, tokens.encoding().encode_ordinary(text))
    assert tokens.token_offsets(text).tolist() == expected.tolist()


def test_each_encoding_thread_owns_a_copy_that_cuts_text_the_same_way():
    from concurrent.futures import ThreadPoolExecutor

    text = "Fog horns warned ships, 1,234 times — ½ of them at night.\n\n東京の霧。 Ünïcödé!" * 50
    with ThreadPoolExecutor(2) as pool:
        copies = list(pool.map(lambda _: tokens.thread_encoding(), range(8)))
        cut = list(pool.map(lambda _: tokens.thread_encoding().encode_ordinary(text), range(2)))
    assert tokens.thread_encoding() is tokens.thread_encoding()  # one per thread, kept
    assert len({id(c) for c in copies}) <= 2 and all(c is not tokens.encoding() for c in copies)
    assert cut == [tokens.encoding().encode_ordinary(text)] * 2
    # Embedding usage is counted there too: the same total as counting each text here.
    texts = [text[i : i + 97] for i in range(0, len(text), 97)]
    assert tokens.count_total(texts) == sum(tokens.count(t) for t in texts) and tokens.count_total([]) == 0


def test_without_the_proven_expression_every_count_is_still_exact(monkeypatch):
    """A tiktoken whose pre-tokenizer changed takes no shortcut at all."""
    monkeypatch.setattr(tokens, "shortcuts_hold", lambda: False)
    text = "Alpha beta.\n\nGamma delta, 12345 epsilon.\n" * 40
    assert not tokens.is_boundary(text, 5, len(text))
    index = TokenMap(text)
    assert index.offsets.tolist() == tokens.token_char_offsets(text, tokens.encoding().encode_ordinary(text)).tolist()
    assert index.exact(3, 700) == tokens.count(text[3:700])
    check_chunks(text, 40, 8)


@pytest.mark.parametrize("copies", [1, 3])
def test_fixed_size_on_the_chroma_corpora_is_exact(copies):
    """Real text, once and repeated (the repeated lines are encoded once)."""
    text = (
        "\n\n".join(p.read_text(encoding="utf-8") for p in sorted((chroma_general() / "corpora").glob("*.md"))) * copies
    )
    chunks = REGISTRY.build(spec(chunk_size=256, chunk_overlap=32)).chunk(source(text), offline_context())
    ids = tokens.encoding().encode_ordinary(text)
    assert len(chunks) >= len(ids) // 256
    for chunk in chunks:
        assert text[chunk.start_char : chunk.end_char] == chunk.content
        assert chunk.token_count == tokens.count(chunk.content) <= 256
    assert chunks[0].start_char == 0 and chunks[-1].end_char == len(text)
