"""all-MiniLM-L6-v2 through ONNX Runtime: the packaged model's export, fp32 or int8.

Each variant is its own embedding model name (ADR 0062): its vectors are not
bit-identical to torch's, so it never shares cache entries or index sets with
"all-MiniLM-L6-v2". What stays identical is everything around the network:
the package's own tokenizer, cut at the model's 256 word pieces, mean pooling
over the attention mask and unit length (inside the graph), as
sentence-transformers does.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import numpy as np

from chunklab.embeddings import MINILM_INT8_MODEL, MINILM_ONNX_MODEL, onnx_export
from chunklab.embeddings.base import EmbeddingProvider

# The model name of each variant, as users choose it.
ONNX_MODELS = {MINILM_ONNX_MODEL: "fp32", MINILM_INT8_MODEL: "int8"}
# Texts per forward pass, longest first as sentence-transformers orders them,
# so that a batch pads to lengths close to its own. Small batches keep each
# operator's tensors in cache: 4 measured fastest of 1-32 (ADR 0071). int8 scales
# a batch's activations together, so its vectors depend slightly on the batch.
BATCH = 4
# ONNX Runtime's fused residual add + layer norm is slower on CPU than the two
# operators it replaces; the export leaves them apart and the session must too.
DISABLED_FUSIONS = ["SkipLayerNormFusion"]


def open_session(graph: Path, options=None):
    """An ONNX Runtime session on `graph` with the provider's options (`options`: a
    SessionOptions to start from, e.g. one that saves the optimised graph)."""
    import onnxruntime

    options = options or onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    # One batch at a time, each operator over every core (a BERT graph is a chain).
    options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
    options.intra_op_num_threads = os.cpu_count() or 1
    # Idle threads sleep rather than spin: the services share a few cores.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return onnxruntime.InferenceSession(
        str(graph), options, providers=["CPUExecutionProvider"], disabled_optimizers=DISABLED_FUSIONS
    )


class OnnxMiniLMProvider(EmbeddingProvider):
    """all-MiniLM-L6-v2 from its ONNX export (384 dimensions, reads 256 word pieces).

    The export is loaded on first use from `directory` (default: the
    environment's, see chunklab.embeddings.onnx_export); a missing or stale one is
    FAILED_PRECONDITION naming the command that builds it.
    """

    def __init__(self, variant: str, directory: Path | None = None) -> None:
        if variant not in onnx_export.GRAPHS:
            raise ValueError(f"unknown ONNX variant {variant!r}; expected one of {sorted(onnx_export.GRAPHS)}")
        self.variant = variant
        self.name = next(name for name, v in ONNX_MODELS.items() if v == variant)
        self._directory = directory
        self._session = None
        self._tokenizer = None
        self._inputs: list[str] = []
        self._lock = threading.Lock()

    @property
    def dimension(self) -> int:
        return 384

    @property
    def cache_namespace(self) -> str:
        """The name and the export's recipe: vectors of an older graph are never served for this one."""
        return f"{self.name}@{onnx_export.RECIPE}"

    def _load(self):
        with self._lock:
            if self._session is None:
                from tokenizers import Tokenizer

                graph = onnx_export.graph_path(self._directory or onnx_export.default_dir(), self.variant)
                model_dir = onnx_export.packaged_model_dir()
                tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
                # tokenizer.json pads and cuts at 128; sentence-transformers reads 256, unpadded.
                tokenizer.no_padding()
                tokenizer.enable_truncation(onnx_export.max_seq_length(model_dir))
                session = open_session(graph)
                self._inputs = [i.name for i in session.get_inputs()]
                self._tokenizer, self._session = tokenizer, session
        return self._session, self._tokenizer

    def _forward(self, session, encodings) -> np.ndarray:
        """One padded batch through the graph: unit-length rows."""
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for row, encoding in enumerate(encodings):
            ids[row, : len(encoding.ids)] = encoding.ids
            mask[row, : len(encoding.ids)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        return session.run(None, {name: feeds[name] for name in self._inputs})[0]

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        session, tokenizer = self._load()
        encodings = tokenizer.encode_batch(list(texts))
        order = sorted(range(len(texts)), key=lambda i: -len(encodings[i].ids))
        vectors = np.empty((len(texts), self.dimension), dtype=np.float32)
        for start in range(0, len(order), BATCH):
            batch = order[start : start + BATCH]
            vectors[batch] = self._forward(session, [encodings[i] for i in batch])
        return vectors

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]
