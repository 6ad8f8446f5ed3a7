"""One default embedding model (ADR 0074): chunklab.embeddings.DEFAULT_MODEL is what the settings
default to and what an empty model name means; the torch model keeps its own name."""

from __future__ import annotations

from chunklab import embeddings
from chunklab.embeddings.minilm import MiniLMProvider
from chunklab.embeddings.onnx import OnnxMiniLMProvider
from chunklab.settings import Settings, settings_from


def test_the_default_is_the_int8_export_of_minilm():
    """ADR 0071 chose it: 2.5x torch with the same recall."""
    assert embeddings.DEFAULT_MODEL == "all-MiniLM-L6-v2-onnx-int8"
    assert embeddings.DEFAULT_MODEL in embeddings.available_models()


def test_the_settings_default_to_it_unset_or_empty(monkeypatch):
    monkeypatch.delenv("CHUNKLAB_EMBEDDING_MODEL", raising=False)
    assert Settings().embedding_model == embeddings.DEFAULT_MODEL
    assert settings_from({"CHUNKLAB_EMBEDDING_MODEL": ""}).embedding_model == embeddings.DEFAULT_MODEL
    assert settings_from({"CHUNKLAB_EMBEDDING_MODEL": "  "}).embedding_model == embeddings.DEFAULT_MODEL
    assert (
        settings_from({"CHUNKLAB_EMBEDDING_MODEL": "multilingual-e5-small"}).embedding_model == "multilingual-e5-small"
    )


def test_an_empty_name_is_the_default_model_and_the_torch_name_stays_torch():
    """Nothing is loaded: providers load their model on first use."""
    default = embeddings.get_provider("")
    assert default is embeddings.get_provider(embeddings.DEFAULT_MODEL)
    assert isinstance(default, OnnxMiniLMProvider) and (default.name, default.variant) == (
        embeddings.DEFAULT_MODEL,
        "int8",
    )
    torch = embeddings.get_provider("all-MiniLM-L6-v2")
    assert type(torch) is MiniLMProvider and torch.name == "all-MiniLM-L6-v2" and torch is not default
