"""Writes docs/benchmarks.md: every strategy on the shared chroma-general set, with its plot.

The protocol of the Chroma report: the three corpora in one pooled index, 5
retrieved chunks per question, the offline all-MiniLM-L6-v2 through torch (the
report's model, whatever the stack's default is). Rows: every
strategy of the chunker's registry at its defaults (strategies that need an
LLM are listed as skipped), token windows and recursive at the report's sizes
(200/0, 250/0, 250/125), neighbour expansion ±1/1, and each of those again
with hybrid retrieval. Everything goes through a real stack over gRPC, as
bench/evaluator_chroma.py does: one experiment per retrieval mode, every
configuration a run of it.

The embedding cache is kept between runs in .chunklab/bench-cache/ (copied
into the stack's fresh temporary data folder and back), so a re-run embeds
nothing it embedded before; --cold starts without it. The measured rows are
stored in docs/benchmarks/results.json; --render-only rebuilds the page and
the plot from them without measuring.

    .venv/bin/python bench/benchmarks_page.py [--cold] [--render-only]

--model NAME measures the same protocol with another embedding model (e.g. the
stack's default, all-MiniLM-L6-v2-onnx-int8) and prints its rows without
writing the page or its results: the page stays the report's model's (the kept
embedding cache gains that model's vectors, under their own name).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from chunklab.knobs import spec_to_dict  # noqa: E402
from chunklab.settings import Settings  # noqa: E402
from chunklab.v1 import common_pb2, evaluator_pb2  # noqa: E402
from chunklab_app import benchpage  # noqa: E402
from chunklab_app.cli.terminal import Progress, follow  # noqa: E402
from chunklab_app.stack import Stack  # noqa: E402

DATA = REPO.parent / "shared" / "data" / "chroma-general"
PAGE = REPO / "docs" / "benchmarks.md"
FIGURES = REPO / "docs" / "benchmarks"
RESULTS = FIGURES / "results.json"
PLOT = FIGURES / "recall_vs_tokens.png"
GROWTH, GROWTH_PLOT = FIGURES / "growth.json", FIGURES / "growth.png"  # written by bench/growth.py
COLD = FIGURES / "cold_experiment.json"  # written by bench/cold_experiment.py
BACKENDS = FIGURES / "embedding_backends.json"  # written by bench/embedding_backends.py
FIDELITY = FIGURES / "ingest_fidelity.json"  # written by bench/ingest_fidelity.py
SPEED = FIGURES / "study_speed.json"  # written by bench/study_speed.py
CHUNKER = FIGURES / "chunker_bench.json"  # written by bench/chunker_bench.py --write
LLM_FEATURES = FIGURES / "llm_features.json"  # written by bench/llm_features.py
CACHE = REPO / ".chunklab" / "bench-cache"
PARTIAL = REPO / "bench" / "results" / "benchmarks_page_rows.json"
TOP_K = 5
# The Chroma report's model, through sentence-transformers as the report ran it; the stack's
# own default may be another (ADR 0071), and the page's protocol does not follow it.
PROTOCOL_MODEL = "all-MiniLM-L6-v2"
SIZES = ((200, 0), (250, 0), (250, 125))
NEIGHBOUR_SIZES = ((200, 0), (250, 0))
COMMAND = ".venv/bin/python bench/benchmarks_page.py (run last by make bench)"


def machine() -> dict:
    """The machine a figure ran on: CPU model, cores, RAM, Python, load, date."""
    cpu = next(
        (line.split(":", 1)[1].strip() for line in _lines("/proc/cpuinfo") if line.startswith("model name")),
        platform.processor() or "unknown",
    )
    mem_kb = next((int(line.split()[1]) for line in _lines("/proc/meminfo") if line.startswith("MemTotal")), 0)
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "ram_gb": round(mem_kb / 1024 / 1024, 1),
        "python": platform.python_version(),
        "os": f"{platform.system()} {platform.release()}",
        "load": ", ".join(f"{x:.1f}" for x in os.getloadavg()),
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
    }


def _lines(path: str) -> list[str]:
    try:
        return Path(path).read_text().splitlines()
    except OSError:
        return []


def grids(infos, only: list[str]) -> tuple[list[tuple[str, str, evaluator_pb2.StrategyGrid]], list[dict]]:
    """(group, label, grid) of every configuration (of the strategies named in only, if any), and
    the skipped strategies' rows."""
    cells, skipped = [], []
    for info in infos:
        if only and info.name not in only:
            continue
        if info.requires_llm:
            skipped.append(
                {
                    "label": f"{info.name} (defaults)",
                    "strategy": info.name,
                    "note": "skipped: needs an LLM (requires_llm); this bench measures without one",
                }
            )
            continue
        cells.append(("defaults", f"{info.name} (defaults)", evaluator_pb2.StrategyGrid(strategy=info.name)))
    for strategy in ("fixed_size", "recursive"):
        if only and strategy not in only:
            continue
        for size, overlap in SIZES:
            cells.append(("sizes", f"{strategy} {size}/{overlap}", sized(strategy, size, overlap)))
    return cells, skipped


def sized(strategy: str, size: int, overlap: int) -> evaluator_pb2.StrategyGrid:
    return evaluator_pb2.StrategyGrid(
        strategy=strategy,
        grid=[
            evaluator_pb2.KnobGrid(knob="chunk_size", values=[common_pb2.KnobValue(int_value=size)]),
            evaluator_pb2.KnobGrid(knob="chunk_overlap", values=[common_pb2.KnobValue(int_value=overlap)]),
        ],
    )


def experiment(lab, question_set_id: str, name: str, cells, retrieval: common_pb2.RetrievalOptions):
    """One experiment over the cells; returns (its runs in cell order, each run's results, wall seconds).
    Results are fetched run by run: every run's at once exceeds gRPC's message limit."""
    config = evaluator_pb2.ExperimentConfig(
        name=f"benchmarks page: {name}",
        question_set_id=question_set_id,
        strategies=[grid for _, _, grid in cells],
        retrieval=retrieval,
        retrieval_only=True,
    )
    print(f"== {name}: {len(cells)} runs", file=sys.stderr, flush=True)
    started = time.perf_counter()
    outcome = follow(lab.run_experiment(config), Progress()).experiment
    seconds = time.perf_counter() - started
    results = [lab.get_experiment(outcome.experiment_id, run_key=run.run_key).results for run in outcome.runs]
    return outcome.runs, results, seconds


def row_of(group: str, label: str, retrieval: str, run, results) -> dict:
    """A page row from one run and its questions' results."""
    base = {
        "label": label,
        "strategy": run.spec.name,
        "knobs": spec_to_dict(run.spec)["knobs"],
        "retrieval": retrieval,
        "group": group,
    }
    if run.error or not run.questions_done:
        return {**base, "note": f"failed: {run.error or 'no question answered'}"}
    mine = [r for r in results if r.run_key == run.run_key and r.metrics.labelled]
    values = {k: np.array([getattr(r.metrics, k) for r in mine]) for k in ("recall", "precision", "iou")}
    rank = {k: getattr(run.mean_metrics, k) for k in benchpage.RANK_KEYS if run.mean_metrics.HasField(k)}
    return {
        **base,
        "questions": len(mine),
        **{k: [float(v.mean()), float(v.std())] for k, v in values.items()},
        "tokens_sent": float(np.mean([r.metrics.tokens_sent for r in mine])),
        "chunks": run.chunk_count,
        "chunk_tokens": 0.0,
        "rank": rank,
        "seconds": {
            "processing": run.processing_seconds,
            "query": sum(r.metrics.retrieve_ms for r in mine) / 1000,
            **{phase: getattr(run.processing_phases, f"{phase}_seconds") for phase in ("chunk", "embed", "index")},
        },
    }


def chunk_sizes(lab, documents, rows: list[dict]) -> None:
    """Mean chunk size (tokens, every chunk the strategy makes) of each dense row, by previewing
    its chunks once the run has embedded them (an embedding strategy reads its vectors from the
    cache); a row of another retrieval mode takes its dense twin's."""
    from chunklab.knobs import to_spec

    for row in rows:
        if "note" in row or row.get("retrieval") != "dense":
            continue
        counts = [
            c.token_count
            for d in documents
            for c in lab.preview_chunks(d.document_id, to_spec(row["strategy"], row["knobs"])).chunks
        ]
        row["chunk_tokens"] = float(np.mean(counts)) if counts else 0.0
    sizes = {(r["strategy"], json.dumps(r["knobs"], sort_keys=True)): r for r in rows if r.get("retrieval") == "dense"}
    for row in rows:
        twin = sizes.get((row.get("strategy"), json.dumps(row.get("knobs"), sort_keys=True)))
        if "note" not in row and row.get("retrieval") != "dense" and twin and "note" not in twin:
            row["chunk_tokens"] = twin["chunk_tokens"]


def measure(lab, only: list[str]) -> dict:
    phases = {}
    started = time.perf_counter()
    documents = [lab.upload_document(p) for p in sorted((DATA / "corpora").glob("*.md"))]
    phases["parse (upload and parse 3 corpora)"] = time.perf_counter() - started
    started = time.perf_counter()
    question_set = lab.import_question_set(DATA / "questions.csv")
    phases["import questions (locate references)"] = time.perf_counter() - started
    cells, rows = grids(lab.list_strategies(), only)
    modes = [
        ("dense", cells, common_pb2.RetrievalOptions(top_k=TOP_K)),
        ("hybrid", cells, common_pb2.RetrievalOptions(top_k=TOP_K, hybrid=True)),
        (
            "neighbours ±1/1",
            [("expansion", f"fixed_size {s}/{o} ±1/1", sized("fixed_size", s, o)) for s, o in NEIGHBOUR_SIZES],
            common_pb2.RetrievalOptions(top_k=TOP_K, neighbor_prev=1, neighbor_next=1),
        ),
    ]
    for retrieval, mode_cells, options in modes:
        runs, results, seconds = experiment(lab, question_set.question_set_id, retrieval, mode_cells, options)
        phases[f"experiment: {retrieval} ({len(mode_cells)} runs)"] = seconds
        for (group, label, _), run, run_results in zip(mode_cells, runs, results):
            rows.append(row_of(group, label, retrieval, run, run_results))
    PARTIAL.parent.mkdir(parents=True, exist_ok=True)
    PARTIAL.write_text(json.dumps(rows, indent=1, ensure_ascii=False) + "\n")  # kept if what follows fails
    started = time.perf_counter()
    chunk_sizes(lab, [d.document for d in documents], rows)
    phases["chunk previews (chunk sizes)"] = time.perf_counter() - started
    return {"rows": rows, "phases": phases, "questions": question_set.question_count}


def run(cold: bool, only: list[str], model: str = PROTOCOL_MODEL) -> dict:
    """Measures with a fresh stack in a temporary folder, the embedding cache carried over unless cold."""
    settings = Settings()
    with tempfile.TemporaryDirectory(prefix="chunklab-benchpage-") as folder:
        cache_dir = Path(folder) / "cache"
        warm = (CACHE / "embeddings.sqlite3").exists() and not cold
        if warm:
            shutil.copytree(CACHE, cache_dir)
        started = time.perf_counter()
        try:
            with Stack(data_dir=Path(folder), extra_env={"CHUNKLAB_EMBEDDING_MODEL": model}) as stack:
                ready = time.perf_counter() - started
                results = measure(stack.client(settings), only)
        finally:  # what was embedded is kept even when a later step fails
            if cache_dir.exists():
                shutil.rmtree(CACHE, ignore_errors=True)
                shutil.copytree(cache_dir, CACHE)
        results["phases"] = {"start the stack (four services)": ready, **results["phases"]}
        results["total_s"] = time.perf_counter() - started
        results["cold"] = not warm
    return results


def write(results: dict) -> None:
    FIGURES.mkdir(parents=True, exist_ok=True)
    benchpage.plot(results["rows"], PLOT)
    growth = json.loads(GROWTH.read_text()) if GROWTH.exists() else None  # bench/growth.py's, when it ran
    cold = json.loads(COLD.read_text()) if COLD.exists() else None  # bench/cold_experiment.py's, when it ran
    backends = json.loads(BACKENDS.read_text()) if BACKENDS.exists() else None  # bench/embedding_backends.py's
    fidelity = json.loads(FIDELITY.read_text()) if FIDELITY.exists() else None  # bench/ingest_fidelity.py's
    speed = json.loads(SPEED.read_text()) if SPEED.exists() else None  # bench/study_speed.py's
    chunker = json.loads(CHUNKER.read_text()) if CHUNKER.exists() else None  # bench/chunker_bench.py's
    llm = json.loads(LLM_FEATURES.read_text()) if LLM_FEATURES.exists() else None  # bench/llm_features.py's
    PAGE.write_text(
        benchpage.page(
            results,
            plot_path=str(PLOT.relative_to(PAGE.parent)),
            growth_results=growth,
            growth_plot=str(GROWTH_PLOT.relative_to(PAGE.parent)),
            cold_results=cold,
            backend_results=backends,
            fidelity_results=fidelity,
            speed_results=speed,
            chunker_results=chunker,
            llm_results=llm,
        )
    )
    print(f"wrote {PAGE.relative_to(REPO)} and {PLOT.relative_to(REPO)}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cold", action="store_true", help="start without the kept embedding cache")
    parser.add_argument("--render-only", action="store_true", help=f"rebuild the page from {RESULTS.name}")
    parser.add_argument("--strategy", action="append", help="only these strategies (repeatable; a smoke run)")
    parser.add_argument(
        "--model",
        help=f"measure with this embedding model instead of {PROTOCOL_MODEL} and print; the page is not written",
    )
    args = parser.parse_args()
    if args.model:
        for row in run(args.cold, args.strategy or [], args.model)["rows"]:
            if "note" not in row:
                print(
                    f"{row['label']:<40} {row['retrieval']:<16} recall {100 * row['recall'][0]:5.1f} ± {100 * row['recall'][1]:4.1f}"
                    f"  IoU {100 * row['iou'][0]:4.1f}  tokens sent {row['tokens_sent']:7.0f}"
                )
        return 0
    if args.render_only:
        results = json.loads(RESULTS.read_text())
    else:
        results = {**run(args.cold, args.strategy or []), "machine": machine(), "command": COMMAND, "top_k": TOP_K}
        FIGURES.mkdir(parents=True, exist_ok=True)
        RESULTS.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n")
    write(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
