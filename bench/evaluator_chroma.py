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
    .venv/bin/python bench/evaluator_chroma.py --config fixed_size:chunk_size=250,chunk_overlap=125 \
        --config cluster_parent_child --hybrid          # chosen configurations, dense then hybrid
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
from chunklab.knobs import Knob, knob_value  # noqa: E402
from chunklab.settings import Settings  # noqa: E402
from chunklab.v1 import common_pb2, evaluator_pb2  # noqa: E402
from chunklab_app.cli.terminal import Progress, follow  # noqa: E402
from chunklab_app.stack import Stack  # noqa: E402

DATA = REPO.parent / "shared" / "data" / "chroma-general"
TOP_K = 5


def chosen_grids(infos, configs: list[str]) -> list[evaluator_pb2.StrategyGrid]:
    """`strategy:knob=value,knob=value` (knobs not named at their defaults) as one-run grids."""
    by_name = {info.name: info for info in infos}
    grids = []
    for config in configs:
        name, _, settings = config.partition(":")
        if name not in by_name:
            raise SystemExit(f"--config {config}: unknown strategy {name!r}; available: {', '.join(by_name)}")
        knobs = {k.name: Knob.from_proto(k) for k in by_name[name].knobs}
        grid = evaluator_pb2.StrategyGrid(strategy=name)
        for setting in filter(None, settings.split(",")):
            knob, _, value = setting.partition("=")
            if knob not in knobs:
                raise SystemExit(f"--config {config}: {name} has no knob {knob!r}; its knobs are {', '.join(knobs)}")
            grid.grid.add(knob=knob, values=[knob_value(knobs[knob].parse(name, value))])
        grids.append(grid)
    return grids


def measure(lab: ChunkLab, only: list[str], configs: list[str] = (), hybrid: bool = False) -> list[dict]:
    for corpus in sorted((DATA / "corpora").glob("*.md")):
        lab.upload_document(corpus)
    question_set = lab.import_question_set(DATA / "questions.csv")
    infos = lab.list_strategies()
    has_llm = bool(os.environ.get("CHUNKLAB_LLM_BASE_URL"))
    needs_llm = {info.name for info in infos if info.requires_llm}
    grids = (
        chosen_grids(infos, configs)
        if configs
        else [evaluator_pb2.StrategyGrid(strategy=info.name) for info in infos if not only or info.name in only]
    )
    rows = []
    for grid, fused in [(g, f) for g in grids for f in ((False, True) if hybrid else (False,))]:
        label = grid.strategy
        if grid.strategy in needs_llm and not has_llm:
            rows.append({"strategy": label, "note": "not measurable without an LLM (no CHUNKLAB_LLM_BASE_URL)"})
            continue
        config = evaluator_pb2.ExperimentConfig(
            name=f"chroma-general {grid.strategy}",
            question_set_id=question_set.question_set_id,
            strategies=[grid],
            retrieval=common_pb2.RetrievalOptions(top_k=TOP_K, hybrid=fused),
            retrieval_only=True,
        )
        started = time.perf_counter()
        print(f"{label} ...", file=sys.stderr, flush=True)
        experiment = follow(lab.run_experiment(config), Progress()).experiment
        seconds = time.perf_counter() - started
        run = experiment.runs[0] if experiment and experiment.runs else None
        if run is None or run.error or not run.questions_done:
            rows.append({"strategy": label, "note": f"failed: {(run.error if run else '') or experiment.error}"})
            continue
        label = run.run_key + (" hybrid" if fused else "")
        full = lab.get_experiment(experiment.experiment_id)
        values = {
            k: np.array([getattr(r.metrics, k) for r in full.results if r.metrics.labelled])
            for k in ("recall", "precision", "iou", "recall_hits", "iou_hits")
        }
        rows.append(
            {
                "strategy": label,
                "questions": len(values["recall"]),
                **{k: (float(v.mean()), float(v.std())) for k, v in values.items()},
                "tokens": run.mean_metrics.tokens_sent,
                "chunks": run.chunk_count,
                "processing_s": run.processing_seconds,
                "seconds": seconds,
            }
        )
    return rows


def table(rows: list[dict]) -> str:
    lines = [
        f"chroma-general (276 questions, 3 corpora pooled), all-MiniLM-L6-v2, top_k {TOP_K}, knobs as named (else defaults), "
        "characters counted as in the Chroma report (mean ± population std over questions)",
        f"{'configuration':<62} {'recall':>15} {'precision':>13} {'IoU':>13} {'recall hits':>12} {'IoU hits':>9} "
        f"{'tokens/q':>9} {'chunks':>7} {'process s':>9}",
    ]
    for row in rows:
        if "note" in row:
            lines.append(f"{row['strategy']:<62} {row['note']}")
            continue
        pm = lambda k: f"{100 * row[k][0]:5.1f} ± {100 * row[k][1]:4.1f}%"  # noqa: E731
        lines.append(
            f"{row['strategy']:<62} {pm('recall'):>15} {pm('precision'):>13} {pm('iou'):>13} "
            f"{100 * row['recall_hits'][0]:11.1f}% {100 * row['iou_hits'][0]:8.2f}% {row['tokens']:>9,} "
            f"{row['chunks']:>7} {row['processing_s']:>9.1f}"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--running", action="store_true", help="use the running stack at the configured addresses")
    parser.add_argument("--strategy", action="append", help="only these strategies, at their defaults (repeatable)")
    parser.add_argument(
        "--config",
        action="append",
        metavar="STRATEGY:KNOB=VALUE,...",
        help="a configuration to run instead of every default (repeatable), e.g. recursive:chunk_size=200,chunk_overlap=0",
    )
    parser.add_argument(
        "--hybrid", action="store_true", help="run each configuration again with hybrid (BM25 + dense) retrieval"
    )
    args = parser.parse_args()
    settings = Settings()
    options = (args.strategy or [], args.config or [], args.hybrid)
    if args.running:
        print(table(measure(ChunkLab(settings), *options)))
        return 0
    with tempfile.TemporaryDirectory(prefix="chunklab-bench-") as folder:
        with Stack(data_dir=Path(folder), extra_env={"CHUNKLAB_EMBEDDING_MODEL": "all-MiniLM-L6-v2"}) as stack:
            print(table(measure(stack.client(settings), *options)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
