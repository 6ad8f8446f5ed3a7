"""The size of an experiment's report at the 20-run scale (ADR 0047).

Builds a finished 20-run experiment in memory, as the evaluator stores it,
without any service: the chroma-general corpora and questions (a seeded
stand-in text when the shared data is absent), cut into character windows of
five sizes and four overlaps, each question's top 5 found by the words it
shares with each window (a stand-in for the embedding search: the report's
size depends on how many chunks are shown and how often the same ones come
back, not on how they were found), measured with the evaluator's own scoring.
Then renders the technical and the managerial views and prints their sizes,
in all and per run-question, with and without ±1 neighbours, and on
chroma-general the technical view's ratio to its size before ADR 0068.

    .venv/bin/python bench/report_size.py [--questions 276] [--data ../shared/data/chroma-general]
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import re
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from google.protobuf.timestamp_pb2 import Timestamp  # noqa: E402

from chunklab.ids import ChunkIds  # noqa: E402
from chunklab.v1 import common_pb2, evaluator_pb2  # noqa: E402
from services.evaluator.experiments.summary import summarize  # noqa: E402
from services.evaluator.judging.scoring import retrieval_metrics  # noqa: E402
from services.evaluator.reports import report  # noqa: E402

DATA = REPO.parent / "shared" / "data" / "chroma-general"
SIZES = (400, 800, 1200, 1600, 2000)  # characters, about 100 to 500 tokens
OVERLAPS = (0.0, 0.1, 0.2, 0.4)
TOP_K = 5
WORD = re.compile(r"[a-z]{4,}")
# The technical view's bytes on chroma-general before ADR 0068 (main at 97b1091, the ADR 0047 layout:
# a line and a preview per hit, each chunk's text once as a card), by neighbours: the "before" of the ratio.
BEFORE = {0: 21_396_961, 1: 36_371_200}


def corpus(questions: int, data: Path = DATA) -> tuple[dict[str, str], list[evaluator_pb2.Question]]:
    """The documents by id and the questions with their references."""
    if (data / "questions.csv").is_file():
        texts = {p.stem: p.read_text(encoding="utf-8") for p in sorted((data / "corpora").glob("*.md"))}
        with open(data / "questions.csv", newline="", encoding="utf-8") as file:
            rows = list(csv.DictReader(file))
    else:  # a seeded stand-in of the same shape
        rng = random.Random(7)
        words = [f"{w}{i}" for i, w in enumerate(("storm", "harbour", "ledger", "beacon", "tariff")) for _ in range(60)]
        texts = {f"doc{d}": " ".join(rng.choice(words) for _ in range(30_000)) for d in range(3)}
        rows = []
        for i in range(276):
            doc = f"doc{i % 3}"
            start = rng.randrange(0, len(texts[doc]) - 300)
            rows.append(
                {
                    "question": " ".join(texts[doc][start : start + 200].split()[:8]),
                    "corpus_id": doc,
                    "references": json.dumps([{"start_index": start, "end_index": start + 150}]),
                }
            )
    out = []
    for i, row in enumerate(rows[:questions]):
        refs = [
            evaluator_pb2.Reference(
                document_id=row["corpus_id"],
                start_char=r["start_index"],
                end_char=r["end_index"],
                content=texts[row["corpus_id"]][r["start_index"] : r["end_index"]],
            )
            for r in json.loads(row["references"])
        ]
        out.append(evaluator_pb2.Question(question_id=f"q{i}", text=row["question"], references=refs))
    return texts, out


def windows(texts: dict[str, str], size: int, overlap: float, config_id: str) -> dict[str, list[common_pb2.Chunk]]:
    step = max(1, int(size * (1 - overlap)))
    chunks = {}
    for doc, text in texts.items():
        chunk_id = ChunkIds(doc, "fixed_size", config_id)
        chunks[doc] = [
            common_pb2.Chunk(
                chunk_id=chunk_id(n),
                document_id=doc,
                document_name=f"{doc}.md",
                strategy="fixed_size",
                config_id=config_id,
                chunk_index=n,
                start_char=start,
                end_char=min(len(text), start + size),
                content=text[start : start + size],
                token_count=len(text[start : start + size]) // 4,
                role=common_pb2.CHUNK_ROLE_CHUNK,
            )
            for n, start in enumerate(range(0, len(text), step))
        ]
    return chunks


def result(
    question: evaluator_pb2.Question,
    run_key: str,
    chunks: list[common_pb2.Chunk],
    words: list[set[str]],
    neighbours: int,
) -> evaluator_pb2.QuestionResult:
    asked = set(WORD.findall(question.text.lower()))
    ranked = sorted(range(len(chunks)), key=lambda i: (-len(asked & words[i]), i))[:TOP_K]
    tree = common_pb2.ExpansionTree()
    sent: dict[int, common_pb2.RetrievedChunk] = {}
    for rank, i in enumerate(ranked, 1):
        hit = common_pb2.RetrievedChunk(
            chunk=chunks[i],
            label=common_pb2.CHUNK_LABEL_HIT,
            rank=rank,
            score=len(asked & words[i]) / max(1, len(asked)),
        )
        node = tree.hits.add(hit=hit)
        sent[i] = hit
        for j in range(max(0, i - neighbours), min(len(chunks), i + neighbours + 1)):
            if j == i:
                continue
            near = common_pb2.RetrievedChunk(chunk=chunks[j], label=common_pb2.CHUNK_LABEL_NEIGHBOR)
            (node.neighbors_prev if j < i else node.neighbors_next).append(near)
            sent.setdefault(j, near)
    retrieved = [sent[i] for i in sorted(sent)]
    return evaluator_pb2.QuestionResult(
        question_id=question.question_id,
        question=question.text,
        run_key=run_key,
        retrieved_chunks=retrieved,
        expansion_tree=tree,
        metrics=retrieval_metrics(retrieved, tree, question.references, TOP_K),
    )


def experiment(texts, questions, neighbours: int):
    runs, results = [], []
    for size in SIZES:
        for overlap in OVERLAPS:
            key = f"fixed_size[chunk_size={size // 4},chunk_overlap={int(size * overlap) // 4}]"
            config_id = f"cfg{size}o{int(overlap * 100)}"
            runs.append(
                evaluator_pb2.ExperimentRun(
                    run_key=key,
                    config_id=config_id,
                    questions_total=len(questions),
                    spec=common_pb2.StrategySpec(name="fixed_size"),
                    expansion=common_pb2.EXPANSION_KIND_NEIGHBORS,
                )
            )
            by_doc = windows(texts, size, overlap, config_id)
            words = {doc: [set(WORD.findall(c.content.lower())) for c in chunks] for doc, chunks in by_doc.items()}
            for q in questions:
                doc = q.references[0].document_id
                results.append(result(q, key, by_doc[doc], words[doc], neighbours))
    config = evaluator_pb2.ExperimentConfig(
        name="20 runs",
        question_set_id="qs",
        retrieval_only=True,
        retrieval=common_pb2.RetrievalOptions(top_k=TOP_K, neighbor_prev=neighbours, neighbor_next=neighbours),
        strategies=[evaluator_pb2.StrategyGrid(strategy="fixed_size")],
    )
    exp = evaluator_pb2.Experiment(
        experiment_id="e-bench-report",
        config=config,
        state=evaluator_pb2.EXPERIMENT_STATE_SUCCEEDED,
        runs=runs,
        provenance=evaluator_pb2.ExperimentProvenance(embedding_model="stand-in", judge_model="none"),
        created_at=Timestamp(seconds=1_800_000_000),
        questions_total=len(runs) * len(questions),
    )
    summarize(exp, results)
    question_set = evaluator_pb2.QuestionSet(
        question_set_id="qs", name="questions.csv", questions=questions, question_count=len(questions)
    )
    return exp, question_set, results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=int, default=276)
    parser.add_argument("--data", type=Path, default=DATA, help="a folder with corpora/*.md and questions.csv")
    args = parser.parse_args()
    texts, questions = corpus(args.questions, args.data)
    source = args.data.name if (args.data / "questions.csv").is_file() else "a seeded stand-in corpus"
    print(
        f"{len(SIZES) * len(OVERLAPS)} runs x {len(questions)} questions on {source} "
        f"({sum(map(len, texts.values())):,} characters), top_k {TOP_K}"
    )
    print(
        f"{'neighbours':<11} {'view':<11} {'bytes':>13} {'per run-question':>17} {'render s':>9} "
        f"{'before (0047)':>14} {'ratio':>6}"
    )
    for neighbours in (0, 1):
        exp, question_set, results = experiment(texts, questions, neighbours)
        for name, view in (
            ("technical", evaluator_pb2.REPORT_VIEW_TECHNICAL),
            ("managerial", evaluator_pb2.REPORT_VIEW_MANAGERIAL),
        ):
            started = time.perf_counter()
            size = len(report.render(exp, question_set, results, view).encode())
            seconds = time.perf_counter() - started
            before = (
                BEFORE[neighbours] if name == "technical" and (source, len(questions)) == (DATA.name, 276) else None
            )
            ratio = f"{before:>14,} {before / size:>5.1f}x" if before else ""
            print(f"±{neighbours:<10} {name:<11} {size:>13,} {size / len(results):>17,.0f} {seconds:>9.1f} {ratio}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
