"""Retrieve through gRPC against the raw operations it has to do, side by side.

For each size (20,000 and 100,000 chunks) the benchmark starts the retriever
as its own process on a free port with a temporary data folder, indexes
synthetic chunks through IndexChunks (documents of 200 chunks, text slices of
the shared corpora, vectors near real all-MiniLM-L6-v2 embeddings of real
text), and times `Retrieve` (top_k 5, neighbours ±1/1, the query embedding
included: every question is new to the service) unfiltered and filtered to
one document, then the same questions asked again (cached embedding). The
retriever builds its HNSW graph in the background once indexing is over (ADR
0035); the run waits for it and prints the graph's recall@5 against exact
search (`--exact` leaves the graph out: every search exact). Beside it, in this
process, it times the raw operations on a copy of the very same shard:
encode the question with the same model, search with the same strategy /
document filter. Service and raw calls strictly alternate, so each side's
encode follows the other side's turn and both see the same load on the
machine (ADR 0036).

The run is made of `--rounds` rounds, each against a freshly started
retriever (every question is new to it again). Rounds alternate the raw
side's encoder: sentence-transformers' `SentenceTransformer.encode`, the call
anyone embedding a question with this model makes (the target's baseline),
and the service's own direct path (tokenize, one forward pass, pool; ADR
0034), which shows what the service adds beyond its own encoder. The table
after the ratios splits the service's time: the gRPC round trip, the
neighbour expansion, the server's total.

    .venv/bin/python bench/retriever_bench.py [--sizes 20000,100000] [--queries 138] [--rounds 4] [--exact]

Target: service p95 <= 1.2 x (raw encode + raw search) p95, per case.
"""

from __future__ import annotations

import argparse
import csv
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from chunklab import ids
from chunklab.embeddings import get_provider
from chunklab.rpc import channels
from chunklab.timeutil import to_proto, utcnow
from chunklab.v1 import common_pb2 as pb
from chunklab.v1 import retriever_pb2 as rpb
from chunklab_app.stack import Stack, wait_serving
from services.retriever.index import conditions as c
from services.retriever.index.edge import EdgeIndex
from services.retriever.index.payloads import unit_vector
from services.retriever.index.vector_index import index_name

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "chroma-general"
MODEL = "all-MiniLM-L6-v2"
PER_DOC = 200
CHUNK_CHARS = 1500
# The raw side's encoders, one per round in turn: SentenceTransformer.encode and the service's direct path.
ENCODERS = ("encode", "direct")
CACHED = "cached query, unfiltered"


def percentile(values: list[float], p: float) -> float:
    return float(np.percentile(values, p)) if values else float("nan")


def corpus_slices() -> list[str]:
    text = "\n".join(p.read_text(encoding="utf-8") for p in sorted((DATA / "corpora").glob("*.md")))
    return [text[i : i + CHUNK_CHARS] for i in range(0, len(text) - CHUNK_CHARS, CHUNK_CHARS // 3)]


def questions() -> list[str]:
    with open(DATA / "questions.csv", encoding="utf-8") as f:
        return [row["question"] for row in csv.DictReader(f)]


def start(data_dir: Path, graph: bool) -> Stack:
    env = {
        "CHUNKLAB_SWEEP_INTERVAL_S": "0",
        "CHUNKLAB_HNSW_IDLE_S": "1",
        "CHUNKLAB_HNSW_MIN_POINTS": "10000" if graph else "0",
    }
    stack = Stack(data_dir=data_dir, extra_env=env)
    stack.addresses["retriever"] = f"{stack.host}:0"
    stack.addresses["retriever"] = stack._spawn("retriever", "services.retriever", stack.env(), "listening on", 300)
    wait_serving(stack.addresses["retriever"], 300)
    return stack


def index_synthetic(stub, size: int, texts: list[str], base: np.ndarray, rng) -> list[str]:
    documents = []
    published = to_proto(utcnow())
    for d in range(size // PER_DOC):
        doc = f"bench-{d:05d}"
        documents.append(doc)
        picks = rng.integers(len(texts), size=PER_DOC)
        noisy = base[picks] + rng.normal(0, 0.35 / np.sqrt(base.shape[1]), size=(PER_DOC, base.shape[1]))
        items = [
            rpb.IndexedChunk(
                chunk=pb.Chunk(
                    chunk_id=ids.chunk_id(doc, "fixed_size", "bench", i),
                    document_id=doc,
                    document_name=f"{doc}.md",
                    strategy="fixed_size",
                    chunk_index=i,
                    role=pb.CHUNK_ROLE_CHUNK,
                    content=texts[picks[i]],
                    collection="policies",
                    language="en",
                    published_at=published,
                ),
                vector=noisy[i].astype(np.float32).tolist(),
            )
            for i in range(PER_DOC)
        ]
        header = rpb.IndexHeader(
            document_id=doc,
            strategy="fixed_size",
            config_id="bench",
            embedding_model=MODEL,
            dimension=base.shape[1],
            expansion=pb.EXPANSION_KIND_NEIGHBORS,
        )
        stub.IndexChunks(
            iter(
                [rpb.IndexChunksRequest(header=header), rpb.IndexChunksRequest(batch=rpb.IndexChunkBatch(chunks=items))]
            ),
            timeout=600,
        )
    return documents


def wait_for_graph(stub, timeout_s: float = 1800.0) -> float:
    """Seconds until the retriever's background HNSW build covers every point (ADR 0035)."""
    started = time.perf_counter()
    while time.perf_counter() - started < timeout_s:
        stats = stub.GetIndexStats(rpb.GetIndexStatsRequest(), timeout=60)
        if stats.indexes and all(i.graph_current for i in stats.indexes):
            return time.perf_counter() - started
        time.sleep(1.0)
    raise SystemExit(f"the HNSW graph was not built within {timeout_s:.0f}s")


def recall_at(index: EdgeIndex, vectors: list[list[float]], k: int = 5) -> float:
    """Share of the exact top k that the index's own search returns."""
    where = c.match("strategy", "fixed_size")
    shares = []
    for vector in vectors:
        exact = {p["chunk"] for p, _ in index.search(vector, where, k, exact=True)}
        found = {p["chunk"] for p, _ in index.search(vector, where, k)}
        shares.append(len(found & exact) / k)
    return float(np.mean(shares))


def service_call(stub, query: str, doc: str | None) -> tuple[float, rpb.RetrieveTimings]:
    request = rpb.RetrieveRequest(
        query=query, options=pb.RetrievalOptions(strategy="fixed_size", top_k=5, neighbor_prev=1, neighbor_next=1)
    )
    if doc:
        request.filter.document_ids.append(doc)
    started = time.perf_counter()
    response = stub.Retrieve(request, timeout=60)
    return (time.perf_counter() - started) * 1e3, response.timings


def raw_call(
    index: EdgeIndex, provider, query: str, doc: str | None, cached: dict | None, encoder: str
) -> tuple[float, float]:
    """What Retrieve has to do at the least: encode the question, search.

    `encoder` "encode" is sentence-transformers' own `SentenceTransformer.encode`,
    the call anyone embedding a question with this model makes; "direct" is
    the service's own leaner path (MiniLMProvider.embed_query, ADR 0034)."""
    started = time.perf_counter()
    if cached is not None:
        vector = cached[query]
    elif encoder == "encode":
        vector = provider.model().encode([query], normalize_embeddings=True, convert_to_numpy=True)[0].tolist()
    else:
        vector = provider.embed_query(query).tolist()
    encoded = time.perf_counter()
    where = c.match("strategy", "fixed_size")
    if doc:
        where = c.All(must=(where, c.match("document_id", doc)))
    index.search(vector, where, 5)
    done = time.perf_counter()
    return (encoded - started) * 1e3, (done - encoded) * 1e3


def run_case(stub, index, provider, asks, cached, encoder: str = "encode", samples: dict | None = None) -> dict:
    """Service and raw calls strictly alternated: each side's encode follows
    the other side's turn, so each runs after about 12 ms in which its own
    process did no encoding (an encode straight after another one runs about
    0.7 ms faster here, ADR 0036), and both see the same load on the machine.
    Adds to `samples` (a new dict if None)."""
    samples = samples if samples is not None else {}
    for key in ("service", "timings", "encode", "search"):
        samples.setdefault(key, [])
    for query, doc in asks:
        latency, t = service_call(stub, query, doc)
        samples["service"].append(latency)
        samples["timings"].append(t)
        e, s = raw_call(index, provider, query, doc, cached, encoder)
        samples["encode"].append(e)
        samples["search"].append(s)
    return samples


def summarize(samples: dict) -> dict:
    service_ms, timings = samples["service"], samples["timings"]
    encode_ms, search_ms = samples["encode"], samples["search"]
    total_ms = [e + s for e, s in zip(encode_ms, search_ms)]
    # Where the service's time goes beyond the encode and the search: the
    # round trip (what the client waited minus what the server spent) and
    # the expansion (fetching and building the ±1/1 neighbours).
    transport_ms = [s - t.total_ms for s, t in zip(service_ms, timings)]
    return {
        "calls": len(service_ms),
        "service_p50": percentile(service_ms, 50),
        "service_p95": percentile(service_ms, 95),
        "server_embed_p50": percentile([t.embed_ms for t in timings], 50),
        "server_total_p50": percentile([t.total_ms for t in timings], 50),
        "server_total_p95": percentile([t.total_ms for t in timings], 95),
        "server_search_p95": percentile([t.search_ms for t in timings], 95),
        "server_expand_p50": percentile([t.expand_ms for t in timings], 50),
        "server_expand_p95": percentile([t.expand_ms for t in timings], 95),
        "transport_p50": percentile(transport_ms, 50),
        "transport_p95": percentile(transport_ms, 95),
        "raw_encode_p50": percentile(encode_ms, 50),
        "raw_encode_p95": percentile(encode_ms, 95),
        "raw_search_p50": percentile(search_ms, 50),
        "raw_search_p95": percentile(search_ms, 95),
        "raw_total_p50": percentile(total_ms, 50),
        "raw_total_p95": percentile(total_ms, 95),
        "cached": statistics.mean(t.query_embedding_cached for t in timings),
    }


def run_size(size: int, n: int, rounds: int, texts, base, all_questions, rng, graph: bool) -> list[dict]:
    provider = get_provider(MODEL)
    with tempfile.TemporaryDirectory(prefix="chunklab-bench-") as tmp:
        data_dir = Path(tmp) / "service"
        stack = start(data_dir, graph)
        try:
            stub = channels.retriever(stack.addresses["retriever"])
            started = time.perf_counter()
            documents = index_synthetic(stub, size, texts, base, rng)
            print(f"  indexed {size:,} chunks through IndexChunks in {time.perf_counter() - started:.1f}s", flush=True)
            if graph:
                print(f"  HNSW graph built in the background {wait_for_graph(stub):.1f}s later", flush=True)
        finally:
            stack.stop()
        # The raw side searches a byte-for-byte copy of the service's shard
        # (a shard folder is opened by one process at a time).
        folder = data_dir / "retriever" / "edge" / index_name(MODEL, base.shape[1])
        shutil.copytree(folder, Path(tmp) / "raw")
        index = EdgeIndex(Path(tmp) / "raw", base.shape[1])
        unfiltered = [(q, None) for q in all_questions[:n]]
        filtered = [(q, documents[int(rng.integers(len(documents)))]) for q in all_questions[n : 2 * n]]
        cases: dict[tuple[str, str], dict] = {}
        try:
            for round_ in range(rounds):
                # A fresh retriever each round: every question is new to it again.
                # Rounds alternate the raw side's encoder (ENCODERS).
                encoder = ENCODERS[round_ % len(ENCODERS)]
                stack = start(data_dir, graph)
                try:
                    stub = channels.retriever(stack.addresses["retriever"])
                    # Warm both sides as a running service is warm: the model, and every
                    # document's pages of the shard (one filtered search each).
                    run_case(stub, index, provider, [(f"warm-up {i}", None) for i in range(10)], None, encoder)
                    warm_vector = {"warm-up 0": unit_vector(provider.embed_query("warm-up 0"))}
                    run_case(stub, index, provider, [("warm-up 0", doc) for doc in documents], warm_vector)
                    vectors = {q: unit_vector(provider.embed_query(q)) for q, _ in unfiltered}
                    if round_ == 0:
                        recall = recall_at(index, list(vectors.values()))
                        print(f"  unfiltered recall@5 against exact search: {recall:.3f}", flush=True)
                    for case, asks in (("unfiltered", unfiltered), ("filtered to one document", filtered)):
                        run_case(stub, index, provider, asks, None, encoder, cases.setdefault((case, encoder), {}))
                    run_case(
                        stub, index, provider, unfiltered, vectors, encoder, cases.setdefault((CACHED, "none"), {})
                    )
                finally:
                    stack.stop()
        finally:
            index.close()
    return [
        {"size": size, "case": case, "encoder": encoder, "recall_at_5": recall, **summarize(samples)}
        for (case, encoder), samples in cases.items()
    ]


def report(rows: list[dict]) -> None:
    def row(size: int, case: str, encoder: str) -> dict:
        return next(r for r in rows if r["size"] == size and r["case"] == case and r["encoder"] == encoder)

    sizes = sorted({r["size"] for r in rows})
    print("\nRetrieve via gRPC (top_k 5, ±1/1, query embedded unless cached) vs raw encode + raw search, ms")
    header = (
        f"{'chunks':>8} {'case':<26} {'svc p50':>8} {'svc p95':>8} {'enc p95':>8} {'srch p95':>8} "
        f"{'raw p50':>8} {'raw p95':>8} {'ratio p95':>9}  target       | {'svc p95':>8} {'direct raw p95':>14} "
        f"{'ratio':>6}"
    )
    print(header)
    print("-" * len(header))
    for size in sizes:
        for case in ("unfiltered", "filtered to one document"):
            r, d = row(size, case, "encode"), row(size, case, "direct")
            ratio = r["service_p95"] / r["raw_total_p95"]
            verdict = f"{'ok' if ratio <= 1.2 else 'MISSED'} (<= 1.2)"
            print(
                f"{size:>8,} {case:<26} {r['service_p50']:8.2f} {r['service_p95']:8.2f} "
                f"{r['raw_encode_p95']:8.2f} {r['raw_search_p95']:8.3f} {r['raw_total_p50']:8.2f} "
                f"{r['raw_total_p95']:8.2f} {ratio:9.2f}  {verdict:<13}| {d['service_p95']:8.2f} "
                f"{d['raw_total_p95']:14.2f} {d['service_p95'] / d['raw_total_p95']:6.2f}"
            )
        r, uncached = row(size, CACHED, "none"), row(size, "unfiltered", "encode")
        # The target here: a question asked again is not embedded again (the server says so per call).
        verdict = "ok" if r["cached"] == 1.0 else f"MISSED: {100 * (1 - r['cached']):.0f}% embedded again"
        print(
            f"{size:>8,} {CACHED:<26} {r['service_p50']:8.2f} {r['service_p95']:8.2f} {'-':>8} "
            f"{r['raw_search_p95']:8.3f} {'':>8} {'':>8} {r['service_p95'] / uncached['raw_total_p95']:9.2f}  "
            f"{verdict}: vs a new question's raw encode+search {uncached['raw_total_p95']:.2f}; "
            f"vs raw search alone x{r['service_p95'] / r['raw_search_p95']:.1f}"
        )
    print(
        "(svc: the gRPC call as a client sees it; enc/srch/raw: encode with SentenceTransformer.encode and search "
        "in this process on a copy of the same shard, alternated with the service calls. Right of the bar, from "
        "the rounds whose raw side encodes the service's own direct way (tokenize, one forward pass, pool): "
        "what the service adds beyond its own encoder)"
    )
    print("\nwhere the service's time goes, ms (p50 / p95):")
    print(
        f"{'chunks':>8} {'case':<26} {'raw encoder':<12} {'calls':>6} {'round trip':>14} {'expansion':>14} "
        f"{'server total':>14} {'raw encode':>14}"
    )
    for r in rows:
        print(
            f"{r['size']:>8,} {r['case']:<26} {r['encoder']:<12} {r['calls']:>6} "
            f"{r['transport_p50']:6.2f} /{r['transport_p95']:6.2f} {r['server_expand_p50']:6.2f} /"
            f"{r['server_expand_p95']:6.2f} {r['server_total_p50']:6.2f} /{r['server_total_p95']:6.2f} "
            f"{r['raw_encode_p50']:6.2f} /{r['raw_encode_p95']:6.2f}"
        )
    print(
        "(round trip: what the client waited minus what the server spent in Retrieve, i.e. gRPC both ways; "
        "expansion: fetching and building the ±1/1 neighbours, work the raw side does not do)"
    )
    if len(sizes) == 2:
        print("\ngrowth from {:,} to {:,} chunks (p95):".format(*sizes))
        for case, encoder in (("unfiltered", "encode"), ("filtered to one document", "encode"), (CACHED, "none")):
            small, large = (row(size, case, encoder) for size in sizes)
            print(
                f"  {case:<26} raw search x{large['raw_search_p95'] / small['raw_search_p95']:.1f}, "
                f"service x{large['service_p95'] / small['service_p95']:.2f}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="20000,100000")
    parser.add_argument("--queries", type=int, default=138, help="distinct questions per case (276 in all)")
    parser.add_argument(
        "--rounds",
        type=int,
        default=4,
        help="rounds, each against a freshly started retriever (every question new again); "
        "they alternate the raw side's encoder between encode() and the direct path",
    )
    parser.add_argument("--json", type=Path, help="also write the rows here")
    parser.add_argument(
        "--exact", action="store_true", help="no HNSW graph (CHUNKLAB_HNSW_MIN_POINTS=0): every search exact"
    )
    args = parser.parse_args()
    rng = np.random.default_rng(7)
    import torch

    torch.set_num_threads(1)  # as the retriever process does (services/retriever/server.py)
    texts = corpus_slices()
    provider = get_provider(MODEL)
    print(f"embedding {len(texts)} real text slices for the synthetic vectors ...", flush=True)
    base = provider.embed_documents(texts).astype(np.float64)
    all_questions = questions()
    assert len(all_questions) >= 2 * args.queries, "not enough distinct questions"
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        print(f"size {size:,}:", flush=True)
        rows += run_size(size, args.queries, args.rounds, texts, base, all_questions, rng, graph=not args.exact)

    report(rows)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
