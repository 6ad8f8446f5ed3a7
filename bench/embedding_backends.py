"""all-MiniLM-L6-v2 through torch, ONNX fp32 and ONNX int8, side by side in one run.

On the shared chroma-general set (../shared/data/chroma-general): the three
corpora cut by fixed_size 250/125 (the Chroma report's TokenText 250/125),
every chunk embedded by each backend, in rounds that alternate the backends
(the machine is shared: the best round of each is reported).

- Speed, texts per second: the raw encoder (SentenceTransformer.encode for
  torch, the provider's own embed_documents for ONNX: its tokenizer and
  session, nothing else) and the pipeline, the provider as the chunker calls
  it (services/chunker/cache.py, a fresh cache folder each time: every text a
  miss, written to SQLite). "kept" is the share of the pipeline's time spent
  in the encoder, within the same call (target >= 90%); "raw ×" and "pipe ×"
  are the speed-ups over torch's raw encoder and torch's pipeline, "per cpu-s"
  the raw encoder's texts per second of this process's CPU time (target >= 2x).
- Quality: the 276 questions, each embedded by the same backend, searched
  exactly (cosine) over the pooled chunks, top 5; recall, precision and IoU
  in characters (chunklab/metrics.py), the cosine of each chunk's
  vector to torch's, and how many of each question's top 5 equal torch's.
  Target: recall within 0.5 points of torch.

The rows are also written to docs/benchmarks/embedding_backends.json, which
bench/benchmarks_page.py renders on the benchmarks page.

    .venv/bin/python bench/embedding_backends.py [--rounds 2]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from chunklab.embeddings import get_provider, onnx_export  # noqa: E402
from chunklab.embeddings.base import EmbeddingProvider  # noqa: E402
from chunklab.knobs import to_spec  # noqa: E402
from chunklab.metrics import Span, overlap  # noqa: E402
from chunklab.v1 import documents_pb2  # noqa: E402
from services.chunker.cache import EmbeddingCache  # noqa: E402
from services.chunker.strategies import REGISTRY, SourceDocument, offline_context  # noqa: E402

sys.path.insert(0, str(REPO / "bench"))
from benchmarks_page import machine  # noqa: E402

DATA = REPO.parent / "shared" / "data" / "chroma-general"
BACKENDS = {
    "torch": "all-MiniLM-L6-v2",
    "onnx fp32": "all-MiniLM-L6-v2-onnx",
    "onnx int8": "all-MiniLM-L6-v2-onnx-int8",
}
TOP_K = 5
RESULTS = REPO / "docs" / "benchmarks" / "embedding_backends.json"


def chunk_corpora() -> tuple[list[str], list[Span]]:
    """Every corpus cut by fixed_size 250/125: the chunks' texts and their spans."""
    strategy = REGISTRY.build(to_spec("fixed_size", {"chunk_size": 250, "chunk_overlap": 125}))
    texts, spans = [], []
    for path in sorted((DATA / "corpora").glob("*.md")):
        document = documents_pb2.Document(document_id=path.stem, name=path.name, text=path.read_text())
        for chunk in strategy.chunk(SourceDocument(document), offline_context()):
            texts.append(chunk.content)
            spans.append(Span(path.stem, chunk.start_char, chunk.end_char))
    return texts, spans


def questions() -> list[tuple[str, list[Span]]]:
    with open(DATA / "questions.csv", newline="") as handle:
        return [
            (
                row["question"],
                [Span(row["corpus_id"], r["start_index"], r["end_index"]) for r in json.loads(row["references"])],
            )
            for row in csv.DictReader(handle)
        ]


def raw_encoder(name: str, provider: EmbeddingProvider):
    """The encoder as someone calling the model by hand does."""
    if name == "torch":
        model = provider.model()
        return lambda texts: model.encode(texts, batch_size=64, normalize_embeddings=True, convert_to_numpy=True)
    return provider.embed_documents


class TimedModel:
    """The provider as the cache sees it, timing what is spent inside its model calls."""

    def __init__(self, provider: EmbeddingProvider) -> None:
        self.provider, self.inside = provider, 0.0
        self.cache_namespace = provider.cache_namespace

    def known_dimension(self) -> int | None:
        return self.provider.known_dimension()

    def embed_documents_counted(self, texts: list[str]):
        started = time.perf_counter()
        try:
            return self.provider.embed_documents_counted(texts)
        finally:
            self.inside += time.perf_counter() - started


def pipeline(provider: EmbeddingProvider, texts: list[str], folder: Path) -> tuple[np.ndarray, float]:
    """The chunker's path: the embedding cache, empty, in front of the provider. Returns
    the vectors and the share of the call's time spent in the model: the speed the
    pipeline keeps of its own encoder, measured within one call, whatever the load."""
    cache = EmbeddingCache(Path(tempfile.mkdtemp(dir=folder)) / "embeddings.sqlite3")
    model = TimedModel(provider)
    try:
        started = time.perf_counter()
        vectors = cache.embed(model, texts).vectors
        return vectors, model.inside / (time.perf_counter() - started)
    finally:
        cache.close()


def timed(call, texts):
    """Texts per second of wall time and per second of this process's CPU time (all its
    threads): on a shared machine the second shows the work done when others take turns."""
    started, cpu = time.perf_counter(), time.process_time()
    vectors = call(texts)
    return (len(texts) / (time.perf_counter() - started), len(texts) / (time.process_time() - cpu)), vectors


def search(chunk_vectors: np.ndarray, query_vectors: np.ndarray) -> np.ndarray:
    """The TOP_K chunk rows of each question, best first (ties by row, as exact search breaks them)."""
    scores = query_vectors @ chunk_vectors.T
    return np.argsort(-scores, axis=1, kind="stable")[:, :TOP_K]


def quality(ranked: np.ndarray, spans: list[Span], asked: list[tuple[str, list[Span]]]) -> dict:
    results = [overlap(references, [spans[i] for i in rows]) for (_, references), rows in zip(asked, ranked)]
    return {k: float(np.mean([getattr(r, k) for r in results])) for k in ("recall", "precision", "iou")}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2, help="timed rounds per backend (best one reported)")
    args = parser.parse_args()
    load_at_start = load_now()
    onnx_export.ensure_export()
    texts, spans = chunk_corpora()
    asked = questions()
    providers = {label: get_provider(name) for label, name in BACKENDS.items()}
    for label, provider in providers.items():  # load every model before any timing
        raw_encoder(label, provider)(texts[:8])
    speed = {label: {"raw": 0.0, "pipeline": 0.0, "raw_cpu": 0.0, "kept": 0.0} for label in providers}
    vectors: dict[str, np.ndarray] = {}
    with tempfile.TemporaryDirectory(prefix="chunklab-bench-") as folder:
        for round_number in range(args.rounds):
            for label, provider in providers.items():
                (rate, cpu_rate), _ = timed(raw_encoder(label, provider), texts)
                speed[label]["raw"] = max(speed[label]["raw"], rate)
                speed[label]["raw_cpu"] = max(speed[label]["raw_cpu"], cpu_rate)
                (rate, _), (vectors[label], kept) = timed(lambda t, p=provider: pipeline(p, t, Path(folder)), texts)
                speed[label]["pipeline"] = max(speed[label]["pipeline"], rate)
                speed[label]["kept"] = max(speed[label]["kept"], kept)
            print(f"round {round_number + 1}/{args.rounds} done", file=sys.stderr, flush=True)
    ranked, rows = {}, []
    for label, provider in providers.items():
        query_vectors = np.stack([provider.embed_query(question) for question, _ in asked])
        ranked[label] = search(vectors[label], query_vectors)
        agree = (vectors[label] * vectors["torch"]).sum(axis=1)
        same_top = np.mean([len(set(a) & set(b)) / TOP_K for a, b in zip(ranked[label], ranked["torch"])])
        rows.append(
            (
                label,
                speed[label],
                quality(ranked[label], spans, asked),
                float(agree.min()),
                float(agree.mean()),
                float(same_top),
            )
        )
    print(table(rows, len(texts), len(asked), args.rounds, load_at_start))
    write_results(rows, len(texts), len(asked), args.rounds, load_at_start)
    return 0


def write_results(rows, chunks: int, asked: int, rounds: int, load_at_start: str) -> None:
    """The table as the benchmarks page reads it: each backend's figures and its ratios to torch."""
    torch_rate, torch_recall = rows[0][1], rows[0][2]["recall"]
    backends = [
        {
            "backend": label,
            "model": BACKENDS[label],
            "raw": rate["raw"],
            "raw_cpu": rate["raw_cpu"],
            "pipeline": rate["pipeline"],
            "kept": rate["kept"],
            "raw_x": rate["raw"] / torch_rate["raw"],
            "cpu_x": rate["raw_cpu"] / torch_rate["raw_cpu"],
            "pipeline_x": rate["pipeline"] / torch_rate["pipeline"],
            "recall": scores["recall"],
            "recall_delta_pt": 100 * (scores["recall"] - torch_recall),
            "iou": scores["iou"],
            "cos_min": cos_min,
            "cos_mean": cos_mean,
            "top5_same": same_top,
        }
        for label, rate, scores, cos_min, cos_mean, same_top in rows
    ]
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(
        json.dumps(
            {
                "backends": backends,
                "chunks": chunks,
                "questions": asked,
                "rounds": rounds,
                "machine": machine() | {"load": f"{load_at_start} at the start, {load_now()} at the end"},
                "command": ".venv/bin/python bench/embedding_backends.py",
            },
            indent=1,
        )
        + "\n"
    )
    print(f"wrote {RESULTS.relative_to(REPO)}")


def load_now() -> str:
    return ", ".join(f"{x:.1f}" for x in os.getloadavg())


def table(rows, chunks: int, asked: int, rounds: int, load_at_start: str) -> str:
    torch_rate, torch_recall = rows[0][1], rows[0][2]["recall"]
    lines = [
        f"all-MiniLM-L6-v2 backends on chroma-general: {chunks} fixed_size 250/125 chunks, {asked} questions, "
        f"top {TOP_K} pooled; best of {rounds} rounds; {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} cores, load average {load_at_start} at the start, {load_now()} at the end",
        f"{'backend':<10} {'raw texts/s':>11} {'per cpu-s':>9} {'pipeline':>9} {'kept':>6} {'raw ×':>6} {'cpu ×':>6} {'pipe ×':>6} {'recall':>7} "
        f"{'Δ pt':>6} {'precision':>9} {'IoU':>6} {'cos min':>8} {'cos mean':>8} {'top-5 same':>10}",
    ]
    for label, rate, scores, cos_min, cos_mean, same_top in rows:
        lines.append(
            f"{label:<10} {rate['raw']:>11.1f} {rate['raw_cpu']:>9.1f} {rate['pipeline']:>9.1f} {rate['kept']:>6.1%} "
            f"{rate['raw'] / torch_rate['raw']:>5.2f}x {rate['raw_cpu'] / torch_rate['raw_cpu']:>5.2f}x "
            f"{rate['pipeline'] / torch_rate['pipeline']:>5.2f}x "
            f"{100 * scores['recall']:>6.1f}% "
            f"{100 * (scores['recall'] - torch_recall):>+6.2f} {100 * scores['precision']:>8.2f}% "
            f"{100 * scores['iou']:>5.2f}% {cos_min:>8.4f} {cos_mean:>8.4f} {same_top:>10.1%}"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
