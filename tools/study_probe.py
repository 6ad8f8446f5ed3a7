"""What the study's space holds, seen from outside the study: chosen configurations scored on
every chroma-general question, then split as each study of bench/study_goals.py splits them
(seeded, per corpus and all three), so that each configuration's selection-half and
confirmation-half figures sit side by side. A diagnostic of the search (is there a
configuration the search should have found? would the selection half have picked it?), never
an input to a study.

    PYTHONPATH=. .venv/bin/python -m tools.study_probe --data /tmp/probe \\
        --grid 'cluster_parent_child:parent_max_tokens=250,350,450' --top-k 3,5,8 --hybrid 1 [--fusion-k 3,60]

A kept --data folder reuses its index sets and its question set across invocations.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from bench.study_goals import CORPORA, DATA, questions_csv
from chunklab import knobs, retrieval
from chunklab.client import experiment_outcome
from chunklab.v1 import evaluator_pb2 as pb
from chunklab_app.stack import Stack
from services.evaluator.study import split as splits


def grid_of(text: str, infos) -> pb.StrategyGrid:
    """'strategy:knob=v1,v2;knob2=v3' as a StrategyGrid."""
    strategy, _, axes = text.partition(":")
    declared = knobs.from_info(infos[strategy])
    grid = pb.StrategyGrid(strategy=strategy)
    for axis in filter(None, axes.split(";")):
        name, _, values = axis.partition("=")
        knob = knobs.find(strategy, declared, name)
        grid.grid.add(knob=name, values=[knobs.knob_value(v) for v in knob.parse_values(strategy, values)])
    return grid


def halves(name: str, questions, seed: int) -> dict[str, tuple[set[str], set[str]]]:
    """The question ids of the set's selection and confirmation halves, dealt as the study deals
    them (by content, then the seeded shuffle)."""
    dealt = splits.deal(list(questions), pb.Validation(mode=pb.VALIDATION_MODE_HOLDOUT, seed=seed))
    return {name: ({q.question_id for q in dealt.selection}, {q.question_id for q in dealt.confirmation})}


def question_set(lab, name: str) -> pb.QuestionSet:
    """The set's questions (each corpus alone, or all three), imported once into the kept folder."""
    found = [s for s in lab.list_question_sets() if s.name == f"probe-{name}.csv"]
    if found:
        return lab.get_question_set(found[0].question_set_id)
    documents = {d.name: d.document_id for d in lab.list_documents()}
    ids = {}
    for corpus in CORPORA:
        if f"{corpus}.md" not in documents:
            uploaded = lab.upload_document(DATA / "corpora" / f"{corpus}.md", collection="chroma-general")
            documents[f"{corpus}.md"] = uploaded.document.document_id
        ids[corpus] = documents[f"{corpus}.md"]
    corpora = CORPORA if name == "all" else (name,)
    return lab.import_question_set(
        questions_csv(corpora), name=f"probe-{name}.csv", document_ids=ids, excerpt_check=pb.EXCERPT_CHECK_LENIENT
    )


def means(results, wanted: set[str]) -> tuple[float, float, float, int]:
    rows = [r.metrics for r in results if r.question_id in wanted and r.metrics.labelled and not r.error]
    n = len(rows) or 1
    return (
        sum(m.recall for m in rows) / n,
        sum(m.iou for m in rows) / n,
        sum(m.tokens_sent for m in rows) / n,
        len(rows),
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", required=True, help="a data folder to keep (index sets are reused)")
    parser.add_argument("--grid", action="append", required=True, help="strategy:knob=v1,v2;knob=v3")
    parser.add_argument("--top-k", default="5")
    parser.add_argument("--hybrid", default="1", help="1, 0 or 0,1")
    parser.add_argument("--neighbors", default="0")
    parser.add_argument("--fusion-k", default="60", help="hybrid's fusion_k values, e.g. 3,60 (ADR 0139)")
    parser.add_argument("--out", default="", help="append one JSON line per run and set")
    parser.add_argument("--set", default="all", help="a corpus id or 'all'")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    folder = Path(args.data)
    folder.mkdir(parents=True, exist_ok=True)
    stack = Stack(data_dir=folder).start()
    try:
        lab = stack.client()
        questions = question_set(lab, args.set)
        split = halves(args.set, questions.questions, args.seed)
        infos = {i.name: i for i in lab.list_strategies()}
        for top_k in map(int, args.top_k.split(",")):
            for hybrid in (h == "1" for h in args.hybrid.split(",")):
                for neighbors in map(int, args.neighbors.split(",")):
                    for fusion_k in map(int, args.fusion_k.split(",") if hybrid else ["60"]):
                        config = pb.ExperimentConfig(
                            name="probe", question_set_id=questions.question_set_id, retrieval_only=True
                        )
                        config.strategies.extend(grid_of(g, infos) for g in args.grid)
                        config.retrieval.top_k, config.retrieval.hybrid = top_k, hybrid
                        config.retrieval.neighbor_prev = config.retrieval.neighbor_next = neighbors
                        if fusion_k != retrieval.LIMITS.default_fusion_k:
                            config.retrieval.fusion_k = fusion_k
                        done = experiment_outcome(lab.run_experiment(config)).experiment
                        full = lab.get_experiment(done.experiment_id)
                        report(full, split, (top_k, hybrid, neighbors, fusion_k), args.out)
    finally:
        stack.stop()


def report(experiment: pb.Experiment, split, modes: tuple[int, bool, int, int], out: str) -> None:
    top_k, hybrid, neighbors, fusion_k = modes
    by_run: dict[str, list] = {}
    for r in experiment.results:
        by_run.setdefault(r.run_key, []).append(r)
    for run_key, results in by_run.items():
        for name, (selection, confirmation) in split.items():
            s, c = means(results, selection), means(results, confirmation)
            row = {"run": run_key, "top_k": top_k, "hybrid": hybrid, "neighbors": neighbors, "fusion_k": fusion_k}
            row["set"] = name
            row.update(
                sel_recall=s[0], sel_iou=s[1], sel_tokens=s[2], conf_recall=c[0], conf_iou=c[1], conf_tokens=c[2]
            )
            print(
                f"| {name} | {run_key} top_k={top_k} {f'hybrid k={fusion_k}' if hybrid else 'dense'} n={neighbors} | "
                f"sel {s[0]:.1%} {s[1]:.1%} {s[2]:.0f} | conf {c[0]:.1%} {c[1]:.1%} {c[2]:.0f} |",
                flush=True,
            )
            if out:
                with open(out, "a", encoding="utf-8") as f:
                    f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
