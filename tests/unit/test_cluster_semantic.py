"""cluster_semantic and cluster_parent_child: pieces grouped by dynamic
programming (ADR 0056), on hand-built texts with an embedder whose
similarities are known, and the DP against brute force."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chunklab import ids
from chunklab.errors import InvalidArgument
from chunklab.v1 import common_pb2
from services.chunker.strategies import REGISTRY, offline_context
from services.chunker.strategies.clustering import mean_pairwise_similarity, optimal_groups, total_reward
from tests.support.chunking import covered_non_blank, document, families, hashed_embed, knob, random_text, run

TOPICS = ("cat", "ship", "bird")


def topic_embed(texts: list[str]) -> np.ndarray:
    """One axis per topic word (and one for none): pieces about the same
    topic have similarity 1, about different topics 0."""
    out = np.zeros((len(texts), len(TOPICS) + 1), dtype=np.float32)
    for i, text in enumerate(texts):
        lower = text.lower()
        for t, topic in enumerate(TOPICS):
            out[i, t] = lower.count(topic)
        out[i, -1] = 0.0 if out[i].any() else 1.0
    return out / np.linalg.norm(out, axis=1, keepdims=True)


# Pieces at piece_tokens=5 are the sentences (5, 4, 4, 4 and 4 tokens).
PETS = "Cats purr. Cats nap. Ships sail. Ships dock. Cats hunt."


def chunked(name: str, text: str, **knobs):
    return run(name, document(text), offline_context(topic_embed), **knobs)


def test_pieces_about_one_topic_make_one_chunk_and_a_stray_piece_stays_alone():
    # Pairs: 4 of 10 share a topic, so the mean is 0.4; a same-topic pair
    # gains 0.6 and a mixed pair loses 0.4. [Cats Cats][Ships Ships][Cats]
    # scores 1.2; joining the last cat to the ships would score 0.4.
    chunks = chunked("cluster_semantic", PETS, piece_tokens=5, max_tokens=200)
    assert [c.content for c in chunks] == ["Cats purr. Cats nap.", "Ships sail. Ships dock.", "Cats hunt."]
    assert [(c.start_char, c.end_char, c.token_count) for c in chunks] == [(0, 20, 8), (21, 44, 7), (45, 55, 4)]


def test_the_maximum_wins_over_similarity():
    # Four cat sentences (9, 9, 8, 8 tokens) and a ship: 24 tokens hold three
    # cats, not four (31). A cat pair gains 0.4 over the mean of 0.6, so three
    # cats together score 1.2; [cat][three cats] ties, and ties go to the
    # smaller last group.
    text = (
        "Cats purr on the warm mat. Cats nap in the sun all day. Cats hunt mice in the barn. "
        "Cats play with yarn at dusk. Ships sail at dawn."
    )
    chunks = chunked("cluster_semantic", text, piece_tokens=9, max_tokens=24)
    assert [c.content for c in chunks] == [
        "Cats purr on the warm mat. Cats nap in the sun all day. Cats hunt mice in the barn.",
        "Cats play with yarn at dusk.",
        "Ships sail at dawn.",
    ]
    assert [c.token_count for c in chunks] == [24, 8, 6]


def test_bigger_pieces_are_grouped_as_wholes():
    # At 12 tokens the cascade packs three sentences (11 tokens) into the first
    # piece; the two pieces together (20) do not fit 16.
    chunks = chunked("cluster_semantic", PETS, piece_tokens=12, max_tokens=16)
    assert [c.content for c in chunks] == ["Cats purr. Cats nap. Ships sail.", "Ships dock. Cats hunt."]


def test_children_are_the_pieces_and_their_parents_the_clusters():
    chunks = chunked("cluster_parent_child", PETS, child_max_tokens=5, parent_max_tokens=200, context_pieces=0)
    assert families(chunks) == [
        ("Cats purr. Cats nap.", ["Cats purr.", "Cats nap."]),
        ("Ships sail. Ships dock.", ["Ships sail.", "Ships dock."]),
        ("Cats hunt.", ["Cats hunt."]),
    ]
    children = [c for c in chunks if c.role == common_pb2.CHUNK_ROLE_CHILD]
    assert [c.chunk_index for c in children] == [0, 1, 2, 3, 4]
    assert REGISTRY.get("cluster_parent_child").expansion == common_pb2.EXPANSION_KIND_PARENT
    assert not any(c.HasField("enriched_content") for c in chunks)


def test_a_child_is_embedded_with_the_pieces_beside_it():
    chunks = chunked("cluster_parent_child", PETS, child_max_tokens=5, parent_max_tokens=200, context_pieces=1)
    children = [c for c in chunks if c.role == common_pb2.CHUNK_ROLE_CHILD]
    assert [c.content for c in children] == ["Cats purr.", "Cats nap.", "Ships sail.", "Ships dock.", "Cats hunt."]
    assert [c.enriched_content for c in children] == [
        "Cats purr. Cats nap.",
        "Cats purr. Cats nap. Ships sail.",
        "Cats nap. Ships sail. Ships dock.",
        "Ships sail. Ships dock. Cats hunt.",
        "Ships dock. Cats hunt.",
    ]
    assert not any(c.HasField("enriched_content") for c in chunks if c.role == common_pb2.CHUNK_ROLE_PARENT)


def test_pooled_children_keep_their_chunks_and_take_the_mean_of_their_window_pieces():
    """context_vectors=pooled: the same chunks as encoded, and each child's vector is
    the unit mean of the vectors of the pieces in its window (no window text embedded)."""
    asked: list[str] = []

    def recording(texts: list[str]) -> np.ndarray:
        asked.extend(texts)
        return topic_embed(texts)

    encoded_context, pooled_context = offline_context(topic_embed), offline_context(recording)
    sizes = {"child_max_tokens": 5, "parent_max_tokens": 200, "context_pieces": 1}
    encoded = run("cluster_parent_child", document(PETS), encoded_context, **sizes)
    pooled = run("cluster_parent_child", document(PETS), pooled_context, context_vectors="pooled", **sizes)
    assert families(pooled) == families(encoded)
    assert [c.enriched_content for c in pooled] == [c.enriched_content for c in encoded]
    assert asked == ["Cats purr.", "Cats nap.", "Ships sail.", "Ships dock.", "Cats hunt."]  # the pieces, once
    assert not encoded_context.vectors
    children = [c for c in pooled if c.role == common_pb2.CHUNK_ROLE_CHILD]
    assert set(pooled_context.vectors) == {c.chunk_id for c in children}
    cat, ship = topic_embed(["cat"])[0], topic_embed(["ship"])[0]
    # "Cats purr. Cats nap." is all cat; "Cats nap. Ships sail. Ships dock." is one cat, two ships.
    np.testing.assert_allclose(pooled_context.vectors[children[0].chunk_id], cat, atol=1e-6)
    one_cat_two_ships = (cat + 2 * ship) / np.linalg.norm(cat + 2 * ship)
    np.testing.assert_allclose(pooled_context.vectors[children[2].chunk_id], one_cat_two_ships, atol=1e-6)


def test_headings_start_a_piece_and_chunks_carry_their_heading_path():
    text = "# Cats\n\nCats purr. Cats nap.\n\n# Ships\n\nShips sail. Ships dock."
    chunks = chunked("cluster_semantic", text, piece_tokens=12, max_tokens=200)
    assert [c.content for c in chunks] == ["# Cats\n\nCats purr. Cats nap.", "# Ships\n\nShips sail. Ships dock."]
    assert [list(c.heading_path) for c in chunks] == [["Cats"], ["Ships"]]


def test_piece_size_above_the_maximum_is_refused():
    with pytest.raises(InvalidArgument, match="piece_tokens must be at most max_tokens"):
        REGISTRY.build(
            common_pb2.StrategySpec(name="cluster_semantic", knobs={"piece_tokens": knob(300), "max_tokens": knob(200)})
        )


def test_defaults_are_the_chroma_reports_sizes_and_the_measured_best():
    infos = {info.name: info for info in REGISTRY.infos()}
    defaults = {
        n: {k.name: k.default_value.int_value or k.default_value.string_value for k in infos[n].knobs}
        for n in ("cluster_semantic", "cluster_parent_child")
    }
    assert defaults == {
        "cluster_semantic": {"piece_tokens": 50, "max_tokens": 200},
        "cluster_parent_child": {
            "child_max_tokens": 50,
            "parent_max_tokens": 350,
            "context_pieces": 1,
            "context_vectors": "encoded",
        },
    }
    assert all(infos[n].requires_embeddings_to_chunk for n in defaults)


# -- the dynamic programme -------------------------------------------------


def brute_force(vectors: np.ndarray, fits) -> float:
    """The best total reward over every segmentation whose groups all fit."""
    n = len(vectors)
    best = -np.inf
    for cuts in itertools.product((False, True), repeat=n - 1):
        bounds = [0, *[k + 1 for k, cut in enumerate(cuts) if cut], n]
        groups = list(zip(bounds[:-1], bounds[1:]))
        if all(fits(a, b) for a, b in groups):
            best = max(best, total_reward(vectors, groups))
    return best


@pytest.mark.parametrize("seed", range(12))
def test_the_segmentation_is_the_best_of_all_that_fit(seed):
    rng = np.random.default_rng(seed)
    vectors = rng.normal(size=(9, 5))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    lengths = rng.integers(1, 5, size=9)
    fits = lambda a, b: lengths[a:b].sum() <= 8  # noqa: E731
    groups = optimal_groups(vectors, fits)
    assert groups[0][0] == 0 and groups[-1][1] == 9
    assert all(a < b and b == c for (a, b), (c, _) in zip(groups, groups[1:]))
    assert all(fits(a, b) for a, b in groups)
    assert total_reward(vectors, groups) == pytest.approx(brute_force(vectors, fits), abs=1e-9)


def test_the_mean_pairwise_similarity_is_that_of_all_pairs():
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(6, 4))
    pairs = [vectors[a] @ vectors[b] for a, b in itertools.combinations(range(6), 2)]
    assert mean_pairwise_similarity(vectors) == pytest.approx(np.mean(pairs))


def test_the_work_is_bounded_by_the_group_size():
    asked = []

    def fits(a, b):
        asked.append((a, b))
        return b - a <= 3

    vectors = np.tile(np.eye(4, dtype=np.float32)[:1], (100, 1))
    groups = optimal_groups(vectors, fits)
    # Each last piece tries groups of 2, 3 and 4 pieces (the last one fails): at most 3 questions each.
    assert len(asked) <= 3 * 100
    assert all(b - a <= 3 for a, b in groups)


LIMITS = [
    ("cluster_semantic", "piece_tokens", "max_tokens"),
    ("cluster_parent_child", "child_max_tokens", "parent_max_tokens"),
]


@pytest.mark.parametrize(("name", "piece_knob", "limit_knob"), LIMITS, ids=[n for n, _, _ in LIMITS])
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=random_text, piece=st.integers(4, 20), limit=st.integers(20, 60))
def test_exact_slices_within_the_maximum_covering_the_text(name, piece_knob, limit_knob, text, piece, limit):
    chunks = run(name, document(text), offline_context(hashed_embed), **{piece_knob: piece, limit_knob: limit})
    searched = [c for c in chunks if c.role != common_pb2.CHUNK_ROLE_PARENT]
    grouped = [c for c in chunks if c.role in (common_pb2.CHUNK_ROLE_CHUNK, common_pb2.CHUNK_ROLE_PARENT)]
    assert all(c.token_count <= limit for c in grouped)
    assert covered_non_blank(text, grouped) and covered_non_blank(text, searched)
    if name == "cluster_parent_child":
        families(chunks)
        assert all(c.token_count <= piece for c in searched)
        assert all(ids.role_name(c.role) in ("parent", "child") for c in chunks)
