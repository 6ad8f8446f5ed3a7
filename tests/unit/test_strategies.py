"""The strategies of SPEC section 3 on their own: exact slices, promised
maxima, coverage, goldens on a fixed fixture, and the contextual strategies'
failure rule."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chunklab import ids
from chunklab.errors import InvalidArgument
from chunklab.llm import LLMError
from chunklab.text import tokens
from chunklab.v1 import chunker_pb2, common_pb2, documents_pb2
from services.chunker.strategies import REGISTRY, SourceDocument, offline_context
from services.chunker.strategies import spans as spans_module
from services.chunker.strategies.base import NoLLM
from services.chunker.strategies.contextual import MAX_DOCUMENT_TOKENS, document_view
from services.chunker.strategies.spans import Spans
from tests.support.chunking import (
    REGULATION,
    SPEC_NAMES,
    FakeChat,
    context,
    covered_non_blank,
    document,
    families,
    knob,
    random_text,
    run,
)
from tests.support.repo import chroma_general

FIXTURES = Path(__file__).parents[1] / "fixtures"


def test_chunk_ids_are_the_uuid5_of_their_name_so_stored_indexes_keep_their_ids():
    namespace = uuid.UUID("6f1c3f0e-8a5b-4c1e-9d7a-2b3c4d5e6f70")
    for index, role, name in (
        (0, common_pb2.CHUNK_ROLE_CHUNK, "chunk"),
        (7, common_pb2.CHUNK_ROLE_PARENT, "parent"),
        (12345, common_pb2.CHUNK_ROLE_SENTENCE, "sentence"),
    ):
        expected = str(uuid.uuid5(namespace, f"doc-1/recursive/abc123/{name}/{index}"))
        assert ids.chunk_id("doc-1", "recursive", "abc123", index, role) == expected
        assert ids.ChunkIds("doc-1", "recursive", "abc123", role)(index) == expected
    # A chunk whose role was left unspecified has the id of a plain chunk.
    assert ids.chunk_id("doc-1", "recursive", "abc123", 0, common_pb2.CHUNK_ROLE_UNSPECIFIED) == str(
        uuid.uuid5(namespace, "doc-1/recursive/abc123/chunk/0")
    )


def contents(chunks, role=None):
    return [c.content for c in chunks if role is None or ids.role_name(c.role) == role]


# -- the registry and ListStrategies ---------------------------------------


def test_every_strategy_of_the_spec_is_listed_with_a_description_and_its_knobs():
    infos = {info.name: info for info in REGISTRY.infos()}
    assert list(infos) == SPEC_NAMES
    for info in infos.values():
        assert info.description and "\n" not in info.description
        for k in info.knobs:
            assert k.description and k.HasField("default_value")
            if k.type in (chunker_pb2.KNOB_TYPE_INT, chunker_pb2.KNOB_TYPE_DOUBLE):
                assert k.HasField("min_value") and k.HasField("max_value")
    defaults = {
        name: {k.name: getattr(k.default_value, k.default_value.WhichOneof("kind")) for k in info.knobs}
        for name, info in infos.items()
    }
    assert defaults["semantic"] == {"threshold": 0.5, "min_sentences": 3, "max_tokens": 512}
    assert defaults["hybrid_semantic_recursive"] == {"threshold": 0.64, "min_tokens": 128, "max_tokens": 384}
    assert defaults["parent_child"]["parent_level"] == "article"
    assert list(infos["parent_child"].knobs[0].choices) == ["article", "section", "paragraph"]
    assert defaults["sentence_window"]["window"] == 2 and infos["sentence_window"].knobs[0].query_time
    assert defaults["contextual_retrieval"] == defaults["fixed_size"] == {"chunk_size": 512, "chunk_overlap": 64}
    assert infos["contextual_retrieval"].requires_llm and infos["contextual_structure"].requires_llm
    assert infos["semantic"].requires_embeddings_to_chunk


def test_the_window_knob_does_not_change_the_chunks_or_their_configuration():
    source = document(REGULATION)
    narrow, wide = run("sentence_window", source, window=0), run("sentence_window", source, window=5)
    assert [c.chunk_id for c in narrow] == [c.chunk_id for c in wide]


@pytest.mark.parametrize(
    ("name", "knobs", "message"),
    [
        ("recursive", {"chunk_size": 64, "chunk_overlap": 64}, "smaller than chunk_size"),
        ("hybrid_semantic_recursive", {"min_tokens": 400}, "smaller than max_tokens"),
        ("parent_child", {"parent_level": "chapter"}, "must be one of article, section, paragraph"),
        ("semantic", {"threshold": 1.5}, "at most 1"),
        ("contextual_retrieval", {"chunk_overlap": 600}, "smaller than chunk_size"),
    ],
)
def test_bad_knobs_are_refused_with_a_reason(name, knobs, message):
    with pytest.raises(InvalidArgument, match=message):
        REGISTRY.build(common_pb2.StrategySpec(name=name, knobs={k: knob(v) for k, v in knobs.items()}))


# -- goldens on the fixture (tests/fixtures/regulation.md) -----------------


def test_recursive_golden():
    chunks = run("recursive", document(REGULATION), chunk_size=32, chunk_overlap=0)
    assert contents(chunks) == [
        "Preamble: this regulation sets rules for data. It applies from 2025.\n\n# Part I. General provisions",
        "## Article 1. Scope\n\nThis regulation applies to personal data. It covers automated processing.\n\n"
        "It does not apply to purely personal activity.",
        '## Article 2. Definitions\n\nFor this regulation:\n\n- "data" means any information about a person;\n'
        '- "controller" means who decides the purposes.',
        "# Part II. Obligations\n\nControllers shall keep records.",
        "## Article 3. Retention",
        "| data kind | period |\n|-----------|--------|\n| invoices  | 10 years |\n| logs      | 90 days |",
        "Data older than the period shall be erased. Dr. Smith, e.g., erased 3.5 TB in 2024.",
        "### Article 3a. Exceptions\n\nArchives in the public interest are exempt.",
    ]
    assert chunks[1].heading_path == ["Part I. General provisions", "Article 1. Scope"]
    assert chunks[0].heading_path == []


FENCED = (
    "# Install\n\n"
    "Fetch the sources, check the tools you need and build everything from the top of the tree.\n\n"
    "```bash\n"
    "# not a heading: fetch and build\n"
    "git clone https://example.org/chunklab.git\n"
    "make build\n"
    "```\n\n"
    "~~~\n"
    "# not a heading either\n"
    "make test\n"
    "~~~\n\n"
    "# Use\n\n"
    "Start the stack, open the page and upload a document.\n"
)


@pytest.mark.parametrize("chunk_size", [32, 40, 48, 64])
def test_recursive_never_cuts_at_a_hash_line_inside_a_fence(chunk_size):
    """Both fences fit the chunk size, so each stays whole in one chunk; a
    `#` line inside one is no header to cut at (it was until ADR 0041)."""
    chunks = run("recursive", document(FENCED), chunk_size=chunk_size, chunk_overlap=0)
    fences = [
        "```bash\n# not a heading: fetch and build\ngit clone https://example.org/chunklab.git\nmake build\n```",
        "~~~\n# not a heading either\nmake test\n~~~",
    ]
    assert [tokens.count(f) for f in fences] == [27, 13]
    for fence in fences:
        holding = [c for c in chunks if fence in c.content]
        assert len(holding) == 1 and holding[0].heading_path == ["Install"]
    assert not any(c.content.startswith("# not a heading") for c in chunks)
    assert [c.heading_path for c in chunks if c.content.startswith("# ")] == [["Install"], ["Use"]]


def test_recursive_overlap_repeats_whole_trailing_parts():
    text = " ".join(f"Sentence number {i} is here." for i in range(40))
    chunks = run("recursive", document(text), chunk_size=40, chunk_overlap=12)
    for before, after in zip(chunks, chunks[1:]):
        assert before.start_char < after.start_char < before.end_char  # overlaps, moves on
        assert text[after.start_char : before.end_char].endswith(".")  # whole sentences repeated


def chroma_corpora() -> str:
    return "\n\n".join(p.read_text(encoding="utf-8") for p in sorted((chroma_general() / "corpora").glob("*.md")))


@pytest.mark.parametrize("copies", [1, 3])
def test_recursive_on_the_chroma_corpora_is_exact_and_bounded(copies):
    """Real text, once and repeated (repeated lines are encoded once, repeated long parts split once)."""
    text = chroma_corpora() * copies
    source = document(text, documents_pb2.DOCUMENT_FORMAT_TEXT)
    chunks = run("recursive", source, chunk_size=256, chunk_overlap=0)
    assert all(c.token_count <= 256 for c in chunks)
    assert covered_non_blank(text, chunks)


def test_remembering_the_splits_of_long_parts_changes_no_piece(monkeypatch):
    """A long paragraph that comes back is split from memory: the pieces are those a fresh split finds."""
    paragraph = " ".join(f"Sentence {i} of a long paragraph, e.g. with 3.5 numbers." for i in range(30))
    text = "\n\n".join([paragraph, "A short one.", paragraph, "# Heading\n\n" + paragraph, "Dr. Smith's end."] * 3)
    remembered = Spans(text).split(0, len(text), 48, overlap=8)
    monkeypatch.setattr(spans_module, "MEMO_CHARS", len(text) + 1)
    assert Spans(text).split(0, len(text), 48, overlap=8) == remembered
    assert all(n == tokens.count(text[a:b]) <= 48 for a, b, n in remembered)


def test_markdown_structure_golden():
    chunks = run("markdown_structure", document(REGULATION), max_tokens=40)
    assert [(c.heading_path[-1] if c.heading_path else "", c.content[:30]) for c in chunks] == [
        ("", "Preamble: this regulation sets"),
        ("Article 1. Scope", "# Part I. General provisions\n\n"),
        ("Article 2. Definitions", "## Article 2. Definitions\n\nFor"),
        ("Part II. Obligations", "# Part II. Obligations\n\nContro"),
        ("Article 3. Retention", "## Article 3. Retention\n\n| dat"),
        ("Article 3. Retention", "Data older than the period sha"),
        ("Article 3a. Exceptions", "### Article 3a. Exceptions\n\nAr"),
    ]
    # Article 3 (62 tokens) was cut between its table and its paragraph.
    assert chunks[4].content.endswith("| logs      | 90 days |")
    unsplit = run("markdown_structure", document(REGULATION))
    assert len(unsplit) == 6 and unsplit[4].content.endswith("erased 3.5 TB in 2024.")


def test_markdown_structure_without_headings_groups_paragraphs():
    text = "\n\n".join(f"Paragraph {i} says something short." for i in range(10))
    chunks = run("markdown_structure", document(text, documents_pb2.DOCUMENT_FORMAT_TEXT), max_tokens=24)
    assert contents(chunks) == [
        "Paragraph 0 says something short.\n\nParagraph 1 says something short.\n\nParagraph 2 says something short.",
        "Paragraph 3 says something short.\n\nParagraph 4 says something short.\n\nParagraph 5 says something short.",
        "Paragraph 6 says something short.\n\nParagraph 7 says something short.\n\nParagraph 8 says something short.",
        "Paragraph 9 says something short.",
    ]


def test_parent_child_article_golden():
    chunks = run("parent_child", document(REGULATION))
    assert families(chunks) == [
        ("Preamble: this regulation sets rules for data. It applies from 2025.", ["Preamble: this regul"]),
        ("## Article 1. Scope", ["This regulation appl", "It does not apply to"]),
        ("## Article 2. Definitions", ["For this regulation:", '- "data" means any i']),
        ("# Part II. Obligations", ["Controllers shall ke"]),
        ("## Article 3. Retention", ["| data kind | period", "Data older than the "]),
        ("### Article 3a. Exceptions", ["Archives in the publ"]),
    ]
    assert not any(c.HasField("parent_id") for c in chunks if ids.role_name(c.role) == "parent")


def test_parent_child_section_golden():
    chunks = run("parent_child", document(REGULATION), parent_level="section")
    assert families(chunks) == [
        ("Preamble: this regulation sets rules for data. It applies from 2025.", ["Preamble: this regul"]),
        (
            "# Part I. General provisions",
            ["This regulation appl", "It does not apply to", "For this regulation:", '- "data" means any i'],
        ),
        (
            "# Part II. Obligations",
            ["Controllers shall ke", "| data kind | period", "Data older than the ", "Archives in the publ"],
        ),
    ]
    assert [c.heading_path for c in chunks if ids.role_name(c.role) == "child"][-1] == [
        "Part II. Obligations",
        "Article 3. Retention",
        "Article 3a. Exceptions",
    ]


def test_parent_child_paragraph_level_and_long_paragraphs_become_bounded_children():
    chunks = run("parent_child", document(REGULATION), parent_level="paragraph", child_max_tokens=16)
    fam = families(chunks)
    assert len(fam) == 9
    assert fam[-2] == (
        "Data older than the period shall be erased. Dr. Smith, e.g., erased 3.5 TB in 2024.",
        ["Data older than the ", "Dr. Smith, e.g., era", "2024."],
    )
    assert all(c.token_count <= 16 for c in chunks if ids.role_name(c.role) == "child")


def test_parent_child_without_headings_falls_back_to_paragraph_groups():
    text = "\n\n".join(f"Paragraph {i} says something short." for i in range(6))
    chunks = run(
        "parent_child", document(text, documents_pb2.DOCUMENT_FORMAT_TEXT), child_max_tokens=16, parent_max_tokens=30
    )
    assert [len(children) for _, children in families(chunks)] == [4, 2]
    assert all(c.token_count <= 30 for c in chunks if ids.role_name(c.role) == "parent")


def test_sentence_window_golden():
    chunks = run("sentence_window", document(REGULATION))
    assert {c.role for c in chunks} == {common_pb2.CHUNK_ROLE_SENTENCE}
    assert contents(chunks)[:6] == [
        "Preamble: this regulation sets rules for data.",
        "It applies from 2025.",
        "# Part I. General provisions",
        "## Article 1. Scope",
        "This regulation applies to personal data.",
        "It covers automated processing.",
    ]
    assert len(chunks) == 22
    pairs = run("sentence_window", document(REGULATION), sentences_per_unit=2)
    assert pairs[0].content == "Preamble: this regulation sets rules for data. It applies from 2025."
    assert len(pairs) == 11


def test_strategies_run_on_one_document_tokenize_it_once_and_chunk_as_they_would_alone(monkeypatch):
    """ProcessDocument runs every strategy on one SourceDocument: they share its token map."""
    from services.chunker import token_map as token_map_module

    calls = []
    real = token_map_module.token_segments
    monkeypatch.setattr(token_map_module, "token_segments", lambda text: calls.append(len(text)) or real(text))
    shared = document(REGULATION)
    together = {name: run(name, shared) for name in SPEC_NAMES}
    assert calls == [len(REGULATION)]
    for name in SPEC_NAMES:
        alone = run(name, document(REGULATION))
        assert [(c.start_char, c.end_char, c.token_count, c.role) for c in together[name]] == [
            (c.start_char, c.end_char, c.token_count, c.role) for c in alone
        ], name


def test_semantic_golden_with_hashed_embeddings():
    chunks = run("semantic", document(REGULATION), max_tokens=40, min_sentences=2)
    assert all(c.token_count <= 40 for c in chunks)
    assert covered_non_blank(REGULATION, chunks)
    assert contents(chunks)[0] == "Preamble: this regulation sets rules for data. It applies from 2025."


@pytest.fixture(scope="module")
def minilm():
    from chunklab.embeddings import MINILM_MODEL, get_provider

    return offline_context(get_provider(MINILM_MODEL).embed_documents)


def test_semantic_boundaries_with_the_real_model(minilm):
    text = (FIXTURES / "three_topics.txt").read_text()
    source = document(text, documents_pb2.DOCUMENT_FORMAT_TEXT)
    expected = [
        "The volcano erupted at dawn and lava poured down its slopes. Hot ash from the crater buried the nearby "
        "villages. Magma kept rising through the cracks in the mountain for days.",
        "Sourdough bread needs a starter of wild yeast and flour. Bakers knead the dough and let it rise overnight "
        "before baking. A hot oven gives the loaf its crisp crust and soft crumb.",
        "The striker scored twice in the second half of the football match. The goalkeeper saved a penalty and the "
        "fans cheered in the stadium. The team won the league title after the final whistle.",
    ]
    assert contents(run("semantic", source, minilm)) == expected
    assert contents(run("semantic", source, minilm, threshold=0.2, min_sentences=1)) == expected
    # Each group is 33-40 tokens: a maximum of 30 cuts them at their weakest link.
    assert all(
        c.token_count <= 30 for c in run("semantic", source, minilm, threshold=0.2, min_sentences=1, max_tokens=30)
    )


def test_semantic_parent_child_golden_with_the_real_model(minilm):
    text = (FIXTURES / "topics.md").read_text()
    chunks = run("semantic_parent_child", document(text), minilm, threshold=0.3)
    fam = families(chunks)
    assert sum(len(children) for _, children in fam) == 8  # every paragraph is a child
    assert len(fam) >= 6  # unrelated topics get parents of their own


def test_semantic_parents_never_span_two_sections_however_alike_their_paragraphs(minilm):
    text = (
        "# Harbour lights\n\n## The north pier\n\nThe lighthouse on the north pier shines white every night.\n\n"
        "Its lamp turns once every ten seconds for the ships.\n\n## The south pier\n\n"
        "The lighthouse on the south pier shines white every night.\n\nIts lamp turns once every ten seconds too.\n"
    )
    chunks = run("semantic_parent_child", document(text), minilm, threshold=0.0)  # any two paragraphs are alike
    parents = [c for c in chunks if ids.role_name(c.role) == "parent"]
    assert [p.heading_path[-1] for p in parents] == ["The north pier", "The south pier"]
    assert [p.content.count("lighthouse") for p in parents] == [1, 1]


def test_hybrid_golden_with_the_real_model(minilm):
    text = (FIXTURES / "three_topics.txt").read_text()
    source = document(text, documents_pb2.DOCUMENT_FORMAT_TEXT)
    chunks = run("hybrid_semantic_recursive", source, minilm, threshold=0.2, min_tokens=10, max_tokens=64)
    assert [c.content.split(".")[0] for c in chunks] == [
        "The volcano erupted at dawn and lava poured down its slopes",
        "Sourdough bread needs a starter of wild yeast and flour",
        "The striker scored twice in the second half of the football match",
    ]
    # A band of 60-64 tokens: too-small groups join their more similar neighbour.
    merged = run("hybrid_semantic_recursive", source, minilm, threshold=0.2, min_tokens=60, max_tokens=80)
    assert len(merged) == 2 and all(c.token_count <= 80 for c in merged)


# -- the contextual strategies ---------------------------------------------


def test_contextual_retrieval_prefixes_each_fixed_size_chunk_with_the_llm_context():
    chat = FakeChat()
    source = document(REGULATION)
    chunks = run("contextual_retrieval", source, context(chat), chunk_size=40, chunk_overlap=0)
    fixed = run("fixed_size", source, chunk_size=40, chunk_overlap=0)
    assert [(c.start_char, c.end_char) for c in chunks] == [(c.start_char, c.end_char) for c in fixed]
    assert [c.enriched_content for c in chunks] == [f"Context {i}.\n\n{c.content}" for i, c in enumerate(chunks)]
    assert len(chat.requests) == len(chunks)
    prompt = chat.requests[1][0]["content"]
    assert prompt.startswith("<document>\n" + REGULATION + "\n</document>")
    assert f"<chunk>\n{chunks[1].content}\n</chunk>" in prompt and "succinct context" in prompt


def test_contextual_structure_renders_the_labelled_text():
    chunks = run("contextual_structure", document(REGULATION), context(FakeChat()), max_tokens=40)
    assert chunks[-1].enriched_content == (
        "Document: regulation.md\nSection: Part II. Obligations\nArticle: Article 3a. Exceptions\n"
        "Context: Context 6.\nContent: ### Article 3a. Exceptions\n\nArchives in the public interest are exempt."
    )
    assert chunks[0].enriched_content.startswith("Document: regulation.md\nContext: Context 0.\nContent: Preamble")
    assert [c.content for c in chunks] == [
        c.content for c in run("markdown_structure", document(REGULATION), max_tokens=40)
    ]


@pytest.mark.parametrize("name", ["contextual_retrieval", "contextual_structure"])
@pytest.mark.parametrize(
    "chat",
    [
        FakeChat(fail=LLMError("rate limited (429)")),
        FakeChat(fail=NoLLM("no LLM endpoint is configured")),
        FakeChat(reply="  "),
    ],
    ids=["error", "no-endpoint", "empty-reply"],
)
def test_a_failing_llm_fails_the_contextual_strategy_as_a_whole(name, chat):
    strategy = REGISTRY.build(common_pb2.StrategySpec(name=name))
    with pytest.raises((LLMError, NoLLM)):
        strategy.chunk(document(REGULATION), context(chat))


def test_the_document_in_the_prompt_is_bounded_around_the_chunk():
    text = " ".join(f"word{i}" for i in range(30000))
    index = Spans(text)
    start = text.index("word20000")
    view = document_view(index, start, start + 50)
    assert view.startswith("word0 word1 ") and "word20000" in view and "[…]" in view
    assert tokens.count(view) <= MAX_DOCUMENT_TOKENS + 20
    assert document_view(Spans("short text"), 0, 5) == "short text"


# -- properties on random text ---------------------------------------------


LIMITED = [
    ("recursive", "chunk_size", {"chunk_overlap": 0}),
    ("recursive", "chunk_size", {"chunk_overlap": 6}),
    ("semantic", "max_tokens", {"min_sentences": 2}),
    ("sentence_window", "max_tokens", {}),
    ("markdown_structure", "max_tokens", {}),
    ("hybrid_semantic_recursive", "max_tokens", {"min_tokens": 8}),
]


@pytest.mark.parametrize(("name", "limit_knob", "extra"), LIMITED, ids=[f"{n}-{e}" for n, _, e in LIMITED])
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(text=random_text, limit=st.integers(16, 60), markdown=st.booleans())
def test_exact_slices_within_the_maximum_covering_the_text(name, limit_knob, extra, text, limit, markdown):
    fmt = documents_pb2.DOCUMENT_FORMAT_MARKDOWN if markdown else documents_pb2.DOCUMENT_FORMAT_TEXT
    source = document(text, fmt)
    chunks = run(name, source, **{limit_knob: limit}, **extra)
    assert all(c.token_count <= limit for c in chunks)
    assert covered_non_blank(text, chunks) if name != "markdown_structure" else covered_blocks(source, chunks)
    starts = [c.start_char for c in chunks]
    assert starts == sorted(starts)


def covered_blocks(source: SourceDocument, chunks) -> bool:
    """markdown_structure covers every block of the tree (front matter is metadata)."""
    from services.chunker.strategies.structure import paragraph_ranges

    covered = set()
    for c in chunks:
        covered.update(range(c.start_char, c.end_char))
    return all(
        i in covered or source.text[i].isspace()
        for a, b in paragraph_ranges(source.text, source.tree)
        for i in range(a, b)
    )


@pytest.mark.parametrize("name", ["parent_child", "semantic_parent_child"])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=random_text, child_limit=st.integers(16, 40), level=st.sampled_from(["article", "section", "paragraph"]))
def test_parents_contain_their_bounded_children(name, text, child_limit, level):
    knobs = {"child_max_tokens": child_limit, "parent_max_tokens": child_limit * 3}
    if name == "parent_child":
        knobs["parent_level"] = level
    chunks = run(name, document(text), **knobs)
    families(chunks)
    assert all(c.token_count <= child_limit for c in chunks if ids.role_name(c.role) == "child")
    assert all(c.token_count <= child_limit * 3 for c in chunks if ids.role_name(c.role) == "parent")
    children = [c for c in chunks if ids.role_name(c.role) == "child"]
    assert [c.start_char for c in children] == sorted(c.start_char for c in children)


@settings(max_examples=60, deadline=None)
@given(text=random_text, data=st.data())
def test_counting_a_span_from_its_edges_equals_tokenizing_it(text, data):
    """Spans.exact tokenizes only a span's head and tail (ADR 0010)."""
    text = text * 3
    if not text:
        return
    index = Spans(text)
    start = data.draw(st.integers(0, len(text) - 1))
    end = data.draw(st.integers(start + 1, len(text)))
    assert index.exact(start, end) == tokens.count(text[start:end])
