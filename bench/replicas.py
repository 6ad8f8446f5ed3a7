"""Throughput with one replica against two, side by side in one run (ADR 0065).

One stack (retriever, ingest, chunker, evaluator as processes on loopback)
plus a second chunker and a second evaluator. The same client code calls
them two ways, in turn, round after round: through one replica's address,
and through both (an `ipv4:` list, round robin). Chunker: ProcessDocument
(fixed_size 256, all-MiniLM-L6-v2) of documents cut from the chroma-general
corpora, --concurrency calls at a time, every round's text tagged afresh so
that no embedding comes from the cache. Evaluator: extractive Answer calls
(retrieve, then embed the retrieved sentences), --concurrency at a time.
Prints documents (answers) per second, the best of --rounds for each way,
the ratio, the cores and the load average before and after (each way goes
first in every other round): on a machine
shared with others, two replicas can only use cores that are free.

    .venv/bin/python bench/replicas.py [--documents 12] [--answers 40] [--rounds 3] [--concurrency 4]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from chunklab.client import ChunkLab
from chunklab.knobs import to_spec
from chunklab.v1 import common_pb2, evaluator_pb2
from chunklab_app.stack import Stack, wait_serving

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "chroma-general" / "corpora"
SAMPLES = Path(__file__).resolve().parent.parent / "samples"
SPEC = to_spec("fixed_size", {"chunk_size": 256})
QUESTIONS = [
    "What did the president say about the economy?",
    "Who won the match?",
    "What is the capital mentioned?",
    "When was it founded?",
    "What happened next?",
]


def paragraphs() -> list[str]:
    folder = DATA if DATA.is_dir() else SAMPLES
    return [
        p for path in sorted(folder.glob("*.md")) for p in path.read_text(encoding="utf-8").split("\n\n") if p.strip()
    ]


def documents(count: int, tag: str, source: list[str], piece_bytes: int = 8000) -> list[tuple[str, str]]:
    """`count` documents of about piece_bytes; every paragraph carries `tag`, so no chunk repeats another round's."""
    out, current, size, position = [], [], 0, 0
    while len(out) < count:
        paragraph = f"[{tag}] {source[position % len(source)]}"
        position += 1
        current.append(paragraph)
        size += len(paragraph.encode()) + 2
        if size >= piece_bytes:
            out.append((f"{tag}-{len(out):03d}.md", "\n\n".join(current)))
            current, size = [], 0
    return out


def timed(calls: list, concurrency: int) -> float:
    started = time.perf_counter()
    with ThreadPoolExecutor(concurrency) as pool:
        list(pool.map(lambda call: call(), calls))
    return time.perf_counter() - started


def answer_call(lab: ChunkLab, question: str):
    request = evaluator_pb2.AnswerRequest(
        question=question, retrieval=common_pb2.RetrievalOptions(strategy="fixed_size", top_k=5)
    )
    return lambda: list(lab.answer(request))


def load_average() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--documents", type=int, default=12, help="documents processed per way and round")
    parser.add_argument("--answers", type=int, default=40, help="Answer calls per way and round (0: no evaluator rows)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=4)
    args = parser.parse_args()
    print(f"{os.cpu_count()} cores; load average (1, 5, 15 min) before: {load_average()}", flush=True)
    source = paragraphs()
    with tempfile.TemporaryDirectory(prefix="chunklab-replicas-") as tmp:
        stack = Stack(data_dir=Path(tmp) / "stack", extra_env={"CHUNKLAB_BULK_WORKERS": "0"})
        try:
            stack.start(timeout=300)
            second = {}
            for name, module in (("chunker", "services.chunker"), ("evaluator", "services.evaluator")):
                env = stack.env()
                env[f"CHUNKLAB_{name.upper()}_ADDRESS"] = "127.0.0.1:0"
                second[name] = stack._spawn(f"{name}-2", module, env, "listening on", 300)
                wait_serving(second[name], 300)
            one = stack.client()
            both = ChunkLab.at(
                {**stack.addresses, **{n: f"{stack.addresses[n]},{a}" for n, a in second.items()}}, stack.settings()
            )
            ways = {"1 replica": one, "2 replicas": both}
            warm = documents(4, "warm", source, 2000)  # models load on first use in every replica
            for lab in ways.values():
                for name, text in warm:
                    lab.process(lab.upload_document(text.encode(), name=name).document.document_id, [SPEC])
                for question in QUESTIONS:
                    answer_call(lab, question)()
            best: dict[tuple[str, str], float] = {}
            for round_number in range(args.rounds):
                order = list(ways.items())  # each way goes first in every other round
                for way, lab in order if round_number % 2 == 0 else order[::-1]:
                    batch = documents(args.documents, f"r{round_number}-{way[0]}", source)
                    ids = [one.upload_document(text.encode(), name=name).document.document_id for name, text in batch]
                    seconds = timed([lambda d=d: lab.process(d, [SPEC]) for d in ids], args.concurrency)
                    best[("chunker", way)] = min(best.get(("chunker", way), seconds), seconds)
                    print(
                        f"  round {round_number + 1}, chunker, {way}: {args.documents / seconds:.2f} docs/s", flush=True
                    )
                    if args.answers:
                        calls = [answer_call(lab, QUESTIONS[i % len(QUESTIONS)]) for i in range(args.answers)]
                        seconds = timed(calls, args.concurrency)
                        best[("evaluator", way)] = min(best.get(("evaluator", way), seconds), seconds)
                        print(
                            f"  round {round_number + 1}, evaluator, {way}: {args.answers / seconds:.2f} answers/s",
                            flush=True,
                        )
        finally:
            stack.stop()
    print(f"\nbest of {args.rounds} rounds, {args.concurrency} calls at a time; load average after: {load_average()}")
    print(f"{'service':<10} {'work':<26} {'1 replica':>10} {'2 replicas':>11} {'ratio':>7}")
    for service, work, count, unit in (
        ("chunker", f"ProcessDocument, {args.documents} docs", args.documents, "docs/s"),
        ("evaluator", f"Answer, {args.answers} calls", args.answers, "ans/s"),
    ):
        if (service, "1 replica") not in best:
            continue
        single, double = (count / best[(service, way)] for way in ways)
        print(f"{service:<10} {work:<26} {single:10.2f} {double:11.2f} {double / single:6.2f}x  ({unit})")


if __name__ == "__main__":
    main()
