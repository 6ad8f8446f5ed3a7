"""Late chunking (ADR 0129): spans' vectors read from the model's word-piece vectors of one
pass, checked against the model's own vectors; and cluster_parent_child's context_vectors=late
through the chunker's processing, whose stored vectors are the model's vectors of the chunks'
enriched texts.

The ONNX export is the environment's (`make onnx`); a session without its token graphs builds
them once, offline, from the packaged weights."""

from __future__ import annotations

import numpy as np
import pytest

from chunklab.embeddings import late, onnx_export
from chunklab.embeddings.onnx import OnnxMiniLMProvider, open_session, padded
from chunklab.v1 import common_pb2
from tests.support.chunking import cluster_parent_child_through_service
from tests.support.providers import HashedProvider

TEXT = (
    "# Harbour\n\nShips sail at dawn from the old harbour. The pilot boards at the breakwater.\n\n"
    "Fishing boats come back at noon with their catch. Gulls follow them into the basin.\n\n"
    "# Market\n\nThe fish market opens when the boats are in. Buyers bid for the morning's catch.\n\n"
    "Prices are chalked on a board by the door. Restaurants send their cooks before eight.\n\n"
    "# Weather\n\nA westerly gale keeps the fleet in port twice a month in winter."
)
SENTENCE = "What did the president announce about credit card late fees?"


@pytest.fixture(scope="module")
def export_dir():
    return onnx_export.ensure_export()


def unit(row: np.ndarray) -> np.ndarray:
    return row / np.linalg.norm(row)


@pytest.mark.parametrize("variant", ["fp32", "int8"])
def test_a_window_that_is_the_whole_text_gets_the_graphs_own_mean_pooled_vector(export_dir, variant):
    provider = OnnxMiniLMProvider(variant, export_dir)
    encoder = provider.token_encoder()
    (sums,) = late.span_sums(encoder, SENTENCE, [(0, len(SENTENCE))])[None, :]
    # The token graph's own pooled output for the same text, beside its word pieces' vectors.
    session = open_session(onnx_export.graph_path(export_dir, variant, tokens=True))
    ids, _ = encoder.tokenize(SENTENCE)
    feeds = padded([np.concatenate([[101], ids, [102]])], len(ids) + 2)
    pooled, tokens = session.run(None, {i.name: feeds[i.name] for i in session.get_inputs()})
    np.testing.assert_allclose(unit(sums[0]), pooled[0], atol=1e-5)
    np.testing.assert_allclose(unit(tokens[0].mean(axis=0)), pooled[0], atol=1e-5)
    # And the vector the provider gives the text alone (the main graph, same weights).
    np.testing.assert_allclose(unit(sums[0]), provider.embed_query(SENTENCE), atol=1e-5)


def test_the_spans_of_a_text_add_up_to_the_texts_vector_and_white_space_has_none(export_dir):
    provider = OnnxMiniLMProvider("fp32", export_dir)
    text = "Ships sail at dawn.  The pilot boards at the breakwater. Gulls follow them."
    spans = [(0, 19), (19, 21), (21, 56), (57, len(text))]
    sums = late.span_sums(provider.token_encoder(), text, spans)
    assert sums.shape == (4, 384)
    assert not sums[1].any()  # two spaces: no word piece
    np.testing.assert_allclose(unit(sums.sum(axis=0)), provider.embed_query(text), atol=1e-5)
    # Each sentence's vector has seen the others, so it is near, not equal to, the sentence alone.
    alone = provider.embed_documents([text[a:b] for a, b in spans if b - a > 2])
    cosines = (late.window_vectors(sums, 0)[[0, 2, 3]] * alone).sum(axis=1)
    assert cosines.min() > 0.5 and cosines.max() < 0.9999


def test_a_text_longer_than_a_pass_is_read_in_passes_cut_where_a_span_begins():
    owner = np.repeat(np.arange(8), [40, 50, 30, 200, 10, 5, 100, 20])  # span 3 is longer than a pass
    ranges = late.passes(owner, 126)
    assert ranges[0][0] == 0 and ranges[-1][1] == len(owner)
    assert all(a == prev_b for (_, prev_b), (a, _) in zip(ranges, ranges[1:]))
    assert all(0 < b - a <= 126 for a, b in ranges)
    # Every cut is where a span begins, except inside the span no pass can hold.
    assert [a for a, _ in ranges] == [0, 120, 246, 335]


def test_a_long_text_is_read_whole_and_its_vector_keeps_its_end(export_dir):
    provider = OnnxMiniLMProvider("fp32", export_dir)
    sentences = [f"Sentence {i} is about the harbour of town number {i}." for i in range(60)]
    text = " ".join(sentences)
    spans, at = [], 0
    for sentence in sentences:
        spans.append((at, at + len(sentence)))
        at += len(sentence) + 1
    sums = late.span_sums(provider.token_encoder(), text, spans)
    assert len(provider.token_encoder().tokenize(text)[0]) > 2 * 256  # three passes at least
    assert np.linalg.norm(sums, axis=1).min() > 0  # the last sentences too: nothing is cut


def process(tmp_path, provider, context_vectors: str) -> list:
    return cluster_parent_child_through_service(
        tmp_path / f"{provider.name}-{context_vectors}.sqlite3", provider, TEXT, context_vectors
    )


class Recording(OnnxMiniLMProvider):
    def __init__(self, directory) -> None:
        super().__init__("fp32", directory)
        self.asked: list[str] = []

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        self.asked += texts
        return super().embed_documents(texts)


def test_late_children_are_stored_with_the_models_vector_of_their_enriched_text(export_dir, tmp_path):
    provider = Recording(export_dir)
    indexed = process(tmp_path, provider, "late")
    children = [i for i in indexed if i.chunk.role == common_pb2.CHUNK_ROLE_CHILD]
    parents = {i.chunk.chunk_id: i for i in indexed if i.chunk.role == common_pb2.CHUNK_ROLE_PARENT}
    assert len(children) >= 6 and parents
    # Nothing went through embed_documents: neither the pieces alone nor the windows.
    assert provider.asked == []
    for child in children:
        chunk = child.chunk
        assert TEXT[chunk.start_char : chunk.end_char] == chunk.content
        assert chunk.content in chunk.enriched_content and chunk.enriched_content in TEXT
        assert chunk.parent_id in parents and chunk.embedding_model == provider.name
        np.testing.assert_allclose(child.vector, provider.embed_query(chunk.enriched_content), atol=1e-5)
    # Parents are stored for lookup by id only, and hold their children.
    for parent in parents.values():
        assert not parent.vector
        held = [c.chunk for c in children if c.chunk.parent_id == parent.chunk.chunk_id]
        assert all(parent.chunk.start_char <= c.start_char and c.end_char <= parent.chunk.end_char for c in held)


def test_a_model_without_word_piece_vectors_embeds_late_as_encoded(tmp_path):
    late_run = process(tmp_path, HashedProvider(), "late")
    encoded = process(tmp_path, HashedProvider(), "encoded")
    assert [i.chunk.content for i in late_run] == [i.chunk.content for i in encoded]
    assert [list(i.vector) for i in late_run] == [list(i.vector) for i in encoded]
    assert late_run[0].chunk.config_id != encoded[0].chunk.config_id  # never one set for both
