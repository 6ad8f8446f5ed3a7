"""What BM25 statistics per index set cost a hybrid query (ADR 0044).

A retriever (Qdrant Edge, in process) holding `--documents` documents of
fixed_size chunks cut from chroma-general's corpora (real words, so real term
statistics), each with `--configs` configurations side by side; query vectors
are random (the dense search is not what is measured). For the same questions
it times, side by side in one run: a dense Retrieve, a hybrid Retrieve, and
the step a hybrid query added (summing the searched sets' term counts into
the query's IDF weights), with every document searched and with one. Prints
p50/p95, the ratios, and the statistics' bytes beside the points'.

    .venv/bin/python bench/hybrid_scope.py [--documents 200] [--configs 2]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from chunklab import ids
from chunklab.v1 import common_pb2, retriever_pb2
from services.retriever.index import conditions as c
from services.retriever.index.payloads import ACTIVE, SET_STATE_FIELD
from services.retriever.index.registry import IndexRegistry
from services.retriever.search import lexical
from services.retriever.service import RetrieverService
from services.retriever.store import RetrieverStore, SetTermsRow

DIM = 384
CHUNK_WORDS = 120
CORPORA = Path(__file__).resolve().parents[2] / "shared" / "data" / "chroma-general" / "corpora"


class RandomProvider:
    name = "random-384"
    dimension = DIM

    def __init__(self) -> None:
        self.rng = np.random.default_rng(3)

    def known_dimension(self) -> int:
        return DIM

    def embed_query(self, text: str) -> np.ndarray:
        return self.rng.standard_normal(DIM).astype(np.float32)


def pieces() -> list[str]:
    words = " ".join(p.read_text(encoding="utf-8") for p in sorted(CORPORA.glob("*.md"))).split()
    return [" ".join(words[i : i + CHUNK_WORDS]) for i in range(0, len(words) - CHUNK_WORDS, CHUNK_WORDS)]


def index(service: RetrieverService, documents: int, configs: int, per_document: int, rng) -> None:
    texts = pieces()
    for d in range(documents):
        doc = f"doc-{d:04d}"
        for k in range(configs):
            config = f"cfg{k}"
            items = []
            start = (d * per_document) % max(1, len(texts) - per_document)
            for i, text in enumerate(texts[start : start + per_document]):
                chunk = common_pb2.Chunk(
                    chunk_id=ids.chunk_id(doc, "fixed_size", config, i, common_pb2.CHUNK_ROLE_CHUNK),
                    document_id=doc,
                    document_name=f"{doc}.md",
                    strategy="fixed_size",
                    chunk_index=i,
                    content=text,
                    collection="bench",
                    language="en",
                )
                items.append(retriever_pb2.IndexedChunk(chunk=chunk, vector=rng.standard_normal(DIM).tolist()))
            service.index_chunks(
                retriever_pb2.IndexHeader(
                    document_id=doc,
                    strategy="fixed_size",
                    config_id=config,
                    embedding_model=RandomProvider.name,
                    dimension=DIM,
                    spec=common_pb2.StrategySpec(name="fixed_size"),
                    expansion=common_pb2.EXPANSION_KIND_NEIGHBORS,
                    activation=common_pb2.ACTIVATION_UNSPECIFIED
                    if k == configs - 1
                    else common_pb2.ACTIVATION_KEEP_CURRENT,
                ),
                items,
            )


def percentiles(samples: list[float]) -> tuple[float, float]:
    return float(np.percentile(samples, 50)), float(np.percentile(samples, 95))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--documents", type=int, default=200)
    parser.add_argument("--configs", type=int, default=2, help="configurations of each document side by side")
    parser.add_argument("--chunks", type=int, default=40, help="chunks per document and configuration")
    parser.add_argument("--queries", type=int, default=100)
    args = parser.parse_args()
    rng = np.random.default_rng(7)
    vocabulary = " ".join(pieces()[:50]).split()
    questions = [" ".join(rng.choice(vocabulary, 6)) for _ in range(args.queries)]
    with tempfile.TemporaryDirectory() as tmp:
        store = RetrieverStore(f"sqlite:///{Path(tmp) / 'retriever.sqlite3'}")
        provider = RandomProvider()
        service = RetrieverService(
            IndexRegistry(Path(tmp) / "edge", store, None), store, provider.name, lambda name: provider, {}
        )
        started = time.perf_counter()
        index(service, args.documents, args.configs, args.chunks, rng)
        print(
            f"indexed {args.documents} documents x {args.configs} configurations x {args.chunks} chunks "
            f"in {time.perf_counter() - started:.1f}s"
        )
        ((_, _, edge),) = service.registry.all()
        rows = {}
        for label, doc_filter in (("every document", []), ("one document", ["doc-0007"])):
            timings: dict[str, list[float]] = {"dense": [], "hybrid": [], "statistics step": []}
            for question in questions:
                for name, hybrid in (("dense", False), ("hybrid", True)):
                    request = retriever_pb2.RetrieveRequest(
                        query=question,
                        exact=True,
                        options=common_pb2.RetrievalOptions(
                            strategy="fixed_size",
                            top_k=5,
                            hybrid=hybrid,
                            filter=common_pb2.RetrievalFilter(document_ids=doc_filter),
                        ),
                    )
                    t = time.perf_counter()
                    service.retrieve(request)
                    timings[name].append((time.perf_counter() - t) * 1e3)
                where = c.All(
                    must=(c.match(SET_STATE_FIELD, ACTIVE),)
                    + ((c.match("document_id", *doc_filter),) if doc_filter else ())
                )
                t = time.perf_counter()
                service._weighted_terms(
                    edge, provider.name, "fixed_size", "", where, lexical.query_vector(question), doc_filter
                )
                timings["statistics step"].append((time.perf_counter() - t) * 1e3)
            rows[label] = {k: percentiles(v) for k, v in timings.items()}
        for label, found in rows.items():
            print(f"\n{label}:")
            for name, (p50, p95) in found.items():
                print(f"  {name:16s} p50 {p50:7.2f} ms  p95 {p95:7.2f} ms  ({p50 / found['dense'][0]:.2f}x dense p50)")
        with store._sessions() as session:
            stats_bytes = sum(len(r.counts) for r in session.query(SetTermsRow))
        points_bytes = sum(s["bytes"] for s in store.list_sets())
        print(
            f"\nstatistics: {stats_bytes / 1e6:.1f} MB for {args.documents * args.configs} sets, "
            f"{stats_bytes / points_bytes:.2f}x the points' bytes ({points_bytes / 1e6:.1f} MB)"
        )
        service.close()


if __name__ == "__main__":
    main()
