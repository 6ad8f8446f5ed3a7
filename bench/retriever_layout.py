"""Collection layout: strategies as a payload field of one shared shard, or
one shard per strategy? Measured side by side in one run (ADR 0020).

20,000 points of 384 dimensions, 4 strategies of 5,000 each, documents of
200 chunks. Times a top-5 search for one strategy (and for one strategy and
one document) in the shared shard with a payload filter, against the same
search in a shard that holds only that strategy. Exact search, the
retriever's Edge configuration (ADR 0020 says why it builds no HNSW).

    .venv/bin/python bench/retriever_layout.py [--points 20000]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import uuid
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from services.retriever.index import conditions as c
from services.retriever.index.edge import EdgeIndex
from services.retriever.index.payloads import IndexPoint

STRATEGIES = ("fixed_size", "recursive", "semantic", "sentence_window")
DIM = 384


def make_points(n: int, rng) -> dict[str, list[IndexPoint]]:
    vectors = rng.standard_normal((n, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    per = n // len(STRATEGIES)
    points: dict[str, list[IndexPoint]] = {}
    for s, strategy in enumerate(STRATEGIES):
        points[strategy] = [
            IndexPoint(
                str(uuid.uuid4()),
                {
                    "document_id": f"d{i // 200}",
                    "strategy": strategy,
                    "config_id": "c",
                    "collection": "policies",
                    "language": "en",
                    "role": "chunk",
                    "chunk_index": i % 200,
                    "published_ts": 0.0,
                    "set_state": "active",
                    "chunk": "x" * 2000,
                },
                vectors[s * per + i].tolist(),
            )
            for i in range(per)
        ]
    return points


def load(index: EdgeIndex, points: list[IndexPoint]) -> None:
    by_doc: dict[tuple, list] = {}
    for p in points:
        by_doc.setdefault((p.payload["document_id"], p.payload["strategy"]), []).append(p)
    for (doc, strategy), group in by_doc.items():
        index.replace(doc, strategy, "c", group, True)


def timed(index: EdgeIndex, queries, where) -> tuple[float, float]:
    latencies = []
    for q in queries:
        started = time.perf_counter()
        index.search(q, where, 5)
        latencies.append((time.perf_counter() - started) * 1e3)
    return float(np.percentile(latencies, 50)), float(np.percentile(latencies, 95))


def measure(shared: EdgeIndex, separate: dict[str, EdgeIndex], queries) -> list[tuple[str, tuple, tuple]]:
    rows = []
    for label, extra in (("one strategy", None), ("one strategy, one document", c.match("document_id", "d7"))):
        a_runs, b_runs = [], []
        for strategy in STRATEGIES:
            where = c.match("strategy", strategy)
            if extra is not None:
                where = c.All(must=(where, extra))
            a_runs.append(timed(shared, queries, where))
            b_runs.append(timed(separate[strategy], queries, where))
        rows.append((label, tuple(np.mean(a_runs, axis=0)), tuple(np.mean(b_runs, axis=0))))
    return rows


def show(title: str, rows) -> None:
    print(f"\n{title}")
    print(f"{'search':<28} {'shared p50':>10} {'shared p95':>10} {'own p50':>9} {'own p95':>9} {'ratio p95':>9}")
    for label, (a50, a95), (b50, b95) in rows:
        print(f"{label:<28} {a50:10.3f} {a95:10.3f} {b50:9.3f} {b95:9.3f} {a95 / b95:9.2f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--points", type=int, default=20000)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    rng = np.random.default_rng(3)
    points = make_points(args.points, rng)
    queries = [v.tolist() for v in rng.standard_normal((args.queries, DIM)).astype(np.float32)]
    with tempfile.TemporaryDirectory() as tmp:
        shared = EdgeIndex(Path(tmp) / "shared", DIM)
        separate = {s: EdgeIndex(Path(tmp) / s, DIM) for s in STRATEGIES}
        for strategy, group in points.items():
            load(shared, group)
            load(separate[strategy], group)
        disk = shared.disk_bytes(), sum(i.disk_bytes() for i in separate.values())
        print(
            f"{args.points:,} points, {len(STRATEGIES)} strategies; disk: shared {disk[0] / 1e6:.1f} MB, "
            f"one shard per strategy {disk[1] / 1e6:.1f} MB in total"
        )
        show(
            "exact search (the retriever's Edge configuration), ms, mean over strategies",
            measure(shared, separate, queries),
        )
        for index in (shared, *separate.values()):
            index.close()


if __name__ == "__main__":
    main()
