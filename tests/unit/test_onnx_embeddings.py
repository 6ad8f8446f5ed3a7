"""all-MiniLM-L6-v2 through ONNX Runtime: the same vectors as torch, chosen by model
name, and a precise refusal when the export is missing or built from other weights.

The export is the environment's (`make onnx`, part of `make setup`); a session
without one builds it once, offline, from the packaged weights (about 30 s)."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from chunklab import embeddings
from chunklab.embeddings import late, onnx, onnx_export
from chunklab.embeddings.minilm import MiniLMProvider
from chunklab.embeddings.onnx import OnnxMiniLMProvider, open_session
from chunklab.errors import FailedPrecondition
from services.chunker.cache import EmbeddingCache

SENTENCES = [
    "The cat sat on the mat.",
    "Café déjà vu: naïve Ünïcödé, accented.",
    "猫はマットの上に座った。東京は大きい都市です。",
    "What did the president announce about credit card late fees?",
    "word " * 600,  # cut at the model's 256 word pieces
]


@pytest.fixture(scope="module")
def export_dir():
    return onnx_export.ensure_export()


@pytest.fixture(scope="module")
def torch_vectors():
    return embeddings.get_provider("all-MiniLM-L6-v2").embed_documents(SENTENCES)


def test_fp32_vectors_agree_with_torch_to_cosine_0999(export_dir, torch_vectors):
    provider = OnnxMiniLMProvider("fp32", export_dir)
    vectors = provider.embed_documents(SENTENCES)
    assert vectors.shape == (5, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert (vectors * torch_vectors).sum(axis=1).min() >= 0.999
    # A question on its own gives the row it gets in a batch (padding changes nothing).
    assert float(provider.embed_query(SENTENCES[3]) @ vectors[3]) >= 0.99999


def test_int8_vectors_stay_close_to_torch(export_dir, torch_vectors):
    vectors = OnnxMiniLMProvider("int8", export_dir).embed_documents(SENTENCES)
    cosines = (vectors * torch_vectors).sum(axis=1)
    # Measured 0.98-0.998 on these; the recall it gives is in bench/embedding_backends.py.
    assert cosines.min() >= 0.95 and cosines.max() < 0.99999


def test_tokenisation_is_the_torch_paths(export_dir):
    provider = OnnxMiniLMProvider("fp32", export_dir)
    _, tokenizer = provider._load()
    reference = (
        embeddings.get_provider("all-MiniLM-L6-v2").model().tokenizer(SENTENCES, truncation=True, max_length=256)
    )
    ours = [encoding.ids for encoding in tokenizer.encode_batch(SENTENCES)]
    assert ours == reference["input_ids"]
    assert len(ours[-1]) == 256


def test_the_backend_is_chosen_by_model_name_and_never_shares_a_cache_namespace():
    names = embeddings.available_models()
    assert names[:3] == ["all-MiniLM-L6-v2", "all-MiniLM-L6-v2-onnx", "all-MiniLM-L6-v2-onnx-int8"]
    torch_provider = embeddings.get_provider("all-MiniLM-L6-v2")
    fp32 = embeddings.get_provider("all-MiniLM-L6-v2-onnx")
    int8 = embeddings.get_provider("all-MiniLM-L6-v2-onnx-int8")
    assert type(torch_provider) is MiniLMProvider
    assert isinstance(fp32, OnnxMiniLMProvider) and fp32.variant == "fp32"
    assert isinstance(int8, OnnxMiniLMProvider) and int8.variant == "int8"
    assert embeddings.get_provider("all-MiniLM-L6-v2-onnx") is fp32  # one per process
    assert len({torch_provider.cache_namespace, fp32.cache_namespace, int8.cache_namespace}) == 3
    assert fp32.dimension == int8.dimension == 384


def test_the_chunkers_cache_never_answers_one_backend_with_anothers_vectors(export_dir, torch_vectors, tmp_path):
    cache = EmbeddingCache(tmp_path / "embeddings.sqlite3")
    try:
        assert cache.embed(embeddings.get_provider("all-MiniLM-L6-v2"), SENTENCES[:2]).cached == 0
        assert cache.embed(embeddings.get_provider("all-MiniLM-L6-v2"), SENTENCES[:2]).cached == 2
        int8 = cache.embed(embeddings.get_provider("all-MiniLM-L6-v2-onnx-int8"), SENTENCES[:2])
        assert int8.cached == 0
        assert np.allclose(
            int8.vectors, OnnxMiniLMProvider("int8", export_dir).embed_documents(SENTENCES[:2]), atol=1e-6
        )
        assert not np.allclose(int8.vectors, torch_vectors[:2], atol=1e-4)
    finally:
        cache.close()


def test_a_missing_export_is_refused_with_the_command_that_builds_it(tmp_path):
    with pytest.raises(FailedPrecondition) as caught:
        OnnxMiniLMProvider("int8", tmp_path).embed_query("hello")
    assert caught.value.message == (
        f"the ONNX export of all-MiniLM-L6-v2 (int8) is not built: {tmp_path / 'model-int8.onnx'} is missing; "
        "build it from the packaged weights, offline, with make onnx (or .venv/bin/python -m chunklab.embeddings.onnx_export), "
        "or point CHUNKLAB_ONNX_DIR at a folder that holds one"
    )


def test_an_export_of_other_weights_is_refused(export_dir, tmp_path):
    shutil.copy(export_dir / "model.onnx", tmp_path / "model.onnx")
    manifest = json.loads((export_dir / "manifest.json").read_text())
    manifest["source"]["version"] = "0.0.9"
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(FailedPrecondition) as caught:
        OnnxMiniLMProvider("fp32", tmp_path).embed_documents(["hello"])
    assert f"the ONNX export in {tmp_path} was built from" in caught.value.message
    assert "'version': '0.0.9'" in caught.value.message and "build it again with make onnx" in caught.value.message


def test_an_export_of_an_older_recipe_is_refused_and_rebuilt_by_ensure_export(export_dir, tmp_path):
    """An export from before ADR 0071 (no recipe in its manifest) gives other int8 vectors."""
    for name in ("model.onnx", "model-int8.onnx"):
        shutil.copy(export_dir / name, tmp_path / name)
    manifest = json.loads((export_dir / "manifest.json").read_text())
    del manifest["recipe"]
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(FailedPrecondition) as caught:
        OnnxMiniLMProvider("int8", tmp_path).embed_documents(["hello"])
    assert caught.value.message == (
        f"the ONNX export in {tmp_path} was built by recipe 1, not this version's {onnx_export.RECIPE}; "
        "build it again with make onnx (or .venv/bin/python -m chunklab.embeddings.onnx_export)"
    )
    onnx_export.ensure_export(tmp_path)
    assert json.loads((tmp_path / "manifest.json").read_text())["recipe"] == onnx_export.RECIPE
    assert OnnxMiniLMProvider("int8", tmp_path).embed_documents(["hello"]).shape == (1, 384)


def test_the_int8_graph_quantises_the_attention_projection_and_keeps_layer_norms_apart(export_dir, tmp_path):
    """What makes int8 2.5x torch here (ADR 0071): QAttention, and no fused SkipLayerNormalization,
    neither in the export nor in the graph the provider's session runs after its own fusions."""
    import onnx
    import onnxruntime

    def operators(path):
        return {node.op_type for node in onnx.load(str(path)).graph.node}

    assert {"QAttention", "MatMulInteger", "LayerNormalization"} <= operators(export_dir / "model-int8.onnx")
    options = onnxruntime.SessionOptions()
    options.optimized_model_filepath = str(tmp_path / "as-run.onnx")
    open_session(export_dir / "model-int8.onnx", options)
    as_run = operators(tmp_path / "as-run.onnx")
    assert {"QAttention", "DynamicQuantizeMatMul", "LayerNormalization"} <= as_run
    assert not as_run & {"SkipLayerNormalization", "Attention", "MatMul"}
    assert OnnxMiniLMProvider("int8").cache_namespace == f"all-MiniLM-L6-v2-onnx-int8@{onnx_export.RECIPE}"


def test_the_environment_setting_names_the_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("CHUNKLAB_ONNX_DIR", str(tmp_path))
    assert onnx_export.default_dir() == tmp_path


def test_token_graphs_join_an_export_of_the_main_graphs_and_leave_those_as_they_were(export_dir, tmp_path):
    """An export from before ADR 0129 has no token graphs: late chunking is refused with the
    command, which builds them beside the main graphs without touching those (their vectors stay)."""
    for name in (*onnx_export.GRAPHS.values(), "tokens-int8.onnx"):
        shutil.copy(export_dir / name, tmp_path / name)
    manifest = json.loads((export_dir / "manifest.json").read_text())
    del manifest["token_graphs"]
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(FailedPrecondition) as caught:
        OnnxMiniLMProvider("int8", tmp_path).token_encoder().tokenize("hello")
    assert caught.value.message == (
        f"the ONNX export in {tmp_path} was built without token graphs, which late chunking reads; "
        "build them with make onnx (or .venv/bin/python -m chunklab.embeddings.onnx_export)"
    )
    before = {name: (tmp_path / name).stat().st_mtime_ns for name in onnx_export.GRAPHS.values()}
    onnx_export.ensure_export(tmp_path)
    assert {name: (tmp_path / name).stat().st_mtime_ns for name in onnx_export.GRAPHS.values()} == before
    assert json.loads((tmp_path / "manifest.json").read_text())["token_graphs"] == onnx_export.TOKEN_GRAPHS
    # The token graph's pooled output is the main graph's vector: the same network, one more output.
    vector = OnnxMiniLMProvider("int8", tmp_path).embed_query("hello harbour")
    encoder = OnnxMiniLMProvider("int8", tmp_path).token_encoder()
    sums = late.span_sums(encoder, "hello harbour", [(0, 13)])
    np.testing.assert_allclose(sums[0] / np.linalg.norm(sums[0]), vector, atol=1e-5)


def test_batches_run_side_by_side_give_every_vector_bit_for_bit_as_one_at_a_time(export_dir, monkeypatch):
    """int8 vectors depend on the texts batched together (ADR 0130); running batches
    concurrently (ADR 0143) keeps each batch's texts, so nothing moves, in either graph."""
    texts = [f"Passage {n}: " + "the river floods the valley every spring " * (1 + n % 7) for n in range(40)]
    provider = OnnxMiniLMProvider("int8", export_dir)
    tokens = provider.token_encoder()
    passes = [tokens.tokenize(text)[0] for text in texts[:12]]
    monkeypatch.setattr(onnx, "CONCURRENT_BATCHES", 2)
    side_by_side, states = provider.embed_documents(texts), tokens.encode(passes)
    monkeypatch.setattr(onnx, "CONCURRENT_BATCHES", 1)
    assert np.array_equal(side_by_side, provider.embed_documents(texts))
    assert all(np.array_equal(a, b) for a, b in zip(states, tokens.encode(passes), strict=True))
