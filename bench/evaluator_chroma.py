"""Recall, precision and IoU per strategy on the shared chroma-general set.

The closing note's table: every strategy the chunker offers, at its default
knobs, the offline embedding model, top_k 5, one index pooling the three
corpora (each question searches the set's documents), no neighbours.
Everything goes through gRPC, as the command line does: the corpora are
uploaded, questions.csv imported as it is, one retrieval-only experiment
per strategy. Strategies that need an LLM are reported as not measurable
when no LLM endpoint is configured (CHUNKLAB_LLM_BASE_URL).

    .venv/bin/python bench/evaluator_chroma.py            # starts its own stack in a temp folder
    .venv/bin/python bench/evaluator_chroma.py --running  # uses the stack at the configured addresses
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from chunklab.client import ChunkLab  # noqa: E402
from chunklab.settings import Settings  # noqa: E402
from chunklab.v1 import common_pb2, evaluator_pb2  # noqa: E402
from chunklab_app.stack import Stack  # noqa: E402
from chunklab_app.terminal import Progress, follow  # noqa: E402

DATA = REPO.parent / "shared" / "data" / "chroma-general"
TOP_K = 5


def measure(lab: ChunkLab, only: list[str]) -> list[dict]:
    for corpus in sorted((DATA / "corpora").glob("*.md")):
        lab.upload_document(corpus)
    question_set = lab.import_question_set(DATA / "questions.csv")
    infos = lab.list_strategies()
    has_llm = bool(os.environ.get("CHUNKLAB_LLM_BASE_URL"))
    rows = []
    for info in infos:
        if only and info.name not in only:
            continue
        if info.requires_llm and not has_llm:
            rows.append({"strategy": info.name, "note": "not measurable without an LLM (no CHUNKLAB_LLM_BASE_URL)"})
            continue
        config = evaluator_pb2.ExperimentConfig(
            name=f"chroma-general {info.name} defaults", question_set_id=question_set.question_set_id,
            strategies=[evaluator_pb2.StrategyGrid(strategy=info.name)],
            retrieval=common_pb2.RetrievalOptions(top_k=TOP_K), retrieval_only=True,
        )
        started = time.perf_counter()
        print(f"{info.name} ...", file=sys.stderr, flush=True)
        experiment = follow(lab.run_experiment(config), Progress()).experiment
        seconds = time.perf_counter() - started
        run = experiment.runs[0] if experiment and experiment.runs else None
        if run is None or run.error or not run.questions_done:
            rows.append({"strategy": info.name, "note": f"failed: {(run.error if run else '') or experiment.error}"})
            continue
        full = lab.get_experiment(experiment.experiment_id)
        values = {k: np.array([getattr(r.metrics, k) for r in full.results if r.metrics.labelled])
                  for k in ("recall", "precision", "iou", "recall_hits", "iou_hits")}
        rows.append({
            "strategy": info.name, "questions": len(values["recall"]),
            **{k: (float(v.mean()), float(v.std())) for k, v in values.items()},
            "tokens": run.mean_metrics.tokens_sent, "chunks": run.chunk_count,
            "processing_s": run.processing_seconds, "seconds": seconds,
        })
    return rows


def table(rows: list[dict]) -> str:
    lines = [
        f"chroma-general (276 questions, 3 corpora pooled), all-MiniLM-L6-v2, top_k {TOP_K}, default knobs, "
        "characters counted as in the Chroma report (mean ± population std over questions)",
        f"{'strategy':<28} {'recall':>15} {'precision':>13} {'IoU':>13} {'recall hits':>12} {'IoU hits':>9} "
        f"{'tokens/q':>9} {'chunks':>7} {'process s':>9}",
    ]
    for row in rows:
        if "note" in row:
            lines.append(f"{row['strategy']:<28} {row['note']}")
            continue
        pm = lambda k: f"{100 * row[k][0]:5.1f} ± {100 * row[k][1]:4.1f}%"  # noqa: E731
        lines.append(
            f"{row['strategy']:<28} {pm('recall'):>15} {pm('precision'):>13} {pm('iou'):>13} "
            f"{100 * row['recall_hits'][0]:11.1f}% {100 * row['iou_hits'][0]:8.2f}% {row['tokens']:>9,} "
            f"{row['chunks']:>7} {row['processing_s']:>9.1f}"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--running", action="store_true", help="use the running stack at the configured addresses")
    parser.add_argument("--strategy", action="append", help="only these strategies (repeatable)")
    args = parser.parse_args()
    settings = Settings()
    if args.running:
        print(table(measure(ChunkLab(settings), args.strategy or [])))
        return 0
    with tempfile.TemporaryDirectory(prefix="chunklab-bench-") as folder:
        with Stack(data_dir=Path(folder)) as stack:
            print(table(measure(stack.client(settings), args.strategy or [])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
