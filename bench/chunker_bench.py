"""Chunker throughput, side by side in one run, ratios printed.

1. Chunking speed on the same text with the same tokenizer (cl100k_base):
   `fixed_size` against chonkie's TokenChunker and langchain's
   TokenTextSplitter; `recursive` against chonkie's RecursiveChunker and
   langchain's RecursiveCharacterTextSplitter.from_tiktoken_encoder. Every
   chunk of every library is counted again, to show who keeps the hard size,
   whose offsets are right and whose reported token counts are exact.
   Contenders run in turn, best of --rounds each (wall time, and CPU time
   of every thread beside it). Ours runs twice: encoding in one thread and
   in two (bpe-openai in the caller, tiktoken, which releases the GIL, in the
   second: ADR 0141); two only while the load average leaves a core free
   (ADR 0128): on a busy machine the "2 threads" row runs as the "1 thread"
   one, and the run says so.
   Three texts: the chroma corpora repeated to 1.24 MB (chonkie memoizes
   token counts per split and we encode each distinct line once, so both
   profit from the repetition), the same corpora once, and 1.24 MB of real,
   non-repeated Markdown (the chroma corpora, samples/, the test fixtures and
   the Node.js API documentation that ships with Debian's nodejs package).
   Targets: fixed_size >= 1.5x TokenChunker, recursive >= 1.5x RecursiveChunker.
2. The embedding pipeline (ChunkerService: chunk + embed through the cache,
   indexing left out) against the raw model encoding the very texts the
   pipeline embedded; then re-processing the unchanged document, with the
   cache warm in memory and (a new process) on disk only.
   Targets: pipeline >= 90% of raw; re-processing >= 20x faster.

    .venv/bin/python bench/chunker_bench.py [--rounds 9] [--skip-embeddings] [--texts repeated,once,real] [--write]

The libraries compared are dev-only dependencies (requirements-dev.txt).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from chunklab.text import tokens  # noqa: E402

tokens.ensure_offline_cache(REPO / ".chunklab" / "tiktoken")

import numpy as np  # noqa: E402

from chunklab.embeddings import get_provider  # noqa: E402
from chunklab.embeddings.base import EmbeddingProvider  # noqa: E402
from chunklab.knobs import to_spec  # noqa: E402
from chunklab.llm import ChatEndpoint  # noqa: E402
from chunklab.settings import Settings  # noqa: E402
from chunklab.v1 import chunker_pb2, common_pb2, documents_pb2  # noqa: E402
from services.chunker.cache import EmbeddingCache  # noqa: E402
from services.chunker.llm import LLMPool  # noqa: E402
from services.chunker.service import ChunkerService  # noqa: E402
from services.chunker.strategies import REGISTRY, SourceDocument, offline_context  # noqa: E402
from services.ingest.readers.markdown import parse  # noqa: E402

CORPORA = REPO.parent / "shared" / "data" / "chroma-general" / "corpora"
# Real Markdown that is on this machine (Debian's nodejs package): used to
# make the non-repeated text as big as the repeated one.
NODE_DOCS = Path("/usr/share/doc/nodejs/api")
SIZE, OVERLAP = 512, 64
# The chunker's own limit on its embedding cache (reads then record when each vector was used).
CACHE_LIMIT = int(Settings.model_fields["embedding_cache_max_mb"].default * 1e6)
TARGET_BYTES = 1_240_000
# Where --write stores the chunking figures (bench/benchmarks_page.py renders them).
FIGURES = REPO / "docs" / "benchmarks" / "chunker_bench.json"


def texts() -> dict[str, tuple[str, str]]:
    """name -> (label, text)."""
    corpora = [p.read_text(encoding="utf-8") for p in sorted(CORPORA.glob("*.md"))]
    chroma = "\n\n".join(corpora)
    copies = TARGET_BYTES // len(chroma) + 1
    repeated = (chroma * copies)[:TARGET_BYTES]
    own = [REPO / "samples" / "rag-field-guide.md", *sorted((REPO / "tests" / "fixtures").glob("*"))]
    documents = corpora + [p.read_text(encoding="utf-8") for p in own if p.is_file()]
    node = sorted(NODE_DOCS.glob("*.md"))
    while node and sum(len(d.encode()) for d in documents) < TARGET_BYTES:
        documents.append(node.pop(0).read_text(encoding="utf-8"))
    real = "\n\n".join(documents)
    origin = f"chroma + samples + fixtures + {len(documents) - len(corpora) - len(own)} Node.js API docs"
    return {
        "repeated": (f"chroma corpora x{copies}, cut to {len(repeated.encode()) / 1e6:.2f} MB", repeated),
        "once": (f"chroma corpora once, {len(chroma.encode()) / 1e6:.2f} MB", chroma),
        "real": (f"real non-repeated text, {len(real.encode()) / 1e6:.2f} MB ({origin})", real),
    }


def timed(run: Callable[[], object], rounds: int) -> float:
    """Best seconds over rounds (after one warm-up run)."""
    run()
    best = float("inf")
    for _ in range(rounds):
        gc.collect()
        started = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - started)
    return best


def race(contenders: list[Callable[[], list]], rounds: int) -> list[tuple[float, list, float]]:
    """Best-of-rounds seconds per contender, run in turn within each round,
    with the best CPU seconds of this process (every thread) beside them.

    Interleaving and taking the best run keep the comparison fair on a
    shared machine: another process's load slows whoever runs during it,
    never in a way the best of several turns keeps. CPU time is what a run
    costs whatever the load (a second encoding thread adds to it).
    """
    results = [run() for run in contenders]  # warm-up
    best = [float("inf")] * len(contenders)
    cpu = [float("inf")] * len(contenders)
    for _ in range(rounds):
        for i, run in enumerate(contenders):
            gc.collect()
            started, started_cpu = time.perf_counter(), time.process_time()
            results[i] = run()
            best[i] = min(best[i], time.perf_counter() - started)
            cpu[i] = min(cpu[i], time.process_time() - started_cpu)
    return list(zip(best, results, cpu))


def check(text: str, pieces: list[tuple[str, int | None, int | None]], limit: int) -> str:
    """Chunks over the hard size when counted again, whether offsets are exact,
    and whether the token counts the library reports are the real ones."""
    counts = [tokens.count(content) for content, _, _ in pieces]
    over = sum(1 for c in counts if c > limit)
    exact = "n/a"
    if pieces and pieces[0][1] is not None:
        wrong = sum(1 for content, start, _ in pieces if text[start : start + len(content)] != content)
        exact = "yes" if not wrong else f"{wrong} WRONG"
    reported = "n/a"
    if pieces and pieces[0][2] is not None:
        wrong = sum(1 for (_, _, said), real in zip(pieces, counts) if said != real)
        reported = "yes" if not wrong else f"{wrong} wrong"
    verdict = f"{len(pieces):>5} chunks  max {max(counts):>4} tok  over {limit}: {over:>3}  offsets exact: {exact:<8} counts exact: {reported}"
    return verdict + ("  << MAXIMUM VIOLATED" if over else "")


def ours(name: str, text: str, threads: int, **knobs: int):
    strategy = REGISTRY.build(to_spec(name, knobs))
    document = documents_pb2.Document(document_id="bench", name="bench.md", text=text)

    def run():
        # A new SourceDocument each time, as the service builds one per request.
        saved, tokens.THREADS = tokens.THREADS, threads
        try:
            return strategy.chunk(SourceDocument(document), offline_context())
        finally:
            tokens.THREADS = saved

    source = SourceDocument(document)
    run.messages = lambda chunks: timed(  # what building the Chunk messages alone costs
        lambda: [strategy.make_chunk(source, c.chunk_index, c.start_char, c.end_char, c.token_count) for c in chunks],
        3,
    )
    return run


def encode_in_threads(text: str) -> Callable[[], object]:
    """tiktoken alone on two halves of the text cut at a line start, in two threads,
    each with its own copy of the encoding (a thread that does not own an encoding's
    expression matches about 40% slower: tokens.thread_encoding)."""
    from concurrent.futures import ThreadPoolExecutor

    cut = text.find("\n", len(text) // 2) + 1 or len(text)
    halves, pool = (text[:cut], text[cut:]), ThreadPoolExecutor(2)
    return lambda: [
        f.result() for f in [pool.submit(lambda h: tokens.thread_encoding().encode_ordinary(h), h) for h in halves]
    ]


def chunking(rounds: int, chosen: list[str]) -> dict:
    from chonkie import RecursiveChunker, TokenChunker
    from langchain_text_splitters import RecursiveCharacterTextSplitter, TokenTextSplitter

    # This thread uses the shared encoding first, so it owns it: tiktoken alone, chonkie and
    # langchain all encode here at tiktoken's best speed (tokens.thread_encoding).
    encoding = tokens.encoding()
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at the start")
    print(
        "memoization: chonkie's RecursiveChunker caches the token count of each split (lru_cache, 4096);"
        " chunklab encodes each distinct line of a document once and splits each distinct long part once."
        " Both caches live for one document only (a new chunker per run)."
    )
    recorded: dict = {"load_at_start": round(os.getloadavg()[0], 2), "texts": []}
    for key, (label, text) in texts().items():
        if key not in chosen:
            continue
        mb = len(text.encode()) / 1e6
        print(f"\n== chunking {label}, cl100k_base, chunk_size {SIZE} ==")
        spare = "a core free: two encoding threads" if tokens.spare_core() else "no core free: one encoding thread"
        print(
            f"   load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores at the start ({spare} in the 2-thread rows)"
        )
        one = timed(lambda: encoding.encode_ordinary(text), rounds)
        two = timed(encode_in_threads(text), rounds)
        distinct = "".join(dict.fromkeys(text.splitlines(keepends=True)))
        floor = timed(lambda: encoding.encode_ordinary(distinct), rounds)
        print(
            f"   tiktoken encode alone: {mb / one:.1f} MB/s in 1 thread ({one * 1e3:.1f} ms), {mb / two:.1f} MB/s "
            f"in 2 threads (x{one / two:.2f}); the distinct lines are {len(distinct.encode()) / 1e6 / mb:.0%} "
            f"of the text and take {floor * 1e3:.1f} ms to encode in 1 thread"
        )
        # A new chonkie chunker per run: RecursiveChunker memoizes token counts
        # per instance (lru_cache), which would time a cache on repeated runs.
        token_chunker = lambda: TokenChunker(tokenizer=encoding, chunk_size=SIZE, chunk_overlap=OVERLAP)  # noqa: E731
        recursive_chunker = lambda: RecursiveChunker(tokenizer=encoding, chunk_size=SIZE)  # noqa: E731
        token_splitter = TokenTextSplitter(encoding_name="cl100k_base", chunk_size=SIZE, chunk_overlap=OVERLAP)
        recursive_splitter = RecursiveCharacterTextSplitter.from_tiktoken_encoder(
            encoding_name="cl100k_base", chunk_size=SIZE, chunk_overlap=0
        )
        our_pieces = lambda chunks: [(c.content, c.start_char, c.token_count) for c in chunks]  # noqa: E731
        chonkie_pieces = lambda chunks: [(c.text, c.start_index, c.token_count) for c in chunks]  # noqa: E731
        langchain_pieces = lambda chunks: [(c, None, None) for c in chunks]  # noqa: E731
        groups = {
            f"token windows (overlap {OVERLAP})": [
                ("chonkie TokenChunker", lambda: token_chunker().chunk(text), chonkie_pieces),
                (
                    "chunklab fixed_size, 1 thread",
                    ours("fixed_size", text, 1, chunk_size=SIZE, chunk_overlap=OVERLAP),
                    our_pieces,
                ),
                (
                    "chunklab fixed_size, 2 threads",
                    ours("fixed_size", text, 2, chunk_size=SIZE, chunk_overlap=OVERLAP),
                    our_pieces,
                ),
                ("langchain TokenTextSplitter", lambda: token_splitter.split_text(text), langchain_pieces),
            ],
            "recursive (overlap 0)": [
                ("chonkie RecursiveChunker", lambda: recursive_chunker().chunk(text), chonkie_pieces),
                (
                    "chunklab recursive, 1 thread",
                    ours("recursive", text, 1, chunk_size=SIZE, chunk_overlap=0),
                    our_pieces,
                ),
                (
                    "chunklab recursive, 2 threads",
                    ours("recursive", text, 2, chunk_size=SIZE, chunk_overlap=0),
                    our_pieces,
                ),
                ("langchain RecursiveCharacter", lambda: recursive_splitter.split_text(text), langchain_pieces),
            ],
        }
        entry = {
            "key": key,
            "label": label,
            "mb": round(mb, 3),
            "tiktoken_ms": round(one * 1e3, 1),
            "spare_core": tokens.spare_core(),
            "groups": [],
        }
        recorded["texts"].append(entry)
        for group, contenders in groups.items():
            print(f"-- {group}")
            timings = race([run for _, run, _ in contenders], rounds)
            baseline, baseline_cpu = timings[0][0], timings[0][2]  # chonkie
            rows = []
            entry["groups"].append({"group": group, "rows": rows})
            print(
                f"   target: 1.5x chonkie = {1.5 * mb / baseline:.1f} MB/s ({baseline / 1.5 * 1e3:.1f} ms); tiktoken "
                f"encodes this text at {mb / one:.1f} MB/s in 1 thread, {mb / two:.1f} MB/s in 2"
            )
            for (name, _run, pieces), (seconds, chunks, cpu) in zip(contenders, timings):
                verdict = check(text, pieces(chunks), SIZE)
                print(
                    f"   {name:<31} {seconds * 1e3:8.1f} ms {mb / seconds:6.1f} MB/s  "
                    f"x{baseline / seconds:4.2f} vs chonkie  (CPU {cpu * 1e3:6.1f} ms, x{baseline_cpu / cpu:4.2f})  {verdict}"
                )
                rows.append(
                    {
                        "name": name,
                        "ms": round(seconds * 1e3, 1),
                        "vs_chonkie": round(baseline / seconds, 2),
                        "cpu_ms": round(cpu * 1e3, 1),
                        "cpu_vs_chonkie": round(baseline_cpu / cpu, 2),
                        "check": verdict,
                    }
                )
            run = contenders[1][1]
            print(
                f"   (of chunklab's time, building its {len(timings[1][1])} Chunk messages with their ids "
                f"alone takes {run.messages(timings[1][1]) * 1e3:.1f} ms)"
            )
    recorded["load_at_end"] = round(os.getloadavg()[0], 2)
    return recorded


def write_figures(recorded: dict, rounds: int) -> None:
    """The chunking figures, with the machine they ran on, where bench/benchmarks_page.py
    renders them into docs/benchmarks.md (its Chunker throughput section)."""
    from bench.benchmarks_page import machine

    stored = {
        **recorded,
        "machine": machine(),
        "command": f".venv/bin/python bench/chunker_bench.py --rounds {rounds} --skip-embeddings --write",
    }
    FIGURES.parent.mkdir(parents=True, exist_ok=True)
    FIGURES.write_text(json.dumps(stored, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {FIGURES.relative_to(REPO)}")


class RecordingProvider(EmbeddingProvider):
    """The real model, recording the texts it is asked to embed (for the raw baseline)."""

    def __init__(self, inner: EmbeddingProvider) -> None:
        self.inner = inner
        self.name = inner.name
        self.texts: list[str] = []

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        self.texts += texts
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> np.ndarray:
        return self.inner.embed_query(text)


def pipeline(rounds: int, corpus: str) -> None:
    text = (CORPORA / corpus).read_text(encoding="utf-8")
    document = documents_pb2.Document(
        document_id="bench",
        name=corpus,
        text=text,
        language="en",
        collection="default",
        format=documents_pb2.DOCUMENT_FORMAT_MARKDOWN,
        tree=parse(text, documents_pb2.DOCUMENT_FORMAT_MARKDOWN),
    )
    minilm = get_provider("all-MiniLM-L6-v2")
    model = minilm.model()
    model.encode(["warm up the model"] * 64)
    strategies = [
        to_spec("fixed_size", {"chunk_size": 128, "chunk_overlap": 0}),
        common_pb2.StrategySpec(name="sentence_window"),
        common_pb2.StrategySpec(name="semantic"),
        common_pb2.StrategySpec(name="semantic_parent_child"),
        common_pb2.StrategySpec(name="hybrid_semantic_recursive"),
    ]
    print(
        f"\n== embedding pipeline on {corpus} ({len(text) / 1e3:.0f} k characters), {minilm.name}, best of {rounds} =="
    )
    print(
        f"   {'strategy':<26} {'texts':>6} {'raw s':>7} {'pipeline s':>10} {'of raw':>7} "
        f"{'again (mem) s':>13} {'faster':>7} {'again (disk) s':>14} {'faster':>7}"
    )
    for spec in strategies:
        request = chunker_pb2.ProcessDocumentRequest(document_id="bench", strategies=[spec])

        def cold_run(recording: RecordingProvider) -> tuple[float, float, float]:
            """First processing with an empty cache, then again (cache in memory), then again
            with the memory tier dropped (a restarted chunker, cache on disk only)."""
            with tempfile.TemporaryDirectory() as folder:
                cache = EmbeddingCache(Path(folder) / "cache.sqlite3", max_bytes=CACHE_LIMIT)
                service = ChunkerService(
                    lambda _id: document,
                    lambda header, chunks: (len(chunks), 0),
                    lambda _name: recording,
                    minilm.name,
                    cache,
                    LLMPool(ChatEndpoint("", "", ""), 1),
                )

                def run() -> float:
                    gc.collect()
                    started = time.perf_counter()
                    events = list(service.process(request))
                    assert not events[-1].result.strategies_failed, events[-1].result
                    return time.perf_counter() - started

                cold, warm = run(), run()
                cache.clear_memory()
                disk = run()
                cache.close()
                return cold, warm, disk

        def raw_run(texts: list[str]) -> float:
            gc.collect()
            started = time.perf_counter()
            model.encode(texts, batch_size=64, normalize_embeddings=True, convert_to_numpy=True)
            return time.perf_counter() - started

        # A first run learns which texts the model gets; the model then sees
        # them twice more, so that neither side pays for first-time kernels.
        learner = RecordingProvider(minilm)
        cold_run(learner)
        same = list(learner.texts)
        raw_run(same), raw_run(same)
        raw_s, cold_s, warm_s, disk_s = [], [], [], []
        for _ in range(rounds):  # in turn, best of rounds: fair on a shared machine
            raw_s.append(raw_run(same))
            cold, warm, disk = cold_run(RecordingProvider(minilm))
            cold_s.append(cold), warm_s.append(warm), disk_s.append(disk)
        raw, cold, warm, disk = (min(x) for x in (raw_s, cold_s, warm_s, disk_s))
        print(
            f"   {spec.name:<26} {len(same):>6} {raw:>7.2f} {cold:>10.2f} {raw / cold:>6.0%} "
            f"{warm:>13.3f} {cold / warm:>6.0f}x {disk:>14.3f} {cold / disk:>6.0f}x"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=9, help="timed runs per contender (the best is reported)")
    parser.add_argument("--embedding-rounds", type=int, default=3)
    parser.add_argument("--corpus", default="state_of_the_union.md", help="chroma-general corpus for the pipeline")
    parser.add_argument("--skip-embeddings", action="store_true")
    parser.add_argument("--skip-chunking", action="store_true")
    parser.add_argument(
        "--write",
        action="store_true",
        help=f"store the chunking figures in {FIGURES.relative_to(REPO)} for bench/benchmarks_page.py's page",
    )
    parser.add_argument("--texts", default="repeated,once,real", help="which texts to chunk, comma-separated")
    args = parser.parse_args()
    if not args.skip_chunking:
        recorded = chunking(args.rounds, args.texts.split(","))
        if args.write:
            write_figures(recorded, args.rounds)
    if not args.skip_embeddings:
        pipeline(args.embedding_rounds, args.corpus)


if __name__ == "__main__":
    main()
