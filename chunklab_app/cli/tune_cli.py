"""`chunklab tune`: find the best chunking configuration for your documents (issue 29, ADR 0116).

    chunklab tune --corpus docs/*.md --questions q.jsonl --minutes 10 --max-tokens 800
    chunklab tune --collection handbooks --question-set <id> --trials 30 --objective iou --min-recall 90%
    chunklab tune --resume <study id>           # a cancelled or interrupted study goes on

The study runs in the evaluator (a budgeted search, each trial a run of the study's experiment);
this module reads the flags, follows the stream with a progress bar (trials so far, best so far)
and prints the result: the winner's scores on the confirmation questions beside the baseline and
the static recommendation. The same options as the UI's "Find the best configuration" page.
"""

from __future__ import annotations

import argparse

from chunklab_app import recommended
from chunklab_app.cli.flags import UsageError

OBJECTIVES = {
    "recall": "highest recall with at most --max-tokens sent per question, ties by IoU (default)",
    "iou": "highest IoU with recall at least --min-recall",
    "pareto": "the Pareto front of recall, IoU and tokens sent",
}


def share(text: str) -> float:
    """A share typed as 0.9 or 90%: the fraction."""
    raw = text.strip()
    try:
        value = float(raw.rstrip("%")) / (100 if raw.endswith("%") else 1)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a share: write 0.9 or 90%") from None
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a share between 0 and 1 (or 0% and 100%)")
    return value


def positive(kind):
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a {'whole ' if kind is int else ''}number") from None
        if value <= 0:
            raise argparse.ArgumentTypeError(f"{text!r}: give a number above 0")
        return value

    return parse


def add_tune_command(commands, handler) -> None:
    tune = commands.add_parser(
        "tune",
        help="find the best chunking configuration for your documents within a budget",
        description="A budgeted search over the chunker's strategies, their knobs and the retrieval modes, "
        "tuned on a seeded share of your questions and confirmed on the others. It starts from "
        f"{recommended.summary()} and compares the winner with it and with the {recommended.BASELINE} baseline.",
    )
    where = tune.add_argument_group("documents", "what to tune on (default: every document the questions reference)")
    where.add_argument("--corpus", nargs="*", default=[], help="documents to upload first (reused when uploaded)")
    where.add_argument(
        "--document", action="append", default=[], help="an uploaded document's id or file name (repeatable)"
    )
    where.add_argument(
        "--collection", default="", help="upload --corpus into this collection; without --corpus: tune on its documents"
    )
    asked = tune.add_argument_group("questions")
    source = asked.add_mutually_exclusive_group()
    source.add_argument("--questions", help="a question set file (.jsonl or .csv) to import")
    source.add_argument("--question-set", help="the id of a question set already imported")
    source.add_argument("--resume", metavar="STUDY_ID", help="go on with a cancelled or interrupted study")
    asked.add_argument("--map", action="append", help="corpus_id=document_id for references (repeatable)")
    asked.add_argument("--lenient", action="store_true", help="import the located questions, leave out the others")
    goal = tune.add_argument_group("objective")
    goal.add_argument("--objective", choices=OBJECTIVES, default="recall", help="; ".join(
        f"{k}: {v}" for k, v in OBJECTIVES.items()))
    goal.add_argument(
        "--max-tokens", type=positive(int), help="recall: at most this many tokens sent per question (e.g. 800)"
    )
    goal.add_argument("--min-recall", type=share, help="iou: recall at least this share (0.9 or 90%%)")
    budget = tune.add_argument_group("budget", "when the search stops (both: whichever comes first)")
    budget.add_argument("--minutes", type=positive(float), help="wall time for the search")
    budget.add_argument("--trials", type=positive(int), help="configurations to evaluate")
    space = tune.add_argument_group("search")
    space.add_argument(
        "--strategy", action="append", default=[], help="search only these strategies (repeatable; default: "
        "every strategy that needs no LLM, or every one when an LLM is configured)"
    )
    space.add_argument("--seed", type=int, default=0, help="the same seed splits the questions and searches alike")
    space.add_argument(
        "--selection-share", type=share, help="the share of questions the search tunes on (default: half)"
    )
    tune.add_argument("--name", default="", help="the study's name")
    tune.add_argument("--dry-run", action="store_true", help="check the request and say what it would search")
    tune.add_argument("--make-active", action="store_true", help="make the winner's index sets the active ones")
    tune.add_argument("--report", help="write the study's HTML report here (a .html file or a folder)")
    tune.add_argument("--json", action="store_true", help="print the result as JSON")
    tune.set_defaults(handler=handler)


def check(args) -> None:
    """What argparse cannot say about the flags together (the evaluator checks the rest)."""
    if args.resume:
        given = [flag for flag, value in (("--corpus", args.corpus), ("--document", args.document)) if value]
        if given:
            raise UsageError(f"--resume goes on with the study's stored documents and questions: drop {given[0]}")
        return
    if not args.questions and not args.question_set:
        raise UsageError("give the questions: --questions FILE or --question-set ID (or --resume STUDY_ID)")
    if args.objective == "iou" and args.min_recall is None:
        raise UsageError("--objective iou needs --min-recall (e.g. --min-recall 90%)")
    if args.objective != "iou" and args.min_recall is not None:
        raise UsageError("--min-recall goes with --objective iou")
    if not args.minutes and not args.trials:
        raise UsageError("give a budget: --minutes M, --trials N, or both")
