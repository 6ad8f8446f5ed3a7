"""What keeping configurations side by side costs a query (ADR 0038).

One Edge shard holding one configuration of fixed_size (the old shape: a query
filters by strategy), against one shard holding that configuration beside
`--others` more of the same size (the new shape: a query filters by strategy and
the active marker, or by one config_id). The points are the same 384-dimension
vectors per configuration, documents of 200 chunks; exact search, top 5, the
retriever's Edge configuration. Prints p50/p95 and the ratios to the old shape.

    .venv/bin/python bench/index_sets.py [--points 20000] [--others 2]
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
from services.retriever.index.payloads import ACTIVE, INACTIVE, SET_STATE_FIELD, IndexPoint

DIM = 384
PER_DOC = 200


def configuration(config_id: str, vectors: np.ndarray, active: bool) -> dict[str, list[IndexPoint]]:
    """One configuration's points, by document."""
    by_doc: dict[str, list[IndexPoint]] = {}
    for i, vector in enumerate(vectors):
        doc = f"d{i // PER_DOC}"
        by_doc.setdefault(doc, []).append(
            IndexPoint(
                str(uuid.uuid4()),
                {
                    "document_id": doc,
                    "strategy": "fixed_size",
                    "config_id": config_id,
                    "collection": "policies",
                    "language": "en",
                    "role": "chunk",
                    "chunk_index": i % PER_DOC,
                    "published_ts": 0.0,
                    SET_STATE_FIELD: ACTIVE if active else INACTIVE,
                    "chunk": "x" * 2000,
                },
                vector.tolist(),
            )
        )
    return by_doc


def load(index: EdgeIndex, config_id: str, by_doc: dict[str, list[IndexPoint]], active: bool) -> None:
    for doc, points in by_doc.items():
        index.replace(doc, "fixed_size", config_id, points, active)


def timed(index: EdgeIndex, queries, where) -> tuple[float, float]:
    latencies = []
    for q in queries:
        started = time.perf_counter()
        index.search(q, where, 5)
        latencies.append((time.perf_counter() - started) * 1e3)
    return float(np.percentile(latencies, 50)), float(np.percentile(latencies, 95))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--points", type=int, default=20000, help="points per configuration")
    parser.add_argument("--others", type=int, default=2, help="inactive configurations beside the active one")
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    rng = np.random.default_rng(7)

    def vectors() -> np.ndarray:
        v = rng.standard_normal((args.points, DIM)).astype(np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    queries = [q.tolist() for q in rng.standard_normal((args.queries, DIM)).astype(np.float32)]
    strategy = c.match("strategy", "fixed_size")
    with tempfile.TemporaryDirectory() as tmp:
        old, new = EdgeIndex(Path(tmp) / "one", DIM), EdgeIndex(Path(tmp) / "sets", DIM)
        active = configuration("c0", vectors(), True)
        load(old, "c0", active, True)
        load(new, "c0", active, True)
        for n in range(1, args.others + 1):
            load(new, f"c{n}", configuration(f"c{n}", vectors(), False), False)
        rows = [
            ("one configuration, by strategy", timed(old, queries, strategy)),
            (
                "active sets (strategy + set_state)",
                timed(new, queries, c.All(must=(strategy, c.match(SET_STATE_FIELD, ACTIVE)))),
            ),
            ("one set by config_id", timed(new, queries, c.All(must=(strategy, c.match("config_id", "c0"))))),
            ("an inactive set by config_id", timed(new, queries, c.All(must=(strategy, c.match("config_id", "c1")))))
            if args.others
            else None,
        ]
        print(
            f"{args.points:,} points per configuration; the shard with sets holds {1 + args.others} configurations "
            f"({new.count():,} points); exact top-5 search, ms"
        )
        base50, base95 = rows[0][1]
        print(f"{'search':<38} {'p50':>8} {'p95':>8} {'p50 ratio':>10} {'p95 ratio':>10}")
        for label, (p50, p95) in [r for r in rows if r is not None]:
            print(f"{label:<38} {p50:8.3f} {p95:8.3f} {p50 / base50:10.2f} {p95 / base95:10.2f}")
        old.close()
        new.close()


if __name__ == "__main__":
    main()
