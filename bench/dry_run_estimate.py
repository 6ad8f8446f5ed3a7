"""The dry run's time against the real run's, side by side, on the sample.

A fresh stack on an empty temporary data folder loads the sample as `make up` does
(chunklab_app.sample_loader: both documents processed with every strategy that needs
no LLM, the two sample experiments run). Then, for each experiment below in turn, a
dry run gives the estimate and the real run its wall time, and the ratio is printed:

- "new knobs": strategies at knob values the sample has not processed, so each run
  processes its index sets (chunking, embedding, indexing) before its questions;
- "more new knobs": the same kind of work again, now estimated from the first's
  measured speeds.

Target (issue 27): each estimate within a factor of two of its real run.

    .venv/bin/python bench/dry_run_estimate.py [--retrieval-only]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from chunklab.client import experiment_outcome  # noqa: E402
from chunklab.v1 import common_pb2, evaluator_pb2  # noqa: E402
from chunklab_app.sample_loader import load_sample  # noqa: E402
from chunklab_app.stack import Stack  # noqa: E402


def knob(value: int) -> common_pb2.KnobValue:
    return common_pb2.KnobValue(int_value=value)


def grid(strategy: str, **axes: list[int]) -> evaluator_pb2.StrategyGrid:
    return evaluator_pb2.StrategyGrid(
        strategy=strategy,
        grid=[evaluator_pb2.KnobGrid(knob=name, values=[knob(v) for v in values]) for name, values in axes.items()],
    )


EXPERIMENTS = {
    "new knobs": [
        grid("fixed_size", chunk_size=[128, 384]),
        grid("recursive", chunk_size=[256]),
        grid("semantic", min_sentences=[2]),
    ],
    "more new knobs": [
        grid("fixed_size", chunk_size=[192, 768]),
        grid("recursive", chunk_size=[384]),
        grid("semantic", min_sentences=[4]),
    ],
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--retrieval-only", action="store_true", help="no answers (the sample's own experiments)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as data, Stack(data_dir=Path(data)) as stack:
        client = stack.client()
        started = time.perf_counter()
        sample = load_sample(client)
        print(f"sample loaded in {time.perf_counter() - started:.1f} s")
        print(f"{'experiment':<16} {'sets':>9} {'estimate s':>11} {'real s':>8} {'ratio':>6}  (processing / questions)")
        for name, strategies in EXPERIMENTS.items():
            config = evaluator_pb2.ExperimentConfig(
                name=name,
                question_set_id=sample.question_set_id,
                strategies=strategies,
                retrieval_only=args.retrieval_only,
                retrieval=common_pb2.RetrievalOptions(top_k=5),
            )
            estimate = experiment_outcome(client.run_experiment(config, dry_run=True)).estimate
            started = time.perf_counter()
            done = experiment_outcome(client.run_experiment(config)).experiment
            real = time.perf_counter() - started
            processing = sum(r.processing_seconds for r in done.runs)
            print(
                f"{name:<16} {estimate.index_sets_to_process:>4}+{estimate.index_sets_reused:<4} "
                f"{estimate.estimated_seconds:>11.1f} {real:>8.1f} {estimate.estimated_seconds / real:>6.2f}  "
                f"(estimated {estimate.processing_seconds:.1f} / {estimate.questions_seconds:.1f}; "
                f"chunker took {processing:.1f} s; {evaluator_pb2.ExperimentState.Name(done.state)})"
            )
            for warning in estimate.warnings:
                print(f"  warning: {warning}")


if __name__ == "__main__":
    main()
