"""Load by a command (issue 14, item 7): many clients searching while documents are uploaded and processed.

A whole stack (chunklab_app.stack.Stack, in a temporary data folder) is
seeded with chroma-general's three corpora, processed with fixed_size (256
tokens). Then, in one run:
  1. one client alone calls Retrieve for --alone-seconds (the baseline);
  2. side by side for --seconds: --clients threads call Retrieve, and
     --uploaders threads upload a document and process it with fixed_size,
     again and again; every thread has its own ChunkLab client.
Questions come from chroma-general's questions.csv, each sent with a number of
its own so that no query embedding comes from the retriever's cache (the
baseline and the load do the same work per request). Every uploaded document
carries a mark of its own every 40 words, so neither the ingest's dedup nor
the chunker's embedding cache makes it free. Prints errors by status code
(none expected), Retrieve throughput, p50/p95 under load against the client
alone (with the retriever's own timings, to tell the work from the wait),
uploads processed (each checked in the retriever's index sets), and the RSS of
each service process from /proc before and after (and every --memory-every
seconds of the load). The defaults are the full run (about 100 s with start-up);
docs/reliability.md holds its figures.

    .venv/bin/python bench/load.py [--clients 32] [--uploaders 8] [--seconds 60] [--memory-every 0]

tests/e2e/test_load.py runs the same code for a few seconds with a few clients.
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from chunklab.client import ChunkLab, ClientError
from chunklab.knobs import to_spec
from chunklab.v1 import common_pb2
from chunklab_app.stack import Stack

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "chroma-general"
STRATEGY = "fixed_size"
SPEC = to_spec(STRATEGY, {"chunk_size": 256})
OPTIONS = common_pb2.RetrievalOptions(strategy=STRATEGY, top_k=5)
MARK_EVERY_WORDS = 40


@dataclass
class Calls:
    """One kind of call, timed: latencies of the calls that succeeded, and
    the failures by status code (or by exception, for a failure with none)."""

    latencies_ms: list[float] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    started: float = float("inf")
    ended: float = 0.0

    def timed(self, call: Callable[[], object]) -> object | None:
        """The call's value, its latency recorded; None when it failed (the failure counted)."""
        began = time.perf_counter()
        try:
            value = call()
        except ClientError as exc:
            self.errors[exc.code.name if exc.code is not None else "refused by the client"] += 1
            return None
        except Exception as exc:  # a load run counts every failure and goes on
            self.errors[type(exc).__name__] += 1
            return None
        self.latencies_ms.append((time.perf_counter() - began) * 1e3)
        return value

    def absorb(self, other: Calls) -> None:
        self.latencies_ms += other.latencies_ms
        self.errors += other.errors
        self.started = min(self.started, other.started)
        self.ended = max(self.ended, other.ended)

    @property
    def count(self) -> int:
        return len(self.latencies_ms) + sum(self.errors.values())

    @property
    def per_second(self) -> float:
        return self.count / (self.ended - self.started) if self.ended > self.started else 0.0

    def percentile(self, q: float) -> float:
        return percentile(self.latencies_ms, q)


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else float("nan")


@dataclass
class Searches(Calls):
    """Retrieve calls; `empty` counts answers without a single chunk, `cached` those whose
    query embedding came from the retriever's cache; `server_ms` holds the
    retriever's own timings of each (embed, search, total), which tell the
    work from the wait."""

    empty: int = 0
    cached: int = 0
    server_ms: dict[str, list[float]] = field(default_factory=lambda: {"embed": [], "search": [], "total": []})

    def absorb(self, other: Searches) -> None:
        super().absorb(other)
        self.empty += other.empty
        self.cached += other.cached
        for part, values in other.server_ms.items():
            self.server_ms[part] += values

    def record(self, response) -> None:
        self.empty += not response.retrieved_chunks
        self.cached += response.timings.query_embedding_cached
        for part in self.server_ms:
            self.server_ms[part].append(getattr(response.timings, f"{part}_ms"))


@dataclass
class Uploads:
    """Documents uploaded and processed: the uploads and the processing timed
    apart; `processed` maps each document processed with fixed_size to its
    chunk count; `indexed` the same, as the retriever's index sets tell it."""

    upload: Calls = field(default_factory=Calls)
    process: Calls = field(default_factory=Calls)
    uploaded: list[str] = field(default_factory=list)
    already_existed: int = 0
    processed: dict[str, int] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    embedded: int = 0
    embeddings_cached: int = 0
    indexed: dict[str, int] = field(default_factory=dict)

    def absorb(self, other: Uploads) -> None:
        self.upload.absorb(other.upload)
        self.process.absorb(other.process)
        self.uploaded += other.uploaded
        self.already_existed += other.already_existed
        self.processed.update(other.processed)
        self.failures += other.failures
        self.embedded += other.embedded
        self.embeddings_cached += other.embeddings_cached


@dataclass
class LoadReport:
    clients: int
    uploaders: int
    seconds: float
    alone: Searches
    under_load: Searches
    uploads: Uploads
    memory_before: dict[str, dict[str, int]]
    memory_after: dict[str, dict[str, int]]
    # Every service's RSS in kB, read every `memory_every` seconds of the load (if asked).
    memory_samples: list[dict[str, int]] = field(default_factory=list)
    memory_every: float = 0.0

    def errors(self) -> Counter[str]:
        """Every failure of the run by status code."""
        return self.alone.errors + self.under_load.errors + self.uploads.upload.errors + self.uploads.process.errors


def questions(data: Path = DATA) -> list[str]:
    with open(data / "questions.csv", newline="", encoding="utf-8") as file:
        return [row["question"] for row in csv.DictReader(file)]


def corpus_words(data: Path = DATA) -> list[str]:
    return " ".join(p.read_text(encoding="utf-8") for p in sorted((data / "corpora").glob("*.md"))).split()


def seed(lab: ChunkLab, data: Path = DATA) -> dict[str, int]:
    """Uploads the corpora and processes each with fixed_size; returns their chunk counts by name."""
    chunks = {}
    for path in sorted((data / "corpora").glob("*.md")):
        document = lab.upload_document(path, language="en").document
        result = lab.process(document.document_id, [SPEC])
        if result.strategies_failed:
            raise SystemExit(f"processing {path.name} failed: {result.strategies_failed[0].reason}")
        chunks[path.name] = result.strategies_completed[0].chunk_count
    return chunks


def marked_document(words: list[str], mark: str, number: int, size: int) -> bytes:
    """`size` words of the corpora (where this number's window starts) with the
    mark after every MARK_EVERY_WORDS words: bytes and chunk texts of their own."""
    start = (number * size) % max(1, len(words) - size)
    window = words[start : start + size]
    lines = [" ".join(window[i : i + MARK_EVERY_WORDS]) + f" [{mark}]" for i in range(0, len(window), MARK_EVERY_WORDS)]
    return (f"# Load document {mark}\n\n" + "\n\n".join(lines) + "\n").encode()


def rss(stack: Stack) -> dict[str, dict[str, int]]:
    """Each service process's resident memory now (VmRSS; RssAnon is its heap, the
    rest maps files such as the index's) and at its peak (VmHWM), in kB, from /proc/<pid>/status."""
    memory = {}
    for name, process in stack.processes.items():
        fields = {}
        with open(f"/proc/{process.pid}/status", encoding="ascii") as status:
            for line in status:
                key, _, value = line.partition(":")
                if key in ("VmRSS", "VmHWM", "RssAnon"):
                    fields[key] = int(value.split()[0])
        memory[name] = fields
    return memory


def sample_memory(stack: Stack, every: float, done: threading.Event, samples: list[dict[str, int]]) -> None:
    """Every service's RSS every `every` seconds until `done` (does memory climb, or level off?)."""
    while not done.wait(every):
        samples.append({name: fields["VmRSS"] for name, fields in rss(stack).items()})


def search(stack: Stack, asked: list[str], client: int, start: threading.Barrier | None, seconds: float) -> Searches:
    """One client's Retrieve calls for `seconds` (after every thread of the run is ready)."""
    lab = stack.client()
    warm_up = Calls()  # opens the channel before the clock starts; a failure counts
    warm_up.timed(lambda: lab.retrieve(f"warm-up of client {client}", OPTIONS))
    if start is not None:
        start.wait()
    out = Searches(errors=warm_up.errors, started=time.perf_counter())
    until = out.started + seconds
    number = client * 7919  # where this client starts in the questions
    while time.perf_counter() < until:
        query = f"{asked[number % len(asked)]} (ask {client}.{number})"
        response = out.timed(lambda: lab.retrieve(query, OPTIONS))
        if response is not None:
            out.record(response)
        number += 1
    out.ended = time.perf_counter()
    return out


def upload_and_process(
    stack: Stack, words: list[str], uploader: int, run: str, start: threading.Barrier, seconds: float, size: int
) -> Uploads:
    """One uploader's documents, each uploaded and then processed with fixed_size,
    until `seconds` have passed (the document under way is finished)."""
    lab = stack.client()
    warm_up = Calls()  # opens the chunker's channel before the clock starts; a failure counts
    warm_up.timed(lab.list_strategies)
    start.wait()
    out = Uploads(process=Calls(errors=warm_up.errors))
    began = time.perf_counter()
    number = 0
    while time.perf_counter() < began + seconds:
        mark = f"{run}-u{uploader}-{number}"
        data = marked_document(words, mark, uploader * 1000 + number, size)
        number += 1
        response = out.upload.timed(lambda: lab.upload_document(data, name=f"load-{mark}.md", language="en"))
        if response is None:
            continue
        document_id = response.document.document_id
        out.uploaded.append(document_id)
        out.already_existed += response.already_existed
        result = out.process.timed(lambda: lab.process(document_id, [SPEC]))
        if result is None:
            continue
        if result.strategies_failed:
            out.failures += [f"{mark}: {f.reason}" for f in result.strategies_failed]
        for outcome in result.strategies_completed:
            out.processed[document_id] = outcome.chunk_count
            out.embedded += outcome.chunk_count - outcome.embeddings_cached
            out.embeddings_cached += outcome.embeddings_cached
    out.upload.started = out.process.started = began
    out.upload.ended = out.process.ended = time.perf_counter()
    return out


def run_load(
    stack: Stack,
    clients: int,
    uploaders: int,
    seconds: float,
    alone_seconds: float,
    upload_words: int = 600,
    data: Path = DATA,
    memory_every: float = 0.0,
) -> LoadReport:
    """The baseline (one client alone), then the clients and the uploaders side by
    side; memory read before the baseline and after the load (and every
    `memory_every` seconds of it, if more than 0)."""
    asked, words = questions(data), corpus_words(data)
    run = f"{time.time_ns():x}"
    memory_before = rss(stack)
    alone = search(stack, asked, 0, None, alone_seconds)
    start = threading.Barrier(clients + uploaders)
    samples: list[dict[str, int]] = []
    done = threading.Event()
    if memory_every > 0:
        threading.Thread(target=sample_memory, args=(stack, memory_every, done, samples), daemon=True).start()
    with ThreadPoolExecutor(clients + uploaders) as pool:
        searching = [pool.submit(search, stack, asked, 1 + c, start, seconds) for c in range(clients)]
        uploading = [
            pool.submit(upload_and_process, stack, words, u, run, start, seconds, upload_words)
            for u in range(uploaders)
        ]
        under_load, uploads = Searches(), Uploads()
        for future in searching:
            under_load.absorb(future.result())
        for future in uploading:
            uploads.absorb(future.result())
    done.set()
    memory_after = rss(stack)
    lab = stack.client()
    for document_id in uploads.uploaded:
        indexed = lab.indexed_set(document_id, STRATEGY)
        if indexed is not None:
            uploads.indexed[document_id] = indexed.points
    return LoadReport(
        clients, uploaders, seconds, alone, under_load, uploads, memory_before, memory_after, samples, memory_every
    )


def table(report: LoadReport) -> str:
    """The report as a person reads it."""
    alone, loaded, up = report.alone, report.under_load, report.uploads
    lines = [f"{'Retrieve':<34} {'calls':>7} {'errors':>7} {'calls/s':>8} {'p50 ms':>8} {'p95 ms':>8}"]
    for label, calls in (
        ("one client alone", alone),
        (f"{report.clients} clients, {report.uploaders} uploading", loaded),
    ):
        lines.append(
            f"{label:<34} {calls.count:7d} {sum(calls.errors.values()):7d} {calls.per_second:8.1f} "
            f"{calls.percentile(50):8.1f} {calls.percentile(95):8.1f}"
        )
    lines.append(
        f"{'under load / alone':<34} {'':7} {'':7} {loaded.per_second / alone.per_second:7.2f}x "
        f"{loaded.percentile(50) / alone.percentile(50):7.2f}x {loaded.percentile(95) / alone.percentile(95):7.2f}x"
    )
    lines += ["", f"{'inside the retriever, p50 / p95 ms':<34} {'embed':>15} {'search':>15} {'total':>15}"]
    for label, calls in (("one client alone", alone), ("under load", loaded)):
        lines.append(
            f"{label:<34} "
            + " ".join(f"{percentile(v, 50):7.1f} /{percentile(v, 95):6.1f}" for v in calls.server_ms.values())
        )
    lines.append(
        f"answers without a chunk: {alone.empty + loaded.empty}; "
        f"query embeddings from the cache: {alone.cached + loaded.cached}"
    )
    if report.uploaders:  # none with --uploaders 0
        lines += ["", f"{'uploads':<34} {'calls':>7} {'errors':>7} {'docs/s':>8} {'p50 s':>8} {'p95 s':>8}"]
        for label, calls in (("upload (CreateDocument)", up.upload), ("process (ProcessDocument)", up.process)):
            lines.append(
                f"{label:<34} {calls.count:7d} {sum(calls.errors.values()):7d} {calls.per_second:8.2f} "
                f"{calls.percentile(50) / 1e3:8.2f} {calls.percentile(95) / 1e3:8.2f}"
            )
        lines.append(
            f"documents uploaded {len(up.uploaded)} (already stored: {up.already_existed}), "
            f"processed {len(up.processed)}, in the index {len(up.indexed)}; chunks embedded {up.embedded}, "
            f"from the cache {up.embeddings_cached}; strategies failed {len(up.failures)}"
        )
    errors = report.errors()
    lines += ["", "errors by status code: " + (", ".join(f"{code} {n}" for code, n in errors.most_common()) or "none")]
    lines += [
        "",
        f"{'memory (MB)':<12} {'RSS before':>10} {'RSS after':>10} {'peak RSS':>9} "
        f"{'heap before':>12} {'heap after':>11}",
    ]
    for name, before in report.memory_before.items():
        after = report.memory_after[name]
        lines.append(
            f"{name:<12} {before['VmRSS'] / 1024:10.0f} {after['VmRSS'] / 1024:10.0f} "
            f"{after['VmHWM'] / 1024:9.0f} {before['RssAnon'] / 1024:12.0f} {after['RssAnon'] / 1024:11.0f}"
        )
    if report.memory_samples:
        lines += ["", f"RSS (MB) every {report.memory_every:.0f} s of the load:"]
        lines += [
            f"{name:<12} " + " ".join(f"{s[name] / 1024:.0f}" for s in report.memory_samples)
            for name in report.memory_before
        ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clients", type=int, default=32, help="threads calling Retrieve")
    parser.add_argument("--uploaders", type=int, default=8, help="threads uploading and processing documents")
    parser.add_argument("--seconds", type=float, default=60.0, help="how long the clients and uploaders run")
    parser.add_argument("--alone-seconds", type=float, default=10.0, help="how long the baseline client runs")
    parser.add_argument("--upload-words", type=int, default=600, help="words per uploaded document")
    parser.add_argument(
        "--memory-every",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="also print every service's RSS this often during the load (0: before and after only)",
    )
    args = parser.parse_args()
    if args.clients < 1 or args.uploaders < 0 or args.seconds <= 0 or args.alone_seconds <= 0:
        parser.error("--clients needs 1 or more, --uploaders 0 or more, --seconds and --alone-seconds more than 0")
    print(
        f"load: {args.clients} clients x {args.seconds:.0f}s of Retrieve, {args.uploaders} uploading and "
        f"processing; baseline one client x {args.alone_seconds:.0f}s; {os.cpu_count()} cores",
        flush=True,
    )
    with tempfile.TemporaryDirectory(prefix="chunklab-load-") as folder, Stack(data_dir=Path(folder)) as stack:
        started = time.perf_counter()
        chunks = seed(stack.client())
        print(
            f"seeded {', '.join(f'{n} ({c} chunks)' for n, c in chunks.items())} in "
            f"{time.perf_counter() - started:.0f}s",
            flush=True,
        )
        report = run_load(
            stack,
            args.clients,
            args.uploaders,
            args.seconds,
            args.alone_seconds,
            args.upload_words,
            memory_every=args.memory_every,
        )
    print("\n" + table(report))
    if report.errors() or report.uploads.failures or len(report.uploads.indexed) < len(report.uploads.uploaded):
        raise SystemExit("the load run had errors or documents left unprocessed (see above)")


if __name__ == "__main__":
    main()
