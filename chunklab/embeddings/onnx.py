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
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from chunklab.embeddings import MINILM_INT8_MODEL, MINILM_ONNX_MODEL, onnx_export
from chunklab.embeddings.base import EmbeddingProvider, TokenEncoder

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
# Batches run side by side, one per core, each operator on one thread (ADR 0143): a
# batch of 4 short texts keeps a second intra-op thread idle most of the time (measured:
# intra-op 2 threads took as long as 1), while two batches at once keep both cores busy.
# A batch's texts are the same either way, so every vector is bit for bit what it was.
CONCURRENT_BATCHES = os.cpu_count() or 1
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def run_batches(batches: Sequence[list[int]], forward: Callable[[list[int]], np.ndarray]) -> list[np.ndarray]:
    """forward(batch) for each batch, CONCURRENT_BATCHES at a time (ONNX Runtime releases
    the GIL and a session runs concurrently), results in the batches' order."""
    global _pool
    if len(batches) < 2 or CONCURRENT_BATCHES < 2:
        return [forward(batch) for batch in batches]
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(CONCURRENT_BATCHES, thread_name_prefix="onnx-batch")
    return list(_pool.map(forward, batches))


def open_session(graph: Path, options=None):
    """An ONNX Runtime session on `graph` with the provider's options (`options`: a
    SessionOptions to start from, e.g. one that saves the optimised graph)."""
    import onnxruntime

    options = options or onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    # A BERT graph is a chain; each batch's operators run on one thread, and batches run
    # side by side (run_batches), one per core.
    options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
    options.intra_op_num_threads = 1
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
        self._tokens: OnnxTokenEncoder | None = None

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
        feeds = padded([e.ids for e in encodings], max(len(e.ids) for e in encodings))
        return session.run(None, {name: feeds[name] for name in self._inputs})[0]

    def token_encoder(self) -> TokenEncoder:
        """The word pieces' vectors from the export's token graph (loaded on first use)."""
        with self._lock:
            if self._tokens is None:
                self._tokens = OnnxTokenEncoder(self.variant, self._directory)
            return self._tokens

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        session, tokenizer = self._load()
        encodings = tokenizer.encode_batch(list(texts))
        order = sorted(range(len(texts)), key=lambda i: -len(encodings[i].ids))
        vectors = np.empty((len(texts), self.dimension), dtype=np.float32)
        batches = [order[start : start + BATCH] for start in range(0, len(order), BATCH)]
        rows = run_batches(batches, lambda batch: self._forward(session, [encodings[i] for i in batch]))
        for batch, batch_rows in zip(batches, rows):
            vectors[batch] = batch_rows
        return vectors

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]


def padded(rows: list[np.ndarray], width: int) -> dict[str, np.ndarray]:
    """The graph's three inputs for a batch of id rows, padded to `width`."""
    ids = np.zeros((len(rows), width), dtype=np.int64)
    mask = np.zeros_like(ids)
    for row, values in enumerate(rows):
        ids[row, : len(values)] = values
        mask[row, : len(values)] = 1
    return {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}


class OnnxTokenEncoder(TokenEncoder):
    """The token graph of a variant (onnx_export.TOKEN_GRAPHS): the same network as the
    provider's, whose last hidden state is an output (late chunking, ADR 0129)."""

    dimension = 384

    def __init__(self, variant: str, directory: Path | None = None) -> None:
        self.variant, self._directory = variant, directory
        self.max_tokens = onnx_export.max_seq_length(onnx_export.packaged_model_dir())
        self._session = None
        self._lock = threading.Lock()

    def _load(self):
        """The tokenizer (never cutting) and the session, on first use; a missing token
        graph is FAILED_PRECONDITION naming the command that builds it."""
        with self._lock:
            if self._session is None:
                from tokenizers import Tokenizer

                model_dir = onnx_export.packaged_model_dir()
                directory = self._directory or onnx_export.default_dir()
                graph = onnx_export.graph_path(directory, self.variant, tokens=True)
                tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
                tokenizer.no_padding()
                tokenizer.no_truncation()  # a long text is read in passes, never cut
                self._cls, self._sep = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
                self._tokenizer, self._session = tokenizer, open_session(graph)
                self._inputs = [i.name for i in self._session.get_inputs()]
        return self._session, self._tokenizer

    def tokenize(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        _, tokenizer = self._load()
        encoding = tokenizer.encode(text, add_special_tokens=False)
        return np.array(encoding.ids, dtype=np.int64), np.array(encoding.offsets, dtype=np.int64).reshape(-1, 2)

    def encode(self, passes: list[np.ndarray]) -> list[np.ndarray]:
        session, _ = self._load()
        rows = [np.concatenate([[self._cls], ids, [self._sep]]) for ids in passes]
        order = sorted(range(len(rows)), key=lambda i: -len(rows[i]))
        states: list[np.ndarray] = [np.zeros((0, self.dimension), dtype=np.float32)] * len(rows)

        def forward(batch: list[int]) -> np.ndarray:
            feeds = padded([rows[i] for i in batch], len(rows[batch[0]]))
            return session.run([onnx_export.TOKEN_OUTPUT], {n: feeds[n] for n in self._inputs})[0]

        batches = [order[start : start + BATCH] for start in range(0, len(order), BATCH)]
        for batch, hidden in zip(batches, run_batches(batches, forward)):
            for j, i in enumerate(batch):
                states[i] = hidden[j, : len(rows[i])]
        return states
