"""The whole chroma-general experiment from an empty data folder, phase by phase.

A fresh stack (the four services, started as tests/e2e start them) on an
empty temporary data folder, so nothing is cached: the three corpora are
uploaded and parsed, the questions imported, and one experiment runs every
strategy that needs no LLM at its defaults (dense retrieval, top 5, the
pooled protocol of bench/benchmarks_page.py). Printed and stored
(docs/benchmarks/cold_experiment.json, rendered by bench/benchmarks_page.py):

- parse: uploading and parsing the corpora, and importing the questions
  (locating their references in the parsed text);
- chunk, embed, index: the chunker's own phase timings, summed over every run
  and document (ProcessingPhases: embedding calls a strategy makes while it
  chunks count as embed);
- query: the rest of the experiment's wall time (the retriever answering each
  question, scoring, storing results);
- total: from the first upload to the experiment's end. Starting the stack
  (importing torch and loading the model in each service) is printed beside it.

Each embedding model named by --model runs in a stack of its own, one after
the other in this one run (side by side), with the load average beside it.
Target (issue 17): total under 2 minutes on this machine.

    .venv/bin/python bench/cold_experiment.py [--model all-MiniLM-L6-v2-onnx-int8 --model all-MiniLM-L6-v2]

(without --model: the int8 ONNX model, then torch; the first model is the one the others are
compared with).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from benchmarks_page import COLD, DATA, FIGURES, TOP_K, experiment, grids, machine  # noqa: E402

from chunklab.embeddings import onnx_export  # noqa: E402
from chunklab.settings import Settings  # noqa: E402
from chunklab.v1 import common_pb2  # noqa: E402
from chunklab_app.stack import Stack  # noqa: E402

PHASES = ("chunk", "embed", "index")
COMMAND = ".venv/bin/python bench/cold_experiment.py"
MODELS = ("all-MiniLM-L6-v2-onnx-int8", "all-MiniLM-L6-v2")


def cpu_seconds(stack: Stack) -> dict[str, float]:
    """Each service process's CPU time so far (user + system, all its threads): the work done,
    whatever share of the cores the shared machine gave it."""
    ticks = os.sysconf("SC_CLK_TCK")
    seconds = {}
    for name, process in stack.processes.items():
        fields = Path(f"/proc/{process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        seconds[name] = (int(fields[11]) + int(fields[12])) / ticks  # utime, stime
    return seconds


def cold_run(model: str) -> dict:
    """One cold experiment with `model` as the stack's embedding model: its breakdown in seconds."""
    with tempfile.TemporaryDirectory(prefix="chunklab-cold-") as folder:
        load_before = os.getloadavg()
        started = time.perf_counter()
        with Stack(data_dir=Path(folder), extra_env={"CHUNKLAB_EMBEDDING_MODEL": model}) as stack:
            stack_s = time.perf_counter() - started
            lab = stack.client(Settings())
            began, cpu_before = time.perf_counter(), cpu_seconds(stack)
            for path in sorted((DATA / "corpora").glob("*.md")):
                lab.upload_document(path)
            question_set = lab.import_question_set(DATA / "questions.csv")
            parse_s = time.perf_counter() - began
            cells, skipped = grids(lab.list_strategies(), [])
            cells = [cell for cell in cells if cell[0] == "defaults"]
            runs, _, experiment_s = experiment(
                lab, question_set.question_set_id, f"cold, {model}", cells, common_pb2.RetrievalOptions(top_k=TOP_K)
            )
            total_s = time.perf_counter() - began
            cpu = {name: used - cpu_before[name] for name, used in cpu_seconds(stack).items()}
    failed = [f"{run.spec.name}: {run.error}" for run in runs if run.error]
    strategies = [
        {
            "strategy": run.spec.name,
            "chunks": run.chunk_count,
            "processing": run.processing_seconds,
            **{p: getattr(run.processing_phases, f"{p}_seconds") for p in PHASES},
        }
        for run in runs
    ]
    phases = {"parse": parse_s, **{p: sum(s[p] for s in strategies) for p in PHASES}}
    processing = sum(run.processing_seconds for run in runs)
    # What processing spent outside its three phases (waiting for the chunker thread, events) counts as index.
    phases["index"] += max(0.0, processing - sum(phases[p] for p in PHASES))
    phases["query"] = max(0.0, experiment_s - processing)
    return {
        "model": model,
        "total_s": total_s,
        "cpu_s": sum(cpu.values()),
        "cpu_by_service": cpu,
        "stack_s": stack_s,
        "phases": phases,
        "strategies": strategies,
        "skipped": [row["strategy"] for row in skipped],
        "failed": failed,
        "load": [round(x, 1) for x in (*load_before, *os.getloadavg())],
    }


def report(result: dict) -> str:
    phases = "  ".join(f"{name} {seconds:6.1f}s" for name, seconds in result["phases"].items())
    services = ", ".join(f"{name} {seconds:.1f}" for name, seconds in result["cpu_by_service"].items())
    lines = [
        f"{result['model']:<28} total {result['total_s']:6.1f}s  ({phases})  stack start {result['stack_s']:.1f}s  "
        f"load before {result['load'][0]:.1f}, after {result['load'][3]:.1f}",
        f"    CPU seconds of the services over the experiment: {result['cpu_s']:.1f} ({services})",
    ]
    for row in result["strategies"]:
        lines.append(
            f"    {row['strategy']:<28} {row['chunks']:>5} chunks  chunk {row['chunk']:5.1f}s  "
            f"embed {row['embed']:5.1f}s  index {row['index']:5.1f}s"
        )
    lines += [f"    FAILED {failure}" for failure in result["failed"]]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--model", action="append", help=f"embedding model of a stack (repeatable; default: {' then '.join(MODELS)})"
    )
    args = parser.parse_args()
    models = args.model or list(MODELS)
    if any("onnx" in model for model in models):
        onnx_export.ensure_export()
    results = []
    for model in models:
        results.append(cold_run(model))
        print(report(results[-1]), flush=True)
    if len(results) > 1:
        first = results[0]
        for other in results[1:]:
            print(
                f"{first['model']} is {other['total_s'] / first['total_s']:.2f}x as fast as {other['model']} "
                f"(total, wall), {other['cpu_s'] / first['cpu_s']:.2f}x (CPU seconds); embed "
                f"{other['phases']['embed'] / max(first['phases']['embed'], 1e-9):.2f}x (wall)"
            )
    FIGURES.mkdir(parents=True, exist_ok=True)
    COLD.write_text(json.dumps({"runs": results, "machine": machine(), "command": COMMAND}, indent=1) + "\n")
    print(f"wrote {COLD.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
