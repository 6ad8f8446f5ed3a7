"""Growth: chunking, indexing and retrieval time and peak memory at 1, 10 and 100 times the corpus.

The corpus is chroma-general's three corpora; at scale k it is k copies of each,
every copy but the first with its paragraphs in another (seeded) order, each
copy its own document: the same text statistics, k times the documents. Each
(scale, strategy) runs in a fresh process (multiprocessing, spawn), so its
peak RSS (resource.getrusage ru_maxrss, process-wide and only ever rising) is
its own; it is read after each phase. In that process, with the services' own
code in process:

- chunk: the strategy from the chunker's REGISTRY at its defaults on every
  SourceDocument (tokenization included, as the chunker does it);
- index: RetrieverService.index_chunks on Qdrant Edge, one set per document,
  with deterministic pseudo-random unit vectors of all-MiniLM-L6-v2's dimension
  (384). Embedding is NOT measured: it grows linearly with the text and
  bench/benchmarks_page.py and the embedding benches measure it;
- retrieve: RetrieverService.retrieve of `--queries` fixed questions of the
  shared set, top 5, dense, exact search (the in-process retriever builds no
  HNSW graph; the running service builds it in another process), the question
  "embedded" by a seeded random unit vector.

Seconds are wall time, with CPU time (process_time, all threads) beside them;
ratios are CPU time per MB at each scale over CPU time per MB at the smallest
(about 1.0 is linear growth): on this shared machine wall time swings with the
neighbours' load and the disk (the retriever flushes its shard after each set).
Peak RSS includes the IndexChunks requests, built before the index is timed. The rows go to docs/benchmarks/growth.json and the plot
to docs/benchmarks/growth.png; the benchmarks page shows them when present.

    .venv/bin/python bench/growth.py [--scales 1,10,100] [--quick] [--strategies fixed_size,recursive,sentence_window] [--queries 50] [--plot-only]
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import multiprocessing
import random
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from chunklab_app import growth  # noqa: E402

DATA = REPO.parent / "shared" / "data" / "chroma-general"
FIGURES = REPO / "docs" / "benchmarks"
RESULTS = FIGURES / "growth.json"
PLOT = FIGURES / "growth.png"
DIM = 384
MODEL = "random-384"
STRATEGIES = ("fixed_size", "recursive", "sentence_window")
COMMAND = ".venv/bin/python bench/growth.py (run by make bench)"


def documents(scale: int) -> list[tuple[str, str]]:
    """(name, text) of the corpus at this scale: each corpus `scale` times, the copies' paragraphs shuffled."""
    out = []
    for path in sorted((DATA / "corpora").glob("*.md")):
        text = path.read_text(encoding="utf-8")
        paragraphs = text.split("\n\n")
        for copy in range(scale):
            if copy:
                random.Random(f"{path.stem}-{copy}").shuffle(paragraphs)
            out.append((f"{path.stem}-{copy:03d}", text if copy == 0 else "\n\n".join(paragraphs)))
    return out


def unit_vectors(n: int, seed: int) -> np.ndarray:
    vectors = np.random.default_rng(seed).standard_normal((n, DIM)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


class RandomProvider:
    """The retriever's query embedder, replaced: a question's vector is a unit vector seeded by its text."""

    name = MODEL
    dimension = DIM

    def known_dimension(self) -> int:
        return DIM

    def embed_query(self, text: str) -> np.ndarray:
        return unit_vectors(1, int(hashlib.sha256(text.encode()).hexdigest()[:8], 16))[0]


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kilobytes on Linux


def questions(n: int) -> list[str]:
    with open(DATA / "questions.csv", encoding="utf-8") as f:
        return [row["question"] for row in csv.DictReader(f)][:n]


def measure(scale: int, strategy_name: str, queries: int) -> dict:
    """One (scale, strategy): chunk, index and retrieve timed, peak RSS after each. Runs in its own process."""
    from chunklab.v1 import common_pb2, documents_pb2, retriever_pb2
    from services.chunker.strategies import REGISTRY, SourceDocument, offline_context
    from services.ingest.readers.markdown import parse
    from services.retriever.index.registry import IndexRegistry
    from services.retriever.service import RetrieverService
    from services.retriever.store import RetrieverStore

    markdown = documents_pb2.DOCUMENT_FORMAT_MARKDOWN
    sources = [
        SourceDocument(
            documents_pb2.Document(
                document_id=name,
                name=f"{name}.md",
                text=text,
                language="en",
                collection="growth",
                format=markdown,
                tree=parse(text, markdown),
            )
        )
        for name, text in documents(scale)
    ]
    mb = sum(len(s.text.encode()) for s in sources) / 1e6
    strategy = REGISTRY.build(common_pb2.StrategySpec(name=strategy_name))
    context = offline_context()
    # Warm-up, untimed: the tokenizer's tables load and the code paths run once (on a copy of each
    # corpus), and the retriever's shard is created (with one chunk), so no fixed cost paid once per
    # process counts in the 1× rows.
    warm = [
        SourceDocument(
            documents_pb2.Document(
                document_id="warm-up",
                name="warm-up.md",
                text=source.text,
                language="en",
                collection="warm-up",
                format=markdown,
                tree=source.tree,
            )
        )
        for source in sources[::scale]
    ]
    warm_chunks = [strategy.chunks_of(source, context) for source in warm][0][:1]
    rss = {"start": rss_mb()}
    seconds, cpu = {}, {}

    def timed(phase: str, work):
        wall, used = time.perf_counter(), time.process_time()
        result = work()
        seconds[phase], cpu[phase] = time.perf_counter() - wall, time.process_time() - used
        rss[phase] = rss_mb()
        return result

    chunks = timed("chunk", lambda: [strategy.chunks_of(source, context) for source in sources])

    requests = []
    for d, (source, own) in enumerate([(warm[0], warm_chunks)] + list(zip(sources, chunks))):
        vectors = unit_vectors(len(own), d)
        header = retriever_pb2.IndexHeader(
            document_id=source.document.document_id,
            strategy=strategy.name,
            config_id=strategy.config_id,
            embedding_model=MODEL,
            dimension=DIM,
            spec=common_pb2.StrategySpec(name=strategy.name),
            expansion=REGISTRY.get(strategy.name).expansion,
        )
        requests.append(
            (header, [retriever_pb2.IndexedChunk(chunk=c, vector=v.tolist()) for c, v in zip(own, vectors)])
        )
    with tempfile.TemporaryDirectory() as tmp:
        store = RetrieverStore(f"sqlite:///{Path(tmp) / 'retriever.sqlite3'}")
        provider = RandomProvider()
        service = RetrieverService(IndexRegistry(Path(tmp) / "edge", store, None), store, MODEL, lambda _: provider, {})
        service.index_chunks(*requests[0])
        timed("index", lambda: [service.index_chunks(header, items) for header, items in requests[1:]])
        asks = questions(queries)
        options = common_pb2.RetrievalOptions(strategy=strategy.name, top_k=5)
        timed(
            "retrieve",
            lambda: [
                service.retrieve(retriever_pb2.RetrieveRequest(query=ask, exact=True, options=options)) for ask in asks
            ],
        )
        service.close()
    return {
        "scale": scale,
        "mb": mb,
        "documents": len(sources),
        "strategy": strategy.name,
        "chunks": sum(len(own) for own in chunks),
        "queries": len(asks),
        "seconds": seconds,
        "cpu_seconds": cpu,
        "rss_mb": rss,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scales", default="1,10,100", help="multiples of the corpus, comma-separated")
    parser.add_argument("--quick", action="store_true", help="scales 1,10 only")
    parser.add_argument("--strategies", default=",".join(STRATEGIES), help="chunker strategies, at their defaults")
    parser.add_argument("--queries", type=int, default=50, help="questions retrieved at every scale")
    parser.add_argument(
        "--plot-only", action="store_true", help=f"redraw the plot from {RESULTS.name}, measuring nothing"
    )
    args = parser.parse_args()
    if args.plot_only:
        growth.plot(json.loads(RESULTS.read_text())["rows"], PLOT)
        return 0
    try:
        scales = sorted({int(s) for s in ("1,10" if args.quick else args.scales).split(",")})
    except ValueError:
        parser.error(f"--scales takes whole numbers separated by commas, e.g. 1,10,100 (got {args.scales!r})")
    if not scales or scales[0] < 1:
        parser.error("--scales must name at least one multiple of 1 or more")
    from services.chunker.strategies import REGISTRY

    names = [s for s in args.strategies.split(",") if s]
    unknown = [s for s in names if s not in REGISTRY.names()]
    if unknown:
        parser.error(f"unknown strategies {', '.join(unknown)}; the chunker has {', '.join(REGISTRY.names())}")

    rows = []
    spawn = multiprocessing.get_context("spawn")
    for scale in scales:
        for name in names:
            with spawn.Pool(1) as pool:  # a fresh process: its peak RSS is this measurement's alone
                row = pool.apply(measure, (scale, name, args.queries))
            rows.append(row)
            print(
                f"  {name} at {scale}×: {row['mb']:.1f} MB, {row['chunks']:,} chunks, "
                f"chunk {row['seconds']['chunk']:.2f}s, index {row['seconds']['index']:.2f}s, "
                f"retrieve {row['seconds']['retrieve']:.2f}s",
                flush=True,
            )
    print(
        "\nGrowth: seconds are wall time, CPU seconds in brackets; the ratios (×) are CPU time per MB against the smallest scale "
        "(~1.0 = linear growth; CPU time, all threads of the process, is what a loaded shared machine "
        f"disturbs least); ms/query: wall time over {args.queries} questions, top 5, dense, exact search"
    )
    print("Embedding is not measured: vectors are deterministic pseudo-random 384-d unit vectors.")
    print("Peak RSS: ru_maxrss of a fresh spawned process per row (+RSS: above its level before chunking).\n")
    print(growth.text_table(rows))
    from benchmarks_page import machine

    FIGURES.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(
        json.dumps({"machine": machine(), "command": COMMAND, "queries": args.queries, "rows": rows}, indent=1) + "\n"
    )
    growth.plot(rows, PLOT)
    print(f"\nwrote {RESULTS.relative_to(REPO)} and {PLOT.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
