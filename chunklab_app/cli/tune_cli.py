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
import json
import sys

from google.protobuf import json_format

from chunklab.client import ChunkLab, ClientError, experiment_outcome
from chunklab.v1 import evaluator_pb2
from chunklab.views import study_view
from chunklab.views.metric_format import MetricFormat
from chunklab_app import recommended, tuning
from chunklab_app.cli import export_cli, questions_cli
from chunklab_app.cli.flags import UsageError
from chunklab_app.cli.terminal import Progress

KINDS = {
    "recall": evaluator_pb2.STUDY_OBJECTIVE_KIND_RECALL_AT_TOKENS,
    "iou": evaluator_pb2.STUDY_OBJECTIVE_KIND_IOU_AT_RECALL,
    "pareto": evaluator_pb2.STUDY_OBJECTIVE_KIND_PARETO,
}
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
    goal.add_argument(
        "--objective", choices=OBJECTIVES, default="recall", help="; ".join(f"{k}: {v}" for k, v in OBJECTIVES.items())
    )
    goal.add_argument(
        "--max-tokens", type=positive(int), help="recall: at most this many tokens sent per question (e.g. 800)"
    )
    goal.add_argument("--min-recall", type=share, help="iou: recall at least this share (0.9 or 90%%)")
    budget = tune.add_argument_group(
        "budget", "when the search stops (both: whichever comes first; neither: 30 trials)"
    )
    budget.add_argument("--minutes", type=positive(float), help="wall time for the search")
    budget.add_argument("--trials", type=positive(int), help="configurations to evaluate")
    space = tune.add_argument_group("search")
    space.add_argument(
        "--strategy",
        action="append",
        default=[],
        help="search only these strategies (repeatable; default: "
        "every strategy that needs no LLM, or every one when an LLM is configured)",
    )
    space.add_argument("--seed", type=int, default=0, help="the same seed splits the questions and searches alike")
    space.add_argument(
        "--selection-share", type=share, help="the share of questions the search tunes on (default: half)"
    )
    tune.add_argument("--name", default="", help="the study's name")
    tune.add_argument("--dry-run", action="store_true", help="check the request and say what it would search")
    tune.add_argument(
        "--make-active",
        action="store_true",
        help="make the configuration it offers (the winner, or the recommendation where the winner falls below it) the active index set of each document",
    )
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


def study_of(args) -> evaluator_pb2.Study:
    return evaluator_pb2.Study(
        objective=evaluator_pb2.StudyObjective(
            kind=KINDS[args.objective], max_tokens=args.max_tokens or 0, min_recall=args.min_recall or 0.0
        ),
        budget=evaluator_pb2.StudyBudget(seconds=(args.minutes or 0) * 60, trials=args.trials or 0),
        space=evaluator_pb2.StudySpace(strategies=args.strategy),
        seed=args.seed,
    )


def documents_of(args, client: ChunkLab, progress: Progress) -> list[str]:
    """--corpus uploaded (or reused) and --document resolved: the ids the study searches."""
    found = []
    for corpus in args.corpus:
        uploaded = client.upload_document(corpus, collection=args.collection)
        found.append(uploaded.document.document_id)
        said = "reused" if uploaded.already_existed else "uploaded"
        progress.message(f"{said} {corpus} as {uploaded.document.document_id}")
    try:
        found.extend(export_cli.document_id_of(client, given) for given in args.document)
    except export_cli.ExportUsage as exc:
        raise UsageError(str(exc)) from None
    return found


def question_set_of(args, client: ChunkLab, progress: Progress) -> str:
    if args.question_set:
        return args.question_set
    check = evaluator_pb2.EXCERPT_CHECK_LENIENT if args.lenient else evaluator_pb2.EXCERPT_CHECK_STRICT
    imported = client.import_question_set(
        args.questions, document_ids=questions_cli.mapping(args.map), excerpt_check=check
    )
    left_out = imported.validation.questions_left_out
    progress.message(
        f"imported {imported.question_count} questions as {imported.question_set_id}"
        + (f" ({left_out} left out: `chunklab questions validate` says why)" if left_out else "")
    )
    return imported.question_set_id


def follow_study(events, metrics: MetricFormat, progress: Progress, seen: dict):
    """The stream followed to its end: a bar over the budget (trials, or time), each trial a
    line of its own in a log, the best so far on the bar. `seen` gets the study's id."""
    last_trial = 0

    def show(p: evaluator_pb2.ExperimentProgress) -> None:
        nonlocal last_trial
        seen["study_id"] = p.experiment_id or seen.get("study_id", "")
        if not p.HasField("study"):
            progress.update(0, 1, p.message)
            return
        done, total = study_view.fraction(p.study)
        new_trial = p.study.trials_done != last_trial
        last_trial = p.study.trials_done
        by_trials = bool(p.study.trials_budget)
        line = study_view.progress_line(p, metrics, counted=not by_trials)
        progress.update(int(done), int(total), line, new_step=new_trial, counted=by_trials)

    try:
        return experiment_outcome(events, show)
    finally:
        progress.close()


def stop(client: ChunkLab, study_id: str) -> int:
    """Ctrl-C stops the study itself (unlike an experiment, which goes on): it keeps its trials."""
    if not study_id:
        print("\nchunklab: stopped before the study started", file=sys.stderr)
        return 130
    try:
        client.cancel_experiment(study_id)
    except ClientError as exc:  # it ended meanwhile
        print(f"\nchunklab: {exc.message}", file=sys.stderr)
        return 130
    print(
        f"\nchunklab: stopping study {study_id} after the trial under way; its trials are kept: "
        f"chunklab tune --resume {study_id} goes on",
        file=sys.stderr,
    )
    return 130


def cmd_tune(args, client: ChunkLab) -> int:
    check(args)
    progress = Progress()
    metrics = MetricFormat(client.list_metrics())
    if args.resume:
        events = client.resume_experiment(args.resume)
    else:
        document_ids = documents_of(args, client, progress)
        collections = [args.collection] if args.collection and not document_ids else []
        events = client.run_study(
            question_set_of(args, client, progress),
            study_of(args),
            name=args.name,
            document_ids=document_ids,
            collections=collections,
            seed=args.seed,
            selection_share=args.selection_share or 0.0,
            dry_run=args.dry_run,
        )
    seen: dict = {}
    try:
        outcome = follow_study(events, metrics, progress, seen)
    except KeyboardInterrupt:
        return stop(client, seen.get("study_id", ""))
    if args.dry_run:
        for warning in outcome.estimate.warnings if outcome.estimate else ():
            print(f"warning: {warning}", file=sys.stderr)
        shown = (
            json_format.MessageToDict(outcome.estimate, preserving_proto_field_name=True) if outcome.estimate else {}
        )
        print(json.dumps({"dry_run": True, "estimate": shown}, indent=2))
        return 0
    if outcome.experiment is None:
        raise ClientError("the evaluator ended the stream without the study; see its log", service="evaluator")
    study = client.get_experiment(outcome.experiment.experiment_id, without_results=True)
    view = study_view.result_view(study, metrics)
    if args.json:
        print(json.dumps(tuning.result_json(study, metrics), indent=2))
    else:
        print_result(view)
    if args.make_active and view["take_home"]:
        try:
            activated = tuning.make_active(client, study)
        except tuning.NothingToActivate as exc:
            raise UsageError(f"--make-active: {exc}") from None
        print(f"made {view['take_home']} the active index set of {len(activated)} documents", file=sys.stderr)
    if args.report:
        path = client.write_report(study.experiment_id, args.report, evaluator_pb2.REPORT_VIEW_BOTH).path
        print(f"report written to {path}", file=sys.stderr)
    return 0 if study.state == evaluator_pb2.EXPERIMENT_STATE_SUCCEEDED else 1


LABELS = ("recall", "IoU", "tokens per question")


def print_result(view: dict, out=None) -> None:
    """The study's result: what it searched, the winner beside the baseline and the
    recommendation on the confirmation questions, the lead and its interval, and what was left out."""
    print(f"study {view['experiment_id']}: {view['objective']}; budget {view['budget']}", file=out)
    print(f"{view['trials']}; {view['split']}", file=out)
    if view["summary"]:
        print(f"\n{view['summary']}", file=out)
    if view["candidates"]:
        print("\nOn the confirmation questions, with 95% intervals:", file=out)
    for row in view["candidates"]:
        late = "" if row["feasible"] else " (outside the objective's limits)"
        print(f"  {row['role']}{late}: {row['run_key']}", file=out)
        cells = [f"{label} {row[m]['value']} {row[m]['interval']}" for label, m in zip(LABELS, study_view.MEASURES)]
        print(f"    {' · '.join(cells)}", file=out)
    if view["lead"]:
        print(f"\n{view['lead']}", file=out)
    for note in view["notes"]:
        print(f"note: {note}", file=out)
    if view["take_home"]:
        print(f"\n{view['take_home_text']}", file=out)
        print(f"  chunklab export snippet --experiment {view['experiment_id']} --run '{view['take_home']}'", file=out)
