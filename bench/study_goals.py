"""Issue 29's Goals, measured: a tuning study on each chroma-general corpus alone and on the three
together, tuned on a seeded half of the questions and confirmed on the other half, beside the
fixed_size baseline and the static recommendation on the same confirmation questions.

    PYTHONPATH=. .venv/bin/python -m bench.study_goals --trials 12 [--seconds 600] [--max-tokens 800]
        [--only all] [--trials-out trials.jsonl]

Starts the stack in a fresh data folder, uploads the three corpora, imports each corpus's questions
(and all of them), runs one study per set, and prints one table row per candidate. Measured figures:
docs/benchmarks/study_goals.md.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import tempfile
import time
from pathlib import Path

from chunklab.client import experiment_outcome
from chunklab.v1 import evaluator_pb2 as pb
from chunklab_app.stack import Stack

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "chroma-general"
CORPORA = ("chatlogs", "state_of_the_union", "wikitexts")


def questions_csv(corpora: tuple[str, ...]) -> bytes:
    with (DATA / "questions.csv").open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=["question", "references", "corpus_id"])
    writer.writeheader()
    writer.writerows(r for r in rows if r["corpus_id"] in corpora)
    return out.getvalue().encode()


def mean(c: pb.StudyCandidate, metric: str) -> str:
    m = next(m for m in c.means if m.metric == metric)
    if metric == "tokens_sent":
        return f"{m.mean:.0f} [{m.ci_low:.0f}, {m.ci_high:.0f}]"
    return f"{m.mean:.1%} [{m.ci_low:.1%}, {m.ci_high:.1%}]"


def study(lab, name: str, set_id: str, args) -> pb.Experiment:
    goal = pb.Study(
        objective=pb.StudyObjective(max_tokens=args.max_tokens),
        budget=pb.StudyBudget(trials=args.trials, seconds=args.seconds),
        seed=args.seed,
    )
    started = time.monotonic()
    outcome = experiment_outcome(lab.run_study(set_id, goal, name=name, seed=args.seed))
    experiment = outcome.experiment
    print(
        f"\n## {name}: {experiment.study.trials_done} trials ({experiment.study.trials_pruned} pruned) "
        f"in {time.monotonic() - started:.0f} s; state {pb.ExperimentState.Name(experiment.state)} {experiment.error}"
    )
    for c in experiment.study.confirmation:
        print(
            f"| {name} | {c.role} | {c.run_key} | {mean(c, 'recall')} | {mean(c, 'iou')} | {mean(c, 'tokens_sent')} |"
        )
    print(f"summary: {experiment.study.summary}")
    for note in experiment.study.notes:
        print(f"note: {note}")
    if args.trials_out:
        with open(args.trials_out, "a", encoding="utf-8") as f:
            for run in experiment.runs:
                f.write(json.dumps({"set": name, "run_key": run.run_key, **trial_row(run.trial)}) + "\n")
    return experiment


def trial_row(trial: pb.StudyTrial) -> dict:
    """One trial as the study stored it (its selection-share scores), for --trials-out."""
    fields = ("number", "origin", "state", "questions", "recall", "iou", "tokens_sent", "feasible", "seconds")
    row = {f: getattr(trial, f) for f in fields}
    row["params"] = json.loads(trial.params or "{}")
    return row


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=12)
    parser.add_argument("--seconds", type=float, default=0.0)
    parser.add_argument("--max-tokens", type=int, default=800)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", default="", help="sets, comma-separated: corpus ids or 'all'")
    parser.add_argument("--trials-out", default="", help="append every trial (JSON lines) to this file")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        stack = Stack(data_dir=Path(folder)).start()
        try:
            lab = stack.client()
            ids = {}
            for corpus in CORPORA:
                document = lab.upload_document(DATA / "corpora" / f"{corpus}.md", collection="chroma-general")
                ids[corpus] = document.document.document_id
            sets = [(c, (c,)) for c in CORPORA] + [("all", CORPORA)]
            for name, corpora in sets:
                if args.only and name not in args.only.split(","):
                    continue
                imported = lab.import_question_set(
                    questions_csv(corpora), name=f"{name}.csv", document_ids=ids, excerpt_check=pb.EXCERPT_CHECK_LENIENT
                )
                study(lab, name, imported.question_set_id, args)
        finally:
            stack.stop()


if __name__ == "__main__":
    main()
