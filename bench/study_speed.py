"""The recommended configuration from an empty data folder: before and after, in one run, ratios printed.

Each side is a fresh stack (the four services) on an empty temporary data folder, so nothing is
cached: the chroma-general corpora are uploaded and parsed, the questions imported, and one
experiment runs the recommended configuration (chunklab_app/recommended.py: its strategies at
their defaults, hybrid retrieval when it says so, top 5). "before" runs the services of an older
checkout of this repository (`git worktree`-free: `git archive REV` into a temporary folder), "after"
this tree's; the two sides take turns (--rounds), each side's best round is kept, and the ratios
are printed with the recall, IoU and tokens each side scored (a speed-up that costs recall shows), how
many questions retrieved exactly what "before" retrieved (the same chunks, scores to 6 places, tokens sent:
a cut that should change nothing is checked question by question), and each service's CPU seconds over
the uploads, the processing and the questions (where the work is, whatever the load did to wall time).
Only the three chroma-general corpora ship here (0.21 MB, not the 1.7 MB of issue 29's five corpora).

    .venv/bin/python bench/study_speed.py [--before main] [--rounds 1] [--variant context_vectors=late]

Target (issue 29): the recommended configuration at least 3x faster from an empty folder. The figures
(each side's best round, every round's total, the ratios) are written to docs/benchmarks/study_speed.json,
which bench/benchmarks_page.py puts on the benchmarks page.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import numpy as np  # noqa: E402
from benchmarks_page import DATA, FIGURES, TOP_K, experiment, machine  # noqa: E402
from cold_experiment import cpu_seconds  # noqa: E402

from chunklab.embeddings import onnx_export  # noqa: E402
from chunklab.settings import Settings  # noqa: E402
from chunklab.v1 import common_pb2, evaluator_pb2  # noqa: E402
from chunklab_app import recommended  # noqa: E402
from chunklab_app.stack import Stack  # noqa: E402
from services.chunker.strategies import REGISTRY  # noqa: E402

PHASES = ("chunk", "embed", "index")
RESULTS = FIGURES / "study_speed.json"
COMMAND = ".venv/bin/python bench/study_speed.py --before a7a568b --rounds 3"


def checkout(rev: str, folder: Path) -> Path:
    """The tree of `rev` unpacked into folder (git archive: no worktree to clean up)."""
    archive = subprocess.run(["git", "-C", str(REPO), "archive", rev], check=True, capture_output=True).stdout
    target = folder / "source"
    target.mkdir()
    with tempfile.TemporaryFile() as tar_file:
        tar_file.write(archive)
        tar_file.seek(0)
        with tarfile.open(fileobj=tar_file) as tar:
            tar.extractall(target, filter="data")
    return target


def knob_value(text: str) -> common_pb2.KnobValue:
    return common_pb2.KnobValue(int_value=int(text)) if text.isdigit() else common_pb2.KnobValue(string_value=text)


def cells(variant: dict[str, str]) -> list[tuple[str, str, evaluator_pb2.StrategyGrid]]:
    """The recommended strategies at their defaults, with the variant's knobs set where a strategy has them."""
    infos = {info.name: {k.name for k in info.knobs} for info in REGISTRY.infos()}
    return [
        (
            "recommended",
            name,
            evaluator_pb2.StrategyGrid(
                strategy=name,
                grid=[
                    evaluator_pb2.KnobGrid(knob=k, values=[knob_value(v)])
                    for k, v in variant.items()
                    if k in infos[name]
                ],
            ),
        )
        for name in recommended.STRATEGIES
    ]


class Marked:
    """The client, whose RunExperiment stream marks each service's CPU seconds when the first
    question is answered: processing (chunking, embedding, indexing) ends about there."""

    def __init__(self, lab, stack: Stack, marks: dict[str, dict[str, float]]) -> None:
        self._lab, self._stack, self._marks = lab, stack, marks

    def __getattr__(self, name: str):
        return getattr(self._lab, name)

    def run_experiment(self, config):
        for event in self._lab.run_experiment(config):
            if "processed" not in self._marks and event.progress.questions_done:
                self._marks["processed"] = cpu_seconds(self._stack)
            yield event


def service_cpu(marks: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    """Each stretch's CPU seconds per service: upload (parse and import), processing, questions."""
    names = ["start", "uploaded", "processed", "end"]
    return {
        stretch: {s: round(marks[b][s] - marks[a][s], 2) for s in marks[a]}
        for stretch, a, b in zip(("upload", "processing", "questions"), names, names[1:])
    }


def cold_run(source: Path, corpora: Path, questions: Path, variant: dict[str, str] | None = None) -> dict:
    """One cold run of the recommended configuration (with the variant's knobs) with the services of `source`."""
    with tempfile.TemporaryDirectory(prefix="chunklab-speed-") as folder:
        started = time.perf_counter()
        with Stack(data_dir=Path(folder), source=source) as stack:
            stack_s = time.perf_counter() - started
            marks: dict[str, dict[str, float]] = {}
            lab = Marked(stack.client(Settings()), stack, marks)
            began, marks["start"] = time.perf_counter(), cpu_seconds(stack)
            for path in sorted(corpora.glob("*.md")):
                lab.upload_document(path)
            question_set = lab.import_question_set(questions)
            parse_s, marks["uploaded"] = time.perf_counter() - began, cpu_seconds(stack)
            retrieval = common_pb2.RetrievalOptions(top_k=TOP_K, hybrid=recommended.HYBRID)
            runs, results, experiment_s = experiment(
                lab, question_set.question_set_id, "recommended, cold", cells(variant or {}), retrieval
            )
            total_s = time.perf_counter() - began
            marks["end"] = cpu_seconds(stack)
            marks.setdefault("processed", marks["end"])
            cpu_s = sum(marks["end"].values()) - sum(marks["start"].values())
    failed = [f"{run.spec.name}: {run.error}" for run in runs if run.error]
    if failed:
        raise SystemExit(f"a run failed: {failed}")
    phases = {"parse": parse_s, **{p: sum(getattr(r.processing_phases, f"{p}_seconds") for r in runs) for p in PHASES}}
    processing = sum(run.processing_seconds for run in runs)
    phases["index"] += max(0.0, processing - sum(phases[p] for p in PHASES))
    phases["query"] = max(0.0, experiment_s - processing)
    labelled = [r for rs in results for r in rs if r.metrics.labelled]
    # Of the query phase, what the retriever's answers took as the evaluator waited for them.
    phases["retrieve"] = sum(r.metrics.retrieve_ms for rs in results for r in rs) / 1e3
    scores = {k: float(np.mean([getattr(r.metrics, k) for r in labelled])) for k in ("recall", "iou", "tokens_sent")}
    return {
        "answers": answers(results),
        "total_s": total_s,
        "cpu_s": cpu_s,
        "service_cpu": service_cpu(marks),
        "stack_s": stack_s,
        "phases": phases,
        "chunks": sum(r.chunk_count for r in runs),
        **scores,
    }


def answers(results) -> dict[str, str]:
    """Each question's retrieved chunks (text, rank) with scores to 6 places and the chunks its
    expansion sent, as one digest per question: two sides whose digests match retrieved the same."""
    digests = {}
    for result in (r for rs in results for r in rs):
        hits = [(c.rank, c.chunk.content, round(c.score, 6)) for c in result.retrieved_chunks]
        digests[result.question] = hashlib.sha256(repr((hits, result.metrics.tokens_sent)).encode()).hexdigest()
    return digests


def line(name: str, result: dict) -> str:
    phases = "  ".join(f"{k} {v:5.1f}s" for k, v in result["phases"].items())
    stretches = "; ".join(
        f"{stretch} " + " ".join(f"{s} {v:.1f}" for s, v in cpu.items())
        for stretch, cpu in result["service_cpu"].items()
    )
    return (
        f"{name:<7} CPU-s by stretch and service: {stretches}\n"
        f"{name:<7} total {result['total_s']:6.1f}s, CPU {result['cpu_s']:5.1f}s ({phases})  stack start {result['stack_s']:.1f}s  "
        f"{result['chunks']} chunks  recall {result['recall']:.1%}  IoU {result['iou']:.1%}  "
        f"tokens {result['tokens_sent']:.0f}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", default="main", help="git revision whose services are 'before' (default main)")
    parser.add_argument("--rounds", type=int, default=1, help="cold runs per side, taken in turn; the best is kept")
    parser.add_argument("--corpora", type=Path, default=DATA / "corpora", help="folder of .md documents")
    parser.add_argument("--questions", type=Path, default=DATA / "questions.csv")
    parser.add_argument(
        "--variant",
        action="append",
        help="KNOB=VALUE[,KNOB=VALUE]: one more 'after' side with these knobs set on the recommended strategies "
        "(repeatable; default: context_vectors=pooled, then context_vectors=late)",
    )
    args = parser.parse_args()
    print(
        f"recommended: {recommended.summary()}; top {TOP_K}; corpora {args.corpora} "
        f"({sum(p.stat().st_size for p in args.corpora.glob('*.md')) / 1e6:.2f} MB); "
        f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    onnx_export.ensure_export()
    with tempfile.TemporaryDirectory(prefix="chunklab-before-") as folder:
        before = f"before ({args.before})"
        sides = {before: (checkout(args.before, Path(folder)), {}), "after": (REPO, {})}
        for text in args.variant or ["context_vectors=pooled", "context_vectors=late"]:
            sides[f"after, {text}"] = (REPO, dict(pair.split("=", 1) for pair in text.split(",")))
        best: dict[str, dict] = {}
        totals: dict[str, list[float]] = {name: [] for name in sides}
        rounds: dict[str, list[dict]] = {name: [] for name in sides}
        for _ in range(args.rounds):
            for name, (source, variant) in sides.items():
                load = os.getloadavg()[0]
                result = cold_run(source, args.corpora, args.questions, variant)
                print(f"{line(name, result)}  (load {load:.1f} at its start)", flush=True)
                totals[name].append(result["total_s"])
                rounds[name].append({"total_s": result["total_s"], "cpu_s": result["cpu_s"], "load": load})
                if name not in best or result["total_s"] < best[name]["total_s"]:
                    best[name] = result
    rows = [{"side": name, **best[name], "totals": totals[name], "rounds": rounds[name]} for name in sides]
    for row in rows[1:]:
        row["ratios"] = compare(row["side"], best[before], row)
        row["same_as_before"] = sum(row["answers"].get(q) == d for q, d in best[before]["answers"].items())
    for row in rows:
        row["answers"] = len(row["answers"])
    RESULTS.write_text(
        json.dumps({"machine": machine(), "command": COMMAND, "rounds": args.rounds, "sides": rows}, indent=1)
    )
    print(f"wrote {RESULTS.relative_to(REPO)}")
    return 0


def compare(name: str, before: dict, after: dict) -> dict:
    """Prints how `after` compares with `before` and returns the ratios (before / after: above 1 is faster)."""
    phases = {k: before["phases"][k] / max(after["phases"][k], 1e-9) for k in before["phases"]}
    ratios = {
        "total": before["total_s"] / after["total_s"],
        "cpu": before["cpu_s"] / max(after["cpu_s"], 1e-9),
        **phases,
    }
    print(
        f"{name} is {ratios['total']:.2f}x as fast as before (total, from the first upload; {ratios['cpu']:.2f}x in "
        "the services' CPU seconds); "
        f"{(before['total_s'] + before['stack_s']) / (after['total_s'] + after['stack_s']):.2f}x with the stack's "
        "start; " + ", ".join(f"{k} {v:.2f}x" for k, v in phases.items())
    )
    differ = sum(after["answers"].get(q) != d for q, d in before["answers"].items())
    print(
        f"    {len(before['answers']) - differ} of {len(before['answers'])} questions retrieved the same chunks with "
        f"the same scores (to 6 places) and sent the same tokens as before"
    )
    print(
        f"    recall {after['recall'] - before['recall']:+.1%}, IoU {after['iou'] - before['iou']:+.1%}, "
        f"tokens {after['tokens_sent'] - before['tokens_sent']:+.0f} ({name} - before)"
    )
    return ratios


if __name__ == "__main__":
    sys.exit(main())
