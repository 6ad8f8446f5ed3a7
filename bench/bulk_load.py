"""Bulk loads through the message broker against calling ProcessDocument directly, side by side.

The shared chroma-general corpora are cut into documents of about 8 kB at
paragraph breaks. Each way of loading them runs on a freshly started stack
(its own data folder, so no embedding comes from a cache another way
filled), warmed with four small documents first: ProcessDocument called for one document after another, and two at
a time; a bulk load on the embedded queue with one worker and with two; a
bulk load through a real Redis shared by two chunker replicas (when
redis-server is installed), with torch's default threads and with one
torch thread per replica. Every way chunks with fixed_size (256 tokens)
and embeds with all-MiniLM-L6-v2. Prints seconds, documents per second and
the ratio to the one-after-another baseline.

    .venv/bin/python bench/bulk_load.py [--piece-kb 8]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from chunklab.knobs import to_spec
from chunklab_app.stack import Stack, wait_serving

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "chroma-general" / "corpora"
SPEC = to_spec("fixed_size", {"chunk_size": 256})


def pieces(piece_bytes: int) -> list[tuple[str, str]]:
    """(name, text) documents of about piece_bytes, cut at blank lines."""
    out = []
    for path in sorted(DATA.glob("*.md")):
        current: list[str] = []
        size = 0
        for paragraph in path.read_text(encoding="utf-8").split("\n\n"):
            current.append(paragraph)
            size += len(paragraph.encode()) + 2
            if size >= piece_bytes:
                out.append((f"{path.stem}-{len(out):03d}.md", "\n\n".join(current)))
                current, size = [], 0
        if current:
            out.append((f"{path.stem}-{len(out):03d}.md", "\n\n".join(current)))
    return out


def upload(stack: Stack, documents: list[tuple[str, str]]) -> list[str]:
    lab = stack.client()
    return [lab.upload_document(text.encode(), name=name).document.document_id for name, text in documents]


def direct(stack: Stack, ids: list[str], at_once: int) -> int:
    lab = stack.client()

    def one(document_id: str) -> int:
        return sum(o.chunk_count for o in lab.process(document_id, [SPEC]).strategies_completed)

    with ThreadPoolExecutor(at_once) as pool:
        return sum(pool.map(one, ids))


def bulk(stack: Stack, ids: list[str]) -> int:
    lab = stack.client()
    *_, load = lab.follow_bulk_load(lab.submit_bulk_load(ids, [SPEC]).bulk_load_id, interval_s=0.05)
    if len(load.results) < load.jobs_total:
        raise SystemExit(f"the bulk load did not finish: {len(load.results)} of {load.jobs_total} jobs")
    failed = [r for r in load.results if r.error or r.result.strategies_failed]
    if failed:
        raise SystemExit(f"{len(failed)} jobs failed, e.g. {failed[0]}")
    return sum(o.chunk_count for r in load.results for o in r.result.strategies_completed)


def run(name: str, documents, folder: Path, env: dict[str, str], load, replicas: int = 0) -> dict:
    stack = Stack(data_dir=folder / name.replace(" ", "-"), extra_env=env)
    try:
        stack.start()
        for i in range(replicas):
            replica_env = stack.env()
            replica_env.update(CHUNKLAB_CHUNKER_ADDRESS="127.0.0.1:0", CHUNKLAB_BULK_WORKERS="1")
            wait_serving(
                stack._spawn(f"chunker-replica-{i}", "services.chunker", replica_env, "listening on", 300), 300
            )
        # Warm every worker as a running stack is warm (models load in the background at start).
        load(
            stack,
            upload(stack, [(f"warm-up-{i}.md", f"# Warm-up {i}\n\nA line to embed, number {i}.\n") for i in range(4)]),
        )
        ids = upload(stack, documents)
        started = time.perf_counter()
        chunks = load(stack, ids)
        seconds = time.perf_counter() - started
    finally:
        stack.stop()
    return {"name": name, "seconds": seconds, "chunks": chunks}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--piece-kb", type=float, default=8.0)
    args = parser.parse_args()
    documents = pieces(int(args.piece_kb * 1000))
    print(f"{len(documents)} documents of about {args.piece_kb:.0f} kB from {DATA}", flush=True)
    rows = []
    redis = None
    with tempfile.TemporaryDirectory(prefix="chunklab-bulk-") as tmp:
        folder = Path(tmp)
        none = {"CHUNKLAB_BULK_WORKERS": "0"}
        ways = [
            ("ProcessDocument, one after another", none, lambda s, ids: direct(s, ids, 1), 0),
            ("ProcessDocument, two at a time", none, lambda s, ids: direct(s, ids, 2), 0),
            ("bulk load, embedded queue, 1 worker", {"CHUNKLAB_BULK_WORKERS": "1"}, bulk, 0),
            ("bulk load, embedded queue, 2 workers", {"CHUNKLAB_BULK_WORKERS": "2"}, bulk, 0),
        ]
        if shutil.which("redis-server"):
            from tests.support.redis_server import RedisServer

            redis = RedisServer(folder)
            on_redis = {"CHUNKLAB_BULK_WORKERS": "0", "CHUNKLAB_BROKER_URL": redis.url}
            ways.append(("bulk load, Redis, 2 chunker replicas", on_redis, bulk, 2))
            # Replicas sharing one machine's cores, each told its share (OMP_NUM_THREADS, read by torch).
            ways.append(("  the same, 1 torch thread per replica", {**on_redis, "OMP_NUM_THREADS": "1"}, bulk, 2))
        else:
            print("(redis-server is not installed: the Redis row is left out; `make broker` installs it)")
        try:
            for name, env, load, replicas in ways:
                rows.append(run(name, documents, folder, env, load, replicas))
                print(f"  {name}: {rows[-1]['seconds']:.1f}s", flush=True)
        finally:
            if redis is not None:
                redis.stop()
    base = rows[0]["seconds"]
    print(f"\n{'way':<40} {'seconds':>8} {'docs/s':>7} {'chunks':>7} {'vs one after another':>21}")
    for row in rows:
        print(
            f"{row['name']:<40} {row['seconds']:8.1f} {len(documents) / row['seconds']:7.2f} {row['chunks']:7d} "
            f"{base / row['seconds']:20.2f}x"
        )


if __name__ == "__main__":
    main()
